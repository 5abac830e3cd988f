package compare

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// meas is one measured step of a test run: target at threads, QPS and p95 in ms (0: not measured).
type meas struct {
	target  string
	threads int32
	qps     float64
	p95     float64
}

// jitter are the repetitions' factors around a cell's value: their median is exactly 1 and they
// spread by ±0.4 % (a quiet machine), so two runs of the same values overlap completely and runs
// 1 % apart do not overlap at all.
var jitter = []float64{1, 1.002, 0.998, 1.004, 0.996}

// jitter10 is jitter for 10 repetitions (median exactly 1, ±0.4 %): enough for a single cell's
// U test (best p 1e-5) to survive the adjustment over a whole run's tests.
var jitter10 = []float64{1, 1.002, 0.998, 1.004, 0.996, 1.001, 0.999, 1.003, 0.997, 1}

// mkRun builds a run named name whose status holds cells, grouped by target in first-seen order,
// each measured 5 times (see jitter).
func mkRun(name string, cells ...meas) *v1.BenchmarkRun { return mkRunN(name, len(jitter), cells...) }

// mkRunN is mkRun with n repetitions (n <= len(jitter10)).
func mkRunN(name string, n int, cells ...meas) *v1.BenchmarkRun {
	jitter := jitter
	if n > len(jitter) {
		jitter = jitter10
	}
	r := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	idx := map[string]int{}
	for _, c := range cells {
		i, ok := idx[c.target]
		if !ok {
			i = len(r.Status.Targets)
			idx[c.target] = i
			r.Status.Targets = append(r.Status.Targets, v1.TargetStatus{Name: c.target})
		}
		for k := range n {
			r.Status.Targets[i].Steps = append(r.Status.Targets[i].Steps, v1.StepResult{
				Threads:    c.threads,
				Repetition: int32(k + 1),
				QPS:        v1.QPS{Total: c.qps * jitter[k]},
				Latency:    v1.Latency{P95Ms: c.p95 / jitter[k]},
			})
		}
	}
	return r
}

// grid is targets x threads cells, all with the same QPS and p95.
func grid(targets []string, threads []int32, qps, p95 float64) []meas {
	var cs []meas
	for _, t := range targets {
		for _, th := range threads {
			cs = append(cs, meas{t, th, qps, p95})
		}
	}
	return cs
}

// withCell returns cs with the cell at (target, threads) replaced by c.
func withCell(cs []meas, c meas) []meas {
	out := append([]meas(nil), cs...)
	for i := range out {
		if out[i].target == c.target && out[i].threads == c.threads {
			out[i] = c
			return out
		}
	}
	panic(fmt.Sprintf("no cell %s@%d", c.target, c.threads))
}

func f(x float64) *float64 { return &x }

// inRun is the policy p for runs that differ by their repetitions' noise only (no between-run
// allowance): these tests check the tests and thresholds, TestCompareRunToRun the allowance.
func inRun(p v1.RegressionPolicy) v1.RegressionPolicy {
	if p.RunToRunCVPercent == nil {
		p.RunToRunCVPercent = f(0)
	}
	return p
}

func TestCompareNoBaseline(t *testing.T) {
	run := mkRun("run-2", meas{"mysql80", 8, 1000, 5})
	res := Compare(run, nil, inRun(v1.RegressionPolicy{}))
	s := res.Summary
	if s.Verdict != v1.VerdictNoBaseline {
		t.Errorf("Verdict = %q, want %q", s.Verdict, v1.VerdictNoBaseline)
	}
	if s.Run != "run-2" || s.Baseline != "" {
		t.Errorf("Run, Baseline = %q, %q, want run-2, empty", s.Run, s.Baseline)
	}
	if s.ComparedCells != 0 || s.RegressedCells != 0 || len(s.Worst) != 0 || len(res.Cells) != 0 {
		t.Errorf("compared %d, regressed %d, worst %d, cells %d; want all 0", s.ComparedCells, s.RegressedCells, len(s.Worst), len(res.Cells))
	}
	if s.QPSDropPercent != v1.DefaultQPSDropPercent || s.P95RisePercent != v1.DefaultP95RisePercent {
		t.Errorf("thresholds = %v, %v, want defaults %v, %v", s.QPSDropPercent, s.P95RisePercent, v1.DefaultQPSDropPercent, v1.DefaultP95RisePercent)
	}
	if !strings.Contains(s.Message, "no baseline") {
		t.Errorf("Message = %q, want it to say there is no baseline", s.Message)
	}
	if got := Short(s); got != "NoBaseline" {
		t.Errorf("Short = %q, want NoBaseline", got)
	}
	md := Markdown(res)
	if !strings.HasPrefix(md, "# run-2: no baseline\n") {
		t.Errorf("Markdown does not start with the no-baseline header:\n%s", md)
	}
	if strings.Contains(md, "| target |") {
		t.Errorf("Markdown has a table without a baseline:\n%s", md)
	}
}

