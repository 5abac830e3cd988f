package controllers

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/conditions"
)

// statusObject is a kind whose status a reconciler writes through a statusTx.
type statusObject[O any] interface {
	client.Object
	DeepCopy() O
}

// statusFields says where a kind keeps what statusTx maintains.
type statusFields[O any] struct {
	// status is the whole status: a write happens only when it differs from the starting copy's.
	status             func(O) any
	observedGeneration func(O) *int64
	conditions         func(O) *[]metav1.Condition
}

var (
	runStatus = statusFields[*v1.BenchmarkRun]{
		status:             func(r *v1.BenchmarkRun) any { return &r.Status },
		observedGeneration: func(r *v1.BenchmarkRun) *int64 { return &r.Status.ObservedGeneration },
		conditions:         func(r *v1.BenchmarkRun) *[]metav1.Condition { return &r.Status.Conditions },
	}
	scheduleStatus = statusFields[*v1.BenchmarkSchedule]{
		status:             func(s *v1.BenchmarkSchedule) any { return &s.Status },
		observedGeneration: func(s *v1.BenchmarkSchedule) *int64 { return &s.Status.ObservedGeneration },
		conditions:         func(s *v1.BenchmarkSchedule) *[]metav1.Condition { return &s.Status.Conditions },
	}
)

// statusTx is one reconcile's change to an object's status and the Events that explain it, for
// both reconcilers: conditions stamped with the object's generation and the injected clock, one
// status write at the end (a merge patch with optimistic locking, skipped when nothing changed,
// so a stale reconcile never overwrites a newer status), then the Events. An Event about a
// decision is recorded only once the status that holds it is written: a write that fails drops
// it, and the retry decides again.
type statusTx[O statusObject[O]] struct {
	fields statusFields[O]
	clock  clock.PassiveClock
	// obj is the object being changed; before is how it was read.
	obj, before O
	events      []queuedEvent
}

// queuedEvent is an Event waiting for the status write. done marks one that reports an action
// already taken on the API server (an object created or deleted): it is recorded whatever becomes
// of the write.
type queuedEvent struct {
	kind, reason, message string
	done                  bool
}

func newStatusTx[O statusObject[O]](fields statusFields[O], clk clock.PassiveClock, obj O) statusTx[O] {
	return statusTx[O]{fields: fields, clock: clk, obj: obj, before: obj.DeepCopy()}
}

// setCondition sets a condition of the object, stamped with its generation and the clock's time.
func (tx *statusTx[O]) setCondition(typ string, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(tx.fields.conditions(tx.obj), tx.obj.GetGeneration(), tx.clock.Now(), typ, status, reason, message)
}

// queue adds an Event about a decision, recorded once the status is written.
func (tx *statusTx[O]) queue(kind, reason, message string) {
	tx.events = append(tx.events, queuedEvent{kind: kind, reason: reason, message: message})
}

// queueDone adds an Event about a write to the API server that has happened: it is recorded even
// when the status write fails (a conflict with a newer copy is common under load), as the retry
// finds the action taken and has nothing to report, so dropping it would lose it for good.
func (tx *statusTx[O]) queueDone(kind, reason, message string) {
	tx.events = append(tx.events, queuedEvent{kind: kind, reason: reason, message: message, done: true})
}

// commit writes the status when it changed or its observedGeneration is behind: derive (may be
// nil) first fills what follows from the rest of the status, then observedGeneration is set to
// the generation the status was computed from. Then it records the Events: all of them when the
// status was written or needed no write, else only those of actions taken. wrote says whether a
// write happened; an error is the write's, a conflict included (see reconciled).
func (tx *statusTx[O]) commit(ctx context.Context, w client.SubResourceWriter, rec record.EventRecorder, derive func()) (wrote bool, err error) {
	defer func() {
		for _, e := range tx.events {
			if err == nil || e.done {
				rec.Event(tx.obj, e.kind, e.reason, e.message)
			}
		}
		tx.events = nil
	}()
	observed := tx.fields.observedGeneration(tx.obj)
	if *observed == tx.obj.GetGeneration() && equality.Semantic.DeepEqual(tx.fields.status(tx.before), tx.fields.status(tx.obj)) {
		return false, nil
	}
	if derive != nil {
		derive()
	}
	*observed = tx.obj.GetGeneration()
	patch := client.MergeFromWithOptions(tx.before, client.MergeFromWithOptimisticLock{})
	if err := w.Patch(ctx, tx.obj, patch); err != nil {
		return false, fmt.Errorf("write status: %w", err)
	}
	return true, nil
}

// reconciled is what Reconcile returns after the commit: a write that conflicted (someone wrote a
// newer version first) is retried at once with the newer object, any other write error is
// returned, and otherwise the reconcile's own result and error.
func reconciled(ctx context.Context, result ctrl.Result, err, werr error) (ctrl.Result, error) {
	if werr != nil {
		if apierrors.IsConflict(werr) {
			logf.FromContext(ctx).V(1).Info("status write conflicted, retrying with the newer object")
			return ctrl.Result{Requeue: true}, nil //nolint:staticcheck // plain retry on conflict
		}
		return ctrl.Result{}, werr
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return result, nil
}
