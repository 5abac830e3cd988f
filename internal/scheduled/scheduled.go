// Package scheduled is what the two reconcilers know alike of a run a BenchmarkSchedule created:
// when it was scheduled for, the server instances it gets, which run is its baseline (the
// schedule's pinned run, refused when it names what the schedule's template does not, else the
// schedule's newest earlier success), its history and its comparison with the baseline, and the
// Regressed condition a comparison and a confirmation give. The run's reconciler records the
// comparison in the run; the schedule's reconciler reads it and confirms a regression.
package scheduled

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
)

// Time is the time a run was scheduled for (its creation time if the annotation is
// missing or unreadable).
func Time(run *v1.BenchmarkRun) time.Time {
	if t, err := time.Parse(time.RFC3339, run.Annotations[v1.AnnotationScheduledTime]); err == nil {
		return t
	}
	return run.CreationTimestamp.Time
}

// ServerInstance is the serverInstance of a scheduled run: the template's when it says,
// else PerRepetition where that can work (repetitions, builtin targets, order Sequential). A
// scheduled run is compared with other nights' runs, each on its own server instance, so its
// repetitions must see the noise between instances too: measured on the local cluster, a
// one-thread cell's QPS varies about twice as much between instances as within one.
func ServerInstance(spec v1.BenchmarkRunSpec) v1.ServerInstanceMode {
	if spec.ServerInstance != "" || spec.RepetitionsOrDefault() < 2 || spec.Interleaved() {
		return spec.ServerInstance
	}
	for _, t := range spec.Targets {
		if !engine.FactsOf(t.Engine).OwnPod {
			return spec.ServerInstance
		}
	}
	return v1.ServerInstancePerRepetition
}

// RegressedCondition is the Regressed condition's status and reason for a comparison, the same
// on the run and on its schedule.
func RegressedCondition(c v1.Comparison) (metav1.ConditionStatus, string) {
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

// ConfirmedCondition is the Regressed condition of a compared run once its confirmation c ended.
// For a regression: True when confirmed and when it could not be confirmed (skipped, failed, or
// inconclusive within the bounds: they alarm rather than swallow it), False when the
// confirmation did not find it again. For an Inconclusive comparison's suspects only a
// confirmed regression alarms; otherwise the comparison stays what it was.
func ConfirmedCondition(c v1.Confirmation) (metav1.ConditionStatus, string) {
	if c.OfSuspects() {
		switch c.State {
		case v1.ConfirmationConfirmed:
			return metav1.ConditionTrue, v1.ReasonRegressed
		case v1.ConfirmationNotConfirmed:
			return metav1.ConditionFalse, v1.ReasonRegressionNotConfirmed
		case v1.ConfirmationInconclusive, v1.ConfirmationSkipped, v1.ConfirmationFailed:
			return metav1.ConditionFalse, v1.ReasonInconclusive
		default:
			return metav1.ConditionUnknown, v1.ReasonAwaitingConfirmation
		}
	}
	switch c.State {
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

// ToConfirm says whether a schedule re-measures comparison c before it alarms: a Regressed
// comparison, and an Inconclusive one with suspects (which alarms only if confirmed), when
// spec.regression.confirm is enabled.
func ToConfirm(sched *v1.BenchmarkSchedule, c *v1.Comparison) bool {
	return Confirmable(c) && sched.Spec.Regression.ConfirmEnabled()
}

// Confirmable says whether comparison c is one a confirmation would re-measure.
func Confirmable(c *v1.Comparison) bool {
	return c != nil && (c.Verdict == v1.VerdictRegressed || (c.Verdict == v1.VerdictInconclusive && len(c.Suspects) > 0))
}
