package stats

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"

	moremath "github.com/aclements/go-moremath/stats"
)

// DefaultAlpha is the significance level used when Options.Alpha is 0.
const DefaultAlpha = 0.05

// Kind is the verdict on one cell of a comparison.
type Kind string

const (
	// Regressed: the U test rejects "same distribution" (p < Alpha) and the medians moved by at
	// least MinEffect in the harmful direction.
	Regressed Kind = "Regressed"
	// Improved: as Regressed, in the good direction.
	Improved Kind = "Improved"
	// NoChange: either a significant change smaller than MinEffect, or no significant change
	// and the confidence interval of the shift rules out a change of MinEffect.
	NoChange Kind = "NoChange"
	// Inconclusive: the data can neither confirm nor rule out a change of MinEffect, or there
	// are too few samples for the test to ever reach Alpha (then NeededN is set).
	Inconclusive Kind = "Inconclusive"
)

// Options configures Compare.
type Options struct {
	// Alpha is the significance level of the two-sided Mann-Whitney U test; 0 means
	// DefaultAlpha (0.05). It must be in (0, 0.5].
	Alpha float64
	// MinEffect is the smallest relative change of the median that matters, as a fraction:
	// 0.05 for "5 %" (the schedule's qpsDropPercent / p95RisePercent divided by 100). A
	// significant change smaller than this is NoChange. With 0 every significant change counts,
	// but then no non-significant comparison can be called NoChange either (no interval fits
	// inside ±0): it is Inconclusive.
	MinEffect float64
	// HigherIsBetter is true for throughput (QPS, TPS) and false for latency: it decides
	// whether a significant change is Regressed or Improved.
	HigherIsBetter bool
}

func (o Options) alpha() float64 {
	if o.Alpha <= 0 {
		return DefaultAlpha
	}
	return o.Alpha
}

// Verdict is the result of Compare.
type Verdict struct {
	Kind Kind `json:"kind"`
	// P is the two-sided p-value of the Mann-Whitney U test (1 when the test could not run:
	// an empty side, or all values equal).
	P float64 `json:"p"`
	// Base and Cur are the medians of the two samples; Delta is Cur/Base - 1 (0 when Base is 0).
	Base  float64 `json:"base"`
	Cur   float64 `json:"cur"`
	Delta float64 `json:"delta"`
	// DeltaLow and DeltaHigh bound a distribution-free confidence interval of the shift
	// cur - base (Hodges-Lehmann / Moses interval, the inversion of the same U test), relative
	// to Base, at confidence DeltaConfidence >= 1 - 2·Alpha (90 % at the default Alpha: the
	// level of a two one-sided tests equivalence test at Alpha). DeltaConfidence is 0 when the
	// samples are too few for such an interval; then DeltaLow/DeltaHigh are 0.
	DeltaLow        float64 `json:"deltaLow"`
	DeltaHigh       float64 `json:"deltaHigh"`
	DeltaConfidence float64 `json:"deltaConfidence"`
	// NeededN is set when Kind is Inconclusive because the sample sizes cannot reach Alpha at
	// all: the repetitions each side needs (see RequiredRepetitions). 0 otherwise.
	NeededN int `json:"neededN,omitempty"`
	// Q is P adjusted for the other tests of the same comparison (set by Adjust; 0 before).
	Q float64 `json:"q,omitempty"`
	// Reason explains the verdict in one sentence for a report.
	Reason string `json:"reason"`
	// judged: the test ran (both sides have samples, the baseline is not 0), so Adjust may
	// re-decide the verdict.
	judged bool
}

