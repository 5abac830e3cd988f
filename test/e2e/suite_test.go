//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// TestSuiteOnARealCluster runs spec.preset sysbench-oltp-micro (ten workloads) over the targets
// of E2E_SUITE_IMAGES (MySQL 9.7, MariaDB 10.11 and 11.8) at E2E_SUITE_THREADS (1,2) with steps
// of E2E_SUITE_STEP (else E2E_STEP, else 5s): every target's server is provisioned once and measures every workload's
// ladder, reads before writes; the data is prepared again exactly where the spec says (a prepare
// Job of its own, seen while the run ran), and the results ConfigMap holds the suite whole
// (results.json's workloads in measuring order, report.md's relative table).
//
// With E2E_SUITE_RATIO=1 it then runs the same ten workloads as ten one-workload runs over the
// same targets, one after another, and reports the wall-time ratio (the suite against the ten
// runs) and each side's fixed cost (a target's start to its first measured step: provisioning,
// the prepare and the warm-up), which the suite pays once per target and the ten runs ten times.
func TestSuiteOnARealCluster(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	ns := e2eNamespace(ctx, t, c)
	images := strings.Split(env("E2E_SUITE_IMAGES", "mysql:9.7,mariadb:10.11,mariadb:11.8"), ",")
	step := e2eStep(t, "5s")
	if s := os.Getenv("E2E_SUITE_STEP"); s != "" {
		var err error
		if step, err = time.ParseDuration(s); err != nil || step < time.Second {
			t.Fatalf("E2E_SUITE_STEP=%q: want a duration of at least 1s", s)
		}
	}
	threads := e2eThreads(t, "E2E_SUITE_THREADS", "1,2")
	timeout, err := time.ParseDuration(env("E2E_TIMEOUT", "40m"))
	if err != nil {
		t.Fatal(err)
	}

	spec := v1.BenchmarkRunSpec{
		Preset: &v1.Preset{Name: v1.PresetSysbenchOLTPMicro, Tables: 1, TableSize: 10000},
		Ladder: v1.Ladder{Threads: threads, StepDuration: &metav1.Duration{Duration: step},
			Warmup: &metav1.Duration{Duration: 3 * time.Second}},
		SysbenchImage:  os.Getenv("E2E_SYSBENCH_IMAGE"),
		StepRetryLimit: ptr.To[int32](1),
		Cleanup:        v1.CleanupAlways,
	}
	for _, img := range images {
		spec.Targets = append(spec.Targets, v1.Target{Name: targetName(img), Image: img})
	}
	spec.BaseTarget = spec.Targets[len(spec.Targets)-1].Name
	suite := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "suite", Namespace: ns}, Spec: spec}
	workloads := spec.OrderedWorkloads()
	// Where the spec prepares the data again (steps from 1, as the prepare Jobs' step labels
	// name them).
	var wantPrepares []string
	for i := range spec.StepCount() {
		if ok, _ := spec.FreshDataBefore(i); ok {
			wantPrepares = append(wantPrepares, fmt.Sprintf("prepare-%d", i+1))
		}
	}
	if len(wantPrepares) == 0 {
		t.Fatal("the preset prepares no data again: its write workloads should make the later ones need fresh data")
	}

	got, wall, jobs := runAndWatch(ctx, t, c, suite, timeout)
	t.Logf("suite of %d workloads x %d targets x %v threads: %s wall", len(workloads), len(spec.Targets), threads, wall.Round(time.Second))
	for _, ts := range got.Status.Targets {
		if ts.Phase != v1.TargetSucceeded {
			t.Errorf("target %s: %s %q, want Succeeded", ts.Name, ts.Phase, ts.Message)
			continue
		}
		// One server for the whole suite: probed once, never replaced or restarted.
		if ts.Instances != 1 || ts.ServerRestarts != 0 {
			t.Errorf("target %s: %d server instances, %d restarts: want the server provisioned once for every workload", ts.Name, ts.Instances, ts.ServerRestarts)
		}
		if len(ts.Steps) != spec.StepCount() {
			t.Fatalf("target %s: %d steps, want %d (%d workloads x %d thread counts)", ts.Name, len(ts.Steps), spec.StepCount(), len(workloads), len(threads))
		}
		for i, s := range ts.Steps {
			if want := spec.WorkloadAt(i).Name; s.Workload != want {
				t.Errorf("target %s step %d: workload %q, want %q (reads before writes, in the preset's order)", ts.Name, i+1, s.Workload, want)
			}
			if s.QPS.Total <= 0 || s.Latency.AvgMs <= 0 {
				t.Errorf("target %s, %s at %d threads: %+v", ts.Name, s.Workload, s.Threads, s)
			}
			if s.Instance != ts.Steps[0].Instance {
				t.Errorf("target %s step %d measured server instance %d, step 1 %d: want one instance", ts.Name, i+1, s.Instance, ts.Steps[0].Instance)
			}
		}
		if want := wantPrepares[len(wantPrepares)-1]; fmt.Sprintf("prepare-%d", ts.PreparedFor) != want {
			t.Errorf("target %s: preparedFor %d, want the last fresh-data step (%s)", ts.Name, ts.PreparedFor, want)
		}
		var prepares []string
		for _, l := range jobs[ts.Name] {
			if strings.HasPrefix(l, "prepare-") {
				prepares = append(prepares, l)
			}
		}
		slices.SortFunc(prepares, func(a, b string) int { return stepNumber(a) - stepNumber(b) })
		if !slices.Equal(prepares, wantPrepares) {
			t.Errorf("target %s: prepared again before %v, want %v (where a workload follows one that wrote)", ts.Name, prepares, wantPrepares)
		}
		t.Logf("target %s (%s): fixed cost %s (start to first step), data prepared again before steps %v",
			ts.Name, ts.ServerVersion, fixedCost(ts).Round(time.Second), prepares)
	}

	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: got.Status.ResultsConfigMap}, cm); err != nil {
		t.Fatal(err)
	}
	doc, err := results.Decode([]byte(cm.Data["results.json"]))
	if err != nil {
		t.Fatalf("results.json: %v", err)
	}
	var names []string
	for _, w := range doc.Workloads {
		names = append(names, w.Name)
	}
	wantNames := []string{"point-select", "random-points", "random-ranges", "read-only", "read-write",
		"write-only", "update-index", "update-non-index", "insert", "delete"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("results.json workloads %v, want the preset's %v", names, wantNames)
	}
	report := cm.Data["report.md"]
	for _, w := range wantNames {
		// The relative table needs a second target; one target's report lists the workloads.
		if len(spec.Targets) > 1 && !strings.Contains(report, "| "+w+" |") {
			t.Errorf("report.md has no row of workload %s in its relative table:\n%s", w, report)
		}
		if !strings.Contains(report, "\n- "+w+" (") {
			t.Errorf("report.md does not list workload %s among the suite's:\n%s", w, report)
		}
	}
	t.Logf("report.md:\n%s", report)

	if os.Getenv("E2E_SUITE_RATIO") == "1" {
		suiteCost := map[string]time.Duration{}
		for _, ts := range got.Status.Targets {
			suiteCost[ts.Name] = fixedCost(ts)
		}
		var sum time.Duration
		oneCost := map[string]time.Duration{}
		for i, w := range workloads {
			one := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("one-%02d", i+1), Namespace: ns}, Spec: spec}
			one.Spec.Preset = nil
			one.Spec.Workload = w.Workload
			r, d, _ := runAndWatch(ctx, t, c, one, timeout)
			for _, ts := range r.Status.Targets {
				if ts.Phase != v1.TargetSucceeded {
					t.Fatalf("one-workload run %s (%s), target %s: %s %q", one.Name, w.Name, ts.Name, ts.Phase, ts.Message)
				}
				oneCost[ts.Name] += fixedCost(ts)
			}
			t.Logf("one-workload run %s (%s): %s wall", one.Name, w.Name, d.Round(time.Second))
			sum += d
			deleteRun(t, c, r)
		}
		for _, tgt := range spec.Targets {
			t.Logf("target %s: fixed cost %s in the suite, %s over the ten one-workload runs",
				tgt.Name, suiteCost[tgt.Name].Round(time.Second), oneCost[tgt.Name].Round(time.Second))
		}
		t.Logf("wall time: the suite %s, ten one-workload runs %s: ratio %.2f", wall.Round(time.Second), sum.Round(time.Second), wall.Seconds()/sum.Seconds())
	}
	deleteRun(t, c, got)
}

