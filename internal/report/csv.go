package report

import (
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/report/format"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// csvColumns are results.csv's own columns, every client's; spreadsheets and scripts address
// columns by these names, so they only ever grow at the end. The columns a client adds
// (Client.CSVColumns) follow the one they name, or come last (csvHeader).
var csvColumns = []string{
	"target", "server_version", "threads", "tps", "qps", "qps_read", "qps_write", "qps_other",
	"latency_min_ms", "latency_avg_ms", "latency_p95_ms", "latency_max_ms", "errors", "reconnects",
	"duration_seconds", "attempts", "start_time", "finish_time",
	// Repetitions (spec.repetitions): which one the row is, then the statistics of the row's cell
	// (target and threads) over all its repetitions, repeated on each of its rows; empty when the
	// run has one repetition.
	"repetition", "cell_n",
	"qps_median", "qps_ci_low", "qps_ci_high", "qps_cv", "qps_min", "qps_max",
	"tps_median", "tps_ci_low", "tps_ci_high", "tps_cv", "tps_min", "tps_max",
	"latency_p95_median_ms", "latency_p95_ci_low_ms", "latency_p95_ci_high_ms", "latency_p95_cv",
	"latency_p95_min_ms", "latency_p95_max_ms", "noisy",
	// The step ran past its duration (StepResult.OverDuration): not a sample of its cell.
	"over_duration",
	// The client container's CPU over the step (StepResult.ClientCPU): cores used, cores it had,
	// and whether it used 90 % or more of them; empty when not sampled.
	"client_cpu_cores", "client_cpu_available", "client_saturated",
}

// csvHeader is the first row of results.csv: its own columns and every registered client's, each
// client's after the column it names (or at the end, in the order the clients are registered),
// whatever the run's client, so that the header is the same for every run.
func csvHeader() []string {
	return withClientColumns(csvColumns, func(_ client.Client, cols load.Columns) []string { return cols.Names })
}

// withClientColumns is own, values of csvColumns, with the clients' columns inserted where they
// go: their values for each client's columns.
func withClientColumns(own []string, values func(client.Client, load.Columns) []string) []string {
	row := make([]string, 0, len(own))
	for i, v := range own {
		row = append(row, v)
		for _, c := range client.All() {
			for _, cols := range c.CSVColumns() {
				if cols.After == csvColumns[i] {
					row = append(row, values(c, cols)...)
				}
			}
		}
	}
	for _, c := range client.All() {
		for _, cols := range c.CSVColumns() {
			if !slices.Contains(csvColumns, cols.After) {
				row = append(row, values(c, cols)...)
			}
		}
	}
	return row
}

// renderCSV writes one row per target and finished step, targets in spec order, steps in the
// order measured. Numbers are written exactly as status holds them; a client's columns are
// filled on the rows of its runs.
func renderCSV(doc *results.Doc) (string, error) {
	var b strings.Builder
	w := csv.NewWriter(&b)
	// A suite's rows name their workload in one more column, after all the others; a run of
	// one spec.workload keeps the header every such run has.
	suite := len(doc.Workloads) > 0
	header := csvHeader()
	if suite {
		header = append(header, "workload")
	}
	if err := w.Write(header); err != nil {
		return "", fmt.Errorf("write results.csv: %w", err)
	}
	runs, _ := client.Named(doc.Workload.Client)
	type cellKey struct {
		workload string
		threads  int32
	}
	for _, tr := range doc.Targets {
		cells := map[cellKey]results.Cell{}
		for _, c := range tr.Cells {
			cells[cellKey{c.Workload, c.Threads}] = c
		}
		cellOf := func(st results.Step) results.Cell { return cells[cellKey{st.Workload, st.Threads}] }
		repeated := len(tr.Cells) > 0
		for _, st := range tr.Steps {
			own := []string{
				tr.Name,
				tr.ServerVersion,
				strconv.FormatInt(int64(st.Threads), 10),
				format.CSVFloat(st.TPS),
				format.CSVFloat(st.QPS.Total),
				format.CSVFloat(st.QPS.Read),
				format.CSVFloat(st.QPS.Write),
				format.CSVFloat(st.QPS.Other),
				format.CSVFloat(st.Latency.MinMs),
				format.CSVFloat(st.Latency.AvgMs),
				format.CSVFloat(st.Latency.P95Ms),
				format.CSVFloat(st.Latency.MaxMs),
				strconv.FormatInt(st.Errors, 10),
				strconv.FormatInt(st.Reconnects, 10),
				format.CSVFloat(st.DurationSeconds),
				strconv.FormatInt(int64(st.Attempts), 10),
				csvTime(st.StartTime),
				csvTime(st.FinishTime),
			}
			own = append(own, cellColumns(st.Repetition, cellOf(st), repeated)...)
			own = append(own, strconv.FormatBool(st.OverDuration))
			if c := st.ClientCPU; c != nil {
				own = append(own, format.CSVFloat(c.Cores), format.CSVFloat(c.Available), strconv.FormatBool(c.Saturated))
			} else {
				own = append(own, "", "", "")
			}
			row := withClientColumns(own, func(c client.Client, cols load.Columns) []string {
				if c.Name() != runs.Name() {
					return make([]string, len(cols.Names))
				}
				return cols.Values(st, cellOf(st), repeated)
			})
			if suite {
				row = append(row, st.Workload)
			}
			if err := w.Write(row); err != nil {
				return "", fmt.Errorf("write results.csv: %w", err)
			}
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return "", fmt.Errorf("write results.csv: %w", err)
	}
	return b.String(), nil
}

// csvTime writes RFC 3339 in UTC, as metav1.Time does in JSON, so both files agree.
func csvTime(t *metav1.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// cellColumns are the repetition and cell statistics columns of a row; empty without repetitions.
func cellColumns(rep int32, c results.Cell, repeated bool) []string {
	if !repeated {
		return make([]string, 21)
	}
	cols := []string{strconv.FormatInt(int64(max(rep, 1)), 10), strconv.FormatInt(int64(c.N), 10)}
	for _, m := range []v1alpha1.MetricStats{c.QPS, c.TPS, c.P95Ms} {
		cols = append(cols, format.MetricColumns(m)...)
	}
	return append(cols, strconv.FormatBool(c.Noisy))
}

// serverCSVHeader is the first row of server.csv: the steps' server counters and waits in long
// format, one row per step and counter, gauge or wait event, so a user filters by name instead
// of addressing one of a hundred columns that differ by server flavour. The columns:
//
//   - run, target: the BenchmarkRun and the target.
//   - threads, repetition: the step; repetition is 1 when the run has one.
//   - kind: counter, gauge or wait.
//   - source: status (SHOW GLOBAL STATUS), innodbMetrics (information_schema.INNODB_METRICS) or,
//     for waits, performanceSchema (events_waits_summary_global_by_event_name).
//   - name: the status variable, InnoDB metric or wait event (EVENT_NAME).
//   - delta: for a counter its change over the step (end snapshot minus start, exact); for a
//     gauge its value at the end of the step; for a wait the number of waits timed during the
//     step.
//   - per_second: for a counter delta per second of the time between the snapshots; for a wait
//     the seconds of wait per second (how many threads waited on the event on average); empty
//     for a gauge.
//   - per_query: for a counter delta per sysbench query of the step; empty for gauges and waits.
//
// A step whose server container's CPU was measured (serverstats.CPU) has one more row: kind cpu,
// source kubelet, name the container, delta its CPU seconds between the kubelet's first and last
// sample inside the step, per_second the cores busy, per_query CPU seconds per query.
//
// Rows follow results.json: targets in spec order, steps in the order measured, then counters in
// the bounded set's order, gauges, and waits longest first. Counters a server lacks have no row
// (results.json lists them: missingStatus, missingInnoDBMetrics).
var serverCSVHeader = []string{"run", "target", "threads", "repetition", "kind", "source", "name",
	"delta", "per_second", "per_query"}

// The kind and source columns of server.csv.
const (
	serverKindCounter = "counter"
	serverKindGauge   = "gauge"
	serverKindWait    = "wait"
	serverKindCPU     = "cpu"
	sourceWaits       = "performanceSchema"
	sourceKubelet     = "kubelet"
)

// renderServerCSV writes server.csv, or "" when no step has server counters.
func renderServerCSV(doc *results.Doc, servers [][]*serverstats.Step) (string, error) {
	var b strings.Builder
	w := csv.NewWriter(&b)
	rows := 0
	for ti, tr := range doc.Targets {
		for si, st := range tr.Steps {
			s := servers[ti][si]
			if s == nil {
				continue
			}
			if rows == 0 {
				if err := w.Write(serverCSVHeader); err != nil {
					return "", fmt.Errorf("write %s: %w", KeyServerCSV, err)
				}
			}
			rows++
			if err := writeServerRows(w, doc.Run.Name, tr.Name, st, s); err != nil {
				return "", err
			}
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return "", fmt.Errorf("write %s: %w", KeyServerCSV, err)
	}
	return b.String(), nil
}

// writeServerRows writes one step's rows of server.csv.
func writeServerRows(w *csv.Writer, run, target string, st results.Step, s *serverstats.Step) error {
	head := []string{run, target, strconv.FormatInt(int64(st.Threads), 10),
		strconv.FormatInt(int64(st.RepetitionOrDefault()), 10)}
	row := func(cols ...string) error {
		if err := w.Write(append(slices.Clip(head), cols...)); err != nil {
			return fmt.Errorf("write %s: %w", KeyServerCSV, err)
		}
		return nil
	}
	for _, c := range s.Counters {
		if err := row(serverKindCounter, c.Source, c.Name, strconv.FormatUint(c.Delta, 10),
			format.CSVFloat(c.PerSecond), format.CSVFloat(c.PerQuery)); err != nil {
			return err
		}
	}
	for _, g := range s.Gauges {
		if err := row(serverKindGauge, g.Source, g.Name, strconv.FormatUint(g.Value, 10), "", ""); err != nil {
			return err
		}
	}
	for _, x := range s.Waits {
		if err := row(serverKindWait, sourceWaits, x.Event, strconv.FormatUint(x.Count, 10),
			format.CSVFloat(x.SecondsPerSecond), ""); err != nil {
			return err
		}
	}
	if c := s.CPU; c != nil {
		if err := row(serverKindCPU, sourceKubelet, c.Container, format.CSVFloat(c.Seconds), format.CSVFloat(c.PerSecond),
			format.CSVFloat(c.PerQuery)); err != nil {
			return err
		}
	}
	return nil
}

// serverCSVBytes is how many bytes a step's rows take in server.csv.
func serverCSVBytes(run, target string, st results.Step, s *serverstats.Step) (int, error) {
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := writeServerRows(w, run, target, st, s); err != nil {
		return 0, err
	}
	w.Flush()
	return b.Len(), w.Error()
}

// decodeServers decodes every step's server counters, indexed like doc.Targets[i].Steps[j]; nil
// where a step has none.
func decodeServers(doc *results.Doc) ([][]*serverstats.Step, error) {
	out := make([][]*serverstats.Step, len(doc.Targets))
	for ti, tr := range doc.Targets {
		out[ti] = make([]*serverstats.Step, len(tr.Steps))
		for si, st := range tr.Steps {
			if st.Server == nil {
				continue
			}
			s, err := results.DecodeServer(string(st.Server))
			if err != nil {
				return nil, fmt.Errorf("%s: target %s, %d threads: %w", KeyResultsJSON, tr.Name, st.Threads, err)
			}
			out[ti][si] = &s
		}
	}
	return out, nil
}
