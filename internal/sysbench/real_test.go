package sysbench

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/testmariadb"
)

// A custom script as a user would put it in a ConfigMap: it reuses the stock OLTP helpers and
// runs a point select plus a range select per event, so its QPS is twice its TPS.
const customScript = `require("oltp_common")

function prepare_statements()
   sysbench.opt.point_selects = 1
   sysbench.opt.simple_ranges = 1
   prepare_point_selects()
   prepare_simple_ranges()
end

function event()
   execute_point_selects()
   execute_simple_ranges()
end
`

// TestReal runs the builder's exact invocations against a private MariaDB: prepare, a 3-step
// ladder, a custom script, cleanup, and the failures a user meets, each classified.
func TestReal(t *testing.T) {
	if testing.Short() {
		t.Skip("real sysbench runs skipped in -short mode")
	}
	tools := lookTools(t)
	db := testmariadb.Start(t, tools)
	// A password with what the option file must carry verbatim: blanks at both ends, #, =, a
	// comma, a single quote, a backslash and a $( the kubelet would expand.
	password := specialPassword(t)
	// The account as the server images' entrypoints create it, then narrowed to what sysbench
	// needs, as the builtin engine's init script does: every step below runs with no more.
	db.MustSQL(t, "CREATE DATABASE sbtest; CREATE DATABASE sbempty;"+
		"CREATE USER sbtest@'%' IDENTIFIED BY "+sqlLiteral(password)+";"+
		"GRANT ALL ON sbtest.* TO sbtest@'%'; GRANT ALL ON sbempty.* TO sbtest@'%';")
	db.MustSQL(t, GrantSQL("sbtest", "%", "sbtest")+GrantSQL("sbtest", "%", "sbempty"))
	if grants := db.MustSQL(t, "SHOW GRANTS FOR sbtest@'%'"); strings.Contains(grants, "ALL PRIVILEGES") {
		t.Fatalf("the grant script left ALL PRIVILEGES:\n%s", grants)
	}
	// No database key: the launcher's default (sbtest) applies.
	secret := dbSecret(db, password)
	c := newContainer(t, map[string]string{"two_selects.lua": customScript})
	w := v1alpha1.Workload{Script: "oltp_point_select", Tables: 4, TableSize: 2000}

	build := func(t *testing.T, w v1alpha1.Workload, step load.Step) load.Invocation {
		t.Helper()
		inv, err := Build(w, testSecret, step)
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		return inv
	}
	// succeed runs a step that must succeed and checks what every successful step must give.
	succeed := func(t *testing.T, w v1alpha1.Workload, step load.Step, command string) load.Output {
		t.Helper()
		return succeeded(t, c, c.run(t, build(t, w, step), secret), step, command, password)
	}
	// fail runs a step that must fail with MySQL error code (0: none), classified from the log
	// and, as the operator would with FallbackToLogsOnError, with no termination message written.
	fail := func(t *testing.T, w v1alpha1.Workload, step load.Step, secret map[string]string, code int, phrase string) {
		t.Helper()
		r := c.run(t, build(t, w, step), secret)
		assertNoLeak(t, r, password)
		assertNoLeak(t, r, secret[SecretKeyPassword])
		if r.termination != "" {
			t.Errorf("failed step wrote a termination message %q; the kubelet would not fall back to the log", r.termination)
		}
		out, err := ParseOutput(bytes.NewReader(r.log))
		if err != nil {
			t.Fatal(err)
		}
		f := Classify(r.exitCode, out)
		if f == nil {
			t.Fatalf("classified as success (exit %d)\n%s", r.exitCode, r.log)
		}
		if r.exitCode == 0 {
			t.Errorf("failed step exited 0")
		}
		if f.Code != code || !strings.Contains(f.Reason, phrase) {
			t.Errorf("classified as %+v, want code %d saying %q\n%s", f, code, phrase, r.log)
		}
		// What the operator sees without log access: the kubelet's log tail in the
		// termination message.
		tailOut, err := ParseOutput(strings.NewReader(kubeletLogTail(r.log)))
		if err != nil {
			t.Fatal(err)
		}
		if tf := Classify(r.exitCode, tailOut); tf == nil || tf.Code != code {
			t.Errorf("from the termination message's log tail: %+v, want code %d", tf, code)
		}
	}

	t.Run("probe", func(t *testing.T) {
		out := succeed(t, w, load.Step{Phase: load.PhaseProbe}, "probe")
		if want := db.MustSQL(t, "SELECT VERSION()"); out.Final.Server != want || want == "" {
			t.Errorf("probe reported server %q, want %q", out.Final.Server, want)
		}
		if out.Final.Tables != 0 {
			t.Errorf("probe found %d sbtest tables before prepare, want 0", out.Final.Tables)
		}
	})

	t.Run("probe with a wrong password", func(t *testing.T) {
		fail(t, w, load.Step{Phase: load.PhaseProbe}, dbSecret(db, randomPassword(t)), 1045, "access denied")
	})

	t.Run("passwords the option file holds", func(t *testing.T) {
		for name, pw := range map[string]string{
			"double quotes":    `has "double" quotes, no single ones ` + randomPassword(t),
			"238 bytes":        strings.Repeat("#x", MaxPasswordBytes/2),
			"UTF-8":            "pässwörd-€-" + randomPassword(t),
			"tab and CR":       "tab\there\rcr-" + randomPassword(t),
			"a kubelet $(VAR)": "$(MYSQLBENCH_USER)$$(x)" + randomPassword(t),
			"empty":            "",
		} {
			t.Run(name, func(t *testing.T) {
				db.MustSQL(t, "DROP USER IF EXISTS pwtest@'%'; CREATE USER pwtest@'%' IDENTIFIED BY "+sqlLiteral(pw)+";"+
					"GRANT ALL ON sbtest.* TO pwtest@'%';"+GrantSQL("pwtest", "%", "sbtest"))
				s := dbSecret(db, pw)
				s[SecretKeyUser] = "pwtest"
				r := c.run(t, build(t, w, load.Step{Phase: load.PhaseProbe}), s)
				succeeded(t, c, r, load.Step{Phase: load.PhaseProbe}, "probe", pw)
			})
		}
	})

	t.Run("passwords the option file cannot hold", func(t *testing.T) {
		for name, tc := range map[string]struct{ pw, phrase string }{
			"a trailing newline": {"echoed-" + randomPassword(t) + "\n", "contains a line break"},
			"two lines":          {"two\nlines-" + randomPassword(t), "contains a line break"},
			"both quotes":        {`it's "quoted" ` + randomPassword(t), `both ' and "`},
			"239 bytes":          {strings.Repeat("y", MaxPasswordBytes+1), "239 bytes long"},
		} {
			t.Run(name, func(t *testing.T) {
				// The server would take it: only the option file cannot.
				db.MustSQL(t, "DROP USER IF EXISTS pwtest@'%'; CREATE USER pwtest@'%' IDENTIFIED BY "+sqlLiteral(tc.pw)+";"+
					"GRANT ALL ON sbtest.* TO pwtest@'%';")
				s := dbSecret(db, tc.pw)
				s[SecretKeyUser] = "pwtest"
				fail(t, w, load.Step{Phase: load.PhaseProbe}, s, 0, tc.phrase)
			})
		}
	})

	t.Run("prepare", func(t *testing.T) {
		out := succeed(t, w, load.Step{Phase: load.PhasePrepare}, "prepare")
		if out.Final.Threads != 4 || out.Final.Tables != 4 {
			t.Errorf("prepare final %+v, want 4 threads over 4 tables", out.Final)
		}
		if got := db.MustSQL(t, "SELECT COUNT(*) FROM sbtest.sbtest4"); got != "2000" {
			t.Errorf("sbtest4 has %s rows, want 2000", got)
		}
	})

	t.Run("probe counts the prepared tables", func(t *testing.T) {
		// What the operator reads after a server restart to decide whether to prepare again.
		if out := succeed(t, w, load.Step{Phase: load.PhaseProbe}, "probe"); out.Final.Tables != 4 {
			t.Errorf("probe found %d tables, want 4", out.Final.Tables)
		}
		db.MustSQL(t, "RENAME TABLE sbtest.sbtest3 TO sbtest.sbtest3_gone")
		db.MustSQL(t, "CREATE TABLE sbtest.sbtest40 (id INT)") // beyond --tables: not counted
		defer db.MustSQL(t, "RENAME TABLE sbtest.sbtest3_gone TO sbtest.sbtest3")
		defer db.MustSQL(t, "DROP TABLE sbtest.sbtest40")
		if out := succeed(t, w, load.Step{Phase: load.PhaseProbe}, "probe"); out.Final.Tables != 3 {
			t.Errorf("probe found %d tables with sbtest3 missing, want 3", out.Final.Tables)
		}
	})

	t.Run("ladder", func(t *testing.T) {
		for _, threads := range []int32{1, 2, 4} {
			out := succeed(t, w, load.Step{Phase: load.PhaseRun, Threads: threads, Duration: 2 * time.Second}, "run")
			assertRunFinal(t, out.Final, threads)
			if len(out.Intervals) == 0 {
				t.Errorf("%d threads: no per-second series", threads)
			}
			for _, iv := range out.Intervals {
				if iv.Threads != threads || iv.QPS <= 0 || iv.Time <= 0 || iv.LatencyPctMs <= 0 {
					t.Errorf("%d threads: interval %+v", threads, iv)
				}
			}
			t.Logf("%d threads: %.0f qps, latency ms min %.3f avg %.3f p95 %.3f max %.3f, %d intervals",
				threads, out.Final.QPS.Total, out.Final.LatencyMs.Min, out.Final.LatencyMs.Avg,
				out.Final.LatencyMs.Pct, out.Final.LatencyMs.Max, len(out.Intervals))
		}
	})

	t.Run("custom script from a ConfigMap", func(t *testing.T) {
		custom := w
		custom.Script = ""
		custom.CustomScript = &v1alpha1.ConfigMapKeySelector{Name: "scripts", Key: "two_selects.lua"}
		out := succeed(t, custom, load.Step{Phase: load.PhaseWarmup, Threads: 2, Duration: time.Second}, "run")
		assertRunFinal(t, out.Final, 2)
		if ratio := out.Final.QPS.Total / out.Final.TPS; ratio < 1.99 || ratio > 2.01 {
			t.Errorf("qps/tps = %.3f, want 2: the custom script did not run", ratio)
		}
	})

	t.Run("a retried prepare starts from the tables a failed attempt left", func(t *testing.T) {
		// What an attempt cut off half-way leaves: one table complete, one partly filled,
		// one with a changed definition, the rest missing.
		db.MustSQL(t, "DROP TABLE sbtest.sbtest3, sbtest.sbtest4")
		db.MustSQL(t, "DELETE FROM sbtest.sbtest2 WHERE id > 7")
		db.MustSQL(t, "ALTER TABLE sbtest.sbtest1 ADD COLUMN junk INT")
		succeed(t, w, load.Step{Phase: load.PhasePrepare}, "prepare")
		for i := 1; i <= 4; i++ {
			if got := db.MustSQL(t, fmt.Sprintf("SELECT COUNT(*) FROM sbtest.sbtest%d", i)); got != "2000" {
				t.Errorf("sbtest%d has %s rows, want 2000", i, got)
			}
		}
		if got := db.MustSQL(t, "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema='sbtest' AND column_name='junk'"); got != "0" {
			t.Errorf("sbtest1 kept the column the failed attempt left: it was not re-created")
		}
	})

	t.Run("a failing prepare worker fails the step", func(t *testing.T) {
		// Plain sysbench 1.0.20 exits 0 when a worker of a parallel command fails; the
		// reporter must turn it into a failure. An account that may not create tables
		// makes every worker fail.
		db.MustSQL(t, "CREATE USER IF NOT EXISTS 'readonly'@'%' IDENTIFIED BY "+sqlLiteral(password))
		db.MustSQL(t, "GRANT SELECT ON sbtest.* TO 'readonly'@'%'")
		ro := dbSecret(db, password)
		ro[SecretKeyUser] = "readonly"
		fail(t, w, load.Step{Phase: load.PhasePrepare}, ro, 1142, "command denied")
	})

	// The failures run with the tables in place, so each has exactly the one cause.
	run := load.Step{Phase: load.PhaseRun, Threads: 2, Duration: 2 * time.Second}
	t.Run("threads above max_connections", func(t *testing.T) {
		db.MustSQL(t, "SET GLOBAL max_connections = 5")
		defer db.MustSQL(t, "SET GLOBAL max_connections = 151")
		fail(t, w, load.Step{Phase: load.PhaseRun, Threads: 20, Duration: 2 * time.Second}, secret, 1040, "max_connections")
	})

	t.Run("wrong password", func(t *testing.T) {
		fail(t, w, run, dbSecret(db, randomPassword(t)), 1045, "access denied")
	})

	t.Run("not prepared", func(t *testing.T) {
		empty := dbSecret(db, password)
		empty[SecretKeyDatabase] = "sbempty"
		fail(t, w, run, empty, 1146, "not prepared")
	})

	t.Run("cleanup", func(t *testing.T) {
		succeed(t, w, load.Step{Phase: load.PhaseCleanup}, "cleanup")
		if got := db.MustSQL(t, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='sbtest'"); got != "0" {
			t.Errorf("%s tables left after cleanup", got)
		}
	})
}

