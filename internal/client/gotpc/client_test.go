package gotpc

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/gotpc"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

func tpccWorkload(warehouses int32) v1.Workload {
	return v1.Workload{Client: v1.ClientGoTPC, TPCC: &v1.TPCCWorkload{Warehouses: warehouses}}
}

func tpccSpec(w v1.Workload) v1.BenchmarkRunSpec {
	return v1.BenchmarkRunSpec{Workload: w, Ladder: v1.Ladder{Threads: []int32{1, 4},
		StepDuration: &metav1.Duration{Duration: 30 * time.Second}}}
}

// recordOf is the launcher record of a real go-tpc output (testdata of internal/gotpc).
func recordOf(t *testing.T, fixture string, phase gotpc.Phase, threads int32) string {
	t.Helper()
	b, err := os.ReadFile("../../gotpc/testdata/" + fixture)
	if err != nil {
		t.Fatal(err)
	}
	rec := gotpc.Record{Phase: phase, Warehouses: 1, Threads: threads, Seconds: 6.2}
	if f, failed := gotpc.Classify(phase, string(b), 0); failed {
		rec.Failure, rec.ExitCode, rec.Tail = &f, 1, string(b)
		line, err := rec.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + string(line)
	}
	switch phase {
	case gotpc.PhaseRun, gotpc.PhaseWarmup:
		res, err := gotpc.Parse(string(b))
		if err != nil {
			t.Fatal(err)
		}
		rec.Result = &res
	case gotpc.PhaseCheck:
		res, err := gotpc.ParseCheck(string(b))
		if err != nil {
			t.Fatal(err)
		}
		rec.Check = &res
	}
	line, err := rec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// The launcher's record follows go-tpc's own output in the log; the termination message
	// holds the record alone. Parse reads both.
	return string(b) + string(line)
}

