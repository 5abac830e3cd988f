package exported

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
)

var t0 = time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)

// finishedRun is a finished run of two MariaDB targets, 1 and 2 threads, 3 repetitions each,
// as the API server returns it; qps scales its throughput (1 for the baseline).
func finishedRun(ns, name string, uid types.UID, qps float64) *v1.BenchmarkRun {
	run := &v1.BenchmarkRun{
		TypeMeta: metav1.TypeMeta{APIVersion: v1.GroupVersion.String(), Kind: "BenchmarkRun"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: uid, ResourceVersion: "42",
			CreationTimestamp: metav1.NewTime(t0)},
		Spec: v1.BenchmarkRunSpec{
			Targets: []v1.Target{
				{Name: "mariadb", Image: "mariadb:10.11"},
				{Name: "mariadb-psoff", Image: "mariadb:10.11", MyCnf: "performance_schema = OFF"},
			},
			Workload:    v1.Workload{Script: "oltp_point_select", Tables: 4, TableSize: 1000},
			Ladder:      v1.Ladder{Threads: []int32{1, 2}, StepDuration: &metav1.Duration{Duration: 3 * time.Second}},
			Repetitions: ptr.To[int32](3),
		},
		Status: v1.BenchmarkRunStatus{
			Phase:          v1.RunSucceeded,
			StartTime:      ptr.To(metav1.NewTime(t0)),
			CompletionTime: ptr.To(metav1.NewTime(t0.Add(time.Minute))),
			Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Succeeded",
				LastTransitionTime: metav1.NewTime(t0.Add(time.Minute))}},
		},
	}
	for ti, t := range run.Spec.Targets {
		ts := v1.TargetStatus{Name: t.Name, Phase: v1.TargetSucceeded, ServerVersion: "10.11.14-MariaDB",
			Node: &v1.ServerNode{Name: "node-" + t.Name}}
		for rep := int32(1); rep <= 3; rep++ {
			for _, th := range run.Spec.Ladder.Threads {
				q := qps * float64(th) * (1000 + float64(ti*100) + float64(rep*7))
				ts.Steps = append(ts.Steps, v1.StepResult{Threads: th, Repetition: rep, TPS: q, QPS: v1.QPS{Total: q, Read: q},
					Latency: v1.Latency{MinMs: 0.1, AvgMs: 0.5, P95Ms: 1 + float64(rep)/10, MaxMs: 3}, DurationSeconds: 3})
			}
		}
		ts.Cells = cells.Status(ts.Steps)
		run.Status.Targets = append(run.Status.Targets, ts)
	}
	return run
}

// resultsData is the results ConfigMap the operator would write for run.
func resultsData(t *testing.T, run *v1.BenchmarkRun) map[string]string {
	t.Helper()
	data, err := report.Render(run, nil)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func yamlOf(t *testing.T, obj any) []byte {
	t.Helper()
	data, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// write writes files (path relative to dir: contents) under dir.
func write(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// bundleFiles are the files of run's bundle, with an Event and its schedule.
func bundleFiles(t *testing.T, run *v1.BenchmarkRun) []File {
	t.Helper()
	ev := corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: run.Name + ".1", Namespace: run.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "BenchmarkRun", Name: run.Name, UID: run.UID},
		Reason:         "ServerStatsUnavailable", Message: "target mariadb: the server's counters of 1 step(s) (threads 2) are not stored: why",
		LastTimestamp: metav1.NewTime(t0.Add(30 * time.Second))}
	files, _, err := Bundle{Run: run, Results: resultsData(t, run), Events: []corev1.Event{ev}, EventsRead: true,
		ExportedAt: t0.Add(time.Hour), ExportedBy: "kubectl-mysqlbench test"}.Files()
	if err != nil {
		t.Fatal(err)
	}
	return files
}