// succeeded checks what every successful step must give: no password anywhere it could leak, a
// clean classification, the reporter's lines and a termination message equal to the logged
// final. Run steps last seconds, long enough that the test must have seen the sysbench process
// itself in /proc.
func succeeded(t *testing.T, c *container, r result, step load.Step, command, password string) load.Output {
	t.Helper()
	assertNoLeak(t, r, password)
	if (step.Phase == load.PhaseRun || step.Phase == load.PhaseWarmup) && !r.sawSysbench() {
		t.Errorf("a %s step ran for %s and /proc never showed sysbench: %q", step.Phase, step.Duration, r.cmdlines)
	}
	if r.sawSysbench() {
		argv := r.cmdlines[len(r.cmdlines)-1]
		if !slices.Contains(argv, "--config-file="+c.path(OptionFile)) {
			t.Errorf("sysbench's argv %q lacks --config-file=%s", argv, c.path(OptionFile))
		}
	}
	out, err := ParseOutput(bytes.NewReader(r.log))
	if err != nil {
		t.Fatalf("ParseOutput: %v\n%s", err, r.log)
	}
	if f := Classify(r.exitCode, out); f != nil {
		t.Fatalf("step failed: %s (exit %d)\n%s", f.Reason, r.exitCode, r.log)
	}
	assertReporterLines(t, r.log)
	if out.Final.Command != command {
		t.Errorf("final is for %q, want %q", out.Final.Command, command)
	}
	if len(r.termination) == 0 || len(r.termination) >= 4096 {
		t.Fatalf("termination message is %d bytes, want 1..4095", len(r.termination))
	}
	f, err := ParseTerminationMessage(r.termination)
	if err != nil {
		t.Fatal(err)
	}
	if *f != *out.Final {
		t.Errorf("termination message %+v differs from the logged final %+v", f, out.Final)
	}
	return out
}

