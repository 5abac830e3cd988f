package compare

import (
	"fmt"
	"strings"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// Markdown renders comparison.md: the verdict and its counts, then one row per cell with the
// medians, the change, the test's p-values and the cell's verdict.
func Markdown(r Result) string {
	var b strings.Builder
	s := r.Summary
	if s.Baseline == "" {
		fmt.Fprintf(&b, "# %s: no baseline\n\n%s.\n", s.Run, s.Message)
		return b.String()
	}
	fmt.Fprintf(&b, "# %s vs %s\n\n", s.Run, s.Baseline)
	fmt.Fprintf(&b, "Each cell's repetitions in both runs are compared with a two-sided Mann-Whitney U test at alpha %g. "+
		"A cell regressed when the test finds a difference (p < %g) and its median QPS dropped by at least %s%% or its "+
		"median p95 latency rose by at least %s%%; it is unchanged when the change is smaller or the test's interval "+
		"rules out a change of that size, and inconclusive when neither can be said (too few repetitions for the noise).\n\n",
		s.Alpha, s.Alpha, pct(s.QPSDropPercent), pct(s.P95RisePercent))
	fmt.Fprintf(&b, "**Verdict: %s**: %s.\n\n", verdictWord(s.Verdict), s.Message)
	fmt.Fprintf(&b, "| regressed | improved | unchanged | inconclusive | acknowledged | compared |\n|--:|--:|--:|--:|--:|--:|\n| %d | %d | %d | %d | %d | %d |\n",
		s.RegressedCells, s.ImprovedCells, s.NoChangeCells, s.InconclusiveCells, s.AcknowledgedCells, s.ComparedCells)
	if s.NeededRepetitions > 0 {
		fmt.Fprintf(&b, "\nSome cells have too few repetitions for the test to reach p < %g: set spec.repetitions to at least %d "+
			"(in both runs) for a verdict.\n", s.Alpha, s.NeededRepetitions)
	}
	if len(r.Cells) > 0 {
		b.WriteString("\n| target | threads | n (baseline/run) | baseline QPS | QPS | QPS change | p | baseline p95 ms | p95 ms | p95 change | p | verdict |\n")
		b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
		for _, c := range r.Cells {
			p95b, p95, p95c, p95p := "-", "-", "-", "-"
			if c.BaselineP95Ms > 0 && c.P95Ms > 0 {
				p95b, p95, p95c = fmt.Sprintf("%.3f", c.BaselineP95Ms), fmt.Sprintf("%.3f", c.P95Ms), signed(c.P95ChangePercent)+"%"
				p95p = fmt.Sprintf("%.3g", c.P95P)
			}
			fmt.Fprintf(&b, "| %s | %d | %d/%d | %.1f | %.1f | %s%% | %.3g | %s | %s | %s | %s | %s |\n",
				c.Target, c.Threads, c.BaselineN, c.N, c.BaselineQPS, c.QPS, signed(c.QPSChangePercent), c.QPSP,
				p95b, p95, p95c, p95p, cellWord(c))
		}
	}
	if len(r.OnlyInRun) > 0 {
		fmt.Fprintf(&b, "\nNot in the baseline (not compared): %s\n", strings.Join(r.OnlyInRun, ", "))
	}
	if len(r.OnlyInBaseline) > 0 {
		fmt.Fprintf(&b, "\nMeasured by the baseline only (not compared): %s\n", strings.Join(r.OnlyInBaseline, ", "))
	}
	return b.String()
}

// cellWord is a cell's verdict in the table; a regression stands out.
func cellWord(c v1.CellChange) string {
	switch {
	case c.Acknowledged:
		return "regressed, acknowledged: " + strings.ReplaceAll(c.AcknowledgedReason, "|", "\\|")
	case c.Verdict == v1.CellRegressed:
		return "**regressed**"
	case c.Verdict == v1.CellImproved:
		return "improved"
	case c.Verdict == v1.CellNoChange:
		return "unchanged"
	default:
		if c.NeededRepetitions > 0 {
			return fmt.Sprintf("inconclusive (needs %d repetitions)", c.NeededRepetitions)
		}
		return "inconclusive"
	}
}

func verdictWord(v v1.Verdict) string {
	switch v {
	case v1.VerdictRegressed:
		return "regressed"
	case v1.VerdictNoRegression:
		return "no regression"
	case v1.VerdictInconclusive:
		return "inconclusive"
	default:
		return "no baseline"
	}
}
