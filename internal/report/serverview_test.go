package report

import (
	"slices"
	"strings"
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// The one server table report.md and the kubectl plugin render: medians per thread count over
// the steps that have a value, the rows a query asks for, the CPU row, and wait rows from which
// each thread count's own top waits come back (an event in the top of one thread count only is
// not in the top of another where it waited less).
func TestNewServerTable(t *testing.T) {
	waits := func(perSecond ...float64) []serverstats.Wait {
		var out []serverstats.Wait
		for i, x := range perSecond {
			out = append(out, serverstats.Wait{Event: "wait/synch/mutex/e" + string(rune('a'+i)), SecondsPerSecond: x})
		}
		return out
	}
	step := func(rowsRead, cpu float64, running uint64, w []serverstats.Wait) *serverstats.Step {
		return &serverstats.Step{
			Seconds: 10, Queries: 1000,
			Counters: []serverstats.Counter{{Source: serverstats.SourceStatus, Name: "Innodb_rows_read", PerQuery: rowsRead, PerSecond: rowsRead * 100},
				{Source: serverstats.SourceStatus, Name: "Innodb_data_fsyncs", PerQuery: 0.5, PerSecond: 50}},
			Gauges:            []serverstats.Gauge{{Source: serverstats.SourceStatus, Name: "Threads_running", Value: running}},
			PerformanceSchema: w != nil, Waits: w,
			CPU: &serverstats.CPU{Container: "mysql", PerQuery: cpu, PerSecond: cpu * 100},
		}
	}
	target := &results.Target{Name: "mysql", ServerVersion: "8.4.3"}
	for _, th := range []int32{1, 1, 1, 8, 8, 16} {
		target.Steps = append(target.Steps, results.Step{StepResult: v1.StepResult{Threads: th}})
	}
	servers := []*serverstats.Step{
		step(2, 0.001, 1, waits(0.1, 0.2, 0.3, 0.4, 0.5, 0.6)),
		step(4, 0.003, 2, waits(0.1, 0.2, 0.3, 0.4, 0.5, 0.6)),
		step(9, 0.002, 1, waits(0.1, 0.2, 0.3, 0.4, 0.5, 0.6)),
		step(1, 0.004, 3, waits(0.9, 0.2, 0.3, 0.4, 0.5)),
		nil, // 8 threads, second repetition: no server counters
		nil, // 16 threads: none at all
	}

	tbl := NewServerTable(target, servers, ServerQuery{})
	if !slices.Equal(tbl.Threads, []int32{1, 8, 16}) || !slices.Equal(tbl.recorded, []int{3, 1, 0}) {
		t.Fatalf("threads %v recorded %v, want 1 8 16 and 3 1 0", tbl.Threads, tbl.recorded)
	}
	var names []string
	for _, r := range tbl.Rows {
		names = append(names, r.Kind+" "+r.Name)
	}
	if !slices.Equal(names, []string{"counter Innodb_rows_read", "counter Innodb_data_fsyncs", "gauge Threads_running",
		"cpu CPU seconds (mysql container)"}) {
		t.Errorf("rows %q", names)
	}
	rows, _ := tbl.Row(RowCounter, "Innodb_rows_read")
	if *rows.Values[0] != 4 || rows.N[0] != 3 || *rows.Values[1] != 1 || rows.N[1] != 1 || rows.Values[2] != nil {
		t.Errorf("Innodb_rows_read %v n %v, want the medians 4 (of 3) and 1 (of 1), none at 16", values(rows), rows.N)
	}
	if cpu, ok := tbl.CPU(); !ok || *cpu.Values[0] != 0.002 || cpu.Unit != "CPU seconds per query" {
		t.Errorf("CPU %v %q", values(cpu), cpu.Unit)
	}
	top := func(i int) string {
		var out []string
		for _, w := range tbl.TopWaits(i) {
			out = append(out, ShortEvent(w.Name)+"="+Sig3(*w.Values[i]))
		}
		return strings.Join(out, " ")
	}
	// At 1 thread ea waited least and is left out; at 8 it waited most and ef was not listed.
	if got := top(0); got != "mutex/ef=0.6 mutex/ee=0.5 mutex/ed=0.4 mutex/ec=0.3 mutex/eb=0.2" {
		t.Errorf("top waits at 1 thread: %s", got)
	}
	if got := top(1); got != "mutex/ea=0.9 mutex/ee=0.5 mutex/ed=0.4 mutex/ec=0.3 mutex/eb=0.2" {
		t.Errorf("top waits at 8 threads: %s", got)
	}
	if got := top(2); got != "" {
		t.Errorf("top waits at 16 threads: %s", got)
	}

	// Asked for one counter, per second: that row only, with the CPU.
	tbl = NewServerTable(target, servers, ServerQuery{Counters: []string{"Innodb_data_fsyncs"}, PerSecond: true})
	if len(tbl.Rows) != 2 || tbl.Rows[0].Name != "Innodb_data_fsyncs" || *tbl.Rows[0].Values[0] != 50 ||
		tbl.Rows[0].Unit != "per second" || *tbl.Rows[1].Values[1] != 0.4 {
		t.Errorf("rows %+v", tbl.Rows)
	}

	// No server counters: the thread counts, no rows.
	tbl = NewServerTable(target, nil, ServerQuery{})
	if len(tbl.Threads) != 3 || tbl.Rows == nil || len(tbl.Rows) != 0 || tbl.PerformanceSchema || tbl.Waits != nil {
		t.Errorf("without counters: %+v", tbl)
	}
}

func values(r ServerRow) []float64 {
	var out []float64
	for _, v := range r.Values {
		if v == nil {
			out = append(out, -1)
			continue
		}
		out = append(out, *v)
	}
	return out
}
