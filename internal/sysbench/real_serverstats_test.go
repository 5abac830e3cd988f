package sysbench

import (
	"bytes"
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
