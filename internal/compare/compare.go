// Package compare compares a BenchmarkRun's results with a baseline run's, cell by cell (one
// target at one thread count), and renders the comparison as Markdown. It is pure: runs in, a
// verdict out. What is judged are the policy's rules (rules.go: a throughput drop, a p95 rise);
// how they are judged, and their error control over the whole run, is the same for every rule.
package compare

import (
	"fmt"
	"math"
	"slices"
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

// Compare compares run with baseline (nil: no baseline) under policy, with nothing known of
// other runs; see CompareWith.
func Compare(run, baseline *v1.BenchmarkRun, policy v1.RegressionPolicy) Result {
	return CompareWith(run, baseline, policy, Options{})
}

// CompareWith compares run with baseline (nil: no baseline) under policy and decides the run's
// verdict with its false-alarm rate controlled over the whole run, and over the noise between
// runs that the repetitions of one run cannot see:
//
//  1. Per target and rule (QPS, p95), its level: the geometric mean over its cells of
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
func CompareWith(run, baseline *v1.BenchmarkRun, regression v1.RegressionPolicy, opts Options) Result {
	policy := NewPolicy(regression)
	res := Result{Summary: policy.Comparison(run.Name)}
	if baseline == nil {
		res.Summary.Verdict = v1.VerdictNoBaseline
		res.Summary.Message = "no baseline: this is the first successful run to compare with"
		return res
	}
	res.Summary.Baseline = baseline.Name
	if c := loadclient.For(primaryWorkload(run)); c.Capabilities().Metric.Name != "QPS" {
		res.Summary.Metric = c.Capabilities().Metric.Name
	}
	if rc, bc := primaryWorkload(run).ClientOrDefault(), primaryWorkload(baseline).ClientOrDefault(); rc != bc {
		// QPS and tpmC, or two clients' QPS, measure different things: no verdict between them.
		res.Summary.Verdict = v1.VerdictNoBaseline
		res.Summary.Message = fmt.Sprintf("baseline %s ran client %s, this run %s: their numbers do not compare; "+
			"compare runs of the same client", baseline.Name, bc, rc)
		return res
	}
	if why := workloadsDiffer(run, baseline); why != "" {
		res.Summary.Verdict, res.Summary.Message = v1.VerdictNoBaseline, why
		return res
	}
	c := &comparing{res: &res, policy: policy, run: run, baseline: baseline, at: finishedAt(run),
		same: sameRun(run, baseline), conf: 1 - 2*policy.Alpha}
	c.pairCells()
	for _, h := range opts.History {
		if h != nil && h.Name != run.Name {
			c.hist = append(c.hist, h)
		}
	}
	for _, g := range c.targets {
		res.Targets = append(res.Targets, v1.TargetChange{Target: g.target, Workload: g.workload, Confidence: c.conf})
	}
	var fams []*family
	for ri := range policy.Rules {
		fams = append(fams, c.families(ri)...)
	}
	for _, f := range fams {
		t := &res.Targets[f.target]
		*f.rule.target(t).ratio = round4(f.ratio.Ratio)
		if f.throughput() {
			t.Cells = int32(f.ratio.Cells)
		}
	}
	res.Summary.Tests = int32(judgeFamilies(&res, fams, policy.Alpha))
	for _, f := range fams {
		t := &res.Targets[f.target]
		if *f.rule.target(t).verdict != v1.CellInconclusive {
			continue
		}
		n, can := neededRepetitions(f, policy.Alpha)
		if !can {
			t.RepetitionsCannotDecide = true
		}
		res.Summary.NeededRepetitions = max(res.Summary.NeededRepetitions, n)
	}
	for i := range res.Targets {
		c.note(i, fams)
	}
	finishVerdicts(&res, policy.Rules, policy.Acknowledged, c.at)
	summarize(&res, baseline.Name, policy)
	return res
}

// comparing is one CompareWith under way: the two runs under the policy, and the cells both
// measured, by target and workload.
type comparing struct {
	res           *Result
	policy        Policy
	run, baseline *v1.BenchmarkRun
	at            time.Time
	same          bool
	conf          float64
	hist          []*v1.BenchmarkRun
	base, cur     map[cellKey]cells.Cell
	targets       []groupKey
	perTarget     map[groupKey][]int // indices in res.Cells, by target and workload
}

// pairCells describes each cell both runs measured, in the run's order, and names the cells
// only one of them measured.
func (c *comparing) pairCells() {
	res := c.res
	baseOrder, base := samples(c.baseline)
	runOrder, cur := samples(c.run)
	c.base, c.cur, c.perTarget = base, cur, map[groupKey][]int{}
	for _, k := range runOrder {
		b, ok := base[k]
		if !ok {
			res.OnlyInRun = append(res.OnlyInRun, cellName(k))
			continue
		}
		if _, seen := c.perTarget[k.group()]; !seen {
			c.targets = append(c.targets, k.group())
		}
		c.perTarget[k.group()] = append(c.perTarget[k.group()], len(res.Cells))
		res.Cells = append(res.Cells, cell(k, b, cur[k], c.policy.Rules))
	}
	for _, k := range baseOrder {
		if _, ok := cur[k]; !ok {
			res.OnlyInBaseline = append(res.OnlyInBaseline, cellName(k))
		}
	}
}

// families are rule ri's families, one per target (and workload) with a cell to judge, with
// their levels against the baseline and against the other targets.
func (c *comparing) families(ri int) []*family {
	var histLevels []map[cellKey]float64
	if !c.same {
		for _, h := range c.hist {
			histLevels = append(histLevels, levels(h, c.policy.Rules[ri]))
		}
	}
	var mf []*family
	for ti := range c.targets {
		f, keys, pairs := c.family(ti, ri)
		if len(pairs) == 0 {
			continue
		}
		c.level(f, keys, pairs, histLevels)
		f.cellEstimates()
		mf = append(mf, f)
	}
	relate(mf, histLevels, c.res)
	return mf
}

// family gathers the cells of target ti that rule ri judges: those measuring the metric on both
// sides that no acknowledgement covers (an acknowledged one gets its own test's verdict, and
// decides nothing).
func (c *comparing) family(ti, ri int) (*family, []cellKey, []stats.Pair) {
	r := c.policy.Rules[ri]
	f := &family{target: ti, rule: r, ri: ri}
	var pairs []stats.Pair
	var keys []cellKey
	for _, ci := range c.perTarget[c.targets[ti]] {
		cl := &c.res.Cells[ci]
		k := keyOf(cl.CellChange)
		bv, cv := r.Samples(c.base[k]), r.Samples(c.cur[k])
		if !positive(bv) || !positive(cv) {
			continue
		}
		if ackCovers(c.policy.Acknowledged, k, r.Metric(), c.at) {
			rawCellVerdict(cl, r, logDiff(bv, cv), c.policy.Alpha)
			continue
		}
		f.cells = append(f.cells, ci)
		f.logs = append(f.logs, logDiff(bv, cv))
		pairs = append(pairs, stats.Pair{Base: bv, Cur: cv})
		keys = append(keys, k)
		if f.reps == 0 || min(cl.BaselineN, cl.N) < f.reps {
			f.reps = min(cl.BaselineN, cl.N)
		}
	}
	return f, keys, pairs
}

// level estimates f's level against the baseline (abs) with the between-run allowance of its
// source: the history's spread of the target's level, else the policy's run-to-run CV; only the
// per-target part of it when both sides are one run, none of that when the repetitions saw the
// server instances.
func (c *comparing) level(f *family, keys []cellKey, pairs []stats.Pair, histLevels []map[cellKey]float64) {
	name := c.targets[f.target].target
	f.ratio = stats.Ratio(pairs, stats.RatioOptions{Confidence: c.conf})
	f.instances = instancesMeasured(c.run, name) && instancesMeasured(c.baseline, name)
	if f.instances && f.throughput() {
		c.res.Targets[f.target].InstanceCVPercent = round1(100 * pooledCV(pairs))
	}
	// Per target: what differs between two server instances, unless the repetitions
	// saw it; in common: what differs between two nights, unless both sides are one run.
	f.sigmaTarget = c.policy.RunToRunCV
	if f.instances {
		f.sigmaTarget = 0
	}
	f.sigmaAbs, f.source = c.policy.RunToRunCV, c.policy.RunToRunSource
	if c.same {
		f.sigmaAbs, f.source = f.sigmaTarget, SourceSameRun
	}
	within, wdf := 0.0, 0.0
	if f.ratio.Valid() {
		within, wdf = f.ratio.LogSE*f.ratio.LogSE, f.ratio.DF
	}
	// Without an interval of its own (single repetitions of 1-2 thread counts) a target
	// is judged only when the history measured whole nights: an allowance for the
	// night alone would pass the repetitions' unknown noise for none.
	if !(f.ratio.Cells > 0 && f.ratio.Ratio > 0) {
		return
	}
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

// cellEstimates are each cell's change against the baseline, with the between-run allowance
// (own), and against the target's other cells, where shifts of the whole target cancel (shape).
func (f *family) cellEstimates() {
	f.own = make([]est, len(f.logs))
	for j, l := range f.logs {
		if l.ok {
			f.own[j] = newEst(l.d, l.v, l.df, 2*f.sigmaAbs*f.sigmaAbs)
		}
	}
	f.shape = make([]est, len(f.logs))
	if len(f.logs) < 2 {
		return
	}
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

// relate estimates each family's level against the other targets' mean level in the same rule
// and workload (rel): a common shift cancels, so only the per-target part of the allowance
// remains, or the history's spread of that contrast. Workloads are not contrasted with each
// other: one target's workloads differ by design.
func relate(mf []*family, histLevels []map[cellKey]float64, res *Result) {
	for _, f := range mf {
		if !f.ratio.Valid() {
			continue
		}
		var sum, ov, otherAdded float64
		vs, dfs := []float64{f.ratio.LogSE * f.ratio.LogSE}, []float64{f.ratio.DF}
		var others []*family
		for _, o := range mf {
			if o != f && o.ratio.Valid() && res.Targets[o.target].Workload == res.Targets[f.target].Workload {
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
			if hv := relHistoryVar(histLevels, f, others, res); hv >= 0 {
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
}

// note says for target i why an interval is missing, how noisy it was and which allowance it
// used.
func (c *comparing) note(i int, fams []*family) {
	t := &c.res.Targets[i]
	var notes []string
	for _, f := range fams {
		if f.target != i {
			continue
		}
		switch {
		case f.ratio.Reason != "" && !f.abs.ok:
			notes = append(notes, f.rule.Name()+": "+f.ratio.Reason)
		case f.throughput() && f.ratio.Spread != "":
			notes = append(notes, "noise "+f.ratio.Spread)
		}
	}
	if t.Cells == 0 && !slices.ContainsFunc(c.policy.Rules[1:], func(r Rule) bool { return *r.target(t).ratio != 0 }) {
		notes = append(notes, "QPS: every cell acknowledged")
	}
	if s := runToRunNote(*t); s != "" {
		notes = append(notes, s)
	}
	t.Note = strings.Join(notes, "; ")
}
