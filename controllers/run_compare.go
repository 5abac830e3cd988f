package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
)

// A scheduled run's comparison with its baseline is the run's own data: this controller writes
// it (status.comparison, the Regressed condition and comparison.md) with the rest of the run's
// results, and the BenchmarkSchedule controller only reads it (its status, history and the next
// run's repetitions). One writer per object: the schedule controller writes no run and no
// ConfigMap of a run.
//
// +kubebuilder:rbac:groups=mysqlbench.io,resources=benchmarkschedules,verbs=list;watch

// compareWithBaseline records, for a run that a BenchmarkSchedule created and in which no target
// failed, its comparison with the baseline: the schedule's pinned spec.regression.baselineRun,
// else the newest successful run of the schedule scheduled before this one. It is called once,
// when every target has ended, and recorded in the status before the results are written.
func (r *BenchmarkRunReconciler) compareWithBaseline(ctx context.Context, tx *transition) error {
	run := tx.run
	if run.Labels[v1.LabelConfirms] != "" {
		return nil // a confirmation run: the schedule compares its targets pairwise
	}
	sched, err := r.schedule(ctx, run)
	if err != nil || sched == nil {
		return err
	}
	for _, ts := range run.Status.Targets {
		if ts.Phase == v1.TargetFailed {
			return nil // only successful runs are compared, and serve as baselines
		}
	}
	baseline, note, err := r.baseline(ctx, sched, run)
	if err != nil {
		return err
	}
	if why := pinnedBaselineRefusal(sched, baseline); why != "" {
		// Not compared at all: the comparison would copy the baseline's results into this run's
		// status and comparison.md. The baseline is named in the message only, so that nothing
		// reads it again (comparisonMarkdown).
		p := sched.Spec.Regression
		run.Status.Comparison = &v1.Comparison{Run: run.Name, Verdict: v1.VerdictNoBaseline, Message: "baseline refused: " + why,
			QPSDropPercent: p.QPSDropPercentOrDefault(), P95RisePercent: p.P95RisePercentOrDefault(), Alpha: p.AlphaOrDefault()}
		tx.SetCondition(v1.ConditionRegressed, metav1.ConditionFalse, v1.ReasonBaselineRefused, run.Status.Comparison.Message)
		tx.event(warning, v1.ReasonBaselineRefused, "%s", run.Status.Comparison.Message)
		logf.FromContext(ctx).Info("baseline refused", "schedule", sched.Name, "baseline", baseline.Name)
		return nil
	}
	hist, err := r.history(ctx, sched, run)
	if err != nil {
		return err
	}
	res := compare.CompareWith(run, baseline, sched.Spec.Regression, compare.Options{History: hist})
	if note != "" {
		res.Summary.Message = note
	}
	if left := leftOut(run, baseline); left != "" {
		res.Summary.Message += "; " + left
	}
	summary := res.Summary
	run.Status.Comparison = &summary
	status, reason := regressedCondition(summary)
	message := summary.Message
	kind := normal
	switch {
	case summary.Verdict == v1.VerdictRegressed && sched.Spec.Regression.ConfirmEnabled():
		// Not an alarm yet: the schedule re-measures the flagged cells first and keeps the
		// outcome in its status.confirmation and Regressed condition.
		status, reason = metav1.ConditionUnknown, v1.ReasonAwaitingConfirmation
		message = fmt.Sprintf("%s; BenchmarkSchedule %s confirms it with a second run before alarming (its status.confirmation has the outcome)",
			summary.Message, sched.Name)
	case summary.Verdict == v1.VerdictRegressed:
		kind = warning
	}
	tx.SetCondition(v1.ConditionRegressed, status, reason, message)
	tx.event(kind, reason, "%s", message)
	logf.FromContext(ctx).Info("compared run with its baseline", "schedule", sched.Name, "baseline", summary.Baseline,
		"verdict", summary.Verdict, "regressedCells", summary.RegressedCells, "comparedCells", summary.ComparedCells)
	return nil
}

