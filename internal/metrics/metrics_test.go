package metrics

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// The collectors are global: every test uses namespaces of its own, and the helpers below look
// only at one namespace's series, gathered from controller-runtime's registry (what /metrics
// serves), so the tests do not see each other's series.

// nsGatherer gathers the families named names from the registry, keeping only namespace's series.
func nsGatherer(namespace string) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, err := ctrlmetrics.Registry.Gather()
		if err != nil {
			return nil, err
		}
		var out []*dto.MetricFamily
		for _, mf := range mfs {
			var ms []*dto.Metric
			for _, m := range mf.GetMetric() {
				if labels(m)[LabelNamespace] == namespace {
					ms = append(ms, m)
				}
			}
			if len(ms) > 0 {
				mf.Metric = ms
				out = append(out, mf)
			}
		}
		return out, nil
	})
}

// series is the namespace's series of the family name.
func series(t *testing.T, namespace, name string) []*dto.Metric {
	t.Helper()
	mfs, err := nsGatherer(namespace).Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()
		}
	}
	return nil
}

func labels(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

// runsOf is the sorted, distinct run labels of the namespace's series of the family name.
func runsOf(t *testing.T, namespace, name string) []string {
	t.Helper()
	seen := map[string]bool{}
	var runs []string
	for _, m := range series(t, namespace, name) {
		if r := labels(m)[LabelRun]; !seen[r] {
			seen[r] = true
			runs = append(runs, r)
		}
	}
	sort.Strings(runs)
	return runs
}

var resultGauges = []string{"mysqlbench_step_qps", "mysqlbench_step_tps", "mysqlbench_step_latency_p95_seconds"}

func mkRun(namespace, name, schedule string) *v1.BenchmarkRun {
	r := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if schedule != "" {
		r.Labels = map[string]string{v1.LabelSchedule: schedule}
	}
	return r
}

func step(threads int32, qps, tps, p95Ms float64) v1.StepResult {
	return v1.StepResult{Threads: threads, TPS: tps, QPS: v1.QPS{Total: qps}, Latency: v1.Latency{P95Ms: p95Ms}}
}

// recordLadder records targets x threads steps of run.
func recordLadder(run *v1.BenchmarkRun, targets []string, threads []int32) {
	for _, tg := range targets {
		for _, th := range threads {
			RecordStep(run, tg, "8.0.36", step(th, 100*float64(th), 5*float64(th), 2))
		}
	}
}

func TestSchedule(t *testing.T) {
	if got := Schedule(mkRun("ns", "nightly-1", "nightly")); got != "nightly" {
		t.Errorf("Schedule = %q, want nightly", got)
	}
	if got := Schedule(mkRun("ns", "adhoc", "")); got != "" {
		t.Errorf("Schedule of a standalone run = %q, want empty", got)
	}
}

func TestRecordStep(t *testing.T) {
	tests := []struct {
		name     string
		run      *v1.BenchmarkRun
		target   string
		version  string
		step     v1.StepResult
		wantP95s float64 // 0: no p95 series
	}{
		{
			name: "scheduled run", run: mkRun("rs-scheduled", "nightly-202401010000", "nightly"),
			target: "mysql80", version: "8.0.36", step: step(16, 12345.6, 617.3, 25.74), wantP95s: 0.02574,
		},
		{
			name: "standalone run", run: mkRun("rs-standalone", "adhoc", ""),
			target: "mariadb", version: "11.4.2-MariaDB", step: step(1, 800, 40, 1.5), wantP95s: 0.0015,
		},
		{
			name: "p95 not measured", run: mkRun("rs-nop95", "adhoc", ""),
			target: "mysql84", version: "8.4.0", step: step(128, 50000, 2500, 0),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := tt.run.Namespace
			RecordStep(tt.run, tt.target, tt.version, tt.step)
			want := map[string]string{
				LabelNamespace: ns, LabelSchedule: tt.run.Labels[v1.LabelSchedule], LabelRun: tt.run.Name,
				LabelTarget: tt.target, LabelServerVersion: tt.version, LabelThreads: fmt.Sprint(tt.step.Threads),
				LabelWorkload: "", // a run of one workload: no workload, to Prometheus
			}
			for _, g := range []struct {
				name  string
				value float64
			}{
				{"mysqlbench_step_qps", tt.step.QPS.Total},
				{"mysqlbench_step_tps", tt.step.TPS},
				{"mysqlbench_step_latency_p95_seconds", tt.wantP95s},
			} {
				ms := series(t, ns, g.name)
				if g.value == 0 {
					if len(ms) != 0 {
						t.Errorf("%s: %d series, want none", g.name, len(ms))
					}
					continue
				}
				if len(ms) != 1 {
					t.Fatalf("%s: %d series, want 1", g.name, len(ms))
				}
				if got := labels(ms[0]); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s labels = %v, want %v", g.name, got, want)
				}
				if got := ms[0].GetGauge().GetValue(); math.Abs(got-g.value) > 1e-12 {
					t.Errorf("%s = %v, want %v", g.name, got, g.value)
				}
			}
			// The same value through the collector itself.
			lv := []string{ns, want[LabelSchedule], tt.run.Name, tt.target, tt.version, want[LabelThreads], ""}
			if got := testutil.ToFloat64(stepQPS.WithLabelValues(lv...)); got != tt.step.QPS.Total {
				t.Errorf("ToFloat64(stepQPS) = %v, want %v", got, tt.step.QPS.Total)
			}
		})
	}
}

