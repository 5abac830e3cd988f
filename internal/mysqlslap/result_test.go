package mysqlslap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// The golden outputs were captured from real runs of Build's launcher (testdata/capture.sh)
// against MariaDB 10.11.19 with its mariadb-slap, and MySQL 9.7.4 with its mysqlslap: the pod
// log (.log) and the termination message the launcher wrote (.term).
var goldens = []struct {
	name     string
	exitCode int32
	// code and phrase are Classify's verdict; code -1 means success.
	code   int
	phrase string
}{
	{"ok", 0, -1, ""},
	{"stats", 0, -1, ""},
	{"no-stats-grants", 0, -1, ""},
	{"access-denied", 1, 1045, "check user and password"},
	{"no-grant", 1, 1044, "access denied to the schema mysqlslap"},
	{"no-insert", 1, 1142, "INSERT command denied"},
	{"bad-query", 0, 1064, "SQL syntax error"},
	{"bad-option", 7, 0, "mysqlslap rejected an option (check workload.mysqlslap.args)"},
	{"unknown-host", 1, 2005, "unknown server host"},
	{"refused", 1, 2003, "cannot connect to the server"},
}

var flavours = []string{"mariadb-10.11", "mysql-9.7"}

func readGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseOutputAndClassifyGoldens(t *testing.T) {
	for _, flavour := range flavours {
		for _, g := range goldens {
			t.Run(flavour+"/"+g.name, func(t *testing.T) {
				for _, source := range []string{".log", ".term"} {
					text := readGolden(t, flavour+"-"+g.name+source)
					if source == ".term" && len(text) >= 4096 {
						t.Errorf("termination message of %d bytes: the kubelet keeps 4096", len(text))
					}
					out, err := ParseOutput(strings.NewReader(text))
					if err != nil {
						t.Fatalf("%s: %v", source, err)
					}
					if len(out.ServerErrors) > 0 {
						t.Errorf("%s: server errors %q", source, out.ServerErrors)
					}
					f := Classify(g.exitCode, out)
					if g.code == -1 {
						if f != nil {
							t.Fatalf("%s: classified as %+v, want success", source, f)
						}
						assertFinal(t, out.Final)
						continue
					}
					if f == nil {
						t.Fatalf("%s: classified as success, want error %d", source, g.code)
					}
					if f.Code != g.code || !strings.Contains(f.Reason, g.phrase) {
						t.Errorf("%s: classified as %+v, want code %d saying %q", source, f, g.code, g.phrase)
					}
					if strings.Contains(f.Reason, "(the query is in the pod log)") == (source == ".log") && g.name == "bad-query" {
						t.Errorf("%s: reason %q", source, f.Reason)
					}
				}
			})
		}
	}
}

// assertFinal checks a successful step's report: the QPS definition and the zeros.
func assertFinal(t *testing.T, f *load.Final) {
	t.Helper()
	if f == nil {
		t.Fatal("no final report")
	}
	if f.Command != "run" || f.Threads < 1 || f.Queries.Total < 1 || f.DurationSeconds <= 0 || f.Sysbench != "" {
		t.Errorf("final %+v", f)
	}
	if want := float64(f.Queries.Total) / f.DurationSeconds; f.QPS.Total != want {
		t.Errorf("QPS %v, want queries/avg seconds = %v", f.QPS.Total, want)
	}
	if f.TPS != 0 || f.LatencyMs != (load.LatencyMs{}) || f.QPS.Read != 0 || f.Errors != 0 {
		t.Errorf("final %+v: mysqlslap measures no TPS, latency or split", f)
	}
}

func TestParseOutputReport(t *testing.T) {
	out, err := ParseOutput(strings.NewReader(readGolden(t, "mariadb-10.11-ok.log")))
	if err != nil {
		t.Fatal(err)
	}
	// The golden run: 4 clients, 2000 queries, average 0.118 s.
	if f := out.Final; f.Threads != 4 || f.Queries.Total != 2000 {
		t.Errorf("final %+v, want 4 clients with 500 queries each", f)
	}
	step := out.Final.StepResult()
	if step.Threads != 4 || step.QPS.Total != out.Final.QPS.Total || step.DurationSeconds != out.Final.DurationSeconds {
		t.Errorf("step result %+v", step)
	}

	for name, tc := range map[string]struct {
		text, err string
		final     bool
	}{
		"two engines": {text: "Benchmark\n\tRunning for engine innodb\n\tAverage number of seconds to run all queries: 0.010 seconds\n" +
			"\tNumber of clients running queries: 2\n\tAverage number of queries per client: 5\n\n" +
			"Benchmark\n\tRunning for engine myisam\n\tAverage number of seconds to run all queries: 0.010 seconds\n",
			err: "2 Benchmark reports"},
		"cut off": {text: "Benchmark\n\tAverage number of seconds to run all queries: 0.010 seconds\n"},
		"bad seconds": {text: "Benchmark\n\tAverage number of seconds to run all queries: 0.01 seconds\n",
			err: "three decimals"},
		"engine line": {text: "Benchmark\n\tRunning for engine innodb\n\tAverage number of seconds to run all queries: 1.500 seconds\n" +
			"\tMinimum number of seconds to run all queries: 1.400 seconds\n\tNumber of clients running queries: 3\n" +
			"\tAverage number of queries per client: 100\n", final: true},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := ParseOutput(strings.NewReader(tc.text))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (out.Final != nil) != tc.final {
				t.Fatalf("final %+v, want one: %v", out.Final, tc.final)
			}
			if tc.final && (out.Final.QPS.Total != 200 || out.Final.DurationSeconds != 1.5 || out.Final.Queries.Total != 300) {
				t.Errorf("final %+v: want 300 queries in 1.5 s, 200 qps", out.Final)
			}
		})
	}
}

