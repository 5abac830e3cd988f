package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestAdjustBH(t *testing.T) {
	for _, tc := range []struct {
		ps, want []float64
	}{
		{nil, []float64{}},
		{[]float64{0.04}, []float64{0.04}},
		// Sorted: 0.01·4/1, 0.02·4/2, 0.03·4/3, 0.5·4/4 = 0.04, 0.04, 0.04, 0.5; returned in input order.
		{[]float64{0.5, 0.03, 0.01, 0.02}, []float64{0.5, 0.04, 0.04, 0.04}},
		// Monotone from the top: 0.04·2/1 = 0.08 would exceed the next one's 0.045·2/2.
		{[]float64{0.04, 0.045}, []float64{0.045, 0.045}},
		{[]float64{0.9, 1}, []float64{1, 1}},
	} {
		got := AdjustBH(tc.ps)
		if len(got) != len(tc.want) {
			t.Fatalf("AdjustBH(%v) = %v", tc.ps, got)
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("AdjustBH(%v) = %v, want %v", tc.ps, got, tc.want)
				break
			}
		}
	}
}

func TestRatio(t *testing.T) {
	reps := func(med float64) []float64 { return []float64{med, med * 1.01, med * 0.99, med * 1.02, med * 0.98} }
	tests := []struct {
		name      string
		pairs     []Pair
		wantRatio float64
		valid     bool
		spread    string
		reason    string
	}{
		{name: "no cells", reason: "no cell measured"},
		{name: "one cell, one repetition", pairs: []Pair{{Base: []float64{100}, Cur: []float64{90}}}, wantRatio: 0.9, reason: "single repetition"},
		{name: "one cell, five repetitions", pairs: []Pair{{Base: reps(100), Cur: reps(90)}}, wantRatio: 0.9, valid: true, spread: "within cells"},
		// Three cells of one repetition: the cells' disagreement is the only noise estimate.
		{name: "three cells, one repetition", pairs: []Pair{{Base: []float64{100}, Cur: []float64{91}}, {Base: []float64{200}, Cur: []float64{178}},
			{Base: []float64{400}, Cur: []float64{364}}}, wantRatio: math.Cbrt(0.91 * 0.89 * 0.91), valid: true, spread: "between cells"},
		{name: "identical repetitions", pairs: []Pair{{Base: []float64{5, 5}, Cur: []float64{5, 5}}}, wantRatio: 1, valid: true, spread: "none"},
		{name: "identical within, different between", pairs: []Pair{{Base: []float64{5, 5}, Cur: []float64{6, 6}}}, wantRatio: 1.2, reason: "identical within each run"},
		{name: "zeros are not measurements", pairs: []Pair{{Base: []float64{0, 0}, Cur: []float64{5, 5}}}, reason: "no cell measured"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Ratio(tc.pairs, RatioOptions{})
			if math.Abs(r.Ratio-tc.wantRatio) > 1e-9 || r.Valid() != tc.valid || !strings.HasPrefix(r.Spread, tc.spread) ||
				(tc.reason != "" && !strings.Contains(r.Reason, tc.reason)) || r.Confidence != 0.9 {
				t.Fatalf("%+v, want ratio %v valid %v spread %q reason %q", r, tc.wantRatio, tc.valid, tc.spread, tc.reason)
			}
			if r.Valid() && !(r.Low <= r.Ratio && r.Ratio <= r.High) {
				t.Errorf("interval [%v, %v] misses the estimate %v", r.Low, r.High, r.Ratio)
			}
		})
	}
}

// The interval's coverage is what it claims: over many simulated targets of 8 cells x 5
// repetitions (CV 5 %, a true ratio of 0.93) the 90 % interval holds the true ratio about 90 % of
// the time, and not much more (the larger of two noise estimates makes it a little wide).
func TestRatioCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sigma := math.Sqrt(math.Log1p(0.05 * 0.05))
	draw := func(med float64) []float64 {
		xs := make([]float64, 5)
		for i := range xs {
			xs[i] = med * math.Exp(sigma*rng.NormFloat64())
		}
		return xs
	}
	const trials = 2000
	covered := 0
	for range trials {
		var pairs []Pair
		for c := range 8 {
			m := 1000 * float64(c+1)
			pairs = append(pairs, Pair{Base: draw(m), Cur: draw(0.93 * m)})
		}
		if r := Ratio(pairs, RatioOptions{}); r.Low <= 0.93 && 0.93 <= r.High {
			covered++
		}
	}
	if rate := float64(covered) / trials; rate < 0.88 || rate > 0.97 {
		t.Errorf("coverage of the 90 %% interval %.3f, want about 0.90", rate)
	}
}

func TestPooledPhi(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	series := func(phi float64, n int) []float64 {
		xs := make([]float64, n)
		var s float64
		for i := range xs {
			s = phi*s + math.Sqrt(1-phi*phi)*rng.NormFloat64()
			xs[i] = 100 + 3*s
		}
		return xs
	}
	for _, tc := range []struct {
		phi    float64
		lo, hi float64
	}{{0, 0, 0.15}, {0.5, 0.38, 0.62}, {0.8, 0.65, 0.9}} {
		var all [][]float64
		for range 64 {
			all = append(all, series(tc.phi, 14))
		}
		if got := PooledPhi(all, 0); got < tc.lo || got > tc.hi {
			t.Errorf("PooledPhi of 64 series of 14 nights, AR(1) %.1f: %.3f, want within [%.2f, %.2f]", tc.phi, got, tc.lo, tc.hi)
		}
	}
	if got := PooledPhi([][]float64{{1, 2, 3}}, 0); got != 0 {
		t.Errorf("PooledPhi of a series too short to split: %v, want 0", got)
	}
}

func TestTQuantile(t *testing.T) {
	// Student's t table values.
	for _, c := range []struct{ df, p, want float64 }{
		{1, 0.975, 12.706}, {4, 0.975, 2.776}, {9, 0.975, 2.262}, {29, 0.975, 2.045}, {1000, 0.975, 1.962},
		{9, 0.025, -2.262}, {5, 0.5, 0},
	} {
		if got := TQuantile(c.df, c.p); math.Abs(got-c.want) > 0.001 {
			t.Errorf("TQuantile(%v, %v) = %.4f, want %.3f", c.df, c.p, got, c.want)
		}
	}
}
