//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// The multi-node cases need a database pool of at least two nodes (the local cluster with
// LOCALCLUSTER_DATABASE_NODES=2: make test-multinode); they run only with E2E_MULTINODE=1, since
// on a one-node pool they would only measure queueing.

// multiNode skips the test unless E2E_MULTINODE=1, and fails it unless the database pool has at
// least two Ready nodes. It returns the pool's node names.
func multiNode(t *testing.T, c client.Client) []string {
	t.Helper()
	if os.Getenv("E2E_MULTINODE") != "1" {
		t.Skip("needs a database pool of two nodes: E2E_MULTINODE=1 (make test-multinode)")
	}
	nodes := &corev1.NodeList{}
	if err := c.List(context.Background(), nodes, client.MatchingLabels{"mysqlbench.io/pool": "database"}); err != nil {
		t.Fatal(err)
	}
	var ready []string
	for _, n := range nodes.Items {
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue && !n.Spec.Unschedulable {
				ready = append(ready, n.Name)
			}
		}
	}
	sort.Strings(ready)
	if len(ready) < 2 {
		t.Fatalf("E2E_MULTINODE=1 but the database pool has %d Ready node(s) %v: start the cluster with LOCALCLUSTER_DATABASE_NODES=2", len(ready), ready)
	}
	return ready
}

// multiNodeNamespace creates (or reuses) a namespace for the multi-node cases.
func multiNodeNamespace(t *testing.T, c client.Client, name string) string {
	t.Helper()
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return name
}

// twoTargetSpec is a run of two identical MariaDB targets whose ladder is fixed time (steps of
// E2E_MULTINODE_STEP), so running them at once should take about the time of one.
func twoTargetSpec(t *testing.T) v1.BenchmarkRunSpec {
	t.Helper()
	step, err := time.ParseDuration(env("E2E_MULTINODE_STEP", "10s"))
	if err != nil || step < time.Second {
		t.Fatalf("E2E_MULTINODE_STEP=%q: want a duration of at least 1s", os.Getenv("E2E_MULTINODE_STEP"))
	}
	image := env("E2E_MULTINODE_IMAGE", "mariadb:10.11")
	return v1.BenchmarkRunSpec{
		Targets:  []v1.Target{{Name: "a", Image: image}, {Name: "b", Image: image}},
		Workload: v1.Workload{Script: "oltp_point_select", Tables: 1, TableSize: 10000},
		Ladder: v1.Ladder{Threads: []int32{1, 2, 4, 8}, StepDuration: &metav1.Duration{Duration: step},
			Warmup: &metav1.Duration{Duration: 3 * time.Second}},
		SysbenchImage:  os.Getenv("E2E_SYSBENCH_IMAGE"),
		StepRetryLimit: ptr.To[int32](1),
		Cleanup:        v1.CleanupAlways,
	}
}

// timeRun creates the run and returns it finished (Succeeded, or the test fails) with the wall
// time from its creation until the test saw it succeed (polled every 500 ms).
func timeRun(ctx context.Context, t *testing.T, c client.Client, run *v1.BenchmarkRun) (*v1.BenchmarkRun, time.Duration) {
	t.Helper()
	_ = c.Delete(ctx, run)
	waitGone(t, c, run)
	t0 := time.Now()
	if err := c.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	got := &v1.BenchmarkRun{}
	for deadline := t0.Add(20 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			t.Fatal(err)
		}
		if got.Status.Phase.Finished() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s not finished after 20m: %+v", run.Name, got.Status)
		}
	}
	wall := time.Since(t0)
	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("run %s: %s, want Succeeded: %+v", run.Name, got.Status.Phase, got.Status.Targets)
	}
	return got, wall
}

