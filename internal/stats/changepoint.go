package stats

import (
	"math"
	"math/rand/v2"
)

// CPOptions configures ChangePoint. The zero value is usable.
type CPOptions struct {
	// Alpha is the significance level of the permutation test; 0 means DefaultAlpha.
	Alpha float64
	// MinSegment is the fewest points on each side of a change; 0 means 3. A shift seen on
	// fewer nights is left to Compare.
	MinSegment int
	// MinEffect: a change whose medians differ by less than this fraction is not reported even
	// when significant (0: any significant change).
	MinEffect float64
	// Permutations is the number of random permutations of the series for the p-value; 0
	// means 999. The smallest p-value possible is 1/(Permutations+1).
	Permutations int
	// Seed seeds the permutations, so that a history always gives the same answer (0 is a
	// valid seed).
	Seed uint64
}

// Change describes the most likely change point of a series.
type Change struct {
	// Index is the first point of the new level: series[:Index] is before, series[Index:] after.
	Index int `json:"index"`
	// Before and After are the medians of the two segments; Delta is After/Before - 1 (0 when
	// Before is 0).
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	Delta  float64 `json:"delta"`
	// P is the permutation p-value of the E-Divisive statistic, maximised over all splits, in
	// [1/(Permutations+1), 1]. It is 1 when the series is too short to split.
	P float64 `json:"p"`
	// Stat is the E-Divisive statistic at Index (in the series' units).
	Stat float64 `json:"stat"`
}

// ChangePoint looks for one sustained shift in the level of series (e.g. a cell's median QPS,
// one point per nightly run, oldest first; meant for 5-60 points) and returns the most likely
// split, and whether it is significant: P < Alpha and |Delta| >= MinEffect.
//
// For every split with at least MinSegment points on each side it computes the E-Divisive
// (energy distance) statistic
//
//	Q(τ) = m·k/(m+k) · (2·mean|x-y| - mean|x-x'| - mean|y-y'|)
//
// over the m points before and k points after τ (x, x' before, y, y' after, distinct pairs), and
// takes the split with the largest Q. The p-value is the share of random permutations of the
// series, seeded with Seed, whose largest Q is at least as large (plus one, so it is never 0):
// under "no change" every order is equally likely, so the test is exact whatever the noise.
// A slow drift has no single step but still splits into a lower and a higher half, so it is
// found too (with Index somewhere in the middle of the drift).
//
// Only the strongest change is reported; to look for another, call ChangePoint again on one of
// the two segments.
func ChangePoint(series []float64, opts CPOptions) (Change, bool) {
	alpha := opts.Alpha
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	minSeg := opts.MinSegment
	if minSeg <= 0 {
		minSeg = 3
	}
	perms := opts.Permutations
	if perms <= 0 {
		perms = 999
	}
	n := len(series)
	if n < 2*minSeg {
		return Change{P: 1}, false
	}

	// Pairwise distances, indexed through an order so permutations need no copy of the matrix.
	dist := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			dist[i*n+j] = math.Abs(series[i] - series[j])
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	stat, idx := maxEnergy(dist, order, minSeg)

	rng := rand.New(rand.NewPCG(opts.Seed, 0x5eed_c4a9_e9017))
	exceed := 0
	for r := 0; r < perms; r++ {
		rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		if s, _ := maxEnergy(dist, order, minSeg); s >= stat {
			exceed++
		}
	}

	c := Change{
		Index:  idx,
		Before: median(sorted(series[:idx])),
		After:  median(sorted(series[idx:])),
		P:      float64(exceed+1) / float64(perms+1),
		Stat:   stat,
	}
	if c.Before != 0 {
		c.Delta = c.After/c.Before - 1
	}
	return c, c.P < alpha && math.Abs(c.Delta) >= opts.MinEffect
}

// maxEnergy returns the largest E-Divisive statistic over the splits of the series taken in
// order (dist is the n×n distance matrix of the original series) with at least minSeg points on
// each side, and the split index. It runs in O(n²): moving one point from the right segment to
// the left updates the three sums of distances incrementally.
func maxEnergy(dist []float64, order []int, minSeg int) (float64, int) {
	n := len(order)
	d := func(a, b int) float64 { return dist[order[a]*n+order[b]] }

	// Start with everything on the right: within = all pairs, left and between empty.
	var withinL, withinR, between float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			withinR += d(i, j)
		}
	}
	best, bestIdx := math.Inf(-1), minSeg
	for t := 0; t < n-minSeg; t++ {
		// Move point t from the right segment to the left: the left segment becomes [0, t].
		var toLeft, toRight float64
		for i := 0; i < t; i++ {
			toLeft += d(i, t)
		}
		for j := t + 1; j < n; j++ {
			toRight += d(t, j)
		}
		withinL += toLeft
		withinR -= toRight
		between += toRight - toLeft
		m, k := float64(t+1), float64(n-t-1)
		if t+1 < minSeg {
			continue
		}
		e := 2 * between / (m * k)
		if m > 1 {
			e -= withinL / (m * (m - 1) / 2)
		}
		if k > 1 {
			e -= withinR / (k * (k - 1) / 2)
		}
		if q := m * k / (m + k) * e; q > best {
			best, bestIdx = q, t+1
		}
	}
	return best, bestIdx
}