func TestCompareIdentical(t *testing.T) {
	cells := grid([]string{"mysql80", "mysql84"}, []int32{1, 8, 64}, 1000, 5)
	res := Compare(mkRun("run-2", cells...), mkRun("run-1", cells...), inRun(v1.RegressionPolicy{}))
	s := res.Summary
	if s.Verdict != v1.VerdictNoRegression {
		t.Errorf("Verdict = %q, want %q", s.Verdict, v1.VerdictNoRegression)
	}
	if s.ComparedCells != 6 || len(res.Cells) != 6 {
		t.Errorf("ComparedCells = %d, len(Cells) = %d, want 6", s.ComparedCells, len(res.Cells))
	}
	if s.RegressedCells != 0 || len(s.Worst) != 0 {
		t.Errorf("RegressedCells = %d, Worst = %v, want none", s.RegressedCells, s.Worst)
	}
	if len(res.OnlyInRun) != 0 || len(res.OnlyInBaseline) != 0 {
		t.Errorf("OnlyInRun = %v, OnlyInBaseline = %v, want none", res.OnlyInRun, res.OnlyInBaseline)
	}
	if s.Baseline != "run-1" || s.Run != "run-2" {
		t.Errorf("Run, Baseline = %q, %q", s.Run, s.Baseline)
	}
	wantMsg := "no regression against run-1: every target's interval rules out the minimum effect (alpha 0.05 over 4 tests (targets, then the cells of changed targets), " +
		"minimum effect QPS -5%, p95 +10%; cells: 0 regressed, 0 improved, 6 unchanged, 0 inconclusive); smallest detectable drop: mysql80 0.6 %, mysql84 0.6 %, with run-to-run CV 0 % (policy)"
	if s.Message != wantMsg {
		t.Errorf("Message = %q, want %q", s.Message, wantMsg)
	}
	if got := Short(s); got != "OK 0/6" {
		t.Errorf("Short = %q, want OK 0/6", got)
	}
	for _, c := range res.Cells {
		if c.Regressed || c.Verdict != v1.CellNoChange || c.QPSChangePercent != 0 || c.P95ChangePercent != 0 || c.BaselineP95Ms != 5 || c.P95Ms != 5 ||
			c.N != 5 || c.BaselineN != 5 || c.QPSP != 1 {
			t.Errorf("identical cell %+v: want unchanged, not regressed, p95 5 on both sides", c)
		}
	}
}