// The steps of two workloads at one thread count are two series: neither overwrites the other.
func TestRecordStepPerWorkload(t *testing.T) {
	ns := "rs-workloads"
	run := mkRun(ns, "micro-1", "micro")
	points, rw := step(8, 9000, 450, 1), step(8, 3000, 150, 5)
	points.Workload, rw.Workload = "points", "rw"
	RecordStep(run, "mysql80", "8.0.36", points)
	RecordStep(run, "mysql80", "8.0.36", rw)
	got := map[string]float64{}
	for _, m := range series(t, ns, "mysqlbench_step_qps") {
		got[labels(m)[LabelWorkload]] = m.GetGauge().GetValue()
	}
	if len(got) != 2 || got["points"] != 9000 || got["rw"] != 3000 {
		t.Errorf("qps by workload %v, want points 9000 and rw 3000", got)
	}
}

func TestRecordStepOverwritesSameCell(t *testing.T) {
	ns := "rs-overwrite"
	run := mkRun(ns, "nightly-1", "nightly")
	RecordStep(run, "mysql80", "8.0.36", step(8, 1000, 50, 3))
	RecordStep(run, "mysql80", "8.0.36", step(8, 1100, 55, 4)) // a retried step
	ms := series(t, ns, "mysqlbench_step_qps")
	if len(ms) != 1 || ms[0].GetGauge().GetValue() != 1100 {
		t.Fatalf("qps series = %v, want one with 1100", ms)
	}
	if p := series(t, ns, "mysqlbench_step_latency_p95_seconds"); len(p) != 1 || p[0].GetGauge().GetValue() != 0.004 {
		t.Errorf("p95 series = %v, want one with 0.004", p)
	}
}

func TestRecordStepLeavesOutAStepPastItsDuration(t *testing.T) {
	ns := "rs-over"
	run := mkRun(ns, "nightly-1", "nightly")
	RecordStep(run, "mysql80", "8.0.36", step(8, 1000, 50, 3)) // repetition 1
	over := step(8, 600, 30, 9)
	over.OverDuration = true
	RecordStep(run, "mysql80", "8.0.36", over) // repetition 2 ran past its duration
	over16 := over
	over16.Threads = 16 // a cell whose only repetition ran past its duration: no series
	RecordStep(run, "mysql80", "8.0.36", over16)
	ms := series(t, ns, "mysqlbench_step_qps")
	if len(ms) != 1 || ms[0].GetGauge().GetValue() != 1000 {
		t.Fatalf("qps series = %v, want only 8 threads' 1000", ms)
	}
	if p := series(t, ns, "mysqlbench_step_latency_p95_seconds"); len(p) != 1 || p[0].GetGauge().GetValue() != 0.003 {
		t.Errorf("p95 series = %v, want one with 0.003", p)
	}
}

