package run_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/controllers/schedule"
)

// confirmingSchedule runs a schedule with confirmation on (the API's default) up to a second run
// that regressed against the first: mariadb 15 % slower at both thread counts. It returns the
// scheduler, the first hour and the run names.
func confirmingSchedule(t *testing.T, ns, name string, policy v1.ConfirmPolicy) (*scheduler, time.Time, func(int) string) {
	t.Helper()
	return confirmingScheduleAt(t, ns, name, policy, 0.85, nil)
}

// confirmingScheduleAt is confirmingSchedule with mariadb's QPS times factor in the second run
// and the run-to-run allowance runToRunCV (nil: nightly's).
func confirmingScheduleAt(t *testing.T, ns, name string, policy v1.ConfirmPolicy, factor float64,
	runToRunCV *float64) (*scheduler, time.Time, func(int) string) {
	t.Helper()
	s := startScheduler(t, ns, time.Now())
	sched := nightly(ns, name, "0 * * * *")
	sched.Spec.Regression.Confirm = policy
	if runToRunCV != nil {
		sched.Spec.Regression.RunToRunCVPercent = runToRunCV
	}
	sched = createSchedule(t, sched)
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	runName := func(i int) string {
		return name + "-" + h1.Add(time.Duration(i)*time.Hour).UTC().Format("200601021504")
	}

	s.at(name, h1.Add(time.Second))
	waitRuns(t, ns, name, runName(0))
	finish(t, ns, runName(0), v1.RunSucceeded, cellsOf(10000, 1.0))

	s.at(name, h1.Add(time.Hour+time.Second))
	waitRuns(t, ns, name, runName(0), runName(1))
	finish(t, ns, runName(1), v1.RunSucceeded, slowMariadb(factor))
	return s, h1, runName
}

// baseQPS is the fake servers' QPS at one thread (twice that at two).
const baseQPS = 10000

// slowMariadb is cellsOf(baseQPS, 1) with mariadb's QPS times factor.
func slowMariadb(factor float64) map[string][2]float64 {
	const qps = baseQPS
	cells := cellsOf(qps, 1.0)
	cells["mariadb@1"] = [2]float64{qps * factor, 1.0}
	cells["mariadb@2"] = [2]float64{2 * qps * factor, 1.0}
	return cells
}

// confirmationCells are the cells of a confirmation run of mariadb at 1 and 2 threads: the
// baseline's side at baseQPS, the run's at baseQPS x factor.
func confirmationCells(factor float64) map[string][2]float64 {
	const qps = baseQPS
	return map[string][2]float64{
		"mariadb-base@1": {qps, 1.0}, "mariadb-base@2": {2 * qps, 1.0},
		"mariadb@1": {qps * factor, 1.0}, "mariadb@2": {2 * qps * factor, 1.0},
	}
}

