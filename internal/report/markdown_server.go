package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/mysqlbench/mysqlbench-operator/internal/report/format"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// serverColumn is a column of report.md's "Server counters per query" table: the first of names
// that the target's server has (servers of different flavours count the same thing under
// different names, see serverstats), per query, or a gauge's value at the end of the step.
type serverColumn struct {
	names []string
	unit  string
	gauge bool
	// label replaces the column's `name` heading.
	label string
}

// cpuPerQuery is the pseudo-counter of the server container's CPU per query (serverstats.CPU,
// from the kubelet), shown in microseconds.
const cpuPerQuery = "cpu"

// serverColumns are the counters report.md shows, the ones the studies this product automates
// explain results with: rows read (the work a query does), reads that missed the buffer pool,
// fsyncs and redo bytes (the write path), temporary tables on disk, and how many threads were
// running. Every counter is in server.csv.
var serverColumns = []serverColumn{
	// CPU cost per query by version: the server container's CPU from the kubelet.
	{names: []string{cpuPerQuery}, label: "CPU µs"},
	// MySQL has Innodb_rows_read; MariaDB lacks it and has Rows_read (rows read by any engine).
	{names: []string{"Innodb_rows_read", "Rows_read"}},
	{names: []string{"Innodb_buffer_pool_reads"}},
	{names: []string{"Innodb_data_fsyncs"}},
	// The redo log position's advance where Innodb_os_log_written is gone.
	{names: []string{"Innodb_os_log_written", "Innodb_redo_log_current_lsn", "Innodb_lsn_current"}, unit: "bytes"},
	{names: []string{"Created_tmp_disk_tables"}},
	{names: []string{"Threads_running"}, unit: "at end", gauge: true},
}

// serverStep is a step's server counters with the step they belong to.
type serverStep struct {
	threads int32
	s       *serverstats.Step
}

// writeServerSection writes the per-target tables of server counters per query and of top
// waits; nothing when no step has server counters.
func writeServerSection(b *strings.Builder, doc *results.Doc, servers [][]*serverstats.Step) {
	found := false
	for _, ss := range servers {
		found = found || slices.ContainsFunc(ss, func(s *serverstats.Step) bool { return s != nil })
	}
	if !found {
		return
	}
	b.WriteString("\n## Server counters and waits\n\n")
	intro := []string{
		"Measured with two snapshots of the server per step, one taken before the step's load started and one after " +
			"it ended (SHOW GLOBAL STATUS, information_schema.INNODB_METRICS where enabled, performance_schema's wait " +
			"summary where it is ON): a counter's change between them per query is over the step's queries (sysbench's, or " +
			"all that mysqlslap timed), " +
			"per second over the time between the snapshots.",
		"Rows read are `Innodb_rows_read` where the server has it (MySQL), else `Rows_read` (MariaDB: rows read by " +
			"any engine); redo bytes are `Innodb_os_log_written`, else the advance of the redo log position.",
		"CPU µs is the server container's CPU time per query in microseconds, from its kubelet's samples " +
			"(the container's cgroup) inside the step, interpolated to the snapshots' times, over the step's " +
			"queries; it needs the Helm value serverStats.kubeletCPU.",
		"`Threads_running` is read by the end snapshot, after the step's threads disconnected: it counts the " +
			"snapshot's own connection and, on a server the operator runs, the next step's client waiting for the " +
			"server lock, so more than 2 means something else was running.",
	}
	if doc.Ladder.Repetitions > 1 {
		intro = append(intro, fmt.Sprintf("With %d repetitions a row is the median over its thread count's repetitions "+
			"(a wait event a repetition did not list counts as 0 there).", doc.Ladder.Repetitions))
	}
	b.WriteString(strings.Join(intro, " ") + "\n\n")
	fmt.Fprintf(b, "Every counter of every step is in %s (steps[].server) and in %s, one row per step and counter, gauge "+
		"or wait event: run, target, threads, repetition (1 without repetitions), kind (counter, gauge or wait), source "+
		"(status, innodbMetrics, or performanceSchema for waits), name, delta (a counter's change over the step, exact; "+
		"a gauge's value at the end; the number of waits timed), per_second (a counter's delta per second; a wait's "+
		"seconds of wait per second; empty for a gauge), per_query (a counter's delta per sysbench query; empty "+
		"otherwise); a step whose CPU was measured has a row of kind cpu, source kubelet, named after the container: "+
		"delta its CPU seconds, per_second the cores busy, per_query CPU seconds per query.\n", KeyResultsJSON, KeyServerCSV)

	for ti, tr := range doc.Targets {
		if len(tr.Steps) == 0 {
			continue
		}
		name := format.MDText(tr.Name)
		if tr.ServerVersion != "" {
			name += " (" + format.MDText(tr.ServerVersion) + ")"
		}
		fmt.Fprintf(b, "\n### %s\n\n", name)
		var steps []serverStep
		for si, st := range tr.Steps {
			if s := servers[ti][si]; s != nil {
				steps = append(steps, serverStep{st.Threads, s})
			}
		}
		table := NewServerTable(&doc.Targets[ti], servers[ti], ServerQuery{})
		if len(steps) == 0 {
			if slices.ContainsFunc(doc.Dropped, func(d results.Dropped) bool {
				return d.Kind == results.DroppedServer && d.Target == tr.Name
			}) {
				b.WriteString("Server counters left out to fit the ConfigMap (see the notes).\n")
			} else {
				b.WriteString("No server counters recorded.\n")
			}
			continue
		}
		writeCountersTable(b, table)
		writeWaitsTable(b, tr.Name, table)
		writeServerGaps(b, steps)
	}
}

