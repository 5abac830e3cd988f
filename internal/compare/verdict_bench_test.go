package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// The verdict benchmarks measure error rates of whole runs, not speed: each draws pairs of
// finished runs (lognormal noise on every repetition's QPS and p95, independent between runs,
// with shifts of whole runs and targets where a case says so) and puts them through Compare, the path the schedule, mysqlbench-compare and the plugin use.
// Run them once with
//
//	go test ./internal/compare -run '^$' -bench Verdict -benchtime 1x
//
// Each prints its table at the end; the rates do not depend on b.N.

// verdictPairs is how many pairs of runs each figure is measured over.
const verdictPairs = 400

// simRun is a finished run of targets x threads cells with n repetitions each: every
// repetition's QPS is 1000·factor(target, threads)·shift(target) with lognormal noise at cv, and
// its p95 is 5 ms / (factor·shift) with the same noise drawn independently. With instances each
// repetition records its own server instance (serverInstance PerRepetition).
func simRun(rng *rand.Rand, name string, targets, threads, n int, cv float64, instances bool, shift func(t int) float64, factor func(t, th int) float64) *v1.BenchmarkRun {
	sigma := math.Sqrt(math.Log1p(cv * cv))
	r := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	for t := range targets {
		ts := v1.TargetStatus{Name: fmt.Sprintf("target-%d", t)}
		st := shift(t)
		for th := range threads {
			f := factor(t, th) * st
			for rep := range n {
				step := v1.StepResult{
					Threads: int32(1 << th), Repetition: int32(rep + 1),
					QPS:     v1.QPS{Total: 1000 * f * math.Exp(sigma*rng.NormFloat64())},
					Latency: v1.Latency{P95Ms: 5 / f * math.Exp(sigma*rng.NormFloat64())},
				}
				if instances {
					step.Instance = int32(rep + 1)
				}
				ts.Steps = append(ts.Steps, step)
			}
		}
		r.Status.Targets = append(r.Status.Targets, ts)
	}
	return r
}

// simCase is a kind of pair of runs: their noise, the shifts between them that the repetitions
// do not see, and the true change of the new run.
type simCase struct {
	name             string
	targets, threads int
	cv               float64
	// runShift: each run scaled as a whole by exp(N(0, runShift)) (another night, machine);
	// targetShift: each target of each run by its own exp(N(0, targetShift)) (another
	// server instance).
	runShift, targetShift float64
	// instances: every repetition on its own server instance (PerRepetition).
	instances bool
	factor    func(t, th int) float64
	policy    v1.RegressionPolicy
}

func noChange(int, int) float64 { return 1 }

// dropTarget0 is a true QPS drop of frac of target-0 at every thread count.
func dropTarget0(frac float64) func(t, th int) float64 {
	return func(t, _ int) float64 {
		if t == 0 {
			return 1 - frac
		}
		return 1
	}
}

// dropCell is a true QPS drop of frac of target-0 at its thread count index th0 alone.
func dropCell(frac float64, th0 int) func(t, th int) float64 {
	return func(t, th int) float64 {
		if t == 0 && th == th0 {
			return 1 - frac
		}
		return 1
	}
}

// rates compares pairs of simulated runs of the case and counts verdicts.
func (c simCase) rates(seed uint64, pairs, n int) map[v1.Verdict]float64 {
	rng := rand.New(rand.NewPCG(seed, uint64(c.targets*1000+c.threads*10+n)))
	shifts := func() func(int) float64 {
		run := math.Exp(c.runShift * rng.NormFloat64())
		per := make([]float64, c.targets)
		for t := range per {
			per[t] = run * math.Exp(c.targetShift*rng.NormFloat64())
		}
		return func(t int) float64 { return per[t] }
	}
	factor := c.factor
	if factor == nil {
		factor = noChange
	}
	out := map[v1.Verdict]float64{}
	for range pairs {
		base := simRun(rng, "base", c.targets, c.threads, n, c.cv, c.instances, shifts(), noChange)
		run := simRun(rng, "run", c.targets, c.threads, n, c.cv, c.instances, shifts(), factor)
		out[Compare(run, base, c.policy).Summary.Verdict]++
	}
	for k := range out {
		out[k] /= float64(pairs)
	}
	return out
}

// verdictRates compares pairs of simulated runs without shifts under the default policy.
func verdictRates(seed uint64, pairs, targets, threads, n int, cv float64, factor func(t, th int) float64) map[v1.Verdict]float64 {
	return simCase{targets: targets, threads: threads, cv: cv, instances: true, factor: factor}.rates(seed, pairs, n)
}

