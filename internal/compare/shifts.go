package compare

import (
	"math"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
)

// Shift is the sustained change of level History would report in one series.
type Shift struct {
	// Index is the first point of the new level.
	Index int `json:"index"`
	// Before and After are the medians of the points before and from Index.
	Before        float64 `json:"before"`
	After         float64 `json:"after"`
	ChangePercent float64 `json:"changePercent"`
	// P is the series' permutation p-value, Q the p-value adjusted over all series.
	P float64 `json:"p"`
	Q float64 `json:"q"`
	// Regressed: the change goes the harmful way (throughput down, latency up).
	Regressed bool `json:"regressed"`
}

// Shifts looks for a sustained shift in each series (one metric's values, oldest first: a
// cell's medians over nights, as a results database holds them) the way History does for the
// runs in the cluster: stats.ChangePoint on each series whitened by the autocorrelation pooled
// over all of them, the p-values adjusted together (Benjamini-Hochberg), a shift kept when its q
// is below the policy's alpha and it is at least the minimum effect of the policy's first rule
// harmful in the same direction (the QPS drop for a metric where higher is better, else the p95
// rise). The result has one entry per series, nil
// where none was found; phi is the autocorrelation removed.
func Shifts(series [][]float64, higherIsBetter bool, policy v1.RegressionPolicy) (shifts []*Shift, phi float64) {
	shifts = make([]*Shift, len(series))
	p := NewPolicy(policy)
	alpha, effect := p.Alpha, minEffect(p.ruleFor(higherIsBetter))
	phi = stats.PooledPhi(series, 0)
	perms := historyPermutations(len(series), alpha)
	var tested []int
	var ps []float64
	changes := make([]stats.Change, len(series))
	for i, xs := range series {
		ch, _ := stats.ChangePoint(xs, stats.CPOptions{
			Alpha: alpha, MinEffect: effect, Permutations: perms, StopAfter: historyStopAfter, Seed: 1, Phi: phi,
		})
		if ch.Permutations == 0 {
			continue // too short to split
		}
		changes[i] = ch
		tested = append(tested, i)
		ps = append(ps, ch.P)
	}
	for j, q := range stats.AdjustBH(ps) {
		i := tested[j]
		ch := changes[i]
		if q >= alpha || math.Abs(ch.Delta) < effect {
			continue
		}
		shifts[i] = &Shift{Index: ch.Index, Before: ch.Before, After: ch.After, ChangePercent: round1(ch.Delta * 100),
			P: round4(ch.P), Q: round4(q), Regressed: (ch.Delta < 0) == higherIsBetter}
	}
	return shifts, round4(phi)
}
