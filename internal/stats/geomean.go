package stats

import (
	"fmt"
	"math"
	"sort"

	moremath "github.com/aclements/go-moremath/stats"
)

// Pair is one cell's repetitions in the baseline and in the new run, for one metric.
type Pair struct {
	Base, Cur []float64
}

// RatioOptions configures Ratio.
type RatioOptions struct {
	// Confidence of the interval, e.g. 0.90 (the two one-sided tests' level at alpha 0.05);
	// 0 means 0.90.
	Confidence float64
}

// RatioResult is the geometric mean, over a target's cells, of the ratio of the new run's median
// to the baseline's: one number for "how much did this target move", with its interval and the
// p-value of "it did not move".
type RatioResult struct {
	// Cells is how many cells entered (cells with a positive median on both sides).
	Cells int `json:"cells"`
	// Ratio is exp(mean over cells of log(cur median / base median)); 1 means no change.
	Ratio float64 `json:"ratio"`
	// Low and High bound Ratio's interval at Confidence; both 0 when no interval could be formed
	// (see Reason).
	Low        float64 `json:"low"`
	High       float64 `json:"high"`
	Confidence float64 `json:"confidence"`
	// P is the two-sided p-value of "the geometric mean ratio is 1" (1 when there is no
	// interval).
	P float64 `json:"p"`
	// Spread names which estimate of the noise the interval used: "between cells" (how much the
	// cells' ratios disagree with each other) or "within cells" (the repetitions' spread), the
	// larger of the two.
	Spread string `json:"spread,omitempty"`
	// Reason says why there is no interval, when there is none.
	Reason string `json:"reason,omitempty"`
	// LogSE is the standard error of log(Ratio) and DF its degrees of freedom (0 without an
	// interval): what a caller needs to add noise Ratio cannot see, or to contrast two targets.
	LogSE float64 `json:"logSE,omitempty"`
	DF    float64 `json:"df,omitempty"`
}

// Valid says whether the result has an interval and a p-value.
func (r RatioResult) Valid() bool { return r.High > 0 }

// Ratio is the geometric-mean ratio of a target's cells (one Pair per thread count) with a t
// interval on the log scale. The noise is estimated twice and the larger estimate is used:
//
//   - between cells: the standard error of the mean of the cells' log ratios, from how much
//     they disagree (k-1 degrees of freedom, needs 3 cells or more). It holds whatever makes a
//     cell's ratio wander, including what the repetitions of one run cannot see.
//   - within cells: each cell's log-median ratio has variance about (π/2)·s²/n per side, s the
//     standard deviation of the log repetitions (the median's efficiency under normal noise);
//     summed over cells with Welch-Satterthwaite degrees of freedom (needs 2 repetitions a
//     side). It is what a run with few thread counts has.
//
// Taking the larger keeps the interval honest when either source dominates: the repetitions of
// one cell share one server instance and one night, so their spread alone understates the noise
// that matters between runs; the cells' disagreement alone is blind with 1-2 thread counts.
func Ratio(pairs []Pair, opts RatioOptions) RatioResult {
	conf := opts.Confidence
	if conf <= 0 || conf >= 1 {
		conf = 0.90
	}
	r := RatioResult{Confidence: conf, P: 1}
	var logs []float64
	var within, dfDen float64
	withinOK := true
	for _, p := range pairs {
		b, c := positives(p.Base), positives(p.Cur)
		if len(b) == 0 || len(c) == 0 {
			continue
		}
		mb, mc := median(sorted(b)), median(sorted(c))
		logs = append(logs, math.Log(mc/mb))
		if len(b) < 2 || len(c) < 2 {
			withinOK = false
			continue
		}
		vb := math.Pi / 2 * logVariance(b) / float64(len(b))
		vc := math.Pi / 2 * logVariance(c) / float64(len(c))
		within += vb + vc
		dfDen += vb*vb/float64(len(b)-1) + vc*vc/float64(len(c)-1)
	}
	k := len(logs)
	r.Cells = k
	if k == 0 {
		r.Reason = "no cell measured on both sides"
		return r
	}
	var mean float64
	for _, l := range logs {
		mean += l
	}
	mean /= float64(k)
	r.Ratio = math.Exp(mean)

	se, df := 0.0, 0.0
	if withinOK && within > 0 {
		se = math.Sqrt(within) / float64(k)
		df = within * within / dfDen
	}
	if k >= 3 {
		var ss float64
		for _, l := range logs {
			ss += (l - mean) * (l - mean)
		}
		if b := math.Sqrt(ss/float64(k-1)) / math.Sqrt(float64(k)); b > se {
			se, df = b, float64(k-1)
			r.Spread = "between cells"
		}
	}
	if se > 0 && r.Spread == "" {
		r.Spread = "within cells"
	}
	switch {
	case se == 0 && k < 3 && !withinOK:
		r.Reason = fmt.Sprintf("%d cell(s) with a single repetition: the noise cannot be estimated (3 thread counts or 2 repetitions needed)", k)
		return r
	case se == 0 && mean == 0:
		// Every repetition of both runs the same value: sysbench prints latencies in hundredths
		// of a millisecond, so sub-millisecond p95s often repeat exactly. Nothing moved at the
		// resolution measured.
		r.Low, r.High, r.Spread = 1, 1, "none: every repetition identical"
		return r
	case se == 0:
		// Identical repetitions within each run but a different value between runs: a change
		// of one resolution step, whose size the data cannot put a bound on.
		r.Reason = "every repetition identical within each run but not between them: the noise cannot be estimated"
		return r
	}
	t := moremath.TDist{V: df}
	q := tQuantile(t, 1-(1-conf)/2)
	r.Low, r.High = math.Exp(mean-q*se), math.Exp(mean+q*se)
	r.P = 2 * (1 - t.CDF(math.Abs(mean)/se))
	r.LogSE, r.DF = se, df
	return r
}