// TestCompareCell checks one cell's verdict and changes against thresholds.
func TestCompareCell(t *testing.T) {
	tests := []struct {
		name           string
		policy         v1.RegressionPolicy
		baseQPS, qps   float64
		baseP95, p95   float64
		want           v1.CellVerdict
		wantNeeded     int32
		wantQPSChange  float64
		wantP95Change  float64
		wantP95Compare bool
		// wantRun is the run's verdict when it is not the cell's: the target's geometric mean
		// decides "no regression" and has no floor from the U test's discreteness.
		wantRun v1.Verdict
	}{
		{name: "unchanged", baseQPS: 1000, qps: 1000, baseP95: 5, p95: 5, want: v1.CellNoChange, wantQPSChange: 0, wantP95Compare: true},
		{name: "QPS improved", baseQPS: 1000, qps: 1200, baseP95: 5, p95: 5, want: v1.CellImproved, wantQPSChange: 20, wantP95Compare: true},
		// A significant change below the minimum effect is no regression, but its interval
		// [-5.3 %, -4.5 %] does not rule out a 5 % drop either.
		{name: "QPS drop 4.9% is significant but below 5%", baseQPS: 1000, qps: 951, baseP95: 5, p95: 5, want: v1.CellInconclusive, wantQPSChange: -4.9, wantP95Compare: true},
		{name: "QPS drop 3% is significant, below 5% and ruled out", baseQPS: 1000, qps: 970, baseP95: 5, p95: 5, want: v1.CellNoChange, wantQPSChange: -3, wantP95Compare: true},
		{name: "QPS drop of 5% reaches the minimum effect", baseQPS: 1000, qps: 950, baseP95: 5, p95: 5, want: v1.CellRegressed, wantQPSChange: -5, wantP95Compare: true},
		{name: "QPS drop 10% regresses", baseQPS: 1000, qps: 900, baseP95: 5, p95: 5, want: v1.CellRegressed, wantQPSChange: -10, wantP95Compare: true},
		{name: "QPS drop regresses even when p95 improved", baseQPS: 1000, qps: 900, baseP95: 5, p95: 4, want: v1.CellRegressed, wantQPSChange: -10, wantP95Change: -20, wantP95Compare: true},
		{name: "p95 rise 9% is below 10%", baseQPS: 1000, qps: 1000, baseP95: 20, p95: 21.8, want: v1.CellNoChange, wantP95Change: 9, wantP95Compare: true},
		{name: "p95 rise 10.5% regresses with QPS unchanged", baseQPS: 1000, qps: 1000, baseP95: 20, p95: 22.1, want: v1.CellRegressed, wantP95Change: 10.5, wantP95Compare: true},
		{name: "p95 missing in baseline is not compared", baseQPS: 1000, qps: 1000, baseP95: 0, p95: 100, want: v1.CellNoChange},
		{name: "p95 missing in run is not compared", baseQPS: 1000, qps: 1000, baseP95: 5, p95: 0, want: v1.CellNoChange},
		{name: "p95 missing still compares QPS", baseQPS: 1000, qps: 800, baseP95: 0, p95: 5, want: v1.CellRegressed, wantQPSChange: -20},
		{name: "custom QPS 2.5%: drop 3% regresses", policy: v1.RegressionPolicy{QPSDropPercent: f(2.5)}, baseQPS: 1000, qps: 970, baseP95: 5, p95: 5, want: v1.CellRegressed, wantQPSChange: -3, wantP95Compare: true},
		{name: "custom QPS 2.5%: drop 2% does not", policy: v1.RegressionPolicy{QPSDropPercent: f(2.5)}, baseQPS: 1000, qps: 980, baseP95: 5, p95: 5, want: v1.CellNoChange, wantQPSChange: -2, wantP95Compare: true},
		{name: "custom QPS 0%: any significant drop regresses", policy: v1.RegressionPolicy{QPSDropPercent: f(0)}, baseQPS: 1000, qps: 990, baseP95: 5, p95: 5, want: v1.CellRegressed, wantQPSChange: -1, wantP95Compare: true},
		// With no minimum effect no interval can rule out a change: not NoChange.
		{name: "custom QPS 0%: no drop is inconclusive", policy: v1.RegressionPolicy{QPSDropPercent: f(0)}, baseQPS: 1000, qps: 1000, baseP95: 5, p95: 5, want: v1.CellInconclusive, wantP95Compare: true},
		{name: "custom p95 0%: a significant rise regresses", policy: v1.RegressionPolicy{P95RisePercent: f(0)}, baseQPS: 1000, qps: 1000, baseP95: 10, p95: 10.1, want: v1.CellRegressed, wantP95Change: 1, wantP95Compare: true},
		{name: "custom p95 50%: rise 40% is not regressed", policy: v1.RegressionPolicy{P95RisePercent: f(50)}, baseQPS: 1000, qps: 1000, baseP95: 10, p95: 14, want: v1.CellNoChange, wantP95Change: 40, wantP95Compare: true},
		{name: "custom QPS 20%: drop 10% is not regressed", policy: v1.RegressionPolicy{QPSDropPercent: f(20)}, baseQPS: 1000, qps: 900, baseP95: 5, p95: 5, want: v1.CellNoChange, wantQPSChange: -10, wantP95Compare: true},
		// Alpha 0.005 is out of reach of a U test with 5 against 5 repetitions (best p 0.0079);
		// the cell's t test on the log repetitions has no such floor.
		{name: "alpha below what a U test of 5 repetitions can reach", policy: v1.RegressionPolicy{Alpha: f(0.005)}, baseQPS: 1000, qps: 900, baseP95: 5, p95: 5, want: v1.CellRegressed, wantQPSChange: -10, wantP95Compare: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := mkRun("base", meas{"mysql80", 16, tt.baseQPS, tt.baseP95})
			run := mkRun("run", meas{"mysql80", 16, tt.qps, tt.p95})
			res := Compare(run, base, inRun(tt.policy))
			s := res.Summary
			if s.QPSDropPercent != tt.policy.QPSDropPercentOrDefault() || s.P95RisePercent != tt.policy.P95RisePercentOrDefault() {
				t.Errorf("thresholds applied = %v, %v, want %v, %v", s.QPSDropPercent, s.P95RisePercent,
					tt.policy.QPSDropPercentOrDefault(), tt.policy.P95RisePercentOrDefault())
			}
			if len(res.Cells) != 1 || s.ComparedCells != 1 {
				t.Fatalf("Cells = %v, ComparedCells = %d, want one cell", res.Cells, s.ComparedCells)
			}
			c := res.Cells[0]
			if c.Target != "mysql80" || c.Threads != 16 || c.BaselineQPS != tt.baseQPS || c.QPS != tt.qps {
				t.Errorf("cell = %+v, want mysql80@16 with QPS %v -> %v", c, tt.baseQPS, tt.qps)
			}
			if c.Verdict != tt.want || c.Regressed != (tt.want == v1.CellRegressed) || c.NeededRepetitions != tt.wantNeeded {
				t.Errorf("Verdict = %s, Regressed = %v, needed %d; want %s, needed %d (cell %+v)",
					c.Verdict, c.Regressed, c.NeededRepetitions, tt.want, tt.wantNeeded, c)
			}
			if c.QPSChangePercent != tt.wantQPSChange {
				t.Errorf("QPSChangePercent = %v, want %v", c.QPSChangePercent, tt.wantQPSChange)
			}
			if c.P95ChangePercent != tt.wantP95Change {
				t.Errorf("P95ChangePercent = %v, want %v", c.P95ChangePercent, tt.wantP95Change)
			}
			if tt.wantP95Compare {
				if c.BaselineP95Ms != tt.baseP95 || c.P95Ms != tt.p95 {
					t.Errorf("p95 = %v -> %v, want %v -> %v", c.BaselineP95Ms, c.P95Ms, tt.baseP95, tt.p95)
				}
			} else if c.BaselineP95Ms != 0 || c.P95Ms != 0 {
				t.Errorf("p95 compared (%v -> %v) although one side lacks it", c.BaselineP95Ms, c.P95Ms)
			}
			wantVerdict, wantRegressed := v1.VerdictNoRegression, int32(0)
			switch tt.want {
			case v1.CellRegressed:
				wantVerdict, wantRegressed = v1.VerdictRegressed, 1
			case v1.CellInconclusive:
				wantVerdict = v1.VerdictInconclusive
			}
			if tt.wantRun != "" {
				wantVerdict = tt.wantRun
			}
			if s.Verdict != wantVerdict || s.RegressedCells != wantRegressed ||
				s.RegressedCells+s.ImprovedCells+s.NoChangeCells+s.InconclusiveCells != 1 {
				t.Errorf("Verdict = %q with %d regressed, want %q with %d (%+v)", s.Verdict, s.RegressedCells, wantVerdict, wantRegressed, s)
			}
			if tt.want == v1.CellRegressed && (len(s.Worst) != 1 || s.Worst[0] != c.CellChange) {
				t.Errorf("Worst = %+v, want the regressed cell", s.Worst)
			}
		})
	}
}