func TestNewerRunReplacesSchedulesSeries(t *testing.T) {
	ns, other := "replace", "replace-other"
	targets, threads := []string{"mysql80", "mysql84"}, []int32{1, 8, 64}
	before := testutil.CollectAndCount(stepQPS)

	recordLadder(mkRun(ns, "adhoc", ""), targets, threads)               // standalone
	recordLadder(mkRun(ns, "weekly-1", "weekly"), targets, threads)      // another schedule
	recordLadder(mkRun(other, "nightly-1", "nightly"), targets, threads) // same schedule name elsewhere
	recordLadder(mkRun(ns, "nightly-1", "nightly"), targets, threads)
	for _, g := range resultGauges {
		if got, want := runsOf(t, ns, g), []string{"adhoc", "nightly-1", "weekly-1"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s runs = %v, want %v", g, got, want)
		}
	}
	if got := testutil.CollectAndCount(stepQPS) - before; got != 4*6 {
		t.Errorf("stepQPS grew by %d series, want 24", got)
	}

	// The newer run's first step removes every series of the previous run of its schedule.
	nightly2 := mkRun(ns, "nightly-2", "nightly")
	RecordStep(nightly2, "mysql80", "8.0.36", step(1, 120, 6, 2))
	for _, g := range resultGauges {
		if got, want := runsOf(t, ns, g), []string{"adhoc", "nightly-2", "weekly-1"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s runs after nightly-2's first step = %v, want %v", g, got, want)
		}
	}
	nightlySeries := func(namespace string) int {
		n := 0
		for _, m := range series(t, namespace, "mysqlbench_step_qps") {
			if labels(m)[LabelSchedule] == "nightly" {
				n++
			}
		}
		return n
	}
	if n := nightlySeries(ns); n != 1 {
		t.Errorf("%d nightly series after nightly-2's first step, want 1", n)
	}

	// Its later steps add to its own series, they do not replace them.
	recordLadder(nightly2, targets, threads)
	if n := nightlySeries(ns); n != 6 {
		t.Errorf("%d nightly series after nightly-2's ladder, want 6", n)
	}
	// Bounded: a second run of the schedule left the series count where the first run had it.
	if got := testutil.CollectAndCount(stepQPS) - before; got != 4*6 {
		t.Errorf("stepQPS grew by %d series after a second nightly run, want still 24", got)
	}
	// The standalone run, the other schedule and the other namespace's schedule are untouched.
	for _, c := range []struct {
		namespace, schedule string
		want                int
	}{{ns, "", 6}, {ns, "weekly", 6}, {other, "nightly", 6}} {
		n := 0
		for _, m := range series(t, c.namespace, "mysqlbench_step_tps") {
			if labels(m)[LabelSchedule] == c.schedule {
				n++
			}
		}
		if n != c.want {
			t.Errorf("%s/%q: %d tps series, want %d", c.namespace, c.schedule, n, c.want)
		}
	}
}

// With concurrencyPolicy Allow an older run of a schedule may still record steps after a newer
// one started: the gauges keep showing the newest run (run names sort by scheduled time), and the
// older run's step durations still count.
func TestOlderOverlappingRunDoesNotReplaceTheNewest(t *testing.T) {
	ns := "overlap"
	older := mkRun(ns, "hourly-202611220100", "hourly")
	newer := mkRun(ns, "hourly-202611220200", "hourly")
	start := metav1.NewTime(time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC))
	finish := metav1.NewTime(start.Add(30 * time.Second))
	RecordStep(older, "mysql80", "8.0.36", step(1, 100, 5, 2))
	RecordStep(newer, "mysql80", "8.0.36", step(1, 110, 5, 2))
	late := step(2, 200, 10, 2)
	late.StartTime, late.FinishTime = &start, &finish
	RecordStep(older, "mysql80", "8.0.36", late)
	for _, g := range resultGauges {
		if got := runsOf(t, ns, g); fmt.Sprint(got) != "[hourly-202611220200]" {
			t.Errorf("%s runs = %v, want only the newest run", g, got)
		}
	}
	var count uint64
	for _, m := range series(t, ns, "mysqlbench_step_duration_seconds") {
		count += m.GetHistogram().GetSampleCount()
	}
	if count != 1 {
		t.Errorf("step durations observed %d, want the older run's step counted once", count)
	}
}

