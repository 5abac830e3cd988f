package stats

import (
	"strings"
	"testing"
)

func scale(xs []float64, f float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * f
	}
	return out
}

func TestCompare(t *testing.T) {
	qps := Options{MinEffect: 0.05, HigherIsBetter: true}
	lat := Options{MinEffect: 0.10, HigherIsBetter: false}
	base5 := []float64{1000, 1010, 990, 1005, 995}
	lat5 := []float64{10, 10.1, 9.9, 10.05, 9.95}
	tight8 := []float64{1000, 1000.5, 1001, 1001.5, 1002, 1002.5, 1003, 1003.5}
	// Two interleaved samples of the same process, spread ±0.5 %.
	eqBase := []float64{995, 997, 999, 1001, 1003, 1005, 1000, 998}
	eqCur := []float64{996, 998, 1000, 1002, 1004, 994, 1001, 999}
	// Interleaved but spread ±10 %: nothing is significant, nothing is ruled out.
	noisyBase := []float64{900, 1000, 1100, 950, 1050}
	noisyCur := []float64{880, 990, 1090, 940, 1020}

	for _, tc := range []struct {
		name      string
		base, cur []float64
		opts      Options
		kind      Kind
		neededN   int
		reason    string // substring of Reason
	}{
		{"qps drop 10% n=5", base5, scale(base5, 0.9), qps, Regressed, 0, "minimum effect"},
		{"qps rise 10% n=5", base5, scale(base5, 1.1), qps, Improved, 0, "minimum effect"},
		{"latency rise 20% n=5", lat5, scale(lat5, 1.2), lat, Regressed, 0, "minimum effect"},
		{"latency drop 20% n=5", lat5, scale(lat5, 0.8), lat, Improved, 0, "minimum effect"},
		{"significant but below MinEffect", tight8, scale(tight8, 0.99), qps, NoChange, 0, "below the 5% minimum effect"},
		{"n=1 vs n=1 (today's single samples)", []float64{1000}, []float64{822}, qps, Inconclusive, 4, "4 repetitions per run needed"},
		{"n=1 vs n=1 identical", []float64{1000}, []float64{1000}, qps, Inconclusive, 4, "cannot reach"},
		{"n=3 vs n=3 disjoint", base5[:3], scale(base5[:3], 0.8), qps, Inconclusive, 4, "best possible p=0.1"},
		{"n=10 vs n=1: one more repetition", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, []float64{0.5}, qps, Inconclusive, 2, "2 repetitions"},
		{"alpha 0.01 needs 5", base5[:4], scale(base5[:4], 0.8), Options{Alpha: 0.01, MinEffect: 0.05, HigherIsBetter: true}, Inconclusive, 5, "p < 0.01"},
		{"empty current run", base5, nil, qps, Inconclusive, 3, "no samples"},
		{"baseline median 0", []float64{0, 0, 0, 0}, []float64{1, 1, 1, 1}, qps, Inconclusive, 0, "baseline median is 0"},
		{"equivalent within MinEffect", eqBase, eqCur, qps, NoChange, 0, "is within ±5%"},
		{"all values equal, n=5", []float64{7, 7, 7, 7, 7}, []float64{7, 7, 7, 7, 7}, qps, NoChange, 0, "within"},
		{"not significant, noisy", noisyBase, noisyCur, qps, Inconclusive, 0, "does not rule out ±5%"},
		{"not significant, MinEffect 0", eqBase, eqCur, Options{HigherIsBetter: true}, Inconclusive, 0, "no minimum effect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Compare(tc.base, tc.cur, tc.opts)
			if v.Kind != tc.kind || v.NeededN != tc.neededN || !strings.Contains(v.Reason, tc.reason) {
				t.Fatalf("got %s NeededN=%d reason %q (%+v); want %s NeededN=%d reason containing %q",
					v.Kind, v.NeededN, v.Reason, v, tc.kind, tc.neededN, tc.reason)
			}
			t.Logf("%s: %s", v.Kind, v.Reason)
		})
	}
}

func TestCompareFields(t *testing.T) {
	base := []float64{1000, 1010, 990, 1005, 995}
	v := Compare(base, scale(base, 0.9), Options{MinEffect: 0.05, HigherIsBetter: true})
	if v.Base != 1000 || v.Cur != 900 || !near(v.Delta, -0.1) || !near(v.P, 2.0/252) {
		t.Fatalf("got %+v", v)
	}
	// The 90 % Moses interval of the shift for 5 vs 5 is [D(5), D(21)] of the 25 differences.
	if !(v.DeltaLow < -0.1 && -0.1 < v.DeltaHigh && v.DeltaHigh < -0.05) || !near(v.DeltaConfidence, 1-2*12.0/252) {
		t.Fatalf("interval [%v, %v] at %v", v.DeltaLow, v.DeltaHigh, v.DeltaConfidence)
	}
	if base[0] != 1000 {
		t.Fatal("Compare modified its input")
	}
}

func TestMinPAndRequiredRepetitions(t *testing.T) {
	for _, tc := range []struct {
		n1, n2 int
		p      float64
	}{{0, 5, 1}, {1, 1, 1}, {1, 2, 2.0 / 3}, {3, 3, 0.1}, {3, 4, 2.0 / 35}, {4, 4, 2.0 / 70}, {5, 5, 2.0 / 252}, {10, 1, 2.0 / 11}} {
		if got := MinP(tc.n1, tc.n2); !near(got, tc.p) {
			t.Errorf("MinP(%d, %d) = %v, want %v", tc.n1, tc.n2, got, tc.p)
		}
	}
	for _, tc := range []struct {
		n1, n2 int
		alpha  float64
		want   int
	}{{0, 0, 0.05, 4}, {1, 1, 0.05, 4}, {0, 0, 0.1, 4}, {0, 0, 0.11, 3}, {0, 0, 0.01, 5}, {0, 0, 0.001, 7},
		{10, 1, 0.05, 2}, {5, 0, 0.05, 3}, {50, 50, 0.05, 1}} {
		if got := RequiredRepetitions(tc.n1, tc.n2, tc.alpha); got != tc.want {
			t.Errorf("RequiredRepetitions(%d, %d, %v) = %d, want %d", tc.n1, tc.n2, tc.alpha, got, tc.want)
		}
	}
}
