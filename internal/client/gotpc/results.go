package gotpc

import (
	"fmt"
	"strconv"
	"strings"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/report/format"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// tpccTypes are TPC-C's transaction types in go-tpc's names, new-order first, with the short
// names the table heads use.
var tpccTypes = []struct{ name, short string }{
	{"NEW_ORDER", "new-order"}, {"PAYMENT", "payment"}, {"ORDER_STATUS", "order-status"},
	{"DELIVERY", "delivery"}, {"STOCK_LEVEL", "stock-level"},
}

// WorkloadLine: go-tpc's release, the warehouses and their load, the step, the warm-up, the
// check and the image.
func (Client) WorkloadLine(doc *results.Doc) string {
	c, l := doc.Workload.TPCC, doc.Ladder
	if c == nil {
		// A document that names go-tpc without its settings is not one this operator writes.
		return probe.WorkloadLine(doc)
	}
	parts := []string{fmt.Sprintf("go-tpc %s TPC-C, %s warehouse(s) loaded by %d thread(s)", c.GoTPC,
		format.GroupDigits(int64(c.Warehouses)), c.LoadThreads), "no keying or thinking time",
		format.Seconds(l.StepDurationSeconds) + " per step"}
	if l.WarmupSeconds > 0 {
		parts = append(parts, fmt.Sprintf("warm-up %s at %d clients", format.Seconds(l.WarmupSeconds), l.WarmupThreads))
	}
	if c.Check {
		parts = append(parts, "consistency check after the ladder")
	}
	parts = append(parts, "client image `"+c.Image+"`")
	return strings.Join(parts, ", ")
}

// ReportSection is every step's TPC-C result: tpmC and go-tpc's efficiency, new-order's p95 and
// p99 first, then each other type's p95, and the transactions that failed.
func (Client) ReportSection(doc *results.Doc) string {
	if doc.Workload.TPCC == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## TPC-C transactions per step\n\n")
	b.WriteString("Latencies in ms of the successful transactions; failed: transactions that ended in an error " +
		"(deadlocks, lock wait timeouts: go-tpc goes on with `ignoreErrors`), by type.\n\n")
	b.WriteString("| Target | Threads |")
	if doc.Ladder.Repetitions > 1 {
		b.WriteString(" Rep |")
	}
	b.WriteString(" tpmC | efficiency | new-order count | new-order p95 | new-order p99 |")
	for _, t := range tpccTypes[1:] {
		b.WriteString(" " + t.short + " p95 |")
	}
	b.WriteString(" failed |\n|---|---:|")
	if doc.Ladder.Repetitions > 1 {
		b.WriteString("---:|")
	}
	b.WriteString(strings.Repeat("---:|", 5+len(tpccTypes)-1) + "---|\n")
	for _, tr := range doc.Targets {
		for _, st := range tr.Steps {
			if st.TPCC == nil {
				continue
			}
			by := map[string]v1.TPCCTransaction{}
			for _, tx := range st.TPCC.Transactions {
				by[tx.Name] = tx
			}
			fmt.Fprintf(&b, "| %s | %d |", format.MDText(tr.Name), st.Threads)
			if doc.Ladder.Repetitions > 1 {
				fmt.Fprintf(&b, " %d |", max(st.Repetition, 1))
			}
			no := by["NEW_ORDER"]
			fmt.Fprintf(&b, " %s | %s %% | %s | %s | %s |", format.Readable(st.TPCC.TpmC),
				tenths(st.TPCC.Efficiency), format.GroupDigits(no.Count), tenths(no.P95Ms), tenths(no.P99Ms))
			for _, t := range tpccTypes[1:] {
				fmt.Fprintf(&b, " %s |", tenths(by[t.name].P95Ms))
			}
			var failed []string
			for _, t := range tpccTypes {
				if n := by[t.name].Errors; n > 0 {
					failed = append(failed, fmt.Sprintf("%s %d", t.short, n))
				}
			}
			if len(failed) == 0 {
				failed = []string{"none"}
			}
			b.WriteString(" " + strings.Join(failed, ", ") + " |\n")
		}
	}
	return b.String()
}

// tenths writes go-tpc's own figures at the resolution it reports them (6.3 ms, 98.5 %).
func tenths(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// CSVColumns are a step's TPC-C figures after over_duration (tpmC, all successful transactions
// per minute, go-tpc's efficiency, and new-order's p99: latency_p95_ms is new-order's p95), and
// at the end a cell's tpmC statistics over its repetitions (CellStats.TpmC), as the qps_ columns
// are a query-counting cell's (a go-tpc cell's QPS is 0).
func (Client) CSVColumns() []load.Columns {
	return []load.Columns{
		{After: "over_duration", Names: []string{"tpmc", "tpm_total", "tpcc_efficiency", "new_order_p99_ms"},
			Values: func(st results.Step, _ results.Cell, _ bool) []string { return stepColumns(st.TPCC) }},
		{Names: []string{"tpmc_median", "tpmc_ci_low", "tpmc_ci_high", "tpmc_cv", "tpmc_min", "tpmc_max"},
			Values: func(_ results.Step, c results.Cell, repeated bool) []string {
				if !repeated || c.TpmC == nil {
					return make([]string, 6)
				}
				return format.MetricColumns(*c.TpmC)
			}},
	}
}

// stepColumns are a go-tpc step's TPC-C columns; empty without its result.
func stepColumns(r *v1.TPCCResult) []string {
	if r == nil {
		return make([]string, 4)
	}
	p99 := ""
	for _, tx := range r.Transactions {
		if tx.Name == "NEW_ORDER" {
			p99 = format.CSVFloat(tx.P99Ms)
		}
	}
	return []string{format.CSVFloat(r.TpmC), format.CSVFloat(r.TpmTotal), format.CSVFloat(r.Efficiency), p99}
}

// WidestStep gives the step its TPC-C result at its widest: every transaction type, go-tpc's
// one-decimal figures.
func (Client) WidestStep(w load.Widest, s *v1.StepResult) {
	r := &v1.TPCCResult{TpmC: w.Rate, TpmTotal: w.Rate, Efficiency: w.Rate}
	for _, t := range tpccTypes {
		r.Transactions = append(r.Transactions, v1.TPCCTransaction{Name: t.name, Count: w.Count, Errors: w.Count,
			AvgMs: w.Latency, P50Ms: w.Latency, P95Ms: w.Latency, P99Ms: w.Latency, MaxMs: w.Latency})
	}
	s.TPCC = r
}

// RunLabels: the warehouses; go-tpc's tables are its own, not sbtest's.
func (Client) RunLabels(w v1.Workload, _ *results.Doc) load.RunLabels {
	return load.RunLabels{Workload: fmt.Sprintf("tpcc:%d-warehouses", w.TPCCOrDefault().Warehouses)}
}
