package report

import (
	"slices"
	"strconv"
	"testing"

	kptr "k8s.io/utils/ptr"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// mysqlslapRun is fixtureRun as mysqlslap would have measured it: QPS only (no transactions, no
// latency percentiles), with its own workload settings.
func mysqlslapRun() *v1alpha1.BenchmarkRun {
	run := fixtureRun(-1)
	run.Spec.Workload = v1alpha1.Workload{Client: v1alpha1.ClientMysqlslap, Mysqlslap: &v1alpha1.MysqlslapWorkload{
		LoadType: "mixed", Queries: 20000, Iterations: 3, Image: "mysql:8.4", Args: []string{"--number-char-cols=4"}}}
	for ti := range run.Status.Targets {
		ts := &run.Status.Targets[ti]
		for si := range ts.Steps {
			s := &ts.Steps[si]
			s.TPS, s.Latency, s.Errors = 0, v1alpha1.Latency{}, 0
			s.QPS = v1alpha1.QPS{Total: s.QPS.Total}
			s.DurationSeconds = 12.345
		}
	}
	return run
}

// tpccSingleRun is tpccRun with one repetition: no cells, every step its table's value.
func tpccSingleRun() *v1alpha1.BenchmarkRun {
	run := tpccRun()
	run.Spec.Repetitions = nil
	for ti := range run.Status.Targets {
		ts := &run.Status.Targets[ti]
		var first []v1alpha1.StepResult
		for _, s := range ts.Steps {
			if s.Repetition == 1 {
				s.Repetition = 0
				first = append(first, s)
			}
		}
		ts.Steps = first
	}
	run.Spec.Workload.TPCC.Check = kptr.To(false)
	return run
}

// Each client's results, byte for byte: what Render writes for a run of it (report.md,
// results.csv, results.json and the chart), and the worst case SeriesBudget renders for its spec
// (report.md and results.csv) with the budget it gives. A change to how a client's results are
// written shows here first.
func TestClientsGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  *v1alpha1.BenchmarkRun
	}{
		{"sysbench", fixtureRun(-1)},
		{"mysqlslap", mysqlslapRun()},
		{"gotpc", tpccRun()},
		{"gotpc_one_repetition", tpccSingleRun()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := "clients/" + tc.name + "/"
			data, err := Render(tc.run, map[string]string{})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{KeyReportMD, KeyResultsCSV, KeyResultsJSON, KeyQPSChart} {
				assertGolden(t, dir+k, data[k])
			}

			worst := buildDoc(worstCaseRun(tc.run.Spec))
			assertGolden(t, dir+"worst_"+KeyReportMD, renderMarkdown(&worst, make([][]*serverstats.Step, len(worst.Targets)), true))
			csv, err := renderCSV(&worst)
			if err != nil {
				t.Fatal(err)
			}
			assertGolden(t, dir+"worst_"+KeyResultsCSV, csv)
			assertGolden(t, dir+"series_budget.txt", strconv.Itoa(SeriesBudget(tc.run.Spec))+"\n")
		})
	}
}

// Every client's results.csv columns sit after one of the report's own columns or at the end,
// each once in the header: none is lost, none shadows another's.
func TestClientCSVColumnsHaveTheirPlace(t *testing.T) {
	header := csvHeader()
	for _, c := range client.All() {
		for _, cols := range c.CSVColumns() {
			if cols.After != "" && !slices.Contains(csvColumns, cols.After) {
				t.Errorf("client %s: columns %q follow %q, which is not a column of results.csv", c.Name(), cols.Names, cols.After)
			}
			for _, n := range cols.Names {
				if i := slices.Index(header, n); i < 0 || slices.Index(header[i+1:], n) >= 0 {
					t.Errorf("client %s: column %s is not in the header once: %q", c.Name(), n, header)
				}
			}
		}
	}
}
