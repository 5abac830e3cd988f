// Package compare compares a BenchmarkRun's results with a baseline run's, cell by cell (one
// target at one thread count), and renders the comparison as Markdown. It is pure: runs in, a
// verdict out.
package compare

import (
	"fmt"
	"math"
	"sort"
	"strings"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// MaxWorst is how many regressed cells a Comparison names.
const MaxWorst = 5

// Result is a comparison: the summary that goes into status, every cell for the table, and the
// cells only one of the two runs measured.
type Result struct {
	Summary v1.Comparison
	Cells   []v1.CellChange
	// OnlyInRun and OnlyInBaseline are "target@threads" of cells the other run lacks.
	OnlyInRun, OnlyInBaseline []string
}

type cellKey struct {
	target  string
	threads int32
}

// Compare compares run with baseline (nil: no baseline) under policy. A cell regressed when its
// QPS fell by more than policy's QPS drop or its p95 latency rose by more than its p95 rise, both
// as percentages of the baseline; a cell equal to a threshold did not cross it.
func Compare(run, baseline *v1.BenchmarkRun, policy v1.RegressionPolicy) Result {
	qpsThr, p95Thr := policy.QPSDropPercentOrDefault(), policy.P95RisePercentOrDefault()
	res := Result{Summary: v1.Comparison{Run: run.Name, QPSDropPercent: qpsThr, P95RisePercent: p95Thr}}
	if baseline == nil {
		res.Summary.Verdict = v1.VerdictNoBaseline
		res.Summary.Message = "no baseline: this is the first successful run to compare with"
		return res
	}
	res.Summary.Baseline = baseline.Name

	base := map[cellKey]v1.StepResult{}
	for _, t := range baseline.Status.Targets {
		for _, s := range t.Steps {
			if s.QPS.Total > 0 {
				base[cellKey{t.Name, s.Threads}] = s
			}
		}
	}
	seen := map[cellKey]bool{}
	for _, t := range run.Status.Targets {
		for _, s := range t.Steps {
			k := cellKey{t.Name, s.Threads}
			b, ok := base[k]
			if s.QPS.Total <= 0 {
				continue
			}
			if !ok {
				res.OnlyInRun = append(res.OnlyInRun, cellName(k))
				continue
			}
			seen[k] = true
			res.Cells = append(res.Cells, cell(k, b, s, qpsThr, p95Thr))
		}
	}
	for _, t := range baseline.Status.Targets {
		for _, s := range t.Steps {
			if k := (cellKey{t.Name, s.Threads}); s.QPS.Total > 0 && !seen[k] {
				res.OnlyInBaseline = append(res.OnlyInBaseline, cellName(k))
			}
		}
	}

	res.Summary.ComparedCells = int32(len(res.Cells))
	var regressed []v1.CellChange
	for _, c := range res.Cells {
		if c.Regressed {
			regressed = append(regressed, c)
		}
	}
	res.Summary.RegressedCells = int32(len(regressed))
	sort.SliceStable(regressed, func(i, j int) bool {
		return severity(regressed[i], qpsThr, p95Thr) > severity(regressed[j], qpsThr, p95Thr)
	})
	if len(regressed) > MaxWorst {
		regressed = regressed[:MaxWorst]
	}
	res.Summary.Worst = regressed

	thresholds := fmt.Sprintf("QPS drop > %s%%, p95 rise > %s%%", pct(qpsThr), pct(p95Thr))
	switch {
	case len(res.Cells) == 0:
		res.Summary.Verdict = v1.VerdictNoBaseline
		res.Summary.Message = fmt.Sprintf("no cell in common with baseline %s (targets or thread counts changed)", baseline.Name)
	case res.Summary.RegressedCells == 0:
		res.Summary.Verdict = v1.VerdictNoRegression
		res.Summary.Message = fmt.Sprintf("0 of %d cells regressed against %s (%s)", len(res.Cells), baseline.Name, thresholds)
	default:
		res.Summary.Verdict = v1.VerdictRegressed
		worst := make([]string, 0, len(regressed))
		for _, c := range regressed {
			worst = append(worst, Describe(c))
		}
		res.Summary.Message = fmt.Sprintf("%d of %d cells regressed against %s (%s); worst: %s",
			res.Summary.RegressedCells, len(res.Cells), baseline.Name, thresholds, strings.Join(worst, "; "))
	}
	return res
}

// Short is the verdict for a printer column: "Regressed 3/24", "OK 0/24" or "NoBaseline".
func Short(c v1.Comparison) string {
	switch c.Verdict {
	case v1.VerdictRegressed:
		return fmt.Sprintf("Regressed %d/%d", c.RegressedCells, c.ComparedCells)
	case v1.VerdictNoRegression:
		return fmt.Sprintf("OK 0/%d", c.ComparedCells)
	default:
		return string(v1.VerdictNoBaseline)
	}
}

// Describe names a cell and its changes, e.g. "mysql80 at 64 threads: QPS -12.3%, p95 +15.0%".
func Describe(c v1.CellChange) string {
	s := fmt.Sprintf("%s at %d threads: QPS %s%%", c.Target, c.Threads, signed(c.QPSChangePercent))
	if c.BaselineP95Ms > 0 && c.P95Ms > 0 {
		s += fmt.Sprintf(", p95 %s%%", signed(c.P95ChangePercent))
	}
	return s
}

func cell(k cellKey, b, s v1.StepResult, qpsThr, p95Thr float64) v1.CellChange {
	c := v1.CellChange{
		Target: k.target, Threads: k.threads,
		BaselineQPS: b.QPS.Total, QPS: s.QPS.Total,
		QPSChangePercent: round1((s.QPS.Total - b.QPS.Total) / b.QPS.Total * 100),
	}
	// The threshold is applied to the unrounded change, the rounding is only for display.
	qpsDrop := (b.QPS.Total - s.QPS.Total) / b.QPS.Total * 100
	regressed := beyond(qpsDrop, qpsThr)
	if b.Latency.P95Ms > 0 && s.Latency.P95Ms > 0 {
		c.BaselineP95Ms, c.P95Ms = b.Latency.P95Ms, s.Latency.P95Ms
		rise := (s.Latency.P95Ms - b.Latency.P95Ms) / b.Latency.P95Ms * 100
		c.P95ChangePercent = round1(rise)
		regressed = regressed || beyond(rise, p95Thr)
	}
	c.Regressed = regressed
	return c
}

// beyond reports whether change crossed thr, tolerating floating-point error: a p95 from 2.00 to
// 2.20 ms computes as a 10.000000000000009% rise, which is equal to a 10% threshold, not beyond it.
func beyond(change, thr float64) bool { return change > thr+1e-9 }

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