// settleConfirmation brings a finished run's Regressed condition, Unknown while its schedule
// confirms the regression, to the confirmation's outcome once the schedule has recorded it
// (status.confirmation of that run in a final state), with the Warning on the run when it
// alarms. The schedule decides; the run only mirrors it, so its health checks end too.
func (r *BenchmarkRunReconciler) settleConfirmation(ctx context.Context, run *v1.BenchmarkRun) error {
	cond := meta.FindStatusCondition(run.Status.Conditions, v1.ConditionRegressed)
	if cond == nil || cond.Reason != v1.ReasonAwaitingConfirmation {
		return nil
	}
	sched, err := r.schedule(ctx, run)
	if err != nil || sched == nil {
		return err
	}
	conf := sched.Status.Confirmation
	if conf == nil || conf.Run != run.Name || !conf.State.Final() {
		return nil
	}
	status, reason := confirmedCondition(conf.State)
	tx := newTransition(r, run)
	message := fmt.Sprintf("%s (BenchmarkSchedule %s, confirmation %s)", conf.Message, sched.Name, conf.State)
	tx.SetCondition(v1.ConditionRegressed, status, reason, message)
	kind := normal
	if status == metav1.ConditionTrue {
		kind = warning
	}
	tx.event(kind, reason, "%s", message)
	if r.results != nil {
		// The database's copy of the run changes with it, in the same status write.
		doc, err := r.resultsConfigMap().Doc(ctx, run)
		if err != nil {
			return err
		}
		r.storeResults(ctx, tx, doc)
	}
	return tx.commit(ctx)
}

// confirmedCondition is the Regressed condition of a compared run once its confirmation ended:
// True for a confirmed regression and for one that could not be confirmed (skipped, failed, or
// inconclusive within the bounds: they alarm rather than swallow it), False when the confirmation
// did not find it again.
func confirmedCondition(s v1.ConfirmationState) (metav1.ConditionStatus, string) {
	switch s {
	case v1.ConfirmationConfirmed:
		return metav1.ConditionTrue, v1.ReasonRegressed
	case v1.ConfirmationNotConfirmed:
		return metav1.ConditionFalse, v1.ReasonRegressionNotConfirmed
	case v1.ConfirmationInconclusive:
		return metav1.ConditionTrue, v1.ReasonConfirmationInconclusive
	case v1.ConfirmationSkipped:
		return metav1.ConditionTrue, v1.ReasonRegressionUnconfirmed
	case v1.ConfirmationFailed:
		return metav1.ConditionTrue, v1.ReasonConfirmationFailed
	default:
		return metav1.ConditionUnknown, v1.ReasonAwaitingConfirmation
	}
}

// confirmedRun maps a schedule to the run whose regression its confirmation ended for, so that
// run's Regressed condition follows (settleConfirmation).
func confirmedRun(_ context.Context, obj client.Object) []reconcile.Request {
	sched, ok := obj.(*v1.BenchmarkSchedule)
	if !ok || sched.Status.Confirmation == nil || !sched.Status.Confirmation.State.Final() {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: sched.Namespace, Name: sched.Status.Confirmation.Run}}}
}

// schedule is the BenchmarkSchedule that controls run, or nil.
func (r *BenchmarkRunReconciler) schedule(ctx context.Context, run *v1.BenchmarkRun) (*v1.BenchmarkSchedule, error) {
	owner := metav1.GetControllerOf(run)
	if owner == nil || owner.Kind != "BenchmarkSchedule" || owner.APIVersion != v1.GroupVersion.String() {
		return nil, nil
	}
	sched := &v1.BenchmarkSchedule{}
	err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: owner.Name}, sched)
	if apierrors.IsNotFound(err) || (err == nil && sched.UID != owner.UID) {
		return nil, nil // deleted: the run goes with it
	}
	if err != nil {
		return nil, fmt.Errorf("get schedule %s: %w", owner.Name, err)
	}
	return sched, nil
}