// kubeletLogTail is what FallbackToLogsOnError puts in the termination message: the end of the
// log, at most 80 lines and 2048 bytes.
func kubeletLogTail(log []byte) string {
	lines := strings.SplitAfter(string(log), "\n")
	if len(lines) > 81 {
		lines = lines[len(lines)-81:]
	}
	tail := strings.Join(lines, "")
	if len(tail) > 2048 {
		tail = tail[len(tail)-2048:]
	}
	return tail
}

// assertNoLeak checks that the password is nowhere anyone without the Secret reads it: not in
// the container's argv or env as the kubelet hands them over, not in any argv /proc showed for
// the process (the launcher's, then sysbench's), not in sysbench's environment, not in the log or
// the termination message. The option file the launcher wrote holds it, for its owner only.
func assertNoLeak(t *testing.T, r result, password string) {
	t.Helper()
	if password == "" {
		return
	}
	if bytes.Contains(r.log, []byte(password)) || strings.Contains(r.termination, password) {
		t.Errorf("the password appears in the container's output")
	}
	for _, a := range r.argv {
		if strings.Contains(a, password) {
			t.Errorf("the password is in the container's argument %q", a)
		}
	}
	for k, v := range r.env {
		if strings.Contains(v, password) {
			t.Errorf("the password is in the container's env %s", k)
		}
	}
	for _, argv := range r.cmdlines {
		if strings.Contains(strings.Join(argv, "\x00"), password) {
			t.Errorf("the password is in /proc/<pid>/cmdline: %q", argv)
		}
	}
	if strings.Contains(strings.Join(r.sysbenchEnviron, "\x00"), password) {
		t.Errorf("the password is in sysbench's /proc/<pid>/environ")
	}
	if r.optionFileMode != 0 && r.optionFileMode != 0o600 {
		t.Errorf("the option file has mode %o, want 0600", r.optionFileMode)
	}
}