func TestStandaloneRunsKeepTheirSeries(t *testing.T) {
	ns := "standalone"
	for i := 1; i <= 3; i++ {
		RecordStep(mkRun(ns, fmt.Sprintf("adhoc-%d", i), ""), "mysql80", "8.0.36", step(8, 1000, 50, 2))
	}
	for _, g := range resultGauges {
		if got, want := runsOf(t, ns, g), []string{"adhoc-1", "adhoc-2", "adhoc-3"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s runs = %v, want %v", g, got, want)
		}
	}
}

func TestForgetRun(t *testing.T) {
	tests := []struct {
		name   string
		forget string // run name forgotten in namespace "forget-run-<case>"
		want   []string
	}{
		{name: "standalone", forget: "adhoc-1", want: []string{"adhoc-2", "nightly-1"}},
		{name: "scheduled", forget: "nightly-1", want: []string{"adhoc-1", "adhoc-2"}},
		{name: "unknown", forget: "nope", want: []string{"adhoc-1", "adhoc-2", "nightly-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns, other := "forget-run-"+tt.name, "forget-run-other-"+tt.name
			threads := []int32{1, 8}
			recordLadder(mkRun(ns, "adhoc-1", ""), []string{"mysql80"}, threads)
			recordLadder(mkRun(ns, "adhoc-2", ""), []string{"mysql80"}, threads)
			recordLadder(mkRun(ns, "nightly-1", "nightly"), []string{"mysql80", "mysql84"}, threads)
			recordLadder(mkRun(other, tt.forget, ""), []string{"mysql80"}, threads)

			ForgetRun(ns, tt.forget)
			for _, g := range resultGauges {
				if got := runsOf(t, ns, g); fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("%s runs = %v, want %v", g, got, tt.want)
				}
				// The run of the same name in another namespace stays.
				if got := runsOf(t, other, g); fmt.Sprint(got) != fmt.Sprint([]string{tt.forget}) {
					t.Errorf("%s runs in %s = %v, want [%s]", g, other, got, tt.forget)
				}
			}
		})
	}
}

func TestRecordOutcome(t *testing.T) {
	ns := "outcome"
	nightly, adhoc := mkRun(ns, "nightly-1", "nightly"), mkRun(ns, "adhoc", "")
	for _, o := range []struct {
		run   *v1.BenchmarkRun
		phase v1.RunPhase
	}{
		{nightly, v1.RunSucceeded}, {nightly, v1.RunFailed}, {nightly, v1.RunSucceeded},
		{adhoc, v1.RunFailed},
	} {
		RecordOutcome(o.run, o.phase)
	}

	tests := []struct {
		schedule, outcome string
		want              float64
	}{
		{"nightly", "succeeded", 2},
		{"nightly", "failed", 1},
		{"", "failed", 1},
	}
	for _, tt := range tests {
		if got := testutil.ToFloat64(runsTotal.WithLabelValues(ns, tt.schedule, tt.outcome)); got != tt.want {
			t.Errorf("runs_total{schedule=%q,outcome=%q} = %v, want %v", tt.schedule, tt.outcome, got, tt.want)
		}
	}

	// The whole exposition of the namespace: both outcomes of each schedule once a run of it
	// ended (the standalone runs' succeeded at 0), labels namespace, schedule and outcome only.
	want := `
# HELP mysqlbench_runs_total BenchmarkRuns finished, by outcome (succeeded, failed).
# TYPE mysqlbench_runs_total counter
mysqlbench_runs_total{namespace="outcome",outcome="failed",schedule=""} 1
mysqlbench_runs_total{namespace="outcome",outcome="failed",schedule="nightly"} 1
mysqlbench_runs_total{namespace="outcome",outcome="succeeded",schedule=""} 0
mysqlbench_runs_total{namespace="outcome",outcome="succeeded",schedule="nightly"} 2
`
	if err := testutil.GatherAndCompare(nsGatherer(ns), strings.NewReader(want), "mysqlbench_runs_total"); err != nil {
		t.Error(err)
	}
}