func TestParseOutputSnapshots(t *testing.T) {
	for _, flavour := range flavours {
		t.Run(flavour, func(t *testing.T) {
			out, err := ParseOutput(strings.NewReader(readGolden(t, flavour+"-stats.log")))
			if err != nil {
				t.Fatal(err)
			}
			start, end, err := serverstats.Pair(out.Server)
			if err != nil {
				t.Fatal(err)
			}
			ps := flavour == "mysql-9.7" // MariaDB's default is OFF, MySQL's ON
			for _, s := range []serverstats.Snapshot{start, end} {
				if len(s.Errors) != 0 || s.Version != sysbench.FormatVersion || s.Server == "" ||
					s.PerformanceSchema != ps || (s.Waits != nil) != ps || len(s.Status) < 30 || len(s.InnoDBMetrics) < 10 {
					t.Errorf("%s snapshot: %d status, %d metrics, %d waits, ps %v, server %q, errors %q",
						s.At, len(s.Status), len(s.InnoDBMetrics), len(s.Waits), s.PerformanceSchema, s.Server, s.Errors)
				}
				if s.DurationMs <= 0 || s.DurationMs > 5000 || s.UnixTime < 1.7e9 {
					t.Errorf("%s snapshot at %.6f took %.3f ms", s.At, s.UnixTime, s.DurationMs)
				}
			}
			st, err := serverstats.Delta(start, end, float64(out.Final.Queries.Total), 5)
			if err != nil {
				t.Fatal(err)
			}
			questions := end.Status["Questions"] - start.Status["Questions"]
			if questions < uint64(out.Final.Queries.Total) {
				t.Errorf("Questions +%d over %d queries", questions, out.Final.Queries.Total)
			}
			if st.Seconds < out.Final.DurationSeconds || len(st.Counters) < 20 || (len(st.Waits) > 0) != ps {
				t.Errorf("step %.3f s (mysqlslap %.3f s), %d counters, %d waits", st.Seconds, out.Final.DurationSeconds,
					len(st.Counters), len(st.Waits))
			}
			// The termination message has the result and no snapshot: they are in the log only.
			term, err := ParseOutput(strings.NewReader(readGolden(t, flavour+"-stats.term")))
			if err != nil || term.Final == nil || *term.Final != *out.Final || len(term.Server) != 0 {
				t.Errorf("termination message: %+v, %v", term, err)
			}
		})
	}

	t.Run("without the snapshot grants", func(t *testing.T) {
		for _, flavour := range flavours {
			out, err := ParseOutput(strings.NewReader(readGolden(t, flavour+"-no-stats-grants.log")))
			if err != nil {
				t.Fatal(err)
			}
			start, end, err := serverstats.Pair(out.Server)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"innodbMetrics: ERROR 1227 (42000) at line 1: Access denied; you need (at least one of) the PROCESS privilege(s)"}
			if flavour == "mysql-9.7" {
				want = append(want, "waits: ERROR 1142 (42000) at line 1: SELECT command denied to user 'bare'")
			}
			for _, s := range []serverstats.Snapshot{start, end} {
				if len(s.Errors) != len(want) {
					t.Errorf("%s %s errors %q, want %q", flavour, s.At, s.Errors, want)
					continue
				}
				for i := range want {
					if !strings.HasPrefix(s.Errors[i], want[i]) {
						t.Errorf("%s %s error %q, want %q...", flavour, s.At, s.Errors[i], want[i])
					}
				}
				if s.Status == nil || s.InnoDBMetrics != nil || s.Waits != nil {
					t.Errorf("%s %s: want status only", flavour, s.At)
				}
			}
		}
	})

	for name, tc := range map[string]struct {
		text      string
		snapshots int
		errs      string
	}{
		"no end line": {text: "mysqlbench-server-begin start\nmysqlbench-server-clock begin 1700000000.123456789\n", errs: "no end line"},
		"whole seconds": {text: "mysqlbench-server-begin start\nmysqlbench-server-clock begin 1700000000.%N\n" +
			"mysqlbench-server-section status\nQuestions\t18446744073709551615\nmysqlbench-server-end start\n", snapshots: 1},
		"no date": {text: "mysqlbench-server-begin start\nmysqlbench-server-end start\n", errs: "no time"},
		"client missing": {text: "mysqlbench-server-begin end\nmysqlbench-server-clock begin 1700000000.5\n" +
			"mysqlbench-server-error client: the image has neither mariadb nor mysql\nmysqlbench-server-end end\n", snapshots: 1},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := ParseOutput(strings.NewReader(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Server) != tc.snapshots || (tc.errs == "") != (len(out.ServerErrors) == 0) ||
				tc.errs != "" && !strings.Contains(strings.Join(out.ServerErrors, "\n"), tc.errs) {
				t.Errorf("snapshots %+v, errors %q", out.Server, out.ServerErrors)
			}
			if name == "whole seconds" {
				if s := out.Server[0]; s.UnixTime != 1700000000 || s.Status["Questions"] != 18446744073709551615 {
					t.Errorf("snapshot %+v", s)
				}
			}
		})
	}
}

