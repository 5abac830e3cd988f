package compare

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// Single measurements, as every run had before repetitions: no test can tell noise from a change,
// so a 17.8 % drop (what noise alone did to one smoke run) is Inconclusive, not Regressed, and the
// comparison says how many repetitions a verdict needs (3: a cell's t test needs a variance on
// each side, and with 2 it has too few degrees of freedom to mean much).
func TestCompareTooFewRepetitionsIsInconclusive(t *testing.T) {
	base := mkRunN("run-1", 1, meas{"mysql80", 1, 1000, 2}, meas{"mysql80", 8, 8000, 3})
	run := mkRunN("run-2", 1, meas{"mysql80", 1, 822, 2}, meas{"mysql80", 8, 8000, 3})
	res := Compare(run, base, inRun(v1.RegressionPolicy{}))
	s := res.Summary
	if s.Verdict != v1.VerdictInconclusive || s.RegressedCells != 0 || s.InconclusiveCells != 2 || s.NeededRepetitions != 3 {
		t.Errorf("%+v", s)
	}
	if c := res.Cells[0]; c.Verdict != v1.CellInconclusive || c.QPSChangePercent != -17.8 || c.NeededRepetitions != 3 {
		t.Errorf("cell %+v", c)
	}
	if tc := s.Targets[0]; tc.QPSHigh != 0 || tc.Verdict != v1.CellInconclusive || !strings.Contains(tc.Note, "single repetition") {
		t.Errorf("target %+v: want no interval from 2 cells of 1 repetition, and why", tc)
	}
	if got := Short(s); got != "Inconclusive 1/1 targets" {
		t.Errorf("Short = %q", got)
	}
	md := Markdown(res)
	for _, want := range []string{"**Verdict: inconclusive**", "about 3 repetitions per run (spec.repetitions, in both runs) would", "inconclusive (needs 3 repetitions)",
		"mysql80: QPS: 2 cell(s) with a single repetition: the noise cannot be estimated"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(s.Message, "about 3 repetitions per run would decide") {
		t.Errorf("Message = %q", s.Message)
	}
}

// With 3 repetitions a U test cannot reach 0.05 (best p 0.1), but the cell's t test on the log
// repetitions and the target's geometric mean can: one cell 17.8 % down with 0.2 % noise drags
// the target down 9.3 %, far outside its interval, and stands out from the other cell.
func TestCompareThreeRepetitionsDecide(t *testing.T) {
	base := mkRunN("run-1", 3, meas{"mysql80", 1, 1000, 2}, meas{"mysql80", 8, 8000, 3})
	run := mkRunN("run-2", 3, meas{"mysql80", 1, 822, 2}, meas{"mysql80", 8, 8000, 3})
	s := Compare(run, base, inRun(v1.RegressionPolicy{})).Summary
	if s.Verdict != v1.VerdictRegressed || s.RegressedCells != 1 || s.Worst[0].Threads != 1 {
		t.Errorf("%+v", s)
	}
	if tc := s.Targets[0]; tc.Verdict != v1.CellRegressed || tc.QPSRatio != 0.9066 || tc.QPSHigh >= 0.95 {
		t.Errorf("target %+v: want QPS x0.907 regressed", tc)
	}
	if got := Short(s); got != "Regressed 1/2" {
		t.Errorf("Short = %q", got)
	}
	if !strings.Contains(s.Message, "targets: mysql80: QPS x0.907 [") {
		t.Errorf("Message = %q", s.Message)
	}
}

func TestNextRepetitions(t *testing.T) {
	spec := func(targets, threads int, reps int32) v1.BenchmarkRunSpec {
		s := v1.BenchmarkRunSpec{Repetitions: &reps}
		for i := range targets {
			s.Targets = append(s.Targets, v1.Target{Name: fmt.Sprint("t", i)})
		}
		for i := range threads {
			s.Ladder.Threads = append(s.Ladder.Threads, int32(i+1))
		}
		return s
	}
	last := func(reps int32, verdict v1.Verdict, needed int32) *v1.BenchmarkRun {
		r := &v1.BenchmarkRun{Spec: v1.BenchmarkRunSpec{Repetitions: &reps}}
		if verdict != "" {
			r.Status.Comparison = &v1.Comparison{Verdict: verdict, NeededRepetitions: needed}
		}
		return r
	}
	max8 := v1.RegressionPolicy{MaxRepetitions: ptrTo[int32](8)}
	for _, tc := range []struct {
		name     string
		template v1.BenchmarkRunSpec
		policy   v1.RegressionPolicy
		last     *v1.BenchmarkRun
		want     int32
	}{
		{"off: the template's", spec(2, 4, 3), v1.RegressionPolicy{}, last(1, v1.VerdictInconclusive, 4), 3},
		{"first run: the template's", spec(2, 4, 1), max8, nil, 1},
		{"inconclusive for too few: what the test needs", spec(2, 4, 1), max8, last(1, v1.VerdictInconclusive, 4), 4},
		{"inconclusive for noise: twice as many", spec(2, 4, 1), max8, last(3, v1.VerdictInconclusive, 0), 6},
		{"bounded by maxRepetitions", spec(2, 4, 1), max8, last(5, v1.VerdictInconclusive, 0), 8},
		{"a decisive comparison keeps the repetitions", spec(2, 4, 1), max8, last(6, v1.VerdictNoRegression, 0), 6},
		{"never below the template", spec(2, 4, 5), max8, last(2, v1.VerdictRegressed, 0), 5},
		{"a lowered maximum applies", spec(2, 4, 1), v1.RegressionPolicy{MaxRepetitions: ptrTo[int32](3)}, last(6, v1.VerdictNoRegression, 0), 3},
		{"within 512 steps: 16 x 10 cells fit 3", spec(16, 10, 1), max8, last(4, v1.VerdictInconclusive, 0), 3},
	} {
		if got := NextRepetitions(tc.template, tc.policy, tc.last); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// A known regression acknowledged in the schedule's spec stops counting, per target, thread
// count and metric, until its end.
func TestCompareAcknowledged(t *testing.T) {
	base := mkRun("run-1", meas{"mysql80", 1, 1000, 1}, meas{"mysql80", 8, 8000, 2}, meas{"mysql84", 8, 9000, 2})
	run := mkRun("run-2",
		meas{"mysql80", 1, 800, 1},  // QPS -20 %
		meas{"mysql80", 8, 7000, 3}, // QPS -12.5 %, p95 +50 %
		meas{"mysql84", 8, 8000, 2}) // QPS -11 %
	finished := metav1.NewTime(metav1.Now().Add(-time.Hour))
	run.Status.CompletionTime = &finished
	later, earlier := metav1.NewTime(finished.Add(time.Minute)), metav1.NewTime(finished.Add(-time.Minute))
	policy := v1.RegressionPolicy{RunToRunCVPercent: f(0), Acknowledged: []v1.Acknowledgement{
		{Target: "mysql80", Metric: v1.AckQPS, Reason: "QPS cost of the new default, TICKET-1", Until: &later},
		{Target: "mysql84", Threads: ptrTo[int32](8), Reason: "expired", Until: &earlier},
	}}
	res := Compare(run, base, policy)
	s := res.Summary
	// mysql80@1 regressed in QPS only: acknowledged. mysql80@8 also in p95: not covered.
	// mysql84@8: the acknowledgement ended before the run finished.
	if s.Verdict != v1.VerdictRegressed || s.RegressedCells != 2 || s.AcknowledgedCells != 1 || s.ComparedCells != 3 {
		t.Fatalf("summary %+v", s)
	}
	c := res.Cells[0]
	if !c.Acknowledged || c.Regressed || c.Verdict != v1.CellRegressed || c.AcknowledgedReason != "QPS cost of the new default, TICKET-1" {
		t.Errorf("mysql80@1: %+v", c)
	}
	if res.Cells[1].Acknowledged || res.Cells[2].Acknowledged || res.Cells[1].P95Verdict != v1.CellRegressed {
		t.Errorf("cells %+v", res.Cells[1:])
	}
	md := Markdown(res)
	if !strings.Contains(md, "| regressed, acknowledged: QPS cost of the new default, TICKET-1 |") || !strings.Contains(s.Message, "1 acknowledged") {
		t.Errorf("Markdown:\n%s\nMessage %q", md, s.Message)
	}

	// Acknowledging everything that regressed leaves no regression.
	policy.Acknowledged = append(policy.Acknowledged, v1.Acknowledgement{Target: "mysql80", Threads: ptrTo[int32](8), Reason: "known"},
		v1.Acknowledgement{Target: "mysql84", Reason: "known"})
	s = Compare(run, base, policy).Summary
	if s.Verdict != v1.VerdictNoRegression || s.RegressedCells != 0 || s.AcknowledgedCells != 3 {
		t.Errorf("all acknowledged: %+v", s)
	}
}

// asTPCC turns a run of mkRun into a go-tpc run: each step's throughput becomes its tpmC.
func asTPCC(r *v1.BenchmarkRun) *v1.BenchmarkRun {
	r.Spec.Workload = v1.Workload{Client: v1.ClientGoTPC, TPCC: &v1.TPCCWorkload{Warehouses: 10}}
	for i := range r.Status.Targets {
		for j := range r.Status.Targets[i].Steps {
			s := &r.Status.Targets[i].Steps[j]
			s.TPCC = &v1.TPCCResult{TpmC: s.QPS.Total * 30}
			s.QPS = v1.QPS{}
		}
	}
	return r
}

// go-tpc runs are compared by tpmC, and say so; a go-tpc run is never compared with a sysbench
// baseline.
func TestCompareTPCC(t *testing.T) {
	cells := grid([]string{"mysql97", "mariadb118"}, []int32{1, 8}, 700, 5)
	same := Compare(asTPCC(mkRun("run-2", cells...)), asTPCC(mkRun("run-1", cells...)), inRun(v1.RegressionPolicy{}))
	if s := same.Summary; s.Verdict != v1.VerdictNoRegression || s.Metric != "tpmC" || s.ComparedCells != 4 ||
		!strings.Contains(s.Message, "minimum effect tpmC -5%") {
		t.Errorf("identical go-tpc runs: %+v", s)
	}
	worse := withCell(cells, meas{"mysql97", 8, 560, 5})
	res := Compare(asTPCC(mkRunN("run-3", 10, worse...)), asTPCC(mkRunN("run-1", 10, cells...)), inRun(v1.RegressionPolicy{}))
	if s := res.Summary; s.Verdict != v1.VerdictRegressed || !strings.Contains(s.Message, "mysql97 at 8 threads: tpmC -20.0%") {
		t.Errorf("a 20 %% tpmC drop: %+v", s)
	}
	mixed := Compare(asTPCC(mkRun("run-4", cells...)), mkRun("run-1", cells...), inRun(v1.RegressionPolicy{}))
	if s := mixed.Summary; s.Verdict != v1.VerdictNoBaseline || !strings.Contains(s.Message, "ran client sysbench, this run go-tpc") ||
		len(mixed.Cells) != 0 {
		t.Errorf("go-tpc against sysbench: %+v", s)
	}
}

// withInstances marks every repetition of r as measured on its own server instance.
func withInstances(r *v1.BenchmarkRun) *v1.BenchmarkRun {
	for i := range r.Status.Targets {
		for j := range r.Status.Targets[i].Steps {
			s := &r.Status.Targets[i].Steps[j]
			s.Instance = s.Repetition
		}
	}
	return r
}

// scaled is cs with every QPS times k and every p95 divided by it.
func scaled(cs []meas, k float64) []meas {
	out := append([]meas(nil), cs...)
	for i := range out {
		out[i].qps *= k
		out[i].p95 /= k
	}
	return out
}

// TestCompareRunToRun checks the between-run allowance: which source it comes from, that a shift
// of the whole run within it is not a regression, and what still is.
func TestCompareRunToRun(t *testing.T) {
	cells := grid([]string{"a", "b"}, []int32{1, 8, 64}, 1000, 5)

	// Default: identical runs cannot rule out a 5 % drop when runs may differ by 6 %.
	s := Compare(mkRun("run-2", cells...), mkRun("run-1", cells...), v1.RegressionPolicy{}).Summary
	if s.Verdict != v1.VerdictInconclusive || s.Targets[0].RunToRunSource != SourceDefault || s.Targets[0].RunToRunCVPercent != 6 ||
		s.Targets[0].MinDetectablePercent <= 5 || !strings.Contains(s.Message, "smallest detectable drop: a ") {
		t.Errorf("identical runs, default allowance: %+v", s)
	}
	if !s.Targets[0].RepetitionsCannotDecide || s.NeededRepetitions != 0 {
		t.Errorf("more repetitions cannot shrink a run-to-run allowance: %+v", s.Targets[0])
	}

	// The whole run 8 % slower: what a night can do, so Inconclusive, not Regressed.
	slow := scaled(cells, 0.92)
	s = Compare(mkRun("run-2", slow...), mkRun("run-1", cells...), v1.RegressionPolicy{}).Summary
	if s.Verdict != v1.VerdictInconclusive || s.RegressedCells != 0 {
		t.Errorf("whole run 8 %% slower under the default allowance: %+v", s)
	}
	// A run 30 % slower is beyond any night.
	s = Compare(mkRun("run-2", scaled(cells, 0.7)...), mkRun("run-1", cells...), v1.RegressionPolicy{}).Summary
	if s.Verdict != v1.VerdictRegressed {
		t.Errorf("whole run 30 %% slower: %+v", s)
	}

	// One target 8 % slower, the other not, each repetition on its own instance: the other
	// target shows the night did not move, so the drop is the target's.
	oneSlow := append(scaled(cells[:3], 0.92), cells[3:]...)
	s = Compare(withInstances(mkRun("run-2", oneSlow...)), withInstances(mkRun("run-1", cells...)), v1.RegressionPolicy{}).Summary
	if s.Verdict != v1.VerdictRegressed || s.Targets[0].Verdict != v1.CellRegressed || !s.Targets[0].InstancesMeasured ||
		s.Targets[0].InstanceCVPercent < 0.2 || s.Targets[0].InstanceCVPercent > 0.4 ||
		s.Targets[0].QPSVsOthers > 0.93 || s.Targets[1].Verdict == v1.CellRegressed {
		t.Errorf("one target 8 %% slower, instances measured: %+v", s)
	}
	// The same with one instance per target: the other target cannot vouch for this one's
	// instance.
	s = Compare(mkRun("run-2", oneSlow...), mkRun("run-1", cells...), v1.RegressionPolicy{}).Summary
	if s.Verdict != v1.VerdictInconclusive || s.Targets[0].InstancesMeasured {
		t.Errorf("one target 8 %% slower, one instance per target: %+v", s)
	}

	// History: six quiet nights (levels 1 % apart) replace the default, and decide both ways.
	var hist []*v1.BenchmarkRun
	for i, k := range []float64{1, 1.01, 0.99, 1.005, 0.995, 1} {
		hist = append(hist, mkRun(fmt.Sprintf("night-%d", i), scaled(cells, k)...))
	}
	res := CompareWith(mkRun("run-2", cells...), mkRun("run-1", cells...), v1.RegressionPolicy{}, Options{History: hist})
	if tc := res.Summary.Targets[0]; res.Summary.Verdict != v1.VerdictNoRegression || tc.RunToRunSource != SourceHistory || tc.RunToRunCVPercent > 1 {
		t.Errorf("identical runs over a quiet history: %+v", res.Summary)
	}
	res = CompareWith(mkRun("run-2", slow...), mkRun("run-1", cells...), v1.RegressionPolicy{}, Options{History: hist})
	if res.Summary.Verdict != v1.VerdictRegressed {
		t.Errorf("whole run 8 %% slower over a quiet history: %+v", res.Summary)
	}
	// Four nights are too few: the default stands.
	res = CompareWith(mkRun("run-2", cells...), mkRun("run-1", cells...), v1.RegressionPolicy{}, Options{History: hist[:MinHistoryRuns-1]})
	if res.Summary.Targets[0].RunToRunSource != SourceDefault {
		t.Errorf("%d nights of history replaced the default: %+v", MinHistoryRuns-1, res.Summary.Targets[0])
	}

	// Two views of one run (a confirmation): nothing of the night differs; with a new instance
	// per repetition nothing per target either, so an 8 % drop is found.
	view := func(name string, cs []meas) *v1.BenchmarkRun {
		r := withInstances(mkRun(name, cs...))
		r.UID = "conf-uid"
		return r
	}
	s = Compare(view("run-2", slow), view("run-1", cells), v1.RegressionPolicy{}).Summary
	if s.Verdict != v1.VerdictRegressed || s.Targets[0].RunToRunSource != SourceSameRun || s.Targets[0].RunToRunCVPercent != 0 {
		t.Errorf("one run's two sides, 8 %% apart: %+v", s)
	}
}

// A cell whose repetitions lie wholly beyond the minimum effect keeps the run from NoRegression,
// even where the hierarchy does not call it regressed.
func TestCompareNoNoRegressionOverABadCell(t *testing.T) {
	cells := grid([]string{"a"}, []int32{1, 2, 4, 8, 16, 32, 64, 128}, 1000, 5)
	bad := withCell(cells, meas{"a", 8, 900, 5})
	// A 10 % drop of one of eight cells, under a 6 % allowance and with the target's level
	// within it: the repetitions alone put it beyond -5 %.
	s := Compare(mkRun("run-2", bad...), mkRun("run-1", cells...), v1.RegressionPolicy{QPSDropPercent: f(5), RunToRunCVPercent: f(1)}).Summary
	if s.Verdict == v1.VerdictNoRegression {
		t.Errorf("NoRegression over a cell 10 %% down: %+v", s)
	}
	if s.Verdict == v1.VerdictInconclusive && !strings.Contains(s.Message, "a at 8 threads") {
		t.Errorf("Message does not name the cell: %q", s.Message)
	}
}

func TestHistoryOf(t *testing.T) {
	owner := func(uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{Kind: "BenchmarkSchedule", Name: "nightly", UID: types.UID(uid), Controller: ptrTo(true)}}
	}
	mk := func(name, uid string, hour int, phase v1.RunPhase, labels map[string]string) *v1.BenchmarkRun {
		r := mkRun(name, meas{"a", 1, 1000, 5})
		r.OwnerReferences = owner(uid)
		r.Labels = labels
		r.Annotations = map[string]string{v1.AnnotationScheduledTime: time.Date(2026, 11, 1, hour, 0, 0, 0, time.UTC).Format(time.RFC3339)}
		r.Status.Phase = phase
		return r
	}
	run := mk("n-5", "s", 5, v1.RunSucceeded, nil)
	runs := []*v1.BenchmarkRun{
		mk("n-1", "s", 1, v1.RunSucceeded, nil),
		mk("n-2", "s", 2, v1.RunFailed, nil),
		mk("n-3", "other", 3, v1.RunSucceeded, nil),
		mk("c-4", "s", 4, v1.RunSucceeded, map[string]string{v1.LabelConfirms: "n-3"}),
		mk("n-4", "s", 4, v1.RunSucceeded, nil),
		run,
		mk("n-6", "s", 6, v1.RunSucceeded, nil),
	}
	var names []string
	for _, r := range HistoryOf(run, runs) {
		names = append(names, r.Name)
	}
	if strings.Join(names, ",") != "n-1,n-4" {
		t.Errorf("HistoryOf = %v, want the schedule's earlier successful runs n-1, n-4", names)
	}
	if got := HistoryOf(mkRun("alone"), runs); got != nil {
		t.Errorf("a run no schedule controls has a history: %v", got)
	}
}

// An Inconclusive comparison names what a confirmation should re-measure: targets whose level
// fell by at least the minimum effect (a night's shift or a regression, one pair of runs cannot
// say which), and cells whose repetitions alone lie wholly beyond it; not a target whose
// interval merely reaches it, nor anything of a decided comparison.
func TestCompareSuspects(t *testing.T) {
	cells := grid([]string{"a", "b"}, []int32{1, 8, 64}, 1000, 5)
	eight := grid([]string{"a"}, []int32{1, 2, 4, 8, 16, 32, 64, 128}, 1000, 5)
	for _, tc := range []struct {
		name    string
		base    []meas
		run     []meas
		policy  v1.RegressionPolicy
		verdict v1.Verdict
		want    string
	}{
		{"identical runs under the default allowance", nil, cells, v1.RegressionPolicy{}, v1.VerdictInconclusive, ""},
		{"identical runs under no minimum effect", nil, cells, v1.RegressionPolicy{QPSDropPercent: f(0)}, v1.VerdictInconclusive, ""},
		{"the whole run 8 % slower", nil, scaled(cells, 0.92), v1.RegressionPolicy{}, v1.VerdictInconclusive, "a,b"},
		{"one target 8 % slower", nil, append(scaled(cells[:3], 0.92), cells[3:]...), v1.RegressionPolicy{}, v1.VerdictInconclusive, "a"},
		{"one target 3 % slower: within the minimum effect", nil, append(scaled(cells[:3], 0.97), cells[3:]...), v1.RegressionPolicy{}, v1.VerdictInconclusive, ""},
		{"p95 12 % up on one target", nil, append(withP95(cells[:3], 5.6), cells[3:]...), v1.RegressionPolicy{}, v1.VerdictInconclusive, "a"},
		{"one cell of eight 10 % down", eight, withCell(eight, meas{"a", 8, 900, 5}), v1.RegressionPolicy{}, v1.VerdictInconclusive, "a@8"},
		{"a 30 % drop is decided", nil, scaled(cells, 0.7), v1.RegressionPolicy{}, v1.VerdictRegressed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := tc.base
			if base == nil {
				base = cells
			}
			s := Compare(mkRun("run-2", tc.run...), mkRun("run-1", base...), tc.policy).Summary
			if s.Verdict != tc.verdict || strings.Join(s.Suspects, ",") != tc.want {
				t.Errorf("verdict %s, suspects %q; want %s, %q (%s)", s.Verdict, s.Suspects, tc.verdict, tc.want, s.Message)
			}
		})
	}
}

// withP95 is cs with every cell's p95 set to p95.
func withP95(cs []meas, p95 float64) []meas {
	out := append([]meas(nil), cs...)
	for i := range out {
		out[i].p95 = p95
	}
	return out
}