// runAndWatch creates the run (after deleting one of its name) and polls it every second until
// it finished, failing the test unless it Succeeded within timeout. It returns the run, the wall
// time from its creation until it was seen finished, and the step labels of the Jobs seen per
// target while it ran (a prepare Job lives for seconds; a second's poll sees it).
func runAndWatch(ctx context.Context, t *testing.T, c client.Client, run *v1.BenchmarkRun, timeout time.Duration) (*v1.BenchmarkRun, time.Duration, map[string][]string) {
	t.Helper()
	_ = c.Delete(ctx, run)
	waitGone(t, c, run)
	t0 := time.Now()
	if err := c.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	seen := map[string]map[string]bool{}
	got := &v1.BenchmarkRun{}
	for deadline := t0.Add(timeout); ; time.Sleep(time.Second) {
		var jobs batchv1.JobList
		if err := c.List(ctx, &jobs, client.InNamespace(run.Namespace), client.MatchingLabels{specs.LabelRun: specs.LabelValue(run.Name)}); err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs.Items {
			tgt := j.Labels[specs.LabelTarget]
			if seen[tgt] == nil {
				seen[tgt] = map[string]bool{}
			}
			seen[tgt][j.Labels[specs.LabelStep]] = true
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			t.Fatal(err)
		}
		if got.Status.Phase.Finished() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s not finished after %s: %+v", run.Name, timeout, got.Status)
		}
	}
	wall := time.Since(t0)
	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("run %s: %s, want Succeeded: %+v", run.Name, got.Status.Phase, got.Status.Targets)
	}
	labels := map[string][]string{}
	for tgt, steps := range seen {
		for s := range steps {
			labels[tgt] = append(labels[tgt], s)
		}
	}
	return got, wall, labels
}

