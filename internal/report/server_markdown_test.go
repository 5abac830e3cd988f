package report

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// The report.md server tables: the counter each flavour has, medians over repetitions, top waits,
// performance_schema OFF, what a server lacks, snapshot errors, and waits left out.
func TestServerMarkdown(t *testing.T) {
	run := fixtureRun(-1)
	run.Spec.Targets[0].Name, run.Status.Targets[0].Name = "maria", "maria"
	run.Status.Targets[0].ServerVersion = "10.11.19-MariaDB"
	stored := map[string]string{}
	for ti, ts := range run.Status.Targets {
		for si, st := range ts.Steps {
			var s serverstats.Step
			if ti == 0 {
				s = serverFixture(t, flavourMariaDB, st, si == 1) // performance_schema ON at 8 threads only
			} else {
				s = serverFixture(t, flavourMySQL80, st, true)
				if st.Threads == 64 {
					// A server without Innodb_os_log_written: the redo log position stands in.
					s.Counters = slices.DeleteFunc(s.Counters, func(c serverstats.Counter) bool { return c.Name == "Innodb_os_log_written" })
					s.MissingStatus = append(s.MissingStatus, "Innodb_os_log_written")
					s.Errors = []string{"start: innodbMetrics: error 1227: Access denied; you need the PROCESS privilege"}
					s.WaitsLeftOut = []string{"wait/io/table/sql/handler went from 10 waits, 99 ps to 2 waits, 7 ps"}
				}
			}
			enc, err := EncodeServer(s)
			if err != nil {
				t.Fatal(err)
			}
			stored[ServerKey(ts.Name, st.Threads, 1)] = enc
		}
	}
	md := mustRender(t, run, stored)[KeyReportMD]
	lines := strings.Split(md, "\n")
	for _, want := range []string{
		"### maria (10.11.19-MariaDB)",
		"| Threads | `Rows_read` | `Innodb_buffer_pool_reads` | `Innodb_data_fsyncs` | `Innodb_os_log_written` bytes | `Created_tmp_disk_tables` | `Threads_running` at end |",
		"| 1 | 1 | 0.000025 | 0.000069 | 0.0352 | 0 | 1 |",
		"| 1 | performance_schema OFF |  |  |  |  |",
		"| 8 | `io/file/innodb/innodb_data_file` 0.08 | `sxlock/innodb/btr_search_latch` 0.0416 | `mutex/innodb/trx_sys_mutex` 0.0384 | `mutex/innodb/buf_pool_mutex` 0.0272 | `io/file/innodb/innodb_log_file` 0.008 |",
		"- Counters this server lacks or has disabled: status `Innodb_rows_read`, `Innodb_rows_inserted`, `Innodb_rows_updated`, `Innodb_rows_deleted`, `Innodb_redo_log_current_lsn`; InnoDB metrics `buffer_flush_batch_total_pages`, `trx_rw_commits`, `trx_ro_commits`, `trx_nl_ro_commits`, `trx_rollbacks`, `dml_reads`, `dml_inserts`, `dml_updates`, `dml_deletes`.",
		"### ps80 (8.0.36-28)",
		"| Threads | `Innodb_rows_read` | `Innodb_buffer_pool_reads` | `Innodb_data_fsyncs` | `Innodb_os_log_written` bytes | `Created_tmp_disk_tables` | `Threads_running` at end |",
		"| 64 | 1 | 0.000025 | 0.00000348 | — | 0 | 1 |",
		"| 64 | `sxlock/innodb/btr_search_latch` 1.77 | `mutex/innodb/trx_sys_mutex` 0.666 | `io/file/innodb/innodb_data_file` 0.64 | `mutex/innodb/buf_pool_mutex` 0.397 | `rwlock/innodb/hash_table_locks` 0.136 |",
		"- Counters this server lacks or has disabled: status `Rows_read`, `Innodb_os_log_written`, `Innodb_lsn_current`.",
		"- Snapshot errors, why some counters are missing: start: innodbMetrics: error 1227: Access denied; you need the PROCESS privilege.",
		"- At 1 of 3 steps some wait events' totals went backwards (performance_schema forgets the waits of a table it drops or evicts): they are left out of the top waits (waitsLeftOut in results.json).",
	} {
		if !slices.Contains(lines, want) {
			t.Errorf("report.md lacks the line %q", want)
		}
	}
	if strings.Contains(md, "performance_schema is OFF on maria") {
		t.Error("says performance_schema is OFF on a target that had it ON at a step")
	}

	// Only a server whose steps all lack Innodb_os_log_written names the redo position instead.
	for _, ts := range run.Status.Targets[1:] {
		for _, st := range ts.Steps {
			s := serverFixture(t, flavourMySQL80, st, false)
			s.Counters = slices.DeleteFunc(s.Counters, func(c serverstats.Counter) bool { return c.Name == "Innodb_os_log_written" })
			enc, _ := EncodeServer(s)
			stored[ServerKey(ts.Name, st.Threads, 1)] = enc
		}
	}
	md = mustRender(t, run, stored)[KeyReportMD]
	for _, want := range []string{
		"`Innodb_redo_log_current_lsn` bytes |",
		"performance_schema is OFF on ps80: no waits recorded (set performance_schema = ON in myCnf, or targets[].synchWaits).",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// With repetitions a row is the median of the cell's steps; a wait event a repetition did not
// list counts as 0.
func TestServerMarkdownMedians(t *testing.T) {
	run := repeatedRun()
	stored := map[string]string{}
	ts := run.Status.Targets[1]
	for _, st := range ts.Steps {
		s := serverFixture(t, flavourMySQL80, st, true)
		// Buffer pool reads per query 1, 2, 30 over the repetitions: median 2.
		for i := range s.Counters {
			if s.Counters[i].Name == "Innodb_buffer_pool_reads" {
				s.Counters[i].PerQuery = []float64{1, 2, 30}[st.Repetition-1]
			}
		}
		// One event only in repetition 1 (median 0: not shown), one in repetitions 1 and 2.
		if st.Repetition == 1 {
			s.Waits = append([]serverstats.Wait{{Event: "wait/synch/mutex/innodb/once", Count: 1, SecondsPerSecond: 99}}, s.Waits...)
		}
		if st.Repetition <= 2 {
			s.Waits = append([]serverstats.Wait{{Event: "wait/synch/mutex/innodb/twice", Count: 1, SecondsPerSecond: 50}}, s.Waits...)
		}
		enc, err := EncodeServer(s)
		if err != nil {
			t.Fatal(err)
		}
		stored[ServerKey(ts.Name, st.Threads, st.Repetition)] = enc
	}
	md := mustRender(t, run, stored)[KeyReportMD]
	if !strings.Contains(md, "\n| 8 | 1 | 2 | ") {
		t.Errorf("buffer pool reads per query are not the median of 1, 2, 30:\n%s", md[strings.Index(md, "### ps80"):])
	}
	if !strings.Contains(md, "\n| 8 | `mutex/innodb/twice` 50 | `io/file/innodb/innodb_data_file` 0.08 |") || strings.Contains(md, "once") {
		t.Errorf("top waits are not medians with absent events as 0:\n%s", md[strings.Index(md, "### ps80"):])
	}
}

// The server container's CPU per query: a column of report.md's counter table (in µs) for a
// target with measured steps, a cpu row in server.csv, and a note saying why for steps without;
// a target none of whose steps has CPU gets no column.
func TestServerCPU(t *testing.T) {
	run := fixtureRun(-1)
	stored := map[string]string{}
	for ti, ts := range run.Status.Targets {
		for si, st := range ts.Steps {
			s := serverFixture(t, flavourMySQL80, st, true)
			switch {
			case ti == 0 && si == 0:
				s.CPUMissing = "fewer than two kubelet samples inside the step (polled every 2s)"
			case ti == 0:
				perSecond := 1.5
				s.CPU = &serverstats.CPU{Container: "mysql", Seconds: 3 * perSecond, From: 10, To: 13, Samples: 4,
					PerSecond: perSecond, PerQuery: perSecond / (s.Queries / s.Seconds)}
			default:
				s.CPUMissing = "CPU per query is off"
			}
			enc, err := EncodeServer(s)
			if err != nil {
				t.Fatal(err)
			}
			stored[ServerKey(ts.Name, st.Threads, 1)] = enc
		}
	}
	data := mustRender(t, run, stored)
	md := data[KeyReportMD]
	first, second := run.Status.Targets[0].Name, run.Status.Targets[1].Name
	sections := strings.SplitN(md[strings.Index(md, "### "+first):], "### "+second, 2)
	if len(sections) != 2 {
		t.Fatalf("report.md has no section per target:\n%s", md)
	}
	if !strings.Contains(sections[0], "| Threads | CPU µs | `") || !strings.Contains(sections[0], "- CPU per query not measured at 1 of ") ||
		!strings.Contains(sections[0], "fewer than two kubelet samples") {
		t.Errorf("target %s: want a CPU µs column and a note for its unmeasured step:\n%s", first, sections[0])
	}
	// The 2nd step's CPU in µs: 1.5 cores over the step's queries per second.
	st := run.Status.Targets[0].Steps[1]
	s := serverFixture(t, flavourMySQL80, st, true)
	want := fmt.Sprintf("| %d | %s |", st.Threads, Sig3(1.5/(s.Queries/s.Seconds)*1e6))
	if !strings.Contains(sections[0], want) {
		t.Errorf("target %s lacks the row %q:\n%s", first, want, sections[0])
	}
	if strings.Contains(sections[1], "CPU µs |") || !strings.Contains(sections[1], "CPU per query is off") {
		t.Errorf("target %s: want no CPU column and the reason:\n%s", second, sections[1])
	}
	rows := 0
	for _, line := range strings.Split(data[KeyServerCSV], "\n") {
		if strings.Contains(line, ",cpu,kubelet,mysql,4.5,1.5,") {
			rows++
		}
	}
	if want := len(run.Status.Targets[0].Steps) - 1; rows != want {
		t.Errorf("server.csv has %d cpu rows, want %d:\n%s", rows, want, data[KeyServerCSV])
	}
}