// Compare decides whether cur (the repetitions of one cell in the new run) differs from base
// (the same cell in the baseline run). See the package documentation for the rule. Neither
// slice is modified; values must be finite.
func Compare(base, cur []float64, opts Options) Verdict {
	alpha := opts.alpha()
	n1, n2 := len(base), len(cur)
	v := Verdict{P: 1}
	if n1 > 0 {
		v.Base = median(sorted(base))
	}
	if n2 > 0 {
		v.Cur = median(sorted(cur))
	}
	if n1 == 0 || n2 == 0 {
		v.Kind = Inconclusive
		v.NeededN = RequiredRepetitions(n1, n2, alpha)
		v.Reason = fmt.Sprintf("no samples on one side (n=%d vs n=%d); %d repetitions per run needed", n1, n2, v.NeededN)
		return v
	}
	if v.Base == 0 {
		v.Kind = Inconclusive
		v.Reason = "the baseline median is 0: no relative change can be computed"
		return v
	}
	v.Delta = v.Cur/v.Base - 1

	res, err := moremath.MannWhitneyUTest(base, cur, moremath.LocationDiffers)
	switch {
	case err == nil:
		v.P = res.P
	case errors.Is(err, moremath.ErrSamplesEqual):
		v.P = 1 // every value on both sides is the same: no evidence of a difference
	default:
		v.Kind = Inconclusive
		v.Reason = "U test failed: " + err.Error()
		return v
	}

	if lo, hi, conf, ok := shiftCI(base, cur, 2*alpha); ok {
		v.DeltaLow, v.DeltaHigh, v.DeltaConfidence = lo/v.Base, hi/v.Base, conf
	}

	judge(&v, v.P, n1, n2, opts)
	return v
}

// Adjust re-decides v (from Compare on samples of sizes n1 and n2) with q, the p-value adjusted
// for the other tests of the same comparison (AdjustBH), in place of its own p-value: a change is
// significant only when q < Alpha. v.P keeps the unadjusted p-value; v.Q is q.
func Adjust(v Verdict, q float64, n1, n2 int, opts Options) Verdict {
	v.Q = q
	if v.judged {
		judge(&v, q, n1, n2, opts)
	}
	return v
}

// judge sets v's Kind, NeededN and Reason from p (v.P, or an adjusted p-value) and v's change
// and interval.
func judge(v *Verdict, p float64, n1, n2 int, opts Options) {
	alpha := opts.alpha()
	v.judged = true
	v.NeededN = 0
	pName := "p"
	if p != v.P {
		pName = "q"
	}
	sizes := fmt.Sprintf("n=%d vs n=%d", n1, n2)
	change := fmt.Sprintf("median %+.1f%% (%.4g → %.4g)", 100*v.Delta, v.Base, v.Cur)
	minEff := fmt.Sprintf("%g%%", 100*opts.MinEffect)
	switch {
	case p < alpha && math.Abs(v.Delta) >= opts.MinEffect:
		if (v.Delta < 0) == opts.HigherIsBetter {
			v.Kind = Regressed
		} else {
			v.Kind = Improved
		}
		v.Reason = fmt.Sprintf("%s, %s=%.3g < %g (%s), at least the %s minimum effect", change, pName, p, alpha, sizes, minEff)
	case p < alpha:
		v.Kind = NoChange
		v.Reason = fmt.Sprintf("%s is significant (%s=%.3g < %g, %s) but below the %s minimum effect", change, pName, p, alpha, sizes, minEff)
	case MinP(n1, n2) >= alpha:
		v.Kind = Inconclusive
		v.NeededN = RequiredRepetitions(n1, n2, alpha)
		v.Reason = fmt.Sprintf("%s with %s: the U test cannot reach p < %g with so few repetitions (best possible p=%.3g); %d repetitions per run needed",
			change, sizes, alpha, MinP(n1, n2), v.NeededN)
	case v.DeltaConfidence > 0 && -opts.MinEffect < v.DeltaLow && v.DeltaHigh < opts.MinEffect:
		v.Kind = NoChange
		v.Reason = fmt.Sprintf("%s, %s=%.3g (%s); the %.0f%% interval of the change [%+.1f%%, %+.1f%%] is within ±%s",
			change, pName, p, sizes, 100*v.DeltaConfidence, 100*v.DeltaLow, 100*v.DeltaHigh, minEff)
	case opts.MinEffect <= 0:
		v.Kind = Inconclusive
		v.Reason = fmt.Sprintf("%s, %s=%.3g (%s): not significant, and with no minimum effect no interval can rule out a change",
			change, pName, p, sizes)
	default:
		v.Kind = Inconclusive
		v.Reason = fmt.Sprintf("%s, %s=%.3g (%s): not significant, yet the %.0f%% interval of the change [%+.1f%%, %+.1f%%] does not rule out ±%s; add repetitions",
			change, pName, p, sizes, 100*v.DeltaConfidence, 100*v.DeltaLow, 100*v.DeltaHigh, minEff)
	}
}

