package mysqlslap

import (
	"fmt"
	"strings"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/report/format"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// WorkloadLine: the load, queries and iterations, options, the image and the longest a step may
// take.
func (Client) WorkloadLine(doc *results.Doc) string {
	m, l := doc.Workload.Mysqlslap, doc.Ladder
	if m == nil {
		// A document that names mysqlslap without its settings is not one this operator writes.
		return probe.WorkloadLine(doc)
	}
	what := "mysqlslap"
	if m.LoadType != "" {
		what += fmt.Sprintf(" `%s` load", m.LoadType)
	}
	parts := []string{what, fmt.Sprintf("%s queries per iteration over all clients, %d iteration(s) per step",
		format.GroupDigits(m.Queries), m.Iterations)}
	if len(m.Args) > 0 {
		parts = append(parts, "options `"+strings.Join(m.Args, " ")+"`")
	}
	if m.Image != "" {
		parts = append(parts, "client image `"+m.Image+"`")
	} else {
		parts = append(parts, "client from each target's server image")
	}
	parts = append(parts, "at most "+format.Seconds(l.StepDurationSeconds)+" per step")
	if l.WarmupSeconds > 0 {
		parts = append(parts, fmt.Sprintf("one warm-up run at %d clients", l.WarmupThreads))
	}
	return strings.Join(parts, ", ")
}

// ReportSection: none; the QPS table and its note say it all.
func (Client) ReportSection(*results.Doc) string { return "" }

// CSVColumns: none; mysqlslap's QPS is in the qps column.
func (Client) CSVColumns() []load.Columns { return nil }

// WidestStep: a mysqlslap step has no fields of its own.
func (Client) WidestStep(load.Widest, *v1.StepResult) {}

// RunLabels: the load type; mysqlslap has no prepared tables.
func (Client) RunLabels(w v1.Workload, _ *results.Doc) load.RunLabels {
	return load.RunLabels{Workload: "mysqlslap:" + string(w.MysqlslapOrDefault().LoadType)}
}
