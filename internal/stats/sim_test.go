package stats

import (
	"math"
	"math/rand/v2"

	moremath "github.com/aclements/go-moremath/stats"
)

// lognormal draws n samples whose median is med and whose coefficient of variation is cv: the
// multiplicative noise of benchmark results (never negative, slightly skewed to the right).
func lognormal(rng *rand.Rand, n int, med, cv float64) []float64 {
	sigma := math.Sqrt(math.Log1p(cv * cv))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = med * math.Exp(sigma*rng.NormFloat64())
	}
	return xs
}

// simResult counts the verdicts of repeated simulated comparisons.
type simResult struct {
	trials                                 int
	regressed, improved, noChange, inconcl int
}

func (r simResult) rate(k int) float64 { return float64(k) / float64(r.trials) }

// falsePositive is the share of Regressed or Improved verdicts.
func (r simResult) falsePositive() float64 { return r.rate(r.regressed + r.improved) }

// simulate compares trials pairs of n-sample QPS runs, base with median 1000 and cur with median
// 1000·(1+shift), both with lognormal noise at cv, drawn from a generator seeded with seed.
func simulate(seed uint64, trials, n int, cv, shift float64, opts Options) simResult {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	r := simResult{trials: trials}
	for i := 0; i < trials; i++ {
		base := lognormal(rng, n, 1000, cv)
		cur := lognormal(rng, n, 1000*(1+shift), cv)
		switch Compare(base, cur, opts).Kind {
		case Regressed:
			r.regressed++
		case Improved:
			r.improved++
		case NoChange:
			r.noChange++
		default:
			r.inconcl++
		}
	}
	return r
}

// exactSize is the exact probability that the two-sided U test on n vs n continuous samples
// from the same distribution gives p < alpha: the false-positive rate with MinEffect 0.
func exactSize(n int, alpha float64) float64 {
	d := moremath.UDist{N1: n, N2: n}
	size := 0.0
	for u := 0; 2*u < n*n; u++ {
		p := 2 * d.CDF(float64(u))
		if p >= alpha {
			break
		}
		size = p
	}
	return size
}
