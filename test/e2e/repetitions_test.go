//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// TestRepetitionsOnARealCluster measures 2 targets (MariaDB 10.11 with performance_schema ON and
// OFF) x 3 thread counts x 5 repetitions on real servers (#15): every cell must have 5
// repetitions, measured in rounds that alternate ascending and descending thread counts, with
// its median, confidence interval and CV in the status and the report. It logs the measured CV
// of every cell: the between-repetition noise of this cluster. E2E_REPETITIONS_IMAGE picks the
// image; E2E_REPETITIONS=0 skips it.
func TestRepetitionsOnARealCluster(t *testing.T) {
	if os.Getenv("E2E_SECURITY") == "1" || os.Getenv("E2E_REPETITIONS") == "0" {
		t.Skip("runs in the cluster-wide phase of the e2e suite")
	}
	ctx := context.Background()
	c := newClient(t)
	ns := env("E2E_NAMESPACE", "mysqlbench-e2e")
	image := env("E2E_REPETITIONS_IMAGE", "mariadb:10.11")
	const reps = 5
	threads := []int32{1, 2, 4}
	run := &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "reps", Namespace: ns},
		Spec: v1.BenchmarkRunSpec{
			Targets: []v1.Target{
				{Name: "ps-on", Image: image, MyCnf: "performance_schema = ON"},
				{Name: "ps-off", Image: image, MyCnf: "performance_schema = OFF"},
			},
			Workload: v1.Workload{Script: "oltp_point_select", Tables: 2, TableSize: 10000},
			Ladder: v1.Ladder{Threads: threads, StepDuration: &metav1.Duration{Duration: 5 * time.Second},
				Warmup: &metav1.Duration{Duration: 5 * time.Second}},
			Repetitions:    ptr.To[int32](reps),
			SysbenchImage:  os.Getenv("E2E_SYSBENCH_IMAGE"),
			StepRetryLimit: ptr.To[int32](1),
			Cleanup:        v1.CleanupAlways,
		},
	}
	recreate(t, c, run)
	got := waitSucceeded(ctx, t, c, run, 30*time.Minute)
	var table []string
	for _, ts := range got.Status.Targets {
		if len(ts.Steps) != reps*len(threads) {
			t.Errorf("target %s: %d steps, want %d", ts.Name, len(ts.Steps), reps*len(threads))
		}
		// Rounds in order, ascending then descending thread counts, each step once.
		var order []string
		for _, s := range ts.Steps {
			order = append(order, fmt.Sprintf("%d@%d", s.Threads, max(s.Repetition, 1)))
		}
		var want []string
		for r := 1; r <= reps; r++ {
			for i := range threads {
				th := threads[i]
				if r%2 == 0 {
					th = threads[len(threads)-1-i]
				}
				want = append(want, fmt.Sprintf("%d@%d", th, r))
			}
		}
		if strings.Join(order, " ") != strings.Join(want, " ") {
			t.Errorf("target %s measured threads@repetition %v, want %v", ts.Name, order, want)
		}
		if len(ts.Cells) != len(threads) {
			t.Errorf("target %s: %d cells in status, want %d", ts.Name, len(ts.Cells), len(threads))
		}
		sort.Slice(ts.Cells, func(i, j int) bool { return ts.Cells[i].Threads < ts.Cells[j].Threads })
		for _, cell := range ts.Cells {
			q := cell.QPS
			if cell.N != reps || q.Median <= 0 || q.CILow > q.Median || q.Median > q.CIHigh || q.Min > q.CILow || q.CIHigh > q.Max {
				t.Errorf("target %s, %d threads: n %d, QPS %+v: want n %d and min <= ciLow <= median <= ciHigh <= max",
					ts.Name, cell.Threads, cell.N, q, reps)
			}
			table = append(table, fmt.Sprintf("| %s | %d | %d | %.0f | [%.0f, %.0f] (%.1f%%) | %.2f%% | %.2f%% | %.3f |",
				ts.Name, cell.Threads, cell.N, q.Median, q.CILow, q.CIHigh, 100*q.CIConfidence, 100*q.CV,
				100*cell.TPS.CV, cell.P95Ms.Median))
		}
	}
	t.Logf("measured per cell (%d repetitions, 5 s steps):\n| target | threads | n | QPS median | CI of the median (confidence) | QPS CV | TPS CV | p95 ms median |\n|---|---:|---:|---:|---|---:|---:|---:|\n%s",
		reps, strings.Join(table, "\n"))
	report := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: got.Status.ResultsConfigMap}, report); err != nil {
		t.Fatal(err)
	}
	if md := report.Data["report.md"]; !strings.Contains(md, "## Statistics per cell") {
		t.Errorf("report.md has no statistics per cell:\n%s", md)
	}
	if err := c.Delete(ctx, got); err != nil {
		t.Error(err)
	}
	waitGone(t, c, got)
}
