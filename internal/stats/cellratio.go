package stats

import "math"

// CellRatio is the ratio of one cell's medians (another target's over a reference target's, or
// a run's over a baseline's) with an interval from the repetitions: what a "vs" column must show
// so that a ratio inside the noise does not read as a difference.
type CellRatio struct {
	// Ratio is median(cur) / median(base).
	Ratio float64
	// Low and High bound the ratio at Confidence, from a t interval of the log repetitions; both
	// 0 when there is none (fewer than 2 repetitions on a side, or 2 pairs when Paired).
	Low, High  float64
	Confidence float64
	// Paired: the interval is of the differences of the repetitions measured in the same round
	// (interleaved targets), which cancels what the round shared; else of two independent sides.
	Paired bool
	// N is the number of pairs (Paired) or the smaller side.
	N int
}

// Valid says whether the ratio has an interval.
func (r CellRatio) Valid() bool { return r.High > 0 }

// WithinNoise says whether the interval holds 1: the data cannot tell the two apart.
func (r CellRatio) WithinNoise() bool { return r.Valid() && r.Low <= 1 && r.High >= 1 }

// RatioOfCells compares cur with base at confidence conf (0: 0.95). pairs, when not nil, are
// the indexes (into base, into cur) of repetitions measured in the same round: the interval is
// then the paired one. Values of 0 or below (not measured) are left out.
func RatioOfCells(base, cur []float64, pairs [][2]int, conf float64) CellRatio {
	if conf <= 0 || conf >= 1 {
		conf = 0.95
	}
	r := CellRatio{Confidence: conf}
	b, c := positives(base), positives(cur)
	if len(b) == 0 || len(c) == 0 {
		return r
	}
	r.Ratio = median(sorted(c)) / median(sorted(b))
	q := func(df float64) float64 { return TQuantile(df, 1-(1-conf)/2) }
	if pairs != nil {
		var d []float64
		for _, p := range pairs {
			if p[0] < len(base) && p[1] < len(cur) && base[p[0]] > 0 && cur[p[1]] > 0 {
				d = append(d, math.Log(cur[p[1]]/base[p[0]]))
			}
		}
		r.Paired, r.N = true, len(d)
		if len(d) < 2 {
			return r
		}
		m, v := meanVar(d)
		h := q(float64(len(d)-1)) * math.Sqrt(v/float64(len(d)))
		r.Low, r.High = math.Exp(m-h), math.Exp(m+h)
		return r
	}
	r.N = min(len(b), len(c))
	if r.N < 2 {
		return r
	}
	lb, lc := logs(b), logs(c)
	mb, vb := meanVar(lb)
	mc, vc := meanVar(lc)
	vb /= float64(len(lb))
	vc /= float64(len(lc))
	se := math.Sqrt(vb + vc)
	if se == 0 {
		r.Low, r.High = math.Exp(mc-mb), math.Exp(mc-mb)
		return r
	}
	df := Satterthwaite([]float64{vb, vc}, []float64{float64(len(lb) - 1), float64(len(lc) - 1)})
	h := q(df) * se
	r.Low, r.High = math.Exp(mc-mb-h), math.Exp(mc-mb+h)
	return r
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}

// meanVar is the mean and the sample variance (n-1) of xs (variance 0 for one value).
func meanVar(xs []float64) (float64, float64) {
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	if len(xs) < 2 {
		return m, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return m, ss / float64(len(xs)-1)
}