// specialPassword is a random password with what sysbench's option file must carry verbatim:
// blanks at both ends, #, =, a comma, a semicolon, a single quote, a backslash and a $( the
// kubelet would expand if it ever saw it.
func specialPassword(tb testing.TB) string {
	return ` a#b=c,d;e'f\g $(MYSQLBENCH_USER) ` + randomPassword(tb) + ` `
}

// sqlLiteral quotes s as a string literal for MariaDB's default sql_mode (backslash escapes on).
func sqlLiteral(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// A custom script with its own init and done, which the reporter's snapshots wrap.
const ownInitDone = `require("oltp_common")

function prepare_statements()
   sysbench.opt.point_selects = 1
   prepare_point_selects()
end

function event()
   execute_point_selects()
end

function init()
   print("own init ran")
end

function done()
   print("own done ran")
end
`

// failsMidRun's every event fails with error 1146, after thread_init and the start snapshot:
// sysbench then skips the cumulative report and still calls done().
const failsMidRun = `function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
end

function event()
   con:query("SELECT 1 FROM no_such_table")
end

function thread_done()
   con:disconnect()
end
`

// TestRealServerStats runs point-select steps with server snapshots against private MariaDB
// servers, with performance_schema OFF (MariaDB's default) and ON with the synch wait
// instruments, and with the operator's grants (GrantSQL) or only sysbench's.
func TestRealServerStats(t *testing.T) {
	if testing.Short() {
		t.Skip("real sysbench runs skipped in -short mode")
	}
	tools := lookTools(t)
	w := v1alpha1.Workload{Script: "oltp_point_select", Tables: 2, TableSize: 2000}
	const duration = 2 * time.Second
	for _, tc := range []struct {
		name    string
		options []string
		ps      bool
	}{
		{name: "performance_schema OFF"},
		{name: "performance_schema ON", options: []string{"--performance-schema=ON",
			"--performance-schema-instrument=wait/synch/%=ON"}, ps: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := testmariadb.Start(t, tools, tc.options...)
			password := randomPassword(t)
			// sbtest gets the operator's grants; bare only what sysbench itself needs.
			db.MustSQL(t, "CREATE DATABASE sbtest;"+
				"CREATE USER sbtest@'%' IDENTIFIED BY "+sqlLiteral(password)+"; GRANT ALL ON sbtest.* TO sbtest@'%';"+
				"CREATE USER bare@'%' IDENTIFIED BY "+sqlLiteral(password)+"; GRANT ALL ON sbtest.* TO bare@'%';"+
				GrantSQL("sbtest", "%", "sbtest")+
				"REVOKE ALL PRIVILEGES ON sbtest.* FROM bare@'%'; GRANT "+strings.Join(Privileges, ", ")+" ON sbtest.* TO bare@'%';")
			secret := dbSecret(db, password)
			bare := dbSecret(db, password)
			bare[SecretKeyUser] = "bare"
			c := newContainer(t, map[string]string{"own_init_done.lua": ownInitDone, "fails_mid_run.lua": failsMidRun})
			prepare, err := Build(w, testSecret, load.Step{Phase: load.PhasePrepare})
			if err != nil {
				t.Fatal(err)
			}
			succeeded(t, c, c.run(t, prepare, secret), load.Step{Phase: load.PhasePrepare}, "prepare", password)

			step := load.Step{Phase: load.PhaseRun, Threads: 2, Duration: duration, ServerStats: true}
			inv, err := Build(w, testSecret, step)
			if err != nil {
				t.Fatal(err)
			}

			t.Run("with the operator's grants", func(t *testing.T) {
				r := c.run(t, inv, secret)
				out := succeeded(t, c, r, step, "run", password)
				start, end := assertSnapshotLines(t, r.log, out)
				for _, s := range []serverstats.Snapshot{start, end} {
					if len(s.Errors) != 0 {
						t.Errorf("%s snapshot errors: %q", s.At, s.Errors)
					}
					if s.PerformanceSchema != tc.ps || (s.Waits != nil) != tc.ps {
						t.Errorf("%s snapshot: performanceSchema %v with %d waits, want %v", s.At, s.PerformanceSchema, len(s.Waits), tc.ps)
					}
					if s.InnoDBMetrics == nil || s.Status == nil || !strings.Contains(s.Server, "MariaDB") {
						t.Errorf("%s snapshot lacks a section: status %v, metrics %v, server %q", s.At, s.Status, s.InnoDBMetrics, s.Server)
					}
					if s.DurationMs <= 0 || s.DurationMs > 1000 {
						t.Errorf("%s snapshot took %.3f ms", s.At, s.DurationMs)
					}
				}
				// Counted straight from the snapshots, exactly: every sysbench query is one
				// Questions and, a prepared SELECT, one Com_select; the snapshots' own few
				// statements add to both.
				queries := uint64(out.Final.Queries.Total)
				for _, name := range []string{"Questions", "Com_select"} {
					if d := end.Status[name] - start.Status[name]; d < queries || d > queries+10 {
						t.Errorf("%s went from %d to %d (+%d) over %d queries", name, start.Status[name], end.Status[name], d, queries)
					}
				}
				st, err := serverstats.Delta(start, end, float64(queries), 5)
				if err != nil {
					t.Fatal(err)
				}
				if st.Seconds < duration.Seconds() || st.Seconds > duration.Seconds()+5 {
					t.Errorf("the snapshots are %.3f s apart, the step ran %s", st.Seconds, duration)
				}
				sel := deltaCounter(st, "Com_select")
				if sel.PerQuery < 1 || sel.PerQuery > 1.01 || sel.PerSecond < out.Final.QPS.Total*0.5 {
					t.Errorf("Com_select %+v over %d queries at %.0f qps", sel, queries, out.Final.QPS.Total)
				}
				if st.PerformanceSchema != tc.ps || (len(st.Waits) > 0) != tc.ps || len(st.Waits) > 5 {
					t.Errorf("performanceSchema %v, top waits %+v", st.PerformanceSchema, st.Waits)
				}
				t.Logf("snapshots took %.3f ms (start) and %.3f ms (end), %d and %d wait events; server %s lacks status %v, metrics %v",
					start.DurationMs, end.DurationMs, len(start.Waits), len(end.Waits), end.Server, st.MissingStatus, st.MissingInnoDBMetrics)
				t.Logf("per query: Com_select %.4f, Questions %.4f, Handler_read_key %.4f, Innodb_buffer_pool_read_requests %.4f, Bytes_sent %.1f",
					sel.PerQuery, deltaCounter(st, "Questions").PerQuery, deltaCounter(st, "Handler_read_key").PerQuery,
					deltaCounter(st, "Innodb_buffer_pool_read_requests").PerQuery, deltaCounter(st, "Bytes_sent").PerQuery)
				for _, wt := range st.Waits {
					t.Logf("wait %s: %d waits, %.6f s/s", wt.Event, wt.Count, wt.SecondsPerSecond)
				}
				if len(st.WaitsLeftOut) > 0 {
					t.Logf("waits left out: %q", st.WaitsLeftOut)
				}
			})

			t.Run("an account without the snapshot grants", func(t *testing.T) {
				r := c.run(t, inv, bare)
				out := succeeded(t, c, r, step, "run", password)
				start, end := assertSnapshotLines(t, r.log, out)
				// The driver printed the refused queries as FATAL lines, which are not the step's.
				if n := bytes.Count(r.log, []byte("FATAL: ")); n == 0 {
					t.Errorf("no FATAL line for the refused snapshot queries:\n%s", r.log)
				}
				wantStart := []string{"innodbMetrics: SQL error, errno = 1227"}
				wantEnd := []string{"innodbMetrics: not read, it failed at the start"}
				if tc.ps {
					wantStart = append(wantStart, "waits: SQL error, errno = 1142")
					wantEnd = append(wantEnd, "waits: not read, it failed at the start")
				}
				for _, s := range []struct {
					snap serverstats.Snapshot
					want []string
				}{{start, wantStart}, {end, wantEnd}} {
					if len(s.snap.Errors) != len(s.want) {
						t.Errorf("%s snapshot errors %q, want %q", s.snap.At, s.snap.Errors, s.want)
						continue
					}
					for i, e := range s.snap.Errors {
						if !strings.HasPrefix(e, s.want[i]) {
							t.Errorf("%s snapshot error %q, want %q...", s.snap.At, e, s.want[i])
						}
					}
					if s.snap.InnoDBMetrics != nil || s.snap.Waits != nil || s.snap.Status == nil ||
						s.snap.PerformanceSchema != tc.ps {
						t.Errorf("%s snapshot %+v: want status only", s.snap.At, s.snap)
					}
				}
				st, err := serverstats.Delta(start, end, float64(out.Final.Queries.Total), 5)
				if err != nil {
					t.Fatal(err)
				}
				if len(st.Errors) != len(wantStart)+len(wantEnd) || st.Waits != nil || st.MissingInnoDBMetrics != nil ||
					deltaCounter(st, "Questions").Delta < uint64(out.Final.Queries.Total) {
					t.Errorf("step %+v", st)
				}
				t.Logf("errors: %q", st.Errors)
			})

			t.Run("a script's own init and done still run", func(t *testing.T) {
				custom := w
				custom.Script = ""
				custom.CustomScript = &v1alpha1.ConfigMapKeySelector{Name: "scripts", Key: "own_init_done.lua"}
				short := load.Step{Phase: load.PhaseRun, Threads: 1, Duration: time.Second, ServerStats: true}
				customInv, err := Build(custom, testSecret, short)
				if err != nil {
					t.Fatal(err)
				}
				r := c.run(t, customInv, secret)
				out := succeeded(t, c, r, short, "run", password)
				assertSnapshotLines(t, r.log, out)
				log := string(r.log)
				initAt, startAt := strings.Index(log, "own init ran\n"), strings.Index(log, `{"type":"server","version":1,"at":"start"`)
				endAt, doneAt := strings.Index(log, `{"type":"server","version":1,"at":"end"`), strings.Index(log, "own done ran\n")
				if initAt < 0 || doneAt < 0 || startAt < initAt || doneAt < endAt {
					t.Errorf("want the script's init, the start snapshot, ..., the end snapshot, the script's done:\n%s", log)
				}
			})

			t.Run("a step that fails after the start snapshot keeps its error", func(t *testing.T) {
				custom := w
				custom.Script = ""
				custom.CustomScript = &v1alpha1.ConfigMapKeySelector{Name: "scripts", Key: "fails_mid_run.lua"}
				failing := load.Step{Phase: load.PhaseRun, Threads: 2, Duration: duration, ServerStats: true}
				failInv, err := Build(custom, testSecret, failing)
				if err != nil {
					t.Fatal(err)
				}
				r := c.run(t, failInv, secret)
				if r.exitCode == 0 || r.termination != "" {
					t.Fatalf("exit %d, termination message %q: want a failed step without a result", r.exitCode, r.termination)
				}
				// The kubelet's FallbackToLogsOnError keeps the log's last 2048 bytes: the
				// server's error must be in them, not a snapshot line.
				tail := r.log[max(0, len(r.log)-2048):]
				out, err := ParseOutput(bytes.NewReader(tail))
				if err != nil {
					t.Fatal(err)
				}
				if f := Classify(r.exitCode, out); f == nil || f.Code != 1146 {
					t.Errorf("the log tail classifies as %+v, want error 1146:\n%s", f, tail)
				}
				if bytes.Contains(r.log, []byte(`{"type":"server","version":1,"at":"end"`)) {
					t.Errorf("an end snapshot after a failed run:\n%s", r.log)
				}
			})

			t.Run("server stats off", func(t *testing.T) {
				off := step
				off.ServerStats = false
				offInv, err := Build(w, testSecret, off)
				if err != nil {
					t.Fatal(err)
				}
				r := c.run(t, offInv, secret)
				out := succeeded(t, c, r, off, "run", password)
				if len(out.Server) != 0 || len(out.ServerErrors) != 0 || bytes.Contains(r.log, []byte(`"type":"server`)) {
					t.Errorf("server lines without ServerStats: %+v %q", out.Server, out.ServerErrors)
				}
			})
		})
	}
}

