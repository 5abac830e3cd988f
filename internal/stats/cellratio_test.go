package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestRatioOfCells(t *testing.T) {
	base := []float64{100, 102, 98, 101, 99}
	// The same rounds 10 % down: paired, the interval is tight around 0.9.
	cur := []float64{90, 91.8, 88.2, 90.9, 89.1}
	pairs := [][2]int{{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 4}}
	r := RatioOfCells(base, cur, pairs, 0)
	if !r.Paired || r.N != 5 || math.Abs(r.Ratio-0.9) > 1e-9 || r.Low < 0.899 || r.High > 0.901 || r.WithinNoise() {
		t.Errorf("paired 10 %% drop: %+v", r)
	}
	// Unpaired, the sides' spread counts: still excludes 1, but wider.
	u := RatioOfCells(base, cur, nil, 0)
	if u.Paired || u.Low > 0.89 || u.High < 0.91 || u.High >= 1 {
		t.Errorf("unpaired 10 %% drop: %+v", u)
	}
	// One repetition: a ratio, no interval.
	if o := RatioOfCells([]float64{100}, []float64{63}, nil, 0); o.Valid() || o.Ratio != 0.63 {
		t.Errorf("one repetition: %+v", o)
	}
	// Identical noisy targets (CV 30 %): the interval holds 1 in about 95 % of draws, whatever
	// the ratio of their medians.
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func() []float64 {
		xs := make([]float64, 5)
		for i := range xs {
			xs[i] = 1000 * math.Exp(0.3*rng.NormFloat64())
		}
		return xs
	}
	within := 0
	for range 2000 {
		if RatioOfCells(draw(), draw(), nil, 0.95).WithinNoise() {
			within++
		}
	}
	if rate := float64(within) / 2000; rate < 0.93 || rate > 0.97 {
		t.Errorf("A/A intervals holding 1: %.3f, want about 0.95", rate)
	}
}
