// Package compare compares a BenchmarkRun's results with a baseline run's, cell by cell (one
// target at one thread count), and renders the comparison as Markdown. It is pure: runs in, a
// verdict out.
package compare

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
)

// MaxWorst is how many regressed cells a Comparison names.
const MaxWorst = 5

// Result is a comparison: the summary that goes into status, every cell for the table, and the
// cells only one of the two runs measured.
type Result struct {
	Summary v1.Comparison
	Cells   []Cell
	Targets []v1.TargetChange
	// OnlyInRun and OnlyInBaseline are "target@threads" of cells the other run lacks.
	OnlyInRun, OnlyInBaseline []string
}

type cellKey struct {
	target  string
	threads int32
}

// samples are the repetitions of the cells of a run that measured a throughput (QPS, or tpmC for
// go-tpc), by cell, in report order.
func samples(run *v1.BenchmarkRun) ([]cellKey, map[cellKey]cells.Cell) {
	var order []cellKey
	out := map[cellKey]cells.Cell{}
	for _, t := range run.Status.Targets {
		var measured []v1.StepResult
		for _, s := range t.Steps {
			if s.Throughput() > 0 {
				measured = append(measured, s)
			}
		}
		for _, c := range cells.Of(measured) {
			k := cellKey{t.Name, c.Threads}
			if _, dup := out[k]; !dup {
				order = append(order, k)
				out[k] = c
			}
		}
	}
	return order, out
}

// Compare compares run with baseline (nil: no baseline) under policy, with nothing known of
// other runs; see CompareWith.
func Compare(run, baseline *v1.BenchmarkRun, policy v1.RegressionPolicy) Result {
	return CompareWith(run, baseline, policy, Options{})
}

