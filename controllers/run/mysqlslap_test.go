package run_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/stepjob"
)

// Real mysqlslap runs (internal/mysqlslap's real captures against MySQL 9.7.4): a 4-client run of
// 500 queries per client, its termination message and its log with the server snapshots.
const mysqlslapCaptures = "../../internal/mysqlslap/testdata/"

func mysqlslapCapture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(mysqlslapCaptures + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A run with workload.client mysqlslap: the probe is sysbench's, there is no prepare, the ladder
// steps run mysqlslap in the target's server image, their QPS is mysqlslap's (clients × queries
// per client / average seconds), and the server's counters come from the snapshots the launcher
// took with the image's own client.
func TestMysqlslapRunEndToEnd(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{log: mysqlslapCapture(t, "mysql-9.7-stats.log")})
	slap := mysqlslapCapture(t, "mysql-9.7-stats.term")
	var jobs []*batchv1.Job
	kl := startKubelet(t, ns, func(job *batchv1.Job) outcome {
		jobs = append(jobs, job.DeepCopy())
		if job.Labels[specs.LabelStep] == "probe" {
			return outcome{message: probeMessage}
		}
		return outcome{message: slap}
	})

	run := baseRun(ns, "slap", 1, 4)
	run.Spec.Targets = run.Spec.Targets[:1]
	run.Spec.Targets[0].Image = "mysql:9.7"
	run.Spec.Workload = v1.Workload{Client: v1.ClientMysqlslap,
		Mysqlslap: &v1.MysqlslapWorkload{LoadType: "key", Queries: 2000, Iterations: 2}}
	run.Spec.Ladder.StepDuration = &metav1.Duration{Duration: 2 * time.Minute}
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "slap", 60*time.Second, "the run to finish", finished)
	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("phase %s, want Succeeded; status %+v", got.Status.Phase, got.Status)
	}
	if want := []string{"slap-mariadb-probe-a0", "slap-mariadb-s01-a0", "slap-mariadb-s02-a0"}; strings.Join(kl.finished(), ",") != strings.Join(want, ",") {
		t.Errorf("jobs %v, want %v (no prepare, no cleanup)", kl.finished(), want)
	}
	for _, job := range jobs {
		c := job.Spec.Template.Spec.Containers[0]
		step := job.Labels[specs.LabelStep]
		switch {
		case step == "probe" && (c.Image == "mysql:9.7" || !strings.Contains(strings.Join(c.Args, " "), "probe")):
			t.Errorf("probe runs %s %q, want sysbench's probe", c.Image, c.Args)
		case step != "probe" && (c.Image != "mysql:9.7" || !strings.Contains(strings.Join(c.Args, " "), "--concurrency=")):
			t.Errorf("step %s runs %s %q, want mysqlslap in the server's image", step, c.Image, c.Args)
		}
	}

	// The capture: 4 clients x 500 queries in 0.944 s on average.
	wantQPS := 4 * 500 / 0.944
	ts := got.Status.Targets[0]
	if len(ts.Steps) != 2 {
		t.Fatalf("%d steps, want 2", len(ts.Steps))
	}
	for _, s := range ts.Steps {
		if d := s.QPS.Total - wantQPS; d > 0.01 || d < -0.01 || s.DurationSeconds != 0.944 || s.Latency.P95Ms != 0 || s.TPS != 0 {
			t.Errorf("step %+v, want QPS %.2f over 0.944 s and no latency or TPS", s, wantQPS)
		}
	}

	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "slap-results"}, cm); err != nil {
		t.Fatal(err)
	}
	doc, err := results.Decode([]byte(cm.Data[report.KeyResultsJSON]))
	if err != nil {
		t.Fatal(err)
	}
	if w := doc.Workload; w.Client != "mysqlslap" || w.Mysqlslap == nil || w.Mysqlslap.LoadType != "key" || w.Mysqlslap.Queries != 2000 {
		t.Errorf("results.json workload %+v, want mysqlslap key 2000", w)
	}
	for _, s := range doc.Targets[0].Steps {
		st, ok, err := s.DecodedServer()
		if err != nil || !ok {
			t.Fatalf("%d threads: server counters %v %v", s.Threads, ok, err)
		}
		if st.Queries != 4000 || len(st.Counters) == 0 || st.CPUMissing != stepjob.CPUOff {
			t.Errorf("%d threads: server step over %v queries, %d counters, CPU missing %q", s.Threads, st.Queries, len(st.Counters), st.CPUMissing)
		}
	}
	md := cm.Data["report.md"]
	for _, want := range []string{"mysqlslap `key` load", "QPS is mysqlslap's", "| 4 | 2,119 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "p95 latency") {
		t.Errorf("report.md has a latency table for mysqlslap:\n%s", md)
	}
}