func TestCompareNotCompared(t *testing.T) {
	base := mkRun("run-1",
		meas{"mysql80", 1, 100, 1},
		meas{"mysql80", 8, 800, 2},
		meas{"mysql80", 64, 3000, 9}, // the run lacks 64 threads
		meas{"mysql84", 8, 900, 2},   // the run failed this step (QPS 0)
		meas{"mysql57", 8, 700, 3},   // target dropped from the run
		meas{"mysql80", 16, 0, 0},    // failed in the baseline: not measured
	)
	run := mkRun("run-2",
		meas{"mysql80", 1, 100, 1},
		meas{"mysql80", 8, 400, 2}, // regressed
		meas{"mysql80", 16, 1500, 4},
		meas{"mysql84", 8, 0, 0},
		meas{"mysql84", 128, 5000, 20}, // new thread count
		meas{"mariadb", 8, 850, 2},     // new target
	)
	res := Compare(run, base, inRun(v1.RegressionPolicy{}))
	wantRun := []string{"mysql80@16", "mysql84@128", "mariadb@8"}
	wantBase := []string{"mysql80@64", "mysql84@8", "mysql57@8"}
	if fmt.Sprint(res.OnlyInRun) != fmt.Sprint(wantRun) {
		t.Errorf("OnlyInRun = %v, want %v", res.OnlyInRun, wantRun)
	}
	if fmt.Sprint(res.OnlyInBaseline) != fmt.Sprint(wantBase) {
		t.Errorf("OnlyInBaseline = %v, want %v", res.OnlyInBaseline, wantBase)
	}
	var compared []string
	for _, c := range res.Cells {
		compared = append(compared, cellName(keyOf(c.CellChange)))
	}
	if want := []string{"mysql80@1", "mysql80@8"}; fmt.Sprint(compared) != fmt.Sprint(want) {
		t.Errorf("compared cells = %v, want %v", compared, want)
	}
	s := res.Summary
	if s.ComparedCells != 2 || s.RegressedCells != 1 || s.Verdict != v1.VerdictRegressed {
		t.Errorf("Verdict %q, compared %d, regressed %d; want Regressed, 2, 1", s.Verdict, s.ComparedCells, s.RegressedCells)
	}
	if got := Short(s); got != "Regressed 1/2" {
		t.Errorf("Short = %q, want Regressed 1/2", got)
	}
}

