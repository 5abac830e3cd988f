package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// historyPairs is how many simulated histories each figure of BenchmarkHistoryCalibration is
// measured over.
const historyPairs = 300

// simHistory is nights successful runs of targets x threads cells (5 repetitions each, CV 2 %
// within a night), oldest first. Each night moves every cell by its own night-to-night noise
// (lognormal, CV nightCV), AR(1) with coefficient phi from one night to the next when phi > 0
// (a machine that stays slow for a few nights), times level(night).
func simHistory(rng *rand.Rand, nights, targets, threads int, nightCV, phi float64, level func(night int) float64) []*v1.BenchmarkRun {
	sigma := math.Sqrt(math.Log1p(nightCV * nightCV))
	within := math.Sqrt(math.Log1p(0.02 * 0.02))
	state := make([]float64, targets*threads*2)
	var runs []*v1.BenchmarkRun
	start := time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)
	for night := range nights {
		r := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n-%02d", night), Namespace: "ns"}}
		done := metav1.NewTime(start.Add(time.Duration(night) * 24 * time.Hour))
		r.Status.CompletionTime = &done
		for t := range targets {
			ts := v1.TargetStatus{Name: fmt.Sprintf("target-%d", t)}
			for th := range threads {
				i := (t*threads + th) * 2
				for j := i; j < i+2; j++ {
					// Stationary AR(1) on the log scale with the night's CV as its spread.
					state[j] = phi*state[j] + math.Sqrt(1-phi*phi)*sigma*rng.NormFloat64()
				}
				f := level(night)
				for rep := range 5 {
					ts.Steps = append(ts.Steps, v1.StepResult{
						Threads: int32(1 << th), Repetition: int32(rep + 1),
						QPS:     v1.QPS{Total: 1000 * f * math.Exp(state[i]+within*rng.NormFloat64())},
						Latency: v1.Latency{P95Ms: 5 / f * math.Exp(state[i+1]+within*rng.NormFloat64())},
					})
				}
			}
			r.Status.Targets = append(r.Status.Targets, ts)
		}
		runs = append(runs, r)
	}
	return runs
}

// stepAt is a level of 1 before night (0-based) and factor from it on.
func stepAt(night int, factor float64) func(int) float64 {
	return func(n int) float64 {
		if n >= night {
			return factor
		}
		return 1
	}
}

// BenchmarkHistoryCalibration measures the schedule's change-point analysis (History, default
// policy) on whole histories as a night's analysis sees them: how often a flat history (no real
// change; independent or autocorrelated nights) reports a harmful shift anywhere among its 32 or
// 64 series (the per-night false alarm), and how often a real 10 % QPS drop of one target,
// 5 nights before the newest, is found.
//
//	go test ./internal/compare -run '^$' -bench HistoryCalibration -benchtime 1x
func BenchmarkHistoryCalibration(b *testing.B) {
	var table strings.Builder
	fmt.Fprintf(&table, "History (change points), default policy, %d histories each, 5 repetitions a night\n", historyPairs)
	fmt.Fprintf(&table, "%-40s %-7s %-8s %8s\n", "history", "nights", "series", "alarm")
	flat := func(int) float64 { return 1 }
	for _, c := range []struct {
		name            string
		nights          int
		targets         int
		nightCV, phi    float64
		level           func(int) float64
		onlyFirstTarget bool
	}{
		{"flat, CV 3 %", 14, 2, 0.03, 0, flat, false},
		{"flat, CV 3 %", 30, 2, 0.03, 0, flat, false},
		{"flat, CV 3 %, 4 targets", 14, 4, 0.03, 0, flat, false},
		{"flat, CV 5 %", 14, 2, 0.05, 0, flat, false},
		{"flat, CV 3 %, AR(1) 0.5 nights", 14, 2, 0.03, 0.5, flat, false},
		{"flat, CV 3 %, AR(1) 0.7 nights", 30, 2, 0.03, 0.7, flat, false},
		{"flat, CV 5 %, AR(1) 0.5 nights", 14, 2, 0.05, 0.5, flat, false},
		{"drift -1 %/night on target-0, CV 3 %", 14, 2, 0.03, 0, func(n int) float64 { return 1 - 0.01*float64(n) }, true},
		{"10 % drop 5 nights ago, CV 3 %", 14, 2, 0.03, 0, func(n int) float64 {
			if n >= 9 {
				return 0.9
			}
			return 1
		}, true},
		// Every cell of every target 7.5 % down from night 9 of 12: a step in every series,
		// which must not read as autocorrelation (and whiten itself away).
		{"every cell -7.5 % from night 9 of 12, CV 3 %", 12, 2, 0.03, 0, stepAt(8, 0.925), false},
	} {
		var rate float64
		b.Run(fmt.Sprintf("%s/nights=%d/targets=%d", c.name, c.nights, c.targets), func(b *testing.B) {
			for range b.N {
				rng := rand.New(rand.NewPCG(uint64(c.nights), uint64(1000*c.nightCV+100*c.phi)))
				fired := 0
				for range historyPairs {
					runs := simHistory(rng, c.nights, c.targets, 8, c.nightCV, c.phi, c.level)
					if c.onlyFirstTarget {
						// Undo the change on every target but the first.
						for night, r := range runs {
							f := c.level(night)
							for ti := 1; ti < len(r.Status.Targets); ti++ {
								for si := range r.Status.Targets[ti].Steps {
									r.Status.Targets[ti].Steps[si].QPS.Total /= f
									r.Status.Targets[ti].Steps[si].Latency.P95Ms *= f
								}
							}
						}
					}
					if History(runs, v1.RegressionPolicy{}).RegressedCells > 0 {
						fired++
					}
				}
				rate = float64(fired) / historyPairs
			}
			b.ReportMetric(rate, "alarm-rate")
		})
		fmt.Fprintf(&table, "%-40s %-7d %-8d %8.3f\n", c.name, c.nights, c.targets*8*2, rate)
	}
	fmt.Print("\n" + table.String())
}
