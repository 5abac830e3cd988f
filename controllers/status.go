package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// Condition reasons.
const (
	ReasonRunning       = "Running"
	ReasonSucceeded     = "Succeeded"
	ReasonTargetFailed  = "TargetFailed"
	ReasonUnschedulable = "Unschedulable"
	ReasonWaiting       = "WaitingForServer"
)

// transition is one reconcile's change to a run: the status edits and the Events that explain
// them. commit writes both, status first, only when the status changed. It is the only place
// status is written.
type transition struct {
	r      *BenchmarkRunReconciler
	run    *v1.BenchmarkRun
	before *v1.BenchmarkRun
	events []event
}

type event struct{ kind, reason, message string }

func newTransition(r *BenchmarkRunReconciler, run *v1.BenchmarkRun) *transition {
	return &transition{r: r, run: run, before: run.DeepCopy()}
}

// now is the reconciler's clock as an API time, to the second like every API timestamp.
func (tx *transition) now() metav1.Time {
	return metav1.NewTime(tx.r.Clock.Now().Truncate(1e9))
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

func (tx *transition) event(kind, reason, format string, args ...any) {
	tx.events = append(tx.events, event{kind: kind, reason: reason, message: fmt.Sprintf(format, args...)})
}

func (tx *transition) setCondition(typ string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&tx.run.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message,
		ObservedGeneration: tx.run.Generation,
		LastTransitionTime: tx.now(),
	})
}

// progressing marks the run as moving, with what it is doing now.
func (tx *transition) progressing(reason, message string) {
	tx.setCondition(v1.ConditionProgressing, metav1.ConditionTrue, reason, message)
}

// stalled marks the run as waiting on something it cannot fix (an unschedulable pod), without
// failing it yet.
func (tx *transition) stalled(reason, message string) {
	tx.setCondition(v1.ConditionProgressing, metav1.ConditionFalse, reason, message)
}

// commit writes the status (a merge patch with optimistic locking, so a stale reconcile can never
// overwrite a newer step result) when it changed, then records the Events.
func (tx *transition) commit(ctx context.Context) error {
	if !equality.Semantic.DeepEqual(tx.before.Status, tx.run.Status) {
		tx.run.Status.ObservedGeneration = tx.run.Generation
		patch := client.MergeFromWithOptions(tx.before, client.MergeFromWithOptimisticLock{})
		if err := tx.r.Status().Patch(ctx, tx.run, patch); err != nil {
			return fmt.Errorf("write status: %w", err)
		}
		logf.FromContext(ctx).V(1).Info("status written", "phase", tx.run.Status.Phase,
			"target", tx.run.Status.CurrentTarget, "step", tx.run.Status.CurrentStep)
	}
	for _, e := range tx.events {
		tx.r.Recorder.Event(tx.run, e.kind, e.reason, e.message)
	}
	tx.events = nil
	return nil
}

// normal and warning are shorthands for Event types.
const (
	normal  = corev1.EventTypeNormal
	warning = corev1.EventTypeWarning
)
