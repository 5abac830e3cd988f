package stats

import (
	"math/rand/v2"
	"testing"
)

// nightly returns a series of n nightly medians around 1000 with lognormal noise at cv, where
// level(i) multiplies the i-th point.
func nightly(seed uint64, n int, cv float64, level func(i int) float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 99))
	xs := lognormal(rng, n, 1000, cv)
	for i := range xs {
		xs[i] *= level(i)
	}
	return xs
}

func step(at int, factor float64) func(int) float64 {
	return func(i int) float64 {
		if i >= at {
			return factor
		}
		return 1
	}
}

// cpRate is the share of seeds 1..seeds for which ChangePoint finds a change in the series
// made by gen, and the share where it is also within ±1 of want (when want >= 0).
func cpRate(seeds int, gen func(seed uint64) []float64, opts CPOptions, want int) (found, placed float64, wrongSign int) {
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		opts.Seed = seed
		c, ok := ChangePoint(gen(seed), opts)
		if !ok {
			continue
		}
		found++
		if want >= 0 && c.Index >= want-1 && c.Index <= want+1 {
			placed++
		}
		if c.Delta > 0 {
			wrongSign++
		}
	}
	return found / float64(seeds), placed / float64(seeds), wrongSign
}

func TestChangePointStep(t *testing.T) {
	// A sustained 5 % drop at CV 2 % after `before` nights, seen for `after` nights. With only 3
	// points on one side this is a 2.5σ shift of 3 values, at the limit of what any test can
	// see after looking at every split: about three in four are found.
	for _, tc := range []struct {
		before, after int
		atLeast       float64
	}{{10, 3, 0.65}, {20, 3, 0.65}, {5, 5, 0.65}, {10, 5, 0.85}, {20, 8, 0.95}, {8, 20, 0.95}} {
		n := tc.before + tc.after
		gen := func(seed uint64) []float64 { return nightly(seed, n, 0.02, step(tc.before, 0.95)) }
		found, placed, wrong := cpRate(100, gen, CPOptions{Permutations: 199}, tc.before)
		t.Logf("5%% drop after %2d nights, %d nights after it: found %.2f, at the right night ±1 %.2f", tc.before, tc.after, found, placed)
		if found < tc.atLeast || wrong > 0 {
			t.Errorf("before=%d after=%d: found %.2f < %.2f, or %d changes upwards", tc.before, tc.after, found, tc.atLeast, wrong)
		}
	}
}

func TestChangePointTooShort(t *testing.T) {
	// 3 against 3 points: of the 20 ways to split 6 values into two halves, the best and its
	// mirror are 2, so no permutation test can go below p = 0.1, however clear the step.
	c, found := ChangePoint([]float64{100, 101, 99, 90, 91, 89}, CPOptions{})
	if found || c.Index != 3 || c.P < 0.05 {
		t.Errorf("3+3: got %+v found=%v, want the split at 3 with p >= 0.05", c, found)
	}
	if c, found := ChangePoint([]float64{1, 1, 1, 2, 2}, CPOptions{}); found || c.P != 1 {
		t.Errorf("5 points with MinSegment 3: got %+v found=%v, want P=1 not found", c, found)
	}
}

func TestChangePointFlat(t *testing.T) {
	// Flat series must not fire more often than alpha: the permutation test is exact.
	gen := func(seed uint64) []float64 { return nightly(seed, 30, 0.03, func(int) float64 { return 1 }) }
	found, _, _ := cpRate(1000, gen, CPOptions{Permutations: 199}, -1)
	t.Logf("flat series of 30 nights at CV 3%%: %.3f fired", found)
	if found > DefaultAlpha {
		t.Errorf("flat series fired in %.3f of the cases, more than alpha", found)
	}
	// One particular noisy series, CV 5 %: no change.
	if c, found := ChangePoint(nightly(1234, 40, 0.05, func(int) float64 { return 1 }), CPOptions{}); found {
		t.Errorf("flat CV 5%% series: found %+v", c)
	}
}

func TestChangePointDrift(t *testing.T) {
	// 0.3 % slower every night for 30 nights at CV 2 %: no two neighbours differ by more than
	// the noise, but the last nights are about 9 % below the first.
	for seed := uint64(1); seed <= 10; seed++ {
		xs := nightly(seed, 30, 0.02, func(i int) float64 { return 1 - 0.003*float64(i) })
		v := Compare(xs[len(xs)-2:len(xs)-1], xs[len(xs)-1:], Options{MinEffect: 0.05, HigherIsBetter: true})
		c, found := ChangePoint(xs, CPOptions{Seed: seed, MinEffect: 0.03})
		if !found || c.Delta > -0.03 || c.Index < 5 || c.Index > 25 || v.Kind == Regressed {
			t.Errorf("drift seed %d: found=%v %+v; last pair %s", seed, found, c, v.Kind)
		}
	}
}

func TestChangePointOptions(t *testing.T) {
	xs := nightly(5, 20, 0.02, step(10, 0.95))
	a, _ := ChangePoint(xs, CPOptions{Seed: 3})
	b, _ := ChangePoint(xs, CPOptions{Seed: 3})
	if a != b {
		t.Errorf("same seed, different results: %+v vs %+v", a, b)
	}
	// A significant 5 % change is not reported when 10 % is the minimum effect.
	if c, found := ChangePoint(xs, CPOptions{MinEffect: 0.10}); found || c.P >= DefaultAlpha {
		t.Errorf("MinEffect 10%%: got %+v found=%v, want significant but not found", c, found)
	}
	// Exact values: a clean step.
	c, found := ChangePoint([]float64{100, 101, 99, 100, 90, 91, 89, 90}, CPOptions{MinSegment: 2})
	if !found || c.Index != 4 || c.Before != 100 || c.After != 90 || !near(c.Delta, -0.1) {
		t.Errorf("clean step: got %+v found=%v", c, found)
	}
}
