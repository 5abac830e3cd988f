package compare

import (
	"math"
	"slices"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
)

// minTestRepetitions is the fewest repetitions per side a cell's t test uses: with 2 a side the
// variance has 1-2 degrees of freedom and the interval is mostly the t quantile.
const minTestRepetitions = 3

// family is one target and one rule: the first level of the verdict's hierarchy, whose cells
// are tested (the second level) only when it is rejected.
type family struct {
	target int // index in Result.Targets
	rule   Rule
	ri     int   // the rule's index in the policy
	cells  []int // indices in Result.Cells of the cells that entered
	logs   []logCell
	ratio  stats.RatioResult
	abs    est
	rel    est
	// shape are the cells' changes against the target's other cells, in cells' order.
	shape []est
	// own are the cells' changes against the baseline with the between-run allowance.
	own []est
	// p is the family's p-value (Bonferroni over its components), decisive the component with
	// the smallest p ("abs", "rel" or "cells"), q the p adjusted over all families.
	p        float64
	decisive string
	q        float64
	// comps is how many components p combines; threshold is the adjusted level the family's p
	// had to reach (alpha·R/M in Benjamini-Hochberg), which a component alone must reach too,
	// times comps, to decide the target's level.
	comps     int
	threshold float64
	// allowance: the between-run variance of one run's level allowed for in abs (sigmaAbs²)
	// and per target in rel and shape (sigmaTarget²), with the source.
	sigmaAbs, sigmaTarget float64
	source                string
	historyRuns           int
	instances             bool
	reps                  int32
}

// throughput says whether f is the throughput's family (the policy's first rule), whose level
// carries the allowance's figures in status.
func (f *family) throughput() bool { return f.ri == 0 }

// judgeFamilies runs the verdict's hierarchy over the families and sets the targets' and cells'
// verdicts. Level 1: each family's p-value is the Bonferroni combination of up to three tests
// of "this target did not change in this metric": its level against the baseline with the
// between-run allowance (abs), its level against the other targets' (rel: a shift of the whole
// run cancels), and Simes' combination of its cells' changes against its other cells (cells);
// the families' p-values are adjusted together (Benjamini-Hochberg). Level 2: in each rejected
// family the cells' tests are adjusted over that family's cells at alpha·R/M (Benjamini and
// Bogomolov's selective procedure: R rejected of M families), so a lone cell competes with its
// own target's cells only, and nothing is tested in a family that shows no change.
func judgeFamilies(res *Result, fams []*family, alpha float64) int {
	ps := make([]float64, len(fams))
	for i, f := range fams {
		comps := map[string]float64{}
		if f.abs.ok {
			comps["abs"] = f.abs.p
		}
		if f.rel.ok {
			comps["rel"] = f.rel.p
		}
		var shapeP []float64
		for _, s := range f.shape {
			if s.ok {
				shapeP = append(shapeP, s.p)
			}
		}
		if len(shapeP) > 0 {
			comps["cells"] = stats.Simes(shapeP)
		}
		f.p, f.decisive = 1, ""
		// Fixed order, so that ties pick the same component every time.
		for _, name := range []string{"abs", "rel", "cells"} {
			if p, ok := comps[name]; ok && (f.decisive == "" || p < f.p) {
				f.p, f.decisive = p, name
			}
		}
		f.comps = len(comps)
		f.p = math.Min(1, f.p*float64(len(comps)))
		ps[i] = f.p
	}
	tests := len(fams)
	rejected := 0
	for i, q := range stats.AdjustBH(ps) {
		fams[i].q = q
		if q < alpha {
			rejected++
		}
	}
	conf := 1 - 2*alpha
	for _, f := range fams {
		f.threshold = alpha * float64(max(rejected, 1)) / float64(len(fams))
	}
	for _, f := range fams {
		t := &res.Targets[f.target]
		verdict := familyVerdict(f, alpha, conf)
		lo, hi := 0.0, 0.0
		if f.abs.ok {
			lo, hi = f.abs.interval(conf)
		}
		tf := f.rule.target(t)
		*tf.verdict, *tf.q = verdict, round4(f.q)
		*tf.p = round4(f.abs.p)
		if f.abs.ok {
			*tf.low, *tf.high = round4(lo), round4(hi)
		}
		if f.throughput() {
			if f.rel.ok {
				rl, rh := f.rel.interval(conf)
				t.QPSVsOthers, t.QPSVsOthersLow, t.QPSVsOthersHigh, t.QPSVsOthersP = round4(math.Exp(f.rel.d)), round4(rl), round4(rh), round4(f.rel.p)
			}
			t.RunToRunCVPercent, t.RunToRunSource, t.InstancesMeasured = round1(100*f.sigmaAbs), f.source, f.instances
			t.MinDetectablePercent = round1(minDetectable(f, alpha, len(fams)))
		}
		// Level 2: the cells of a rejected family, adjusted over that family's cells. A cell's
		// p-value is the Bonferroni combination of its change against the baseline (with the
		// allowance) and against the target's other cells (without: shifts cancel).
		var idx []int
		var cellP []float64
		byShape := make([]bool, len(f.cells))
		for j := range f.cells {
			own, shape := f.own[j], f.shape[j]
			switch {
			case own.ok && shape.ok:
				idx = append(idx, j)
				cellP = append(cellP, math.Min(1, 2*math.Min(own.p, shape.p)))
				byShape[j] = shape.p < own.p
			case own.ok:
				idx = append(idx, j)
				cellP = append(cellP, own.p)
			}
		}
		qs := make([]float64, len(f.cells))
		for j := range qs {
			qs[j] = 1
		}
		if f.q < alpha && len(cellP) > 0 {
			tests += len(cellP)
			for n, q := range stats.AdjustBH(cellP) {
				qs[idx[n]] = math.Min(1, q*float64(len(fams))/float64(rejected))
			}
		}
		for j, ci := range f.cells {
			p := 1.0
			if n := slices.Index(idx, j); n >= 0 {
				p = cellP[n]
			}
			setCell(&res.Cells[ci], f, j, p, qs[j], byShape[j], alpha, conf)
		}
	}
	return tests
}

