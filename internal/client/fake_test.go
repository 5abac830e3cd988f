package client_test

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
	"github.com/mysqlbench/mysqlbench-operator/internal/charts"
	"github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/metrics"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/report/format"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/resultsdb"
)

// hammerdb is a fourth client as one would be added, HammerDB's TPROC-C, written here and
// nowhere else: its number is NOPM (new orders per minute), not QPS, and it adds a section to
// report.md and columns to results.csv. Its name is not in the API's enum (workload.client), which
// a real client adds; the test builds its runs in Go, past the API server's validation.
type hammerdb struct{}

const hammerdbName v1.WorkloadClient = "hammerdb"

var nopm = load.Metric{Name: "NOPM", Unit: "new orders/min", Axis: "new orders per minute", Key: "nopm",
	Gauge: "mysqlbench_step_nopm", GaugeHelp: "HammerDB TPROC-C new orders per minute of the newest finished ladder step."}

func (hammerdb) Name() v1.WorkloadClient                       { return hammerdbName }
func (hammerdb) Program(load.Step) string                      { return "hammerdbcli" }
func (hammerdb) Validate(v1.BenchmarkRunSpec, v1.Target) error { return nil }
func (hammerdb) SnapshotRepeats(v1.Workload) int               { return 1 }
func (hammerdb) DataBytes(v1.Workload) (int64, bool)           { return 0, false }
func (hammerdb) AfterLadder(v1.Workload, bool) (load.Phase, bool) {
	return "", false
}

func (hammerdb) StepDeadline(v1.Workload, load.Step) (time.Duration, bool) { return 0, false }

func (hammerdb) Capabilities() load.Capabilities {
	return load.Capabilities{
		PreparesData: true, Metric: nopm, Transactions: true, Percentiles: []int{load.Percentile},
		LatencyHeading: "NEWORD p95 latency (ms) by threads", NoSeries: "HammerDB records no per-second series",
		FixedDuration: true, ReportNote: "NOPM is HammerDB's: new orders per minute, from the database's own counters.",
		CommandNote: "(hammerdbcli reads the connection from the target's Secret.)",
	}
}

func (h hammerdb) Container(_ v1.BenchmarkRunSpec, _ v1.Target, step load.Step, _, _ string) (load.Invocation, string, error) {
	return load.Invocation{Command: []string{h.Program(step)}, Args: []string{"auto", string(step.Phase)}}, "hammerdb:4.12", nil
}

// Parse reads HammerDB's one result line: "NOPM 1234 TPM 5678 p95 12.5 threads 8 seconds 300".
func (hammerdb) Parse(_ load.Step, r io.Reader) (load.Output, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var nopm, tpm, p95, seconds float64
		var threads int32
		if _, err := fmt.Sscanf(sc.Text(), "NOPM %g TPM %g p95 %g threads %d seconds %g", &nopm, &tpm, &p95, &threads, &seconds); err == nil {
			// The API's primary throughput of a step without TPC-C figures is QPS.Total
			// (StepResult.Throughput): the NOPM goes there, the TPM as transactions per second.
			return load.Output{Final: &load.Final{Threads: threads, DurationSeconds: seconds, TPS: tpm / 60,
				QPS: v1.QPS{Total: nopm}, Percentile: load.Percentile, LatencyMs: load.LatencyMs{Pct: p95}}}, nil
		}
	}
	return load.Output{}, sc.Err()
}

func (hammerdb) Classify(_ load.Step, exitCode int32, out load.Output) *load.Failure {
	if exitCode != 0 || out.Final == nil {
		return &load.Failure{Reason: fmt.Sprintf("hammerdbcli exited with code %d and no result", exitCode)}
	}
	return nil
}

func (hammerdb) Result(_ load.Step, out load.Output) v1.StepResult { return out.Final.StepResult() }

func (hammerdb) Describe(s v1.BenchmarkRunSpec, threads string) string {
	return "HammerDB TPROC-C; virtual users " + threads
}

func (h hammerdb) Record(_ v1.Workload, into *results.Workload) { into.Client = string(h.Name()) }

func (hammerdb) WorkloadLine(doc *results.Doc) string {
	return "HammerDB TPROC-C, " + format.Seconds(doc.Ladder.StepDurationSeconds) + " per step"
}

