package run_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/gotpc"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// gotpcRecord is the launcher's record of a phase, with the result of a real go-tpc output
// (internal/gotpc's captures against MariaDB 10.11) for a run and a check.
func gotpcRecord(t *testing.T, phase gotpc.Phase, threads int32) string {
	t.Helper()
	rec := gotpc.Record{Phase: phase, Warehouses: 1, Threads: threads, Seconds: 6.1}
	read := func(name string) string {
		b, err := os.ReadFile("../../internal/gotpc/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	switch phase {
	case gotpc.PhaseRun, gotpc.PhaseWarmup:
		res, err := gotpc.Parse(read("mariadb-10.11-run.log"))
		if err != nil {
			t.Fatal(err)
		}
		rec.Result = &res
	case gotpc.PhaseCheck:
		res, err := gotpc.ParseCheck(read("mariadb-10.11-check.log"))
		if err != nil {
			t.Fatal(err)
		}
		rec.Check = &res
	}
	line, err := rec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return string(line)
}

// A run with workload.client go-tpc: sysbench's probe, go-tpc's prepare with the load threads,
// the warm-up and the ladder as go-tpc runs in the go-tpc image, the consistency check after the
// ladder with its own deadline; each step's tpmC and transaction types in the status and
// results.json.
func TestGoTPCRunEndToEnd(t *testing.T) {
	ns := newNamespace(t)
	run0 := gotpcRecord(t, gotpc.PhaseRun, 2)
	startOperator(t, ns, operatorOptions{log: run0})
	var jobs []*batchv1.Job
	kl := startKubelet(t, ns, func(job *batchv1.Job) outcome {
		jobs = append(jobs, job.DeepCopy())
		switch job.Labels[specs.LabelStep] {
		case "probe":
			return outcome{message: probeMessage}
		case "prepare":
			return outcome{message: gotpcRecord(t, gotpc.PhasePrepare, 4)}
		case "warmup":
			return outcome{message: gotpcRecord(t, gotpc.PhaseWarmup, 2)}
		case "check":
			return outcome{message: gotpcRecord(t, gotpc.PhaseCheck, 0)}
		}
		return outcome{message: run0}
	})

	run := baseRun(ns, "tpcc", 1, 4)
	run.Spec.Targets = run.Spec.Targets[:1]
	run.Spec.Workload = v1.Workload{Client: v1.ClientGoTPC, TPCC: &v1.TPCCWorkload{Warehouses: 4,
		CheckTimeout: &metav1.Duration{Duration: 45 * time.Minute}}}
	run.Spec.Ladder.StepDuration = &metav1.Duration{Duration: 6 * time.Second}
	run.Spec.Ladder.Warmup = &metav1.Duration{Duration: 3 * time.Second}
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "tpcc", 60*time.Second, "the run to finish", finished)
	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("phase %s, want Succeeded; status %+v", got.Status.Phase, got.Status)
	}
	want := []string{"tpcc-mariadb-probe-a0", "tpcc-mariadb-prepare-a0", "tpcc-mariadb-warmup-a0", "tpcc-mariadb-s01-a0",
		"tpcc-mariadb-s02-a0", "tpcc-mariadb-check-a0"}
	if !slices.Equal(kl.finished(), want) {
		t.Errorf("jobs %v, want %v", kl.finished(), want)
	}
	for _, job := range jobs {
		c := job.Spec.Template.Spec.Containers[0]
		step, args := job.Labels[specs.LabelStep], strings.Join(c.Args, " ")
		if step == "probe" {
			if c.Image == v1.DefaultGoTPCImage || !strings.Contains(args, "probe") {
				t.Errorf("probe runs %s %q, want sysbench's probe", c.Image, c.Args)
			}
			continue
		}
		if c.Image != v1.DefaultGoTPCImage || !slices.Equal(c.Command, []string{gotpc.LauncherPath}) {
			t.Errorf("step %s runs %s %q, want the launcher in %s", step, c.Image, c.Command, v1.DefaultGoTPCImage)
		}
		if !strings.Contains(args, "--warehouses=4") || strings.Contains(args, "password") && !strings.Contains(args, "$(") {
			t.Errorf("step %s args %q", step, args)
		}
		if step == "check" && ptrValue(job.Spec.ActiveDeadlineSeconds) != 45*60 {
			t.Errorf("the check's deadline is %d s, want workload.tpcc.checkTimeout (2700 s)", ptrValue(job.Spec.ActiveDeadlineSeconds))
		}
	}

	ts := got.Status.Targets[0]
	if len(ts.Steps) != 2 {
		t.Fatalf("%d steps, want 2", len(ts.Steps))
	}
	for _, s := range ts.Steps {
		if s.TPCC == nil || s.TPCC.TpmC != 22316.6 || len(s.TPCC.Transactions) != 5 || s.QPS.Total != 0 ||
			s.Latency.P95Ms != 6.3 || s.OverDuration {
			t.Errorf("step %+v, want tpmC 22316.6, 5 transaction types, new-order p95 6.3 ms, no QPS", s)
		}
	}

	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "tpcc-results"}, cm); err != nil {
		t.Fatal(err)
	}
	doc, err := results.Decode([]byte(cm.Data[report.KeyResultsJSON]))
	if err != nil {
		t.Fatal(err)
	}
	if w := doc.Workload; w.Client != "go-tpc" || w.TPCC == nil || w.TPCC.Warehouses != 4 || !w.TPCC.Check {
		t.Errorf("results.json workload %+v, want go-tpc with 4 warehouses and the check", w)
	}
	md := cm.Data["report.md"]
	for _, want := range []string{"## tpmC by threads", "| 1 | 22,317 |", "## New-order p95 latency (ms) by threads",
		"## TPC-C transactions per step", "| mariadb | 4 | 22,317 | 173535.1 % | 2,227 | 6.3 | 9.4 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
}

func ptrValue(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
