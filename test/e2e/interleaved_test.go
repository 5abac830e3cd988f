//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// TestInterleavedAAOnARealCluster runs the same image as two targets in interleaved order
// (both servers up together on the database node, cells measured in randomized rounds), twice:
//   - inside each run the two identical targets must compare equal: not Regressed, and the
//     interval of their geometric-mean QPS ratio must reach into 1 ± the minimum effect (5 %);
//   - the second run compared with the first (an A/A pair of real runs) must not be Regressed.
//
// It logs the figures. E2E_INTERLEAVED_IMAGE picks the image, E2E_INTERLEAVED_THREADS the ladder
// (1,4); E2E_INTERLEAVED=0 skips it.
func TestInterleavedAAOnARealCluster(t *testing.T) {
	if os.Getenv("E2E_SECURITY") == "1" || os.Getenv("E2E_INTERLEAVED") == "0" {
		t.Skip("runs in the cluster-wide phase of the e2e suite")
	}
	ctx := context.Background()
	c := newClient(t)
	ns := env("E2E_NAMESPACE", "mysqlbench-e2e")
	image := env("E2E_INTERLEAVED_IMAGE", "mariadb:10.11")
	const reps = 3
	threads := e2eThreads(t, "E2E_INTERLEAVED_THREADS", "1,4")
	spec := v1.BenchmarkRunSpec{
		Targets:  []v1.Target{{Name: "a", Image: image}, {Name: "b", Image: image}},
		Workload: v1.Workload{Script: "oltp_point_select", Tables: 2, TableSize: 10000},
		Ladder: v1.Ladder{Threads: threads, StepDuration: &metav1.Duration{Duration: 5 * time.Second},
			Warmup: &metav1.Duration{Duration: 5 * time.Second}},
		Repetitions:    ptr.To[int32](reps),
		Order:          v1.OrderInterleaved,
		SysbenchImage:  os.Getenv("E2E_SYSBENCH_IMAGE"),
		StepRetryLimit: ptr.To[int32](1),
		Cleanup:        v1.CleanupAlways,
	}
	var runs []*v1.BenchmarkRun
	for i := range 2 {
		run := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("aa-%d", i+1), Namespace: ns}, Spec: *spec.DeepCopy()}
		recreate(t, c, run)
		checkServersTogether(ctx, t, c, run)
		got := waitSucceeded(ctx, t, c, run, 30*time.Minute)
		runs = append(runs, got)
		checkInterleavedOrder(t, got)

		// Target b against target a of the same run: the same image, so no difference.
		asRun := func(name, target string) *v1.BenchmarkRun {
			r := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name}}
			for _, ts := range got.Status.Targets {
				if ts.Name == target {
					ts.Name = "same"
					r.Status.Targets = append(r.Status.Targets, ts)
				}
			}
			return r
		}
		res := compare.Compare(asRun(got.Name+"/b", "b"), asRun(got.Name+"/a", "a"), v1.RegressionPolicy{})
		tc := res.Summary.Targets[0]
		t.Logf("%s, target b against target a: %s; %s", got.Name, res.Summary.Verdict, compare.DescribeTarget(res.Summary.Metric, tc))
		// Equal as far as the data can tell: no regression, and the interval of the ratio reaches
		// into the band the verdicts treat as no change (the minimum effect, 5 %). Requiring it to
		// hold 1 exactly would fail one A/A pair in twenty by design (a 95 % interval), which is
		// not a verdict anyone acts on; one wholly outside the band would be.
		const band = 0.05
		if res.Summary.Verdict == v1.VerdictRegressed || tc.QPSHigh == 0 || tc.QPSLow > 1+band || tc.QPSHigh < 1-band {
			t.Errorf("%s: two identical interleaved targets differ: %s", got.Name, res.Summary.Message)
		}
	}
	res := compare.Compare(runs[1], runs[0], v1.RegressionPolicy{})
	var ratios []string
	for _, tc := range res.Summary.Targets {
		ratios = append(ratios, compare.DescribeTarget(res.Summary.Metric, tc))
	}
	t.Logf("A/A pair of real runs, %s against %s: %s; %s", runs[1].Name, runs[0].Name, res.Summary.Verdict, strings.Join(ratios, "; "))
	if res.Summary.Verdict == v1.VerdictRegressed {
		t.Errorf("the same spec run twice ended Regressed: %s", res.Summary.Message)
	}
	for _, r := range runs {
		if err := c.Delete(ctx, r); err != nil {
			t.Error(err)
		}
		waitGone(t, c, r)
	}
}

// checkInterleavedOrder checks that the run's steps were measured in its interleaved order: each
// step's start time follows the previous slot's.
func checkInterleavedOrder(t *testing.T, run *v1.BenchmarkRun) {
	t.Helper()
	steps := map[string][]v1.StepResult{}
	for _, ts := range run.Status.Targets {
		steps[ts.Name] = ts.Steps
	}
	var prev *metav1.Time
	for i, s := range specs.InterleavedOrder(run) {
		st := steps[s.Target][s.Step]
		if st.StartTime == nil {
			t.Errorf("%s: slot %d (%s step %d) has no start time", run.Name, i, s.Target, s.Step)
			return
		}
		if prev != nil && st.StartTime.Before(prev) {
			t.Errorf("%s: slot %d (%s step %d) started at %s, before the slot before it (%s)", run.Name, i, s.Target, s.Step, st.StartTime, prev)
		}
		prev = st.StartTime
	}
}

// checkServersTogether waits until both targets measure and checks that their servers run
// together on one node, as order Interleaved promises.
func checkServersTogether(ctx context.Context, t *testing.T, c client.Client, run *v1.BenchmarkRun) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Minute)
	for {
		got := &v1.BenchmarkRun{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			t.Fatal(err)
		}
		running := 0
		for _, ts := range got.Status.Targets {
			if ts.Phase == v1.TargetRunning {
				running++
			}
		}
		if running == len(run.Spec.Targets) {
			break
		}
		if got.Status.Phase == v1.RunSucceeded || got.Status.Phase == v1.RunFailed || time.Now().After(deadline) {
			t.Fatalf("%s never had every target measuring: %+v", run.Name, got.Status)
		}
		time.Sleep(time.Second)
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(run.Namespace),
		client.MatchingLabels{specs.LabelRun: specs.LabelValue(run.Name), specs.LabelComponent: specs.ComponentServer}); err != nil {
		t.Fatal(err)
	}
	nodes := map[string]int{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			nodes[p.Spec.NodeName]++
		}
	}
	if len(nodes) != 1 || len(pods.Items) != len(run.Spec.Targets) {
		t.Errorf("%s: server pods by node %v (%d pods): want all %d together on one node", run.Name, nodes, len(pods.Items), len(run.Spec.Targets))
	}
	t.Logf("%s: the %d servers run together on node(s) %v", run.Name, len(pods.Items), nodes)
}
