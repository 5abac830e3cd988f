package client

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/sysbench"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// Every client the API admits is registered under its own name, and an unset client is sysbench.
func TestRegistry(t *testing.T) {
	for _, name := range []v1.WorkloadClient{v1.ClientSysbench, v1.ClientMysqlslap, v1.ClientGoTPC} {
		c, ok := byName(name)
		if !ok {
			t.Fatalf("client %s is not registered", name)
		}
		if c.Name() != name {
			t.Errorf("client registered as %s says it is %s", name, c.Name())
		}
		if got := For(v1.Workload{Client: name}); got.Name() != name {
			t.Errorf("For(%s) = %s", name, got.Name())
		}
		if got, ok := Named(string(name)); !ok || got.Name() != name {
			t.Errorf("Named(%s) = %s, %v", name, got.Name(), ok)
		}
		if caps := c.Capabilities(); caps.Metric.Name == "" || caps.Metric.Unit == "" || caps.CommandNote == "" {
			t.Errorf("client %s: capabilities %+v name no metric, unit or command note", name, caps)
		}
		if m := c.Capabilities().Metric; m.Axis == "" || m.Key == "" || m.Gauge == "" || m.GaugeHelp == "" {
			t.Errorf("client %s: metric %+v has no chart axis, results database key or gauge", name, m)
		}
	}
	if got := For(v1.Workload{}); got.Name() != v1.ClientSysbench {
		t.Errorf("the default client is %s, want sysbench", got.Name())
	}
	if got, ok := Named(""); !ok || got.Name() != v1.ClientSysbench {
		t.Errorf(`Named("") = %s, %v: results without a client are sysbench's`, got.Name(), ok)
	}
	if got, ok := Named("hammerdb"); ok || got.Name() != v1.ClientSysbench {
		t.Errorf(`Named("hammerdb") = %s, %v: an unknown client reads as sysbench, not known`, got.Name(), ok)
	}
}

func TestCapabilitiesAndPhases(t *testing.T) {
	slap := v1.Workload{Client: v1.ClientMysqlslap, Mysqlslap: &v1.MysqlslapWorkload{Iterations: 3}}
	cases := []struct {
		name        string
		w           v1.Workload
		prepares    bool
		latency     bool
		series      bool
		after       load.Phase
		afterOnKept bool
		repeats     int
	}{
		{name: "sysbench", w: v1.Workload{Script: "oltp_read_only"}, prepares: true, latency: true, series: true,
			after: load.PhaseCleanup, afterOnKept: true, repeats: 1},
		{name: "sysbench on existing data", w: v1.Workload{Script: "oltp_read_only", SkipPrepare: true}, latency: true,
			series: true, after: load.PhaseCleanup, repeats: 1},
		{name: "mysqlslap", w: slap, repeats: 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := For(tc.w)
			caps := c.Capabilities()
			if got := Prepares(tc.w); got != tc.prepares {
				t.Errorf("Prepares = %v, want %v", got, tc.prepares)
			}
			if got := caps.Reports(95); got != tc.latency {
				t.Errorf("Reports(95) = %v, want %v", got, tc.latency)
			}
			if caps.Transactions != tc.latency || caps.Series != tc.series {
				t.Errorf("transactions %v, series %v, want %v, %v", caps.Transactions, caps.Series, tc.latency, tc.series)
			}
			if phase, ok := c.AfterLadder(tc.w, false); ok {
				t.Errorf("AfterLadder on a server the operator deletes: %s", phase)
			}
			phase, ok := c.AfterLadder(tc.w, true)
			if ok != tc.afterOnKept || (ok && phase != tc.after) {
				t.Errorf("AfterLadder on a kept server = %s, %v, want %s, %v", phase, ok, tc.after, tc.afterOnKept)
			}
			if got := c.SnapshotRepeats(tc.w); got != tc.repeats {
				t.Errorf("SnapshotRepeats = %d, want %d", got, tc.repeats)
			}
		})
	}
}

