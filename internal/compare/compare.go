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

// Compare compares run with baseline (nil: no baseline) under policy, and decides the run's
// verdict with its false-alarm rate controlled over the whole run, not per cell:
//
//  1. Per target, the geometric mean over its cells of run/baseline median QPS (and p95), with
//     a t interval at 1 - 2·alpha (stats.Ratio): one number per target, whose noise is the
//     larger of the cells' disagreement and the repetitions' spread.
//  2. Per cell, a two-sided Mann-Whitney U test over the repetitions (stats.Compare).
//  3. Every p-value of both levels (targets and cells, QPS and p95) is adjusted together by
//     Benjamini-Hochberg; a target or cell regressed when its adjusted p-value is below alpha
//     and its change is at least the minimum effect in the harmful direction. When nothing
//     changed, the chance that any of them fires is at most alpha.
//  4. NoRegression is a run-level equivalence statement: nothing regressed and every target's
//     interval excludes a QPS drop (p95 rise) of the minimum effect. Cells need not each be
//     proven: a single cell with few repetitions never can.
//
// Acknowledged cells are left out of their target's geometric mean and of the adjustment.
func Compare(run, baseline *v1.BenchmarkRun, policy v1.RegressionPolicy) Result {
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
	qpsOpts := stats.Options{Alpha: alpha, MinEffect: qpsThr / 100, HigherIsBetter: true}
	p95Opts := stats.Options{Alpha: alpha, MinEffect: p95Thr / 100}

	baseOrder, base := samples(baseline)
	runOrder, cur := samples(run)
	var tests []test
	var targets []string
	perTarget := map[string][]cellKey{}
	for _, k := range runOrder {
		b, ok := base[k]
		if !ok {
			res.OnlyInRun = append(res.OnlyInRun, cellName(k))
			continue
		}
		if _, seen := perTarget[k.target]; !seen {
			targets = append(targets, k.target)
		}
		perTarget[k.target] = append(perTarget[k.target], k)
		i := len(res.Cells)
		c, qpsV, p95V := cell(k, b, cur[k], qpsOpts, p95Opts)
		res.Cells = append(res.Cells, c)
		if !ackCovers(policy.Acknowledged, k, v1.AckQPS, at) {
			tests = append(tests, test{p: qpsV.P, apply: func(q float64) {
				v := stats.Adjust(qpsV, q, len(b.QPS), len(cur[k].QPS), qpsOpts)
				res.Cells[i].QPSQ, res.Cells[i].QPSVerdict = round4(q), v1.CellVerdict(v.Kind)
				res.Cells[i].neededQPS = v.NeededN
			}})
		}
		if c.P95Ms > 0 && c.BaselineP95Ms > 0 && !ackCovers(policy.Acknowledged, k, v1.AckP95, at) {
			tests = append(tests, test{p: p95V.P, apply: func(q float64) {
				v := stats.Adjust(p95V, q, len(b.P95Ms), len(cur[k].P95Ms), p95Opts)
				res.Cells[i].P95Q, res.Cells[i].P95Verdict = round4(q), v1.CellVerdict(v.Kind)
				res.Cells[i].neededP95 = v.NeededN
			}})
		}
	}
	for _, k := range baseOrder {
		if _, ok := cur[k]; !ok {
			res.OnlyInBaseline = append(res.OnlyInBaseline, cellName(k))
		}
	}

	// Per-target geometric means over the cells no acknowledgement covers.
	conf := 1 - 2*alpha
	for _, name := range targets {
		tc := v1.TargetChange{Target: name, Confidence: conf}
		var qpsPairs, p95Pairs []stats.Pair
		for _, k := range perTarget[name] {
			b, c := base[k], cur[k]
			if !ackCovers(policy.Acknowledged, k, v1.AckQPS, at) {
				qpsPairs = append(qpsPairs, stats.Pair{Base: b.QPS, Cur: c.QPS})
			}
			if positive(b.P95Ms) && positive(c.P95Ms) && !ackCovers(policy.Acknowledged, k, v1.AckP95, at) {
				p95Pairs = append(p95Pairs, stats.Pair{Base: b.P95Ms, Cur: c.P95Ms})
			}
		}
		q := stats.Ratio(qpsPairs, stats.RatioOptions{Confidence: conf})
		tc.Cells = int32(q.Cells)
		tc.QPSRatio, tc.QPSLow, tc.QPSHigh, tc.QPSP = round4(q.Ratio), round4(q.Low), round4(q.High), round4(q.P)
		notes := []string{}
		if len(qpsPairs) == 0 {
			notes = append(notes, "QPS: every cell acknowledged")
		} else if q.Reason != "" {
			notes = append(notes, "QPS: "+q.Reason)
		} else if q.Spread != "" {
			notes = append(notes, "noise "+q.Spread)
		}
		var p95 stats.RatioResult
		if len(p95Pairs) > 0 {
			p95 = stats.Ratio(p95Pairs, stats.RatioOptions{Confidence: conf})
			tc.P95Ratio, tc.P95Low, tc.P95High, tc.P95P = round4(p95.Ratio), round4(p95.Low), round4(p95.High), round4(p95.P)
			if p95.Reason != "" {
				notes = append(notes, "p95: "+p95.Reason)
			}
		}
		tc.Note = strings.Join(notes, "; ")
		res.Targets = append(res.Targets, tc)
		j := len(res.Targets) - 1
		if q.Valid() {
			tests = append(tests, test{p: q.P, apply: func(adj float64) {
				res.Targets[j].QPSQ = round4(adj)
				res.Targets[j].QPSVerdict = ratioVerdict(q, adj, alpha, qpsThr/100, true)
			}})
		} else if q.Cells > 0 {
			res.Targets[j].QPSVerdict = v1.CellInconclusive
		}
		if p95.Valid() {
			tests = append(tests, test{p: p95.P, apply: func(adj float64) {
				res.Targets[j].P95Q = round4(adj)
				res.Targets[j].P95Verdict = ratioVerdict(p95, adj, alpha, p95Thr/100, false)
			}})
		} else if p95.Cells > 0 {
			res.Targets[j].P95Verdict = v1.CellInconclusive
		}
	}

	ps := make([]float64, len(tests))
	for i, t := range tests {
		ps[i] = t.p
	}
	for i, q := range stats.AdjustBH(ps) {
		tests[i].apply(q)
	}
	res.Summary.Tests = int32(len(tests))
	for i := range res.Cells {
		finishCell(&res.Cells[i], policy.Acknowledged, at)
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
	summarize(&res, baseline.Name, qpsThr, p95Thr, alpha)
	return res
}

// test is one p-value of the comparison and what to do with its adjusted value.
type test struct {
	p     float64
	apply func(q float64)
}

// ratioVerdict judges a target's geometric-mean ratio: significant (adjusted p below alpha) and
// at least the minimum effect is Regressed or Improved; an interval inside the minimum effect on
// the harmful side is NoChange; anything else Inconclusive.
func ratioVerdict(r stats.RatioResult, q, alpha, minEffect float64, higherIsBetter bool) v1.CellVerdict {
	change := r.Ratio - 1
	harmful := (change < 0) == higherIsBetter
	switch {
	case q < alpha && math.Abs(change) >= minEffect && harmful:
		return v1.CellRegressed
	case q < alpha && math.Abs(change) >= minEffect:
		return v1.CellImproved
	case higherIsBetter && r.Low > 1-minEffect:
		return v1.CellNoChange
	case !higherIsBetter && r.High < 1+minEffect:
		return v1.CellNoChange
	default:
		return v1.CellInconclusive
	}
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

	var regressedTargets, openTargets []string
	for _, t := range res.Targets {
		switch t.Verdict {
		case v1.CellRegressed:
			regressedTargets = append(regressedTargets, DescribeTarget(s.Metric, t))
		case v1.CellInconclusive:
			openTargets = append(openTargets, DescribeTarget(s.Metric, t))
			s.NeededRepetitions = max(s.NeededRepetitions, neededForTarget(res.Cells, t, qpsThr, p95Thr))
		}
	}
	rule := fmt.Sprintf("alpha %g over %d tests (Benjamini-Hochberg), minimum effect %s -%s%%, p95 +%s%%", alpha, s.Tests,
		metricName(s.Metric), pct(qpsThr), pct(p95Thr))
	counts := fmt.Sprintf("cells: %d regressed, %d improved, %d unchanged, %d inconclusive", s.RegressedCells, s.ImprovedCells, s.NoChangeCells, s.InconclusiveCells)
	if s.AcknowledgedCells > 0 {
		counts += fmt.Sprintf(", %d acknowledged", s.AcknowledgedCells)
	}
	switch {
	case len(res.Cells) == 0:
		s.Verdict = v1.VerdictNoBaseline
		s.Message = fmt.Sprintf("no cell in common with baseline %s (targets or thread counts changed)", baseline)
	case len(regressedTargets) > 0 || s.RegressedCells > 0:
		s.Verdict = v1.VerdictRegressed
		var what []string
		if len(regressedTargets) > 0 {
			what = append(what, "targets: "+strings.Join(regressedTargets, "; "))
		}
		if len(regressed) > 0 {
			worst := make([]string, 0, len(regressed))
			for _, c := range regressed {
				worst = append(worst, Describe(s.Metric, c))
			}
			what = append(what, "worst cells: "+strings.Join(worst, "; "))
		}
		s.Message = fmt.Sprintf("regressed against %s (%s; %s); %s", baseline, rule, counts, strings.Join(what, "; "))
	case len(openTargets) > 0:
		s.Verdict = v1.VerdictInconclusive
		s.Message = fmt.Sprintf("nothing regressed against %s, but a drop of the minimum effect cannot be ruled out for %s (%s; %s)",
			baseline, strings.Join(openTargets, "; "), rule, counts)
		if s.NeededRepetitions > 0 {
			s.Message += fmt.Sprintf("; about %d repetitions per run would decide (spec.repetitions)", s.NeededRepetitions)
		}
	default:
		s.Verdict = v1.VerdictNoRegression
		s.Message = fmt.Sprintf("no regression against %s: every target's interval rules out the minimum effect (%s; %s)", baseline, rule, counts)
	}
}

// neededForTarget estimates the repetitions per run that would let target decide, at most 10:
// its cells' floor for the U test (RequiredRepetitions), and, when its interval is too wide, the
// repetitions that would shrink it (as 1/√n) inside the distance between its estimate and the
// minimum effect. 0 when nothing can be estimated (the schedule then doubles the repetitions).
func neededForTarget(cs []Cell, t v1.TargetChange, qpsThr, p95Thr float64) int32 {
	var n, reps int32
	for _, c := range cs {
		if c.Target != t.Target {
			continue
		}
		n = max(n, int32(c.neededQPS), int32(c.neededP95))
		if reps == 0 || min(c.BaselineN, c.N) < reps {
			reps = min(c.BaselineN, c.N)
		}
	}
	shrink := func(ratio, lo, hi, limit float64) {
		if hi == 0 || lo <= 0 || reps == 0 {
			return
		}
		half := (math.Log(hi) - math.Log(lo)) / 2
		margin := math.Abs(math.Log(ratio) - math.Log(limit))
		if (limit < 1 && ratio <= limit) || (limit > 1 && ratio >= limit) || margin == 0 {
			return // the estimate is beyond the minimum effect: more data confirms or refutes it, no formula says how much
		}
		n = max(n, int32(math.Ceil(float64(reps)*(half/margin)*(half/margin))))
	}
	if t.QPSVerdict == v1.CellInconclusive {
		shrink(t.QPSRatio, t.QPSLow, t.QPSHigh, 1-qpsThr/100)
	}
	if t.P95Verdict == v1.CellInconclusive {
		shrink(t.P95Ratio, t.P95Low, t.P95High, 1+p95Thr/100)
	}
	return min(n, 10)
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
}

// cell compares the repetitions of one cell; the verdicts are decided later, with the p-values
// adjusted over the whole comparison.
func cell(k cellKey, b, s cells.Cell, qpsOpts, p95Opts stats.Options) (Cell, stats.Verdict, stats.Verdict) {
	qps := stats.Compare(b.QPS, s.QPS, qpsOpts)
	bs, ss := stats.Summarize(b.QPS), stats.Summarize(s.QPS)
	c := v1.CellChange{
		Target: k.target, Threads: k.threads,
		BaselineN: int32(len(b.QPS)), N: int32(len(s.QPS)),
		BaselineQPS: qps.Base, QPS: qps.Cur, QPSChangePercent: round1(qps.Delta * 100), QPSP: round4(qps.P),
		QPSVerdict:    v1.CellVerdict(qps.Kind),
		BaselineQPSCV: round1(bs.CV * 100), QPSCV: round1(ss.CV * 100),
		BaselineQPSSpread: round1(spread(bs)), QPSSpread: round1(spread(ss)),
		SpreadConfidence: round4(min(bs.CIConfidence, ss.CIConfidence)),
	}
	var p95 stats.Verdict
	if positive(b.P95Ms) && positive(s.P95Ms) {
		p95 = stats.Compare(b.P95Ms, s.P95Ms, p95Opts)
		c.BaselineP95Ms, c.P95Ms = p95.Base, p95.Cur
		c.P95ChangePercent, c.P95P = round1(p95.Delta*100), round4(p95.P)
		c.P95Verdict = v1.CellVerdict(p95.Kind)
	}
	return Cell{CellChange: c, neededQPS: qps.NeededN, neededP95: p95.NeededN}, qps, p95
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
