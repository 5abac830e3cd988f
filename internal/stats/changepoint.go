package stats

import (
	"math"
	"math/rand/v2"
	"sync"

	moremath "github.com/aclements/go-moremath/stats"
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
	// StopAfter ends the permutations early once this many have reached the observed
	// statistic (Besag and Clifford's sequential Monte Carlo p-value, h/L after L permutations):
	// a series with no change stops after a few dozen, one with a strong change runs all of
	// Permutations, so many permutations (the resolution a many-series adjustment needs) cost
	// little. 0: run them all.
	StopAfter int
	// Phi, when above 0, removes that lag-1 autocorrelation before testing: nights that stay
	// high or low for a few nights in a row (a noisy neighbour, a slow disk that week) look like
	// shifts to a test that assumes independent nights. The series x is tested as
	// x[t] - Phi·x[t-1] (a shift of d becomes one of (1-Phi)·d and a one-night spike); Before,
	// After and Delta still describe the original series. PooledPhi estimates it from many
	// series of the same nights: one series of 10-30 nights is too short to estimate it.
	Phi float64
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
	// Phi is the lag-1 autocorrelation removed (Whiten), 0 otherwise.
	Phi float64 `json:"phi,omitempty"`
	// Permutations is how many permutations the p-value was computed from.
	Permutations int `json:"permutations"`
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
	phi := math.Max(0, math.Min(0.9, opts.Phi))
	var idx, done int
	var stat, p float64
	if phi > 0 && n-1 >= 2*minSeg {
		// The split and the levels are the original series'; only the p-value comes from the
		// whitened one (where a shift is a smaller step plus a one-night spike).
		idx, stat, _, _ = energyTest(series, minSeg, 0, 0, opts.Seed)
		w := make([]float64, n-1)
		for t := 1; t < n; t++ {
			w[t-1] = series[t] - phi*series[t-1]
		}
		_, _, p, done = energyTest(w, minSeg, perms, opts.StopAfter, opts.Seed)
	} else {
		phi = 0
		idx, stat, p, done = energyTest(series, minSeg, perms, opts.StopAfter, opts.Seed)
	}
	c := Change{
		Index:        idx,
		Before:       median(sorted(series[:idx])),
		After:        median(sorted(series[idx:])),
		P:            p,
		Stat:         stat,
		Phi:          phi,
		Permutations: done,
	}
	if c.Before != 0 {
		c.Delta = c.After/c.Before - 1
	}
	return c, c.P < alpha && math.Abs(c.Delta) >= opts.MinEffect
}

// energyTest finds the split of series with the largest E-Divisive statistic and its
// permutation p-value: (exceedances+1)/(permutations+1), or, when stopAfter permutations
// reached the statistic before all perms ran, stopAfter over the permutations run.
func energyTest(series []float64, minSeg, perms, stopAfter int, seed uint64) (idx int, stat, p float64, done int) {
	n := len(series)
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
	stat, idx = maxEnergy(dist, rowSum, total, order, minSeg)

	rng := rand.New(rand.NewPCG(seed, 0x5eed_c4a9_e9017))
	// A permutation that reproduces the observed split (or its mirror image) must count as "at
	// least as large" even when its sums were added up in another order.
	threshold := stat - 1e-9*math.Abs(stat)
	exceed := 0
	for done = 0; done < perms; {
		rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		done++
		if s, _ := maxEnergy(dist, rowSum, total, order, minSeg); s >= threshold {
			exceed++
			if stopAfter > 0 && exceed >= stopAfter {
				return idx, stat, float64(exceed) / float64(done), done
			}
		}
	}
	return idx, stat, float64(exceed+1) / float64(perms+1), done
}

