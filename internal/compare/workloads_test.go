package compare

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// wmeas is one cell of a test suite run: a meas of one named workload.
type wmeas struct {
	workload string
	meas
}

// suiteScripts are the scripts of the test suites' workloads, by name.
var suiteScripts = map[string]v1.OLTPScript{"points": "oltp_point_select", "ranges": "select_random_ranges", "rw": "oltp_read_write"}

// mkSuite builds a run of spec.workloads named name, measuring cells in the order given (each
// 5 times, see jitter); its spec lists the workloads in first-seen order.
func mkSuite(name string, cells ...wmeas) *v1.BenchmarkRun {
	r := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	idx := map[string]int{}
	for _, c := range cells {
		if !slices.ContainsFunc(r.Spec.Workloads, func(w v1.NamedWorkload) bool { return w.Name == c.workload }) {
			r.Spec.Workloads = append(r.Spec.Workloads, v1.NamedWorkload{Name: c.workload, Script: suiteScripts[c.workload], Tables: 1, TableSize: 1000})
		}
		i, ok := idx[c.target]
		if !ok {
			i = len(r.Status.Targets)
			idx[c.target] = i
			r.Status.Targets = append(r.Status.Targets, v1.TargetStatus{Name: c.target})
		}
		for k := range jitter {
			r.Status.Targets[i].Steps = append(r.Status.Targets[i].Steps, v1.StepResult{
				Workload: c.workload, Threads: c.threads, Repetition: int32(k + 1),
				QPS: v1.QPS{Total: c.qps * jitter[k]}, Latency: v1.Latency{P95Ms: c.p95 / jitter[k]},
			})
		}
	}
	return r
}

// suiteCells are targets x {points, rw} x {1, 8}: point selects ten times rw's rate.
func suiteCells(targets ...string) []wmeas {
	var out []wmeas
	for _, t := range targets {
		for _, w := range []string{"points", "rw"} {
			for _, th := range []int32{1, 8} {
				q := 1000 * float64(th)
				if w == "points" {
					q *= 10
				}
				out = append(out, wmeas{w, meas{t, th, q, 100 / q}})
			}
		}
	}
	return out
}

// The cells of two workloads at the same thread count are never paired: a baseline that
// measured the workloads in the other order compares each workload with itself (unchanged),
// where pairing by target and thread count would see rw's rate against point selects' (-90 %).
func TestCompareWorkloadsNeverPaired(t *testing.T) {
	cells := suiteCells("a", "b")
	var reversed []wmeas
	for _, w := range []string{"rw", "points"} {
		for _, c := range cells {
			if c.workload == w {
				reversed = append(reversed, c)
			}
		}
	}
	res := Compare(mkSuite("run-2", cells...), mkSuite("run-1", reversed...), inRun(v1.RegressionPolicy{}))
	s := res.Summary
	if s.Verdict != v1.VerdictNoRegression || s.ComparedCells != 8 || s.RegressedCells != 0 {
		t.Fatalf("summary %+v", s)
	}
	for _, c := range res.Cells {
		if c.Workload == "" || c.BaselineQPS != c.QPS || c.QPSChangePercent != 0 {
			t.Errorf("cell %s@%d: baseline %v, run %v (%+.1f %%): paired with another workload's cell",
				CellLabel(c.CellChange), c.Threads, c.BaselineQPS, c.QPS, c.QPSChangePercent)
		}
	}
	var families []string
	for _, tc := range s.Targets {
		families = append(families, TargetLabel(tc))
		if tc.Cells != 2 {
			t.Errorf("%s: %d cells, want its workload's 2", TargetLabel(tc), tc.Cells)
		}
	}
	if want := []string{"a/points", "a/rw", "b/points", "b/rw"}; !slices.Equal(families, want) {
		t.Errorf("target verdicts %v, want one per target and workload %v", families, want)
	}
	// The run-level error control counts every workload's families: 4 (target, workload)
	// families x 2 rules, twice the tests of one workload.
	one := Compare(mkRun("run-2", grid([]string{"a", "b"}, []int32{1, 8}, 1000, 1)...),
		mkRun("run-1", grid([]string{"a", "b"}, []int32{1, 8}, 1000, 1)...), inRun(v1.RegressionPolicy{}))
	if s.Tests != 8 || one.Summary.Tests != 4 {
		t.Errorf("tests: suite %d, one workload %d; want 8 and 4", s.Tests, one.Summary.Tests)
	}
}

