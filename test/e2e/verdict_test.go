//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
	"github.com/mysqlbench/mysqlbench-operator/internal/plugin"
	"github.com/mysqlbench/mysqlbench-operator/test/clustertest"
)

// TestScheduleVerdictOnARealCluster is the verdict's proof on real nights (make prove-verdicts;
// E2E_VERDICT=1, too long for CI):
//
//  1. It measures what the my.cnf change costs (E2E_VERDICT_MYCNF, default performance_schema
//     with every instrument on): one interleaved run of the server with and without it.
//  2. A BenchmarkSchedule of one fixed spec (two targets, interleaved, E2E_VERDICT_REPS
//     repetitions each on its own server instance) fires every minute until it has
//     E2E_VERDICT_RUNS (8) runs: no regression may end confirmed, and the comparisons must
//     have measured the run-to-run spread from the schedule's own history.
//  3. The change goes into one target of the template: the next night must be flagged, a
//     confirmation run must confirm it, and the confirmed regression must show in the
//     schedule's status, the run's condition, the Events, the manager's metrics, `kubectl
//     mysqlbench history` and the results database.
//
// Every figure is logged.
func TestScheduleVerdictOnARealCluster(t *testing.T) {
	if os.Getenv("E2E_VERDICT") != "1" {
		t.Skip("E2E_VERDICT=1 runs it (make prove-verdicts): about 40 minutes")
	}
	ctx := context.Background()
	c := newClient(t)
	ns := e2eNamespace(ctx, t, c)
	nights := atoi(t, env("E2E_VERDICT_RUNS", "8"))
	reps := int32(atoi(t, env("E2E_VERDICT_REPS", "3")))
	mycnf := env("E2E_VERDICT_MYCNF", "[mysqld]\nperformance_schema=ON\nperformance-schema-instrument='%=ON'\n"+
		"performance-schema-consumer-events-statements-history-long=ON\n")
	stable, changed := env("E2E_VERDICT_STABLE_IMAGE", "mariadb:10.11"), env("E2E_VERDICT_IMAGE", "mariadb:11.8")
	step := e2eStep(t, "5s")
	spec := v1.BenchmarkRunSpec{
		Targets:  []v1.Target{{Name: "stable", Image: stable}, {Name: "changed", Image: changed}},
		Workload: v1.Workload{Script: "oltp_point_select", Tables: 1, TableSize: 10000},
		Ladder: v1.Ladder{Threads: []int32{1, 4}, StepDuration: &metav1.Duration{Duration: step},
			Warmup: &metav1.Duration{Duration: step}},
		Repetitions:    ptr.To(reps),
		Order:          v1.OrderInterleaved,
		ServerInstance: v1.ServerInstancePerRepetition,
		SysbenchImage:  os.Getenv("E2E_SYSBENCH_IMAGE"),
		StepRetryLimit: ptr.To[int32](1),
		Cleanup:        v1.CleanupAlways,
	}

	// 1. What the change costs, measured on this cluster: the same server with and without it.
	if env("E2E_VERDICT_MEASURE", "1") == "1" {
		m := spec.DeepCopy()
		m.Targets = []v1.Target{{Name: "without", Image: changed}, {Name: "with", Image: changed, MyCnf: mycnf}}
		run := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "verdict-knob", Namespace: ns}, Spec: *m}
		recreate(t, c, run)
		got := waitSucceeded(ctx, t, c, run, 30*time.Minute)
		res := compare.Compare(asTarget(got, "with", "same"), asTarget(got, "without", "same"), v1.RegressionPolicy{})
		if len(res.Summary.Targets) == 0 {
			t.Fatalf("the knob's run compared nothing: %s", res.Summary.Message)
		}
		tc := res.Summary.Targets[0]
		t.Logf("the my.cnf change costs QPS x%.3f [%.3f, %.3f] (interleaved, %d repetitions on their own instances; %q)",
			tc.QPSRatio, tc.QPSLow, tc.QPSHigh, reps, mycnf)
		if tc.QPSRatio > 0.95 || tc.QPSRatio < 0.75 {
			t.Fatalf("the change costs x%.3f, not about 10 %%: pick another E2E_VERDICT_MYCNF", tc.QPSRatio)
		}
		_ = c.Delete(ctx, got)
		waitGone(t, c, got)
	}

	// 2. Nights of one fixed spec.
	sched := &v1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: "verdict-nightly", Namespace: ns},
		Spec: v1.BenchmarkScheduleSpec{
			Schedule:                   "* * * * *",
			ConcurrencyPolicy:          v1.ConcurrencyForbid,
			SuccessfulRunsHistoryLimit: ptr.To(int32(nights + 2)),
			FailedRunsHistoryLimit:     ptr.To[int32](2),
			Template:                   v1.BenchmarkRunTemplate{Spec: spec},
			// Every flat night may send a suspect to confirmation; the default 2 a day would
			// leave the change itself unconfirmed (RegressionUnconfirmed) on this compressed
			// calendar of a night a minute.
			Regression: v1.RegressionPolicy{Confirm: v1.ConfirmPolicy{MaxPerDay: ptr.To(int32(min(nights+2, 24)))}},
		},
	}
	_ = c.Delete(ctx, sched, client.PropagationPolicy(metav1.DeletePropagationForeground))
	waitScheduleGone(t, c, sched)
	if err := c.Create(ctx, sched); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if !t.Failed() || env("E2E_VERDICT_KEEP", "0") != "1" {
			_ = c.Delete(ctx, sched, client.PropagationPolicy(metav1.DeletePropagationForeground))
		}
	}()
	started := time.Now()
	// A flat night may be sent to confirmation too (an Inconclusive comparison with a suspect),
	// which holds the next night off while it measures.
	waitSchedule(t, c, sched, time.Duration(nights)*10*time.Minute, func(s *v1.BenchmarkSchedule) bool {
		return succeededRuns(ctx, t, c, s, "") >= nights
	})
	// Suspended, or the nights go on: a night longer than the cron's minute makes the next one
	// start as soon as it ends (the missed minute), so the schedule is never idle by itself.
	editSchedule(t, c, sched, func(s *v1.BenchmarkSchedule) { s.Spec.Suspend = ptr.To(true) })
	got := waitSchedule(t, c, sched, 20*time.Minute, func(s *v1.BenchmarkSchedule) bool {
		return len(s.Status.Active) == 0 && (s.Status.Confirmation == nil || s.Status.Confirmation.State.Final())
	})
	flat := got.Status.LastComparison
	t.Logf("%d nights of one spec in %s: verdict %q", nights, time.Since(started).Round(time.Second), got.Status.Verdict)
	for _, tc := range flat.Targets {
		t.Logf("  %s: %s (run-to-run CV %.1f %% from %s)", tc.Target, compare.DescribeTarget(flat.Metric, tc), tc.RunToRunCVPercent, tc.RunToRunSource)
		if tc.RunToRunSource != compare.SourceHistory {
			t.Errorf("target %s: run-to-run spread from %q, want it measured from the schedule's history", tc.Target, tc.RunToRunSource)
		}
	}
	if conf := got.Status.Confirmation; conf != nil {
		t.Logf("  a flat night was flagged and sent to confirmation: %s %s (%s)", conf.Run, conf.State, conf.Message)
		if conf.State == v1.ConfirmationConfirmed {
			t.Errorf("a regression was confirmed among %d nights of one spec: %s", nights, conf.Message)
		}
	}
	if got.Status.Verdict != "" && strings.Contains(got.Status.Verdict, "confirmed") && !strings.Contains(got.Status.Verdict, "unconfirmed") && !strings.Contains(got.Status.Verdict, "not confirmed") {
		t.Errorf("verdict after %d flat nights: %q", nights, got.Status.Verdict)
	}
	lastFlat := got.Status.LastRun

	// 3. The change, in one target: flagged, confirmed, and shown everywhere.
	editSchedule(t, c, sched, func(s *v1.BenchmarkSchedule) {
		s.Spec.Template.Spec.Targets[1].MyCnf = mycnf
		s.Spec.Suspend = nil
	})
	changedAt := time.Now()
	got = waitSchedule(t, c, sched, 40*time.Minute, func(s *v1.BenchmarkSchedule) bool {
		conf := s.Status.Confirmation
		return s.Status.LastRun != lastFlat && conf != nil && conf.Run == s.Status.LastComparison.Run && conf.State.Final()
	})
	editSchedule(t, c, sched, func(s *v1.BenchmarkSchedule) { s.Spec.Suspend = ptr.To(true) })
	cmp, conf := got.Status.LastComparison, got.Status.Confirmation
	t.Logf("after the change (%s): %s; confirmation %s (%d attempt(s), %d repetitions): %s",
		time.Since(changedAt).Round(time.Second), cmp.Verdict, conf.State, conf.Attempt, conf.Repetitions, conf.Message)
	for _, tc := range cmp.Targets {
		t.Logf("  %s: %s", tc.Target, compare.DescribeTarget(cmp.Metric, tc))
	}
	// Flagged: Regressed, or Inconclusive with the changed target among its suspects (a single
	// pair of nights cannot always tell the change from a night's shift: the confirmation does).
	flaggedNight := cmp.Verdict == v1.VerdictRegressed || (cmp.Verdict == v1.VerdictInconclusive && slices.Contains(cmp.Suspects, "changed"))
	if !flaggedNight || conf.State != v1.ConfirmationConfirmed {
		t.Fatalf("the my.cnf change was not flagged and confirmed: comparison %s (suspects %v), confirmation %s: %s",
			cmp.Verdict, cmp.Suspects, conf.State, conf.Message)
	}
	cond := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionRegressed)
	if cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("schedule's Regressed condition: %+v, want True", cond)
	}
	flagged := &v1.BenchmarkRun{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cmp.Run}, flagged); err != nil {
		t.Fatal(err)
	}
	if rc := meta.FindStatusCondition(flagged.Status.Conditions, v1.ConditionRegressed); rc == nil || rc.Status != metav1.ConditionTrue || rc.Reason != v1.ReasonRegressed {
		t.Errorf("run %s's Regressed condition: %+v, want True, %s (confirmed)", flagged.Name, rc, v1.ReasonRegressed)
	} else {
		t.Logf("run %s: Regressed=%s %s: %s", flagged.Name, rc.Status, rc.Reason, rc.Message)
	}

	// Events: the confirmed regression warns on the run.
	waitFor(t, 2*time.Minute, "a Warning Event Regressed on "+flagged.Name, func() (bool, string) {
		evs := &corev1.EventList{}
		if err := c.List(ctx, evs, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		var seen []string
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == flagged.Name && e.Type == corev1.EventTypeWarning && e.Reason == v1.ReasonRegressed {
				return true, e.Message
			}
			if e.InvolvedObject.Name == flagged.Name || e.InvolvedObject.Name == sched.Name {
				seen = append(seen, e.Type+" "+e.Reason)
			}
		}
		return false, strings.Join(seen, ", ")
	})

	// Metrics: the regressed gauges come from the confirmed comparison.
	waitFor(t, 2*time.Minute, "mysqlbench_schedule_regressed_targets >= 1", func() (bool, string) {
		text := scrapeManager(ctx, t, c)
		targets := gauge(text, "mysqlbench_schedule_regressed_targets", sched.Name)
		cells := gauge(text, "mysqlbench_schedule_regressed_cells", sched.Name)
		return targets >= 1, fmt.Sprintf("regressed targets %v, cells %v", targets, cells)
	})

	// The results database holds the verdict and the confirmation run, and kubectl mysqlbench
	// history reads it from there: the night as regressed and confirmed.
	if clustertest.HasResultsDatabase(t, c) {
		stored := clustertest.WaitStored(t, c, flagged, 3*time.Minute)
		waitFor(t, 3*time.Minute, "the database's comparison of "+flagged.Name+" "+string(cmp.Verdict)+"/True/Regressed", func() (bool, string) {
			rows, err := clustertest.ResultsSQL("SELECT c.verdict, c.regressed_status, c.regressed_reason FROM comparisons c WHERE c.run_uid = '" + string(stored.UID) + "'")
			return err == nil && rows == strings.Join([]string{string(cmp.Verdict), "True", v1.ReasonRegressed}, "\t"), rows
		})
		rows := clustertest.MustResultsSQL(t, "SELECT name FROM runs WHERE confirmation_of = '"+flagged.Name+"' AND namespace = '"+ns+"'")
		t.Logf("results database: confirmation runs of %s: %q", flagged.Name, rows)
		if rows == "" {
			t.Errorf("the results database has no confirmation run of %s", flagged.Name)
		}

		// A user outside the cluster: the database through a port-forward, its DSN in the
		// environment (never on a command line).
		t.Setenv(plugin.DSNEnv, clustertest.ResultsDSN(t, c))
		var out, errOut bytes.Buffer
		code := plugin.Execute(ctx, plugin.Options{Streams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}},
			[]string{"history", sched.Name, "-n", ns})
		t.Logf("kubectl mysqlbench history %s:\n%s%s", sched.Name, out.String(), errOut.String())
		if code != 0 || !strings.Contains(out.String(), "confirmed") {
			t.Errorf("history (exit %d) does not show the confirmed regression", code)
		}
	}
}

