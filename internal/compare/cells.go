package compare

import (
	"fmt"
	"math"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
)

// cellKey names a cell: one target at one thread count of one workload (workload "" in a run
// of one spec.workload). Cells of different workloads never share a key, so they are never
// paired, nor averaged into one level.
type cellKey struct {
	target   string
	workload string
	threads  int32
}

// group is the family a cell belongs to: its target and workload.
func (k cellKey) group() groupKey { return groupKey{k.target, k.workload} }

// groupKey names what a target-level verdict judges: one target's cells of one workload.
type groupKey struct {
	target, workload string
}

func keyOf(c v1.CellChange) cellKey { return cellKey{c.Target, c.Workload, c.Threads} }

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
			k := cellKey{t.Name, c.Workload, c.Threads}
			if _, dup := out[k]; !dup {
				order = append(order, k)
				out[k] = c
			}
		}
	}
	return order, out
}

// Cell is a compared cell: what status and comparison.md show, and what the run's verdict needs
// from it.
type Cell struct {
	v1.CellChange
	// needed and beyond are by rule, in the policy's order. needed: the repetitions per run
	// that would decide the rule's inconclusive test of the cell. beyond: the repetitions alone
	// put the cell's change wholly beyond the rule's minimum effect on the harmful side.
	needed []int
	beyond []bool
}

// cell describes one cell's repetitions (their throughput's spreads) and each rule's medians and
// change; the verdicts are decided later, by the hierarchy over the whole comparison.
func cell(k cellKey, b, s cells.Cell, rules []Rule) Cell {
	bs, ss := stats.Summarize(b.QPS), stats.Summarize(s.QPS)
	c := v1.CellChange{
		Target: k.target, Workload: k.workload, Threads: k.threads,
		BaselineN: int32(len(b.QPS)), N: int32(len(s.QPS)),
		BaselineQPSCV: round1(bs.CV * 100), QPSCV: round1(ss.CV * 100),
		BaselineQPSSpread: round1(spread(bs)), QPSSpread: round1(spread(ss)),
		SpreadConfidence: round4(min(bs.CIConfidence, ss.CIConfidence)),
	}
	for _, r := range rules {
		bv, sv := r.Samples(b), r.Samples(s)
		if !positive(bv) || !positive(sv) {
			continue
		}
		bm, sm := stats.Summarize(bv).Median, stats.Summarize(sv).Median
		f := r.cell(&c)
		*f.baseline, *f.current = bm, sm
		*f.change = round1((sm/bm - 1) * 100)
	}
	return newCell(c, rules)
}

func newCell(c v1.CellChange, rules []Rule) Cell {
	return Cell{CellChange: c, needed: make([]int, len(rules)), beyond: make([]bool, len(rules))}
}

// spread is the half-width of a median's interval in percent of the median: the larger
// distance from the median to a bound.
func spread(s stats.Summary) float64 {
	if s.Median == 0 || s.N < 2 {
		return 0
	}
	return 100 * math.Max(s.Median-s.CILow, s.CIHigh-s.Median) / s.Median
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

func positiveValues(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if x > 0 {
			out = append(out, x)
		}
	}
	return out
}

// cellName is "target@threads", or "target/workload@threads" in a run of several workloads.
func cellName(k cellKey) string { return fmt.Sprintf("%s@%d", Label(k.target, k.workload), k.threads) }

// Label names a target's cells of one workload: the target, or "target/workload" in a run of
// several workloads (target and workload names are DNS labels, without "/").
func Label(target, workload string) string {
	if workload == "" {
		return target
	}
	return target + "/" + workload
}

// TargetLabel is Label of a target-level verdict.
func TargetLabel(t v1.TargetChange) string { return Label(t.Target, t.Workload) }

// CellLabel is Label of a cell.
func CellLabel(c v1.CellChange) string { return Label(c.Target, c.Workload) }
