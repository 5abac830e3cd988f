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
	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
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

// samples are the repetitions of the cells of a run that measured a QPS, by cell, in report
// order.
func samples(run *v1.BenchmarkRun) ([]cellKey, map[cellKey]cells.Cell) {
	var order []cellKey
	out := map[cellKey]cells.Cell{}
	for _, t := range run.Status.Targets {
		var measured []v1.StepResult
		for _, s := range t.Steps {
			if s.QPS.Total > 0 {
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

// Compare compares run with baseline (nil: no baseline) under policy, cell by cell. Each cell's
// QPS and p95 latency are tested with stats.Compare over the repetitions of both runs: a
// two-sided Mann-Whitney U test at policy's alpha, and the policy's percentages as the minimum
// effect. See CellChange.Verdict for how the two metrics make the cell's verdict.
func Compare(run, baseline *v1.BenchmarkRun, policy v1.RegressionPolicy) Result {
	qpsThr, p95Thr, alpha := policy.QPSDropPercentOrDefault(), policy.P95RisePercentOrDefault(), policy.AlphaOrDefault()
	res := Result{Summary: v1.Comparison{Run: run.Name, QPSDropPercent: qpsThr, P95RisePercent: p95Thr, Alpha: alpha}}
	if baseline == nil {
		res.Summary.Verdict = v1.VerdictNoBaseline
		res.Summary.Message = "no baseline: this is the first successful run to compare with"
		return res
	}
	res.Summary.Baseline = baseline.Name

	baseOrder, base := samples(baseline)
	runOrder, cur := samples(run)
	for _, k := range runOrder {
		b, ok := base[k]
		if !ok {
			res.OnlyInRun = append(res.OnlyInRun, cellName(k))
			continue
		}
		c := cell(k, b, cur[k], qpsThr, p95Thr, alpha)
		acknowledge(&c, policy.Acknowledged, finishedAt(run))
		res.Cells = append(res.Cells, c)
	}
	for _, k := range baseOrder {
		if _, ok := cur[k]; !ok {
			res.OnlyInBaseline = append(res.OnlyInBaseline, cellName(k))
		}
	}

	s := &res.Summary
	s.ComparedCells = int32(len(res.Cells))
	var regressed []v1.CellChange
	for _, c := range res.Cells {
		switch {
		case c.Acknowledged:
			s.AcknowledgedCells++
		case c.Verdict == v1.CellRegressed:
			regressed = append(regressed, c)
		case c.Verdict == v1.CellImproved:
			s.ImprovedCells++
		case c.Verdict == v1.CellNoChange:
			s.NoChangeCells++
		default:
			s.InconclusiveCells++
			s.NeededRepetitions = max(s.NeededRepetitions, c.NeededRepetitions)
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

	rule := fmt.Sprintf("U test at alpha %g, minimum effect QPS -%s%%, p95 +%s%%", alpha, pct(qpsThr), pct(p95Thr))
	counts := fmt.Sprintf("%d improved, %d unchanged, %d inconclusive", s.ImprovedCells, s.NoChangeCells, s.InconclusiveCells)
	if s.AcknowledgedCells > 0 {
		counts += fmt.Sprintf(", %d acknowledged", s.AcknowledgedCells)
	}
	switch {
	case len(res.Cells) == 0:
		s.Verdict = v1.VerdictNoBaseline
		s.Message = fmt.Sprintf("no cell in common with baseline %s (targets or thread counts changed)", baseline.Name)
	case s.RegressedCells > 0:
		s.Verdict = v1.VerdictRegressed
		worst := make([]string, 0, len(regressed))
		for _, c := range regressed {
			worst = append(worst, Describe(c))
		}
		s.Message = fmt.Sprintf("%d of %d cells regressed against %s (%s; %s); worst: %s",
			s.RegressedCells, len(res.Cells), baseline.Name, rule, counts, strings.Join(worst, "; "))
	case s.InconclusiveCells > 0:
		s.Verdict = v1.VerdictInconclusive
		s.Message = fmt.Sprintf("0 of %d cells regressed against %s, but %d of them are inconclusive (%s; %s)",
			len(res.Cells), baseline.Name, s.InconclusiveCells, rule, counts)
		if s.NeededRepetitions > 0 {
			s.Message += fmt.Sprintf("; the test needs at least %d repetitions per run (spec.repetitions)", s.NeededRepetitions)
		}
	default:
		s.Verdict = v1.VerdictNoRegression
		s.Message = fmt.Sprintf("0 of %d cells regressed against %s (%s; %s)", len(res.Cells), baseline.Name, rule, counts)
	}
	return res
}

// Short is the verdict for a printer column: "Regressed 3/24", "Inconclusive 5/24" (cells
// inconclusive), "OK 0/24" or "NoBaseline".
func Short(c v1.Comparison) string {
	switch c.Verdict {
	case v1.VerdictRegressed:
		return fmt.Sprintf("Regressed %d/%d", c.RegressedCells, c.ComparedCells)
	case v1.VerdictInconclusive:
		return fmt.Sprintf("Inconclusive %d/%d", c.InconclusiveCells, c.ComparedCells)
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

func cell(k cellKey, b, s cells.Cell, qpsThr, p95Thr, alpha float64) v1.CellChange {
	qps := stats.Compare(b.QPS, s.QPS, stats.Options{Alpha: alpha, MinEffect: qpsThr / 100, HigherIsBetter: true})
	c := v1.CellChange{
		Target: k.target, Threads: k.threads,
		BaselineN: int32(len(b.QPS)), N: int32(len(s.QPS)),
		BaselineQPS: qps.Base, QPS: qps.Cur, QPSChangePercent: round1(qps.Delta * 100), QPSP: round4(qps.P),
	}
	c.QPSVerdict = v1.CellVerdict(qps.Kind)
	kinds := []stats.Kind{qps.Kind}
	needed := qps.NeededN
	if positive(b.P95Ms) && positive(s.P95Ms) {
		p95 := stats.Compare(b.P95Ms, s.P95Ms, stats.Options{Alpha: alpha, MinEffect: p95Thr / 100})
		c.BaselineP95Ms, c.P95Ms = p95.Base, p95.Cur
		c.P95ChangePercent, c.P95P = round1(p95.Delta*100), round4(p95.P)
		kinds = append(kinds, p95.Kind)
		c.P95Verdict = v1.CellVerdict(p95.Kind)
		needed = max(needed, p95.NeededN)
	}
	switch {
	case slices.Contains(kinds, stats.Regressed):
		c.Verdict = v1.CellRegressed
	case slices.Contains(kinds, stats.Inconclusive):
		// An improvement in one metric does not vouch for the other.
		c.Verdict = v1.CellInconclusive
		c.NeededRepetitions = int32(needed)
	case slices.Contains(kinds, stats.Improved):
		c.Verdict = v1.CellImproved
	default:
		c.Verdict = v1.CellNoChange
	}
	c.Regressed = c.Verdict == v1.CellRegressed
	return c
}

// acknowledge marks a regressed cell as acknowledged when acks cover every metric that
// regressed, for a run that finished at (before the acknowledgement's until).
func acknowledge(c *v1.CellChange, acks []v1.Acknowledgement, at time.Time) {
	if c.Verdict != v1.CellRegressed {
		return
	}
	var reasons []string
	for _, m := range []struct {
		metric  v1.AckMetric
		verdict v1.CellVerdict
	}{{v1.AckQPS, c.QPSVerdict}, {v1.AckP95, c.P95Verdict}} {
		if m.verdict != v1.CellRegressed {
			continue
		}
		i := slices.IndexFunc(acks, func(a v1.Acknowledgement) bool { return Covers(a, c.Target, c.Threads, m.metric, at) })
		if i < 0 {
			return
		}
		if !slices.Contains(reasons, acks[i].Reason) {
			reasons = append(reasons, acks[i].Reason)
		}
	}
	c.Acknowledged, c.AcknowledgedReason, c.Regressed = true, strings.Join(reasons, "; "), false
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