// CompareWith compares run with baseline (nil: no baseline) under policy and decides the run's
// verdict with its false-alarm rate controlled over the whole run, and over the noise between
// runs that the repetitions of one run cannot see:
//
//  1. Per target and metric (QPS, p95), its level: the geometric mean over its cells of
//     run/baseline medians (stats.Ratio), whose noise is the larger of the cells' disagreement
//     and the repetitions' spread, plus an allowance for how much a target's level moves
//     between runs: from opts.History (the spread of the target's level over the schedule's
//     retained runs, MinHistoryRuns or more), else policy.RunToRunCVPercent (default 6 %). Two
//     views of one run (a confirmation) need the per-target part only.
//  2. Per target, its level against the other targets' (a shift of the whole run, which moves
//     every target, cancels), with the per-target part of the allowance only: none when every
//     repetition had its own server instance in both runs (the repetitions saw the instances).
//  3. Per cell, its change against its target's other cells (Welch t on the log repetitions).
//  4. A hierarchy (judgeFamilies): targets first, adjusted together; then the cells of a
//     changed target, adjusted over that target's cells. A target or cell regressed when
//     significant and its change is at least the minimum effect in the harmful direction.
//  5. NoRegression: nothing regressed, every target's interval (with the allowance) excludes a
//     drop of the minimum effect, and no cell's own interval lies wholly beyond it.
//
// Acknowledged cells are left out of their target's level and of the tests.
func CompareWith(run, baseline *v1.BenchmarkRun, policy v1.RegressionPolicy, opts Options) Result {
	qpsThr, p95Thr, alpha := policy.QPSDropPercentOrDefault(), policy.P95RisePercentOrDefault(), policy.AlphaOrDefault()
	res := Result{Summary: v1.Comparison{Run: run.Name, QPSDropPercent: qpsThr, P95RisePercent: p95Thr, Alpha: alpha}}
	if baseline == nil {
		res.Summary.Verdict = v1.VerdictNoBaseline
		res.Summary.Message = "no baseline: this is the first successful run to compare with"
		return res
	}
	res.Summary.Baseline = baseline.Name
	if c := loadclient.For(run.Spec.Workload); c.Capabilities().Metric.Name != "QPS" {
		res.Summary.Metric = c.Capabilities().Metric.Name
	}
	if rc, bc := run.Spec.Workload.ClientOrDefault(), baseline.Spec.Workload.ClientOrDefault(); rc != bc {
		// QPS and tpmC, or two clients' QPS, measure different things: no verdict between them.
		res.Summary.Verdict = v1.VerdictNoBaseline
		res.Summary.Message = fmt.Sprintf("baseline %s ran client %s, this run %s: their numbers do not compare; "+
			"compare runs of the same client", baseline.Name, bc, rc)
		return res
	}
	at := finishedAt(run)
	metrics := []metricSpec{
		{v1.AckQPS, true, qpsThr / 100, func(c cells.Cell) []float64 { return c.QPS }},
		{v1.AckP95, false, p95Thr / 100, func(c cells.Cell) []float64 { return c.P95Ms }},
	}

	baseOrder, base := samples(baseline)
	runOrder, cur := samples(run)
	var targets []string
	perTarget := map[string][]int{}
	for _, k := range runOrder {
		b, ok := base[k]
		if !ok {
			res.OnlyInRun = append(res.OnlyInRun, cellName(k))
			continue
		}
		if _, seen := perTarget[k.target]; !seen {
			targets = append(targets, k.target)
		}
		perTarget[k.target] = append(perTarget[k.target], len(res.Cells))
		res.Cells = append(res.Cells, cell(k, b, cur[k]))
	}
	for _, k := range baseOrder {
		if _, ok := cur[k]; !ok {
			res.OnlyInBaseline = append(res.OnlyInBaseline, cellName(k))
		}
	}

	// The between-run allowance, per source (see RegressionPolicy.RunToRunCVPercent).
	same := sameRun(run, baseline)
	policySigma := policy.RunToRunCVPercentOrDefault() / 100
	policySource := SourceDefault
	if policy.RunToRunCVPercent != nil {
		policySource = SourcePolicy
	}
	var hist []*v1.BenchmarkRun
	for _, h := range opts.History {
		if h != nil && h.Name != run.Name {
			hist = append(hist, h)
		}
	}

	conf := 1 - 2*alpha
	var fams []*family
	for _, m := range metrics {
		var histLevels []map[cellKey]float64
		if !same {
			for _, h := range hist {
				histLevels = append(histLevels, levels(h, m))
			}
		}
		var mf []*family
		for ti, name := range targets {
			if m.ack == v1.AckQPS {
				res.Targets = append(res.Targets, v1.TargetChange{Target: name, Confidence: conf})
			}
			f := &family{target: ti, m: m}
			var pairs []stats.Pair
			var keys []cellKey
			for _, ci := range perTarget[name] {
				c := &res.Cells[ci]
				k := cellKey{c.Target, c.Threads}
				bv, cv := m.values(base[k]), m.values(cur[k])
				if !positive(bv) || !positive(cv) {
					continue
				}
				if ackCovers(policy.Acknowledged, k, m.ack, at) {
					rawCellVerdict(c, m, logDiff(bv, cv), alpha)
					continue
				}
				f.cells = append(f.cells, ci)
				f.logs = append(f.logs, logDiff(bv, cv))
				pairs = append(pairs, stats.Pair{Base: bv, Cur: cv})
				keys = append(keys, k)
				if f.reps == 0 || min(c.BaselineN, c.N) < f.reps {
					f.reps = min(c.BaselineN, c.N)
				}
			}
			if len(pairs) == 0 {
				continue
			}
			f.ratio = stats.Ratio(pairs, stats.RatioOptions{Confidence: conf})
			f.instances = instancesMeasured(run, name) && instancesMeasured(baseline, name)
			if f.instances && m.ack == v1.AckQPS {
				res.Targets[ti].InstanceCVPercent = round1(100 * pooledCV(pairs))
			}
			// Per target: what differs between two server instances, unless the repetitions
			// saw it; in common: what differs between two nights, unless both sides are one run.
			f.sigmaTarget = policySigma
			if f.instances {
				f.sigmaTarget = 0
			}
			f.sigmaAbs, f.source = policySigma, policySource
			if same {
				f.sigmaAbs, f.source = f.sigmaTarget, SourceSameRun
			}
			within, wdf := 0.0, 0.0
			if f.ratio.Valid() {
				within, wdf = f.ratio.LogSE*f.ratio.LogSE, f.ratio.DF
			}
			// Without an interval of its own (single repetitions of 1-2 thread counts) a target
			// is judged only when the history measured whole nights: an allowance for the
			// night alone would pass the repetitions' unknown noise for none.
			if f.ratio.Cells > 0 && f.ratio.Ratio > 0 {
				d := math.Log(f.ratio.Ratio)
				if hl := historyLevels(histLevels, keys); len(hl) >= MinHistoryRuns {
					// The nights' own spread: a difference of two nights' levels has twice the
					// variance of one night's, repetitions' noise included.
					vh := sampleVar(hl)
					f.sigmaAbs, f.source, f.historyRuns = math.Sqrt(vh), SourceHistory, len(hl)
					if 2*vh > within {
						f.abs = newEst(d, 2*vh, float64(len(hl)-1), 0)
					} else {
						f.abs = newEst(d, within, wdf, 0)
					}
					f.abs.within, f.abs.added = within, math.Max(0, 2*vh-within)
				} else if f.ratio.Valid() {
					f.abs = newEst(d, within, wdf, 2*f.sigmaAbs*f.sigmaAbs)
				}
			}
			f.own = make([]est, len(f.logs))
			for j, l := range f.logs {
				if l.ok {
					f.own[j] = newEst(l.d, l.v, l.df, 2*f.sigmaAbs*f.sigmaAbs)
				}
			}
			// Each cell against the target's other cells: shifts of the whole target cancel.
			f.shape = make([]est, len(f.logs))
			if len(f.logs) >= 2 {
				for j, l := range f.logs {
					if !l.ok {
						continue
					}
					var sum, v float64
					vs, dfs := []float64{l.v}, []float64{l.df}
					others := 0
					for i, o := range f.logs {
						if i == j || !o.ok {
							continue
						}
						others++
						sum += o.d
						vs, dfs = append(vs, o.v), append(dfs, o.df)
					}
					if others == 0 {
						continue
					}
					k := float64(others)
					for i := 1; i < len(vs); i++ {
						vs[i] /= k * k
					}
					for _, x := range vs {
						v += x
					}
					added := 2 * f.sigmaTarget * f.sigmaTarget * (1 + 1/k)
					f.shape[j] = newEst(l.d-sum/k, v, stats.Satterthwaite(vs, dfs), added)
				}
			}
			mf = append(mf, f)
		}
		// Each target against the others' mean level: a common shift cancels.
		for _, f := range mf {
			if !f.ratio.Valid() {
				continue
			}
			var sum, ov, otherAdded float64
			vs, dfs := []float64{f.ratio.LogSE * f.ratio.LogSE}, []float64{f.ratio.DF}
			var others []*family
			for _, o := range mf {
				if o != f && o.ratio.Valid() {
					others = append(others, o)
				}
			}
			if len(others) == 0 {
				continue
			}
			k := float64(len(others))
			for _, o := range others {
				sum += math.Log(o.ratio.Ratio)
				ov = o.ratio.LogSE * o.ratio.LogSE / (k * k)
				vs, dfs = append(vs, ov), append(dfs, o.ratio.DF)
				otherAdded += 2 * o.sigmaTarget * o.sigmaTarget / (k * k)
			}
			d := math.Log(f.ratio.Ratio) - sum/k
			var within float64
			for _, x := range vs {
				within += x
			}
			wdf := stats.Satterthwaite(vs, dfs)
			added := 2*f.sigmaTarget*f.sigmaTarget + otherAdded
			if f.source == SourceHistory {
				if hv := relHistoryVar(histLevels, f, others, &res); hv >= 0 {
					if 2*hv > within {
						f.rel = newEst(d, 2*hv, float64(f.historyRuns-1), 0)
					} else {
						f.rel = newEst(d, within, wdf, 0)
					}
					continue
				}
			}
			f.rel = newEst(d, within, wdf, added)
		}
		fams = append(fams, mf...)
	}

	for _, f := range fams {
		t := &res.Targets[f.target]
		if f.m.ack == v1.AckQPS {
			t.QPSRatio, t.Cells = round4(f.ratio.Ratio), int32(f.ratio.Cells)
		} else {
			t.P95Ratio = round4(f.ratio.Ratio)
		}
	}
	res.Summary.Tests = int32(judgeFamilies(&res, fams, alpha))
	for _, f := range fams {
		if familyVerdictOf(res.Targets[f.target], f.m.ack) != v1.CellInconclusive {
			continue
		}
		n, can := neededRepetitions(f, alpha)
		if !can {
			res.Targets[f.target].RepetitionsCannotDecide = true
		}
		res.Summary.NeededRepetitions = max(res.Summary.NeededRepetitions, n)
	}
	for i := range res.Targets {
		t := &res.Targets[i]
		var notes []string
		for _, f := range fams {
			if f.target != i {
				continue
			}
			name := "QPS"
			if f.m.ack == v1.AckP95 {
				name = "p95"
			}
			switch {
			case f.ratio.Reason != "" && !f.abs.ok:
				notes = append(notes, name+": "+f.ratio.Reason)
			case f.m.ack == v1.AckQPS && f.ratio.Spread != "":
				notes = append(notes, "noise "+f.ratio.Spread)
			}
		}
		if t.Cells == 0 && t.P95Ratio == 0 {
			notes = append(notes, "QPS: every cell acknowledged")
		}
		if s := runToRunNote(*t); s != "" {
			notes = append(notes, s)
		}
		t.Note = strings.Join(notes, "; ")
	}
	finishVerdicts(&res, policy.Acknowledged, at)
	summarize(&res, baseline.Name, qpsThr, p95Thr, alpha)
	return res
}

