package run_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/controllers/schedule"
)

// scheduleGauge reads a schedule's gauge from the registry the manager serves (-1 when absent).
func scheduleGauge(t *testing.T, family, ns, schedule string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == ns && labels["schedule"] == schedule {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}

// regressedGauges waits until the schedule's regressed targets and cells gauges read targets
// and cells (they are set once the status write that decides them succeeded).
func regressedGauges(t *testing.T, ns, schedule string, targets, cells float64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tg := scheduleGauge(t, "mysqlbench_schedule_regressed_targets", ns, schedule)
		c := scheduleGauge(t, "mysqlbench_schedule_regressed_cells", ns, schedule)
		if tg == targets && c == cells {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("mysqlbench_schedule_regressed_targets %v, mysqlbench_schedule_regressed_cells %v; want %v and %v", tg, c, targets, cells)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// noisyRounds are a confirmation run's rounds where the run's side of mariadb moves by -25 % to
// +25 % from round to round against the baseline's side: no verdict either way.
var noisyRounds = map[string][]float64{"": {1, 1, 1, 1, 1}, "mariadb": {0.75, 1.25, 0.9, 1.1, 0.85}}

// A confirmation that cannot decide does not drop the regression: it is measured again with
// twice the repetitions (a new confirmation run, both sides on new server instances every round,
// interleaved), and only the confirmation that finds it again alarms: before that, no Regressed
// Warning and the regressed metrics at 0, though the nightly comparison had 2 regressed cells;
// after it, the Warning counts the regressed target and cells, and so do the metrics.
func TestInconclusiveConfirmationMeasuresAgainWithTwiceTheRepetitions(t *testing.T) {
	ns := newNamespace(t)
	_, h1, runName := confirmingSchedule(t, ns, "icf", v1.ConfirmPolicy{})
	first := schedule.ConfirmationName("icf", h1.Add(time.Hour))
	second := schedule.ConfirmationAttemptName("icf", h1.Add(time.Hour), 2)

	conf := waitFor(t, ns, first, 20*time.Second, "created", func(*v1.BenchmarkRun) bool { return true })
	if *conf.Spec.Repetitions != 5 || conf.Spec.Order != v1.OrderInterleaved || conf.Spec.ServerInstance != v1.ServerInstancePerRepetition {
		t.Errorf("first confirmation run: %d repetitions, order %s, serverInstance %q; want 5, Interleaved, PerRepetition",
			*conf.Spec.Repetitions, conf.Spec.Order, conf.Spec.ServerInstance)
	}
	// Read once the status that records the confirmation is written: the gauges follow it.
	waitSchedule(t, ns, "icf", "confirmation running", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.Confirmation != nil && s.Status.Confirmation.State == v1.ConfirmationRunning
	})
	regressedGauges(t, ns, "icf", 0, 0)
	noWarning(t, ns, "icf")

	finishRounds(t, ns, first, v1.RunSucceeded, confirmationCells(0.9), noisyRounds)
	got := waitSchedule(t, ns, "icf", "measuring again", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.Confirmation != nil && s.Status.Confirmation.Attempt == 2 && s.Status.Confirmation.State == v1.ConfirmationRunning
	})
	if c := got.Status.Confirmation; c.ConfirmationRun != second || c.Repetitions != 10 || c.Result == nil ||
		c.Result.Verdict != v1.VerdictInconclusive || !strings.Contains(c.Result.Message, "paired by round over 5 round(s)") {
		t.Errorf("confirmation %+v, result %+v", c, c.Result)
	}
	if cond := condition(got.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionUnknown ||
		cond.Reason != v1.ReasonAwaitingConfirmation || got.Status.Verdict != "Regressed 2/4, confirming" {
		t.Errorf("schedule Regressed %+v, verdict %q", cond, got.Status.Verdict)
	}
	assertEvent(t, ns, "icf", corev1.EventTypeNormal, v1.ReasonConfirmationInconclusive, "measuring again with 10 repetitions")
	conf = waitFor(t, ns, second, 20*time.Second, "created", func(*v1.BenchmarkRun) bool { return true })
	if *conf.Spec.Repetitions != 10 || conf.Annotations[v1.AnnotationConfirmationAttempt] != "2" || conf.Labels[v1.LabelConfirms] != runName(1) ||
		conf.Spec.ServerInstance != v1.ServerInstancePerRepetition {
		t.Errorf("second confirmation run: %d repetitions, serverInstance %q, metadata %+v", *conf.Spec.Repetitions, conf.Spec.ServerInstance, conf.ObjectMeta)
	}
	regressedGauges(t, ns, "icf", 0, 0)
	noWarning(t, ns, "icf")
	noWarning(t, ns, runName(1))

	finishRounds(t, ns, second, v1.RunSucceeded, confirmationCells(0.85),
		map[string][]float64{"": {1, 1.002, 0.998, 1.004, 0.996, 1.001, 0.999, 1.003, 0.997, 1}})
	got = waitSchedule(t, ns, "icf", "confirmed", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.Confirmation.State == v1.ConfirmationConfirmed
	})
	if cond := condition(got.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionTrue || cond.Reason != v1.ReasonRegressed ||
		got.Status.Verdict != "Regressed 2/4, confirmed" {
		t.Errorf("schedule Regressed %+v, verdict %q", cond, got.Status.Verdict)
	}
	assertWarning(t, ns, "icf", v1.ReasonRegressed, "found again 1 target(s) and 2 cell(s) regressed")
	assertWarning(t, ns, "icf", v1.ReasonRegressed, second+" measured the baseline's servers and the run's interleaved on one node, on new server instances every round, 10 repetitions")
	regressedGauges(t, ns, "icf", 1, 2)
	if n := confirmationsCounted(t, ns, "icf", v1.ConfirmationConfirmed); n != 1 {
		t.Errorf("mysqlbench_schedule_confirmations_total{outcome=Confirmed} = %v, want 1 (one regression, two runs)", n)
	}
}

// Within maxRuns nothing decided: the regression alarms unconfirmed (ConfirmationInconclusive),
// saying which bound stopped it, and still counts nowhere as a confirmed regression.
func TestConfirmationInconclusiveWithinItsBoundsAlarmsUnconfirmed(t *testing.T) {
	ns := newNamespace(t)
	_, h1, runName := confirmingSchedule(t, ns, "mcf", v1.ConfirmPolicy{MaxRuns: ptr.To[int32](1)})
	first := schedule.ConfirmationName("mcf", h1.Add(time.Hour))
	waitFor(t, ns, first, 20*time.Second, "created", func(*v1.BenchmarkRun) bool { return true })
	finishRounds(t, ns, first, v1.RunSucceeded, confirmationCells(0.9), noisyRounds)
	got := waitSchedule(t, ns, "mcf", "inconclusive", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.Confirmation != nil && s.Status.Confirmation.State == v1.ConfirmationInconclusive
	})
	if cond := condition(got.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionTrue ||
		cond.Reason != v1.ReasonConfirmationInconclusive || got.Status.Verdict != "Regressed 2/4, unconfirmed" ||
		!strings.Contains(cond.Message, "1 of spec.regression.confirm.maxRuns (1) ran") {
		t.Errorf("schedule Regressed %+v, verdict %q", cond, got.Status.Verdict)
	}
	assertWarning(t, ns, "mcf", v1.ReasonConfirmationInconclusive, "could not decide")
	noWarning(t, ns, "mcf")
	waitFor(t, ns, runName(1), 20*time.Second, "Regressed True", func(r *v1.BenchmarkRun) bool {
		return hasCondition(r.Status.Conditions, v1.ConditionRegressed, metav1.ConditionTrue, v1.ReasonConfirmationInconclusive)
	})
	regressedGauges(t, ns, "mcf", 0, 0)
	list := &v1.BenchmarkRunList{}
	if err := k8s.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels{v1.LabelConfirmationOf: "mcf"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Errorf("%d confirmation runs, want 1 (maxRuns 1)", len(list.Items))
	}
}
