package compare

import (
	"math/rand/v2"
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// level is n nights around base with 1 % noise, multiplied by step from night at on (at < 0: flat).
func level(seed uint64, n int, base float64, at int, step float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, seed))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = base * (1 + rng.NormFloat64()*0.01)
		if at >= 0 && i >= at {
			xs[i] *= step
		}
	}
	return xs
}

func TestShifts(t *testing.T) {
	for _, tc := range []struct {
		name           string
		series         [][]float64
		higherIsBetter bool
		policy         v1.RegressionPolicy
		// want is the Index found per series, -1 for none.
		want      []int
		regressed []bool
	}{
		{name: "flat", series: [][]float64{level(1, 14, 1000, -1, 1), level(2, 14, 8000, -1, 1)},
			higherIsBetter: true, want: []int{-1, -1}},
		{name: "a 10 % drop at night 8 of one cell", series: [][]float64{level(1, 14, 1000, -1, 1), level(2, 14, 8000, 8, 0.9)},
			higherIsBetter: true, want: []int{-1, 8}, regressed: []bool{false, true}},
		{name: "both cells of a target drop 10 % at night 9", series: [][]float64{level(1, 16, 1000, 9, 0.9),
			level(2, 16, 8000, 9, 0.9), level(3, 16, 1100, -1, 1), level(4, 16, 8800, -1, 1)},
			higherIsBetter: true, want: []int{9, 9, -1, -1}, regressed: []bool{true, true, false, false}},
		{name: "a 10 % rise of throughput is no regression", series: [][]float64{level(3, 14, 8000, 6, 1.1), level(1, 14, 1000, -1, 1)},
			higherIsBetter: true, want: []int{6, -1}, regressed: []bool{false}},
		{name: "latency up 20 % is a regression", series: [][]float64{level(4, 14, 2.5, 7, 1.2), level(1, 14, 2, -1, 1), level(6, 14, 3, -1, 1)},
			higherIsBetter: false, want: []int{7, -1, -1}, regressed: []bool{true}},
		{name: "below the minimum effect", series: [][]float64{level(5, 14, 8000, 7, 0.97), level(1, 14, 1000, -1, 1)},
			higherIsBetter: true, want: []int{-1, -1}},
		{name: "the policy's smaller minimum effect", series: [][]float64{level(7, 14, 8000, 7, 0.96), level(1, 14, 1000, -1, 1), level(6, 14, 3000, -1, 1)},
			higherIsBetter: true, policy: v1.RegressionPolicy{QPSDropPercent: ptrTo(2.0)}, want: []int{7, -1, -1}, regressed: []bool{true}},
		// A lone series' step is no autocorrelation either: the estimate fits the step before it
		// measures how nights stay low together.
		{name: "a lone stepped series", series: [][]float64{level(2, 14, 8000, 7, 0.9)}, higherIsBetter: true, want: []int{7}, regressed: []bool{true}},
		{name: "too short to split", series: [][]float64{{1000, 1000, 900, 900, 900}}, higherIsBetter: true, want: []int{-1}},
		{name: "no series", want: []int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := Shifts(tc.series, tc.higherIsBetter, tc.policy)
			if len(got) != len(tc.want) {
				t.Fatalf("%d results for %d series", len(got), len(tc.series))
			}
			for i, s := range got {
				switch {
				case tc.want[i] < 0 && s != nil:
					t.Errorf("series %d: shift %+v, want none", i, *s)
				case tc.want[i] >= 0 && s == nil:
					t.Errorf("series %d: no shift, want one at %d", i, tc.want[i])
				case s != nil && (s.Index != tc.want[i] || s.Regressed != tc.regressed[i] || s.Q < s.P || s.Q >= 0.05):
					t.Errorf("series %d: shift %+v, want index %d regressed %v with p <= q < 0.05", i, *s, tc.want[i], tc.regressed[i])
				}
			}
		})
	}
}