func TestCompareNoCommonCells(t *testing.T) {
	base := mkRun("nightly-202401010000", meas{"mysql80", 8, 800, 2}, meas{"mysql80", 16, 1500, 4})
	run := mkRun("nightly-202401020000", meas{"mysql84", 8, 800, 2}, meas{"mysql80", 32, 2000, 6})
	res := Compare(run, base, inRun(v1.RegressionPolicy{}))
	s := res.Summary
	if s.Verdict != v1.VerdictNoBaseline {
		t.Errorf("Verdict = %q, want %q", s.Verdict, v1.VerdictNoBaseline)
	}
	if s.Baseline != "nightly-202401010000" {
		t.Errorf("Baseline = %q, want the baseline's name", s.Baseline)
	}
	if s.ComparedCells != 0 || s.RegressedCells != 0 {
		t.Errorf("compared %d, regressed %d, want 0, 0", s.ComparedCells, s.RegressedCells)
	}
	if !strings.Contains(s.Message, "no cell in common with baseline nightly-202401010000") {
		t.Errorf("Message = %q, want it to name the baseline", s.Message)
	}
	if got := Short(s); got != "NoBaseline" {
		t.Errorf("Short = %q, want NoBaseline", got)
	}
	if len(res.OnlyInRun) != 2 || len(res.OnlyInBaseline) != 2 {
		t.Errorf("OnlyInRun = %v, OnlyInBaseline = %v, want 2 each", res.OnlyInRun, res.OnlyInBaseline)
	}
	md := Markdown(res)
	for _, want := range []string{
		"# nightly-202401010000 vs nightly-202401020000\n",
		"**Verdict: no baseline**",
		"Not in the baseline (not compared): mysql84@8, mysql80@32\n",
		"Measured by the baseline only (not compared): mysql80@8, mysql80@16\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| target |") {
		t.Errorf("Markdown has a table without common cells:\n%s", md)
	}
}

