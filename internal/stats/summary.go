package stats

import (
	"math"
	"sort"

	moremath "github.com/aclements/go-moremath/stats"
)

// MedianConfidence is the confidence level of Summary's interval for the median.
const MedianConfidence = 0.95

// DefaultMaxCV is a suggested limit for Noisy: a cell whose repetitions vary by more than 5 % of
// their mean (the upper end of the 1-5 % seen between identical runs) is flagged as noisy.
const DefaultMaxCV = 0.05

// Summary describes the repetitions of one cell (one target at one thread count) for one metric
// (QPS, TPS or p95 latency): one value per repetition of the whole sysbench step.
type Summary struct {
	// N is the number of samples (repetitions).
	N int `json:"n"`
	// Median of the samples (the mean of the two middle values when N is even).
	Median float64 `json:"median"`
	// CILow and CIHigh bound a distribution-free confidence interval for the population median:
	// two order statistics of the sample chosen from the binomial distribution (the same
	// interval as benchstat's, computed by go-moremath's QuantileCI), so no normality is assumed.
	//
	// With N >= 6 the interval has at least 95 % confidence (CIConfidence says exactly how much,
	// e.g. 96.9 % for N = 6) and CIValid is true. With N < 6 no interval drawn from the sample
	// reaches 95 %: even the full range [Min, Max] only covers the median with probability
	// 1 - 2^(1-N) (0 % for N = 1, 50 % for 2, 75 % for 3, 87.5 % for 4, 93.75 % for 5). For
	// those, CIValid is false, CILow/CIHigh are Min/Max and CIConfidence is that lower coverage:
	// the true 95 % interval is wider than anything the samples show. With N = 0 all are zero.
	CILow        float64 `json:"ciLow"`
	CIHigh       float64 `json:"ciHigh"`
	CIConfidence float64 `json:"ciConfidence"`
	CIValid      bool    `json:"ciValid"`
	// Mean and StdDev (sample standard deviation, n-1 denominator; 0 when N < 2).
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stdDev"`
	// CV is the coefficient of variation StdDev/Mean (0 when N < 2 or the mean is 0).
	CV  float64 `json:"cv"`
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// Summarize computes the Summary of samples (one value per repetition). samples is not modified.
// The values must be finite.
func Summarize(samples []float64) Summary {
	n := len(samples)
	if n == 0 {
		return Summary{}
	}
	xs := sorted(samples)
	s := Summary{N: n, Median: median(xs), Min: xs[0], Max: xs[n-1]}

	var sum float64
	for _, x := range xs {
		sum += x
	}
	s.Mean = sum / float64(n)
	if n >= 2 {
		var ss float64
		for _, x := range xs {
			d := x - s.Mean
			ss += d * d
		}
		s.StdDev = math.Sqrt(ss / float64(n-1))
		if s.Mean != 0 {
			s.CV = s.StdDev / math.Abs(s.Mean)
		}
	}

	ci := moremath.QuantileCI(n, 0.5, MedianConfidence)
	if ci.LoOrder >= 1 && ci.HiOrder <= n {
		s.CILow, s.CIHigh = xs[ci.LoOrder-1], xs[ci.HiOrder-1]
		s.CIConfidence = ci.Confidence
		s.CIValid = true
	} else {
		s.CILow, s.CIHigh = s.Min, s.Max
		s.CIConfidence = 1 - math.Pow(2, float64(1-n))
	}
	return s
}

// Noisy reports whether a summary's coefficient of variation exceeds maxCV (e.g. DefaultMaxCV).
// A summary of fewer than 2 samples has no measured spread and is never noisy: whether it can be
// trusted is Compare's question (it answers Inconclusive).
func Noisy(s Summary, maxCV float64) bool {
	return s.N >= 2 && s.CV > maxCV
}

// sorted returns a sorted copy of xs.
func sorted(xs []float64) []float64 {
	c := append([]float64(nil), xs...)
	sort.Float64s(c)
	return c
}

// median of an already sorted, non-empty slice.
func median(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