// writeCountersTable writes the "Server counters per query" table of a target: one row per
// thread count with server counters, one column per serverColumns entry.
func writeCountersTable(b *strings.Builder, table ServerTable) {
	b.WriteString("Server counters per query:\n\n| Threads |")
	columns := serverColumns
	cpu, measured := table.CPU()
	if !measured {
		// No step's CPU was measured (the default): no column of dashes; the gaps say why.
		columns = slices.DeleteFunc(slices.Clone(columns), func(c serverColumn) bool { return c.names[0] == cpuPerQuery })
	}
	rows := make([]ServerRow, len(columns))
	chosen := make([]string, len(columns))
	for i, c := range columns {
		chosen[i] = c.names[0]
		for _, n := range c.names {
			row, ok := cpu, n == cpuPerQuery && measured
			if n != cpuPerQuery {
				kind := RowCounter
				if c.gauge {
					kind = RowGauge
				}
				row, ok = table.Row(kind, n)
			}
			if ok && row.HasValue() {
				chosen[i], rows[i] = n, row
				break
			}
		}
		if c.label != "" {
			fmt.Fprintf(b, " %s |", c.label)
			continue
		}
		fmt.Fprintf(b, " `%s`", chosen[i])
		if c.unit != "" {
			b.WriteString(" " + c.unit)
		}
		b.WriteString(" |")
	}
	b.WriteString("\n|---:|" + strings.Repeat("---:|", len(columns)) + "\n")
	for ti, th := range table.Threads {
		if table.recorded[ti] == 0 {
			continue
		}
		fmt.Fprintf(b, "| %d |", th)
		for i := range columns {
			cell := missingCell
			if ti < len(rows[i].Values) && rows[i].Values[ti] != nil {
				v := *rows[i].Values[ti]
				if rows[i].Kind == RowCPU {
					v *= 1e6 // CPU seconds per query, shown in microseconds
				}
				cell = Sig3(v)
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteString("\n")
	}
}

// writeWaitsTable writes the "Top waits" table of a target, or says performance_schema was off.
func writeWaitsTable(b *strings.Builder, target string, table ServerTable) {
	if !table.PerformanceSchema {
		fmt.Fprintf(b, "\nperformance_schema is OFF on %s: no waits recorded (set performance_schema = ON in myCnf, "+
			"or targets[].synchWaits).\n", format.MDText(target))
		return
	}
	fmt.Fprintf(b, "\nTop waits: seconds of wait per second of the step (how many threads waited on the event on average), "+
		"event names without `wait/` and `synch/`:\n\n| Threads |")
	for i := range topWaitsShown {
		fmt.Fprintf(b, " %d |", i+1)
	}
	b.WriteString("\n|---:|" + strings.Repeat("---|", topWaitsShown) + "\n")
	for ti, th := range table.Threads {
		if table.recorded[ti] == 0 {
			continue
		}
		cells := make([]string, topWaitsShown)
		switch top := table.TopWaits(ti); {
		case table.psOn[ti] == 0:
			cells[0] = "performance_schema OFF"
		case len(top) == 0:
			cells[0] = "no waits recorded"
		default:
			for i, w := range top {
				cells[i] = mdCode(ShortEvent(w.Name)) + " " + Sig3(*w.Values[ti])
			}
		}
		fmt.Fprintf(b, "| %d |", th)
		for _, c := range cells {
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
}

// writeServerGaps says, once per target, which counters its server lacks, the snapshots' errors
// and whether wait events were left out.
func writeServerGaps(b *strings.Builder, steps []serverStep) {
	var status, metrics, errs, noCPU []string
	leftOut, withoutCPU := 0, 0
	for _, s := range steps {
		if s.s.CPU == nil && s.s.CPUMissing != "" {
			withoutCPU++
			noCPU = appendNew(noCPU, s.s.CPUMissing)
		}
		status = appendNew(status, s.s.MissingStatus...)
		metrics = appendNew(metrics, s.s.MissingInnoDBMetrics...)
		errs = appendNew(errs, s.s.Errors...)
		if len(s.s.WaitsLeftOut) > 0 {
			leftOut++
		}
	}
	inOrder(status, serverstats.StatusNames)
	inOrder(metrics, serverstats.InnoDBMetricNames)
	var lacks []string
	if len(status) > 0 {
		lacks = append(lacks, "status "+codeList(status))
	}
	if len(metrics) > 0 {
		lacks = append(lacks, "InnoDB metrics "+codeList(metrics))
	}
	if len(lacks) > 0 || len(errs) > 0 || leftOut > 0 || withoutCPU > 0 {
		b.WriteString("\n")
	}
	if withoutCPU > 0 {
		for i, e := range noCPU {
			noCPU[i] = format.MDText(e)
		}
		fmt.Fprintf(b, "- CPU per query not measured at %d of %d steps: %s.\n", withoutCPU, len(steps), strings.Join(noCPU, "; "))
	}
	if len(lacks) > 0 {
		fmt.Fprintf(b, "- Counters this server lacks or has disabled: %s.\n", strings.Join(lacks, "; "))
	}
	if len(errs) > 0 {
		const shown = 3
		more := ""
		if len(errs) > shown {
			more = fmt.Sprintf(" (and %d more in %s)", len(errs)-shown, KeyResultsJSON)
			errs = errs[:shown]
		}
		for i, e := range errs {
			errs[i] = format.MDText(e)
		}
		fmt.Fprintf(b, "- Snapshot errors, why some counters are missing: %s%s.\n", strings.Join(errs, "; "), more)
	}
	if leftOut > 0 {
		fmt.Fprintf(b, "- At %d of %d steps some wait events' totals went backwards (performance_schema forgets the "+
			"waits of a table it drops or evicts): they are left out of the top waits (waitsLeftOut in %s).\n",
			leftOut, len(steps), KeyResultsJSON)
	}
}

// mdCode writes a name as code, or as escaped text when it holds what would end the code span or
// the table cell.
func mdCode(s string) string {
	if s == "" || strings.ContainsAny(s, "`|\n") {
		return format.MDText(s)
	}
	return "`" + s + "`"
}

func codeList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = mdCode(n)
	}
	return strings.Join(out, ", ")
}

// appendNew appends the values not in list yet.
func appendNew(list []string, values ...string) []string {
	for _, v := range values {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}

// inOrder sorts names in the order of set; names outside it go last, sorted.
func inOrder(names, set []string) {
	pos := func(n string) int {
		if i := slices.Index(set, n); i >= 0 {
			return i
		}
		return len(set)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(pos(a), pos(b)), strings.Compare(a, b)) })
}