// worstFixture is 3 targets x 8 thread counts = 24 cells, of which regressed (target@threads,
// run QPS, run p95) against QPS 1000 and p95 10 in the baseline.
func worstFixture(regressed ...meas) (run, base *v1.BenchmarkRun) {
	cells := grid([]string{"a", "b", "c"}, []int32{1, 2, 4, 8, 16, 32, 64, 128}, 1000, 10)
	base = mkRunN("base", 10, cells...)
	for _, r := range regressed {
		cells = withCell(cells, r)
	}
	return mkRunN("run", 10, cells...), base
}

func TestCompareWorst(t *testing.T) {
	tests := []struct {
		name      string
		regressed []meas
		// wantWorst is the expected Worst as target@threads, worst first.
		wantWorst []string
	}{
		{
			name: "three regressed, ordered by how far beyond the threshold",
			regressed: []meas{
				{"a", 1, 920, 10},  // QPS -8%: 3 beyond
				{"b", 4, 1000, 13}, // p95 +30%: 20 beyond
				{"c", 8, 850, 10},  // QPS -15%: 10 beyond
			},
			wantWorst: []string{"b@4", "c@8", "a@1"},
		},
		{
			// The p95 rise is larger in percent, but less beyond its (higher) threshold.
			name: "severity is relative to each threshold",
			regressed: []meas{
				{"a", 2, 1000, 12.2}, // p95 +22%: 12 beyond
				{"a", 4, 800, 10},    // QPS -20%: 15 beyond
			},
			wantWorst: []string{"a@4", "a@2"},
		},
		{
			name: "a cell regressed both ways counts its worse change",
			regressed: []meas{
				{"a", 8, 900, 10},     // QPS -10%: 5 beyond
				{"b", 8, 930, 15},     // QPS -7%: 2 beyond, p95 +50%: 40 beyond
				{"c", 128, 700, 10},   // QPS -30%: 25 beyond
				{"c", 64, 1000, 11.5}, // p95 +15%: 5 beyond, ties a@8, keeps cell order
			},
			wantWorst: []string{"b@8", "c@128", "a@8", "c@64"},
		},
		{
			name: "seven regressed, capped at five",
			regressed: []meas{
				{"a", 1, 940, 10},   // 1 beyond
				{"a", 2, 930, 10},   // 2
				{"b", 16, 1000, 17}, // 60
				{"b", 32, 500, 10},  // 45
				{"c", 1, 920, 10},   // 3
				{"c", 2, 1000, 14},  // 30
				{"c", 4, 900, 10},   // 5
			},
			wantWorst: []string{"b@16", "b@32", "c@2", "c@4", "c@1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, base := worstFixture(tt.regressed...)
			res := Compare(run, base, inRun(v1.RegressionPolicy{}))
			s := res.Summary
			if s.Verdict != v1.VerdictRegressed {
				t.Errorf("Verdict = %q, want Regressed", s.Verdict)
			}
			n := len(tt.regressed)
			if s.ComparedCells != 24 || int(s.RegressedCells) != n {
				t.Errorf("compared %d, regressed %d, want 24, %d", s.ComparedCells, s.RegressedCells, n)
			}
			var worst []string
			for _, c := range s.Worst {
				if !c.Regressed {
					t.Errorf("Worst holds a cell that did not regress: %+v", c)
				}
				worst = append(worst, cellName(keyOf(c)))
			}
			if fmt.Sprint(worst) != fmt.Sprint(tt.wantWorst) {
				t.Errorf("Worst = %v, want %v", worst, tt.wantWorst)
			}
			if len(s.Worst) > MaxWorst {
				t.Errorf("len(Worst) = %d, above MaxWorst %d", len(s.Worst), MaxWorst)
			}
			wantPart := fmt.Sprintf("cells: %d regressed, 0 improved, %d unchanged, 0 inconclusive", n, 24-n)
			if !strings.HasPrefix(s.Message, "regressed against base") || !strings.Contains(s.Message, wantPart) ||
				!strings.Contains(s.Message, "worst cells: "+Describe("", s.Worst[0])) {
				t.Errorf("Message = %q, want it to count %q and name the worst cell first", s.Message, wantPart)
			}
			for _, c := range s.Worst {
				if !strings.Contains(s.Message, Describe("", c)) {
					t.Errorf("Message %q does not name worst cell %q", s.Message, Describe("", c))
				}
			}
			if got, want := Short(s), fmt.Sprintf("Regressed %d/24", n); got != want {
				t.Errorf("Short = %q, want %q", got, want)
			}
			regressedInCells := 0
			for _, c := range res.Cells {
				if c.Regressed {
					regressedInCells++
				}
			}
			if regressedInCells != n {
				t.Errorf("%d regressed cells in Cells, want %d", regressedInCells, n)
			}
		})
	}
}

