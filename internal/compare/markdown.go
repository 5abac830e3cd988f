package compare

import (
	"fmt"
	"strings"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// Markdown renders comparison.md: the verdict, then one row per cell, regressed cells marked.
func Markdown(r Result) string {
	var b strings.Builder
	s := r.Summary
	if s.Baseline == "" {
		fmt.Fprintf(&b, "# %s: no baseline\n\n%s.\n", s.Run, s.Message)
		return b.String()
	}
	fmt.Fprintf(&b, "# %s vs %s\n\n", s.Run, s.Baseline)
	fmt.Fprintf(&b, "A cell regressed when its QPS dropped by more than %s%% or its p95 latency rose by more than %s%%.\n\n",
		pct(s.QPSDropPercent), pct(s.P95RisePercent))
	fmt.Fprintf(&b, "**Verdict: %s**: %s.\n", verdictWord(s.Verdict), s.Message)
	if len(r.Cells) > 0 {
		b.WriteString("\n| target | threads | baseline QPS | QPS | QPS change | baseline p95 ms | p95 ms | p95 change | |\n")
		b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|---|\n")
		for _, c := range r.Cells {
			p95b, p95, p95c := "-", "-", "-"
			if c.BaselineP95Ms > 0 && c.P95Ms > 0 {
				p95b, p95, p95c = fmt.Sprintf("%.2f", c.BaselineP95Ms), fmt.Sprintf("%.2f", c.P95Ms), signed(c.P95ChangePercent)+"%"
			}
			mark := ""
			if c.Regressed {
				mark = "**regressed**"
			}
			fmt.Fprintf(&b, "| %s | %d | %.1f | %.1f | %s%% | %s | %s | %s | %s |\n",
				c.Target, c.Threads, c.BaselineQPS, c.QPS, signed(c.QPSChangePercent), p95b, p95, p95c, mark)
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

func verdictWord(v v1.Verdict) string {
	switch v {
	case v1.VerdictRegressed:
		return "regressed"
	case v1.VerdictNoRegression:
		return "no regression"
	default:
		return "no baseline"
	}
}