// PooledPhi estimates the lag-1 autocorrelation shared by several series of the same nights
// (a schedule's cells). Each series' residuals around its line (plus a step, when a jump at one
// split shared by all series, at least minSegment points from either end and counted from the
// newest night, fits them clearly better: see rawLag1), scaled to the same weight, are pooled
// into one raw lag-1 correlation; that raw value is badly biased low for
// 10-30 nights (the fit absorbs much of an autocorrelated wander), so it is inverted by
// simulation: the φ in [0, 0.9] whose AR(1) series of the same length and number, put through the same fit,
// give the same raw value on average (indirect inference, with a fixed seed so the answer is
// reproducible; the bias of the fit is then the simulation's too, and cancels).
// Around a line, because a slow drift is what the change-point test must find, and around a
// mean a drift looks like strong autocorrelation; with a step, because a level shift is too: a
// clean drop of every cell three nights before the newest, around a line alone, leaves
// residuals that stay high then low, reads as φ near the 0.9 cap, and whitening by that removes
// the very shift the test looks for. Series shorter than 2·minSegment are left out (0: 3).
func PooledPhi(series [][]float64, minSegment int) float64 {
	if minSegment <= 0 {
		minSegment = 3
	}
	var kept [][]float64
	points := 0
	for _, xs := range series {
		if len(xs) >= 2*minSegment {
			kept = append(kept, xs)
			points += len(xs)
		}
	}
	if len(kept) == 0 {
		return 0
	}
	raw, ok := rawLag1(kept, minSegment)
	if !ok {
		return 0
	}
	n := int(math.Round(float64(points) / float64(len(kept))))
	grid := rawLag1Grid(n, min(len(kept), maxGridSeries), minSegment)
	if raw <= grid[0] {
		return 0
	}
	for i := 1; i < len(grid); i++ {
		if raw <= grid[i] {
			// Linear between the grid's points (rawLag1's mean grows with φ).
			f := (raw - grid[i-1]) / (grid[i] - grid[i-1])
			return phiStep * (float64(i-1) + f)
		}
	}
	return phiStep * float64(len(grid)-1)
}

// phiStep is the spacing of rawLag1Grid's φ values, from 0 to 0.9.
const phiStep = 0.025

// rawGrids caches rawLag1Grid by series length, number of series and minimum segment.
var rawGrids sync.Map

type gridKey struct{ n, k, minSeg int }

// maxGridSeries bounds the number of series the simulation pools: beyond a few dozen, where the
// common split falls hardly depends on how many series share it.
const maxGridSeries = 32

// rawLag1Grid is expectedRawLag1 at φ = 0, phiStep, ... 0.9 for k series of length n, computed
// once per shape.
func rawLag1Grid(n, k, minSeg int) []float64 {
	key := gridKey{n, k, minSeg}
	if g, ok := rawGrids.Load(key); ok {
		return g.([]float64)
	}
	steps := int(math.Round(0.9 / phiStep))
	g := make([]float64, steps+1)
	for i := range g {
		g[i] = expectedRawLag1(phiStep*float64(i), n, k, minSeg)
	}
	// Keep it increasing, so the inversion is well defined despite simulation noise.
	for i := 1; i < len(g); i++ {
		g[i] = math.Max(g[i], g[i-1]+1e-9)
	}
	rawGrids.Store(key, g)
	return g
}

// rawLag1 is the pooled lag-1 correlation of the series' residuals around their lines, or, when
// a step at one split (counted from the newest point) shared by all series fits them clearly
// better, around their lines with that step: a shift of many series on one night is removed,
// while nights that merely wander rarely pass the bar (and the simulation behind the inversion
// applies the same bar, so its choices are accounted for).
func rawLag1(series [][]float64, minSeg int) (float64, bool) {
	shortest := len(series[0])
	points := 0
	for _, xs := range series {
		shortest = min(shortest, len(xs))
		points += len(xs)
	}
	best := make([][]float64, len(series))
	var lineSS float64
	for i, xs := range series {
		best[i] = detrend(xs)
		lineSS += sumSquares(best[i])
	}
	var step [][]float64
	stepSS := math.Inf(1)
	splits := 0
	for last := minSeg; last <= shortest-minSeg; last++ {
		splits++
		var all [][]float64
		var ss float64
		for _, xs := range series {
			r, ok := lineStepFit(xs, len(xs)-last)
			if !ok {
				r = detrend(xs)
			}
			all = append(all, r)
			ss += sumSquares(r)
		}
		if ss < stepSS {
			step, stepSS = all, ss
		}
	}
	if step != nil && stepIsClear(lineSS, stepSS, len(series), points, splits) {
		best = step
	}
	var num, den float64
	for _, res := range best {
		var scale float64
		for _, r := range res {
			scale += r * r
		}
		if scale == 0 {
			continue
		}
		for t := range res {
			den += res[t] * res[t] / scale
			if t > 0 {
				num += res[t] * res[t-1] / scale
			}
		}
	}
	if den == 0 {
		return 0, false
	}
	return num / den, true
}

