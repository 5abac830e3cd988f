package compare

import (
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// nights is a schedule's history: n runs of two cells with 1 % noise between nights; level(i)
// scales mysql80@8's QPS on night i.
func nights(n int, level func(i int) float64) []*v1.BenchmarkRun {
	rng := rand.New(rand.NewPCG(7, 7))
	var runs []*v1.BenchmarkRun
	for i := range n {
		noise := func() float64 { return 1 + rng.NormFloat64()*0.01 }
		runs = append(runs, mkRun(fmt.Sprintf("nightly-%02d", i),
			meas{"mysql80", 1, 1000 * noise(), 1 * noise()},
			meas{"mysql80", 8, 8000 * level(i) * noise(), 2 * noise()}))
	}
	return runs
}

func TestHistoryFindsASustainedShift(t *testing.T) {
	// -8 % from night 10 on, for 5 nights: each night against the previous is within noise but
	// for the step night.
	runs := nights(15, func(i int) float64 {
		if i >= 10 {
			return 0.92
		}
		return 1
	})
	h := History(runs, v1.RegressionPolicy{})
	if h.Run != "nightly-14" || h.Runs != 15 || h.RegressedCells != 1 || len(h.ChangePoints) != 1 {
		t.Fatalf("history %+v", h)
	}
	cp := h.ChangePoints[0]
	if cp.Target != "mysql80" || cp.Threads != 8 || cp.Metric != v1.AckQPS || cp.Since != "nightly-10" || !cp.Regressed ||
		cp.ChangePercent > -6 || cp.P >= 0.05 {
		t.Errorf("change point %+v", cp)
	}
	// Acknowledged: listed, not counted.
	h = History(runs, v1.RegressionPolicy{Acknowledged: []v1.Acknowledgement{{Target: "mysql80", Metric: v1.AckQPS, Reason: "known"}}})
	if h.RegressedCells != 0 || len(h.ChangePoints) != 1 || !h.ChangePoints[0].Acknowledged {
		t.Errorf("acknowledged: %+v", h)
	}
}

func TestHistoryCatchesASlowDrift(t *testing.T) {
	// -0.5 % a night for 30 nights: no pair of neighbours differs by the 5 % minimum effect.
	runs := nights(30, func(i int) float64 { return 1 - 0.005*float64(i) })
	for i := 1; i < len(runs); i++ {
		if c := Compare(runs[i], runs[i-1], v1.RegressionPolicy{}); c.Summary.Verdict == v1.VerdictRegressed {
			t.Fatalf("night %d regressed against night %d: the drift is meant to be invisible pairwise", i, i-1)
		}
	}
	h := History(runs, v1.RegressionPolicy{})
	if h.RegressedCells != 1 || len(h.ChangePoints) == 0 || h.ChangePoints[0].Threads != 8 || !h.ChangePoints[0].Regressed {
		t.Errorf("history %+v", h)
	}
}

func TestHistoryOfAFlatOrShortSeriesIsQuiet(t *testing.T) {
	for _, n := range []int{0, 1, 5, 20} {
		h := History(nights(n, func(int) float64 { return 1 }), v1.RegressionPolicy{})
		if h.RegressedCells != 0 || len(h.ChangePoints) != 0 || h.Runs != int32(n) {
			t.Errorf("%d flat nights: %+v", n, h)
		}
	}
}

// A drop of every cell three nights before the newest is a step in every series: the pooled
// autocorrelation must not take it for nights that stay low together and whiten it away (which
// an estimate around each series' line alone did: it read the step as an autocorrelation at the
// 0.9 cap and found the drop in no history). Flat autocorrelated histories keep their calibration.
func TestHistoryFindsAStepOfEveryCell(t *testing.T) {
	if testing.Short() {
		t.Skip("100 simulated histories per case")
	}
	const histories = 100
	flat := func(int) float64 { return 1 }
	for _, c := range []struct {
		name        string
		nights      int
		phi         float64
		level       func(int) float64
		least, most float64
	}{
		{"every cell -7.5 % from night 9 of 12", 12, 0, stepAt(8, 0.925), 0.75, 1},
		{"flat, AR(1) 0.5 nights", 14, 0.5, flat, 0, 0.05},
	} {
		rng := rand.New(rand.NewPCG(uint64(c.nights), 77))
		fired := 0
		var phis []float64
		for range histories {
			h := History(simHistory(rng, c.nights, 2, 8, 0.03, c.phi, c.level), v1.RegressionPolicy{})
			phis = append(phis, h.Autocorrelation)
			if h.RegressedCells > 0 {
				fired++
			}
		}
		rate := float64(fired) / histories
		if rate < c.least || rate > c.most {
			t.Errorf("%s: harmful change points in %.2f of %d histories, want within [%.2f, %.2f]; autocorrelations %v",
				c.name, rate, histories, c.least, c.most, phis[:10])
		}
	}
}
