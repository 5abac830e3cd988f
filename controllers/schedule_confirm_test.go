package controllers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/controllers"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// confirmingSchedule runs a schedule with confirmation on (the API's default) up to a second run
// that regressed against the first: mariadb 15 % slower at both thread counts. It returns the
// scheduler, the first hour and the run names.
func confirmingSchedule(t *testing.T, ns, name string, policy v1.ConfirmPolicy) (*scheduler, time.Time, func(int) string) {
	t.Helper()
	s := startScheduler(t, ns, time.Now())
	sched := nightly(ns, name, "0 * * * *")
	sched.Spec.Regression.Confirm = policy
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
	finish(t, ns, runName(1), v1.RunSucceeded, slowMariadb(0.85))
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
	confName := controllers.ConfirmationName("cfm", h1.Add(time.Hour))

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

// A confirmation that does not find the regression again does not alarm: Regressed is False
// (RegressionNotConfirmed), recorded with a Normal Event. And the bounds hold: with maxPerDay 1, a
// second regression within 24 hours is not confirmed again but alarms, saying why.
func TestUnconfirmedRegressionDoesNotAlarmAndBoundsHold(t *testing.T) {
	ns := newNamespace(t)
	s, h1, runName := confirmingSchedule(t, ns, "ncf", v1.ConfirmPolicy{MaxPerDay: ptr.To[int32](1)})
	confName := controllers.ConfirmationName("ncf", h1.Add(time.Hour))
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
	confName := controllers.ConfirmationName("fcf", h1.Add(time.Hour))
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
	confName := controllers.ConfirmationName("tcf", h1.Add(time.Hour))
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
	confName := controllers.ConfirmationName("xcf", h1.Add(time.Hour))
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

// Confirmation turned off after the run controller deferred a run's alarm: the schedule records
// the regression as unconfirmed (Skipped) and alarms, so the run's condition does not wait for
// ever. (Through the schedule reconciler on a fake client: the window between the two
// controllers cannot be hit reliably on envtest.)
func TestConfirmationTurnedOffAlarmsADeferredRegression(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 20, 0, 0, time.UTC)
	sched := nightly("ns", "off", "0 * * * *")
	sched.UID = "sched-uid"
	sched.CreationTimestamp = metav1.NewTime(now.Add(-3 * time.Hour))
	child := func(h int, comparison *v1.Comparison) *v1.BenchmarkRun {
		at := time.Date(2026, 11, 23, 10+h, 0, 0, 0, time.UTC)
		run := baseRun("ns", v1.RunName("off", at), 1)
		run.Labels = map[string]string{v1.LabelSchedule: "off"}
		run.Annotations = map[string]string{v1.AnnotationScheduledTime: at.Format(time.RFC3339)}
		run.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(sched, v1.GroupVersion.WithKind("BenchmarkSchedule"))}
		run.Status.Phase = v1.RunSucceeded
		run.Status.CompletionTime = ptr.To(metav1.NewTime(at.Add(10 * time.Minute)))
		run.Status.Comparison = comparison
		if comparison != nil {
			run.Status.Conditions = []metav1.Condition{{Type: v1.ConditionRegressed, Status: metav1.ConditionUnknown,
				Reason: v1.ReasonAwaitingConfirmation, Message: "deferred", LastTransitionTime: metav1.NewTime(at)}}
		}
		return run
	}
	old := child(-2, nil)
	regressed := child(-1, &v1.Comparison{Run: v1.RunName("off", time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)),
		Baseline: old.Name, Verdict: v1.VerdictRegressed, ComparedCells: 2, RegressedCells: 1, Message: "1 of 2 cells regressed"})
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme).WithObjects(sched, old, regressed).WithStatusSubresource(sched).Build()
	rec := record.NewFakeRecorder(10)
	r := scheduleReconciler(t, c, rec, clocktesting.NewFakePassiveClock(now))
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(sched)}); err != nil {
		t.Fatal(err)
	}
	got := &v1.BenchmarkSchedule{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(sched), got); err != nil {
		t.Fatal(err)
	}
	if conf := got.Status.Confirmation; conf == nil || conf.Run != regressed.Name || conf.State != v1.ConfirmationSkipped ||
		!strings.Contains(conf.Message, "spec.regression.confirm.enabled is false") {
		t.Fatalf("confirmation %+v", conf)
	}
	if cond := condition(got.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionTrue || cond.Reason != v1.ReasonRegressionUnconfirmed {
		t.Errorf("schedule Regressed %+v", cond)
	}
	var events []string
	for len(rec.Events) > 0 {
		if e := <-rec.Events; strings.HasPrefix(e, "Warning") {
			events = append(events, e)
		}
	}
	if len(events) != 1 || !strings.HasPrefix(events[0], "Warning RegressionUnconfirmed "+regressed.Name) {
		t.Errorf("Warning Events %q, want one RegressionUnconfirmed", events)
	}
	list := &v1.BenchmarkRunList{}
	if err := c.List(context.Background(), list, client.MatchingLabels{v1.LabelConfirmationOf: "off"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d confirmation runs created with confirmation off", len(list.Items))
	}
}

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
	first := controllers.ConfirmationName("icf", h1.Add(time.Hour))
	second := controllers.ConfirmationAttemptName("icf", h1.Add(time.Hour), 2)

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
	first := controllers.ConfirmationName("mcf", h1.Add(time.Hour))
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

// secretsIn creates Secrets with a server's connection keys.
func secretsIn(t *testing.T, ns string, names ...string) {
	t.Helper()
	for _, n := range names {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: ns},
			StringData: map[string]string{"host": n, "port": "3306", "user": "u", "password": "p"}}
		if err := k8s.Create(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
}

// A pinned baseline is read on behalf of the schedule's author, whom the admission policy checked
// only for the template's Secrets and ConfigMaps: a baseline that names another Secret (another
// user's external run) is refused, neither compared with nor re-measured, with a condition and a
// Warning that name the baseline, the Secret, the target and what to do.
func TestPinnedBaselineNamingAnotherSecretIsRefused(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())
	secretsIn(t, ns, "prod-db")
	theirs := baseRun(ns, "theirs", 1, 2)
	theirs.Spec.Targets[0] = v1.Target{Name: "mariadb", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "prod-db"}}
	if err := k8s.Create(context.Background(), theirs); err != nil {
		t.Fatal(err)
	}
	finish(t, ns, "theirs", v1.RunSucceeded, cellsOf(20000, 1.0))

	sched := nightly(ns, "pin", "0 * * * *")
	sched.Spec.Regression.BaselineRun = "theirs"
	sched.Spec.Regression.Confirm = v1.ConfirmPolicy{}
	createSchedule(t, sched)
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	name := "pin-" + h1.UTC().Format("200601021504")
	s.at("pin", h1.Add(time.Second))
	waitRuns(t, ns, "pin", name)
	finish(t, ns, name, v1.RunSucceeded, cellsOf(8000, 1.0)) // far slower: a regression, were it compared

	const want = "spec.regression.baselineRun theirs names Secret prod-db (target mariadb's secretRef), which spec.template does not name"
	run := waitFor(t, ns, name, 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	if c := run.Status.Comparison; c.Verdict != v1.VerdictNoBaseline || c.Baseline != "" || c.ComparedCells != 0 ||
		!strings.Contains(c.Message, want) || !strings.Contains(c.Message, "pin a run whose Secrets and ConfigMaps the template names too") {
		t.Errorf("comparison %+v", c)
	}
	if cond := condition(run.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionFalse || cond.Reason != v1.ReasonBaselineRefused {
		t.Errorf("run Regressed %+v", cond)
	}
	assertWarning(t, ns, name, v1.ReasonBaselineRefused, want)
	got := waitSchedule(t, ns, "pin", "refused", func(s *v1.BenchmarkSchedule) bool {
		return hasCondition(s.Status.Conditions, v1.ConditionRegressed, metav1.ConditionFalse, v1.ReasonBaselineRefused)
	})
	if !strings.Contains(condition(got.Status.Conditions, v1.ConditionRegressed).Message, want) || got.Status.Confirmation != nil {
		t.Errorf("schedule Regressed %+v, confirmation %+v", condition(got.Status.Conditions, v1.ConditionRegressed), got.Status.Confirmation)
	}
	assertWarning(t, ns, "pin", v1.ReasonBaselineRefused, want)
	regressedGauges(t, ns, "pin", 0, 0)
}

// A confirmation runs the compared run's code: it never pairs it with a Secret that run's spec
// did not name. The baseline's external target names prod-db where the run's names team-db
// (both named by the template, so the baseline is not refused): re-creating the baseline's side
// would mount prod-db into the run's sysbench. An external server cannot be brought back as the
// baseline measured it anyway, so no confirmation run is made: the regression alarms
// unconfirmed, saying why.
func TestConfirmationNeverBorrowsTheBaselinesSecret(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())
	secretsIn(t, ns, "team-db", "prod-db")
	external := func(a, b string) []v1.Target {
		return []v1.Target{
			{Name: "mariadb", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: a}},
			{Name: "mariadb-psoff", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: b}},
		}
	}
	baseline := baseRun(ns, "release", 1, 2)
	baseline.Spec.Targets = external("prod-db", "prod-db")
	if err := k8s.Create(context.Background(), baseline); err != nil {
		t.Fatal(err)
	}
	finish(t, ns, "release", v1.RunSucceeded, cellsOf(10000, 1.0))

	sched := nightly(ns, "ext", "0 * * * *")
	sched.Spec.Template.Spec.Targets = external("team-db", "prod-db")
	sched.Spec.Regression.BaselineRun = "release"
	sched.Spec.Regression.Confirm = v1.ConfirmPolicy{}
	createSchedule(t, sched)
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	name := "ext-" + h1.UTC().Format("200601021504")
	s.at("ext", h1.Add(time.Second))
	waitRuns(t, ns, "ext", name)
	finish(t, ns, name, v1.RunSucceeded, slowMariadb(0.85))

	got := waitSchedule(t, ns, "ext", "skipped", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.Confirmation != nil && s.Status.Confirmation.State.Final()
	})
	if c := got.Status.Confirmation; c.State != v1.ConfirmationSkipped || c.ConfirmationRun != "" ||
		!strings.Contains(c.Message, "target mariadb is engine external: a confirmation cannot bring back the server the baseline measured") {
		t.Errorf("confirmation %+v", c)
	}
	list := &v1.BenchmarkRunList{}
	if err := k8s.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels{v1.LabelConfirmationOf: "ext"}); err != nil {
		t.Fatal(err)
	}
	for _, conf := range list.Items {
		for _, tg := range conf.Spec.Targets {
			if tg.SecretRef != nil {
				t.Errorf("confirmation run %s: target %s mounts Secret %s", conf.Name, tg.Name, tg.SecretRef.Name)
			}
		}
	}
	if len(list.Items) != 0 {
		t.Errorf("%d confirmation runs of external targets, want none", len(list.Items))
	}
	assertWarning(t, ns, "ext", v1.ReasonRegressionUnconfirmed, "engine external")
}