// ReportSection lists every step's NOPM with its share of the best step's.
func (hammerdb) ReportSection(doc *results.Doc) string {
	var b strings.Builder
	b.WriteString("\n## NOPM per step\n\n| Target | Virtual users | NOPM |\n|---|---:|---:|\n")
	for _, tr := range doc.Targets {
		for _, st := range tr.Steps {
			fmt.Fprintf(&b, "| %s | %d | %s |\n", format.MDText(tr.Name), st.Threads, format.Readable(st.Throughput()))
		}
	}
	return b.String()
}

func (hammerdb) CSVColumns() []load.Columns {
	return []load.Columns{{Names: []string{"nopm", "tpm"}, Values: func(st results.Step, _ results.Cell, _ bool) []string {
		return []string{format.CSVFloat(st.Throughput()), format.CSVFloat(st.TPS * 60)}
	}}}
}

func (hammerdb) WidestStep(load.Widest, *v1.StepResult) {}

func (hammerdb) RunLabels(v1.Workload, *results.Doc) load.RunLabels {
	return load.RunLabels{Workload: "tprocc"}
}

// hammerdbRun is a finished run of two targets at 1 and 8 virtual users, its steps as the
// controller records them: the client's Parse, Classify and Result.
func hammerdbRun(t *testing.T) *v1.BenchmarkRun {
	t.Helper()
	c := client.For(v1.Workload{Client: hammerdbName})
	run := &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "tprocc", Namespace: "fake-client", UID: types.UID("00000000-0000-0000-0000-000000000004")},
		Spec: v1.BenchmarkRunSpec{
			Workload: v1.Workload{Client: hammerdbName},
			Targets:  []v1.Target{{Name: "mysql84", Image: "mysql:8.4"}, {Name: "mariadb118", Image: "mariadb:11.8"}},
			Ladder:   v1.Ladder{Threads: []int32{1, 8}, StepDuration: &metav1.Duration{Duration: 5 * time.Minute}},
		},
		Status: v1.BenchmarkRunStatus{Phase: v1.RunSucceeded},
	}
	for ti, tg := range run.Spec.Targets {
		ts := v1.TargetStatus{Name: tg.Name, Phase: v1.TargetSucceeded, ServerVersion: "v" + strconv.Itoa(ti)}
		for _, th := range run.Spec.Ladder.Threads {
			step := load.Step{Phase: load.PhaseRun, Threads: th, Duration: 5 * time.Minute}
			log := fmt.Sprintf("Vuser 1:TEST RESULT\nNOPM %d TPM %d p95 %d threads %d seconds 300\n", 1000*int(th)*(ti+2),
				2300*int(th)*(ti+2), 10*th, th)
			out, err := c.Parse(step, strings.NewReader(log))
			if err != nil {
				t.Fatal(err)
			}
			if f := c.Classify(step, 0, out); f != nil {
				t.Fatal(f.Reason)
			}
			ts.Steps = append(ts.Steps, c.Result(step, out))
		}
		run.Status.Targets = append(run.Status.Targets, ts)
	}
	return run
}

