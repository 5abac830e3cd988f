package plugin

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// viewDoc is a run of targets mysql (performance_schema ON, CPU measured) and mariadb
// (performance_schema OFF, lacking Innodb_rows_read, CPU not measured) at 1 and 8 threads with
// reps repetitions; server returns a step's counters, nil for none.
func viewDoc(reps int, server func(target string, threads, rep int32) *serverstats.Step) *results.Doc {
	d := &results.Doc{FormatVersion: results.FormatVersion, Run: results.Run{Name: "r", Namespace: "bench"},
		Ladder: results.Ladder{Threads: []int32{1, 8}, Repetitions: reps}}
	for _, name := range []string{"mysql", "mariadb"} {
		t := results.Target{Name: name, ServerVersion: name + "-1.0"}
		for r := int32(1); r <= int32(reps); r++ {
			for _, th := range []int32{1, 8} {
				st := results.Step{StepResult: v1.StepResult{Threads: th, Repetition: r}}
				if reps == 1 {
					st.Repetition = 0
				}
				if s := server(name, th, r); s != nil {
					b, err := json.Marshal(s)
					if err != nil {
						panic(err)
					}
					st.Server = b
				}
				t.Steps = append(t.Steps, st)
			}
		}
		d.Targets = append(d.Targets, t)
	}
	return d
}

// viewStep: rows read per query grows with threads and repetitions; the mutex waits grow with
// threads; mysql's CPU is 10 µs per query per thread.
func viewStep(target string, threads, rep int32) *serverstats.Step {
	rows := float64(threads) + float64(rep-1)
	s := &serverstats.Step{Seconds: 10, Queries: 1000,
		Gauges: []serverstats.Gauge{{Source: serverstats.SourceStatus, Name: "Threads_running", Value: 1}}}
	if target == "mariadb" {
		s.Counters = []serverstats.Counter{{Source: serverstats.SourceStatus, Name: "Rows_read", PerQuery: rows, PerSecond: rows * 100}}
		s.MissingStatus = []string{"Innodb_rows_read", "Innodb_redo_log_current_lsn"}
		s.MissingInnoDBMetrics = []string{"dml_reads"}
		s.CPUMissing = "no CPU: the operator may not read the kubelet's stats"
		return s
	}
	s.Counters = []serverstats.Counter{
		{Source: serverstats.SourceStatus, Name: "Innodb_rows_read", PerQuery: rows, PerSecond: rows * 100},
		{Source: serverstats.SourceInnoDBMetrics, Name: "lock_deadlocks", PerQuery: 0.00001234, PerSecond: 0.001234},
	}
	s.MissingStatus = []string{"Rows_read"}
	s.PerformanceSchema = true
	s.Waits = []serverstats.Wait{
		{Event: "wait/synch/mutex/innodb/buf_pool_mutex", SecondsPerSecond: 0.1 * float64(threads)},
		{Event: "wait/io/table/sql/handler", SecondsPerSecond: 0.5},
	}
	if threads == 8 {
		s.Waits = append(s.Waits, serverstats.Wait{Event: "wait/synch/rwlock/innodb/hash_table_locks", SecondsPerSecond: 0.05})
	}
	s.CPU = &serverstats.CPU{Container: "mysql", PerSecond: 0.001 * float64(threads), PerQuery: 0.00001 * float64(threads)}
	return s
}

