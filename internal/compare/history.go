package compare

import (
	"math"
	"sort"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
)

// MaxChangePoints is how many change points a History lists.
const MaxChangePoints = 10

// historyStopAfter ends a series' permutations once this many reached its statistic: a flat
// series costs a few hundred permutations, only a shifted one runs them all.
const historyStopAfter = 20

// historyPermutations is how many permutations a series may need: enough that its smallest
// p-value, 1/(P+1), is below alpha / series, the bar of the most significant series after the
// adjustment over all of them (at most 20000: 1024 cells x 2 metrics at alpha 0.1).
func historyPermutations(series int, alpha float64) int {
	return min(20000, max(199, int(math.Ceil(4*float64(series)/alpha))))
}

type point struct {
	run   string
	value float64
}

// History looks for a sustained shift in every cell of the newest run across runs (successful
// runs of a schedule, oldest first): the series of the cell's medians, one per run that measured
// it, goes through stats.ChangePoint (whitened by the nights' autocorrelation, pooled over all
// series: nights that stay high or low together are not shifts),
// and the p-values of all series are adjusted together (Benjamini-Hochberg): a shift counts when
// its adjusted q is below policy's alpha and it is at least the minimum effect. On a flat history
// the chance of any alarm in a night's analysis is then at most about alpha, however many cells
// the runs have (BenchmarkHistoryCalibration).
func History(runs []*v1.BenchmarkRun, regression v1.RegressionPolicy) v1.History {
	h := v1.History{Runs: int32(len(runs))}
	if len(runs) == 0 {
		return h
	}
	policy := NewPolicy(regression)
	newest := runs[len(runs)-1]
	h.Run = newest.Name
	// Per rule, the cells' series of medians.
	byRule := make([]map[cellKey][]point, len(policy.Rules))
	for ri := range byRule {
		byRule[ri] = map[cellKey][]point{}
	}
	var order []cellKey
	for _, run := range runs {
		ks, cs := samples(run)
		for _, k := range ks {
			c := cs[k]
			if run == newest {
				order = append(order, k)
			}
			for ri, r := range policy.Rules {
				if xs := r.Samples(c); positive(xs) {
					byRule[ri][k] = append(byRule[ri][k], point{run.Name, stats.Summarize(xs).Median})
				}
			}
		}
	}
	at := finishedAt(newest)
	alpha := policy.Alpha
	type candidate struct {
		cp     v1.ChangePoint
		ch     stats.Change
		effect float64
	}
	var cands []candidate
	var ps []float64
	type ruleSeries struct {
		rule   Rule
		series []point
	}
	var all []struct {
		k cellKey
		m ruleSeries
	}
	for _, k := range order {
		for ri, r := range policy.Rules {
			all = append(all, struct {
				k cellKey
				m ruleSeries
			}{k, ruleSeries{r, byRule[ri][k]}})
		}
	}
	perms := historyPermutations(len(all), alpha)
	// One autocorrelation for all series: they are the same nights on the same nodes.
	var allValues [][]float64
	for _, e := range all {
		values := make([]float64, len(e.m.series))
		for i, p := range e.m.series {
			values[i] = p.value
		}
		allValues = append(allValues, values)
	}
	phi := stats.PooledPhi(allValues, 0)
	h.Autocorrelation = round4(phi)
	for j, e := range all {
		k, m := e.k, e.m
		values := allValues[j]
		// Every series is tested and adjusted together: on a flat history, the chance that any
		// of a run's series reports a shift is what a user sees each night, not one series'.
		effect := minEffect(m.rule)
		ch, _ := stats.ChangePoint(values, stats.CPOptions{
			Alpha: alpha, MinEffect: effect, Permutations: perms, StopAfter: historyStopAfter, Seed: 1, Phi: phi,
		})
		if ch.Permutations == 0 {
			continue // too short to split
		}
		cp := v1.ChangePoint{
			Target: k.target, Workload: k.workload, Threads: k.threads, Metric: m.rule.Metric(), Since: m.series[ch.Index].run,
			Before: ch.Before, After: ch.After, ChangePercent: round1(ch.Delta * 100), P: round4(ch.P),
			Regressed: (ch.Delta < 0) == m.rule.HigherIsBetter(),
		}
		cands = append(cands, candidate{cp, ch, effect})
		ps = append(ps, ch.P)
	}
	var found []v1.ChangePoint
	for i, q := range stats.AdjustBH(ps) {
		c := cands[i]
		if q >= alpha || math.Abs(c.ch.Delta) < c.effect {
			continue
		}
		cp := c.cp
		cp.Q = round4(q)
		if cp.Regressed {
			for _, a := range policy.Acknowledged {
				if Covers(a, cp.Target, cp.Workload, cp.Threads, cp.Metric, at) {
					cp.Acknowledged = true
					break
				}
			}
		}
		found = append(found, cp)
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
			seen[cellKey{cp.Target, cp.Workload, cp.Threads}] = true
		}
	}
	return int32(len(seen))
}
