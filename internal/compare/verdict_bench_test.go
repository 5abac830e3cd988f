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
// finished runs (lognormal noise on every repetition's QPS and p95, independent between runs)
// and puts them through Compare, the path the schedule, mysqlbench-compare and the plugin use.
// Run them once with
//
//	go test ./internal/compare -run '^$' -bench Verdict -benchtime 1x
//
// Each prints its table at the end; the rates do not depend on b.N.

// verdictPairs is how many pairs of runs each figure is measured over.
const verdictPairs = 400

// simRun is a finished run of targets x threads cells with n repetitions each: every
// repetition's QPS is 1000·factor(target, threads) with lognormal noise at cv, and its p95 is
// 5 ms / that factor with the same noise drawn independently.
func simRun(rng *rand.Rand, name string, targets, threads, n int, cv float64, factor func(t, th int) float64) *v1.BenchmarkRun {
	sigma := math.Sqrt(math.Log1p(cv * cv))
	r := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	for t := range targets {
		ts := v1.TargetStatus{Name: fmt.Sprintf("target-%d", t)}
		for th := range threads {
			f := factor(t, th)
			for rep := range n {
				ts.Steps = append(ts.Steps, v1.StepResult{
					Threads: int32(1 << th), Repetition: int32(rep + 1),
					QPS:     v1.QPS{Total: 1000 * f * math.Exp(sigma*rng.NormFloat64())},
					Latency: v1.Latency{P95Ms: 5 / f * math.Exp(sigma*rng.NormFloat64())},
				})
			}
		}
		r.Status.Targets = append(r.Status.Targets, ts)
	}
	return r
}

// verdictRates compares pairs of simulated runs under the default policy and counts verdicts.
func verdictRates(seed uint64, pairs, targets, threads, n int, cv float64, factor func(t, th int) float64) map[v1.Verdict]float64 {
	rng := rand.New(rand.NewPCG(seed, uint64(targets*1000+threads*10+n)))
	flat := func(int, int) float64 { return 1 }
	out := map[v1.Verdict]float64{}
	for range pairs {
		base := simRun(rng, "base", targets, threads, n, cv, flat)
		run := simRun(rng, "run", targets, threads, n, cv, factor)
		out[Compare(run, base, v1.RegressionPolicy{}).Summary.Verdict]++
	}
	for k := range out {
		out[k] /= float64(pairs)
	}
	return out
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