// Container: each step in the client's program and image; mysqlslap leaves the probe to sysbench.
func TestContainer(t *testing.T) {
	spec := func(w v1.Workload) v1.BenchmarkRunSpec {
		return v1.BenchmarkRunSpec{Workload: w, Ladder: v1.Ladder{Threads: []int32{1, 2}}}
	}
	builtin := v1.Target{Name: "a", Image: "mariadb:11"}
	external := v1.Target{Name: "b", Engine: v1.EngineExternal}
	sb := v1.Workload{Script: "oltp_point_select", Tables: 2, TableSize: 100}
	slap := v1.Workload{Client: v1.ClientMysqlslap}
	slapImage := v1.Workload{Client: v1.ClientMysqlslap, Mysqlslap: &v1.MysqlslapWorkload{Image: "mysql:8.4"}}
	run := load.Step{Phase: load.PhaseRun, Threads: 2, Duration: 10 * time.Second}
	probe := load.Step{Phase: load.PhaseProbe}
	cases := []struct {
		name      string
		w         v1.Workload
		t         v1.Target
		step      load.Step
		image     string
		program   string
		arg       string // an argument the command has
		errorSays string
	}{
		{name: "sysbench run", w: sb, t: builtin, step: run, image: "sysbench:img", program: "sysbench", arg: "--threads=2"},
		{name: "sysbench prepare", w: sb, t: external, step: load.Step{Phase: load.PhasePrepare}, image: "sysbench:img", program: "sysbench", arg: "prepare"},
		{name: "sysbench bad duration", w: sb, t: builtin, step: load.Step{Phase: load.PhaseRun, Threads: 1, Duration: 1500 * time.Millisecond},
			errorSays: "not a whole number of seconds"},
		{name: "mysqlslap run in the server's image", w: slap, t: builtin, step: run, image: "mariadb:11", program: "mysqlslap",
			arg: "--concurrency=2"},
		{name: "mysqlslap run in its own image", w: slapImage, t: external, step: run, image: "mysql:8.4", program: "mysqlslap",
			arg: "--concurrency=2"},
		{name: "mysqlslap on an external server needs an image", w: slap, t: external, step: run,
			errorSays: "set workload.mysqlslap.image"},
		{name: "mysqlslap's probe is sysbench's", w: slap, t: external, step: probe, image: "sysbench:img", program: "sysbench",
			arg: "probe"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := For(tc.w)
			inv, image, err := c.Container(spec(tc.w), tc.t, tc.step, "conn", "sysbench:img")
			if tc.errorSays != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errorSays) {
					t.Fatalf("error %v, want one that says %q", err, tc.errorSays)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if image != tc.image {
				t.Errorf("image %s, want %s", image, tc.image)
			}
			if got := c.Program(tc.step); got != tc.program {
				t.Errorf("program %s, want %s", got, tc.program)
			}
			if !slices.Contains(inv.Args, tc.arg) {
				t.Errorf("args %q lack %s", inv.Args, tc.arg)
			}
		})
	}
}

// Parse and Classify read each step with its program's formats.
func TestParseAndClassify(t *testing.T) {
	slapOK, err := os.ReadFile("../mysqlslap/testdata/mariadb-10.11-ok.term")
	if err != nil {
		t.Fatal(err)
	}
	const probeLine = `{"type":"final","version":1,"command":"probe","sysbench":"1.0.20","threads":1,"durationSeconds":0,"server":"11.4.2-MariaDB"}` + "\n"
	slap := For(v1.Workload{Client: v1.ClientMysqlslap})
	cases := []struct {
		name    string
		c       Client
		step    load.Step
		out     string
		qps     float64
		failure string
	}{
		{name: "mysqlslap's report", c: slap, step: load.Step{Phase: load.PhaseRun, Threads: 4}, out: string(slapOK), qps: 4385.96},
		{name: "mysqlslap's probe reads sysbench's reporter", c: slap, step: load.Step{Phase: load.PhaseProbe}, out: probeLine},
		{name: "sysbench reads no mysqlslap report", c: sysbench.Client{}, step: load.Step{Phase: load.PhaseRun, Threads: 4}, out: string(slapOK),
			failure: "without a final report"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.c.Parse(tc.step, strings.NewReader(tc.out))
			if err != nil {
				t.Fatal(err)
			}
			f := tc.c.Classify(tc.step, 0, out)
			if tc.failure != "" {
				if f == nil || !strings.Contains(f.Reason, tc.failure) {
					t.Fatalf("failure %v, want one that says %q", f, tc.failure)
				}
				return
			}
			if f != nil {
				t.Fatalf("failed: %s", f.Reason)
			}
			if tc.step.Phase == load.PhaseRun {
				if got := tc.c.Result(tc.step, out).QPS.Total; got < tc.qps-0.01 || got > tc.qps+0.01 {
					t.Errorf("QPS %.2f, want %.2f", got, tc.qps)
				}
			}
		})
	}
}

func TestConnectionLost(t *testing.T) {
	for code, want := range map[int]bool{2002: true, 2003: true, 2006: true, 2013: true, 1045: false, 0: false} {
		if got := ConnectionLost(&load.Failure{Code: code}); got != want {
			t.Errorf("ConnectionLost(%d) = %v, want %v", code, got, want)
		}
	}
	if ConnectionLost(nil) {
		t.Error("no failure is a lost connection")
	}
}

// Record: results.json names mysqlslap and what it ran; sysbench's documents name no client.
func TestRecord(t *testing.T) {
	var doc results.Workload
	For(v1.Workload{Script: "oltp_point_select"}).Record(v1.Workload{Script: "oltp_point_select"}, &doc)
	if doc.Client != "" || doc.Mysqlslap != nil {
		t.Errorf("sysbench recorded %+v", doc)
	}
	w := v1.Workload{Client: v1.ClientMysqlslap, Mysqlslap: &v1.MysqlslapWorkload{Queries: 500}}
	For(w).Record(w, &doc)
	if doc.Client != "mysqlslap" || doc.Mysqlslap == nil || doc.Mysqlslap.Queries != 500 || doc.Mysqlslap.Iterations != 1 ||
		doc.Mysqlslap.LoadType != "mixed" {
		t.Errorf("mysqlslap recorded %+v %+v", doc, doc.Mysqlslap)
	}
}