// baseline is the run to compare with: the pinned one (which must exist and have succeeded), or
// the newest successful run of the schedule scheduled before run with the same client (sysbench or
// mysqlslap: their QPS differ by definition); nil for the first. A missing
// pinned baseline is a NoBaseline verdict whose note says why.
func (r *BenchmarkRunReconciler) baseline(ctx context.Context, sched *v1.BenchmarkSchedule, run *v1.BenchmarkRun) (*v1.BenchmarkRun, string, error) {
	if name := sched.Spec.Regression.BaselineRun; name != "" {
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
	list := &v1.BenchmarkRunList{}
	if err := r.List(ctx, list, client.InNamespace(sched.Namespace), client.MatchingLabels{v1.LabelSchedule: sched.Name}); err != nil {
		return nil, "", fmt.Errorf("list runs of schedule %s: %w", sched.Name, err)
	}
	at := scheduledTime(run)
	var newest *v1.BenchmarkRun
	var newestAt time.Time
	for i := range list.Items {
		other := &list.Items[i]
		if other.Name == run.Name || other.Status.Phase != v1.RunSucceeded || !metav1.IsControlledBy(other, sched) {
			continue
		}
		if loadclient.For(other.Spec.Workload).Name() != loadclient.For(run.Spec.Workload).Name() {
			// sysbench's QPS and mysqlslap's are defined differently: a schedule switched from
			// one to the other starts a new baseline, not a false regression (review finding).
			continue
		}
		t := scheduledTime(other)
		if t.After(at) || (t.Equal(at) && other.Name > run.Name) {
			continue // scheduled after this run
		}
		if newest == nil || t.After(newestAt) || (t.Equal(newestAt) && other.Name > newest.Name) {
			newest, newestAt = other, t
		}
	}
	return newest, "", nil
}

// history are the schedule's successful runs before run (its between-run noise, see
// compare.Options).
func (r *BenchmarkRunReconciler) history(ctx context.Context, sched *v1.BenchmarkSchedule, run *v1.BenchmarkRun) ([]*v1.BenchmarkRun, error) {
	list := &v1.BenchmarkRunList{}
	if err := r.List(ctx, list, client.InNamespace(sched.Namespace), client.MatchingLabels{v1.LabelSchedule: sched.Name}); err != nil {
		return nil, fmt.Errorf("list runs of schedule %s: %w", sched.Name, err)
	}
	runs := make([]*v1.BenchmarkRun, 0, len(list.Items))
	for i := range list.Items {
		runs = append(runs, &list.Items[i])
	}
	return compare.HistoryOf(run, runs), nil
}

// comparisonMarkdown is comparison.md for the comparison in run's status: the full table when
// its baseline can still be read, else the summary alone (the baseline was deleted since).
func (r *BenchmarkRunReconciler) comparisonMarkdown(ctx context.Context, run *v1.BenchmarkRun) string {
	summary := *run.Status.Comparison
	if summary.Baseline != "" {
		baseline := &v1.BenchmarkRun{}
		if sched, err := r.schedule(ctx, run); err == nil && sched != nil &&
			r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: summary.Baseline}, baseline) == nil {
			hist, _ := r.history(ctx, sched, run) // without it the verdict may differ: then the summary alone
			res := compare.CompareWith(run, baseline, sched.Spec.Regression, compare.Options{History: hist})
			if res.Summary.Verdict == summary.Verdict && res.Summary.RegressedCells == summary.RegressedCells {
				res.Summary = summary
				md := compare.Markdown(res)
				if left := leftOut(run, baseline); left != "" {
					md += "\nNot compared: " + left + ".\n"
				}
				return md
			}
		}
	}
	return compare.Markdown(compare.Result{Summary: summary})
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

// maxLeftOut is how many left-out steps a comparison's message names.
const maxLeftOut = 5

// leftOut names the steps of run and baseline that the comparison left out because they ran
// past their duration (StepResult.OverDuration: not samples of their cells, see cells.Comparable),
// "" when there are none. Their cells compare fewer repetitions, or are missing from the
// comparison, and its message says why.
func leftOut(run, baseline *v1.BenchmarkRun) string {
	var names []string
	for _, r := range []*v1.BenchmarkRun{run, baseline} {
		if r == nil {
			continue
		}
		of := "this run"
		if r != run {
			of = "baseline " + r.Name
		}
		for _, ts := range r.Status.Targets {
			for _, s := range ts.Steps {
				if !s.OverDuration {
					continue
				}
				name := fmt.Sprintf("%s@%d", ts.Name, s.Threads)
				if s.Repetition > 0 {
					name += fmt.Sprintf(" repetition %d", s.Repetition)
				}
				names = append(names, fmt.Sprintf("%s of %s (%.3f s)", name, of, s.DurationSeconds))
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	total, more := len(names), ""
	if total > maxLeftOut {
		more = fmt.Sprintf(" and %d more", total-maxLeftOut)
		names = names[:maxLeftOut]
	}
	return fmt.Sprintf("%d step(s) left out, as they ran past their duration: %s%s", total, strings.Join(names, ", "), more)
}