// TestMultiNodeParallelTargets runs the same two-target run in order Sequential and in order
// Parallel on a pool of two database nodes: the parallel run must take at most 0.6 of the
// sequential wall time (E2E_MULTINODE_MAX_RATIO), its targets must have measured at the same
// time on different nodes, each recorded in status.targets[].node, and report.md must say that
// the targets ran on different nodes.
func TestMultiNodeParallelTargets(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	pool := multiNode(t, c)
	ns := multiNodeNamespace(t, c, env("E2E_MULTINODE_NAMESPACE", "mysqlbench-e2e-multinode"))
	maxRatio := 0.6
	if v := os.Getenv("E2E_MULTINODE_MAX_RATIO"); v != "" {
		if _, err := fmt.Sscanf(v, "%g", &maxRatio); err != nil || maxRatio <= 0 {
			t.Fatalf("E2E_MULTINODE_MAX_RATIO=%q: want a positive number", v)
		}
	}

	seq := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "sequential", Namespace: ns}, Spec: twoTargetSpec(t)}
	seqDone, seqWall := timeRun(ctx, t, c, seq)
	par := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "parallel", Namespace: ns}, Spec: twoTargetSpec(t)}
	par.Spec.Order = v1.OrderParallel
	parDone, parWall := timeRun(ctx, t, c, par)

	ratio := parWall.Seconds() / seqWall.Seconds()
	t.Logf("2 targets x %d steps of %s on %d database nodes %v: Sequential %s, Parallel %s: ratio %.2f (at most %.2f)",
		len(seq.Spec.Ladder.Threads), seq.Spec.Ladder.StepDuration.Duration, len(pool), pool,
		seqWall.Round(100*time.Millisecond), parWall.Round(100*time.Millisecond), ratio, maxRatio)
	fmt.Printf("MULTINODE parallel/sequential wall time: %.1f s / %.1f s = %.2f\n", parWall.Seconds(), seqWall.Seconds(), ratio)
	if ratio > maxRatio {
		t.Errorf("the parallel run took %.2f of the sequential wall time, want at most %.2f", ratio, maxRatio)
	}

	// The parallel targets: each on its own node of the pool, recorded, and measuring together.
	nodes := map[string]string{}
	var spans [][2]time.Time
	for _, ts := range parDone.Status.Targets {
		if ts.Node == nil || ts.Node.Name == "" {
			t.Errorf("parallel target %s recorded no node", ts.Name)
			continue
		}
		nodes[ts.Name] = ts.Node.Name
		if !contains(pool, ts.Node.Name) {
			t.Errorf("parallel target %s ran on %s, not a node of the database pool %v", ts.Name, ts.Node.Name, pool)
		}
		if ts.Node.CPUCapacity == nil || ts.Node.KernelVersion == "" {
			t.Errorf("parallel target %s: node facts without CPU or kernel: %+v", ts.Name, ts.Node)
		}
		first, last := ts.Steps[0], ts.Steps[len(ts.Steps)-1]
		if first.StartTime != nil && last.FinishTime != nil {
			spans = append(spans, [2]time.Time{first.StartTime.Time, last.FinishTime.Time})
		}
	}
	if len(nodes) == 2 && nodes["a"] == nodes["b"] {
		t.Errorf("both parallel targets ran on %s, want one node each", nodes["a"])
	}
	overlap := len(spans) == 2 && spans[0][0].Before(spans[1][1]) && spans[1][0].Before(spans[0][1])
	if len(spans) == 2 && !overlap {
		t.Errorf("the parallel targets' ladders did not overlap: %v and %v", spans[0], spans[1])
	}
	t.Logf("parallel: target a on %s, b on %s; sequential: a on %s, b on %s", nodes["a"], nodes["b"],
		nodeOf(seqDone, "a"), nodeOf(seqDone, "b"))
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: specs.ResultsConfigMapName(parDone)}, cm); err != nil {
		t.Fatal(err)
	}
	report := cm.Data["report.md"]
	if !strings.Contains(report, "## Nodes") || !strings.Contains(report, "different nodes") {
		t.Errorf("report.md of the parallel run names no nodes or does not say the targets ran on different nodes:\n%s", report)
	}
	for _, r := range []*v1.BenchmarkRun{seqDone, parDone} {
		if err := c.Delete(ctx, r); err != nil {
			t.Error(err)
		}
	}
}

var positionRE = regexp.MustCompile(`: position (\d+)`)

