package compare

import (
	"fmt"
	"math"
	"strings"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// Markdown renders comparison.md in benchstat's conventions: old (the baseline) then new, a
// change column that reads "~" when there is no significant change, the p-value (and the
// adjusted q) with the repetitions, each median with its interval, a geometric-mean row per
// target, and noisy cells marked apart from "~".
func Markdown(r Result) string {
	var b strings.Builder
	s := r.Summary
	if s.Baseline == "" {
		fmt.Fprintf(&b, "# %s: no baseline\n\n%s.\n", s.Run, s.Message)
		return b.String()
	}
	fmt.Fprintf(&b, "# %s vs %s\n\n", s.Baseline, s.Run)
	fmt.Fprintf(&b, "old = %s (baseline), new = %s.\n\n", s.Baseline, s.Run)
	b.WriteString(Method(s))
	fmt.Fprintf(&b, "\n\n**Verdict: %s**: %s.\n\n", verdictWord(s.Verdict), s.Message)
	fmt.Fprintf(&b, "| regressed | improved | unchanged | inconclusive | acknowledged | compared |\n|--:|--:|--:|--:|--:|--:|\n| %d | %d | %d | %d | %d | %d |\n",
		s.RegressedCells, s.ImprovedCells, s.NoChangeCells, s.InconclusiveCells, s.AcknowledgedCells, s.ComparedCells)
	if len(r.Cells) > 0 {
		m := metricName(s.Metric)
		fmt.Fprintf(&b, "\n| target | threads | old %s | new %s | vs base | old p95 ms | new p95 ms | vs base | verdict |\n", m, m)
		b.WriteString("|---|--:|--:|--:|---|--:|--:|---|---|\n")
		noisy := false
		for _, t := range targetOrder(r) {
			for _, c := range r.Cells {
				if CellLabel(c.CellChange) != t {
					continue
				}
				oldQ, newQ := withSpread(c.BaselineQPS, c.BaselineQPSSpread, c.BaselineQPSCV), withSpread(c.QPS, c.QPSSpread, c.QPSCV)
				noisy = noisy || c.BaselineQPSCV > noisyCV || c.QPSCV > noisyCV
				p95o, p95n, p95c := "-", "-", "-"
				if c.BaselineP95Ms > 0 && c.P95Ms > 0 {
					p95o, p95n = fmt.Sprintf("%.3f", c.BaselineP95Ms), fmt.Sprintf("%.3f", c.P95Ms)
					p95c = Change(c.P95ChangePercent, c.P95P, c.P95Q, s.Alpha, c.BaselineN, c.N)
				}
				fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", t, c.Threads, oldQ, newQ,
					Change(c.QPSChangePercent, c.QPSP, c.QPSQ, s.Alpha, c.BaselineN, c.N), p95o, p95n, p95c, cellWord(c.CellChange))
			}
			if tc, ok := targetChange(r, t); ok {
				oldG, newG := geomeans(r.Cells, t)
				p95 := "-"
				if tc.P95Ratio > 0 {
					p95 = GeomeanChange(tc.P95Ratio, tc.P95Low, tc.P95High, tc.P95P, tc.P95Q, s.Alpha)
				}
				fmt.Fprintf(&b, "| **%s** | geomean (%d) | %s | %s | %s | | | %s | %s |\n", t, tc.Cells, Number(oldG), Number(newG),
					GeomeanChange(tc.QPSRatio, tc.QPSLow, tc.QPSHigh, tc.QPSP, tc.QPSQ, s.Alpha), p95, targetWord(tc))
			}
		}
		fmt.Fprintf(&b, "\n%s: median ± the half-width of its interval (in %% of the median", m)
		if conf := minSpreadConfidence(r.Cells); conf < 0.95 {
			fmt.Fprintf(&b, "; with fewer than 6 repetitions this is the range of the repetitions, which covers the median with %.1f %% only", 100*conf)
		} else {
			b.WriteString(", 95 %")
		}
		b.WriteString("). vs base: new / old - 1 of the medians, `~` when the change is not significant (q ≥ alpha), " +
			"with the cell's p (a t test on the log repetitions, against the baseline and against the target's other cells), " +
			"the q adjusted over its target's cells (1 when its target showed no change) and the repetitions old+new; " +
			"geomean rows: the target's geometric-mean change with its interval, which includes the run-to-run allowance.\n")
		if noisy {
			fmt.Fprintf(&b, "\n`!` marks a noisy median: its repetitions vary by more than %g %% (CV). A noisy cell is still compared; its test needs a larger change to fire.\n", noisyCV)
		}
	}
	if noise := NoiseTable(s); noise != "" {
		b.WriteString("\n" + noise)
	}
	for _, t := range s.Targets {
		if t.Note != "" && (t.QPSHigh == 0 || (t.P95Ratio > 0 && t.P95High == 0)) {
			fmt.Fprintf(&b, "\n%s: %s\n", TargetLabel(t), t.Note)
		}
	}
	if s.NeededRepetitions > 0 {
		fmt.Fprintf(&b, "\nSome targets' intervals are too wide to decide: about %d repetitions per run (spec.repetitions, in both runs) would.\n", s.NeededRepetitions)
	}
	if len(r.OnlyInRun) > 0 {
		fmt.Fprintf(&b, "\nNot in the baseline (not compared): %s\n", strings.Join(r.OnlyInRun, ", "))
	}
	if len(r.OnlyInBaseline) > 0 {
		fmt.Fprintf(&b, "\nMeasured by the baseline only (not compared): %s\n", strings.Join(r.OnlyInBaseline, ", "))
	}
	return b.String()
}