// positives are the values above 0 (0 means not measured).
func positives(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if x > 0 {
			out = append(out, x)
		}
	}
	return out
}

// logVariance is the sample variance (n-1) of log(xs).
func logVariance(xs []float64) float64 {
	var m float64
	for _, x := range xs {
		m += math.Log(x)
	}
	m /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		d := math.Log(x) - m
		ss += d * d
	}
	return ss / float64(len(xs)-1)
}

// tQuantile inverts t's CDF by bisection (go-moremath's TDist has no InvCDF).
func tQuantile(t moremath.TDist, p float64) float64 {
	lo, hi := 0.0, 1.0
	for t.CDF(hi) < p {
		hi *= 2
		if hi > 1e6 {
			return hi
		}
	}
	for i := 0; i < 100 && hi-lo > 1e-10; i++ {
		mid := (lo + hi) / 2
		if t.CDF(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// AdjustBH returns the Benjamini-Hochberg adjusted p-values (q-values) of ps, in ps' order: the
// smallest FDR level at which each hypothesis is rejected. Rejecting every q < alpha controls
// the false discovery rate at alpha for independent or positively dependent tests, and, when
// nothing changed at all, the chance of any rejection (the family-wise error) at alpha too.
func AdjustBH(ps []float64) []float64 {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	q := make([]float64, m)
	running := 1.0
	for r := m - 1; r >= 0; r-- {
		i := idx[r]
		v := ps[i] * float64(m) / float64(r+1)
		running = math.Min(running, v)
		q[i] = math.Min(1, running)
	}
	return q
}

// TQuantile is the p quantile of Student's t distribution with df degrees of freedom.
func TQuantile(df, p float64) float64 {
	if p < 0.5 {
		return -tQuantile(moremath.TDist{V: df}, 1-p)
	}
	return tQuantile(moremath.TDist{V: df}, p)
}

// TwoSidedP is the two-sided p-value of a t statistic with df degrees of freedom (normal when df
// is infinite or above 1e6).
func TwoSidedP(t, df float64) float64 {
	if df <= 0 {
		return 1
	}
	if math.IsInf(df, 1) || df > 1e6 {
		return math.Erfc(math.Abs(t) / math.Sqrt2)
	}
	return 2 * (1 - moremath.TDist{V: df}.CDF(math.Abs(t)))
}

// Satterthwaite is the Welch-Satterthwaite degrees of freedom of a sum of variance components
// vs[i] with dfs[i] degrees of freedom each (an infinite df: a component taken as known).
func Satterthwaite(vs, dfs []float64) float64 {
	var sum, den float64
	for i, v := range vs {
		sum += v
		if !math.IsInf(dfs[i], 1) && dfs[i] > 0 {
			den += v * v / dfs[i]
		}
	}
	if den == 0 {
		return math.Inf(1)
	}
	return sum * sum / den
}

// Simes is Simes' combination of ps: the p-value of "none of the hypotheses is false",
// min over i of p(i)·m/i with p sorted ascending. Valid for independent or positively dependent
// tests, and more powerful than Bonferroni's m·min(p) when several are small.
func Simes(ps []float64) float64 {
	if len(ps) == 0 {
		return 1
	}
	s := append([]float64(nil), ps...)
	sort.Float64s(s)
	m := float64(len(s))
	best := 1.0
	for i, p := range s {
		best = math.Min(best, p*m/float64(i+1))
	}
	return best
}