// familyVerdict judges a family: Regressed (or Improved) when it was rejected by its level (abs)
// or by its level against the other targets (rel), and the level moved by at least the minimum
// effect (for rel, against the other targets too); NoChange when the level's interval, with the
// between-run allowance, rules out the minimum effect in the harmful direction; else
// Inconclusive. A family rejected only by its cells leaves the verdict to them.
func familyVerdict(f *family, alpha, conf float64) v1.CellVerdict {
	if !f.abs.ok {
		return v1.CellInconclusive
	}
	higher, effect := f.rule.HigherIsBetter(), minEffect(f.rule)
	change := math.Exp(f.abs.d) - 1
	harmful := (change < 0) == higher
	decides := func(e est) bool { return e.ok && e.p*float64(f.comps) <= f.threshold }
	big := math.Abs(change) >= effect
	byRel := false
	if decides(f.rel) {
		rc := math.Exp(f.rel.d) - 1
		byRel = math.Abs(rc) >= effect && (rc < 0) == (change < 0)
	}
	if f.q < alpha && big && (decides(f.abs) || byRel) {
		if harmful {
			return v1.CellRegressed
		}
		return v1.CellImproved
	}
	lo, hi := f.abs.interval(conf)
	if (higher && lo > 1-effect) || (!higher && hi < 1+effect) {
		return v1.CellNoChange
	}
	return v1.CellInconclusive
}