// noisyCV is the coefficient of variation, in percent, above which a median is marked noisy.
const noisyCV = 5.0

// Method says in a paragraph what the verdict promises.
func Method(s v1.Comparison) string {
	m := metricName(s.Metric)
	return fmt.Sprintf("How the verdict is made: per target, the geometric mean over its thread counts of new/old median %s "+
		"(and p95) with a %.0f %% interval that allows for how much a target moves between runs beyond its repetitions "+
		"(the run-to-run CV below), and the same against the other targets of the run, where a shift of the whole run cancels; "+
		"per cell, a t test on the log repetitions. Targets are tested first, adjusted together (Benjamini-Hochberg); the cells "+
		"of a target that changed are then adjusted over that target's cells. %d tests in all; when nothing changed the chance "+
		"of a false \"regressed\" is at most alpha %g for the whole run. A target or cell regressed when significant and %s fell "+
		"by at least %s %% (p95 rose by at least %s %%). \"No regression\" means every target's interval excludes such a drop and "+
		"no cell's repetitions put it wholly beyond; \"inconclusive\" means some interval is too wide to say, which between two "+
		"runs is also what a shift of one run looks like.",
		m, 100*(1-2*s.Alpha), s.Tests, s.Alpha, m, pct(s.QPSDropPercent), pct(s.P95RisePercent))
}

// NoiseTable lists, per target, the between-run noise its verdict allowed for and what it
// could have detected: the run-to-run CV and its source, whether the repetitions had their own
// server instances, the target against the other targets, and the smallest detectable drop.
func NoiseTable(s v1.Comparison) string {
	var rows []string
	for _, t := range s.Targets {
		if t.RunToRunSource == "" {
			continue
		}
		vs := "-"
		if t.QPSVsOthersHigh > 0 {
			vs = GeomeanChange(t.QPSVsOthers, t.QPSVsOthersLow, t.QPSVsOthersHigh, t.QPSVsOthersP, 0, s.Alpha)
		}
		inst := "no (one per target)"
		if t.InstancesMeasured {
			inst = fmt.Sprintf("yes: the repetitions' CV %s %% includes them", pct(t.InstanceCVPercent))
		}
		mde := "-"
		if t.MinDetectablePercent > 0 {
			mde = fmt.Sprintf("%s %%", pct(t.MinDetectablePercent))
			if t.MinDetectablePercent > s.QPSDropPercent {
				mde += fmt.Sprintf(" (above the %s %% minimum effect: too noisy to judge it)", pct(s.QPSDropPercent))
			}
		}
		rows = append(rows, fmt.Sprintf("| %s | %s %% (%s) | %s | %s | %s |", TargetLabel(t), pct(t.RunToRunCVPercent), sourceWord(t.RunToRunSource), inst, vs, mde))
	}
	if len(rows) == 0 {
		return ""
	}
	return fmt.Sprintf("| target | run-to-run CV allowed | instances per repetition | %s vs the other targets | smallest detectable drop |\n"+
		"|---|---|---|---|--:|\n%s\n", metricName(s.Metric), strings.Join(rows, "\n"))
}

// sourceWord says where a run-to-run CV came from.
func sourceWord(source string) string {
	switch source {
	case "history":
		return "the schedule's retained runs"
	case "policy":
		return "spec.regression.runToRunCVPercent"
	case "default":
		return "the default, until the schedule has " + fmt.Sprint(MinHistoryRuns) + " runs"
	case "same run":
		return "both sides in one run"
	default:
		return source
	}
}

// FormatP prints a p-value with three decimals, and "p<0.001" for smaller ones rather than a
// "p=0.000" that reads as impossible.
func FormatP(name string, p float64) string {
	if p < 0.001 {
		return name + "<0.001"
	}
	return fmt.Sprintf("%s=%.3f", name, p)
}