func nodeOf(run *v1.BenchmarkRun, target string) string {
	for _, ts := range run.Status.Targets {
		if ts.Name == target && ts.Node != nil {
			return ts.Node.Name
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestMultiNodeRunsShareThePool creates three runs from two namespaces at once for a pool of two
// nodes: the first (two targets, Parallel) takes both nodes; the second and third wait, say
// Queued with positions 1 and 2, and take the nodes as the first run's targets free them, first
// come first served. No run fails for waiting, and no more servers than nodes ever run at once.
func TestMultiNodeRunsShareThePool(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	pool := multiNode(t, c)
	nsA := multiNodeNamespace(t, c, env("E2E_MULTINODE_NAMESPACE", "mysqlbench-e2e-multinode"))
	nsB := multiNodeNamespace(t, c, nsA+"-b")

	first := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "share-1", Namespace: nsA}, Spec: twoTargetSpec(t)}
	first.Spec.Order = v1.OrderParallel
	one := func(ns, name string) *v1.BenchmarkRun {
		r := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: twoTargetSpec(t)}
		r.Spec.Targets = r.Spec.Targets[:1]
		r.Spec.Ladder.Threads = []int32{1, 4}
		return r
	}
	runs := []*v1.BenchmarkRun{first, one(nsB, "share-2"), one(nsA, "share-3")}
	for i, r := range runs {
		_ = c.Delete(ctx, r)
		waitGone(t, c, r)
		if err := c.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		if i < len(runs)-1 {
			time.Sleep(1100 * time.Millisecond) // the queue orders by start time, in whole seconds
		}
	}

	// Watch the servers and the conditions until all three finish.
	positions := map[string]bool{}
	maxServers := 0
	for deadline := time.Now().Add(30 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.MatchingLabels{specs.LabelComponent: specs.ComponentServer}); err == nil {
			up := 0
			for _, p := range pods.Items {
				if (p.Namespace == nsA || p.Namespace == nsB) && p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
					up++
				}
			}
			maxServers = max(maxServers, up)
		}
		done := 0
		for _, r := range runs {
			got := &v1.BenchmarkRun{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(r), got); err != nil {
				continue
			}
			if got.Status.Phase.Finished() {
				done++
				continue
			}
			if cond := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionProgressing); cond != nil && cond.Reason == "Queued" {
				if m := positionRE.FindStringSubmatch(cond.Message); m != nil {
					positions[got.Name+" position "+m[1]] = true
				}
			}
		}
		if done == len(runs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the three runs did not finish within 30m")
		}
	}

	// Each target holds a node from its startTime to its completionTime: at no moment more
	// targets than nodes, and the later runs started after the first run's targets freed nodes.
	type hold struct {
		name       string
		start, end time.Time
	}
	var holds []hold
	var firstRunEnds []time.Time
	starts := map[string]time.Time{}
	for _, r := range runs {
		got := &v1.BenchmarkRun{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(r), got); err != nil {
			t.Fatal(err)
		}
		if got.Status.Phase != v1.RunSucceeded {
			t.Errorf("run %s/%s: %s, want Succeeded: a queued run never fails for waiting", got.Namespace, got.Name, got.Status.Phase)
		}
		for _, ts := range got.Status.Targets {
			if ts.StartTime == nil || ts.CompletionTime == nil {
				t.Errorf("run %s target %s: no start or completion time", got.Name, ts.Name)
				continue
			}
			holds = append(holds, hold{got.Name + "/" + ts.Name, ts.StartTime.Time, ts.CompletionTime.Time})
			if got.Name == "share-1" {
				firstRunEnds = append(firstRunEnds, ts.CompletionTime.Time)
			} else {
				starts[got.Name] = ts.StartTime.Time
			}
		}
		if err := c.Delete(ctx, got); err != nil {
			t.Error(err)
		}
	}
	for _, h := range holds {
		at := 0
		for _, o := range holds {
			if !o.start.After(h.start) && o.end.After(h.start) {
				at++
			}
		}
		if at > len(pool) {
			t.Errorf("%d targets held nodes at %s (when %s started), the pool has %d", at, h.start.Format(time.RFC3339), h.name, len(pool))
		}
	}
	sort.Slice(firstRunEnds, func(i, j int) bool { return firstRunEnds[i].Before(firstRunEnds[j]) })
	if len(firstRunEnds) == 2 {
		if s := starts["share-2"]; s.Before(firstRunEnds[0]) {
			t.Errorf("share-2 started at %s, before share-1 freed a node (%s)", s, firstRunEnds[0])
		}
		if s := starts["share-3"]; s.Before(starts["share-2"]) {
			t.Errorf("share-3 (created third) started at %s, before share-2 (%s): not first come, first served", s, starts["share-2"])
		}
	}
	// A target's server must not wait for the scheduler once the queue gave it a node: a node
	// handed on while the last server's pod still shut down left the next one unschedulable for
	// minutes (the scheduler's retry of unschedulable pods), where a one-target run of this
	// ladder takes well under a minute.
	for _, h := range holds {
		if h.name != "share-2/a" && h.name != "share-3/a" {
			continue
		}
		if d := h.end.Sub(h.start); d > 150*time.Second {
			t.Errorf("%s held its node for %s, want under 150 s for two 10 s steps: did its server wait to be scheduled?", h.name, d)
		}
	}
	if maxServers > len(pool) {
		t.Errorf("%d server pods of these runs were scheduled at once, the pool has %d nodes", maxServers, len(pool))
	}
	if !positions["share-2 position 1"] || !positions["share-3 position 2"] {
		t.Errorf("queue positions seen: %v; want share-2 at 1 and share-3 at 2", positions)
	}
	var spans []string
	for _, h := range holds {
		spans = append(spans, fmt.Sprintf("%s %s-%s", h.name, h.start.Format("15:04:05"), h.end.Format("15:04:05")))
	}
	t.Logf("three runs from namespaces %s and %s on %d nodes: at most %d servers at once; queue positions seen %v; targets held nodes: %s",
		nsA, nsB, len(pool), maxServers, positions, strings.Join(spans, ", "))
}
