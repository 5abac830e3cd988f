package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
	"github.com/mysqlbench/mysqlbench-operator/internal/owned"
)

// ComparisonKey is the results ConfigMap key of a run's comparison with its baseline.
const ComparisonKey = "comparison.md"

// compareSucceeded compares every succeeded run that has no comparison yet with its baseline:
// the pinned baseline run, else the previous successful run of the schedule. children are in
// scheduled order, so the previous successful run is the baseline even when several runs
// finished since the last reconcile.
func (r *BenchmarkScheduleReconciler) compareSucceeded(ctx context.Context, sched *v1.BenchmarkSchedule, children []*v1.BenchmarkRun) error {
	var previous *v1.BenchmarkRun
	for _, run := range children {
		if run.Status.Phase != v1.RunSucceeded {
			continue
		}
		if run.Status.Comparison == nil {
			baseline, note, err := r.baseline(ctx, sched, previous)
			if err != nil {
				return err
			}
			res := compare.Compare(run, baseline, sched.Spec.Regression)
			if note != "" {
				res.Summary.Message = note
			}
			if err := r.recordComparison(ctx, sched, run, res); err != nil {
				return err
			}
		}
		previous = run
	}
	return nil
}

// baseline is the run to compare with: the pinned one (which must exist and have succeeded), or
// previous. A missing pinned baseline is a NoBaseline verdict whose note says why.
func (r *BenchmarkScheduleReconciler) baseline(ctx context.Context, sched *v1.BenchmarkSchedule,
	previous *v1.BenchmarkRun) (*v1.BenchmarkRun, string, error) {
	name := sched.Spec.Regression.BaselineRun
	if name == "" {
		return previous, "", nil
	}
	pinned := &v1.BenchmarkRun{}
	err := r.Get(ctx, client.ObjectKey{Namespace: sched.Namespace, Name: name}, pinned)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Sprintf("no baseline: spec.regression.baselineRun %s does not exist in namespace %s: fix the name or remove it to compare with the previous run",
			name, sched.Namespace), nil
	case err != nil:
		return nil, "", fmt.Errorf("get baseline run %s: %w", name, err)
	case pinned.Status.Phase != v1.RunSucceeded:
		return nil, fmt.Sprintf("no baseline: spec.regression.baselineRun %s has not succeeded (phase %q): pin a successful run",
			name, pinned.Status.Phase), nil
	}
	return pinned, "", nil
}

// recordComparison writes comparison.md into the run's results ConfigMap, then the comparison
// and the Regressed condition into the run's status (the marker that the run was compared, so
// it comes last), then the Events.
func (r *BenchmarkScheduleReconciler) recordComparison(ctx context.Context, sched *v1.BenchmarkSchedule, run *v1.BenchmarkRun, res compare.Result) error {
	log := logf.FromContext(ctx).WithValues("run", run.Name, "baseline", res.Summary.Baseline)
	if name := run.Status.ResultsConfigMap; name != "" {
		cm := &corev1.ConfigMap{}
		err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, cm)
		switch {
		case err == nil && owned.Check(run, cm, r.Scheme) != nil:
			// Written only into the run's own results, never into a ConfigMap someone else put there.
			log.Info("results ConfigMap is not the run's; the comparison is kept in the run's status only",
				"configMap", name, "reason", owned.Check(run, cm, r.Scheme).Error())
		case apierrors.IsNotFound(err):
			log.Info("results ConfigMap is gone; the comparison is kept in the run's status only", "configMap", name)
		case err != nil:
			return fmt.Errorf("get results of %s: %w", run.Name, err)
		default:
			md := compare.Markdown(res)
			if cm.Data[ComparisonKey] != md {
				if cm.Data == nil {
					cm.Data = map[string]string{}
				}
				cm.Data[ComparisonKey] = md
				if err := r.Update(ctx, cm); err != nil {
					return fmt.Errorf("write %s into %s: %w", ComparisonKey, name, err)
				}
			}
		}
	}

	before := run.DeepCopy()
	summary := res.Summary
	run.Status.Comparison = &summary
	status, reason := regressedCondition(summary)
	meta.SetStatusCondition(&run.Status.Conditions, metav1.Condition{
		Type: v1.ConditionRegressed, Status: status, Reason: reason, Message: bounded.Head(summary.Message, bounded.Condition),
		ObservedGeneration: run.Generation, LastTransitionTime: metav1.NewTime(r.Clock.Now().Truncate(1e9)),
	})
	patch := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	if err := r.Status().Patch(ctx, run, patch); err != nil {
		return fmt.Errorf("write comparison of %s: %w", run.Name, err)
	}
	log.Info("compared run with its baseline", "verdict", summary.Verdict,
		"regressedCells", summary.RegressedCells, "comparedCells", summary.ComparedCells)
	kind := corev1.EventTypeNormal
	if summary.Verdict == v1.VerdictRegressed {
		kind = corev1.EventTypeWarning
	}
	r.Recorder.Event(run, kind, reason, summary.Message)
	r.Recorder.Event(sched, kind, reason, run.Name+": "+summary.Message)
	return nil
}

// regressedCondition is the Regressed condition's status and reason for a comparison, the same
// on the run and on its schedule.
func regressedCondition(c v1.Comparison) (metav1.ConditionStatus, string) {
	switch c.Verdict {
	case v1.VerdictRegressed:
		return metav1.ConditionTrue, v1.ReasonRegressed
	case v1.VerdictNoBaseline:
		return metav1.ConditionFalse, v1.ReasonNoBaseline
	case v1.VerdictInconclusive:
		return metav1.ConditionFalse, v1.ReasonInconclusive
	default:
		return metav1.ConditionFalse, v1.ReasonNoRegression
	}
}
