package stats

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// The benchmarks measure rates, not speed: each iteration replays the same seeded trials, so
// the reported rates do not depend on b.N. Run them once each with
//
//	go test -run '^$' -bench Rate -benchtime 1x ./internal/stats/
//
// Each benchmark prints a table of all its figures at its end (on standard output).

const benchTrials = 5000

var (
	benchCVs = []float64{0.01, 0.02, 0.05}
	benchNs  = []int{3, 4, 5, 8, 10}
)

func pct(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }

// benchSeed gives every (cv, n) cell its own stream of random numbers.
func benchSeed(cv float64, n int) uint64 { return uint64(math.Round(cv*1000))*100 + uint64(n) }

// BenchmarkFalsePositiveRate draws A/A pairs (both runs from the same lognormal distribution,
// median 1000 QPS, CV 1/2/5 %) and reports the share of Regressed or Improved verdicts at
// alpha 0.05, with no minimum effect (the U test alone) and with the schedule's default 5 %.
func BenchmarkFalsePositiveRate(b *testing.B) {
	const alpha = 0.05
	var table strings.Builder
	fmt.Fprintf(&table, "A/A false-positive rate, alpha %.2f, %d trials per cell\n", alpha, benchTrials)
	fmt.Fprintf(&table, "%-4s %-3s %14s %14s %12s %18s\n", "CV", "n", "fp min=0", "fp min=5%", "exact size", "inconcl. min=5%")
	for _, cv := range benchCVs {
		for _, n := range benchNs {
			var r0, r5 simResult
			b.Run(fmt.Sprintf("cv=%s/n=%d", pct(cv), n), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					r0 = simulate(benchSeed(cv, n), benchTrials, n, cv, 0, Options{Alpha: alpha, HigherIsBetter: true})
					r5 = simulate(benchSeed(cv, n), benchTrials, n, cv, 0, Options{Alpha: alpha, MinEffect: 0.05, HigherIsBetter: true})
				}
				b.ReportMetric(r0.falsePositive(), "fp-rate-min0")
				b.ReportMetric(r5.falsePositive(), "fp-rate-min5")
				b.ReportMetric(exactSize(n, alpha), "exact-size")
			})
			fmt.Fprintf(&table, "%-4s %-3d %14.4f %14.4f %12.4f %18.4f\n", pct(cv), n,
				r0.falsePositive(), r5.falsePositive(), exactSize(n, alpha), r5.rate(r5.inconcl))
		}
	}
	fmt.Print("\n" + table.String())
}

// BenchmarkDetectionRate draws A/B pairs where the second run's true median QPS is 5 % lower,
// with lognormal noise at CV 1/2/5 %, and reports the share of Regressed verdicts at alpha 0.05
// with a minimum effect of 0, 3 % and 5 %.
func BenchmarkDetectionRate(b *testing.B) {
	const alpha, drop = 0.05, -0.05
	minEffects := []float64{0, 0.03, 0.05}
	var table strings.Builder
	fmt.Fprintf(&table, "A/B detection rate of a true 5%% QPS drop, alpha %.2f, %d trials per cell\n", alpha, benchTrials)
	fmt.Fprintf(&table, "%-4s %-3s %10s %10s %10s   %s\n", "CV", "n", "min=0", "min=3%", "min=5%", "(min=5%: no change / inconclusive)")
	for _, cv := range benchCVs {
		for _, n := range benchNs {
			rs := make([]simResult, len(minEffects))
			b.Run(fmt.Sprintf("cv=%s/n=%d", pct(cv), n), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					for j, me := range minEffects {
						rs[j] = simulate(benchSeed(cv, n), benchTrials, n, cv, drop, Options{Alpha: alpha, MinEffect: me, HigherIsBetter: true})
					}
				}
				for j, me := range minEffects {
					b.ReportMetric(rs[j].rate(rs[j].regressed), "detect-min"+strings.TrimSuffix(pct(me), "%"))
				}
			})
			fmt.Fprintf(&table, "%-4s %-3d %10.3f %10.3f %10.3f   %.3f / %.3f\n", pct(cv), n,
				rs[0].rate(rs[0].regressed), rs[1].rate(rs[1].regressed), rs[2].rate(rs[2].regressed),
				rs[2].rate(rs[2].noChange), rs[2].rate(rs[2].inconcl))
		}
	}
	fmt.Print("\n" + table.String())
}