// A drop of one workload's cells regresses that workload of that target only, and the cells are
// named with their workload.
func TestCompareWorkloadRegressed(t *testing.T) {
	cells := suiteCells("a", "b")
	var worse []wmeas
	for _, c := range cells {
		if c.target == "a" && c.workload == "rw" {
			c.qps *= 0.8
		}
		worse = append(worse, c)
	}
	res := Compare(mkSuite("run-2", worse...), mkSuite("run-1", cells...), inRun(v1.RegressionPolicy{}))
	s := res.Summary
	if s.Verdict != v1.VerdictRegressed || s.RegressedCells != 2 {
		t.Fatalf("summary %+v", s)
	}
	for _, tc := range s.Targets {
		if want := TargetLabel(tc) == "a/rw"; (tc.Verdict == v1.CellRegressed) != want {
			t.Errorf("%s: verdict %s", TargetLabel(tc), tc.Verdict)
		}
	}
	for _, c := range s.Worst {
		if c.Target != "a" || c.Workload != "rw" {
			t.Errorf("worst cell %+v: not a/rw", c)
		}
	}
	if !strings.Contains(s.Message, "a/rw at 8 threads: QPS -20.0%") || !strings.Contains(s.Message, "a/rw: QPS x0.800") {
		t.Errorf("message %q does not name the workload", s.Message)
	}
	md := Markdown(res)
	if !strings.Contains(md, "| a/rw | 8 |") || !strings.Contains(md, "| **a/rw** | geomean (2) |") {
		t.Errorf("comparison.md does not name the workloads:\n%s", md)
	}

	// An acknowledgement of workload rw covers it; one of another workload does not.
	ack := func(w string) v1.RegressionPolicy {
		return inRun(v1.RegressionPolicy{Acknowledged: []v1.Acknowledgement{{Target: "a", Workload: w, Metric: v1.AckQPS, Reason: "known"}}})
	}
	if s := Compare(mkSuite("run-2", worse...), mkSuite("run-1", cells...), ack("rw")).Summary; s.Verdict == v1.VerdictRegressed || s.AcknowledgedCells != 2 {
		t.Errorf("acknowledged rw: %+v", s)
	}
	if s := Compare(mkSuite("run-2", worse...), mkSuite("run-1", cells...), ack("points")).Summary; s.Verdict != v1.VerdictRegressed || s.AcknowledgedCells != 0 {
		t.Errorf("acknowledged points only: %+v", s)
	}
}

// Runs whose workloads do not match are refused rather than compared; a workload only one side
// measured is left out, named.
func TestCompareWorkloadSets(t *testing.T) {
	suite := mkSuite("run-1", suiteCells("a")...)
	single := mkRun("run-0", grid([]string{"a"}, []int32{1, 8}, 1000, 1)...)
	changed := mkSuite("run-2", suiteCells("a")...)
	changed.Spec.Workloads[1].ExtraArgs = []string{"--range-size=1000"}
	other := mkSuite("run-3", wmeas{"ranges", meas{"a", 1, 500, 1}})
	more := mkSuite("run-4", append(suiteCells("a"), wmeas{"ranges", meas{"a", 8, 500, 1}})...)
	for _, tc := range []struct {
		name          string
		run, baseline *v1.BenchmarkRun
		want          string
	}{
		{"suite after one workload", suite, single, "baseline run-0 measured one spec.workload, this run workloads points, rw: their cells do not compare"},
		{"one workload after a suite", single, suite, "baseline run-1 measured workloads points, rw, this run one spec.workload"},
		{"a name redefined", changed, suite, "workload rw of baseline run-1 is not this run's workload rw"},
		{"no workload in common", other, suite, "no workload in common"},
	} {
		s := Compare(tc.run, tc.baseline, inRun(v1.RegressionPolicy{})).Summary
		if s.Verdict != v1.VerdictNoBaseline || !strings.Contains(s.Message, tc.want) || s.ComparedCells != 0 {
			t.Errorf("%s: %s %q, want NoBaseline saying %q", tc.name, s.Verdict, s.Message, tc.want)
		}
	}
	res := Compare(more, suite, inRun(v1.RegressionPolicy{}))
	if res.Summary.Verdict != v1.VerdictNoRegression || res.Summary.ComparedCells != 4 || fmt.Sprint(res.OnlyInRun) != "[a/ranges@8]" {
		t.Errorf("a workload added: %+v, only in run %v", res.Summary, res.OnlyInRun)
	}
}

// A run of one spec.workload compares exactly as before workloads had names: no workload in
// its cells, targets or names.
func TestCompareOneWorkloadUnnamed(t *testing.T) {
	cells := grid([]string{"a"}, []int32{1, 8}, 1000, 1)
	res := Compare(mkRun("run-2", withCell(cells, meas{"a", 8, 800, 1})...), mkRun("run-1", cells...), inRun(v1.RegressionPolicy{}))
	for _, c := range res.Cells {
		if c.Workload != "" {
			t.Errorf("cell %+v has a workload", c)
		}
	}
	if len(res.Targets) != 1 || res.Targets[0].Workload != "" || !strings.Contains(res.Summary.Message, "a at 8 threads: QPS -20.0%") {
		t.Errorf("targets %+v, message %q", res.Targets, res.Summary.Message)
	}
}