// fixedCost is what a target spends before its first measured step: provisioning its server,
// the prepare and the warm-up.
func fixedCost(ts v1.TargetStatus) time.Duration {
	if ts.StartTime == nil || len(ts.Steps) == 0 || ts.Steps[0].StartTime == nil {
		return 0
	}
	return ts.Steps[0].StartTime.Sub(ts.StartTime.Time)
}

// stepNumber is N of a "prepare-N" step label.
func stepNumber(label string) int {
	n, _ := strconv.Atoi(label[strings.LastIndex(label, "-")+1:])
	return n
}

// BenchmarkSuiteFidelity is BenchmarkFidelity for a run of several workloads: one BenchmarkRun
// of spec.workloads (oltp_point_select and oltp_read_only, one step each, on data prepared once
// by hand) against the same two sysbench commands run by hand on the client node, against the
// same server, interleaved A B B A ... It reports each workload's ratio operator QPS / hand QPS
// with its 95 % interval, adding rounds until both intervals are within ±E2E_FIDELITY_PRECISION
// or E2E_FIDELITY_MAX_ROUNDS ran.
//
//	make bench-fidelity-suite   # the settings of make bench-fidelity; E2E_FIDELITY_THREADS (4)
func BenchmarkSuiteFidelity(b *testing.B) {
	fs := fidelitySetup(b, "suite-fidelity", env("E2E_FIDELITY_IMAGE", "mariadb:10.11"), "4")
	c, ns := fs.c, fs.ns
	sysbenchImage := env("E2E_SYSBENCH_IMAGE", "ghcr.io/mysqlbench/sysbench:1.0.20")
	const tables, tableSize = 4, 100000
	workloads := []v1.NamedWorkload{
		{Name: "point-select", Script: "oltp_point_select", Tables: tables, TableSize: tableSize, SkipPrepare: true},
		{Name: "read-only", Script: "oltp_read_only", Tables: tables, TableSize: tableSize, SkipPrepare: true},
	}
	sysbenchArgs := func(script v1.OLTPScript, command string, threads, seconds int) []string {
		return handSysbench(script, tables, tableSize, command, threads, seconds)
	}
	// Both scripts read the same sbtest tables: prepared once, then a discarded warm-up of each.
	handRun(b, c, fs.cs, ns, "suite-fidelity-prepare", sysbenchImage, fs.secret.Name, sysbenchArgs("oltp_point_select", "prepare", 0, 0))
	for _, w := range workloads {
		handRun(b, c, fs.cs, ns, "suite-fidelity-warmup-"+w.Name, sysbenchImage, fs.secret.Name,
			sysbenchArgs(w.Script, "run", fs.threads, int(fs.step.Seconds())))
	}

	operator := func(round int) []float64 {
		run := &v1.BenchmarkRun{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("suite-fidelity-%d", round), Namespace: ns},
			Spec: v1.BenchmarkRunSpec{
				Targets: []v1.Target{{Name: "server", Engine: v1.EngineExternal,
					SecretRef: &v1.LocalObjectReference{Name: fs.secret.Name}}},
				Workloads:      workloads,
				Ladder:         v1.Ladder{Threads: []int32{int32(fs.threads)}, StepDuration: &metav1.Duration{Duration: fs.step}},
				SysbenchImage:  sysbenchImage,
				StepRetryLimit: ptr.To[int32](0),
			},
		}
		create(b, c, run)
		for deadline := time.Now().Add(10 * time.Minute); ; time.Sleep(time.Second) {
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(run), run); err != nil {
				b.Fatal(err)
			}
			if run.Status.Phase == v1.RunSucceeded {
				break
			}
			if run.Status.Phase == v1.RunFailed || time.Now().After(deadline) {
				b.Fatalf("run %s: %s: %+v", run.Name, run.Status.Phase, run.Status)
			}
		}
		qps := make([]float64, len(workloads))
		for _, s := range run.Status.Targets[0].Steps {
			for i, w := range workloads {
				if s.Workload == w.Name {
					qps[i] = s.QPS.Total
				}
			}
		}
		if err := c.Delete(context.Background(), run); err != nil {
			b.Fatal(err)
		}
		return qps
	}
	hand := func(round int) []float64 {
		qps := make([]float64, len(workloads))
		for i, w := range workloads {
			out := handRun(b, c, fs.cs, ns, fmt.Sprintf("suite-fidelity-hand-%d-%s", round, w.Name), sysbenchImage, fs.secret.Name,
				sysbenchArgs(w.Script, "run", fs.threads, int(fs.step.Seconds())))
			m := plainQPS.FindStringSubmatch(out)
			if m == nil {
				b.Fatalf("hand run %d of %s printed no queries line:\n%s", round, w.Name, out)
			}
			qps[i], _ = strconv.ParseFloat(m[1], 64)
		}
		return qps
	}

	per := make([]fidelity, len(workloads))
	for i := range per {
		per[i].precision = fs.precision
	}
	within := func() bool {
		for _, f := range per {
			if f.high-f.ratio > f.precision*f.ratio || f.ratio-f.low > f.precision*f.ratio {
				return false
			}
		}
		return true
	}
	for round := 0; round < fs.maxRounds; round++ {
		var op, h []float64
		if round%2 == 0 {
			op, h = operator(round), hand(round)
		} else {
			h = hand(round)
			op = operator(round)
		}
		for i, w := range workloads {
			if op[i] <= 0 || h[i] <= 0 {
				b.Fatalf("round %d, %s: operator %.0f QPS, by hand %.0f QPS: want both measured", round+1, w.Name, op[i], h[i])
			}
			f := &per[i]
			f.operator, f.hand, f.ratios = append(f.operator, op[i]), append(f.hand, h[i]), append(f.ratios, op[i]/h[i])
			f.ratio, f.low, f.high = ratioInterval(f.ratios)
			b.Logf("round %d, %s: operator %.0f QPS, by hand %.0f QPS, ratio %.3f; so far %.4f [%.4f, %.4f]",
				round+1, w.Name, op[i], h[i], op[i]/h[i], f.ratio, f.low, f.high)
		}
		if round+1 >= fs.rounds && within() {
			break
		}
	}
	for i, w := range workloads {
		per[i].report(b, fmt.Sprintf("%s, %d threads, %s steps, one run of %d workloads", w.Script, fs.threads, fs.step, len(workloads)),
			"QPS", "qps-"+w.Name, "-"+w.Name)
	}
}
