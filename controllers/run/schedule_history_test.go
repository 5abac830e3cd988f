package run_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/sink"
)

func TestRegressionDetectedAgainstThePreviousRun(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())
	sched := createSchedule(t, nightly(ns, "reg", "0 * * * *"))
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	name := func(i int) string { return "reg-" + h1.Add(time.Duration(i)*time.Hour).UTC().Format("200601021504") }

	// The first run has nothing to compare with.
	s.at("reg", h1.Add(time.Second))
	waitRuns(t, ns, "reg", name(0))
	finish(t, ns, name(0), v1.RunSucceeded, cellsOf(10000, 1.0))
	first := waitFor(t, ns, name(0), 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	if first.Status.Comparison.Verdict != v1.VerdictNoBaseline ||
		!hasCondition(first.Status.Conditions, v1.ConditionRegressed, metav1.ConditionFalse, v1.ReasonNoBaseline) {
		t.Errorf("first run: %+v, conditions %+v", first.Status.Comparison, first.Status.Conditions)
	}

	// The second is within the thresholds: 4 % slower (threshold 5 %), p95 8 % higher (10 %).
	s.at("reg", h1.Add(time.Hour+time.Second))
	waitRuns(t, ns, "reg", name(0), name(1))
	finish(t, ns, name(1), v1.RunSucceeded, cellsOf(9600, 1.08))
	second := waitFor(t, ns, name(1), 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	if c := second.Status.Comparison; c.Verdict != v1.VerdictNoRegression || c.Baseline != name(0) || c.ComparedCells != 4 || c.RegressedCells != 0 {
		t.Errorf("second run: %+v", c)
	}
	got := waitSchedule(t, ns, "reg", "verdict OK", func(s *v1.BenchmarkSchedule) bool { return s.Status.Verdict == "OK 0/4" })
	if !hasCondition(got.Status.Conditions, v1.ConditionRegressed, metav1.ConditionFalse, v1.ReasonNoRegression) {
		t.Errorf("schedule Regressed %+v", condition(got.Status.Conditions, v1.ConditionRegressed))
	}

	// The third drops one cell by 12 % and raises another's p95 by 30 %: two regressed cells,
	// compared with the second run (the previous one), not the first.
	s.at("reg", h1.Add(2*time.Hour+time.Second))
	waitRuns(t, ns, "reg", name(0), name(1), name(2))
	cells := cellsOf(9600, 1.08)
	cells["mariadb@2"] = [2]float64{2 * 9600 * 0.88, 1.08}
	cells["mariadb-psoff@1"] = [2]float64{9600, 1.08 * 1.3}
	finish(t, ns, name(2), v1.RunSucceeded, cells)
	third := waitFor(t, ns, name(2), 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	c := third.Status.Comparison
	if c.Verdict != v1.VerdictRegressed || c.Baseline != name(1) || c.RegressedCells != 2 || c.ComparedCells != 4 || len(c.Worst) != 2 {
		t.Fatalf("third run: %+v", c)
	}
	if c.Worst[0].Target != "mariadb-psoff" || c.Worst[0].Threads != 1 || c.Worst[1].Target != "mariadb" || c.Worst[1].QPSChangePercent != -12 {
		t.Errorf("worst cells %+v, want mariadb-psoff@1 (p95 +30%%) then mariadb@2 (QPS -12%%)", c.Worst)
	}
	if !strings.Contains(c.Message, "cells: 2 regressed") || !strings.Contains(c.Message, "mariadb at 2 threads: QPS -12.0%") {
		t.Errorf("message %q", c.Message)
	}
	if !hasCondition(third.Status.Conditions, v1.ConditionRegressed, metav1.ConditionTrue, v1.ReasonRegressed) {
		t.Errorf("run Regressed %+v", condition(third.Status.Conditions, v1.ConditionRegressed))
	}
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name(2) + "-results"}, cm); err != nil {
		t.Fatal(err)
	}
	md := cm.Data[sink.ComparisonKey]
	// Old then new, as benchstat; both cells and both targets' geomean rows regressed.
	if !strings.Contains(md, "# "+name(1)+" vs "+name(2)) || strings.Count(md, "**regressed**") != 4 || cm.Data["report.md"] == "" {
		t.Errorf("comparison.md:\n%s\nkeys %v", md, keys(cm.Data))
	}
	got = waitSchedule(t, ns, "reg", "verdict Regressed", func(s *v1.BenchmarkSchedule) bool { return s.Status.Verdict == "Regressed 2/4" })
	if cond := condition(got.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, name(2)) {
		t.Errorf("schedule Regressed %+v", cond)
	}
	if got.Status.LastComparison == nil || got.Status.LastComparison.Run != name(2) {
		t.Errorf("lastComparison %+v", got.Status.LastComparison)
	}
	// Three nights are too few for a change point; the analysis is recorded for the newest run.
	got = waitSchedule(t, ns, "reg", "history", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.History != nil && s.Status.History.Run == name(2)
	})
	if h := got.Status.History; h.Runs != 3 || h.RegressedCells != 0 || len(h.ChangePoints) != 0 {
		t.Errorf("history %+v", h)
	}
	assertEvents(t, ns, "reg", "Created", v1.ReasonNoBaseline, v1.ReasonNoRegression, v1.ReasonRegressed)
	assertWarning(t, ns, "reg", v1.ReasonRegressed, "mariadb-psoff at 1 threads")
}

