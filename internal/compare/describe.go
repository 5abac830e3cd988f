package compare

import (
	"fmt"
	"math"
	"strings"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// describedRules are the rules a description names; their minimum effects do not matter there.
var describedRules = NewPolicy(v1.RegressionPolicy{}).Rules

// DescribeTarget names a target's geometric-mean changes with their intervals, e.g.
// "mysql80: QPS x0.912 [0.890, 0.934], p95 x1.08 [1.02, 1.15]".
func DescribeTarget(metric string, t v1.TargetChange) string {
	var parts []string
	for i, r := range describedRules {
		f := r.target(&t)
		// The throughput always: a target is compared by it. The others when measured.
		if i > 0 && !(*f.ratio > 0) {
			continue
		}
		parts = append(parts, r.Label(metric)+" "+ratioText(*f.ratio, *f.low, *f.high))
	}
	return TargetLabel(t) + ": " + strings.Join(parts, ", ")
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
	var parts []string
	for _, r := range describedRules {
		if r.measured(c) {
			parts = append(parts, r.Label(metric)+" "+signed(*r.cell(&c).change)+"%")
		}
	}
	return fmt.Sprintf("%s at %d threads: %s", CellLabel(c), c.Threads, strings.Join(parts, ", "))
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

func round1(x float64) float64 { return math.Round(x*10) / 10 }

func signed(x float64) string { return fmt.Sprintf("%+.1f", x) }

// pct prints a threshold without a needless fraction: 5, 2.5.
func pct(x float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", x), "0"), ".")
}