func TestCompareWorstNotInMessageWhenCapped(t *testing.T) {
	run, base := worstFixture(
		meas{"a", 1, 100, 10}, meas{"a", 2, 200, 10}, meas{"a", 4, 300, 10},
		meas{"a", 8, 400, 10}, meas{"a", 16, 500, 10}, meas{"a", 32, 940, 10},
	)
	s := Compare(run, base, inRun(v1.RegressionPolicy{})).Summary
	if s.RegressedCells != 6 || len(s.Worst) != MaxWorst {
		t.Fatalf("regressed %d, len(Worst) %d, want 6, %d", s.RegressedCells, len(s.Worst), MaxWorst)
	}
	if strings.Contains(s.Message, "a at 32 threads") {
		t.Errorf("Message names the sixth, least regressed cell: %q", s.Message)
	}
	if !strings.Contains(s.Message, "cells: 6 regressed") {
		t.Errorf("Message = %q, want it to count all 6", s.Message)
	}
}

func TestShort(t *testing.T) {
	tests := []struct {
		c    v1.Comparison
		want string
	}{
		{v1.Comparison{Verdict: v1.VerdictRegressed, RegressedCells: 3, ComparedCells: 24}, "Regressed 3/24"},
		{v1.Comparison{Verdict: v1.VerdictNoRegression, ComparedCells: 24}, "OK 0/24"},
		{v1.Comparison{Verdict: v1.VerdictInconclusive, InconclusiveCells: 5, ComparedCells: 24}, "Inconclusive 5/24"},
		{v1.Comparison{Verdict: v1.VerdictNoBaseline}, "NoBaseline"},
		{v1.Comparison{Verdict: v1.VerdictNoBaseline, Baseline: "x"}, "NoBaseline"},
		{v1.Comparison{}, "NoBaseline"},
	}
	for _, tt := range tests {
		if got := Short(tt.c); got != tt.want {
			t.Errorf("Short(%+v) = %q, want %q", tt.c, got, tt.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		c    v1.CellChange
		want string
	}{
		{v1.CellChange{Target: "mysql80", Threads: 64, QPSChangePercent: -12.3, BaselineP95Ms: 10, P95Ms: 11.5, P95ChangePercent: 15},
			"mysql80 at 64 threads: QPS -12.3%, p95 +15.0%"},
		{v1.CellChange{Target: "mysql80", Threads: 1, QPSChangePercent: 4},
			"mysql80 at 1 threads: QPS +4.0%"},
		{v1.CellChange{Target: "m", Threads: 8, QPSChangePercent: -6, BaselineP95Ms: 0, P95Ms: 3, P95ChangePercent: 0},
			"m at 8 threads: QPS -6.0%"},
	}
	for _, tt := range tests {
		if got := Describe("", tt.c); got != tt.want {
			t.Errorf("Describe(%+v) = %q, want %q", tt.c, got, tt.want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	base := mkRun("run-1",
		meas{"mysql80", 1, 100, 1},
		meas{"mysql80", 8, 800, 2},
		meas{"mysql80", 64, 3000, 0}, // no p95 in the baseline
		meas{"mysql84", 8, 900, 2},
		meas{"mysql57", 8, 700, 3},
	)
	run := mkRun("run-2",
		meas{"mysql80", 1, 100, 1},
		meas{"mysql80", 8, 700, 2}, // QPS -12.5%
		meas{"mysql80", 64, 3100, 9},
		meas{"mysql84", 8, 900, 2.5}, // p95 +25%
		meas{"mariadb", 8, 850, 2},
	)
	res := Compare(run, base, inRun(v1.RegressionPolicy{QPSDropPercent: f(2.5)}))
	md := Markdown(res)

	for _, want := range []string{
		// benchstat's order: old (the baseline), then new.
		"# run-1 vs run-2\n",
		"old = run-1 (baseline), new = run-2.",
		"QPS fell by at least 2.5 % (p95 rose by at least 10 %)",
		"Targets are tested first, adjusted together (Benjamini-Hochberg); the cells of a target that changed are then adjusted over that target's cells. 10 tests in all",
		"**Verdict: regressed**: regressed against run-1",
		"| 2 | 1 | 1 | 0 | 0 | 4 |\n",
		"| target | threads | old QPS | new QPS | vs base | old p95 ms | new p95 ms | vs base | verdict |\n",
		// ~ only for "no significant change"; p, the adjusted q and n beside every change.
		// The cell at 1 thread did not move, but against its target's other cells it did: its
		// test is significant, its change below the minimum effect.
		"| mysql80 | 1 | 100 ± 0.4% | 100 ± 0.4% | +0.0% (p<0.001 n=5+5) | 1.000 | 1.000 | ~ (p=1.000 n=5+5) | unchanged |\n",
		"| mysql80 | 8 | 800 ± 0.4% | 700 ± 0.4% | -12.5% (p<0.001 n=5+5) | 2.000 | 2.000 | ~ (p=1.000 n=5+5) | **regressed** |\n",
		"| mysql80 | 64 | 3,000 ± 0.4% | 3,100 ± 0.4% | +3.3% (p<0.001 n=5+5) | - | - | - | improved |\n",
		"| **mysql80** | geomean (3) | 621 | 601 | ~ [-16.6%, +12.2%] (p=0.577) | | | ~ [-0.3%, +0.3%] (p=1.000) | inconclusive |\n",
		"| mysql84 | 8 | 900 ± 0.4% | 900 ± 0.4% | ~ (p=1.000 n=5+5) | 2.000 | 2.500 | +25.0% (p<0.001 n=5+5) | **regressed** |\n",
		"| **mysql84** | geomean (1) | 900 | 900 | ~ [-0.5%, +0.5%] (p=1.000) | | | +25.0% [+24.4%, +25.6%] (p<0.001) | **regressed** |\n",
		"| mysql80 | 0 % (spec.regression.runToRunCVPercent) | no (one per target) | ~ [-16.6%, +12.1%] (p=0.577) | 56.8 % (above the 2.5 % minimum effect: too noisy to judge it) |\n",
		"covers the median with 93.8 % only",
		"Not in the baseline (not compared): mariadb@8\n",
		"Measured by the baseline only (not compared): mysql57@8\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}

	var rows, geomeanRows, marked int
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| target |") || strings.HasPrefix(line, "| regressed |") ||
			strings.HasPrefix(line, "| 2 |") || strings.Contains(line, "run-to-run") || strings.Contains(line, "runToRun") {
			continue
		}
		if strings.Contains(line, "| geomean (") {
			geomeanRows++
			continue
		}
		rows++
		if strings.Contains(line, "**regressed**") {
			marked++
		}
		for _, c := range []string{"mariadb", "mysql57"} {
			if strings.HasPrefix(line, "| "+c+" ") {
				t.Errorf("not-compared cell %s has a row: %q", c, line)
			}
		}
	}
	if rows != len(res.Cells) || rows != 4 || geomeanRows != 2 {
		t.Errorf("%d cell rows and %d geomean rows, want one per compared cell (%d) and one per target (2)", rows, geomeanRows, len(res.Cells))
	}
	if marked != 2 {
		t.Errorf("%d cell rows marked regressed, want 2", marked)
	}
	if strings.Contains(md, "`!` marks a noisy") {
		t.Errorf("quiet cells marked noisy:\n%s", md)
	}
}

func TestMarkdownNoRegression(t *testing.T) {
	cells := grid([]string{"mysql80"}, []int32{1, 8}, 1000, 5)
	md := Markdown(Compare(mkRun("run-2", cells...), mkRun("run-1", cells...), inRun(v1.RegressionPolicy{})))
	for _, want := range []string{"# run-1 vs run-2\n", "**Verdict: no regression**: no regression against run-1: every target's interval rules out the minimum effect"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	for _, unwanted := range []string{"**regressed**", "not compared"} {
		if strings.Contains(md, unwanted) {
			t.Errorf("Markdown has %q:\n%s", unwanted, md)
		}
	}
}
