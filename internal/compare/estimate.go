package compare

import (
	"math"

	moremath "github.com/aclements/go-moremath/stats"

	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
)

// logCell is one cell's change on the log scale from the means of the log repetitions (a Welch
// t comparison): parametric, so a lone cell of 5 against 5 can reach the small p-values a
// family of cells needs, which the U test (at best p = 0.008) cannot.
type logCell struct {
	ok       bool
	d, v, df float64
}

func logDiff(base, cur []float64) logCell {
	b, c := positiveValues(base), positiveValues(cur)
	if len(b) < 2 || len(c) < 2 {
		return logCell{}
	}
	mb, vb := logMeanVar(b)
	mc, vc := logMeanVar(c)
	vb /= float64(len(b))
	vc /= float64(len(c))
	lc := logCell{ok: true, d: mc - mb, v: vb + vc}
	lc.df = stats.Satterthwaite([]float64{vb, vc}, []float64{float64(len(b) - 1), float64(len(c) - 1)})
	if lc.v == 0 {
		// Identical repetitions on both sides: sysbench's resolution, no measurable noise.
		lc.df = math.Inf(1)
	}
	return lc
}

func logMeanVar(xs []float64) (float64, float64) {
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
	return m, ss / float64(len(xs)-1)
}

// tq is the p quantile of Student's t with df degrees of freedom (normal when df is infinite).
func tq(df, p float64) float64 {
	if math.IsInf(df, 1) || df > 1e6 {
		return moremath.StdNormal.InvCDF(p)
	}
	return stats.TQuantile(df, p)
}

// est is a change on the log scale with its standard error, degrees of freedom and two-sided
// p-value.
type est struct {
	ok           bool
	d, se, df, p float64
	// within is the part of se² the repetitions (and cells) estimate, added the part allowed
	// for between runs, which more repetitions do not shrink.
	within, added float64
}

func newEst(d, within, wdf, added float64) est {
	e := est{ok: true, d: d, within: within, added: added}
	e.se = math.Sqrt(within + added)
	e.df = stats.Satterthwaite([]float64{within, added}, []float64{wdf, math.Inf(1)})
	if e.se == 0 {
		e.p = 1
		if d != 0 {
			e.p = 0
		}
		return e
	}
	e.p = stats.TwoSidedP(d/e.se, e.df)
	return e
}

// interval is e's interval at conf, as ratios.
func (e est) interval(conf float64) (float64, float64) {
	h := tq(e.df, 1-(1-conf)/2) * e.se
	return math.Exp(e.d - h), math.Exp(e.d + h)
}
