package compare

import (
	"math"
	"strings"
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// pairedRun is a confirmation-like run of targets a-base and a at 1 and 2 threads: round r of
// a-base measures 1000·threads·shift[r]·baseNoise[r], a the same times ratio[r]. p95 moves
// inversely with throughput.
func pairedRun(shift, baseNoise, ratio []float64) *v1.BenchmarkRun {
	run := &v1.BenchmarkRun{}
	run.Name = "conf"
	side := func(name string, f func(r int) float64) v1.TargetStatus {
		ts := v1.TargetStatus{Name: name, Phase: v1.TargetSucceeded}
		for r := range shift {
			for _, th := range []int32{1, 2} {
				q := 1000 * float64(th) * f(r)
				ts.Steps = append(ts.Steps, v1.StepResult{Threads: th, Repetition: int32(r + 1), QPS: v1.QPS{Total: q},
					Latency: v1.Latency{P95Ms: 10 * 1000 / q * float64(th)}})
			}
		}
		return ts
	}
	run.Status.Targets = []v1.TargetStatus{
		side("a-base", func(r int) float64 { return shift[r] * baseNoise[r] }),
		side("a", func(r int) float64 { return shift[r] * baseNoise[r] * ratio[r] }),
	}
	return run
}

var pairedPair = []TargetPair{{Name: "a", Base: "a-base", Cand: "a"}}

// Rounds that shift both sides together (a new pair of server instances each round, ±10 %) are
// no evidence either way: the paired verdict sees through them, where comparing the two sides'
// repetitions as independent samples cannot rule out the minimum effect.
func TestPairedByRoundCancelsWhatARoundShares(t *testing.T) {
	shift := []float64{0.90, 1.10, 0.95, 1.05, 1.00, 0.92}
	noise := []float64{1, 1.004, 0.997, 1.002, 0.999, 1.001}
	same := []float64{1.001, 0.999, 1.002, 0.998, 1.000, 1.001}
	run := pairedRun(shift, noise, same)
	res := PairedByRound(run, pairedPair, v1.RegressionPolicy{}, "night-2", "night-1")
	if res.Summary.Verdict != v1.VerdictNoRegression || res.Summary.Run != "night-2" || res.Summary.Baseline != "night-1" {
		t.Fatalf("A/A with round shifts: %+v", res.Summary)
	}
	if !strings.Contains(res.Summary.Message, "paired by round over 6 round(s)") {
		t.Errorf("message %q does not say it paired by round", res.Summary.Message)
	}
	if tc := res.Targets[0]; tc.Target != "a" || tc.Cells != 2 || tc.QPSLow < 0.99 || tc.QPSHigh > 1.01 {
		t.Errorf("target %+v: want a tight interval around 1", tc)
	}

	// The same numbers as two independent samples: the shifts swamp the interval.
	unpaired := Compare(sideRun("night-2", run, "a"), sideRun("night-1", run, "a-base"), v1.RegressionPolicy{})
	if unpaired.Summary.Verdict == v1.VerdictNoRegression {
		t.Errorf("unpaired verdict %s: the test case does not show what pairing adds", unpaired.Summary.Verdict)
	}
}

// sideRun is one side of a paired run as a run of its own, its target named as.
func sideRun(name string, run *v1.BenchmarkRun, target string) *v1.BenchmarkRun {
	out := &v1.BenchmarkRun{}
	out.Name = name
	for _, ts := range run.Status.Targets {
		if ts.Name == target {
			ts.Name = "a"
			out.Status.Targets = append(out.Status.Targets, ts)
		}
	}
	return out
}

// A 10 % drop found in every round is a regression, of the target and of its cells, even with
// the rounds shifting.
func TestPairedByRoundFindsADrop(t *testing.T) {
	shift := []float64{0.90, 1.10, 0.95, 1.05, 1.00}
	noise := []float64{1, 1.004, 0.997, 1.002, 0.999}
	drop := []float64{0.90, 0.905, 0.895, 0.90, 0.902}
	res := PairedByRound(pairedRun(shift, noise, drop), pairedPair, v1.RegressionPolicy{}, "night-2", "night-1")
	s := res.Summary
	if s.Verdict != v1.VerdictRegressed || s.RegressedCells != 2 || len(s.Targets) != 1 || s.Targets[0].Verdict != v1.CellRegressed {
		t.Fatalf("10 %% drop: %+v", s)
	}
	if math.Abs(s.Targets[0].QPSRatio-0.9) > 0.01 || s.Tests != 6 {
		t.Errorf("target ratio %v over %d tests; want about 0.9 over 6 (2 cells and the target, QPS and p95)", s.Targets[0].QPSRatio, s.Tests)
	}
	if w := s.Worst; len(w) != 2 || w[0].Target != "a" || w[0].BaselineN != 5 || w[0].QPSChangePercent > -9 {
		t.Errorf("worst cells %+v", w)
	}
	if !strings.Contains(s.Message, "regressed against night-1") || !strings.Contains(s.Message, "targets: a: QPS x0.90") {
		t.Errorf("message %q", s.Message)
	}
}

// Rounds that disagree about the ratio (from x0.7 to x1.2) decide nothing: Inconclusive, not a
// regression and not its absence.
func TestPairedByRoundNoisyRoundsAreInconclusive(t *testing.T) {
	shift := []float64{1, 1, 1, 1, 1}
	noise := []float64{1, 1, 1, 1, 1}
	wild := []float64{0.7, 1.2, 0.9, 1.1, 0.8}
	res := PairedByRound(pairedRun(shift, noise, wild), pairedPair, v1.RegressionPolicy{}, "night-2", "night-1")
	if res.Summary.Verdict != v1.VerdictInconclusive || res.Summary.RegressedCells != 0 ||
		!strings.Contains(res.Summary.Message, "cannot be ruled out for a: QPS") {
		t.Fatalf("noisy rounds: %+v", res.Summary)
	}
}

// An acknowledged regression alarms no one, in a paired comparison as in Compare.
func TestPairedByRoundHonoursAcknowledgements(t *testing.T) {
	shift := []float64{1, 1, 1, 1, 1}
	noise := []float64{1, 1.004, 0.997, 1.002, 0.999}
	drop := []float64{0.90, 0.905, 0.895, 0.90, 0.902}
	policy := v1.RegressionPolicy{Acknowledged: []v1.Acknowledgement{{Target: "a", Reason: "known"}}}
	res := PairedByRound(pairedRun(shift, noise, drop), pairedPair, policy, "night-2", "night-1")
	if res.Summary.Verdict == v1.VerdictRegressed || res.Summary.AcknowledgedCells != 2 {
		t.Fatalf("acknowledged drop: %+v", res.Summary)
	}
}

// Only rounds both sides measured are paired; a round missing on one side is left out, and a
// single round gives no interval (Inconclusive, saying why).
func TestPairedByRoundPairsOnlyCommonRounds(t *testing.T) {
	run := pairedRun([]float64{1, 1, 1}, []float64{1, 1.01, 0.99}, []float64{1, 1.001, 0.999})
	run.Status.Targets[1].Steps = run.Status.Targets[1].Steps[:2] // a measured round 1 only
	res := PairedByRound(run, pairedPair, v1.RegressionPolicy{}, "r", "b")
	if res.Summary.Verdict != v1.VerdictInconclusive || res.Cells[0].N != 1 ||
		!strings.Contains(res.Targets[0].Note, "1 round(s) measured on both sides: 2 are needed") {
		t.Fatalf("one common round: %+v, cells %+v", res.Summary, res.Cells)
	}
	over := pairedRun([]float64{1, 1, 1}, []float64{1, 1.01, 0.99}, []float64{1, 1.001, 0.999})
	over.Status.Targets[0].Steps[2].OverDuration = true // a-base, round 2, 1 thread
	res = PairedByRound(over, pairedPair, v1.RegressionPolicy{}, "r", "b")
	if res.Cells[0].N != 2 || res.Cells[1].N != 3 || res.Targets[0].Note != "paired by round over 2 round(s)" {
		t.Errorf("a step past its duration is no sample: cells %+v, target %+v", res.Cells, res.Targets[0])
	}
}

func TestPairedT(t *testing.T) {
	for _, c := range []struct {
		name    string
		xs      []float64
		p       float64
		low, hi float64
	}{
		{"identical rounds, no change", []float64{0, 0, 0}, 1, 1, 1},
		{"identical rounds, all moved", []float64{-0.1, -0.1, -0.1}, 0, math.Exp(-0.1), math.Exp(-0.1)},
	} {
		r := pairedT(c.xs, 0.9)
		if r.p != c.p || math.Abs(r.low()-c.low) > 1e-12 || math.Abs(r.high()-c.hi) > 1e-12 {
			t.Errorf("%s: p %v [%v, %v], want p %v [%v, %v]", c.name, r.p, r.low(), r.high(), c.p, c.low, c.hi)
		}
	}
	// mean 0.1, sample sd 0.1 over 4 rounds: se 0.05, t 2 with 3 degrees of freedom.
	r := pairedT([]float64{0.1 - 0.1*math.Sqrt(0.75), 0.1 + 0.1*math.Sqrt(0.75), 0.1 - 0.1*math.Sqrt(0.75), 0.1 + 0.1*math.Sqrt(0.75)}, 0.9)
	if math.Abs(r.mean-0.1) > 1e-12 || math.Abs(r.p-0.1393) > 5e-4 || math.Abs(r.half-2.3534*0.05) > 1e-3 {
		t.Errorf("t test: mean %v, p %v, half-width %v; want 0.1, 0.1393, %v", r.mean, r.p, r.half, 2.3534*0.05)
	}
	if r := pairedT([]float64{0.3}, 0.9); r.valid() || r.p != 1 || r.low() != 0 {
		t.Errorf("one round: %+v", r)
	}
}