// pooledCV is the coefficient of variation of the repetitions of both sides of every pair,
// pooled (the log standard deviation, weighted by degrees of freedom).
func pooledCV(pairs []stats.Pair) float64 {
	var ss, df float64
	for _, p := range pairs {
		for _, xs := range [][]float64{positiveValues(p.Base), positiveValues(p.Cur)} {
			if len(xs) < 2 {
				continue
			}
			_, v := logMeanVar(xs)
			ss += v * float64(len(xs)-1)
			df += float64(len(xs) - 1)
		}
	}
	if df == 0 {
		return 0
	}
	return math.Sqrt(math.Expm1(ss / df))
}

// familyVerdictOf is a target's verdict in one metric.
func familyVerdictOf(t v1.TargetChange, m v1.AckMetric) v1.CellVerdict {
	if m == v1.AckQPS {
		return t.QPSVerdict
	}
	return t.P95Verdict
}

// relHistoryVar is the variance, over the history runs measuring every cell of f and of the
// other targets, of f's level minus the others' mean level; -1 when fewer than MinHistoryRuns.
func relHistoryVar(hist []map[cellKey]float64, f *family, others []*family, res *Result) float64 {
	keysOf := func(g *family) []cellKey {
		var ks []cellKey
		for _, ci := range g.cells {
			ks = append(ks, cellKey{res.Cells[ci].Target, res.Cells[ci].Threads})
		}
		return ks
	}
	var contrasts []float64
	for _, h := range hist {
		one := []map[cellKey]float64{h}
		own := historyLevels(one, keysOf(f))
		if len(own) == 0 {
			continue
		}
		var sum float64
		all := true
		for _, o := range others {
			l := historyLevels(one, keysOf(o))
			if len(l) == 0 {
				all = false
				break
			}
			sum += l[0]
		}
		if all {
			contrasts = append(contrasts, own[0]-sum/float64(len(others)))
		}
	}
	if len(contrasts) < MinHistoryRuns {
		return -1
	}
	return sampleVar(contrasts)
}