// A confirmation of a suite pairs each workload's cells with the same workload's: a drop of rw
// on the run's side is found in rw only.
func TestPairedByRoundPerWorkload(t *testing.T) {
	run := &v1.BenchmarkRun{}
	run.Name = "conf"
	side := func(name string, rwFactor float64) v1.TargetStatus {
		ts := v1.TargetStatus{Name: name, Phase: v1.TargetSucceeded}
		for r, shift := range []float64{0.95, 1.05, 1, 0.97, 1.03} {
			for _, w := range []string{"points", "rw"} {
				q := 1000 * shift
				if w == "points" {
					q *= 10
				} else {
					q *= rwFactor
				}
				ts.Steps = append(ts.Steps, v1.StepResult{Workload: w, Threads: 4, Repetition: int32(r + 1), QPS: v1.QPS{Total: q},
					Latency: v1.Latency{P95Ms: 1000 / q}})
			}
		}
		return ts
	}
	run.Status.Targets = []v1.TargetStatus{side("a-base", 1), side("a", 0.8)}
	res := PairedByRound(run, pairedPair, v1.RegressionPolicy{}, "night-2", "night-1")
	if res.Summary.Verdict != v1.VerdictRegressed || len(res.Cells) != 2 || len(res.Targets) != 2 {
		t.Fatalf("summary %+v, %d cells, %d targets", res.Summary, len(res.Cells), len(res.Targets))
	}
	for _, c := range res.Cells {
		wantChange := map[string]float64{"points": 0, "rw": -20}[c.Workload]
		if c.QPSChangePercent != wantChange || c.Regressed != (c.Workload == "rw") {
			t.Errorf("cell %s: %+.1f %%, regressed %v; want %+.1f %%", CellLabel(c.CellChange), c.QPSChangePercent, c.Regressed, wantChange)
		}
	}
	for _, tc := range res.Targets {
		if (tc.Verdict == v1.CellRegressed) != (tc.Workload == "rw") {
			t.Errorf("target %s: %s", TargetLabel(tc), tc.Verdict)
		}
	}
}

// A schedule's history of a suite: a shift of one workload's cell is found in that workload,
// and the same thread count of the other workload stays quiet.
func TestHistoryPerWorkload(t *testing.T) {
	var runs []*v1.BenchmarkRun
	for i := range 15 {
		level := 1.0
		if i >= 10 {
			level = 0.9
		}
		noise := 1 + 0.005*float64(i%3-1)
		runs = append(runs, mkSuite(fmt.Sprintf("nightly-%02d", i),
			wmeas{"points", meas{"a", 8, 10000 * noise, 1}},
			wmeas{"rw", meas{"a", 8, 1000 * level * noise, 1}}))
	}
	h := History(runs, v1.RegressionPolicy{})
	if h.RegressedCells != 1 || len(h.ChangePoints) != 1 {
		t.Fatalf("history %+v", h)
	}
	if cp := h.ChangePoints[0]; cp.Workload != "rw" || cp.Threads != 8 || cp.Since != "nightly-10" || !cp.Regressed {
		t.Errorf("change point %+v", cp)
	}
	h = History(runs, v1.RegressionPolicy{Acknowledged: []v1.Acknowledgement{{Target: "a", Workload: "rw", Reason: "known"}}})
	if h.RegressedCells != 0 || !h.ChangePoints[0].Acknowledged {
		t.Errorf("acknowledged rw: %+v", h)
	}
}

// The schedule's next repetitions fit the step budget of every workload.
func TestNextRepetitionsCountsWorkloads(t *testing.T) {
	template := v1.BenchmarkRunSpec{Targets: make([]v1.Target, 2), Ladder: v1.Ladder{Threads: []int32{1, 2, 4, 8}},
		Preset: &v1.Preset{Name: v1.PresetSysbenchOLTPMicro}}
	last := &v1.BenchmarkRun{Spec: template}
	last.Spec.Repetitions = ptrTo[int32](3)
	last.Status.Comparison = &v1.Comparison{Verdict: v1.VerdictInconclusive, NeededRepetitions: 10}
	// 2 targets x 10 workloads x 4 thread counts = 80 steps a repetition: 6 fit in 512.
	if got := NextRepetitions(template, v1.RegressionPolicy{MaxRepetitions: ptrTo[int32](10)}, last); got != 6 {
		t.Errorf("NextRepetitions = %d, want 6", got)
	}
}

// An Inconclusive suite names its suspects with their workload, so that a confirmation
// re-measures that workload only.
func TestCompareSuspectsNameTheirWorkload(t *testing.T) {
	base := suiteCells("a", "b")
	var run []wmeas
	for _, c := range base {
		if c.target == "a" && c.workload == "rw" {
			c.qps *= 0.92
		}
		run = append(run, c)
	}
	s := Compare(mkSuite("run-2", run...), mkSuite("run-1", base...), v1.RegressionPolicy{}).Summary
	if s.Verdict != v1.VerdictInconclusive || strings.Join(s.Suspects, ",") != "a/rw" {
		t.Errorf("verdict %s, suspects %q; want Inconclusive, \"a/rw\" (%s)", s.Verdict, s.Suspects, s.Message)
	}
}