func TestClassify(t *testing.T) {
	ok := &load.Final{Command: "run", Threads: 2, DurationSeconds: 0.5, Queries: load.Counts{Total: 100}}
	for name, tc := range map[string]struct {
		exit   int32
		out    load.Output
		code   int
		phrase string
		// deterministic: not retried, another attempt would measure nothing too.
		deterministic bool
	}{
		"success":       {exit: 0, out: load.Output{Final: ok}, code: -1},
		"killed":        {exit: 137, out: load.Output{}, phrase: "SIGKILL"},
		"exit 0 no rep": {exit: 0, out: load.Output{}, phrase: "without its Benchmark report"},
		"too fast": {exit: 0, out: load.Output{Final: &load.Final{Threads: 2, Queries: load.Counts{Total: 4}}},
			phrase: "under a millisecond", deterministic: true},
		"no queries": {exit: 0, out: load.Output{Final: &load.Final{Threads: 4, DurationSeconds: 0.01}},
			phrase: "measured nothing: mysqlslap ran no queries (4 clients, 0 each, in 0.010 s)", deterministic: true},
		"launcher": {exit: 1, out: load.Output{Fatal: []string{"FATAL: the image has neither mysqlslap nor mariadb-slap on its PATH: set workload.mysqlslap.image"}},
			phrase: "set workload.mysqlslap.image"},
		"explicit code": {exit: 0, out: load.Output{Final: ok, Fatal: []string{"mysqlslap: Error when connecting to server: 1049 Unknown database 'mysqlslap'"}},
			code: 1049, phrase: "unknown database"},
		"too many connections": {exit: 0, out: load.Output{Final: ok, Fatal: []string{"mariadb-slap: Error when connecting to server: Too many connections"}},
			code: 1040, phrase: "max_connections"},
		"unknown code": {exit: 0, out: load.Output{Final: ok, Fatal: []string{"mysqlslap: Error when connecting to server: 3159 Connections using insecure transport are prohibited"}},
			code: 3159, phrase: "insecure transport"},
	} {
		t.Run(name, func(t *testing.T) {
			f := Classify(tc.exit, tc.out)
			if tc.code == -1 {
				if f != nil {
					t.Fatalf("failure %+v, want success", f)
				}
				return
			}
			if f == nil || f.Code != tc.code || !strings.Contains(f.Reason, tc.phrase) || f.Deterministic != tc.deterministic {
				t.Errorf("Classify = %+v, want code %d saying %q, deterministic %v", f, tc.code, tc.phrase, tc.deterministic)
			}
		})
	}
}

func TestParseOutputErrorLines(t *testing.T) {
	out, err := ParseOutput(strings.NewReader("mysqlslap: [Warning] Using a password on the command line interface can be insecure.\n" +
		"mysqlslap: Deprecated program name. It will be removed in a future release, use '/usr/bin/mariadb-slap' instead\n" +
		"/usr/bin/mysqlslap: Error when connecting to server: Unknown MySQL server host 'x' (-2)\n" +
		"FATAL: cannot read the connection password\n" +
		"some other text\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/usr/bin/mysqlslap: Error when connecting to server: Unknown MySQL server host 'x' (-2)",
		"FATAL: cannot read the connection password"}
	if strings.Join(out.Fatal, "\n") != strings.Join(want, "\n") {
		t.Errorf("fatal %q, want %q", out.Fatal, want)
	}
}

// A termination message whose error lines did not fit (the launcher keeps at most 2000 bytes
// of them, none over 1000) still fails the step: its marker line is an error line (review
// finding: an error line of 1000 bytes or more alone was dropped, and the Benchmark block passed).
func TestLeftOutErrorLinesFailTheStep(t *testing.T) {
	msg := "mysqlslap: more error lines, or longer ones, are in the pod log\nBenchmark\n" +
		"\tAverage number of seconds to run all queries: 0.944 seconds\n" +
		"\tMinimum number of seconds to run all queries: 0.944 seconds\n" +
		"\tMaximum number of seconds to run all queries: 0.944 seconds\n" +
		"\tNumber of clients running queries: 4\n\tAverage number of queries per client: 500\n"
	out, err := ParseOutput(strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	if f := Classify(0, out); f == nil || !strings.Contains(f.Reason, "pod log") {
		t.Errorf("Classify = %v, want a failure pointing at the pod log", f)
	}
}