// runToRunNote says what between-run noise a target's QPS interval allows for.
func runToRunNote(t v1.TargetChange) string {
	var s string
	switch t.RunToRunSource {
	case SourceHistory:
		s = fmt.Sprintf("run-to-run CV %s %% from the schedule's retained runs", pct(t.RunToRunCVPercent))
	case SourcePolicy:
		s = fmt.Sprintf("run-to-run CV %s %% allowed (spec.regression.runToRunCVPercent)", pct(t.RunToRunCVPercent))
	case SourceDefault:
		s = fmt.Sprintf("run-to-run CV %s %% allowed (the default; the schedule's history replaces it after %d runs)", pct(t.RunToRunCVPercent), MinHistoryRuns)
	case SourceSameRun:
		s = fmt.Sprintf("both sides in one run: per-target CV %s %% allowed", pct(t.RunToRunCVPercent))
	default:
		return ""
	}
	if t.InstancesMeasured {
		s += fmt.Sprintf("; every repetition on its own server instance (their CV %s %%, the spread between instances "+
			"included), so the comparison with the other targets allows nothing more", pct(t.InstanceCVPercent))
	}
	if t.RepetitionsCannotDecide {
		s += "; more repetitions cannot decide: the run-to-run allowance alone is wider than the minimum effect"
	}
	return s
}

// combine is the verdict of two metrics (an empty one was not measured): Regressed wins, then
// Inconclusive (an improvement in one metric does not vouch for the other), then Improved.
func combine(kinds ...v1.CellVerdict) v1.CellVerdict {
	switch {
	case slices.Contains(kinds, v1.CellRegressed):
		return v1.CellRegressed
	case slices.Contains(kinds, v1.CellInconclusive):
		return v1.CellInconclusive
	case slices.Contains(kinds, v1.CellImproved):
		return v1.CellImproved
	case slices.Contains(kinds, v1.CellNoChange):
		return v1.CellNoChange
	default:
		return v1.CellInconclusive
	}
}