// stepIsClear says whether a step in each of k series at the best of splits common splits
// reduces the residual sum of squares of their lines (lineSS) to stepSS by more than white
// nights would, at a 0.1 % level after Bonferroni over the splits: the F statistic of the k
// step coefficients, taken as k·F ~ χ²(k) with the Wilson-Hilferty normal approximation. The
// level only decides how often a step is removed; PooledPhi's calibration applies the same rule.
func stepIsClear(lineSS, stepSS float64, k, points, splits int) bool {
	dfRes := points - 3*k
	if dfRes <= 0 || stepSS <= 0 || lineSS <= stepSS {
		return lineSS > stepSS && stepSS == 0
	}
	chi := (lineSS - stepSS) / (stepSS / float64(dfRes))
	kf := float64(k)
	z := (math.Cbrt(chi/kf) - (1 - 2/(9*kf))) / math.Sqrt(2/(9*kf))
	return z > moremath.StdNormal.InvCDF(1-0.001/float64(splits))
}

// expectedRawLag1 is rawLag1's mean over simulated groups of k AR(1) series of length n with
// coefficient phi (about 2000 series in all, seeded: the same every time).
func expectedRawLag1(phi float64, n, k, minSeg int) float64 {
	groups := max(20, 2000/k)
	rng := rand.New(rand.NewPCG(uint64(n), uint64(k)<<8|0xa11))
	var sum float64
	group := make([][]float64, k)
	for i := range group {
		group[i] = make([]float64, n)
	}
	for range groups {
		for _, xs := range group {
			s := rng.NormFloat64()
			for i := range xs {
				s = phi*s + math.Sqrt(1-phi*phi)*rng.NormFloat64()
				xs[i] = s
			}
		}
		r, _ := rawLag1(group, minSeg)
		sum += r
	}
	return sum / float64(groups)
}

func sumSquares(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x * x
	}
	return s
}

// lineStepFit is the residuals of xs around a + b·t + c·[t >= tau] by least squares (the 3x3
// normal equations, solved by Cramer's rule); ok is false when they are singular.
func lineStepFit(xs []float64, tau int) ([]float64, bool) {
	// Columns 1, t, s (s = 1 from tau on).
	var n, st, ss, stt, sts, sx, stx, ssx float64
	for i, x := range xs {
		t := float64(i)
		s := 0.0
		if i >= tau {
			s = 1
		}
		n++
		st += t
		ss += s
		stt += t * t
		sts += t * s
		sx += x
		stx += t * x
		ssx += s * x
	}
	// [n st ss; st stt sts; ss sts ss] · [a b c] = [sx stx ssx]
	det := func(a, b, c, d, e, f, g, h, i float64) float64 {
		return a*(e*i-f*h) - b*(d*i-f*g) + c*(d*h-e*g)
	}
	d := det(n, st, ss, st, stt, sts, ss, sts, ss)
	if math.Abs(d) < 1e-12 {
		return nil, false
	}
	a := det(sx, st, ss, stx, stt, sts, ssx, sts, ss) / d
	b := det(n, sx, ss, st, stx, sts, ss, ssx, ss) / d
	c := det(n, st, sx, st, stt, stx, ss, sts, ssx) / d
	out := make([]float64, len(xs))
	for i, x := range xs {
		fit := a + b*float64(i)
		if i >= tau {
			fit += c
		}
		out[i] = x - fit
	}
	return out, true
}

// detrend is xs minus its least-squares line over the index.
func detrend(xs []float64) []float64 {
	n := float64(len(xs))
	var st, sx, stt, stx float64
	for i, x := range xs {
		t := float64(i)
		st += t
		sx += x
		stt += t * t
		stx += t * x
	}
	slope := (n*stx - st*sx) / (n*stt - st*st)
	icept := (sx - slope*st) / n
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x - icept - slope*float64(i)
	}
	return out
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