// BenchmarkVerdictAA: pairs of runs with no real change (A/A). The false Regressed rate per run
// must stay at or below alpha (0.05) whatever the noise and the number of cells, and quiet
// pairs (CV 3 %) must be able to end "no regression".
func BenchmarkVerdictAA(b *testing.B) {
	var table strings.Builder
	fmt.Fprintf(&table, "A/A pairs of runs (no real change), default policy (alpha 0.05, QPS -5 %%, p95 +10 %%), %d pairs each\n", verdictPairs)
	fmt.Fprintf(&table, "%-6s %-22s %-3s %12s %14s %14s\n", "CV", "cells", "n", "Regressed", "NoRegression", "Inconclusive")
	for _, c := range []struct {
		cv               float64
		targets, threads int
	}{
		{0.03, 2, 8}, {0.03, 4, 8},
		{0.05, 2, 8}, {0.05, 4, 8}, {0.05, 2, 16},
		{0.15, 2, 8}, {0.15, 4, 8}, {0.15, 2, 16},
	} {
		var rates map[v1.Verdict]float64
		name := fmt.Sprintf("cv=%.0f%%/targets=%d/threads=%d", 100*c.cv, c.targets, c.threads)
		b.Run(name, func(b *testing.B) {
			for range b.N {
				rates = verdictRates(uint64(100*c.cv), verdictPairs, c.targets, c.threads, 5, c.cv, func(int, int) float64 { return 1 })
			}
			b.ReportMetric(rates[v1.VerdictRegressed], "false-regressed")
			b.ReportMetric(rates[v1.VerdictNoRegression], "no-regression")
		})
		fmt.Fprintf(&table, "%-6s %-22s %-3d %12.3f %14.3f %14.3f\n", fmt.Sprintf("%.0f%%", 100*c.cv),
			fmt.Sprintf("%d (%d targets x %d)", c.targets*c.threads, c.targets, c.threads), 5,
			rates[v1.VerdictRegressed], rates[v1.VerdictNoRegression], rates[v1.VerdictInconclusive])
	}
	fmt.Print("\n" + table.String())
}

// BenchmarkVerdictDetection: the new run's first target is truly 10 % slower in QPS at every
// thread count (its p95 10 % higher); the run must be called Regressed.
func BenchmarkVerdictDetection(b *testing.B) {
	var table strings.Builder
	fmt.Fprintf(&table, "A/B pairs: target-0 10 %% slower at every thread count, default policy, %d pairs each\n", verdictPairs)
	fmt.Fprintf(&table, "%-6s %-22s %-3s %12s\n", "CV", "cells", "n", "Regressed")
	for _, c := range []struct {
		cv               float64
		targets, threads int
	}{{0.05, 2, 8}, {0.05, 4, 8}, {0.05, 2, 4}, {0.15, 2, 8}} {
		var rates map[v1.Verdict]float64
		drop := func(t, _ int) float64 {
			if t == 0 {
				return 0.9
			}
			return 1
		}
		b.Run(fmt.Sprintf("cv=%.0f%%/targets=%d/threads=%d", 100*c.cv, c.targets, c.threads), func(b *testing.B) {
			for range b.N {
				rates = verdictRates(7+uint64(100*c.cv), verdictPairs, c.targets, c.threads, 5, c.cv, drop)
			}
			b.ReportMetric(rates[v1.VerdictRegressed], "detected")
		})
		fmt.Fprintf(&table, "%-6s %-22s %-3d %12.3f\n", fmt.Sprintf("%.0f%%", 100*c.cv),
			fmt.Sprintf("%d (%d targets x %d)", c.targets*c.threads, c.targets, c.threads), 5, rates[v1.VerdictRegressed])
	}
	fmt.Print("\n" + table.String())
}

// shiftCases are the pairs of runs the verdict must survive and the changes it must find
// (TestVerdictRates asserts the rates, BenchmarkVerdictShifts prints them): 2 targets x 8
// thread counts, 5 repetitions, the default policy unless a case says otherwise. want is the
// bound on the rate of verdict (at most when max, else at least).
var shiftCases = []struct {
	simCase
	verdict v1.Verdict
	want    float64
	max     bool
}{
	{simCase{name: "A/A, CV 5 %, run shift 3 %", cv: 0.05, runShift: 0.03, instances: true}, v1.VerdictRegressed, 0.05, true},
	{simCase{name: "A/A, CV 5 %, run shift 5 %", cv: 0.05, runShift: 0.05, instances: true}, v1.VerdictRegressed, 0.05, true},
	{simCase{name: "A/A, CV 5 %, each target its own 3 % instance shift", cv: 0.05, targetShift: 0.03}, v1.VerdictRegressed, 0.05, true},
	{simCase{name: "A/A, quiet (CV 3 %), run shift 3 %", cv: 0.03, runShift: 0.03, instances: true}, v1.VerdictRegressed, 0.05, true},
	{simCase{name: "target-0 -15 %, CV 5 %, run shift 3 %", cv: 0.05, runShift: 0.03, instances: true, factor: dropTarget0(0.15)}, v1.VerdictRegressed, 0.80, false},
	{simCase{name: "target-0 -10 %, CV 5 %, no shift", cv: 0.05, instances: true, factor: dropTarget0(0.10)}, v1.VerdictRegressed, 0.80, false},
	{simCase{name: "target-0 -15 % at one thread count, CV 3 %, no shift", cv: 0.03, instances: true, factor: dropCell(0.15, 3)}, v1.VerdictNoRegression, 0.05, true},
	{simCase{name: "same, runToRunCVPercent 0", cv: 0.03, instances: true, factor: dropCell(0.15, 3),
		policy: v1.RegressionPolicy{RunToRunCVPercent: ptrTo(0.0)}}, v1.VerdictNoRegression, 0.05, true},
	{simCase{name: "same, runToRunCVPercent 0, found", cv: 0.03, instances: true, factor: dropCell(0.15, 3),
		policy: v1.RegressionPolicy{RunToRunCVPercent: ptrTo(0.0)}}, v1.VerdictRegressed, 0.80, false},
}