// A run's outcome counters exist at 0 from its start, so that increase() over a window that
// holds its end counts it (a series that first appears at 1 is not counted).
func TestRecordRunStarted(t *testing.T) {
	ns := "started"
	RecordRunStarted(mkRun(ns, "weekly-1", "weekly"))
	want := `
# HELP mysqlbench_runs_total BenchmarkRuns finished, by outcome (succeeded, failed).
# TYPE mysqlbench_runs_total counter
mysqlbench_runs_total{namespace="started",outcome="failed",schedule="weekly"} 0
mysqlbench_runs_total{namespace="started",outcome="succeeded",schedule="weekly"} 0
`
	if err := testutil.GatherAndCompare(nsGatherer(ns), strings.NewReader(want), "mysqlbench_runs_total"); err != nil {
		t.Error(err)
	}
	RecordOutcome(mkRun(ns, "weekly-1", "weekly"), v1.RunSucceeded)
	if got := testutil.ToFloat64(runsTotal.WithLabelValues(ns, "weekly", "succeeded")); got != 1 {
		t.Errorf("succeeded = %v after one run, want 1", got)
	}
}

func TestStepDuration(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 2, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { tm := metav1.NewTime(t0.Add(d)); return &tm }
	timed := func(threads int32, start, finish *metav1.Time) v1.StepResult {
		s := step(threads, 1000, 50, 2)
		s.StartTime, s.FinishTime = start, finish
		return s
	}
	tests := []struct {
		name      string
		steps     []v1.StepResult
		wantCount uint64
		wantSum   float64
		// wantBuckets: upper bound -> cumulative count.
		wantBuckets map[float64]uint64
	}{
		{
			name: "two steps",
			steps: []v1.StepResult{
				timed(1, at(0), at(60*time.Second)),
				timed(8, at(time.Minute), at(6*time.Minute)),
			},
			wantCount: 2, wantSum: 360,
			wantBuckets: map[float64]uint64{5: 0, 40: 0, 80: 1, 160: 1, 320: 2, 20480: 2},
		},
		{
			name: "untimed steps are not observed",
			steps: []v1.StepResult{
				timed(1, nil, nil),
				timed(2, at(0), nil),
				timed(4, nil, at(time.Minute)),
				timed(8, at(0), at(7*time.Second)),
			},
			wantCount: 1, wantSum: 7,
			wantBuckets: map[float64]uint64{5: 0, 10: 1},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := fmt.Sprintf("duration-%d", i)
			run := mkRun(ns, "nightly-1", "nightly")
			for _, s := range tt.steps {
				RecordStep(run, "mysql80", "8.0.36", s)
			}
			ms := series(t, ns, "mysqlbench_step_duration_seconds")
			if len(ms) != 1 {
				t.Fatalf("%d duration series, want 1", len(ms))
			}
			if got, want := labels(ms[0]), map[string]string{LabelNamespace: ns, LabelSchedule: "nightly"}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("labels = %v, want %v", got, want)
			}
			h := ms[0].GetHistogram()
			if h.GetSampleCount() != tt.wantCount || math.Abs(h.GetSampleSum()-tt.wantSum) > 1e-9 {
				t.Errorf("count, sum = %d, %v, want %d, %v", h.GetSampleCount(), h.GetSampleSum(), tt.wantCount, tt.wantSum)
			}
			got := map[float64]uint64{}
			for _, b := range h.GetBucket() {
				got[b.GetUpperBound()] = b.GetCumulativeCount()
			}
			for le, want := range tt.wantBuckets {
				if c, ok := got[le]; !ok || c != want {
					t.Errorf("bucket le=%v: %d (present %v), want %d", le, c, ok, want)
				}
			}
		})
	}
}