// A fourth client, defined only in this file and registered by the test, goes through the
// report, results.csv, the results' budget, the cells, the charts, the metrics and the results
// database with its own number (NOPM) everywhere the other clients have theirs: nothing outside
// its package names it.
func TestAFourthClientNeedsOnlyItsOwnPackage(t *testing.T) {
	client.Register(t, hammerdb{})
	run := hammerdbRun(t)

	data, err := report.Render(run, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	md := data[report.KeyReportMD]
	for _, want := range []string{
		"Workload: HammerDB TPROC-C, 300 s per step.",
		"## NOPM by threads",
		"| 8 | 16,000 | 24,000 | x1.50 (no interval) |",
		"NOPM is HammerDB's: new orders per minute, from the database's own counters.",
		"## NEWORD p95 latency (ms) by threads",
		"| 8 | 80.0 | 80.0 |",
		"## NOPM per step",
		"| mariadb118 | 8 | 24,000 |",
	} {
		if !strings.Contains(md, want+"\n") {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "QPS") || strings.Contains(md, "TPC-C") {
		t.Errorf("report.md speaks of another client's figures:\n%s", md)
	}

	rows, err := csv.NewReader(strings.NewReader(data[report.KeyResultsCSV])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := rows[0]
	if n := len(head); n < 3 || head[n-2] != "nopm" || head[n-1] != "tpm" || !slices.Contains(head, "tpmc_max") ||
		slices.Index(head, "tpmc_max") > n-3 {
		t.Fatalf("results.csv header %q: want every client's columns, the new client's last", head)
	}
	last := rows[len(rows)-1]
	if last[len(last)-2] != "24000" || last[len(last)-1] != "55200" || last[slices.Index(head, "tpmc")] != "" {
		t.Errorf("results.csv row %q: want NOPM 24000 and TPM 55200 in the new client's columns, go-tpc's empty", last)
	}

	doc, err := results.Decode([]byte(data[report.KeyResultsJSON]))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Workload.Client != string(hammerdbName) {
		t.Errorf("results.json names client %q", doc.Workload.Client)
	}
	if svg := data[report.KeyQPSChart]; !strings.Contains(svg, "NOPM by threads") || !strings.Contains(svg, "new orders per minute") {
		t.Errorf("the chart is not of NOPM:\n%.2000s", svg)
	}

	// The budget renders the client's worst case, its section and columns with it: a step's
	// series get less room than a sysbench run of the same ladder leaves.
	sysbench := run.Spec
	sysbench.Workload = v1.Workload{Script: "oltp_point_select", Tables: 1, TableSize: 1}
	if got, sb := report.SeriesBudget(run.Spec), report.SeriesBudget(sysbench); got >= sb || got < 1024 {
		t.Errorf("series budget %d, want below sysbench's %d for the same ladder (its section takes room)", got, sb)
	}

	// Cells: the throughput statistics are the NOPM's.
	if cs := cells.Status(append(slices.Clone(run.Status.Targets[1].Steps), run.Status.Targets[1].Steps...)); cs[1].Throughput().Median != 24000 {
		t.Errorf("cell at 8 virtual users: throughput %+v, want the NOPM", cs[1].Throughput())
	}

	// Charts: NOPM by threads; never on one axis with QPS.
	p, err := charts.Draw([]*results.Doc{doc}, charts.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Title.Text, "NOPM by threads") || p.Y.Label.Text != "new orders per minute" {
		t.Errorf("chart %q, axis %q", p.Title.Text, p.Y.Label.Text)
	}
	other := *doc
	other.Run.Name, other.Workload = "sb", results.Workload{Script: "oltp_point_select"}
	if _, err := charts.Draw([]*results.Doc{doc, &other}, charts.Spec{}); err == nil ||
		!strings.Contains(err.Error(), "runs tprocc measured NOPM (hammerdb) and runs sb measured QPS (sysbench)") {
		t.Errorf("NOPM and QPS on one chart: %v", err)
	}

	// Metrics: its own gauge, no QPS series.
	step := run.Status.Targets[1].Steps[1]
	metrics.RecordStep(run, "mariadb118", "11.8.3", step)
	t.Cleanup(func() { metrics.ForgetRun(run.Namespace, run.Name) })
	if got := gaugeOf(t, "mysqlbench_step_nopm", run.Name); got != 24000 {
		t.Errorf("mysqlbench_step_nopm = %v, want 24000", got)
	}
	if got := gaugeOf(t, "mysqlbench_step_qps", run.Name); got != -1 {
		t.Errorf("mysqlbench_step_qps = %v for a NOPM run, want no series", got)
	}

	// Results database: the runs row's labels.
	rec, err := resultsdb.Build(run, doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range rec.Tables {
		if tb.Name != "runs" {
			continue
		}
		got := map[string]any{}
		for i, c := range tb.Columns {
			got[c] = tb.Rows[0][i]
		}
		if got["client"] != "hammerdb" || got["workload"] != "tprocc" || got["metric"] != "nopm" || got["tables_count"] != nil {
			t.Errorf("runs row %v", got)
		}
	}
}

// gaugeOf is the value of the gauge called name for run, -1 when it has no series of it.
func gaugeOf(t *testing.T, name, run string) float64 {
	t.Helper()
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == metrics.LabelRun && l.GetValue() == run {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}
