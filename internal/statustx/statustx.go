// Package statustx is the one way both reconcilers write status: a transaction over one object
// that collects condition changes and Events during a reconcile, writes the status once at the
// end (a merge patch with optimistic locking, skipped when nothing changed) and records the
// Events after the write. It is generic over the kind: Fields says where a kind keeps what the
// transaction maintains.
package statustx

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

	"github.com/mysqlbench/mysqlbench-operator/internal/conditions"
)

// Object is a kind whose status a reconciler writes through a Tx.
type Object[O any] interface {
	client.Object
	DeepCopy() O
}

// Fields says where a kind keeps what Tx maintains.
type Fields[O any] struct {
	// Status is the whole status: a write happens only when it differs from the starting copy's.
	Status             func(O) any
	ObservedGeneration func(O) *int64
	Conditions         func(O) *[]metav1.Condition
}

// Tx is one reconcile's change to an object's status and the Events that explain it:
// conditions stamped with the object's generation and the injected clock, one status write at
// the end (a merge patch with optimistic locking, skipped when nothing changed, so a stale
// reconcile never overwrites a newer status), then the Events. An Event about a decision is
// recorded only once the status that holds it is written: a write that fails drops it, and the
// retry decides again.
type Tx[O Object[O]] struct {
	fields Fields[O]
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

// New starts a transaction on obj, as read: its status is compared with this copy at Commit.
func New[O Object[O]](fields Fields[O], clk clock.PassiveClock, obj O) Tx[O] {
	return Tx[O]{fields: fields, clock: clk, obj: obj, before: obj.DeepCopy()}
}

// Before is the object as it was read when the transaction started.
func (tx *Tx[O]) Before() O { return tx.before }

// SetCondition sets a condition of the object, stamped with its generation and the clock's time.
func (tx *Tx[O]) SetCondition(typ string, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(tx.fields.Conditions(tx.obj), tx.obj.GetGeneration(), tx.clock.Now(), typ, status, reason, message)
}

// Queue adds an Event about a decision, recorded once the status is written.
func (tx *Tx[O]) Queue(kind, reason, message string) {
	tx.events = append(tx.events, queuedEvent{kind: kind, reason: reason, message: message})
}

// QueueDone adds an Event about a write to the API server that has happened: it is recorded even
// when the status write fails (a conflict with a newer copy is common under load), as the retry
// finds the action taken and has nothing to report, so dropping it would lose it for good.
func (tx *Tx[O]) QueueDone(kind, reason, message string) {
	tx.events = append(tx.events, queuedEvent{kind: kind, reason: reason, message: message, done: true})
}

// Queued says whether Events wait for the commit.
func (tx *Tx[O]) Queued() bool { return len(tx.events) > 0 }

// Rewrite replaces the message of every queued Event with edit's (to hide what must not be shown,
// before anything is recorded).
func (tx *Tx[O]) Rewrite(edit func(string) string) {
	for i := range tx.events {
		tx.events[i].message = edit(tx.events[i].message)
	}
}

// Drop forgets the queued Events: the decisions they explain were taken back.
func (tx *Tx[O]) Drop() { tx.events = nil }

// Commit writes the status when it changed or its observedGeneration is behind: derive (may be
// nil) first fills what follows from the rest of the status, then observedGeneration is set to
// the generation the status was computed from. Then it records the Events: all of them when the
// status was written or needed no write, else only those of actions taken. wrote says whether a
// write happened; an error is the write's, a conflict included (see Reconciled).
func (tx *Tx[O]) Commit(ctx context.Context, w client.SubResourceWriter, rec record.EventRecorder, derive func()) (wrote bool, err error) {
	defer func() {
		for _, e := range tx.events {
			if err == nil || e.done {
				rec.Event(tx.obj, e.kind, e.reason, e.message)
			}
		}
		tx.events = nil
	}()
	observed := tx.fields.ObservedGeneration(tx.obj)
	if *observed == tx.obj.GetGeneration() && equality.Semantic.DeepEqual(tx.fields.Status(tx.before), tx.fields.Status(tx.obj)) {
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

// Reconciled is what Reconcile returns after the commit: a write that conflicted (someone wrote a
// newer version first) is retried at once with the newer object, any other write error is
// returned, and otherwise the reconcile's own result and error.
func Reconciled(ctx context.Context, result ctrl.Result, err, werr error) (ctrl.Result, error) {
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
