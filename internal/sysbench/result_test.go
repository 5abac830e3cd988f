package sysbench

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// decodeStrict decodes a reporter record allowing only the Go type's fields (plus "type"), so a
// renamed field in the reporter fails here instead of reading as zero in production.
func decodeStrict(line []byte, v any) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return err
	}
	delete(raw, "type")
	clean, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(clean))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// assertReporterLines checks every JSON line the reporter printed against the Go types.
func assertReporterLines(t *testing.T, output []byte) {
	t.Helper()
	for _, line := range strings.Split(string(output), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var head struct{ Type string }
		if err := json.Unmarshal([]byte(line), &head); err != nil {
			t.Errorf("reporter printed invalid JSON %q: %v", line, err)
			continue
		}
		var err error
		switch head.Type {
		case recordInterval:
			err = decodeStrict([]byte(line), &load.Interval{})
		case recordFinal:
			err = decodeStrict([]byte(line), &load.Final{})
			if len(line) > 1024 {
				t.Errorf("final line is %d bytes; keep it under 1 KiB for the termination message", len(line))
			}
		case recordServer:
			err = decodeStrict([]byte(line), &serverstats.Snapshot{})
		case recordServerBegin:
			err = decodeStrict([]byte(line), &struct{ Version, At any }{})
		default:
			t.Errorf("reporter printed a record of unknown type %q", head.Type)
		}
		if err != nil {
			t.Errorf("reporter line does not match the Go types: %v\n%s", err, line)
		}
	}
}

// assertRunFinal checks the invariants of a run's final report.
func assertRunFinal(t *testing.T, f *load.Final, threads int32) {
	t.Helper()
	if f == nil {
		t.Fatal("no final report")
	}
	if f.Command != "run" || f.Threads != threads || f.Percentile != load.Percentile || f.Version != FormatVersion {
		t.Errorf("final = %+v, want a run at %d threads, percentile %d", f, threads, load.Percentile)
	}
	l := f.LatencyMs
	if !(0 < l.Min && l.Min <= l.Avg && l.Avg <= l.Max && l.Min <= l.Pct && l.Pct <= l.Max) {
		t.Errorf("latencies out of order: %+v", l)
	}
	if f.TPS <= 0 || f.QPS.Total <= 0 || f.Events <= 0 || f.DurationSeconds <= 0 {
		t.Errorf("final has no throughput: %+v", f)
	}
	sum := f.QPS.Read + f.QPS.Write + f.QPS.Other
	if d := sum - f.QPS.Total; d > 0.05 || d < -0.05 {
		t.Errorf("qps read+write+other = %.2f, total %.2f", sum, f.QPS.Total)
	}
	if f.Queries.Total != f.Queries.Read+f.Queries.Write+f.Queries.Other {
		t.Errorf("query counts do not add up: %+v", f.Queries)
	}
	r := f.StepResult()
	if r.Threads != threads || r.TPS != f.TPS || r.QPS != f.QPS || r.Latency.P95Ms != l.Pct ||
		r.Latency.MinMs != l.Min || r.Latency.AvgMs != l.Avg || r.Latency.MaxMs != l.Max ||
		r.DurationSeconds != f.DurationSeconds || r.Errors != f.Errors || r.Reconnects != f.Reconnects {
		t.Errorf("StepResult %+v does not carry final %+v", r, f)
	}
	if r.Attempts != 0 || r.StartTime != nil || r.FinishTime != nil {
		t.Errorf("StepResult sets times or attempts: %+v", r)
	}
}