// setCell records one metric of a cell: its level-2 p-value, q adjusted at level 2 (1 when its
// family was not rejected), and its verdict: Regressed (Improved) when q < alpha and the cell
// moved by at least the minimum effect (against the other cells too, when that test decided);
// NoChange when its interval with the allowance rules the minimum effect out; else Inconclusive.
func setCell(c *Cell, f *family, j int, p, q float64, byShape bool, alpha, conf float64) {
	l := f.logs[j]
	higher, effect := f.rule.HigherIsBetter(), minEffect(f.rule)
	var verdict v1.CellVerdict
	switch {
	case !l.ok:
		verdict, p, q = v1.CellInconclusive, 1, 1
		c.needed[f.ri] = minTestRepetitions
	default:
		change := math.Exp(l.d) - 1
		harmful := (change < 0) == higher
		big := math.Abs(change) >= effect
		if byShape {
			vsOthers := math.Exp(f.shape[j].d) - 1
			big = big && math.Abs(vsOthers) >= effect && (change < 0) == (vsOthers < 0)
		}
		if q < alpha && big {
			verdict = v1.CellImproved
			if harmful {
				verdict = v1.CellRegressed
			}
			break
		}
		lo, hi := f.own[j].interval(conf)
		if 1-effect < lo && hi < 1+effect {
			verdict = v1.CellNoChange
		} else {
			verdict = v1.CellInconclusive
		}
	}
	beyond := false
	if l.ok {
		// The repetitions alone put the cell wholly beyond the minimum effect, harmful side:
		// whatever the run's shift, the run cannot be called NoRegression over it.
		h := tq(l.df, 1-(1-conf)/2) * math.Sqrt(l.v)
		if higher {
			beyond = l.d+h < math.Log(1-effect)
		} else {
			beyond = l.d-h > math.Log(1+effect)
		}
	}
	cf := f.rule.cell(&c.CellChange)
	*cf.verdict, *cf.p, *cf.q = verdict, round4(p), round4(q)
	c.beyond[f.ri] = beyond
}

// rawCellVerdict judges an acknowledged cell's metric of rule r, left out of the hierarchy: Regressed when
// its repetitions put it wholly beyond the minimum effect, NoChange when wholly within it.
func rawCellVerdict(c *Cell, r Rule, l logCell, alpha float64) {
	higher, effect := r.HigherIsBetter(), minEffect(r)
	verdict := v1.CellInconclusive
	var p float64 = 1
	if l.ok {
		e := newEst(l.d, l.v, l.df, 0)
		p = e.p
		lo, hi := e.interval(1 - 2*alpha)
		switch {
		case higher && hi < 1-effect, !higher && lo > 1+effect:
			verdict = v1.CellRegressed
		case higher && lo > 1+effect, !higher && hi < 1-effect:
			verdict = v1.CellImproved
		case 1-effect < lo && hi < 1+effect:
			verdict = v1.CellNoChange
		}
	}
	cf := r.cell(&c.CellChange)
	*cf.verdict, *cf.p, *cf.q = verdict, round4(p), round4(p)
}

// minDetectable is about the smallest drop (in percent) of the family's metric this comparison
// finds in 4 of 5 pairs: (t at the family's share of alpha + t at 80 %) standard errors of the
// better of its level tests.
func minDetectable(f *family, alpha float64, families int) float64 {
	best := f.abs
	if f.rel.ok && (!best.ok || f.rel.se < best.se) {
		best = f.rel
	}
	if !best.ok || best.se == 0 {
		return 0
	}
	comps := 1.0
	if f.rel.ok {
		comps++
	}
	if len(f.shape) > 0 && f.shape[0].ok {
		comps++
	}
	z := tq(best.df, 1-alpha/(2*comps*float64(families))) + tq(best.df, 0.8)
	return 100 * (1 - math.Exp(-z*best.se))
}

// neededRepetitions is how many repetitions per run would let an inconclusive family decide,
// at most 10; 0 when repetitions cannot: the between-run allowance alone is wider than the
// distance between its estimate and the minimum effect (or the estimate is beyond it).
func neededRepetitions(f *family, alpha float64) (int32, bool) {
	if !f.abs.ok || f.reps == 0 {
		return 0, true
	}
	higher, limit := f.rule.HigherIsBetter(), harmLimit(f.rule)
	margin := math.Abs(f.abs.d - limit)
	if (higher && f.abs.d <= limit) || (!higher && f.abs.d >= limit) || margin == 0 {
		return 0, true
	}
	t := tq(f.abs.df, 1-alpha)
	room := (margin/t)*(margin/t) - f.abs.added
	if room <= 0 {
		return 0, false
	}
	n := int32(math.Ceil(float64(f.reps) * f.abs.within / room))
	return min(max(n, f.reps+1), 10), true
}