// assertSnapshotLines checks what every step with server snapshots prints: one start line before
// the run's first report, one end line after its final report, none unreadable; and the final's
// counts untouched by the snapshots' queries (a point select is one query per event, and the
// failed queries of an account without the grants would count as errors).
func assertSnapshotLines(t *testing.T, log []byte, out load.Output) (start, end serverstats.Snapshot) {
	t.Helper()
	if len(out.ServerErrors) != 0 {
		t.Errorf("unreadable server lines: %q", out.ServerErrors)
	}
	start, end, err := serverstats.Pair(out.Server)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	lines := strings.Split(string(log), "\n")
	at := func(prefix string) int {
		return slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, prefix) })
	}
	startLine, firstReport := at(`{"type":"server","version":1,"at":"start"`), at(`{"type":"interval"`)
	final, endLine := at(`{"type":"final"`), at(`{"type":"server","version":1,"at":"end"`)
	if firstReport < 0 {
		firstReport = final
	}
	if startLine < 0 || firstReport <= startLine || final < firstReport || endLine <= final {
		t.Errorf("server lines at %d and %d, reports at %d and %d: want start, reports, end", startLine, endLine, firstReport, final)
	}
	if f := out.Final; f.Queries.Total != f.Events || f.Queries.Read != f.Events || f.Errors != 0 {
		t.Errorf("final counts %+v with %d events and %d errors: the snapshots' queries were counted", f.Queries, f.Events, f.Errors)
	}
	if now := float64(time.Now().UnixMicro()) / 1e6; !(start.UnixTime < end.UnixTime && end.UnixTime < now && now-start.UnixTime < 60) ||
		start.UnixTime == math.Trunc(start.UnixTime) && end.UnixTime == math.Trunc(end.UnixTime) {
		t.Errorf("unix times %.6f and %.6f (now %.6f): want sub-second times during the test", start.UnixTime, end.UnixTime, now)
	}
	return start, end
}

func deltaCounter(st serverstats.Step, name string) serverstats.Counter {
	for _, c := range st.Counters {
		if c.Name == name {
			return c
		}
	}
	return serverstats.Counter{}
}