// An Inconclusive comparison makes the next run measure more repetitions, within
// spec.regression.maxRepetitions.
func TestInconclusiveComparisonAddsRepetitions(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())
	sched := nightly(ns, "adapt", "0 * * * *")
	// No minimum effect for QPS: no interval can show "unchanged", so identical runs are
	// Inconclusive.
	sched.Spec.Regression = v1.RegressionPolicy{QPSDropPercent: ptr.To(0.0), MaxRepetitions: ptr.To[int32](3)}
	createSchedule(t, sched)
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	name := func(i int) string { return "adapt-" + h1.Add(time.Duration(i)*time.Hour).UTC().Format("200601021504") }

	var names []string
	for i := range 2 {
		s.at("adapt", h1.Add(time.Duration(i)*time.Hour+time.Second))
		names = append(names, name(i))
		runs := waitRuns(t, ns, "adapt", names...)
		if got := runs[i].Spec.RepetitionsOrDefault(); got != 1 {
			t.Fatalf("run %d: %d repetitions, want the template's 1", i, got)
		}
		finish(t, ns, name(i), v1.RunSucceeded, cellsOf(10000, 1.0))
		waitFor(t, ns, name(i), 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	}
	got := waitSchedule(t, ns, "adapt", "verdict Inconclusive", func(s *v1.BenchmarkSchedule) bool { return s.Status.Verdict == "Inconclusive 2/2 targets" })
	if !hasCondition(got.Status.Conditions, v1.ConditionRegressed, metav1.ConditionFalse, v1.ReasonInconclusive) {
		t.Errorf("schedule Regressed %+v", condition(got.Status.Conditions, v1.ConditionRegressed))
	}
	// Twice the inconclusive run's 1 repetition.
	s.at("adapt", h1.Add(2*time.Hour+time.Second))
	runs := waitRuns(t, ns, "adapt", name(0), name(1), name(2))
	if got := runs[2].Spec.RepetitionsOrDefault(); got != 2 {
		t.Fatalf("run after an Inconclusive comparison: %d repetitions, want 2", got)
	}
	finish(t, ns, name(2), v1.RunSucceeded, cellsOf(10000, 1.0))
	waitFor(t, ns, name(2), 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	// Inconclusive again: 4, bounded by maxRepetitions 3.
	s.at("adapt", h1.Add(3*time.Hour+time.Second))
	runs = waitRuns(t, ns, "adapt", name(0), name(1), name(2), name(3))
	if got := runs[3].Spec.RepetitionsOrDefault(); got != 3 {
		t.Fatalf("run after a second Inconclusive comparison: %d repetitions, want maxRepetitions 3", got)
	}
	assertEvents(t, ns, "adapt", "Created")
}

// A slow drift that no comparison of neighbours shows (-1.5 % a night against a 5 % minimum
// effect) is found in the schedule's history.
func TestHistoryCatchesADriftThatNoComparisonShows(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())
	sched := nightly(ns, "drift", "0 * * * *")
	sched.Spec.SuccessfulRunsHistoryLimit = ptr.To[int32](20)
	createSchedule(t, sched)
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	name := func(i int) string { return "drift-" + h1.Add(time.Duration(i)*time.Hour).UTC().Format("200601021504") }

	const nights = 10
	var names []string
	for i := range nights {
		s.at("drift", h1.Add(time.Duration(i)*time.Hour+time.Second))
		names = append(names, name(i))
		waitRuns(t, ns, "drift", names...)
		noise := []float64{1.003, 0.997}[i%2]
		finish(t, ns, name(i), v1.RunSucceeded, cellsOf(10000*(1-0.015*float64(i))*noise, 1.0))
		run := waitFor(t, ns, name(i), 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
		if c := run.Status.Comparison; c.Verdict == v1.VerdictRegressed {
			t.Fatalf("night %d regressed against the night before: %s", i, c.Message)
		}
	}
	got := waitSchedule(t, ns, "drift", "the history of the last night", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.History != nil && s.Status.History.Run == name(nights-1)
	})
	h := got.Status.History
	if h.Runs != nights || h.RegressedCells != 4 || len(h.ChangePoints) != 4 {
		t.Fatalf("history %+v", h)
	}
	for _, cp := range h.ChangePoints {
		if cp.Metric != v1.AckQPS || !cp.Regressed || cp.ChangePercent > -5 || cp.P >= 0.05 {
			t.Errorf("change point %+v", cp)
		}
	}
	if cond := condition(got.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionFalse {
		t.Errorf("the Regressed condition stays the newest comparison's: %+v", cond)
	}
	assertWarning(t, ns, "drift", v1.ReasonChangePoint, "4 cells shifted for the worse over the last 10 runs")
}

func TestThresholdsAndPinnedBaselineAreHonoured(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())

	// A pinned baseline outside the schedule: a release run.
	release := baseRun(ns, "release-1", 1, 2)
	if err := k8s.Create(context.Background(), release); err != nil {
		t.Fatal(err)
	}
	finish(t, ns, "release-1", v1.RunSucceeded, cellsOf(10000, 1.0))

	sched := nightly(ns, "lax", "0 * * * *")
	sched.Spec.Regression = v1.RegressionPolicy{QPSDropPercent: ptr.To(20.0), P95RisePercent: ptr.To(50.0), BaselineRun: "release-1", RunToRunCVPercent: ptr.To(0.0)}
	createSchedule(t, sched)
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	name := func(i int) string { return "lax-" + h1.Add(time.Duration(i)*time.Hour).UTC().Format("200601021504") }

	// 15 % slower and p95 +40 %: within 20 % and 50 %.
	s.at("lax", h1.Add(time.Second))
	waitRuns(t, ns, "lax", name(0))
	finish(t, ns, name(0), v1.RunSucceeded, cellsOf(8500, 1.4))
	r0 := waitFor(t, ns, name(0), 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	if c := r0.Status.Comparison; c.Verdict != v1.VerdictNoRegression || c.Baseline != "release-1" || c.QPSDropPercent != 20 || c.P95RisePercent != 50 {
		t.Errorf("first run: %+v", c)
	}
	// 25 % slower than the release (but not than the previous run, 8500 -> 7500 is -11.8 %):
	// the pinned baseline decides.
	s.at("lax", h1.Add(time.Hour+time.Second))
	waitRuns(t, ns, "lax", name(0), name(1))
	finish(t, ns, name(1), v1.RunSucceeded, cellsOf(7500, 1.0))
	r1 := waitFor(t, ns, name(1), 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	if c := r1.Status.Comparison; c.Verdict != v1.VerdictRegressed || c.Baseline != "release-1" || c.RegressedCells != 4 {
		t.Errorf("second run: %+v", c)
	}

	// A pinned baseline that does not exist: NoBaseline, saying what to fix.
	s.clock.SetTime(time.Now())
	gone := nightly(ns, "gone", "0 * * * *")
	gone.Spec.Regression.BaselineRun = "no-such-run"
	createSchedule(t, gone)
	g1 := gone.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	s.at("gone", g1.Add(time.Second))
	gname := "gone-" + g1.UTC().Format("200601021504")
	waitRuns(t, ns, "gone", gname)
	finish(t, ns, gname, v1.RunSucceeded, cellsOf(1000, 1))
	rg := waitFor(t, ns, gname, 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	if c := rg.Status.Comparison; c.Verdict != v1.VerdictNoBaseline || !strings.Contains(c.Message, "no-such-run does not exist") {
		t.Errorf("run with a missing pinned baseline: %+v", c)
	}
}

// TestScheduledRunsEndToEndWithMetrics runs both controllers (the BenchmarkRun controller with
// the fake kubelet) on the real clock: a schedule firing every minute creates runs that run to
// Succeeded, the second is compared with the first, and the manager's metrics endpoint serves
// results, outcomes, step durations and the verdict with the documented labels.
func TestScheduledRunsEndToEndWithMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for two minute boundaries")
	}
	ns := newNamespace(t)
	addr := freeAddr(t)
	startOperator(t, ns, operatorOptions{log: captured(t, "run_point_select_t4.txt"), schedules: true, metricsAddr: addr})
	startKubelet(t, ns, succeedAll(t))
	sched := nightly(ns, "minutely", "* * * * *")
	sched.Spec.Template.Spec.Ladder.Threads = []int32{1, 2}
	createSchedule(t, sched)

	got := waitScheduleFor(t, ns, "minutely", 200*time.Second, "two compared runs", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.LastComparison != nil && s.Status.LastComparison.Baseline != ""
	})
	// One repetition a cell: identical captured results must not regress, and no test can call
	// them unchanged either; a cell's t test needs 3 repetitions a side.
	if c := got.Status.LastComparison; c.Verdict != v1.VerdictInconclusive || c.ComparedCells != 4 || c.InconclusiveCells != 4 ||
		c.NeededRepetitions != 3 || got.Status.Verdict != "Inconclusive 2/2 targets" {
		t.Errorf("comparison %+v, verdict %q", c, got.Status.Verdict)
	}
	if !hasCondition(got.Status.Conditions, v1.ConditionRegressed, metav1.ConditionFalse, v1.ReasonInconclusive) {
		t.Errorf("schedule Regressed %+v", condition(got.Status.Conditions, v1.ConditionRegressed))
	}
	run := got.Status.LastComparison.Run
	// Suspend it so no further run records results while the metrics are read.
	if err := k8s.Patch(context.Background(), sched, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"suspend":true}}`))); err != nil {
		t.Fatal(err)
	}
	got = waitScheduleFor(t, ns, "minutely", 60*time.Second, "no active run", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.ObservedGeneration == s.Generation && len(s.Status.Active) == 0
	})
	if c := got.Status.LastComparison; c.Run != run {
		// A run that was active when suspended finished and was compared: read its series.
		run = c.Run
	}

	body := scrape(t, addr)
	for _, want := range []string{
		fmt.Sprintf(`mysqlbench_step_qps{namespace="%s",run="%s",schedule="minutely",server_version="10.11.14-MariaDB-0+deb12u2",target="mariadb",threads="2",workload=""} %g`, ns, run, want4.qps),
		fmt.Sprintf(`mysqlbench_step_tps{namespace="%s",run="%s",schedule="minutely",server_version="10.11.14-MariaDB-0+deb12u2",target="mariadb-psoff",threads="1",workload=""} %g`, ns, run, want4.tps),
		fmt.Sprintf(`mysqlbench_step_latency_p95_seconds{namespace="%s",run="%s",schedule="minutely",server_version="10.11.14-MariaDB-0+deb12u2",target="mariadb",threads="1",workload=""}`, ns, run),
		fmt.Sprintf(`mysqlbench_runs_total{namespace="%s",outcome="succeeded",schedule="minutely"}`, ns),
		fmt.Sprintf(`mysqlbench_step_duration_seconds_count{namespace="%s",schedule="minutely"}`, ns),
		fmt.Sprintf(`mysqlbench_schedule_regressed_cells{namespace="%s",schedule="minutely"} 0`, ns),
		fmt.Sprintf(`mysqlbench_schedule_compared_cells{namespace="%s",schedule="minutely"} 4`, ns),
		fmt.Sprintf(`mysqlbench_schedule_cells{namespace="%s",schedule="minutely",verdict="Inconclusive"} 4`, ns),
		fmt.Sprintf(`mysqlbench_schedule_cells{namespace="%s",schedule="minutely",verdict="Regressed"} 0`, ns),
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// Only the newest run of the schedule is exported: 2 targets x 2 thread counts.
	if n := strings.Count(body, fmt.Sprintf(`mysqlbench_step_qps{namespace="%s"`, ns)); n != 4 {
		t.Errorf("%d mysqlbench_step_qps series for the schedule, want 4 (one run's)", n)
	}
	// Deleting the schedule removes its series.
	if err := k8s.Delete(context.Background(), sched); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for strings.Contains(scrape(t, addr), `schedule="minutely"`) {
		if time.Now().After(deadline) {
			t.Fatal("the deleted schedule's series are still exported")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func waitScheduleFor(t *testing.T, ns, name string, timeout time.Duration, what string, cond func(*v1.BenchmarkSchedule) bool) *v1.BenchmarkSchedule {
	t.Helper()
	deadline := time.Now().Add(timeout)
	s := &v1.BenchmarkSchedule{}
	for {
		err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s)
		if err == nil && cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; status: %+v", timeout, what, s.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func scrape(t *testing.T, addr string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, rerr := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if rerr == nil && resp.StatusCode == http.StatusOK {
				return string(b)
			}
			err = fmt.Errorf("status %d, %w", resp.StatusCode, rerr)
		}
		if time.Now().After(deadline) {
			t.Fatalf("scrape %s: %v", addr, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// assertWarning checks that the schedule has a Warning Event of reason whose message contains
// text. The Events of a reconcile are recorded after its status write, through the recorder's
// asynchronous broadcaster: one may reach the API server a moment after the status a test saw, so
// this waits for it (up to 10 s; a busy CI machine once needed more than none).
func assertWarning(t *testing.T, ns, name, reason, text string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		events := &corev1.EventList{}
		if err := k8s.List(context.Background(), events, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == name && e.Reason == reason && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, text) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Errorf("no Warning %s Event on %s containing %q", reason, name, text)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