// summarize counts the cells and decides the run's verdict (see Compare).
func summarize(res *Result, baseline string, qpsThr, p95Thr, alpha float64) {
	s := &res.Summary
	regressed := tallyCells(res, qpsThr, p95Thr)

	var regressedTargets, openTargets, beyond []string
	for _, t := range res.Targets {
		switch t.Verdict {
		case v1.CellRegressed:
			regressedTargets = append(regressedTargets, DescribeTarget(s.Metric, t))
		case v1.CellInconclusive:
			openTargets = append(openTargets, DescribeTarget(s.Metric, t))
			for _, c := range res.Cells {
				if c.Target == t.Target {
					s.NeededRepetitions = max(s.NeededRepetitions, int32(c.neededQPS), int32(c.neededP95))
				}
			}
		}
	}
	for _, c := range res.Cells {
		if !c.Acknowledged && (c.beyondQPS || c.beyondP95) && c.Verdict != v1.CellRegressed {
			beyond = append(beyond, Describe(s.Metric, c.CellChange))
		}
	}
	rule := fmt.Sprintf("alpha %g over %d tests (targets, then the cells of changed targets), minimum effect %s -%s%%, p95 +%s%%", alpha, s.Tests,
		metricName(s.Metric), pct(qpsThr), pct(p95Thr))
	counts := cellCounts(s)
	detectable := MinDetectable(res.Targets)
	switch {
	case len(res.Cells) == 0:
		s.Verdict = v1.VerdictNoBaseline
		s.Message = fmt.Sprintf("no cell in common with baseline %s (targets or thread counts changed)", baseline)
	case len(regressedTargets) > 0 || s.RegressedCells > 0:
		s.Verdict = v1.VerdictRegressed
		what := regressedParts(s.Metric, regressedTargets, regressed)
		s.Message = fmt.Sprintf("regressed against %s (%s; %s); %s", baseline, rule, counts, strings.Join(what, "; "))
	case len(openTargets) > 0 || len(beyond) > 0:
		s.Verdict = v1.VerdictInconclusive
		var why []string
		if len(openTargets) > 0 {
			why = append(why, "a drop of the minimum effect cannot be ruled out for "+strings.Join(openTargets, "; "))
		}
		if len(beyond) > 0 {
			why = append(why, "the repetitions put these cells beyond the minimum effect, a change the run's other cells do not show "+
				"at the adjusted level: "+strings.Join(beyond, "; "))
		}
		s.Message = fmt.Sprintf("nothing regressed against %s, but %s (%s; %s)", baseline, strings.Join(why, "; and "), rule, counts)
		if s.NeededRepetitions > 0 {
			s.Message += fmt.Sprintf("; about %d repetitions per run would decide (spec.repetitions)", s.NeededRepetitions)
		}
	default:
		s.Verdict = v1.VerdictNoRegression
		s.Message = fmt.Sprintf("no regression against %s: every target's interval rules out the minimum effect (%s; %s)", baseline, rule, counts)
	}
	if detectable != "" && len(res.Cells) > 0 {
		s.Message += "; " + detectable
	}
}

