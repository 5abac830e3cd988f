package report

import (
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
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

// cellColumns are the repetition and cell statistics columns of a row; empty without repetitions.
func cellColumns(rep int32, c results.Cell, repeated bool) []string {
	if !repeated {
		return make([]string, 21)
	}
	cols := []string{strconv.FormatInt(int64(max(rep, 1)), 10), strconv.FormatInt(int64(c.N), 10)}
	for _, m := range []v1alpha1.MetricStats{c.QPS, c.TPS, c.P95Ms} {
		cols = append(cols, csvFloat(m.Median), csvFloat(m.CILow), csvFloat(m.CIHigh), csvFloat(m.CV),
			csvFloat(m.Min), csvFloat(m.Max))
	}
	return append(cols, strconv.FormatBool(c.Noisy))
}