// Change is a "vs base" column: "~ (p=0.310 n=5+5)" when not significant after adjustment,
// else "-12.3% (p=0.008 q=0.020 n=5+5)".
func Change(percent, p, q, alpha float64, oldN, newN int32) string {
	stat := FormatP("p", p)
	if q > 0 && q != p {
		stat += " " + FormatP("q", q)
	}
	stat += fmt.Sprintf(" n=%d+%d", oldN, newN)
	if adjustedOrRaw(p, q) >= alpha {
		return "~ (" + stat + ")"
	}
	return fmt.Sprintf("%+.1f%% (%s)", percent, stat)
}

// GeomeanChange is a target's geometric-mean change: "-8.8% [-11.0%, -6.6%] (p<0.001 q<0.001)",
// "~ [-2.1%, +1.9%] (p=0.52)" when the change is not significant and its interval holds 0, or
// "+3.1% [+0.4%, +5.9%] (p=0.03 q=0.09: not significant over the whole run)" when the interval
// excludes 0 but the adjustment over the run's tests does not: "~" would deny what the interval
// shows.
func GeomeanChange(ratio, lo, hi, p, q, alpha float64) string {
	if hi == 0 {
		return fmt.Sprintf("%+.1f%% (no interval)", 100*(ratio-1))
	}
	interval := fmt.Sprintf("[%+.1f%%, %+.1f%%]", 100*(lo-1), 100*(hi-1))
	stat := FormatP("p", p)
	if q > 0 && q != p {
		stat += " " + FormatP("q", q)
	}
	if adjustedOrRaw(p, q) >= alpha {
		if lo > 1 || hi < 1 {
			return fmt.Sprintf("%+.1f%% %s (%s: not significant over the whole run)", 100*(ratio-1), interval, stat)
		}
		return fmt.Sprintf("~ %s (%s)", interval, stat)
	}
	return fmt.Sprintf("%+.1f%% %s (%s)", 100*(ratio-1), interval, stat)
}

// adjustedOrRaw is q when the comparison adjusted its p-values (recorded since), else p.
func adjustedOrRaw(p, q float64) float64 {
	if q > 0 {
		return q
	}
	return p
}

// withSpread is "16,965 ± 2%", with "!" when the repetitions are noisy.
func withSpread(median, spreadPct, cv float64) string {
	out := Number(median)
	switch {
	case spreadPct >= 1:
		out += fmt.Sprintf(" ± %.0f%%", spreadPct)
	case spreadPct > 0:
		out += fmt.Sprintf(" ± %.1f%%", spreadPct)
	}
	if cv > noisyCV {
		out += " !"
	}
	return out
}

// Number formats a throughput without noise decimals: "16,965", "98.4", "0.52".
func Number(x float64) string {
	switch a := math.Abs(x); {
	case a >= 100:
		return thousands(x, 0)
	case a >= 1:
		return thousands(x, 1)
	default:
		return thousands(x, 2)
	}
}

// thousands formats x with a thousands separator and the given decimals.
func thousands(x float64, decimals int) string {
	s := fmt.Sprintf("%.*f", decimals, math.Abs(x))
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if x < 0 {
		b.WriteByte('-')
	}
	for i, ch := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}

func minSpreadConfidence(cs []Cell) float64 {
	m := 1.0
	for _, c := range cs {
		if c.QPSSpread > 0 || c.BaselineQPSSpread > 0 {
			m = math.Min(m, c.SpreadConfidence)
		}
	}
	return m
}

// targetOrder is the targets (with their workloads, Label) in the order of the cells.
func targetOrder(r Result) []string {
	var out []string
	for _, c := range r.Cells {
		if l := CellLabel(c.CellChange); len(out) == 0 || out[len(out)-1] != l {
			out = append(out, l)
		}
	}
	return out
}

func targetChange(r Result, label string) (v1.TargetChange, bool) {
	for _, t := range r.Targets {
		if TargetLabel(t) == label {
			return t, true
		}
	}
	return v1.TargetChange{}, false
}

// geomeans are the geometric means of the old and new median QPS over the cells of a target
// (of one workload: Label).
func geomeans(cs []Cell, label string) (float64, float64) {
	var lo, ln float64
	n := 0
	for _, c := range cs {
		if CellLabel(c.CellChange) == label && c.BaselineQPS > 0 && c.QPS > 0 {
			lo += math.Log(c.BaselineQPS)
			ln += math.Log(c.QPS)
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return math.Exp(lo / float64(n)), math.Exp(ln / float64(n))
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
	case c.NeededRepetitions > 0:
		return fmt.Sprintf("inconclusive (needs %d repetitions)", c.NeededRepetitions)
	default:
		return "inconclusive"
	}
}

func targetWord(t v1.TargetChange) string {
	switch t.Verdict {
	case v1.CellRegressed:
		return "**regressed**"
	case v1.CellImproved:
		return "improved"
	case v1.CellNoChange:
		return "no regression"
	default:
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