// MinP is the smallest two-sided p-value the exact Mann-Whitney U test can give for samples of
// sizes n1 and n2 (reached when the samples do not overlap, assuming no ties): 2 / C(n1+n2, n1),
// at most 1. For equal sizes: 1 (n=1), 0.33 (2), 0.1 (3), 0.029 (4), 0.0079 (5).
func MinP(n1, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	// C(n1+n2, n1) as a running product: exact in float64 while it stays below 2^53, so that
	// MinP(3, 3) is exactly 0.1 and compares correctly with an alpha of 0.1.
	c := 1.0
	for i := 1; i <= min(n1, n2); i++ {
		c = c * float64(max(n1, n2)+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

// RequiredRepetitions is the smallest number of repetitions m such that, once each side has at
// least m samples (a side that has more keeps them), the exact two-sided U test can reach
// p < alpha, i.e. MinP(max(n1,m), max(n2,m)) < alpha. With n1 = n2 = 0 it is the minimum for a
// fresh pair of runs: 4 at alpha 0.05 (MinP(4,4) = 0.029, MinP(3,3) = 0.1), 5 at 0.01. It is a
// floor, not a guarantee of detection: how many repetitions reliably detect a given change
// depends on the noise (see the package's benchmarks).
func RequiredRepetitions(n1, n2 int, alpha float64) int {
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	m := 1
	for MinP(max(n1, m), max(n2, m)) >= alpha {
		m++
	}
	return m
}

// ciKey identifies a cached critical value of the U distribution.
type ciKey struct {
	n1, n2 int
	gamma  float64
}

// critCache maps ciKey to critVal.
var critCache sync.Map

type critVal struct {
	k    int     // 1-based rank of the lower bound among the n1·n2 sorted differences
	conf float64 // actual confidence of [D(k), D(n1·n2+1-k)]
}

// shiftCI returns the Moses (Hodges-Lehmann) distribution-free confidence interval, at
// confidence at least 1-gamma, of the shift between cur and base: the k-th smallest and k-th
// largest of the n1·n2 differences cur[j] - base[i], where k is the largest rank with
// 2·P(U <= k-1) <= gamma under the null U distribution (exact for sizes up to 50, normal
// approximation above). ok is false when the samples are too small for any such interval.
func shiftCI(base, cur []float64, gamma float64) (lo, hi, conf float64, ok bool) {
	n1, n2 := len(base), len(cur)
	c := criticalRank(n1, n2, gamma)
	if c.k < 1 {
		return 0, 0, 0, false
	}
	diffs := make([]float64, 0, n1*n2)
	for _, y := range cur {
		for _, x := range base {
			diffs = append(diffs, y-x)
		}
	}
	sort.Float64s(diffs)
	return diffs[c.k-1], diffs[len(diffs)-c.k], c.conf, true
}

func criticalRank(n1, n2 int, gamma float64) critVal {
	key := ciKey{n1, n2, gamma}
	if v, ok := critCache.Load(key); ok {
		return v.(critVal)
	}
	var c critVal
	if n1 <= moremath.MannWhitneyExactLimit && n2 <= moremath.MannWhitneyExactLimit {
		d := moremath.UDist{N1: n1, N2: n2}
		// P(U <= k-1) grows with k; stop before it exceeds gamma/2. k never passes the middle.
		for k := 1; k <= n1*n2/2; k++ {
			tail := d.CDF(float64(k - 1))
			if 2*tail > gamma {
				break
			}
			c = critVal{k: k, conf: 1 - 2*tail}
		}
	} else {
		mu := float64(n1*n2) / 2
		sigma := math.Sqrt(float64(n1*n2*(n1+n2+1)) / 12)
		z := moremath.StdNormal.InvCDF(1 - gamma/2)
		if k := int(math.Floor(mu - z*sigma + 0.5)); k >= 1 { // continuity correction
			c = critVal{k: k, conf: 1 - gamma}
		}
	}
	critCache.Store(key, c)
	return c
}
