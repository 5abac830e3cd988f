package report

import (
	"encoding/csv"
	"slices"
	"strconv"
	"strings"
	"testing"

	kptr "k8s.io/utils/ptr"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
)

// tpccRun is fixtureRun as go-tpc would have measured it: each step's throughput as tpmC with
// the five transaction types, no QPS, three repetitions.
func tpccRun() *v1alpha1.BenchmarkRun {
	run := repeatedRun()
	run.Spec.Workload = v1alpha1.Workload{Client: v1alpha1.ClientGoTPC, TPCC: &v1alpha1.TPCCWorkload{Warehouses: 10,
		Check: kptr.To(true)}}
	for ti := range run.Status.Targets {
		ts := &run.Status.Targets[ti]
		for si := range ts.Steps {
			s := &ts.Steps[si]
			tpmC := round2(s.QPS.Total / 10)
			s.TPCC = &v1alpha1.TPCCResult{TpmC: tpmC, TpmTotal: round2(tpmC * 2.25), Efficiency: round2(tpmC / 128.6 * 100),
				Transactions: []v1alpha1.TPCCTransaction{
					{Name: "NEW_ORDER", Count: int64(tpmC * 5), Errors: 2, AvgMs: 3, P50Ms: 2.6, P95Ms: 6.3, P99Ms: 9.4, MaxMs: 46.1},
					{Name: "PAYMENT", Count: int64(tpmC * 5), P95Ms: 3.1, P99Ms: 4.7},
					{Name: "ORDER_STATUS", Count: int64(tpmC / 2), P95Ms: 2.1},
					{Name: "DELIVERY", Count: int64(tpmC / 2), P95Ms: 10},
					{Name: "STOCK_LEVEL", Count: int64(tpmC / 2), P95Ms: 3.1},
				}}
			s.TPS, s.QPS = round2(tpmC*2.25/60), v1alpha1.QPS{}
		}
		ts.Cells = nil
	}
	return run
}

func TestRenderTPCC(t *testing.T) {
	run := tpccRun()
	data, err := Render(run, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	md := strings.Split(data[KeyReportMD], "\n")
	for _, want := range []string{
		"Workload: go-tpc v1.0.7 TPC-C, 10 warehouse(s) loaded by 10 thread(s), no keying or thinking time, 300 s per step, warm-up 300 s at 64 clients, consistency check after the ladder, client image `ghcr.io/mysqlbench/go-tpc:v1.0.7`.",
		"## tpmC by threads",
		"| 1 | 1,455 | 1,309 | x0.90 [0.87, 0.93] |",
		"## New-order p95 latency (ms) by threads",
		"## TPC-C transactions per step",
		"| mysql57 | 1 | 1 | 1,455 | 1131.1 % | 7,272 | 6.3 | 9.4 | 3.1 | 2.1 | 10.0 | 3.1 | new-order 2 |",
		"| Target | Threads | n | CI level | tpmC median [CI] | tpmC cv | tpmC min-max | TPS median [CI] | TPS cv | TPS min-max | p95 ms median [CI] | p95 cv | p95 min-max | |",
	} {
		if !slices.Contains(md, want) {
			t.Errorf("report.md lacks the line %q:\n%s", want, data[KeyReportMD])
		}
	}
	if strings.Contains(data[KeyReportMD], "## QPS by threads") {
		t.Error("report.md has a QPS table for go-tpc")
	}
	csv := strings.Split(data[KeyResultsCSV], "\n")
	if !strings.Contains(csv[0], ",tpmc,tpm_total,tpcc_efficiency,new_order_p99_ms,client_cpu_cores,client_cpu_available,client_saturated,") ||
		!strings.Contains(csv[1], ",1454.57,3272.78,1131.08,9.4,,,") {
		t.Errorf("results.csv:\n%s\n%s", csv[0], csv[1])
	}
}

// results.csv carries a go-tpc cell's tpmC statistics over its repetitions, where a sysbench
// cell's are in the qps_ columns (a go-tpc cell's QPS is 0).
func TestRenderTPCCCellColumns(t *testing.T) {
	run := tpccRun()
	data, err := Render(run, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(data[KeyResultsCSV])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	want := map[[2]string]v1alpha1.CellStats{} // target, threads
	for _, ts := range run.Status.Targets {
		for _, c := range cells.Status(ts.Steps) {
			if c.TpmC == nil {
				t.Fatalf("%s, %d threads: go-tpc cell without tpmC", ts.Name, c.Threads)
			}
			want[[2]string{ts.Name, strconv.Itoa(int(c.Threads))}] = c
		}
	}
	if len(rows) != 1+2*3*3 {
		t.Fatalf("%d rows, want a header and 2 targets x 3 thread counts x 3 repetitions", len(rows))
	}
	for _, r := range rows[1:] {
		c, ok := want[[2]string{r[col["target"]], r[col["threads"]]}]
		if !ok {
			t.Fatalf("row of no cell: %v", r)
		}
		w := *c.TpmC
		if c.N != 3 || w.Median < 1000 || w.Min >= w.Max {
			t.Fatalf("%s, %s threads: cell tpmC %+v, want 3 differing repetitions", r[col["target"]], r[col["threads"]], w)
		}
		for name, v := range map[string]float64{"tpmc_median": w.Median, "tpmc_ci_low": w.CILow, "tpmc_ci_high": w.CIHigh,
			"tpmc_cv": w.CV, "tpmc_min": w.Min, "tpmc_max": w.Max} {
			i, ok := col[name]
			if !ok {
				t.Fatalf("results.csv has no column %s", name)
			}
			if got, err := strconv.ParseFloat(r[i], 64); err != nil || got != v {
				t.Errorf("%s, %s threads, repetition %s: %s = %q, want %v", r[col["target"]], r[col["threads"]], r[col["repetition"]], name, r[i], v)
			}
		}
		if r[col["qps_median"]] != "0" {
			t.Errorf("qps_median = %q, want 0 (the status's QPS of a go-tpc cell)", r[col["qps_median"]])
		}
	}
}
