package sysbench

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
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

	t.Run("a step started early waits for the server lock, outside its measured window", func(t *testing.T) {
		// The operator's pipeline: the first step's client holds the lock while it measures;
		// the next one, started a second later, waits for it on the server before its clock
		// starts. Each has its own container.
		lock := "mysqlbench:test-lock"
		first := load.Step{Phase: load.PhaseRun, Threads: 2, Duration: 4 * time.Second, ServerLock: lock, ServerLockWait: 30 * time.Second}
		next := load.Step{Phase: load.PhaseRun, Threads: 2, Duration: 2 * time.Second, ServerLock: lock, ServerLockWait: 30 * time.Second,
			ServerStats: true}
		c2 := newContainer(t, nil)
		firstInv := build(t, w, first)
		var firstRes result
		var firstEnd time.Time
		done := make(chan struct{})
		go func() {
			defer close(done)
			firstRes = c.run(t, firstInv, secret)
			firstEnd = time.Now()
		}()
		time.Sleep(time.Second)
		nextStart := time.Now()
		nextRes := c2.run(t, build(t, w, next), secret)
		nextEnd := time.Now()
		<-done
		succeeded(t, c, firstRes, first, "run", password)
		out := succeeded(t, c2, nextRes, next, "run", password)
		// It measured its own two seconds, after the first one's end, having waited about three.
		if d := out.Final.DurationSeconds; d < 1.9 || d > 2.5 {
			t.Errorf("the step that waited measured %.3f s, want its 2 s: the wait is outside its window", d)
		}
		if after := nextEnd.Sub(firstEnd); after < 1900*time.Millisecond {
			t.Errorf("it ended %s after the first one, want at least its 2 s: it measured beside it", after)
		}
		if took := nextEnd.Sub(nextStart); took < 4*time.Second {
			t.Errorf("it took %s from its start, want its wait of about 3 s and its 2 s", took)
		}
		// Its start snapshot was taken once it had the lock: when the first one had measured,
		// about three seconds after it started.
		if len(out.Server) == 0 || out.Server[0].At != "start" {
			t.Fatalf("no start snapshot: %+v", out.Server)
		}
		if at := out.Server[0].UnixTime - float64(nextStart.UnixMicro())/1e6; at < 2.5 {
			t.Errorf("its start snapshot was taken %.3f s after it started, want after the first one's end (about 3 s)", at)
		}
		t.Logf("the first step ended %s after the second one started; the second measured %.3f s and ended %s after the first",
			firstEnd.Sub(nextStart).Round(time.Millisecond), out.Final.DurationSeconds, nextEnd.Sub(firstEnd).Round(time.Millisecond))

		// A step before that does not end in time: the waiting one fails and says why.
		done = make(chan struct{})
		go func() {
			defer close(done)
			firstRes = c2.run(t, firstInv, secret)
		}()
		time.Sleep(time.Second)
		short := next
		short.ServerLockWait = time.Second
		fail(t, w, short, secret, 0, "waited 1 s for the server lock "+lock)
		<-done
		succeeded(t, c2, firstRes, first, "run", password)

		// A step whose lock connection the server drops (a KILL here) no longer keeps the next
		// one out: its result must not stand. The driver's error on that connection (2013) is
		// what the step failed of; the reporter's line after it says what it means.
		killed := make(chan error, 1)
		go func() {
			time.Sleep(1500 * time.Millisecond)
			_, err := db.SQL("SELECT CONCAT('KILL ', IS_USED_LOCK('" + lock + "')) INTO @k; PREPARE k FROM @k; EXECUTE k;")
			killed <- err
		}()
		r := c.run(t, build(t, w, first), secret)
		if r.exitCode == 0 || r.termination != "" || !strings.Contains(string(r.log), "lost the server lock "+lock) {
			t.Errorf("a step that lost its lock: exit %d, termination message %q, log:\n%s", r.exitCode, r.termination, r.log)
		}
		tail, err := ParseOutput(strings.NewReader(kubeletLogTail(r.log)))
		if err != nil {
			t.Fatal(err)
		}
		if f := Classify(r.exitCode, tail); f == nil || f.Code != 2013 {
			t.Errorf("a step that lost its lock classified from its log tail as %+v, want a failure of error 2013", f)
		}
		if err := <-killed; err != nil {
			t.Fatalf("killing the lock's connection: %v", err)
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

	t.Run("each stock script prepares again over the tables another one left", func(t *testing.T) {
		// A suite prepares its data again between workloads, over the tables the earlier
		// workloads used; oltp_insert has a prepare of its own around the common one (empty
		// tables without --auto-inc), which must start from clean tables too.
		for _, script := range []v1alpha1.OLTPScript{"oltp_insert", "oltp_delete", "select_random_points"} {
			sw := w
			sw.Script = script
			db.MustSQL(t, "DELETE FROM sbtest.sbtest1 WHERE id > 5")
			succeed(t, sw, load.Step{Phase: load.PhasePrepare}, "prepare")
			for i := 1; i <= 4; i++ {
				if got := db.MustSQL(t, fmt.Sprintf("SELECT COUNT(*) FROM sbtest.sbtest%d", i)); got != "2000" {
					t.Errorf("%s: sbtest%d has %s rows after its prepare, want 2000", script, i, got)
				}
			}
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