// asTarget is run with only target named from, renamed to as: two targets of one run compared
// as two runs.
func asTarget(run *v1.BenchmarkRun, from, as string) *v1.BenchmarkRun {
	r := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: run.Name + "/" + from}}
	for _, ts := range run.Status.Targets {
		if ts.Name == from {
			ts.Name = as
			r.Status.Targets = append(r.Status.Targets, ts)
		}
	}
	return r
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("%q: want a positive number", s)
	}
	return n
}

// succeededRuns counts the schedule's scheduled (not confirmation) runs that succeeded.
func succeededRuns(ctx context.Context, t *testing.T, c client.Client, s *v1.BenchmarkSchedule, _ string) int {
	t.Helper()
	runs := &v1.BenchmarkRunList{}
	if err := c.List(ctx, runs, client.InNamespace(s.Namespace), client.MatchingLabels{v1.LabelSchedule: s.Name}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range runs.Items {
		if r.Labels[v1.LabelConfirms] == "" && r.Status.Phase == v1.RunSucceeded {
			n++
		}
	}
	return n
}

// editSchedule changes the schedule's spec by edit, on its newest version: its status changes
// with every night.
func editSchedule(t *testing.T, c client.Client, s *v1.BenchmarkSchedule, edit func(*v1.BenchmarkSchedule)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := &v1.BenchmarkSchedule{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(s), got); err != nil {
			return err
		}
		edit(got)
		return c.Update(context.Background(), got)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitSchedule polls the schedule until done says so, logging each new run's verdict.
func waitSchedule(t *testing.T, c client.Client, s *v1.BenchmarkSchedule, timeout time.Duration, done func(*v1.BenchmarkSchedule) bool) *v1.BenchmarkSchedule {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for {
		got := &v1.BenchmarkSchedule{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(s), got); err != nil {
			t.Fatal(err)
		}
		if cmp := got.Status.LastComparison; cmp != nil && cmp.Run != last {
			last = cmp.Run
			t.Logf("  %s %s: %s", time.Now().Format("15:04:05"), cmp.Run, got.Status.Verdict)
		}
		if done(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("schedule %s: not done after %s: %+v", s.Name, timeout, got.Status)
		}
		time.Sleep(5 * time.Second)
	}
}

func waitFor(t *testing.T, timeout time.Duration, what string, ok func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		done, seen := ok()
		if done {
			t.Logf("%s: %s", what, seen)
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("no %s after %s (seen: %s)", what, timeout, seen)
			return
		}
		time.Sleep(5 * time.Second)
	}
}

// scrapeManager reads the manager's /metrics once, as a Prometheus with the chart's reader role.
func scrapeManager(ctx context.Context, t *testing.T, c client.Client) string {
	t.Helper()
	p := &prometheus{}
	defer p.stop()
	opNS := clustertest.Env("E2E_OPERATOR_NAMESPACE", "mysqlbench-system")
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(opNS), client.MatchingLabels{
		"app.kubernetes.io/name": "mysqlbench-operator", "app.kubernetes.io/component": "manager"}); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, pod := range pods.Items {
		if pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
			continue
		}
		port, secure := metricsPort(pod)
		addr, err := p.portForward(opNS, pod.Name, port)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
		hc := http.DefaultClient
		if secure {
			token, err := p.readerToken(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			req.URL.Scheme = "https"
			req.Header.Set("Authorization", "Bearer "+token)
			hc = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the manager's certificate is self-signed; the token is checked by the API server
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		text.Write(b)
	}
	return text.String()
}

// gauge is the value of metric's series for schedule (0 when absent; the largest when several
// managers export it).
func gauge(text, metric, schedule string) float64 {
	v := 0.0
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, metric+"{") || !strings.Contains(line, `schedule="`+schedule+`"`) {
			continue
		}
		f := strings.Fields(line)
		if x, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil && x > v {
			v = x
		}
	}
	return v
}
