package compare

import (
	"math"
	"slices"
	"time"

	moremath "github.com/aclements/go-moremath/stats"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
)

// Options are what a comparison may know besides the two runs and the policy.
type Options struct {
	// History are other successful runs of the same schedule (any order; the compared run is
	// skipped if present). With MinHistoryRuns or more measuring a target, the spread of the
	// target's level across them is the between-run noise its verdict allows for, in place of
	// spec.regression.runToRunCVPercent.
	History []*v1.BenchmarkRun
}

// MinHistoryRuns is how many retained runs must measure a target before their spread replaces
// the policy's run-to-run CV: fewer give a variance with too few degrees of freedom to trust
// (4 runs: 3 df, a 95 % t quantile of 3.18).
const MinHistoryRuns = 5

// minTestRepetitions is the fewest repetitions per side a cell's t test uses: with 2 a side the
// variance has 1-2 degrees of freedom and the interval is mostly the t quantile.
const minTestRepetitions = 3

// Sources of the run-to-run allowance (TargetChange.RunToRunSource).
const (
	SourceHistory = "history"
	SourcePolicy  = "policy"
	SourceDefault = "default"
	SourceSameRun = "same run"
)

// metricSpec is one metric a comparison judges.
type metricSpec struct {
	ack       v1.AckMetric
	higher    bool
	minEffect float64
	values    func(cells.Cell) []float64
}

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

func positiveValues(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if x > 0 {
			out = append(out, x)
		}
	}
	return out
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

