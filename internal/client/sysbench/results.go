package sysbench

import (
	"fmt"
	"strings"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/report/format"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// WorkloadLine: the script, its tables, extra options, the step and the warm-up.
func (Client) WorkloadLine(doc *results.Doc) string {
	w, l := doc.Workload, doc.Ladder
	var parts []string
	switch {
	case w.CustomScript != nil:
		parts = append(parts, fmt.Sprintf("custom sysbench script `%s` from ConfigMap `%s`",
			w.CustomScript.Key, w.CustomScript.ConfigMap))
	default:
		parts = append(parts, fmt.Sprintf("sysbench `%s`", w.Script))
	}
	tables := fmt.Sprintf("%s tables x %s rows", format.GroupDigits(int64(w.Tables)), format.GroupDigits(w.TableSize))
	if w.SkipPrepare {
		tables += " (prepared beforehand)"
	}
	parts = append(parts, tables)
	if len(w.ExtraArgs) > 0 {
		parts = append(parts, "options `"+strings.Join(w.ExtraArgs, " ")+"`")
	}
	parts = append(parts, format.Seconds(l.StepDurationSeconds)+" per step")
	if l.WarmupSeconds > 0 {
		parts = append(parts, fmt.Sprintf("warm-up %s at %d threads", format.Seconds(l.WarmupSeconds), l.WarmupThreads))
	} else {
		parts = append(parts, "no warm-up")
	}
	return strings.Join(parts, ", ")
}

// ReportSection: none; the tables every client has say it all.
func (Client) ReportSection(*results.Doc) string { return "" }

// CSVColumns: none; results.csv's own columns are sysbench's.
func (Client) CSVColumns() []load.Columns { return nil }

// WidestStep: a sysbench step has no fields of its own.
func (Client) WidestStep(load.Widest, *v1.StepResult) {}

// RunLabels: the script (or the custom script's ConfigMap and key) and the tables, as
// results.json recorded them when there is one.
func (Client) RunLabels(w v1.Workload, doc *results.Doc) load.RunLabels {
	l := load.RunLabels{Workload: string(w.Script)}
	if w.CustomScript != nil {
		l.Workload = "custom:" + w.CustomScript.Name + "/" + w.CustomScript.Key
	}
	tables, rows := int64(w.Tables), w.TableSize
	if doc != nil {
		tables, rows = int64(doc.Workload.Tables), doc.Workload.TableSize
	}
	l.Tables, l.TableSize = &tables, &rows
	return l
}
