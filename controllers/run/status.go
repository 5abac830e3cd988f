package run

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/metrics"
	"github.com/mysqlbench/mysqlbench-operator/internal/statustx"
	"github.com/mysqlbench/mysqlbench-operator/internal/stepjob"
)

// transition is one reconcile's change to a run: the status edits and the Events that explain
// them, on the status transaction both reconcilers share (statustx). commit writes both, status
// first, only when the status changed. It is the only place status is written.
type transition struct {
	statustx.Tx[*v1.BenchmarkRun]
	r *Reconciler
	// run is the run being changed; before is how it was read.
	run, before *v1.BenchmarkRun
	// order is the run's order, chosen once from its spec.
	order order
}

// runStatus is where a run keeps what the status transaction maintains.
var runStatus = statustx.Fields[*v1.BenchmarkRun]{
	Status:             func(r *v1.BenchmarkRun) any { return &r.Status },
	ObservedGeneration: func(r *v1.BenchmarkRun) *int64 { return &r.Status.ObservedGeneration },
	Conditions:         func(r *v1.BenchmarkRun) *[]metav1.Condition { return &r.Status.Conditions },
}

func newTransition(r *Reconciler, run *v1.BenchmarkRun) *transition {
	tx := &transition{Tx: statustx.New(runStatus, r.clock, run), r: r, run: run, order: orderOf(run.Spec)}
	tx.before = tx.Before()
	return tx
}

// now is the reconciler's clock as an API time, to the second like every API timestamp.
func (tx *transition) now() metav1.Time {
	return metav1.NewTime(tx.r.clock.Now().Truncate(1e9))
}

// target returns the status entry of target name, creating it in spec order when missing.
func (tx *transition) target(name string) *v1.TargetStatus {
	st := &tx.run.Status
	for i := range st.Targets {
		if st.Targets[i].Name == name {
			return &st.Targets[i]
		}
	}
	st.Targets = append(st.Targets, v1.TargetStatus{Name: name, Phase: v1.TargetPending})
	return &st.Targets[len(st.Targets)-1]
}

// event queues an Event, recorded once the status is written. Its message is redacted and cut at
// commit (redactEvents), not here: cut first, a credential at the edge would escape redaction.
func (tx *transition) event(kind, reason, format string, args ...any) {
	tx.Queue(kind, reason, fmt.Sprintf(format, args...))
}

// record queues the Events the run's step Jobs called for (stepjob), as event does.
func (tx *transition) record(events ...stepjob.Event) {
	for _, e := range events {
		tx.Queue(e.Type, e.Reason, e.Message)
	}
}

// progressing marks the run as moving, with what it is doing now.
func (tx *transition) progressing(reason, message string) {
	tx.SetCondition(v1.ConditionProgressing, metav1.ConditionTrue, reason, message)
}

// stalled marks the run as waiting on something it cannot fix (an unschedulable pod), without
// failing it yet.
func (tx *transition) stalled(reason, message string) {
	tx.SetCondition(v1.ConditionProgressing, metav1.ConditionFalse, reason, message)
}

// commit writes the status through the status transaction, then records the Events.
//
// Before the write it derives the kstatus conditions from the phase (Reconciling while the run
// is not finished, Stalled once it failed); once the write succeeded it remembers the written
// resourceVersion (Reconcile reads past a cache that has not caught up) and exports the new step
// results and the outcome as metrics (metrics.RecordTransition).
func (tx *transition) commit(ctx context.Context) error {
	tx.redactEvents(ctx)
	wrote, err := tx.Commit(ctx, tx.r.Status(), tx.r.recorder, tx.kstatusConditions)
	if !wrote {
		return err
	}
	tx.r.written.Store(client.ObjectKeyFromObject(tx.run), tx.run.ResourceVersion)
	logf.FromContext(ctx).V(1).Info("status written", "phase", tx.run.Status.Phase,
		"target", tx.run.Status.CurrentTarget, "step", tx.run.Status.CurrentStep)
	metrics.RecordTransition(tx.before, tx.run)
	return nil
}

// normal and warning are shorthands for Event types.
const (
	normal  = corev1.EventTypeNormal
	warning = corev1.EventTypeWarning
)

// kstatusConditions sets the conditions kstatus, Flux and Argo CD read: Reconciling is True
// while the run has not finished, Stalled is True once it failed (a failed run does not retry:
// a new run is needed).
func (tx *transition) kstatusConditions() {
	st := &tx.run.Status
	switch st.Phase {
	case v1.RunSucceeded:
		tx.SetCondition(v1.ConditionReconciling, metav1.ConditionFalse, v1.ReasonSucceeded, "the run has finished")
		tx.SetCondition(v1.ConditionStalled, metav1.ConditionFalse, v1.ReasonSucceeded, "the run has finished")
	case v1.RunFailed:
		msg := "the run failed"
		if c := meta.FindStatusCondition(st.Conditions, v1.ConditionFailed); c != nil && c.Message != "" {
			msg = c.Message
		}
		tx.SetCondition(v1.ConditionReconciling, metav1.ConditionFalse, v1.ReasonTargetFailed, "the run has finished")
		tx.SetCondition(v1.ConditionStalled, metav1.ConditionTrue, v1.ReasonTargetFailed, msg)
	default:
		phase := string(st.Phase)
		if phase == "" {
			phase = string(v1.RunPending)
		}
		tx.SetCondition(v1.ConditionReconciling, metav1.ConditionTrue, phase, "the run is "+strings.ToLower(phase))
		tx.SetCondition(v1.ConditionStalled, metav1.ConditionFalse, phase, "the run is "+strings.ToLower(phase))
	}
}