func TestGoTPCParseClassifyResult(t *testing.T) {
	c := Client{}
	run := load.Step{Phase: load.PhaseRun, Threads: 2, Duration: 6 * time.Second}

	out, err := c.Parse(run, strings.NewReader(recordOf(t, "mariadb-10.11-run.log", gotpc.PhaseRun, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if f := c.Classify(run, 0, out); f != nil {
		t.Fatalf("a successful run failed: %s", f.Reason)
	}
	r := c.Result(run, out)
	if r.TPCC == nil || r.TPCC.TpmC != 22316.6 || r.Throughput() != 22316.6 || r.QPS.Total != 0 {
		t.Fatalf("result %+v: want tpmC 22316.6 as the throughput and no QPS", r)
	}
	// The transaction types in TPC-C's order, new-order first, failures beside their type.
	var names []string
	for _, tx := range r.TPCC.Transactions {
		names = append(names, tx.Name)
	}
	if want := []string{"NEW_ORDER", "PAYMENT", "ORDER_STATUS", "DELIVERY", "STOCK_LEVEL"}; !slices.Equal(names, want) {
		t.Errorf("transactions %v, want %v", names, want)
	}
	no := r.TPCC.Transactions[0]
	if no.Count != 2227 || no.Errors != 1 || no.P95Ms != 6.3 || no.P99Ms != 9.4 || no.MaxMs != 46.1 {
		t.Errorf("new-order %+v", no)
	}
	if r.Latency.P95Ms != 6.3 || r.Latency.AvgMs != 3.0 || r.Errors != 2 || r.DurationSeconds != 6.0 {
		t.Errorf("latency %+v, errors %d, duration %v: want new-order's p95 6.3, avg 3.0, 2 failed, 6 s",
			r.Latency, r.Errors, r.DurationSeconds)
	}
	// TPS: all successful transactions over the step.
	if want := (1755.3 + 22316.9 + 1844.2 + 21377.6 + 1926.0) / 60; r.TPS < want-0.01 || r.TPS > want+0.01 {
		t.Errorf("TPS %.2f, want %.2f", r.TPS, want)
	}
	if !loadEnded(c, run, out) {
		t.Error("a successful run's load has not ended")
	}

	failures := []struct {
		name, fixture string
		phase         gotpc.Phase
		step          load.Step
		says          string
		deterministic bool
		code          int
	}{
		{"refused", "mariadb-10.11-refused.log", gotpc.PhaseRun, run, "could not connect", false, 2003},
		{"tables missing", "mariadb-10.11-run-missing-tables.log", gotpc.PhaseRun, run, "TPC-C tables are missing", true, 0},
		// go-tpc v1.0.7 swallows the driver's error at its first ping: a database the user may
		// not use reads like a refused connection.
		{"unknown database", "mariadb-10.11-unknown-database.log", gotpc.PhaseRun, run, "could not connect", false, 2003},
	}
	for _, tc := range failures {
		t.Run(tc.name, func(t *testing.T) {
			out, err := c.Parse(tc.step, strings.NewReader(recordOf(t, tc.fixture, tc.phase, 1)))
			if err != nil {
				t.Fatal(err)
			}
			f := c.Classify(tc.step, 1, out)
			if f == nil || !strings.Contains(f.Reason, tc.says) || f.Deterministic != tc.deterministic || f.Code != tc.code {
				t.Fatalf("failure %+v, want one that says %q, deterministic %v, code %d", f, tc.says, tc.deterministic, tc.code)
			}
			if loadEnded(c, tc.step, out) {
				t.Error("a failed run's load counts as ended with a result")
			}
		})
	}

	// A launcher that died: the kubelet's log tail, no record.
	out, err = c.Parse(run, strings.NewReader("exec /gotpc-launcher: exec format error\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f := c.Classify(run, 1, out); f == nil || !strings.Contains(f.Reason, "wrote no result: exec /gotpc-launcher: exec format error") {
		t.Errorf("failure %+v, want the launcher's missing result with the log's tail", f)
	}
	// A record of another launcher version is refused, naming the fix.
	if _, err := c.Parse(run, strings.NewReader(`{"type":"gotpc","version":99,"phase":"run"}`)); err == nil ||
		!strings.Contains(err.Error(), "workload.tpcc.image") {
		t.Errorf("a record of version 99: %v", err)
	}
	// The probe is sysbench's.
	probe := load.Step{Phase: load.PhaseProbe}
	out, err = c.Parse(probe, strings.NewReader(`{"type":"final","version":1,"command":"probe","sysbench":"1.0.20","threads":1,"durationSeconds":0,"server":"11.8.3-MariaDB"}`+"\n"))
	if err != nil || out.Final == nil || out.Final.Server != "11.8.3-MariaDB" || c.Classify(probe, 0, out) != nil {
		t.Errorf("probe: %+v, %v", out.Final, err)
	}
}

func loadEnded(c Client, step load.Step, out load.Output) bool {
	return out.Final != nil && c.Classify(step, 0, out) == nil
}

func TestGoTPCCheck(t *testing.T) {
	c := Client{}
	check := load.Step{Phase: load.PhaseCheck}
	out, err := c.Parse(check, strings.NewReader(recordOf(t, "mariadb-10.11-check-full.log", gotpc.PhaseCheck, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if f := c.Classify(check, 0, out); f != nil {
		t.Fatalf("a passed check failed: %s", f.Reason)
	}
	rec := gotpc.Record{Phase: gotpc.PhaseCheck, Warehouses: 1, ExitCode: 1, Check: &gotpc.CheckResult{
		Conditions: []string{"warehouse 1 3.3.2.1"}, Failure: "check warehouse 1 condition 3.3.2.1 failed"},
		Failure: &gotpc.Failure{Reason: "ConsistencyCheckFailed", Message: "condition 3.3.2.1 of warehouse 1 failed"}}
	line, err := rec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	out, err = c.Parse(check, strings.NewReader(string(line)))
	if err != nil {
		t.Fatal(err)
	}
	if f := c.Classify(check, 1, out); f == nil || !f.Deterministic || !strings.Contains(f.Reason, "go-tpc check: condition 3.3.2.1") {
		t.Errorf("failed check: %+v", f)
	}
}

func TestGoTPCPhasesAndDeadlines(t *testing.T) {
	w := tpccWorkload(4)
	c := Client{}
	if !c.Capabilities().PreparesData || c.Capabilities().Metric.Name != "tpmC" {
		t.Errorf("go-tpc prepares its warehouses and measures tpmC: %+v", c.Capabilities())
	}
	for _, kept := range []bool{false, true} {
		if phase, ok := c.AfterLadder(w, kept); !ok || phase != load.PhaseCheck {
			t.Errorf("AfterLadder(kept %v) = %s, %v: want the check", kept, phase, ok)
		}
	}
	noCheck := tpccWorkload(4)
	noCheck.TPCC.Check = new(bool)
	if phase, ok := c.AfterLadder(noCheck, true); !ok || phase != load.PhaseCleanup {
		t.Errorf("without a check, a kept server's tables are dropped: %s, %v", phase, ok)
	}
	if phase, ok := c.AfterLadder(noCheck, false); ok {
		t.Errorf("without a check, nothing after the ladder on a server the operator deletes: %s", phase)
	}
	if d, ok := c.StepDeadline(w, load.Step{Phase: load.PhaseCheck}); !ok || d != 30*time.Minute {
		t.Errorf("check deadline %s, %v: want 10 min + 5 per warehouse", d, ok)
	}
	w.TPCC.CheckTimeout = &metav1.Duration{Duration: 2 * time.Hour}
	if d, _ := c.StepDeadline(w, load.Step{Phase: load.PhaseCheck}); d != 2*time.Hour {
		t.Errorf("check deadline %s, want checkTimeout 2h", d)
	}
	if _, ok := c.StepDeadline(w, load.Step{Phase: load.PhaseRun, Duration: time.Minute}); ok {
		t.Error("a run's deadline is the operator's")
	}
	if b, ok := c.DataBytes(w); !ok || b != 4*gotpc.BytesPerWarehouse+gotpc.FixedBytes {
		t.Errorf("DataBytes %d, %v", b, ok)
	}
}

func TestGoTPCValidate(t *testing.T) {
	builtin := v1.Target{Name: "a", Image: "mariadb:11.8"}
	external := v1.Target{Name: "b", Engine: v1.EngineExternal}
	withStorage := func(w v1.Workload, size string) v1.BenchmarkRunSpec {
		s := tpccSpec(w)
		s.Storage = &v1.Storage{Size: resource.MustParse(size)}
		return s
	}
	cases := []struct {
		name string
		spec v1.BenchmarkRunSpec
		t    v1.Target
		says string
	}{
		{"fits", withStorage(tpccWorkload(10), "2Gi"), builtin, ""},
		{"too small a volume", withStorage(tpccWorkload(100), "10Gi"), builtin, "lower the warehouses to 79 or raise spec.storage.size"},
		{"an external server's disk is the user's", withStorage(tpccWorkload(100), "10Gi"), external, ""},
		{"beyond the data emptyDir", tpccSpec(tpccWorkload(1000)), builtin, "but the server's storage is 63488 MiB"},
		{"no tpcc block", tpccSpec(v1.Workload{Client: v1.ClientGoTPC}), builtin, "needs workload.tpcc"},
		{"a step of half seconds", func() v1.BenchmarkRunSpec {
			s := tpccSpec(tpccWorkload(1))
			s.Ladder.StepDuration = &metav1.Duration{Duration: 1500 * time.Millisecond}
			return s
		}(), builtin, "whole seconds"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Client{}.Validate(tc.spec, tc.t)
			if tc.says == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %v, want one that says %q", err, tc.says)
			}
		})
	}
}

func TestGoTPCContainer(t *testing.T) {
	w := tpccWorkload(2)
	w.TPCC.Image = "registry.local/go-tpc:test"
	c := Client{}
	builtin := v1.Target{Name: "a", Image: "mariadb:11.8"}
	external := v1.Target{Name: "b", Engine: v1.EngineExternal}
	cases := []struct {
		name  string
		t     v1.Target
		step  load.Step
		image string
		want  gotpc.Step
	}{
		{"prepare with the load threads", builtin, load.Step{Phase: load.PhasePrepare}, "registry.local/go-tpc:test",
			gotpc.Step{Phase: gotpc.PhasePrepare, Warehouses: 2, Threads: 2, IgnoreError: true}},
		{"warm-up", builtin, load.Step{Phase: load.PhaseWarmup, Threads: 8, Duration: 10 * time.Second}, "registry.local/go-tpc:test",
			gotpc.Step{Phase: gotpc.PhaseWarmup, Warehouses: 2, Threads: 8, Duration: 10 * time.Second, IgnoreError: true}},
		{"run", builtin, load.Step{Phase: load.PhaseRun, Threads: 4, Duration: 30 * time.Second}, "registry.local/go-tpc:test",
			gotpc.Step{Phase: gotpc.PhaseRun, Warehouses: 2, Threads: 4, Duration: 30 * time.Second, IgnoreError: true}},
		{"check on a server the operator deletes", builtin, load.Step{Phase: load.PhaseCheck}, "registry.local/go-tpc:test",
			gotpc.Step{Phase: gotpc.PhaseCheck, Warehouses: 2, IgnoreError: true}},
		{"check on a kept server drops the tables", external, load.Step{Phase: load.PhaseCheck}, "registry.local/go-tpc:test",
			gotpc.Step{Phase: gotpc.PhaseCheck, Warehouses: 2, IgnoreError: true, CleanupAfterCheck: true}},
		{"cleanup", external, load.Step{Phase: load.PhaseCleanup}, "registry.local/go-tpc:test",
			gotpc.Step{Phase: gotpc.PhaseCleanup, Warehouses: 2, IgnoreError: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inv, image, err := c.Container(tpccSpec(w), tc.t, tc.step, "conn", "sysbench:img")
			if err != nil {
				t.Fatal(err)
			}
			want, err := gotpc.LauncherArgs(tc.want)
			if err != nil {
				t.Fatal(err)
			}
			if image != tc.image || !slices.Equal(inv.Command, []string{gotpc.LauncherPath}) || !slices.Equal(inv.Args, want) {
				t.Errorf("%s %q %q, want %s %s %q", image, inv.Command, inv.Args, tc.image, gotpc.LauncherPath, want)
			}
			// The connection from the Secret, the password only as the mounted file.
			env := map[string]corev1.EnvVar{}
			for _, e := range inv.Env {
				env[e.Name] = e
			}
			for _, name := range []string{sysbench.EnvHost, sysbench.EnvPort, sysbench.EnvUser, sysbench.EnvDatabase} {
				if e := env[name]; e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "conn" {
					t.Errorf("env %s: %+v", name, e)
				}
			}
			if env[sysbench.EnvResultFile].Value != sysbench.TerminationMessagePath {
				t.Errorf("result file %+v", env[sysbench.EnvResultFile])
			}
			for _, e := range inv.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Key == sysbench.SecretKeyPassword {
					t.Errorf("the password is in the environment: %+v", e)
				}
			}
			if !slices.ContainsFunc(inv.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == sysbench.PasswordMountPath }) {
				t.Errorf("no password file mounted: %+v", inv.VolumeMounts)
			}
		})
	}
	// The probe is sysbench's, in the sysbench image.
	inv, image, err := c.Container(tpccSpec(w), builtin, load.Step{Phase: load.PhaseProbe}, "conn", "sysbench:img")
	if err != nil || image != "sysbench:img" || !slices.Contains(inv.Args, "probe") || c.Program(load.Step{Phase: load.PhaseProbe}) != "sysbench" {
		t.Errorf("probe: %s %q %v", image, inv.Args, err)
	}
	// The default image.
	if _, image, _ := (Client{}).Container(tpccSpec(tpccWorkload(1)), builtin, load.Step{Phase: load.PhasePrepare}, "conn", "x"); image != v1.DefaultGoTPCImage {
		t.Errorf("default image %s", image)
	}
}

func TestGoTPCRecord(t *testing.T) {
	var doc results.Workload
	w := tpccWorkload(3)
	Client{}.Record(w, &doc)
	if doc.Client != "go-tpc" || doc.TPCC == nil || doc.TPCC.Warehouses != 3 || doc.TPCC.LoadThreads != 3 || !doc.TPCC.Check ||
		doc.TPCC.Image != v1.DefaultGoTPCImage || doc.TPCC.GoTPC != gotpc.Version {
		t.Errorf("go-tpc recorded %+v %+v", doc, doc.TPCC)
	}
	if s := (Client{}).Describe(tpccSpec(w), "1 4"); !strings.Contains(s, "3 warehouse(s)") || !strings.Contains(s, "clients 1 4, 30s per step") {
		t.Errorf("Describe: %s", s)
	}
}