// A regressed comparison does not alarm at once: the run's Regressed condition awaits the
// confirmation, the schedule creates one confirmation run (the baseline's server and the run's,
// interleaved, only the flagged cells, 5 repetitions) and the next run waits for it (Forbid).
// The confirmation finds the regression again: Regressed is True, with the Warning naming it.
func TestRegressionAlarmsOnlyOnceConfirmed(t *testing.T) {
	ns := newNamespace(t)
	s, h1, runName := confirmingSchedule(t, ns, "cfm", v1.ConfirmPolicy{})
	confName := schedule.ConfirmationName("cfm", h1.Add(time.Hour))

	run := waitFor(t, ns, runName(1), 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	if run.Status.Comparison.Verdict != v1.VerdictRegressed ||
		!hasCondition(run.Status.Conditions, v1.ConditionRegressed, metav1.ConditionUnknown, v1.ReasonAwaitingConfirmation) {
		t.Fatalf("run: %+v, Regressed %+v", run.Status.Comparison, condition(run.Status.Conditions, v1.ConditionRegressed))
	}
	got := waitSchedule(t, ns, "cfm", "confirmation running", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.Confirmation != nil && s.Status.Confirmation.State == v1.ConfirmationRunning
	})
	if c := got.Status.Confirmation; c.Run != runName(1) || c.Baseline != runName(0) || c.ConfirmationRun != confName ||
		strings.Join(c.Cells, ",") != "mariadb@1,mariadb@2" || c.Order != v1.OrderInterleaved {
		t.Errorf("confirmation %+v", c)
	}
	if cond := condition(got.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionUnknown ||
		cond.Reason != v1.ReasonAwaitingConfirmation || got.Status.Verdict != "Regressed 2/4, confirming" {
		t.Errorf("schedule Regressed %+v, verdict %q", cond, got.Status.Verdict)
	}
	conf := waitFor(t, ns, confName, 20*time.Second, "created", func(*v1.BenchmarkRun) bool { return true })
	var targets []string
	for _, tg := range conf.Spec.Targets {
		targets = append(targets, tg.Name+"="+tg.MyCnf)
	}
	if strings.Join(targets, ",") != "mariadb-base=,mariadb=" || len(conf.Spec.Ladder.Threads) != 2 || *conf.Spec.Repetitions != 5 ||
		conf.Spec.Order != v1.OrderInterleaved || conf.Labels[v1.LabelConfirms] != runName(1) || conf.Labels[v1.LabelSchedule] != "" {
		t.Errorf("confirmation run: targets %v, threads %v, repetitions %d, order %s, labels %v",
			targets, conf.Spec.Ladder.Threads, *conf.Spec.Repetitions, conf.Spec.Order, conf.Labels)
	}
	noWarning(t, ns, "cfm")

	// The next night is due while the confirmation runs: it waits (concurrencyPolicy Forbid).
	s.at("cfm", h1.Add(2*time.Hour+time.Second))
	waitSchedule(t, ns, "cfm", "waiting for the confirmation", func(s *v1.BenchmarkSchedule) bool {
		return hasCondition(s.Status.Conditions, v1.ConditionReady, metav1.ConditionTrue, v1.ReasonWaitingForRun)
	})
	waitRuns(t, ns, "cfm", runName(0), runName(1))

	finish(t, ns, confName, v1.RunSucceeded, confirmationCells(0.85))
	got = waitSchedule(t, ns, "cfm", "confirmed", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.Confirmation.State == v1.ConfirmationConfirmed
	})
	if cond := condition(got.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionTrue || cond.Reason != v1.ReasonRegressed ||
		got.Status.Verdict != "Regressed 2/4, confirmed" || !strings.Contains(cond.Message, "confirmed") {
		t.Errorf("schedule Regressed %+v, verdict %q", cond, got.Status.Verdict)
	}
	if r := got.Status.Confirmation.Result; r == nil || r.Verdict != v1.VerdictRegressed || r.Run != runName(1) || r.Baseline != runName(0) {
		t.Errorf("confirmation result %+v", r)
	}
	assertWarning(t, ns, "cfm", v1.ReasonRegressed, confName)
	assertWarning(t, ns, "cfm", v1.ReasonRegressed, "mariadb at 1 threads: QPS -15.0%")
	// The compared run's condition follows the schedule's outcome, with the Warning on the run.
	waitFor(t, ns, runName(1), 20*time.Second, "Regressed True", func(r *v1.BenchmarkRun) bool {
		return hasCondition(r.Status.Conditions, v1.ConditionRegressed, metav1.ConditionTrue, v1.ReasonRegressed)
	})
	assertWarning(t, ns, runName(1), v1.ReasonRegressed, confName)
	// The waiting run starts once the confirmation is over.
	waitRuns(t, ns, "cfm", runName(0), runName(1), runName(2))
	if n := confirmationsCounted(t, ns, "cfm", v1.ConfirmationConfirmed); n != 1 {
		t.Errorf("mysqlbench_schedule_confirmations_total{outcome=Confirmed} = %v, want 1", n)
	}
}

// An Inconclusive comparison with a suspect (mariadb 8 % slower: beyond the 5 % minimum effect,
// within what a night can move under a 6 % run-to-run allowance, the default) is re-measured side by side
// like a regression, without alarming meanwhile. Found again, it alarms as a confirmed
// regression; a second suspect that the confirmation does not find again stays quiet.
func TestInconclusiveSuspectIsConfirmedBeforeAlarming(t *testing.T) {
	ns := newNamespace(t)
	s, h1, runName := confirmingScheduleAt(t, ns, "sus", v1.ConfirmPolicy{}, 0.92, ptr.To(6.0))
	confName := schedule.ConfirmationName("sus", h1.Add(time.Hour))

	run := waitFor(t, ns, runName(1), 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	if c := run.Status.Comparison; c.Verdict != v1.VerdictInconclusive || strings.Join(c.Suspects, ",") != "mariadb" ||
		!hasCondition(run.Status.Conditions, v1.ConditionRegressed, metav1.ConditionUnknown, v1.ReasonAwaitingConfirmation) {
		t.Fatalf("run: %+v, Regressed %+v", c, condition(run.Status.Conditions, v1.ConditionRegressed))
	}
	got := waitSchedule(t, ns, "sus", "confirmation running", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.Confirmation != nil && s.Status.Confirmation.State == v1.ConfirmationRunning
	})
	if c := got.Status.Confirmation; c.Run != runName(1) || c.Verdict != v1.VerdictInconclusive || c.ConfirmationRun != confName ||
		strings.Join(c.Cells, ",") != "mariadb@1,mariadb@2" || !strings.Contains(c.Message, "possibly regressed against "+runName(0)) {
		t.Errorf("confirmation %+v", c)
	}
	if got.Status.Verdict != "Inconclusive 2/2 targets, confirming" {
		t.Errorf("verdict %q", got.Status.Verdict)
	}
	noWarning(t, ns, "sus")

	finish(t, ns, confName, v1.RunSucceeded, confirmationCells(0.92))
	got = waitSchedule(t, ns, "sus", "confirmed", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.Confirmation.State == v1.ConfirmationConfirmed
	})
	if cond := condition(got.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionTrue || cond.Reason != v1.ReasonRegressed ||
		got.Status.Verdict != "Inconclusive 2/2 targets, regression confirmed" {
		t.Errorf("schedule Regressed %+v, verdict %q", cond, got.Status.Verdict)
	}
	assertWarning(t, ns, "sus", v1.ReasonRegressed, confName)
	waitFor(t, ns, runName(1), 20*time.Second, "Regressed True", func(r *v1.BenchmarkRun) bool {
		return hasCondition(r.Status.Conditions, v1.ConditionRegressed, metav1.ConditionTrue, v1.ReasonRegressed)
	})
	targetsGauge(t, ns, "sus", 1)

	// The next night drops mariadb 8 % again (against the slow night: 15 % below the first);
	// side by side its servers measure the same as the baseline's: nothing alarms.
	s.at("sus", h1.Add(2*time.Hour+time.Second))
	waitRuns(t, ns, "sus", runName(0), runName(1), runName(2))
	finish(t, ns, runName(2), v1.RunSucceeded, slowMariadb(0.92*0.92))
	conf2 := schedule.ConfirmationName("sus", h1.Add(2*time.Hour))
	waitFor(t, ns, conf2, 20*time.Second, "created", func(*v1.BenchmarkRun) bool { return true })
	finish(t, ns, conf2, v1.RunSucceeded, confirmationCells(1.0))
	got = waitSchedule(t, ns, "sus", "not confirmed", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.Confirmation.Run == runName(2) && s.Status.Confirmation.State == v1.ConfirmationNotConfirmed
	})
	if cond := condition(got.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionFalse ||
		got.Status.Verdict != "Inconclusive 2/2 targets, no regression found again" {
		t.Errorf("schedule Regressed %+v, verdict %q", cond, got.Status.Verdict)
	}
	waitFor(t, ns, runName(2), 20*time.Second, "Regressed False", func(r *v1.BenchmarkRun) bool {
		return hasCondition(r.Status.Conditions, v1.ConditionRegressed, metav1.ConditionFalse, v1.ReasonRegressionNotConfirmed)
	})
	targetsGauge(t, ns, "sus", 0)
}

// targetsGauge waits until the schedule's regressed targets gauge reads want.
func targetsGauge(t *testing.T, ns, schedule string, want float64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := scheduleGauge(t, "mysqlbench_schedule_regressed_targets", ns, schedule)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("mysqlbench_schedule_regressed_targets %v, want %v", got, want)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A confirmation that does not find the regression again does not alarm: Regressed is False
// (RegressionNotConfirmed), recorded with a Normal Event. And the bounds hold: with maxPerDay 1, a
// second regression within 24 hours is not confirmed again but alarms, saying why.
func TestUnconfirmedRegressionDoesNotAlarmAndBoundsHold(t *testing.T) {
	ns := newNamespace(t)
	s, h1, runName := confirmingSchedule(t, ns, "ncf", v1.ConfirmPolicy{MaxPerDay: ptr.To[int32](1)})
	confName := schedule.ConfirmationName("ncf", h1.Add(time.Hour))
	waitSchedule(t, ns, "ncf", "confirmation running", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.Confirmation != nil && s.Status.Confirmation.State == v1.ConfirmationRunning
	})
	waitFor(t, ns, confName, 20*time.Second, "created", func(*v1.BenchmarkRun) bool { return true })

	// Side by side, the baseline's server and the run's measure the same.
	finish(t, ns, confName, v1.RunSucceeded, confirmationCells(1.0))
	got := waitSchedule(t, ns, "ncf", "not confirmed", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.Confirmation.State == v1.ConfirmationNotConfirmed
	})
	if cond := condition(got.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionFalse ||
		cond.Reason != v1.ReasonRegressionNotConfirmed || got.Status.Verdict != "Regressed 2/4, not confirmed" {
		t.Errorf("schedule Regressed %+v, verdict %q", cond, got.Status.Verdict)
	}
	assertEvent(t, ns, "ncf", corev1.EventTypeNormal, v1.ReasonRegressionNotConfirmed, "not confirmed")
	noWarning(t, ns, "ncf")
	waitFor(t, ns, runName(1), 20*time.Second, "Regressed False", func(r *v1.BenchmarkRun) bool {
		return hasCondition(r.Status.Conditions, v1.ConditionRegressed, metav1.ConditionFalse, v1.ReasonRegressionNotConfirmed)
	})
	noWarning(t, ns, runName(1))
	if n := confirmationsCounted(t, ns, "ncf", v1.ConfirmationNotConfirmed); n != 1 {
		t.Errorf("mysqlbench_schedule_confirmations_total{outcome=NotConfirmed} = %v, want 1", n)
	}

	// The third run regresses against the second within 24 hours of the first confirmation.
	s.at("ncf", h1.Add(2*time.Hour+time.Second))
	waitRuns(t, ns, "ncf", runName(0), runName(1), runName(2))
	finish(t, ns, runName(2), v1.RunSucceeded, slowMariadb(0.85*0.85))
	got = waitSchedule(t, ns, "ncf", "skipped", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.Confirmation.Run == runName(2) && s.Status.Confirmation.State == v1.ConfirmationSkipped
	})
	if cond := condition(got.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionTrue ||
		cond.Reason != v1.ReasonRegressionUnconfirmed || got.Status.Confirmation.ConfirmationRun != "" {
		t.Errorf("schedule Regressed %+v, confirmation %+v", cond, got.Status.Confirmation)
	}
	assertWarning(t, ns, "ncf", v1.ReasonRegressionUnconfirmed, "maxPerDay (1)")
	waitFor(t, ns, runName(2), 20*time.Second, "Regressed True", func(r *v1.BenchmarkRun) bool {
		return hasCondition(r.Status.Conditions, v1.ConditionRegressed, metav1.ConditionTrue, v1.ReasonRegressionUnconfirmed)
	})
	list := &v1.BenchmarkRunList{}
	if err := k8s.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels{v1.LabelConfirmationOf: "ncf"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Errorf("%d confirmation runs, want 1", len(list.Items))
	}
}

// A confirmation run that fails does not swallow the alarm: Regressed is True, reason
// ConfirmationFailed, with a Warning naming the run.
func TestFailedConfirmationAlarmsUnconfirmed(t *testing.T) {
	ns := newNamespace(t)
	_, h1, _ := confirmingSchedule(t, ns, "fcf", v1.ConfirmPolicy{})
	confName := schedule.ConfirmationName("fcf", h1.Add(time.Hour))
	waitFor(t, ns, confName, 20*time.Second, "created", func(*v1.BenchmarkRun) bool { return true })
	finish(t, ns, confName, v1.RunFailed, confirmationCells(1.0))
	got := waitSchedule(t, ns, "fcf", "failed", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.Confirmation != nil && s.Status.Confirmation.State == v1.ConfirmationFailed
	})
	if cond := condition(got.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionTrue ||
		cond.Reason != v1.ReasonConfirmationFailed || got.Status.Verdict != "Regressed 2/4, unconfirmed" {
		t.Errorf("schedule Regressed %+v, verdict %q", cond, got.Status.Verdict)
	}
	assertWarning(t, ns, "fcf", v1.ReasonConfirmationFailed, "confirmation run "+confName+" failed")
}

// assertEvent waits for an Event of kind and reason on name whose message contains text.
func assertEvent(t *testing.T, ns, name, kind, reason, text string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		events := &corev1.EventList{}
		if err := k8s.List(context.Background(), events, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == name && e.Reason == reason && e.Type == kind && strings.Contains(e.Message, text) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Errorf("no %s %s Event on %s containing %q", kind, reason, name, text)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// noWarning fails when name has a Regressed Warning Event.
func noWarning(t *testing.T, ns, name string) {
	const reason = v1.ReasonRegressed
	t.Helper()
	events := &corev1.EventList{}
	if err := k8s.List(context.Background(), events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.InvolvedObject.Name == name && e.Reason == reason && e.Type == corev1.EventTypeWarning {
			t.Errorf("unexpected Warning %s on %s: %s", reason, name, e.Message)
		}
	}
}

// confirmationsCounted reads mysqlbench_schedule_confirmations_total of a schedule and outcome
// from the registry the manager serves (the managers of these tests run in this process).
func confirmationsCounted(t *testing.T, ns, schedule string, outcome v1.ConfirmationState) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "mysqlbench_schedule_confirmations_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == ns && labels["schedule"] == schedule && labels["outcome"] == string(outcome) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// A confirmation is bounded in time: a confirmation run not finished within timeoutMinutes is
// deleted and the regression alarms unconfirmed.
func TestConfirmationPastItsTimeoutAlarmsUnconfirmed(t *testing.T) {
	ns := newNamespace(t)
	s, h1, _ := confirmingSchedule(t, ns, "tcf", v1.ConfirmPolicy{TimeoutMinutes: ptr.To[int32](10)})
	confName := schedule.ConfirmationName("tcf", h1.Add(time.Hour))
	got := waitSchedule(t, ns, "tcf", "confirmation running", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.Confirmation != nil && s.Status.Confirmation.State == v1.ConfirmationRunning
	})
	waitFor(t, ns, confName, 20*time.Second, "created", func(*v1.BenchmarkRun) bool { return true })

	s.at("tcf", got.Status.Confirmation.StartTime.Add(9*time.Minute))
	time.Sleep(time.Second)
	if got := waitSchedule(t, ns, "tcf", "read", func(*v1.BenchmarkSchedule) bool { return true }); got.Status.Confirmation.State != v1.ConfirmationRunning {
		t.Fatalf("before the timeout: %+v", got.Status.Confirmation)
	}
	s.at("tcf", got.Status.Confirmation.StartTime.Add(10*time.Minute+time.Second))
	got = waitSchedule(t, ns, "tcf", "failed", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.Confirmation.State == v1.ConfirmationFailed
	})
	if cond := condition(got.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionTrue || cond.Reason != v1.ReasonConfirmationFailed {
		t.Errorf("schedule Regressed %+v", cond)
	}
	assertWarning(t, ns, "tcf", v1.ReasonConfirmationFailed, "did not finish within spec.regression.confirm.timeoutMinutes (10m0s)")
	deadline := time.Now().Add(20 * time.Second)
	for {
		conf := &v1.BenchmarkRun{}
		err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: confName}, conf)
		if apierrors.IsNotFound(err) || (err == nil && !conf.DeletionTimestamp.IsZero()) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("confirmation run %s not deleted: %v", confName, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A run the schedule did not create under the confirmation run's name is not taken for it: the
// confirmation fails, naming it, and the regression alarms.
func TestConfirmationNameTakenByAForeignRun(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())
	sched := nightly(ns, "xcf", "0 * * * *")
	sched.Spec.Regression.Confirm = v1.ConfirmPolicy{}
	sched = createSchedule(t, sched)
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	runName := func(i int) string { return "xcf-" + h1.Add(time.Duration(i)*time.Hour).UTC().Format("200601021504") }
	confName := schedule.ConfirmationName("xcf", h1.Add(time.Hour))
	foreign := baseRun(ns, confName, 1)
	foreign.Labels = map[string]string{v1.LabelConfirmationOf: "xcf", v1.LabelConfirms: runName(1)}
	if err := k8s.Create(context.Background(), foreign); err != nil {
		t.Fatal(err)
	}

	s.at("xcf", h1.Add(time.Second))
	waitRuns(t, ns, "xcf", runName(0))
	finish(t, ns, runName(0), v1.RunSucceeded, cellsOf(10000, 1.0))
	s.at("xcf", h1.Add(time.Hour+time.Second))
	waitRuns(t, ns, "xcf", runName(0), runName(1))
	finish(t, ns, runName(1), v1.RunSucceeded, slowMariadb(0.85))
	got := waitSchedule(t, ns, "xcf", "failed", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.Confirmation != nil && s.Status.Confirmation.State == v1.ConfirmationFailed
	})
	if cond := condition(got.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionTrue ||
		!strings.Contains(cond.Message, "a BenchmarkRun named "+confName+" exists that is not this schedule's confirmation") {
		t.Errorf("schedule Regressed %+v", cond)
	}
}
