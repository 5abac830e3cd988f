package compare

import (
	"math"
	"sort"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
)

// MaxChangePoints is how many change points a History lists.
const MaxChangePoints = 10

// historyPermutations keeps a schedule's analysis cheap (up to 1024 cells x 2 metrics, once per
// compared run): the smallest p-value is 1/200, well below any sensible alpha.
const historyPermutations = 199

type point struct {
	run   string
	value float64
}

// History looks for a sustained shift in every cell of the newest run across runs (successful
// runs of a schedule, oldest first): the series of the cell's medians, one per run that measured
// it, goes through stats.ChangePoint at policy's alpha with the percentages as minimum effect.
func History(runs []*v1.BenchmarkRun, policy v1.RegressionPolicy) v1.History {
	h := v1.History{Runs: int32(len(runs))}
	if len(runs) == 0 {
		return h
	}
	newest := runs[len(runs)-1]
	h.Run = newest.Name
	qps := map[cellKey][]point{}
	p95 := map[cellKey][]point{}
	var order []cellKey
	for _, run := range runs {
		ks, cs := samples(run)
		for _, k := range ks {
			c := cs[k]
			if run == newest {
				order = append(order, k)
			}
			qps[k] = append(qps[k], point{run.Name, stats.Summarize(c.QPS).Median})
			if positive(c.P95Ms) {
				p95[k] = append(p95[k], point{run.Name, stats.Summarize(c.P95Ms).Median})
			}
		}
	}
	at := finishedAt(newest)
	var found []v1.ChangePoint
	for _, k := range order {
		for _, m := range []struct {
			metric         v1.AckMetric
			series         []point
			minEffect      float64
			higherIsBetter bool
		}{
			{v1.AckQPS, qps[k], policy.QPSDropPercentOrDefault() / 100, true},
			{v1.AckP95, p95[k], policy.P95RisePercentOrDefault() / 100, false},
		} {
			values := make([]float64, len(m.series))
			for i, p := range m.series {
				values[i] = p.value
			}
			ch, ok := stats.ChangePoint(values, stats.CPOptions{
				Alpha: policy.AlphaOrDefault(), MinEffect: m.minEffect, Permutations: historyPermutations, Seed: 1,
			})
			if !ok {
				continue
			}
			cp := v1.ChangePoint{
				Target: k.target, Threads: k.threads, Metric: m.metric, Since: m.series[ch.Index].run,
				Before: ch.Before, After: ch.After, ChangePercent: round1(ch.Delta * 100), P: round4(ch.P),
				Regressed: (ch.Delta < 0) == m.higherIsBetter,
			}
			if cp.Regressed {
				for _, a := range policy.Acknowledged {
					if Covers(a, k.target, k.threads, m.metric, at) {
						cp.Acknowledged = true
						break
					}
				}
			}
			found = append(found, cp)
		}
	}
	// A cell shifted in both metrics counts once.
	h.RegressedCells = countCells(found)
	sort.SliceStable(found, func(i, j int) bool {
		ai, aj := found[i].Regressed && !found[i].Acknowledged, found[j].Regressed && !found[j].Acknowledged
		if ai != aj {
			return ai
		}
		return math.Abs(found[i].ChangePercent) > math.Abs(found[j].ChangePercent)
	})
	if len(found) > MaxChangePoints {
		found = found[:MaxChangePoints]
	}
	h.ChangePoints = found
	return h
}

// countCells counts the cells with a harmful, unacknowledged change point.
func countCells(cps []v1.ChangePoint) int32 {
	seen := map[cellKey]bool{}
	for _, cp := range cps {
		if cp.Regressed && !cp.Acknowledged {
			seen[cellKey{cp.Target, cp.Threads}] = true
		}
	}
	return int32(len(seen))
}
