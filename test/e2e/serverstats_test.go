//go:build e2e

package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// TestServerCountersOnARealCluster checks issue #18 on real servers: every ladder step of MySQL
// 9.7 (E2E_SERVERSTATS_IMAGE) has the server's counters per query, its top performance_schema
// synch waits (synchWaits) and, when the operator may read the kubelet's stats
// (E2E_KUBELET_CPU=1), the server container's CPU seconds per query; and the same server measured
// by mysqlslap instead of sysbench gives QPS that the server's own Questions counter confirms.
// E2E_SERVERSTATS=0 skips it.
func TestServerCountersOnARealCluster(t *testing.T) {
	if os.Getenv("E2E_SECURITY") == "1" || os.Getenv("E2E_SERVERSTATS") == "0" {
		t.Skip("runs in the cluster-wide phase of the e2e suite")
	}
	ctx := context.Background()
	c := newClient(t)
	ns := e2eNamespace(ctx, t, c)
	image := env("E2E_SERVERSTATS_IMAGE", "mysql:9.7")
	// The kubelet samples a container's CPU every 10-15 s; a step needs two samples inside it.
	step, err := time.ParseDuration(env("E2E_SERVERSTATS_STEP", "40s"))
	if err != nil {
		t.Fatal(err)
	}
	threads := []int32{1, 4}
	wantCPU := os.Getenv("E2E_KUBELET_CPU") == "1"

	t.Run("sysbench", func(t *testing.T) {
		run := &v1.BenchmarkRun{
			ObjectMeta: metav1.ObjectMeta{Name: "counters", Namespace: ns},
			Spec: v1.BenchmarkRunSpec{
				Targets:        []v1.Target{{Name: "db", Image: image, SynchWaits: true}},
				Workload:       v1.Workload{Script: "oltp_read_write", Tables: 2, TableSize: 10000},
				Ladder:         v1.Ladder{Threads: threads, StepDuration: &metav1.Duration{Duration: step}},
				SysbenchImage:  os.Getenv("E2E_SYSBENCH_IMAGE"),
				StepRetryLimit: ptr.To[int32](1),
				Cleanup:        v1.CleanupAlways,
			},
		}
		recreate(t, c, run)
		got := waitSucceeded(ctx, t, c, run, 20*time.Minute)
		doc, md := finalResults(t, c, got)
		steps := serverSteps(t, doc, "db", len(threads))
		for i, st := range steps {
			th := threads[i]
			if !st.PerformanceSchema || len(st.Waits) == 0 {
				t.Errorf("%d threads: performance_schema %v, %d waits; want ON with the top waits", th, st.PerformanceSchema, len(st.Waits))
			}
			synch := false
			for _, w := range st.Waits {
				synch = synch || strings.HasPrefix(w.Event, "wait/synch/")
			}
			if !synch {
				t.Errorf("%d threads: no wait/synch/ event among the top waits %+v: synchWaits did not enable the instruments", th, st.Waits)
			}
			// oltp_read_write: 18 queries a transaction, 14 of them reads of 1 (10 point
			// selects) or 100 rows (4 ranges): InnoDB reads hundreds of rows per query.
			questions, rows := counter(st, "Questions"), counter(st, "Innodb_rows_read")
			if questions == nil || questions.PerQuery < 1 || questions.PerQuery > 1.1 {
				t.Errorf("%d threads: Questions per sysbench query %+v, want about 1 (the server counts what sysbench sent)", th, questions)
			}
			if rows == nil || rows.PerQuery < 10 {
				t.Errorf("%d threads: Innodb_rows_read per query %+v, want tens (MySQL has it; oltp_read_write reads ranges)", th, rows)
			}
			switch {
			case wantCPU && (st.CPU == nil || st.CPU.PerQuery <= 0 || st.CPU.Samples < 2):
				t.Errorf("%d threads: CPU %+v (missing: %q), want CPU seconds per query from at least 2 kubelet samples", th, st.CPU, st.CPUMissing)
			case st.CPU != nil:
				t.Logf("%d threads: %.1f µs of server CPU per query (%.2f cores, %d kubelet samples over %.1f s)",
					th, st.CPU.PerQuery*1e6, st.CPU.PerSecond, st.CPU.Samples, st.CPU.To-st.CPU.From)
			default:
				t.Logf("%d threads: CPU per query not measured: %s", th, st.CPUMissing)
			}
		}
		// report.md names events without their wait/ and synch/ prefixes.
		if !strings.Contains(md, "Top waits:") || (wantCPU && !strings.Contains(md, "| Threads | CPU µs |")) {
			t.Errorf("report.md lacks the top waits or the CPU column:\n%s", md)
		}
		t.Logf("report.md:\n%s", md)
	})

	t.Run("mysqlslap", func(t *testing.T) {
		const queries = 20000
		run := &v1.BenchmarkRun{
			ObjectMeta: metav1.ObjectMeta{Name: "slap", Namespace: ns},
			Spec: v1.BenchmarkRunSpec{
				Targets: []v1.Target{{Name: "db", Image: image}},
				Workload: v1.Workload{Client: v1.ClientMysqlslap,
					Mysqlslap: &v1.MysqlslapWorkload{LoadType: "key", Queries: queries, Iterations: 2}},
				Ladder:         v1.Ladder{Threads: threads, StepDuration: &metav1.Duration{Duration: 5 * time.Minute}},
				SysbenchImage:  os.Getenv("E2E_SYSBENCH_IMAGE"),
				StepRetryLimit: ptr.To[int32](1),
				Cleanup:        v1.CleanupAlways,
			},
		}
		recreate(t, c, run)
		got := waitSucceeded(ctx, t, c, run, 20*time.Minute)
		ts := got.Status.Targets[0]
		if len(ts.Steps) != len(threads) {
			t.Fatalf("%d steps, want %d", len(ts.Steps), len(threads))
		}
		for i, s := range ts.Steps {
			if s.Threads != threads[i] || s.QPS.Total <= 0 || s.DurationSeconds <= 0 {
				t.Errorf("step %d: %+v, want mysqlslap's QPS at %d clients", i, s, threads[i])
			}
			t.Logf("mysqlslap, %d clients: %.0f QPS (%.3f s per iteration)", s.Threads, s.QPS.Total, s.DurationSeconds)
		}
		doc, md := finalResults(t, c, got)
		for i, st := range serverSteps(t, doc, "db", len(threads)) {
			// The server counted at least the queries mysqlslap timed, in each of 2 iterations
			// (plus its schema set-up and each client's connection queries).
			q := counter(st, "Questions")
			if q == nil || q.Delta < 2*uint64(queries/threads[i]*threads[i]) {
				t.Errorf("%d clients: Questions %+v, want at least the %d queries of 2 iterations", threads[i], q, queries)
			}
		}
		if !strings.Contains(md, "mysqlslap") {
			t.Errorf("report.md does not say mysqlslap measured:\n%s", md)
		}
		t.Logf("report.md:\n%s", md)
	})
}