// BenchmarkCompare is the cost of one comparison of 10 against 10 repetitions.
func BenchmarkCompare(b *testing.B) {
	base := []float64{1000, 1012, 987, 1003, 995, 1021, 978, 1008, 999, 1015}
	cur := scale(base, 0.97)
	opts := Options{MinEffect: 0.05, HigherIsBetter: true}
	for i := 0; i < b.N; i++ {
		Compare(base, cur, opts)
	}
}

// BenchmarkChangePoint reports, over 200 seeded histories each, how often ChangePoint finds a
// sustained 5 % drop at CV 2 % depending on how many nights lie before and after it, how often
// it fires on flat histories (CV 3 %, 1000 histories each), and how often it finds a slow drift of -0.3 % a night
// over 30 nights (MinEffect 3 %).
func BenchmarkChangePoint(b *testing.B) {
	const seeds, flatSeeds = 200, 1000
	opts := CPOptions{Permutations: 199}
	var table strings.Builder
	fmt.Fprintf(&table, "ChangePoint, alpha %.2f, %d permutations, %d histories per cell\n", DefaultAlpha, opts.Permutations, seeds)
	fmt.Fprintf(&table, "5%% drop at CV 2%%: found (at the right night ±1)\n%-14s", "before\\after")
	afters := []int{3, 4, 5, 8}
	for _, a := range afters {
		fmt.Fprintf(&table, " %12d", a)
	}
	table.WriteString("\n")
	for _, before := range []int{3, 5, 10, 20} {
		fmt.Fprintf(&table, "%-14d", before)
		for _, after := range afters {
			var found, placed float64
			b.Run(fmt.Sprintf("step/before=%d/after=%d", before, after), func(b *testing.B) {
				gen := func(seed uint64) []float64 { return nightly(seed, before+after, 0.02, step(before, 0.95)) }
				for i := 0; i < b.N; i++ {
					found, placed, _ = cpRate(seeds, gen, opts, before)
				}
				b.ReportMetric(found, "found")
				b.ReportMetric(placed, "placed")
			})
			fmt.Fprintf(&table, " %5.2f (%.2f)", found, placed)
		}
		table.WriteString("\n")
	}
	for _, n := range []int{10, 30, 60} {
		var fired float64
		b.Run(fmt.Sprintf("flat/n=%d", n), func(b *testing.B) {
			gen := func(seed uint64) []float64 { return nightly(seed, n, 0.03, func(int) float64 { return 1 }) }
			for i := 0; i < b.N; i++ {
				fired, _, _ = cpRate(flatSeeds, gen, opts, -1)
			}
			b.ReportMetric(fired, "fired")
		})
		fmt.Fprintf(&table, "flat, %d nights at CV 3%%: fired %.3f\n", n, fired)
	}
	var drift float64
	b.Run("drift", func(b *testing.B) {
		gen := func(seed uint64) []float64 {
			return nightly(seed, 30, 0.02, func(i int) float64 { return 1 - 0.003*float64(i) })
		}
		dopts := opts
		dopts.MinEffect = 0.03
		for i := 0; i < b.N; i++ {
			drift, _, _ = cpRate(seeds, gen, dopts, -1)
		}
		b.ReportMetric(drift, "found")
	})
	fmt.Fprintf(&table, "drift -0.3%%/night over 30 nights at CV 2%%, MinEffect 3%%: found %.3f\n", drift)
	fmt.Print("\n" + table.String())
}
