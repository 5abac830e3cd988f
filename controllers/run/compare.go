package run

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
	"github.com/mysqlbench/mysqlbench-operator/internal/scheduled"
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
func (r *Reconciler) compareWithBaseline(ctx context.Context, tx *transition) error {
	run := tx.run
	if run.Labels[v1.LabelConfirms] != "" {
		return nil // a confirmation run: the schedule compares its targets pairwise
	}
	sched, err := scheduled.Schedule(ctx, r, run)
	if err != nil || sched == nil {
		return err
	}
	for _, ts := range run.Status.Targets {
		if ts.Phase == v1.TargetFailed {
			return nil // only successful runs are compared, and serve as baselines
		}
	}
	baseline, note, err := scheduled.Baseline(ctx, r, sched, run)
	if err != nil {
		return err
	}
	if why := scheduled.PinnedBaselineRefusal(sched, baseline); why != "" {
		// Not compared at all: the comparison would copy the baseline's results into this run's
		// status and comparison.md. The baseline is named in the message only, so that nothing
		// reads it again (scheduled.Markdown).
		p := sched.Spec.Regression
		run.Status.Comparison = &v1.Comparison{Run: run.Name, Verdict: v1.VerdictNoBaseline, Message: "baseline refused: " + why,
			QPSDropPercent: p.QPSDropPercentOrDefault(), P95RisePercent: p.P95RisePercentOrDefault(), Alpha: p.AlphaOrDefault()}
		tx.SetCondition(v1.ConditionRegressed, metav1.ConditionFalse, v1.ReasonBaselineRefused, run.Status.Comparison.Message)
		tx.event(warning, v1.ReasonBaselineRefused, "%s", run.Status.Comparison.Message)
		logf.FromContext(ctx).Info("baseline refused", "schedule", sched.Name, "baseline", baseline.Name)
		return nil
	}
	hist, err := scheduled.History(ctx, r, sched, run)
	if err != nil {
		return err
	}
	res := compare.CompareWith(run, baseline, sched.Spec.Regression, compare.Options{History: hist})
	if note != "" {
		res.Summary.Message = note
	}
	if left := scheduled.LeftOut(run, baseline); left != "" {
		res.Summary.Message += "; " + left
	}
	summary := res.Summary
	run.Status.Comparison = &summary
	status, reason := scheduled.RegressedCondition(summary)
	message := summary.Message
	kind := normal
	switch {
	case summary.Verdict == v1.VerdictRegressed && scheduled.ToConfirm(sched, &summary):
		// Not an alarm yet: the schedule re-measures the flagged cells first and keeps the
		// outcome in its status.confirmation and Regressed condition.
		status, reason = metav1.ConditionUnknown, v1.ReasonAwaitingConfirmation
		message = fmt.Sprintf("%s; BenchmarkSchedule %s confirms it with a second run before alarming (its status.confirmation has the outcome)",
			summary.Message, sched.Name)
	case scheduled.ToConfirm(sched, &summary):
		// Inconclusive, with a harmful estimate that a night's shift or a regression could
		// explain: the schedule re-measures it side by side, which tells them apart.
		status, reason = metav1.ConditionUnknown, v1.ReasonAwaitingConfirmation
		message = fmt.Sprintf("%s; BenchmarkSchedule %s re-measures %s side by side with the baseline's servers to decide "+
			"(its status.confirmation has the outcome)", summary.Message, sched.Name, strings.Join(summary.Suspects, ", "))
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
func (r *Reconciler) settleConfirmation(ctx context.Context, run *v1.BenchmarkRun) error {
	cond := meta.FindStatusCondition(run.Status.Conditions, v1.ConditionRegressed)
	if cond == nil || cond.Reason != v1.ReasonAwaitingConfirmation {
		return nil
	}
	sched, err := scheduled.Schedule(ctx, r, run)
	if err != nil || sched == nil {
		return err
	}
	conf := sched.Status.Confirmation
	if conf == nil || conf.Run != run.Name || !conf.State.Final() {
		return nil
	}
	status, reason := scheduled.ConfirmedCondition(*conf)
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

// confirmedRun maps a schedule to the run whose regression its confirmation ended for, so that
// run's Regressed condition follows (settleConfirmation).
func confirmedRun(_ context.Context, obj client.Object) []reconcile.Request {
	sched, ok := obj.(*v1.BenchmarkSchedule)
	if !ok || sched.Status.Confirmation == nil || !sched.Status.Confirmation.State.Final() {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: sched.Namespace, Name: sched.Status.Confirmation.Run}}}
}
