package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// tpccTypes are TPC-C's transaction types in go-tpc's names, new-order first, with the short
// names the table heads use.
var tpccTypes = []struct{ name, short string }{
	{"NEW_ORDER", "new-order"}, {"PAYMENT", "payment"}, {"ORDER_STATUS", "order-status"},
	{"DELIVERY", "delivery"}, {"STOCK_LEVEL", "stock-level"},
}

// writeTPCC writes, for a go-tpc run, every step's TPC-C result: tpmC and go-tpc's efficiency,
// new-order's p95 and p99 first, then each other type's p95, and the transactions that failed.
func writeTPCC(b *strings.Builder, doc *results.Doc) {
	if doc.Workload.TPCC == nil {
		return
	}
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
			by := map[string]v1alpha1.TPCCTransaction{}
			for _, tx := range st.TPCC.Transactions {
				by[tx.Name] = tx
			}
			fmt.Fprintf(b, "| %s | %d |", mdText(tr.Name), st.Threads)
			if doc.Ladder.Repetitions > 1 {
				fmt.Fprintf(b, " %d |", max(st.Repetition, 1))
			}
			no := by["NEW_ORDER"]
			fmt.Fprintf(b, " %s | %s %% | %s | %s | %s |", readable(st.TPCC.TpmC),
				tenths(st.TPCC.Efficiency), groupDigits(no.Count), tenths(no.P95Ms), tenths(no.P99Ms))
			for _, t := range tpccTypes[1:] {
				fmt.Fprintf(b, " %s |", tenths(by[t.name].P95Ms))
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
}

// tenths writes go-tpc's own figures at the resolution it reports them (6.3 ms, 98.5 %).
func tenths(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