func TestServerTables(t *testing.T) {
	cases := []struct {
		name   string
		doc    *results.Doc
		q      serverQuery
		want   []string // lines (spaces squeezed) or phrases the table has
		absent []string
	}{
		{"one repetition: counters, gauge, CPU, waits, and what is missing",
			viewDoc(1, viewStep), serverQuery{},
			[]string{
				"Target mysql (mysql-1.0):",
				"Server counters per query by threads:",
				"COUNTER 1 8",
				"Innodb_rows_read 1 8",
				"lock_deadlocks 0.0000123 0.0000123",
				"Threads_running (at end) 1 1",
				"CPU seconds (mysql container) 0.00001 0.00008",
				"EVENT 1 8",
				"io/table/sql/handler 0.5 0.5",
				"mutex/innodb/buf_pool_mutex 0.1 0.8",
				"rwlock/innodb/hash_table_locks - 0.05",
				"- counters mysql lacks or has disabled: status Rows_read (has Innodb_rows_read)",
				"Target mariadb (mariadb-1.0):",
				"Rows_read 1 8",
				"- performance_schema is OFF on mariadb: no waits recorded",
				"- counters mariadb lacks or has disabled: status Innodb_rows_read (has Rows_read), Innodb_redo_log_current_lsn; InnoDB metrics dml_reads",
				"- CPU per query: not measured (no CPU: the operator may not read the kubelet's stats)",
				"-: no value at that thread count",
			},
			[]string{"median of", "performance_schema is OFF on mysql", "not stored"}},
		{"repetitions: medians; per second",
			viewDoc(3, viewStep), serverQuery{perSecond: true, targets: []string{"mysql"}},
			[]string{
				"Server counters per second by threads (median of 3 repetitions):",
				"Innodb_rows_read 200 900", // rows 1,2,3 and 8,9,10 per query x 100
				"CPU seconds (mysql container) 0.001 0.008",
				"Top waits by threads in seconds of wait per second, i.e. threads waiting on average (median of 3 repetitions):",
			},
			[]string{"Target mariadb"}},
		{"--counter: only those rows, and why a target has none",
			viewDoc(1, viewStep), serverQuery{counters: []string{"Innodb_rows_read", "Threads_running"}},
			[]string{
				"Innodb_rows_read 1 8",
				"Threads_running (at end) 1 1",
				"Innodb_rows_read - -",
				"- counters mariadb lacks or has disabled: status Innodb_rows_read (has Rows_read)",
			},
			[]string{"lock_deadlocks", "Rows_read 1 8", "dml_reads", "Innodb_redo_log_current_lsn"}},
		{"steps not stored: the Event's reason, dropped to fit, unknown",
			viewDoc(2, func(target string, threads, rep int32) *serverstats.Step {
				if target == "mysql" && threads == 8 {
					return nil
				}
				if target == "mariadb" && rep == 2 {
					return nil
				}
				return viewStep(target, threads, rep)
			}),
			serverQuery{notStored: notStored{"mysql": {8: "1 start and 0 end server snapshots, want one of each"}}},
			[]string{
				"Innodb_rows_read 1.5 -",
				"- server counters not stored at 8 (repetition 1), 8 (repetition 2) threads: 1 start and 0 end server snapshots, want one of each",
				"- server counters not stored at 1 (repetition 2), 8 (repetition 2) threads: why is not known",
			},
			nil},
		{"no server counters at all",
			viewDoc(1, func(string, int32, int32) *serverstats.Step { return nil }), serverQuery{},
			[]string{"Target mysql (mysql-1.0):", "- no server counters stored for any step (spec.serverStats.enabled false, or no step's log had the server snapshots"},
			[]string{"COUNTER"}},
		{"server stats off",
			viewDoc(1, func(string, int32, int32) *serverstats.Step { return nil }), serverQuery{off: true},
			[]string{"- no server counters: the run did not record them (spec.serverStats.enabled: false)"},
			[]string{"COUNTER", "Warning Event"}},
		{"snapshot errors and waits that went backwards",
			viewDoc(1, func(target string, threads, rep int32) *serverstats.Step {
				s := viewStep(target, threads, rep)
				s.Errors = []string{"start: innodbMetrics: Access denied; you need (at least one of) the PROCESS privilege(s)"}
				s.WaitsLeftOut = []string{"wait/io/table/sql/handler went from 5 waits to none"}
				s.CPU, s.CPUMissing = nil, ""
				return s
			}), serverQuery{targets: []string{"mysql"}},
			[]string{"- snapshot errors (why some counters are missing): start: innodbMetrics: Access denied",
				"- some wait events' totals went backwards at 1, 8 threads",
				"- CPU per query: not measured (CPU not measured (no CPU recorded with the step's server counters))"},
			nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := serverViewOf(tc.doc, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := writeServerTables(&b, v); err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, l := range strings.Split(b.String(), "\n") {
				lines = append(lines, strings.Join(strings.Fields(l), " "))
			}
			out := strings.Join(lines, "\n")
			t.Log("\n" + b.String())
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("the tables lack %q", w)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(out, a) {
					t.Errorf("the tables have %q", a)
				}
			}
		})
	}
}

// -o csv and -o json hold the tables' values, exactly, with how many steps each is the median of.
func TestServerCSVAndJSON(t *testing.T) {
	v, err := serverViewOf(viewDoc(3, viewStep), serverQuery{targets: []string{"mysql"}, counters: []string{"lock_deadlocks"}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := writeServerCSV(&b, v); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"run,target,threads,kind,source,name,unit,value,steps\n",
		"r,mysql,1,counter,innodbMetrics,lock_deadlocks,per query,1.234e-05,3\n",
		"r,mysql,8,cpu,kubelet,CPU seconds (mysql container),CPU seconds per query,8e-05,3\n",
		"r,mysql,8,wait,performanceSchema,wait/synch/rwlock/innodb/hash_table_locks,seconds of wait per second,0.05,3\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("csv lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "Innodb_rows_read") {
		t.Errorf("csv has a counter not asked for")
	}
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back serverView
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	r := back.Targets[0].Rows[0]
	if back.Per != "query" || back.Repetitions != 3 || r.Name != "lock_deadlocks" || *r.Values[1] != 0.00001234 || r.N[1] != 3 {
		t.Errorf("json %s", data)
	}
}

func TestParseNotStored(t *testing.T) {
	for _, tc := range []struct {
		msg     string
		target  string
		threads []int32
		why     string
		ok      bool
	}{
		{"target mysql80: the server's counters of 2 step(s) (threads 1, 8) are not stored: 1 start and 0 end server snapshots, want one of each",
			"mysql80", []int32{1, 8}, "1 start and 0 end server snapshots, want one of each", true},
		{"target a: the server's counters of 3 step(s) (threads 4, 4, 8) are not stored: the log has no final report",
			"a", []int32{4, 8}, "the log has no final report", true},
		{"target a: the server's counters are not stored: why", "a", nil, "why", true},
		{"something else", "", nil, "", false},
	} {
		target, threads, why, ok := parseNotStored(tc.msg)
		if target != tc.target || !slices.Equal(threads, tc.threads) || why != tc.why || ok != tc.ok {
			t.Errorf("%q: %q %v %q %v", tc.msg, target, threads, why, ok)
		}
	}
}