// finalResults is a finished run's results.json, decoded, and its report.md.
func finalResults(t *testing.T, c client.Client, run *v1.BenchmarkRun) (*results.Doc, string) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: run.Namespace, Name: run.Status.ResultsConfigMap}, cm); err != nil {
		t.Fatal(err)
	}
	doc, err := results.Decode([]byte(cm.Data[report.KeyResultsJSON]))
	if err != nil {
		t.Fatalf("results.json: %v", err)
	}
	return doc, cm.Data["report.md"]
}

// serverSteps are target's server counters of each ladder step, in order; every step must have
// them.
func serverSteps(t *testing.T, doc *results.Doc, target string, want int) []serverstats.Step {
	t.Helper()
	var out []serverstats.Step
	for _, tr := range doc.Targets {
		if tr.Name != target {
			continue
		}
		for _, s := range tr.Steps {
			st, ok, err := s.DecodedServer()
			if err != nil || !ok {
				t.Fatalf("target %s, %d threads: server counters %v (stored: %v)", target, s.Threads, err, ok)
			}
			out = append(out, st)
		}
	}
	if len(out) != want {
		t.Fatalf("target %s: %d steps with server counters, want %d", target, len(out), want)
	}
	return out
}

func counter(st serverstats.Step, name string) *serverstats.Counter {
	for i := range st.Counters {
		if st.Counters[i].Name == name && st.Counters[i].Source == serverstats.SourceStatus {
			return &st.Counters[i]
		}
	}
	return nil
}
