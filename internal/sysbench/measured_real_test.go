package sysbench

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/testmariadb"
)

var capture = flag.Bool("capture", false, "rewrite the reporter captures of TestRealMeasured (testdata/reporter) from its real runs")

// Custom scripts that a new user might write, and what sysbench 1.0.20 makes of them.
var measuredScripts = map[string]string{
	// event() writes a log line instead of running SQL: thousands of events, no query.
	"no_sql.lua": `local log = io.open("/dev/null", "w")

function event()
   log:write("step ", sysbench.tid, " did something else than SQL\n")
end
`,
	// One event that takes longer than the step and runs no SQL: sysbench waits for it.
	"no_sql_long_event.lua": `local ffi = require("ffi")
ffi.cdef("int poll(void *fds, unsigned long nfds, int timeout);")

function event()
   ffi.C.poll(nil, 0, 3000)
end
`,
	// Point selects, but the first event of thread 0 is a query that outlasts the step.
	"long_event.lua": `require("oltp_common")

local long_done = false

function prepare_statements()
   sysbench.opt.point_selects = 1
   prepare_point_selects()
end

function event()
   if sysbench.tid == 0 and not long_done then
      long_done = true
      con:query("SELECT SLEEP(3.5)")
      return
   end
   execute_point_selects()
end
`,
}

// TestRealMeasured runs steps of those scripts with Build's invocation against a private
// MariaDB and checks what the operator makes of them: no query fails the step for good, an event
// past the step's end flags it, a normal step is neither. With -capture the outputs are stored
// as the reporter captures TestReporterCaptures reads.
func TestRealMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("real sysbench runs skipped in -short mode")
	}
	tools := lookTools(t)
	db := testmariadb.Start(t, tools)
	password := randomPassword(t)
	db.MustSQL(t, "CREATE DATABASE sbtest; CREATE USER sbtest@'%' IDENTIFIED BY "+sqlLiteral(password)+";"+
		"GRANT ALL ON sbtest.* TO sbtest@'%';")
	db.MustSQL(t, GrantSQL("sbtest", "%", "sbtest"))
	secret := dbSecret(db, password)
	c := newContainer(t, measuredScripts)
	w := v1alpha1.Workload{Script: "oltp_point_select", Tables: 2, TableSize: 2000}
	prepare, err := Build(w, testSecret, load.Step{Phase: load.PhasePrepare})
	if err != nil {
		t.Fatal(err)
	}
	succeeded(t, c, c.run(t, prepare, secret), load.Step{Phase: load.PhasePrepare}, "prepare", password)

	const step = 2 * time.Second
	for _, tc := range []struct {
		capture string // the capture's name under testdata/reporter
		script  string // "": the stock oltp_point_select
		threads int32
		nothing string // a phrase of the MeasuredNothing reason; "": the step measured queries
		over    bool
	}{
		{capture: "run_no_sql_t2", script: "no_sql.lua", threads: 2, nothing: "event() ran no SQL"},
		{capture: "run_no_sql_long_event_t1", script: "no_sql_long_event.lua", threads: 1, nothing: "1 event and 0 queries in 3.0", over: true},
		{capture: "run_long_event_t2", script: "long_event.lua", threads: 2, over: true},
		{capture: "run_point_select_t2_normal", threads: 2},
	} {
		t.Run(tc.capture, func(t *testing.T) {
			sw := w
			if tc.script != "" {
				sw.Script = ""
				sw.CustomScript = &v1alpha1.ConfigMapKeySelector{Name: "scripts", Key: tc.script}
			}
			s := load.Step{Phase: load.PhaseRun, Threads: tc.threads, Duration: step}
			inv, err := Build(sw, testSecret, s)
			if err != nil {
				t.Fatal(err)
			}
			r := c.run(t, inv, secret)
			// Classify passes all of them: sysbench exited 0 with a final report.
			out := succeeded(t, c, r, s, "run", password)
			f := *out.Final
			t.Logf("%d events, %d queries in %.3f s of a %s step, tps %.2f, qps %.2f",
				f.Events, f.Queries.Total, f.DurationSeconds, step, f.TPS, f.QPS.Total)
			nothing := MeasuredNothing(f, step)
			switch {
			case tc.nothing == "" && nothing != nil:
				t.Errorf("measured nothing: %s", nothing.Reason)
			case tc.nothing != "" && (nothing == nil || !nothing.Deterministic || !strings.Contains(nothing.Reason, tc.nothing)):
				t.Errorf("MeasuredNothing = %+v, want a deterministic failure saying %q", nothing, tc.nothing)
			}
			if got := OverDuration(f, step); got != tc.over {
				t.Errorf("OverDuration = %v for %.3f s of a %s step, want %v", got, f.DurationSeconds, step, tc.over)
			}
			if *capture {
				base := filepath.Join("testdata", "reporter", tc.capture)
				for ext, data := range map[string][]byte{".txt": r.log, ".rc": []byte(strconv.Itoa(int(r.exitCode)) + "\n"),
					".termination-log": []byte(r.termination)} {
					if err := os.WriteFile(base+ext, data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			if !bytes.Contains(r.log, []byte(`"command":"run"`)) {
				t.Errorf("no run report in the log:\n%s", r.log)
			}
		})
	}
}