// TestReporterCaptures runs the parser and classifier over outputs this package's reporter
// produced against a real MariaDB (testdata/reporter, captured with sysbench 1.0.20).
func TestReporterCaptures(t *testing.T) {
	type want struct {
		ok        bool
		command   string
		threads   int32
		intervals int // at least: the last per-second report is sometimes missing
		code      int
		phrase    string
		// For a ladder step: its duration (--time), and what it measured: nothing (a phrase of
		// the MeasuredNothing reason) or for longer than its duration and the tolerance.
		step    time.Duration
		nothing string
		over    bool
	}
	cases := map[string]want{
		"prepare_point_select": {ok: true, command: "prepare", threads: 4},
		"cleanup_point_select": {ok: true, command: "cleanup", threads: 1},
		"run_point_select_t4":  {ok: true, command: "run", threads: 4, intervals: 2, step: 3 * time.Second},
		"run_read_write_t2":    {ok: true, command: "run", threads: 2, intervals: 1, step: 2 * time.Second},
		// TestRealMeasured's captures: custom scripts a new user might write.
		"run_point_select_t2_normal": {ok: true, command: "run", threads: 2, intervals: 1, step: 2 * time.Second},
		"run_no_sql_t2": {ok: true, command: "run", threads: 2, intervals: 1, step: 2 * time.Second,
			nothing: "the script's event() ran no SQL through sysbench's driver"},
		"run_no_sql_long_event_t1": {ok: true, command: "run", threads: 1, intervals: 2, step: 2 * time.Second,
			nothing: "sysbench counted 1 event and 0 queries in 3.004 s (a 2s step)", over: true},
		"run_long_event_t2":     {ok: true, command: "run", threads: 2, intervals: 2, step: 2 * time.Second, over: true},
		"prepare_again_1050":    {code: 1050, phrase: "already exist"},
		"run_not_prepared_1146": {code: 1146, phrase: "not prepared"},
		"missing_script":        {phrase: "cannot find the sysbench script 'oltp_nonexistent'"},
		"bad_option":            {phrase: "invalid option: --no-such-option=1"},
	}
	files, err := filepath.Glob(filepath.Join("testdata", "reporter", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(cases) {
		t.Errorf("%d captures, %d expectations", len(files), len(cases))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txt")
		t.Run(name, func(t *testing.T) {
			w, ok := cases[name]
			if !ok {
				t.Fatalf("no expectation for capture %s", name)
			}
			output, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			rc := readRC(t, strings.TrimSuffix(file, ".txt")+".rc")
			assertReporterLines(t, output)
			g := checkGoldenStep(t, filepath.Join("reporter", name), output, rc, w.step)

			termination, terr := os.ReadFile(strings.TrimSuffix(file, ".txt") + ".termination-log")
			if !w.ok {
				if g.Failure == nil || g.Failure.Code != w.code || !strings.Contains(g.Failure.Reason, w.phrase) {
					t.Errorf("failure = %+v, want code %d saying %q", g.Failure, w.code, w.phrase)
				}
				if terr == nil {
					t.Errorf("a failed step wrote a termination message; the kubelet would not fall back to the log: %s", termination)
				}
				return
			}
			if g.Failure != nil {
				t.Fatalf("classified as failed: %+v", g.Failure)
			}
			if g.Final.Command != w.command || g.Final.Threads != w.threads || g.Intervals < w.intervals {
				t.Errorf("final %+v with %d intervals, want %s at %d threads with %d intervals",
					g.Final, g.Intervals, w.command, w.threads, w.intervals)
			}
			if w.command == "run" {
				if w.nothing == "" {
					// A step that measured nothing has none of a measurement's invariants
					// (sysbench's percentile of one 3 s event is below its minimum).
					assertRunFinal(t, g.Final, w.threads)
				}
				// Stated here, not only in the golden, so that regenerating it cannot change it.
				if n := g.Step.MeasuredNothing; (w.nothing == "") != (n == nil) || n != nil &&
					(!n.Deterministic || !strings.Contains(n.Reason, w.nothing)) {
					t.Errorf("measured nothing: %+v, want a deterministic failure saying %q", n, w.nothing)
				}
				if g.Step.OverDuration != w.over {
					t.Errorf("over duration %v for %.3f s of a %s step, want %v", g.Step.OverDuration, g.Final.DurationSeconds, w.step, w.over)
				}
			}
			// The termination message holds the same final report, well under the 4 KiB cap.
			if terr != nil {
				t.Fatalf("no termination message: %v", terr)
			}
			if len(termination) >= 1024 {
				t.Errorf("termination message is %d bytes", len(termination))
			}
			f, err := ParseTerminationMessage(string(termination))
			if err != nil {
				t.Fatal(err)
			}
			if *f != *g.Final {
				t.Errorf("termination message %+v differs from the logged final %+v", f, g.Final)
			}
		})
	}
}

func TestParseOutput(t *testing.T) {
	t.Run("interval fields", func(t *testing.T) {
		out, err := ParseOutput(strings.NewReader("noise\r\n" +
			`{"type":"interval","time":2.001,"threads":8,"threadsRunning":7,"tps":10.5,"qps":210,"readQps":140,"writeQps":40,"otherQps":30,"latencyPctMs":1.25,"errorsPerSec":0.5,"reconnectsPerSec":0.25}` + "\r\n"))
		if err != nil {
			t.Fatal(err)
		}
		want := load.Interval{Time: 2.001, Threads: 8, ThreadsRunning: 7, TPS: 10.5, QPS: 210, ReadQPS: 140, WriteQPS: 40,
			OtherQPS: 30, LatencyPctMs: 1.25, ErrorsPerSec: 0.5, ReconnectsPerSec: 0.25}
		if len(out.Intervals) != 1 || out.Intervals[0] != want {
			t.Errorf("intervals = %+v, want %+v", out.Intervals, want)
		}
	})
	t.Run("FATAL and option errors kept, text ignored", func(t *testing.T) {
		out, err := ParseOutput(strings.NewReader("sysbench 1.0.20\nFATAL: error 1045: Access denied\n" +
			"(last message repeated 2 times)\ninvalid option: --x=1\n{not json\n'foo' test does not implement the 'prepare' command.\n"))
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Fatal) != 3 || out.Final != nil || len(out.Intervals) != 0 {
			t.Errorf("output = %+v", out)
		}
	})
	t.Run("a final without a trailing newline", func(t *testing.T) {
		out, err := ParseOutput(strings.NewReader(`{"type":"final","version":1,"command":"cleanup","threads":1,"tables":4,"durationSeconds":0}`))
		if err != nil || out.Final == nil || out.Final.Tables != 4 {
			t.Errorf("output = %+v, err %v", out, err)
		}
	})
	t.Run("a line longer than the buffer", func(t *testing.T) {
		long := "FATAL: mysql_drv_query() returned error 1064 (syntax) for query '" + strings.Repeat("x", 3<<20) + "'\n"
		out, err := ParseOutput(strings.NewReader(long + `{"type":"final","version":1,"command":"run","threads":1}` + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		// Read whole (maxLine) and kept cut (load.MaxFatalLine): a step's reason quotes its start.
		if len(out.Fatal) != 1 || len(out.Fatal[0]) != load.MaxFatalLine || !strings.HasPrefix(out.Fatal[0], "FATAL: mysql_drv_query() returned error 1064") ||
			!strings.HasSuffix(out.Fatal[0], "...") || out.Final == nil {
			t.Errorf("fatal %d lines (first %d bytes), final %v", len(out.Fatal), len(out.Fatal[0]), out.Final)
		}
	})
	for name, bad := range map[string]string{
		"wrong version":    `{"type":"final","version":2,"command":"run"}`,
		"no command":       `{"type":"final","version":1}`,
		"mistyped field":   `{"type":"final","version":1,"command":"run","threads":"eight"}`,
		"mistyped series":  `{"type":"interval","tps":"fast"}`,
		"truncated record": `{"type":"final","version":1,"command":"run","tps":`,
	} {
		t.Run("rejects "+name, func(t *testing.T) {
			if name == "truncated record" {
				// Not JSON at all: human text, ignored, and then there is no final.
				out, err := ParseOutput(strings.NewReader(bad))
				if err != nil || out.Final != nil {
					t.Errorf("output %+v, err %v", out, err)
				}
				return
			}
			if _, err := ParseOutput(strings.NewReader(bad + "\n")); err == nil {
				t.Errorf("accepted %s", bad)
			}
		})
	}
}

func TestParseOutputServer(t *testing.T) {
	// What the reporter prints around a run whose account lacks PROCESS, against MySQL 9.7:
	// the driver's FATAL line for the refused query (without the query: MySQL refuses while
	// sending the result), then the snapshot saying so. Counts beyond 2^53 must stay exact.
	log := "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\n" +
		`{"type":"serverBegin","version":1,"at":"start"}` + "\n" +
		"FATAL: mysql_store_result() returned error 1227 (Access denied; you need (at least one of) the PROCESS " +
		"privilege(s) for this operation)\n" +
		`{"type":"server","version":1,"at":"start","unixTime":1763800000.123456,"durationMs":1.5,"server":"10.11.19-MariaDB",` +
		`"status":{"Questions":9007199254740993,"Bytes_sent":18446744073709551615},"performanceSchema":true,` +
		`"waits":[["wait/synch/mutex/innodb/buf_pool_mutex",3,9007199254740993],["wait/io/file/sql/FRM",0,0]],` +
		`"errors":["innodbMetrics: SQL error, errno = 1227"]}` + "\n" +
		`{"type":"final","version":1,"command":"run","threads":1,"percentile":95,"durationSeconds":1,"events":1,"tps":1,` +
		`"qps":{"total":1,"read":1,"write":0,"other":0},"queries":{"total":1,"read":1,"write":0,"other":0},` +
		`"latencyMs":{"min":1,"avg":1,"pct":1,"max":1,"sum":1},"errors":0,"reconnects":0}` + "\n" +
		`{"type":"serverBegin","version":1,"at":"end"}` + "\n" +
		"FATAL: mysql_drv_query() returned error 1142 (SELECT command denied) for query '/* mysqlbench:server-stats */ SELECT 1'\n" +
		`{"type":"server","version":1,"at":"end","unixTime":1763800001.5,"durationMs":0.9,"status":{},"innodbMetrics":{"log_waits":0},` +
		`"performanceSchema":false,"errors":[]}` + "\n"
	out, err := ParseOutput(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if f := Classify(0, out); f != nil {
		t.Errorf("a refused snapshot query failed the step: %+v", f)
	}
	if len(out.Fatal) != 0 || len(out.ServerErrors) != 0 || len(out.Server) != 2 {
		t.Fatalf("fatal %q, server errors %q, %d snapshots", out.Fatal, out.ServerErrors, len(out.Server))
	}
	start, end := out.Server[0], out.Server[1]
	want := serverstats.Snapshot{Version: 1, At: serverstats.AtStart, UnixTime: 1763800000.123456, DurationMs: 1.5, Server: "10.11.19-MariaDB",
		Status:            map[string]uint64{"Questions": 1<<53 + 1, "Bytes_sent": math.MaxUint64},
		PerformanceSchema: true,
		Waits: []serverstats.WaitTotal{{Event: "wait/synch/mutex/innodb/buf_pool_mutex", Count: 3, SumTimerWait: 1<<53 + 1},
			{Event: "wait/io/file/sql/FRM"}},
		Errors: []string{"innodbMetrics: SQL error, errno = 1227"}}
	if !reflect.DeepEqual(start, want) {
		t.Errorf("start\n%+v\nwant\n%+v", start, want)
	}
	if end.At != serverstats.AtEnd || end.Status == nil || len(end.Status) != 0 || end.InnoDBMetrics["log_waits"] != 0 ||
		end.Waits != nil || end.PerformanceSchema || len(end.Errors) != 0 {
		t.Errorf("end %+v: want an empty status read, log_waits 0, no waits", end)
	}
	// The Go form writes the reporter's form back, exactly.
	b, err := json.Marshal(start.Waits)
	if err != nil || string(b) != `[["wait/synch/mutex/innodb/buf_pool_mutex",3,9007199254740993],["wait/io/file/sql/FRM",0,0]]` {
		t.Errorf("waits marshal to %s (%v)", b, err)
	}

	t.Run("which error lines are the snapshot's", func(t *testing.T) {
		begin := func(at string) string { return `{"type":"serverBegin","version":1,"at":"` + at + `"}` + "\n" }
		server := func(at string) string {
			return `{"type":"server","version":1,"at":"` + at + `","unixTime":1,"performanceSchema":false}` + "\n"
		}
		final := `{"type":"final","version":1,"command":"run","threads":1}` + "\n"
		snapshotErr := "FATAL: mysql_store_result() returned error 1227 (Access denied)\n"
		stepErr := "FATAL: MySQL error: 1146 \"Table 'sbtest.sbtest1' doesn't exist\"\n"
		for name, tc := range map[string]struct {
			log      string
			wantCode int // of the first error line kept; 0: none kept
		}{
			"within the start snapshot":  {begin("start") + snapshotErr + server("start") + final, 0},
			"within the end snapshot":    {begin("start") + server("start") + final + begin("end") + snapshotErr + server("end"), 0},
			"a log tail without a begin": {"ivileges)\n" + snapshotErr + server("start") + stepErr, 1146},
			"after the start snapshot":   {begin("start") + snapshotErr + server("start") + stepErr, 1146},
			"sysbench died during it":    {begin("end") + stepErr, 1146},
			"died before its report":     {begin("start") + stepErr + `{"type":"interval","time":1}` + "\n", 1146},
			"not within a snapshot":      {final + stepErr + begin("end") + server("end"), 1146},
		} {
			t.Run(name, func(t *testing.T) {
				out, err := ParseOutput(strings.NewReader(tc.log))
				if err != nil {
					t.Fatal(err)
				}
				code, _, _ := mysqlError(out.Fatal)
				if code != tc.wantCode || (tc.wantCode == 0) != (len(out.Fatal) == 0) {
					t.Errorf("kept %q, want error %d", out.Fatal, tc.wantCode)
				}
			})
		}
	})

	t.Run("malformed server lines are reported, not fatal", func(t *testing.T) {
		final := `{"type":"final","version":1,"command":"cleanup","threads":1,"tables":4,"durationSeconds":0}`
		for name, bad := range map[string]string{
			"wrong version":     `{"type":"server","version":2,"at":"start","unixTime":1,"performanceSchema":false}`,
			"no at":             `{"type":"server","version":1,"unixTime":1,"performanceSchema":false}`,
			"unknown at":        `{"type":"server","version":1,"at":"middle","unixTime":1}`,
			"float count":       `{"type":"server","version":1,"at":"end","unixTime":1,"status":{"Questions":1.5}}`,
			"negative count":    `{"type":"server","version":1,"at":"end","unixTime":1,"status":{"Questions":-1}}`,
			"count beyond 2^64": `{"type":"server","version":1,"at":"end","unixTime":1,"status":{"Questions":18446744073709551616}}`,
			"count as a string": `{"type":"server","version":1,"at":"end","unixTime":1,"innodbMetrics":{"log_waits":"1"}}`,
			"short wait":        `{"type":"server","version":1,"at":"end","unixTime":1,"waits":[["wait/x",1]]}`,
			"wait not an array": `{"type":"server","version":1,"at":"end","unixTime":1,"waits":[{"event":"wait/x"}]}`,
			"wait count float":  `{"type":"server","version":1,"at":"end","unixTime":1,"waits":[["wait/x",1e3,1]]}`,
		} {
			t.Run(name, func(t *testing.T) {
				out, err := ParseOutput(strings.NewReader("noise\n" + bad + "\n" + final + "\n"))
				if err != nil {
					t.Fatalf("a bad server line failed the output: %v", err)
				}
				if len(out.Server) != 0 || len(out.ServerErrors) != 1 || !strings.HasPrefix(out.ServerErrors[0], "line 2: ") {
					t.Errorf("server %+v, errors %q", out.Server, out.ServerErrors)
				}
				if out.Final == nil || Classify(0, out) != nil {
					t.Errorf("the step's result suffered: final %+v", out.Final)
				}
			})
		}
	})
}

// TestServerCaptures reads the server snapshots of real runs against MySQL 9.7 (testdata/server):
// what MySQL has and lacks, and that refused snapshot queries never decide a step.
func TestServerCaptures(t *testing.T) {
	read := func(t *testing.T, name string) ([]byte, load.Output) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("testdata", "server", name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		assertReporterLines(t, b)
		out, err := ParseOutput(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if len(out.ServerErrors) != 0 {
			t.Errorf("unreadable server lines: %q", out.ServerErrors)
		}
		return b, out
	}
	mysqlLacks := []string{"Rows_read", "Innodb_lsn_current"}
	mysqlDisabled := []string{"buffer_flush_batch_total_pages", "buffer_LRU_batch_flush_total_pages",
		"trx_rw_commits", "trx_ro_commits", "trx_nl_ro_commits", "trx_rollbacks", "dml_reads"}

	for name, grants := range map[string]bool{"mysql97_read_write": true, "mysql97_read_write_no_grants": false} {
		t.Run(name, func(t *testing.T) {
			log, out := read(t, name)
			if f := Classify(0, out); f != nil {
				t.Fatalf("classified as failed: %+v", f)
			}
			if !grants && !bytes.Contains(log, []byte("FATAL: mysql_store_result() returned error 1227")) {
				t.Errorf("the capture lacks the refusal it is about")
			}
			start, end, err := serverstats.Pair(out.Server)
			if err != nil {
				t.Fatal(err)
			}
			st, err := serverstats.Delta(start, end, float64(out.Final.Queries.Total), 5)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(st.MissingStatus, mysqlLacks) || start.Server != "9.7.4-2" || !st.PerformanceSchema {
				t.Errorf("server %q lacks %v (performance_schema %v), want %v", start.Server, st.MissingStatus, st.PerformanceSchema, mysqlLacks)
			}
			if grants {
				if len(st.Errors) != 0 || !slices.Equal(st.MissingInnoDBMetrics, mysqlDisabled) || len(st.Waits) != 5 {
					t.Errorf("errors %q, metrics missing %v, %d waits", st.Errors, st.MissingInnoDBMetrics, len(st.Waits))
				}
			} else if len(st.Errors) != 4 || st.MissingInnoDBMetrics != nil || st.Waits != nil {
				t.Errorf("errors %q, metrics missing %v, waits %v", st.Errors, st.MissingInnoDBMetrics, st.Waits)
			}
			// oltp_read_write: 20 statements a transaction (BEGIN, 14 SELECTs, 2 UPDATEs, a
			// DELETE, an INSERT, COMMIT).
			for name, want := range map[string]float64{"Questions": 1, "Com_select": 14.0 / 20, "Com_commit": 1.0 / 20} {
				if c := counterOf(st, name); c.PerQuery < want*0.99 || c.PerQuery > want*1.01 {
					t.Errorf("%s per query %.4f, want %.4f", name, c.PerQuery, want)
				}
			}
		})
	}

	t.Run("mysql97_not_prepared_no_grants", func(t *testing.T) {
		log, out := read(t, "mysql97_not_prepared_no_grants")
		// sysbench never calls done() when thread_init fails: a start snapshot only.
		if len(out.Server) != 1 || out.Server[0].At != serverstats.AtStart {
			t.Errorf("snapshots %+v", out.Server)
		}
		// The step's failure is 1146, not the 1227 the snapshot met first; from the log and
		// from the kubelet's tail of it.
		if f := Classify(1, out); f == nil || f.Code != 1146 {
			t.Errorf("classified as %+v, want 1146", f)
		}
		tail, err := ParseOutput(strings.NewReader(kubeletLogTail(log)))
		if err != nil {
			t.Fatal(err)
		}
		if f := Classify(1, tail); f == nil || f.Code != 1146 {
			t.Errorf("log tail classified as %+v, want 1146", f)
		}
	})
}

func counterOf(st serverstats.Step, name string) serverstats.Counter {
	for _, c := range st.Counters {
		if c.Name == name {
			return c
		}
	}
	return serverstats.Counter{}
}

// TestReporterServerLists checks that the reporter reads exactly the bounded sets serverstats
// documents.
func TestReporterServerLists(t *testing.T) {
	src := ReporterScript()
	for table, want := range map[string][]string{"SERVER_STATUS": serverstats.StatusNames, "INNODB_METRICS": serverstats.InnoDBMetricNames} {
		start := strings.Index(src, "local "+table+" = {")
		if start < 0 {
			t.Fatalf("reporter has no %s table", table)
		}
		body := src[start:]
		body = body[:strings.Index(body, "}")]
		var got []string
		for _, m := range regexp.MustCompile(`"([A-Za-z_]+)"`).FindAllStringSubmatch(body, -1) {
			got = append(got, m[1])
		}
		if !slices.Equal(got, want) {
			t.Errorf("reporter's %s\n%q\nGo's\n%q", table, got, want)
		}
	}
}

func TestParseTerminationMessage(t *testing.T) {
	if _, err := ParseTerminationMessage(""); err == nil {
		t.Error("empty message accepted")
	}
	// What the kubelet puts there for a failed container with FallbackToLogsOnError.
	tail := "FATAL: error 1045: Access denied for user 'sbtest'@'10.0.0.7' (using password: YES)\n"
	if _, err := ParseTerminationMessage(tail); err == nil {
		t.Error("log tail accepted as a result")
	}
	out, err := ParseOutput(strings.NewReader(tail))
	if err != nil {
		t.Fatal(err)
	}
	if f := Classify(1, out); f == nil || f.Code != 1045 {
		t.Errorf("log tail classified as %+v", f)
	}
}

func TestClassify(t *testing.T) {
	final := &load.Final{Version: 1, Command: "run", Threads: 4}
	tests := []struct {
		name   string
		exit   int32
		out    load.Output
		ok     bool
		code   int
		phrase string
	}{
		{"success", 0, load.Output{Final: final}, true, 0, ""},
		{"no final", 0, load.Output{}, false, 0, "without a final report"},
		{"abort at the end", 134, load.Output{Intervals: make([]load.Interval, 5)}, false, 0, "exited with code 134 (aborted, SIGABRT) without a final report"},
		{"segfault", 139, load.Output{}, false, 0, "crashed, SIGSEGV"},
		{"oom kill", 137, load.Output{}, false, 0, "memory limit"},
		{"no sysbench in the image", 127, load.Output{}, false, 0, "not found in the image"},
		{"non-zero after the final", 2, load.Output{Final: final}, false, 0, "after its final report"},
		{"errors despite exit 0", 0, load.Output{Final: final, Fatal: []string{"FATAL: `thread_done' function failed: boom"}}, false, 0, "boom"},
		{"reporter problem", 1, load.Output{Fatal: []string{"FATAL: mysqlbench reporter: cannot write the result to /dev/termination-log: Permission denied"}}, false, 0, "cannot write the result"},
		{"generic lines skipped for the specific one", 1, load.Output{Fatal: []string{
			"FATAL: Thread initialization failed!", "FATAL: `thread_init' function failed: x.lua:3: attempt to call nil"}}, false, 0, "attempt to call nil"},
		{"unknown database", 1, load.Output{Fatal: []string{"FATAL: error 1049: Unknown database 'nope'"}}, false, 1049, "unknown database"},
		{"auth plugin", 1, load.Output{Fatal: []string{"FATAL: error 2059: Authentication plugin 'caching_sha2_password' cannot be loaded"}}, false, 2059, "mysql_native_password"},
		{"unknown code keeps the text", 1, load.Output{Fatal: []string{"FATAL: error 1227: Access denied; you need the SUPER privilege"}}, false, 1227, "error 1227: Access denied; you need the SUPER privilege"},
		{"first code wins", 1, load.Output{Fatal: []string{
			"FATAL: mysql_stmt_execute() returned error 2013 (Lost connection to server during query) for query 'SELECT 1'",
			"FATAL: error 2002: Can't connect"}}, false, 2013, "lost connection"},
		// Whoever shows a reason redacts it first and cuts it after (MaxReason).
		{"long reasons are kept whole", 1, load.Output{Fatal: []string{"FATAL: " + strings.Repeat("é", 600)}}, false, 0, strings.Repeat("é", 600)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := Classify(tc.exit, tc.out)
			if tc.ok {
				if f != nil {
					t.Fatalf("failed: %+v", f)
				}
				return
			}
			if f == nil {
				t.Fatal("classified as success")
			}
			if f.Code != tc.code || !strings.Contains(f.Reason, tc.phrase) {
				t.Errorf("failure = %+v, want code %d saying %q", f, tc.code, tc.phrase)
			}
			if !utf8.ValidString(f.Reason) {
				t.Errorf("reason is not valid UTF-8")
			}
		})
	}
}
