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
// What it can see (BenchmarkChangePoint, alpha 0.05): a 5 % step at CV 2 % with 10-20 nights
// before it is found in about 75 % of histories when it has lasted 3 nights, 86-93 % after 4,
// 92-98 % after 5 and 98-100 % after 8; flat histories fire in at most alpha of the cases
// (4.4 % for 30 nights). Short series are blind: 3 nights against 3 can never go below p = 0.1
// (2 of the 20 ways to split 6 values), so with MinSegment 3 a series needs 8 points or more.
// Cost: O(Permutations · n²/2), about 0.5 ms for 60 points and 199 permutations on one core
// (some 2-3 ms with the default 999).
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
	rowSum := make([]float64, n)
	var total float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			d := math.Abs(series[i] - series[j])
			dist[i*n+j] = d
			rowSum[i] += d
		}
		total += rowSum[i]
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	stat, idx := maxEnergy(dist, rowSum, total, order, minSeg)

	rng := rand.New(rand.NewPCG(opts.Seed, 0x5eed_c4a9_e9017))
	// A permutation that reproduces the observed split (or its mirror image) must count as "at
	// least as large" even when its sums were added up in another order.
	threshold := stat - 1e-9*math.Abs(stat)
	exceed := 0
	for r := 0; r < perms; r++ {
		rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		if s, _ := maxEnergy(dist, rowSum, total, order, minSeg); s >= threshold {
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
// order (dist is the n×n distance matrix of the original series, rowSum its row sums and total
// the sum of all its entries) with at least minSeg points on each side, and the split index. It
// runs in O(n²/2): moving one point from the right segment to the left updates the sums of
// distances within the left segment and between the segments, and the within-right sum is what
// remains of the total.
func maxEnergy(dist, rowSum []float64, total float64, order []int, minSeg int) (float64, int) {
	n := len(order)
	half := total / 2 // sum over unordered pairs
	var withinL, between float64
	best, bestIdx := math.Inf(-1), minSeg
	for t := 0; t < n-minSeg; t++ {
		// Move point t from the right segment to the left: the left segment becomes [0, t].
		row := dist[order[t]*n : (order[t]+1)*n]
		var toLeft float64
		for _, o := range order[:t] {
			toLeft += row[o]
		}
		toRight := rowSum[order[t]] - toLeft
		withinL += toLeft
		between += toRight - toLeft
		if t+1 < minSeg {
			continue
		}
		withinR := half - withinL - between
		m, k := float64(t+1), float64(n-t-1)
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