// family is one target and one metric: the first level of the verdict's hierarchy, whose cells
// are tested (the second level) only when it is rejected.
type family struct {
	target int // index in Result.Targets
	m      metricSpec
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

// levels are a run's log median for each cell of one metric, by cell.
func levels(run *v1.BenchmarkRun, m metricSpec) map[cellKey]float64 {
	_, cs := samples(run)
	out := map[cellKey]float64{}
	for k, c := range cs {
		if xs := positiveValues(m.values(c)); len(xs) > 0 {
			out[k] = math.Log(stats.Summarize(xs).Median)
		}
	}
	return out
}

// historyLevels is, for each history run measuring every listed cell of a target, the target's
// level: the mean log median over those cells. Runs lacking a cell are skipped.
func historyLevels(hist []map[cellKey]float64, keys []cellKey) []float64 {
	var out []float64
	for _, h := range hist {
		var sum float64
		all := len(keys) > 0
		for _, k := range keys {
			x, ok := h[k]
			if !ok {
				all = false
				break
			}
			sum += x
		}
		if all {
			out = append(out, sum/float64(len(keys)))
		}
	}
	return out
}

func sampleVar(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return ss / float64(len(xs)-1)
}

// instancesMeasured says whether every repetition of target in run measured its own server
// instance: then the repetitions' spread holds the spread between instances.
func instancesMeasured(run *v1.BenchmarkRun, target string) bool {
	for _, t := range run.Status.Targets {
		if t.Name != target {
			continue
		}
		reps := map[int32]int32{}
		for _, s := range t.Steps {
			if s.Throughput() <= 0 {
				continue
			}
			if s.Instance == 0 {
				return run.Spec.InstancePerRepetition()
			}
			if prev, seen := reps[s.Repetition]; seen && prev != s.Instance {
				return false
			}
			reps[s.Repetition] = s.Instance
		}
		instances := map[int32]bool{}
		for _, i := range reps {
			instances[i] = true
		}
		return len(reps) > 1 && len(instances) == len(reps)
	}
	return false
}

// sameRun says whether both sides were measured in one run (a confirmation run compares its
// targets pairwise through two views of itself): nothing common to the run differs between
// them.
func sameRun(run, baseline *v1.BenchmarkRun) bool {
	return run.UID != "" && run.UID == baseline.UID
}

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
		if f.m.ack == v1.AckQPS {
			t.QPSVerdict, t.QPSQ = verdict, round4(f.q)
			t.QPSP = round4(f.abs.p)
			if f.abs.ok {
				t.QPSLow, t.QPSHigh = round4(lo), round4(hi)
			}
			if f.rel.ok {
				rl, rh := f.rel.interval(conf)
				t.QPSVsOthers, t.QPSVsOthersLow, t.QPSVsOthersHigh, t.QPSVsOthersP = round4(math.Exp(f.rel.d)), round4(rl), round4(rh), round4(f.rel.p)
			}
			t.RunToRunCVPercent, t.RunToRunSource, t.InstancesMeasured = round1(100*f.sigmaAbs), f.source, f.instances
			t.MinDetectablePercent = round1(minDetectable(f, alpha, len(fams)))
		} else {
			t.P95Verdict, t.P95Q = verdict, round4(f.q)
			t.P95P = round4(f.abs.p)
			if f.abs.ok {
				t.P95Low, t.P95High = round4(lo), round4(hi)
			}
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
	change := math.Exp(f.abs.d) - 1
	harmful := (change < 0) == f.m.higher
	decides := func(e est) bool { return e.ok && e.p*float64(f.comps) <= f.threshold }
	big := math.Abs(change) >= f.m.minEffect
	byRel := false
	if decides(f.rel) {
		rc := math.Exp(f.rel.d) - 1
		byRel = math.Abs(rc) >= f.m.minEffect && (rc < 0) == (change < 0)
	}
	if f.q < alpha && big && (decides(f.abs) || byRel) {
		if harmful {
			return v1.CellRegressed
		}
		return v1.CellImproved
	}
	lo, hi := f.abs.interval(conf)
	if (f.m.higher && lo > 1-f.m.minEffect) || (!f.m.higher && hi < 1+f.m.minEffect) {
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
	var verdict v1.CellVerdict
	switch {
	case !l.ok:
		verdict, p, q = v1.CellInconclusive, 1, 1
		c.setNeeded(f.m.ack, minTestRepetitions)
	default:
		change := math.Exp(l.d) - 1
		harmful := (change < 0) == f.m.higher
		big := math.Abs(change) >= f.m.minEffect
		if byShape {
			vsOthers := math.Exp(f.shape[j].d) - 1
			big = big && math.Abs(vsOthers) >= f.m.minEffect && (change < 0) == (vsOthers < 0)
		}
		if q < alpha && big {
			verdict = v1.CellImproved
			if harmful {
				verdict = v1.CellRegressed
			}
			break
		}
		lo, hi := f.own[j].interval(conf)
		if 1-f.m.minEffect < lo && hi < 1+f.m.minEffect {
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
		if f.m.higher {
			beyond = l.d+h < math.Log(1-f.m.minEffect)
		} else {
			beyond = l.d-h > math.Log(1+f.m.minEffect)
		}
	}
	if f.m.ack == v1.AckQPS {
		c.QPSVerdict, c.QPSP, c.QPSQ = verdict, round4(p), round4(q)
		c.beyondQPS = beyond
	} else {
		c.P95Verdict, c.P95P, c.P95Q = verdict, round4(p), round4(q)
		c.beyondP95 = beyond
	}
}

// rawCellVerdict judges an acknowledged cell's metric, left out of the hierarchy: Regressed when
// its repetitions put it wholly beyond the minimum effect, NoChange when wholly within it.
func rawCellVerdict(c *Cell, m metricSpec, l logCell, alpha float64) {
	verdict := v1.CellInconclusive
	var p float64 = 1
	if l.ok {
		e := newEst(l.d, l.v, l.df, 0)
		p = e.p
		lo, hi := e.interval(1 - 2*alpha)
		switch {
		case m.higher && hi < 1-m.minEffect, !m.higher && lo > 1+m.minEffect:
			verdict = v1.CellRegressed
		case m.higher && lo > 1+m.minEffect, !m.higher && hi < 1-m.minEffect:
			verdict = v1.CellImproved
		case 1-m.minEffect < lo && hi < 1+m.minEffect:
			verdict = v1.CellNoChange
		}
	}
	if m.ack == v1.AckQPS {
		c.QPSVerdict, c.QPSP, c.QPSQ = verdict, round4(p), round4(p)
	} else {
		c.P95Verdict, c.P95P, c.P95Q = verdict, round4(p), round4(p)
	}
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
	limit := math.Log(1 - f.m.minEffect)
	if !f.m.higher {
		limit = math.Log(1 + f.m.minEffect)
	}
	margin := math.Abs(f.abs.d - limit)
	if (f.m.higher && f.abs.d <= limit) || (!f.m.higher && f.abs.d >= limit) || margin == 0 {
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

// HistoryOf are the runs of runs that the schedule controlling run also controls and that
// succeeded, with run's client, scheduled no later than run (its scheduled-time annotation, else
// its creation): the nights whose spread CompareWith may take as run's between-run noise.
// Confirmation runs are not nights of the schedule. None when no schedule controls run.
func HistoryOf(run *v1.BenchmarkRun, runs []*v1.BenchmarkRun) []*v1.BenchmarkRun {
	owner := metav1.GetControllerOf(run)
	if owner == nil || owner.Kind != "BenchmarkSchedule" {
		return nil
	}
	at := scheduledAt(run)
	client := loadclient.For(run.Spec.Workload).Name()
	var out []*v1.BenchmarkRun
	for _, other := range runs {
		o := metav1.GetControllerOf(other)
		if other.Name == run.Name || o == nil || o.UID != owner.UID || other.Status.Phase != v1.RunSucceeded ||
			other.Labels[v1.LabelConfirms] != "" || loadclient.For(other.Spec.Workload).Name() != client ||
			scheduledAt(other).After(at) {
			continue
		}
		out = append(out, other)
	}
	return out
}

// scheduledAt is when a schedule's run was due: its annotation, else its creation.
func scheduledAt(run *v1.BenchmarkRun) time.Time {
	if t, err := time.Parse(time.RFC3339, run.Annotations[v1.AnnotationScheduledTime]); err == nil {
		return t
	}
	return run.CreationTimestamp.Time
}
