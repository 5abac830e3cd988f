// Package cells groups a target's step results into cells, one per thread count, with one
// sample per repetition, and summarizes them with internal/stats. The report, the status and
// the comparison all read cells from here, so they agree on what a cell's samples are.
package cells

import (
	"slices"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
)

// MaxCV is the coefficient of variation above which a cell is flagged as noisy.
const MaxCV = stats.DefaultMaxCV

// Cell is the repetitions of one target at one thread count: one value per whole step, in the
// order measured.
type Cell struct {
	// Workload names the cell's workload in a run of several ("" with one spec.workload).
	Workload string
	Threads  int32
	// QPS is the steps' throughput (v1.StepResult.Throughput): queries per second, or tpmC for
	// go-tpc's steps. The comparison and the report name it by the client's metric.
	QPS   []float64
	TPS   []float64
	P95Ms []float64
}

// Comparable says whether a step is a sample of its cell: it measured its throughput (a step
// recorded with QPS 0 by an operator that did not yet fail such steps measured nothing) within its
// duration (a step that ran past it, v1.StepResult.OverDuration, has its rates over a longer time
// than the others'). The report and the plugin show the others, marked, and say why.
func Comparable(s v1.StepResult) bool {
	return s.Throughput() > 0 && !s.OverDuration
}

// Of groups the Comparable steps by workload and thread count: workloads in the order they were
// first measured, thread counts ascending within each. A thread count without one has no cell.
func Of(steps []v1.StepResult) []Cell {
	type key struct {
		workload string
		threads  int32
	}
	var out []Cell
	index := map[key]int{}
	order := map[string]int{}
	for _, s := range steps {
		if _, ok := order[s.Workload]; !ok {
			order[s.Workload] = len(order)
		}
		if !Comparable(s) {
			continue
		}
		i, ok := index[key{s.Workload, s.Threads}]
		if !ok {
			i = len(out)
			index[key{s.Workload, s.Threads}] = i
			out = append(out, Cell{Workload: s.Workload, Threads: s.Threads})
		}
		c := &out[i]
		c.QPS = append(c.QPS, s.Throughput())
		c.TPS = append(c.TPS, s.TPS)
		c.P95Ms = append(c.P95Ms, s.Latency.P95Ms)
	}
	slices.SortStableFunc(out, func(a, b Cell) int {
		if a.Workload != b.Workload {
			return order[a.Workload] - order[b.Workload]
		}
		return int(a.Threads) - int(b.Threads)
	})
	return out
}

// Summary is a cell's statistics for the three metrics.
type Summary struct {
	// Workload names the cell's workload in a run of several; omitted with one spec.workload.
	Workload string        `json:"workload,omitempty"`
	Threads  int32         `json:"threads"`
	N        int           `json:"n"`
	QPS      stats.Summary `json:"qps"`
	TPS      stats.Summary `json:"tps"`
	P95Ms    stats.Summary `json:"p95Ms"`
}

// Noisy says whether the cell's QPS or p95 latency varies by more than MaxCV between
// repetitions.
func (s Summary) Noisy() bool {
	return stats.Noisy(s.QPS, MaxCV) || stats.Noisy(s.P95Ms, MaxCV)
}

// Summarize is the Summary of every cell of steps (their Comparable ones), thread counts ascending.
func Summarize(steps []v1.StepResult) []Summary {
	cs := Of(steps)
	out := make([]Summary, 0, len(cs))
	for _, c := range cs {
		out = append(out, Summary{
			Workload: c.Workload, Threads: c.Threads, N: len(c.QPS),
			QPS: stats.Summarize(c.QPS), TPS: stats.Summarize(c.TPS), P95Ms: stats.Summarize(c.P95Ms),
		})
	}
	return out
}

// Status is the cells of steps as the target's status holds them, the throughput where
// CellStats.Throughput reads it (CellStats.SetThroughput).
func Status(steps []v1.StepResult) []v1.CellStats {
	sums := Summarize(steps)
	out := make([]v1.CellStats, 0, len(sums))
	for _, s := range sums {
		c := v1.CellStats{Workload: s.Workload, Threads: s.Threads, N: int32(s.N), TPS: metric(s.TPS), P95Ms: metric(s.P95Ms)}
		c.SetThroughput(metric(s.QPS), steps)
		out = append(out, c)
	}
	return out
}

func metric(s stats.Summary) v1.MetricStats {
	return v1.MetricStats{
		Median: s.Median, CILow: s.CILow, CIHigh: s.CIHigh, CIConfidence: round(s.CIConfidence, 4),
		CV: round(s.CV, 6), Min: s.Min, Max: s.Max,
	}
}

// round keeps derived ratios short in the status: sysbench's inputs have 2-3 decimals, so more
// digits of a CV or a confidence level carry nothing.
func round(x float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(x*p+0.5)) / p
}