// TestVerdictRates holds the verdict to its error rates over pairs of runs that differ by more
// than their repetitions' noise. Seeded: the same pairs every time, so a change of the verdict
// that misses a rate fails here rather than at random.
func TestVerdictRates(t *testing.T) {
	if testing.Short() {
		t.Skip("400 pairs of runs per case")
	}
	for i, c := range shiftCases {
		c.targets, c.threads = 2, 8
		rates := c.rates(uint64(1000+i), verdictPairs, 5)
		got := rates[c.verdict]
		if (c.max && got > c.want) || (!c.max && got < c.want) {
			t.Errorf("%s: %s in %.3f of %d pairs, want %s %.2f (all: %v)", c.name, c.verdict, got, verdictPairs,
				map[bool]string{true: "at most", false: "at least"}[c.max], c.want, rates)
		}
	}
}

// tradeOffCases show what the allowance costs where nothing vouches for a target: no measured
// instances, or no other target to compare with (printed by BenchmarkVerdictShifts, not bounds).
var tradeOffCases = []simCase{
	{name: "target-0 -10 %, CV 5 %, one instance per target", targets: 2, threads: 8, cv: 0.05, factor: dropTarget0(0.10)},
	{name: "target-0 -10 %, CV 5 %, a single target", targets: 1, threads: 8, cv: 0.05, instances: true, factor: dropTarget0(0.10)},
	{name: "target-0 -20 %, CV 5 %, a single target", targets: 1, threads: 8, cv: 0.05, instances: true, factor: dropTarget0(0.20)},
	{name: "both targets -10 %, CV 5 %", targets: 2, threads: 8, cv: 0.05, instances: true, factor: func(int, int) float64 { return 0.9 }},
	{name: "A/A, CV 5 %, runToRunCVPercent 0, run shift 3 %", targets: 2, threads: 8, cv: 0.05, runShift: 0.03, instances: true,
		policy: v1.RegressionPolicy{RunToRunCVPercent: ptrTo(0.0)}},
}

// BenchmarkVerdictShifts prints the rates TestVerdictRates asserts.
func BenchmarkVerdictShifts(b *testing.B) {
	var table strings.Builder
	fmt.Fprintf(&table, "pairs of runs with shifts the repetitions do not see, 2 targets x 8 thread counts, n = 5, %d pairs each\n", verdictPairs)
	fmt.Fprintf(&table, "%-62s %10s %13s %13s   %s\n", "case", "Regressed", "NoRegression", "Inconclusive", "bound")
	for i, c := range shiftCases {
		c.targets, c.threads = 2, 8
		var rates map[v1.Verdict]float64
		b.Run(fmt.Sprint(i), func(b *testing.B) {
			for range b.N {
				rates = c.rates(uint64(1000+i), verdictPairs, 5)
			}
		})
		bound := fmt.Sprintf("%s >= %.2f", c.verdict, c.want)
		if c.max {
			bound = fmt.Sprintf("%s <= %.2f", c.verdict, c.want)
		}
		fmt.Fprintf(&table, "%-62s %10.3f %13.3f %13.3f   %s\n", c.name, rates[v1.VerdictRegressed], rates[v1.VerdictNoRegression],
			rates[v1.VerdictInconclusive], bound)
	}
	for i, c := range tradeOffCases {
		rates := c.rates(uint64(2000+i), verdictPairs, 5)
		fmt.Fprintf(&table, "%-62s %10.3f %13.3f %13.3f   %s\n", c.name, rates[v1.VerdictRegressed], rates[v1.VerdictNoRegression],
			rates[v1.VerdictInconclusive], "(trade-off)")
	}
	fmt.Print("\n" + table.String())
}