// MinDetectable says, per target, the smallest QPS drop the comparison could have found and the
// run-to-run allowance behind it: "smallest detectable drop: a 7.9 %, b 8.1 % (run-to-run CV 6 %,
// the default)". Empty when no target has a figure.
func MinDetectable(ts []v1.TargetChange) string {
	var parts []string
	var sources []string
	for _, t := range ts {
		if t.MinDetectablePercent <= 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s %%", t.Target, pct(t.MinDetectablePercent)))
		src := fmt.Sprintf("run-to-run CV %s %% (%s)", pct(t.RunToRunCVPercent), t.RunToRunSource)
		if !slices.Contains(sources, src) {
			sources = append(sources, src)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("smallest detectable drop: %s, with %s", strings.Join(parts, ", "), strings.Join(sources, ", "))
}

// DescribeTarget names a target's geometric-mean changes with their intervals, e.g.
// "mysql80: QPS x0.912 [0.890, 0.934], p95 x1.08 [1.02, 1.15]".
func DescribeTarget(metric string, t v1.TargetChange) string {
	s := fmt.Sprintf("%s: %s %s", t.Target, metricName(metric), ratioText(t.QPSRatio, t.QPSLow, t.QPSHigh))
	if t.P95Ratio > 0 {
		s += ", p95 " + ratioText(t.P95Ratio, t.P95Low, t.P95High)
	}
	return s
}

func ratioText(r, lo, hi float64) string {
	if hi == 0 {
		return fmt.Sprintf("x%.3f (no interval)", r)
	}
	return fmt.Sprintf("x%.3f [%.3f, %.3f]", r, lo, hi)
}

// Short is the verdict for a printer column: "Regressed 3/24" (cells regressed), "Regressed
// 1/2 targets" (a target's geometric mean regressed, no single cell), "Inconclusive 1/2
// targets", "OK 0/24" or "NoBaseline".
func Short(c v1.Comparison) string {
	count := func(v v1.CellVerdict) int {
		n := 0
		for _, t := range c.Targets {
			if t.Verdict == v {
				n++
			}
		}
		return n
	}
	switch {
	case c.Verdict == v1.VerdictRegressed && c.RegressedCells == 0 && len(c.Targets) > 0:
		return fmt.Sprintf("Regressed %d/%d targets", count(v1.CellRegressed), len(c.Targets))
	case c.Verdict == v1.VerdictRegressed:
		return fmt.Sprintf("Regressed %d/%d", c.RegressedCells, c.ComparedCells)
	case c.Verdict == v1.VerdictInconclusive && len(c.Targets) > 0:
		return fmt.Sprintf("Inconclusive %d/%d targets", count(v1.CellInconclusive), len(c.Targets))
	case c.Verdict == v1.VerdictInconclusive:
		// Recorded before targets were judged: cells inconclusive.
		return fmt.Sprintf("Inconclusive %d/%d", c.InconclusiveCells, c.ComparedCells)
	}
	switch c.Verdict {
	case v1.VerdictNoRegression:
		return fmt.Sprintf("OK 0/%d", c.ComparedCells)
	default:
		return string(v1.VerdictNoBaseline)
	}
}

// metricName is a Comparison's Metric for people: QPS when empty.
func metricName(metric string) string {
	if metric == "" {
		return "QPS"
	}
	return metric
}

// Describe names a cell and its changes under metric (a Comparison's Metric), e.g. "mysql80 at
// 64 threads: QPS -12.3%, p95 +15.0%".
func Describe(metric string, c v1.CellChange) string {
	s := fmt.Sprintf("%s at %d threads: %s %s%%", c.Target, c.Threads, metricName(metric), signed(c.QPSChangePercent))
	if c.BaselineP95Ms > 0 && c.P95Ms > 0 {
		s += fmt.Sprintf(", p95 %s%%", signed(c.P95ChangePercent))
	}
	return s
}

// Cell is a compared cell: what status and comparison.md show, and what the run's verdict needs
// from it.
type Cell struct {
	v1.CellChange
	neededQPS, neededP95 int
	// beyondQPS, beyondP95: the repetitions alone put the cell's change wholly beyond the
	// minimum effect on the harmful side.
	beyondQPS, beyondP95 bool
}

func (c *Cell) setNeeded(m v1.AckMetric, n int) {
	if m == v1.AckQPS {
		c.neededQPS = n
	} else {
		c.neededP95 = n
	}
}

// cell describes one cell's medians, spreads and changes; the verdicts are decided later, by
// the hierarchy over the whole comparison.
func cell(k cellKey, b, s cells.Cell) Cell {
	bs, ss := stats.Summarize(b.QPS), stats.Summarize(s.QPS)
	c := v1.CellChange{
		Target: k.target, Threads: k.threads,
		BaselineN: int32(len(b.QPS)), N: int32(len(s.QPS)),
		BaselineQPS: bs.Median, QPS: ss.Median,
		BaselineQPSCV: round1(bs.CV * 100), QPSCV: round1(ss.CV * 100),
		BaselineQPSSpread: round1(spread(bs)), QPSSpread: round1(spread(ss)),
		SpreadConfidence: round4(min(bs.CIConfidence, ss.CIConfidence)),
	}
	if bs.Median > 0 {
		c.QPSChangePercent = round1((ss.Median/bs.Median - 1) * 100)
	}
	if positive(b.P95Ms) && positive(s.P95Ms) {
		bp, sp := stats.Summarize(b.P95Ms).Median, stats.Summarize(s.P95Ms).Median
		c.BaselineP95Ms, c.P95Ms = bp, sp
		c.P95ChangePercent = round1((sp/bp - 1) * 100)
	}
	return Cell{CellChange: c}
}

// spread is the half-width of a median's interval in percent of the median: the larger
// distance from the median to a bound.
func spread(s stats.Summary) float64 {
	if s.Median == 0 || s.N < 2 {
		return 0
	}
	return 100 * math.Max(s.Median-s.CILow, s.CIHigh-s.Median) / s.Median
}

// finishCell sets a cell's verdict from its metrics' adjusted verdicts. A metric an
// acknowledgement covers was left out of the adjustment and decides nothing; when its own test
// regressed the cell shows as regressed and acknowledged, so the known regression stays
// visible without alarming.
func finishCell(c *Cell, acks []v1.Acknowledgement, at time.Time) {
	k := cellKey{c.Target, c.Threads}
	var kinds, raw []v1.CellVerdict
	var reasons []string
	ackedRegression := false
	for _, m := range []struct {
		metric  v1.AckMetric
		verdict v1.CellVerdict
	}{{v1.AckQPS, c.QPSVerdict}, {v1.AckP95, c.P95Verdict}} {
		if m.verdict == "" {
			continue
		}
		raw = append(raw, m.verdict)
		if i := slices.IndexFunc(acks, func(a v1.Acknowledgement) bool { return Covers(a, k.target, k.threads, m.metric, at) }); i >= 0 {
			// Left out of the adjustment: its raw verdict stands, but it alarms no one.
			if m.verdict == v1.CellRegressed {
				ackedRegression = true
				if !slices.Contains(reasons, acks[i].Reason) {
					reasons = append(reasons, acks[i].Reason)
				}
			}
			continue
		}
		kinds = append(kinds, m.verdict)
	}
	c.Verdict = combine(kinds...)
	if len(kinds) == 0 {
		c.Verdict = combine(raw...)
	}
	if ackedRegression && !slices.Contains(kinds, v1.CellRegressed) {
		c.Verdict = v1.CellRegressed
		c.Acknowledged, c.AcknowledgedReason = true, strings.Join(reasons, "; ")
	}
	c.NeededRepetitions = 0
	if c.Verdict == v1.CellInconclusive {
		c.NeededRepetitions = int32(max(c.neededQPS, c.neededP95))
	}
	c.Regressed = c.Verdict == v1.CellRegressed && !c.Acknowledged
}

// ackCovers says whether an acknowledgement covers metric of cell k for a run finished at.
func ackCovers(acks []v1.Acknowledgement, k cellKey, metric v1.AckMetric, at time.Time) bool {
	return slices.ContainsFunc(acks, func(a v1.Acknowledgement) bool { return Covers(a, k.target, k.threads, metric, at) })
}

// Covers says whether ack covers the target at threads for metric, for a run finished at.
func Covers(ack v1.Acknowledgement, target string, threads int32, metric v1.AckMetric, at time.Time) bool {
	return ack.Target == target && (ack.Threads == nil || *ack.Threads == threads) &&
		(ack.Metric == "" || ack.Metric == metric) && (ack.Until == nil || !at.After(ack.Until.Time))
}

// finishedAt is when a run finished (its creation when it has no completion time).
func finishedAt(run *v1.BenchmarkRun) time.Time {
	if t := run.Status.CompletionTime; t != nil {
		return t.Time
	}
	return run.CreationTimestamp.Time
}

// positive says whether every sample is above 0 (a p95 of 0 means it was not measured).
func positive(xs []float64) bool {
	for _, x := range xs {
		if x <= 0 {
			return false
		}
	}
	return len(xs) > 0
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// severity orders regressed cells: how many percentage points the worse of the two changes went
// beyond its threshold.
func severity(c v1.CellChange, qpsThr, p95Thr float64) float64 {
	s := -c.QPSChangePercent - qpsThr
	if c.BaselineP95Ms > 0 && c.P95Ms > 0 {
		s = math.Max(s, c.P95ChangePercent-p95Thr)
	}
	return s
}

func cellName(k cellKey) string { return fmt.Sprintf("%s@%d", k.target, k.threads) }

func round1(x float64) float64 { return math.Round(x*10) / 10 }

func signed(x float64) string { return fmt.Sprintf("%+.1f", x) }

// pct prints a threshold without a needless fraction: 5, 2.5.
func pct(x float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", x), "0"), ".")
}

// maxRepeatedSteps is the API's limit on targets x threads x repetitions of a run with
// repetitions (spec.repetitions' CEL rule).
const maxRepeatedSteps = 512

// NextRepetitions is how many repetitions the schedule's next run measures. Without
// policy.MaxRepetitions it is the template's. With it: the newest compared run's repetitions
// (last, nil when there is none), raised after an Inconclusive comparison to what the test needs
// or twice as many, whichever is more; never below the template's, never above MaxRepetitions,
// and lowered (not below the template's) until the run fits the API's step limit.
func NextRepetitions(template v1.BenchmarkRunSpec, policy v1.RegressionPolicy, last *v1.BenchmarkRun) int32 {
	base := int32(template.RepetitionsOrDefault())
	if policy.MaxRepetitions == nil || last == nil {
		return base
	}
	reps := int32(last.Spec.RepetitionsOrDefault())
	if c := last.Status.Comparison; c != nil && c.Verdict == v1.VerdictInconclusive {
		reps = max(c.NeededRepetitions, 2*reps)
	}
	reps = max(base, min(reps, *policy.MaxRepetitions))
	cellsPerRep := int32(len(template.Targets) * len(template.Ladder.Threads))
	for reps > base && reps > 1 && cellsPerRep*reps > maxRepeatedSteps {
		reps--
	}
	return reps
}

// tallyCells counts res's cells by verdict into its summary, records the targets and the worst
// regressed cells (most severe first, at most MaxWorst) and returns those.
func tallyCells(res *Result, qpsThr, p95Thr float64) []v1.CellChange {
	s := &res.Summary
	s.ComparedCells = int32(len(res.Cells))
	var regressed []v1.CellChange
	for _, c := range res.Cells {
		switch {
		case c.Acknowledged:
			s.AcknowledgedCells++
		case c.Verdict == v1.CellRegressed:
			regressed = append(regressed, c.CellChange)
		case c.Verdict == v1.CellImproved:
			s.ImprovedCells++
		case c.Verdict == v1.CellNoChange:
			s.NoChangeCells++
		default:
			s.InconclusiveCells++
		}
	}
	s.RegressedCells = int32(len(regressed))
	sort.SliceStable(regressed, func(i, j int) bool {
		return severity(regressed[i], qpsThr, p95Thr) > severity(regressed[j], qpsThr, p95Thr)
	})
	if len(regressed) > MaxWorst {
		regressed = regressed[:MaxWorst]
	}
	s.Worst = regressed
	s.Targets = res.Targets
	return regressed
}

// cellCounts is the summary's cell counts as the verdict's message gives them.
func cellCounts(s *v1.Comparison) string {
	counts := fmt.Sprintf("cells: %d regressed, %d improved, %d unchanged, %d inconclusive", s.RegressedCells, s.ImprovedCells, s.NoChangeCells, s.InconclusiveCells)
	if s.AcknowledgedCells > 0 {
		counts += fmt.Sprintf(", %d acknowledged", s.AcknowledgedCells)
	}
	return counts
}

// regressedParts names what regressed: the targets, then the worst cells.
func regressedParts(metric string, targets []string, worst []v1.CellChange) []string {
	var what []string
	if len(targets) > 0 {
		what = append(what, "targets: "+strings.Join(targets, "; "))
	}
	if len(worst) > 0 {
		cells := make([]string, 0, len(worst))
		for _, c := range worst {
			cells = append(cells, Describe(metric, c))
		}
		what = append(what, "worst cells: "+strings.Join(cells, "; "))
	}
	return what
}

// finishVerdicts finishes every cell (acknowledgements) and gives each target the verdict of its
// QPS and p95 together.
func finishVerdicts(res *Result, acks []v1.Acknowledgement, at time.Time) {
	for i := range res.Cells {
		finishCell(&res.Cells[i], acks, at)
	}
	for i := range res.Targets {
		t := &res.Targets[i]
		switch {
		case t.QPSVerdict == "" && t.P95Verdict == "":
			// Every cell acknowledged: nothing left to judge.
			t.Verdict, t.Note = v1.CellNoChange, "every cell is acknowledged"
		case t.P95Verdict == "":
			t.Verdict = t.QPSVerdict
		case t.QPSVerdict == "":
			t.Verdict = t.P95Verdict
		default:
			t.Verdict = combine(t.QPSVerdict, t.P95Verdict)
		}
	}
}
