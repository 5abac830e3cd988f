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
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// csvHeader is the first row of results.csv; spreadsheets and scripts address columns by these
// names, so they only ever grow at the end.
var csvHeader = []string{
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
	// go-tpc's steps (StepResult.TPCC): tpmC, all successful transactions per minute, go-tpc's
	// efficiency, and new-order's p99 (latency_p95_ms is new-order's p95); empty for the others.
	"tpmc", "tpm_total", "tpcc_efficiency", "new_order_p99_ms",
	// The client container's CPU over the step (StepResult.ClientCPU): cores used, cores it had,
	// and whether it used 90 % or more of them; empty when not sampled.
	"client_cpu_cores", "client_cpu_available", "client_saturated",
	// A go-tpc cell's tpmC statistics over its repetitions (CellStats.TpmC), as the qps_ columns
	// are a query-counting cell's (a go-tpc cell's QPS is 0); empty for the other clients and
	// without repetitions.
	"tpmc_median", "tpmc_ci_low", "tpmc_ci_high", "tpmc_cv", "tpmc_min", "tpmc_max",
}

// renderCSV writes one row per target and finished step, targets in spec order, steps in the
// order measured. Numbers are written exactly as status holds them.
func renderCSV(doc *results.Doc) (string, error) {
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.Write(csvHeader); err != nil {
		return "", fmt.Errorf("write results.csv: %w", err)
	}
	for _, tr := range doc.Targets {
		cellOf := map[int32]results.Cell{}
		for _, c := range tr.Cells {
			cellOf[c.Threads] = c
		}
		for _, st := range tr.Steps {
			row := []string{
				tr.Name,
				tr.ServerVersion,
				strconv.FormatInt(int64(st.Threads), 10),
				csvFloat(st.TPS),
				csvFloat(st.QPS.Total),
				csvFloat(st.QPS.Read),
				csvFloat(st.QPS.Write),
				csvFloat(st.QPS.Other),
				csvFloat(st.Latency.MinMs),
				csvFloat(st.Latency.AvgMs),
				csvFloat(st.Latency.P95Ms),
				csvFloat(st.Latency.MaxMs),
				strconv.FormatInt(st.Errors, 10),
				strconv.FormatInt(st.Reconnects, 10),
				csvFloat(st.DurationSeconds),
				strconv.FormatInt(int64(st.Attempts), 10),
				csvTime(st.StartTime),
				csvTime(st.FinishTime),
			}
			row = append(row, cellColumns(st.Repetition, cellOf[st.Threads], len(tr.Cells) > 0)...)
			row = append(row, strconv.FormatBool(st.OverDuration))
			row = append(row, tpccColumns(st.TPCC)...)
			if c := st.ClientCPU; c != nil {
				row = append(row, csvFloat(c.Cores), csvFloat(c.Available), strconv.FormatBool(c.Saturated))
			} else {
				row = append(row, "", "", "")
			}
			row = append(row, tpmCCellColumns(cellOf[st.Threads], len(tr.Cells) > 0)...)
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

func csvFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// csvTime writes RFC 3339 in UTC, as metav1.Time does in JSON, so both files agree.
func csvTime(t *metav1.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// tpccColumns are a go-tpc step's columns; empty for the other clients.
func tpccColumns(r *v1alpha1.TPCCResult) []string {
	if r == nil {
		return make([]string, 4)
	}
	p99 := ""
	for _, tx := range r.Transactions {
		if tx.Name == "NEW_ORDER" {
			p99 = csvFloat(tx.P99Ms)
		}
	}
	return []string{csvFloat(r.TpmC), csvFloat(r.TpmTotal), csvFloat(r.Efficiency), p99}
}

// tpmCCellColumns are a go-tpc cell's tpmC statistics; empty without repetitions or tpmC.
func tpmCCellColumns(c results.Cell, repeated bool) []string {
	if !repeated || c.TpmC == nil {
		return make([]string, 6)
	}
	return metricColumns(*c.TpmC)
}

// metricColumns are a cell statistic's median, interval, cv, min and max.
func metricColumns(m v1alpha1.MetricStats) []string {
	return []string{csvFloat(m.Median), csvFloat(m.CILow), csvFloat(m.CIHigh), csvFloat(m.CV), csvFloat(m.Min), csvFloat(m.Max)}
}

// cellColumns are the repetition and cell statistics columns of a row; empty without repetitions.
func cellColumns(rep int32, c results.Cell, repeated bool) []string {
	if !repeated {
		return make([]string, 21)
	}
	cols := []string{strconv.FormatInt(int64(max(rep, 1)), 10), strconv.FormatInt(int64(c.N), 10)}
	for _, m := range []v1alpha1.MetricStats{c.QPS, c.TPS, c.P95Ms} {
		cols = append(cols, metricColumns(m)...)
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
			csvFloat(c.PerSecond), csvFloat(c.PerQuery)); err != nil {
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
			csvFloat(x.SecondsPerSecond), ""); err != nil {
			return err
		}
	}
	if c := s.CPU; c != nil {
		if err := row(serverKindCPU, sourceKubelet, c.Container, csvFloat(c.Seconds), csvFloat(c.PerSecond),
			csvFloat(c.PerQuery)); err != nil {
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
