package compare

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// finishVerdicts finishes every cell (acknowledgements) and gives each target the verdict of its
// rules together.
func finishVerdicts(res *Result, rules []Rule, acks []v1.Acknowledgement, at time.Time) {
	for i := range res.Cells {
		finishCell(&res.Cells[i], rules, acks, at)
	}
	for i := range res.Targets {
		t := &res.Targets[i]
		var verdicts []v1.CellVerdict
		for _, r := range rules {
			if v := *r.target(t).verdict; v != "" {
				verdicts = append(verdicts, v)
			}
		}
		switch len(verdicts) {
		case 0:
			// Every cell acknowledged: nothing left to judge.
			t.Verdict, t.Note = v1.CellNoChange, "every cell is acknowledged"
		case 1:
			t.Verdict = verdicts[0]
		default:
			t.Verdict = combine(verdicts...)
		}
	}
}

// finishCell sets a cell's verdict from its rules' adjusted verdicts. A metric an
// acknowledgement covers was left out of the adjustment and decides nothing; when its own test
// regressed the cell shows as regressed and acknowledged, so the known regression stays
// visible without alarming.
func finishCell(c *Cell, rules []Rule, acks []v1.Acknowledgement, at time.Time) {
	k := keyOf(c.CellChange)
	var kinds, raw []v1.CellVerdict
	var reasons []string
	ackedRegression := false
	for _, r := range rules {
		verdict := *r.cell(&c.CellChange).verdict
		if verdict == "" {
			continue
		}
		raw = append(raw, verdict)
		if i := slices.IndexFunc(acks, func(a v1.Acknowledgement) bool { return Covers(a, k.target, k.workload, k.threads, r.Metric(), at) }); i >= 0 {
			// Left out of the adjustment: its raw verdict stands, but it alarms no one.
			if verdict == v1.CellRegressed {
				ackedRegression = true
				if !slices.Contains(reasons, acks[i].Reason) {
					reasons = append(reasons, acks[i].Reason)
				}
			}
			continue
		}
		kinds = append(kinds, verdict)
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
		c.NeededRepetitions = int32(maxOf(c.needed))
	}
	c.Regressed = c.Verdict == v1.CellRegressed && !c.Acknowledged
}

// combine is the verdict of several rules (an empty one was not measured): Regressed wins, then
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

// ackCovers says whether an acknowledgement covers metric of cell k for a run finished at.
func ackCovers(acks []v1.Acknowledgement, k cellKey, metric v1.AckMetric, at time.Time) bool {
	return slices.ContainsFunc(acks, func(a v1.Acknowledgement) bool { return Covers(a, k.target, k.workload, k.threads, metric, at) })
}

// Covers says whether ack covers the target's workload (name, "" in a run of one
// spec.workload) at threads for metric, for a run finished at. An acknowledgement without a
// workload covers every workload of its target.
func Covers(ack v1.Acknowledgement, target, workload string, threads int32, metric v1.AckMetric, at time.Time) bool {
	return ack.Target == target && (ack.Workload == "" || ack.Workload == workload) && (ack.Threads == nil || *ack.Threads == threads) &&
		(ack.Metric == "" || ack.Metric == metric) && (ack.Until == nil || !at.After(ack.Until.Time))
}

// finishedAt is when a run finished (its creation when it has no completion time).
func finishedAt(run *v1.BenchmarkRun) time.Time {
	if t := run.Status.CompletionTime; t != nil {
		return t.Time
	}
	return run.CreationTimestamp.Time
}

// summarize counts the cells and decides the run's verdict (see Compare).
func summarize(res *Result, baseline string, policy Policy) {
	s := &res.Summary
	regressed := tallyCells(res, policy.Rules)

	var regressedTargets, openTargets, beyond []string
	for _, t := range res.Targets {
		switch t.Verdict {
		case v1.CellRegressed:
			regressedTargets = append(regressedTargets, DescribeTarget(s.Metric, t))
		case v1.CellInconclusive:
			openTargets = append(openTargets, DescribeTarget(s.Metric, t))
			for _, c := range res.Cells {
				if c.Target == t.Target && c.Workload == t.Workload {
					s.NeededRepetitions = max(s.NeededRepetitions, int32(maxOf(c.needed)))
				}
			}
		}
	}
	for _, c := range res.Cells {
		if !c.Acknowledged && slices.Contains(c.beyond, true) && c.Verdict != v1.CellRegressed {
			beyond = append(beyond, Describe(s.Metric, c.CellChange))
		}
	}
	rule := fmt.Sprintf("alpha %g over %d tests (targets, then the cells of changed targets), minimum effect %s", policy.Alpha, s.Tests,
		thresholds(policy.Rules, s.Metric))
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
		s.Suspects = suspects(res, policy.Rules)
	default:
		s.Verdict = v1.VerdictNoRegression
		s.Message = fmt.Sprintf("no regression against %s: every target's interval rules out the minimum effect (%s; %s)", baseline, rule, counts)
	}
	if detectable != "" && len(res.Cells) > 0 {
		s.Message += "; " + detectable
	}
}

// tallyCells counts res's cells by verdict into its summary, records the targets and the worst
// regressed cells (most severe first, at most MaxWorst) and returns those.
func tallyCells(res *Result, rules []Rule) []v1.CellChange {
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
		return severity(regressed[i], rules) > severity(regressed[j], rules)
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
		parts = append(parts, fmt.Sprintf("%s %s %%", TargetLabel(t), pct(t.MinDetectablePercent)))
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

// thresholds are the rules' minimum effects for a verdict's message: "QPS -5%, p95 +10%".
func thresholds(rules []Rule, metric string) string {
	parts := make([]string, len(rules))
	for i, r := range rules {
		parts[i] = threshold(r, metric)
	}
	return strings.Join(parts, ", ")
}

// maxOf is the largest of xs, 0 for none.
func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// suspects are what an Inconclusive res could not clear and a confirmation should re-measure:
// each target whose estimated change (the geometric mean of its cells) is harmful by at least a
// rule's minimum effect, and each unacknowledged cell whose repetitions alone put it wholly
// beyond it. Targets whose interval merely reaches the minimum effect are left out: with one
// instance per night every noisy target does, and re-measuring them all would spend a
// confirmation on most nights.
func suspects(res *Result, rules []Rule) []string {
	var out []string
	for i := range res.Targets {
		t := &res.Targets[i]
		if t.Verdict != v1.CellInconclusive {
			continue
		}
		for _, r := range rules {
			ratio := *r.target(t).ratio
			if ratio <= 0 {
				continue
			}
			// Strictly harmful too: under a minimum effect of 0 an unchanged target is no suspect.
			l := math.Log(ratio)
			if (r.HigherIsBetter() && l < 0 && l <= harmLimit(r)) || (!r.HigherIsBetter() && l > 0 && l >= harmLimit(r)) {
				out = append(out, TargetLabel(*t))
				break
			}
		}
	}
	for _, c := range res.Cells {
		if !c.Acknowledged && slices.Contains(c.beyond, true) && c.Verdict != v1.CellRegressed && !slices.Contains(out, Label(c.Target, c.Workload)) {
			out = append(out, cellName(keyOf(c.CellChange)))
		}
	}
	return out
}
