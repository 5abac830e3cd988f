package run_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// poolNodes creates n Ready nodes in a database pool of their own, deleted after the test, and
// returns the pool's name.
func poolNodes(t testing.TB, prefix string, n int) string {
	t.Helper()
	pool := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
	for i := range n {
		readyNode(t, fmt.Sprintf("%s-%d", pool, i), map[string]string{specs.PoolLabel: pool})
	}
	return pool
}

// activeTargets are the targets of a run past Pending that have not ended.
func activeTargets(r *v1.BenchmarkRun) []string {
	var out []string
	for _, ts := range r.Status.Targets {
		if ts.Phase != "" && ts.Phase != v1.TargetPending && !ts.Phase.Finished() {
			out = append(out, ts.Name)
		}
	}
	return out
}

// A Parallel run of three targets on a pool of two nodes measures two targets at once and
// starts the third when a node frees up; a run that started later waits behind that third
// target (first come, first served across runs), says where it stands, and never fails for
// waiting; never do more servers than nodes hold the pool.
func TestParallelTargetsShareTheirPool(t *testing.T) {
	ctx := context.Background()
	pool := poolNodes(t, "parallel", 2)
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})

	var mu sync.Mutex
	var probes []string // run/target in the order their servers were probed
	// The first two targets' first steps run until the test lets each go, one at a time.
	holding := map[string]bool{"mariadb": true, "mariadb-psoff": true}
	ok := succeedAll(t)
	startKubelet(t, ns, func(job *batchv1.Job) outcome {
		mu.Lock()
		defer mu.Unlock()
		who := job.Labels[specs.LabelRun] + "/" + job.Labels[specs.LabelTarget]
		if job.Labels[specs.LabelStep] == "probe" && !slices.Contains(probes, who) {
			probes = append(probes, who)
		}
		if holding[job.Labels[specs.LabelTarget]] && job.Labels[specs.LabelRun] == "wide" && job.Labels[specs.LabelStep] == "s01" {
			return outcome{pending: true}
		}
		return ok(job)
	})

	wide := baseRun(ns, "wide", 1, 2)
	wide.Spec.Targets = append(wide.Spec.Targets, v1.Target{Name: "mariadb-third", Image: "mariadb:10.11"})
	wide.Spec.Order = v1.OrderParallel
	late := baseRun(ns, "late", 1)
	late.Spec.Targets = late.Spec.Targets[:1]
	for _, r := range []*v1.BenchmarkRun{wide, late} {
		r.Spec.Placement.Database.NodeSelector = map[string]string{specs.PoolLabel: pool}
	}

	// Never more servers than nodes.
	stop := make(chan struct{})
	overfull := make(chan string, 1)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			var held []string
			for _, r := range []*v1.BenchmarkRun{wide, late} {
				got := &v1.BenchmarkRun{}
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(r), got); err == nil {
					for _, name := range activeTargets(got) {
						held = append(held, got.Name+"/"+name)
					}
				}
			}
			if len(held) > 2 {
				select {
				case overfull <- strings.Join(held, ", "):
				default:
				}
			}
		}
	}()

	if err := k8s.Create(ctx, wide); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // start times have whole seconds
	if err := k8s.Create(ctx, late); err != nil {
		t.Fatal(err)
	}
	// Two targets measure at once; the third waits for a node, and so does the later run, behind it.
	waitFor(t, ns, "wide", 30*time.Second, "two targets of the run to measure at once", func(r *v1.BenchmarkRun) bool {
		n := 0
		for _, ts := range r.Status.Targets {
			if ts.Phase == v1.TargetRunning {
				n++
			}
		}
		return n == 2
	})
	waitFor(t, ns, "late", 20*time.Second, "the later run to say it is queued second, behind the third target", func(r *v1.BenchmarkRun) bool {
		c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing)
		return c != nil && c.Reason == v1.ReasonQueued && strings.Contains(c.Message, "position 2") &&
			strings.Contains(c.Message, ns+"/wide")
	})
	// One node frees up: the third target, which came first, takes it, and the later run waits
	// on (until the third, which is not held, is done with the node).
	mu.Lock()
	holding["mariadb"] = false
	mu.Unlock()
	waitFor(t, ns, "wide", 30*time.Second, "the third target to take the freed node", func(r *v1.BenchmarkRun) bool {
		return slices.Contains(activeTargets(r), "mariadb-third")
	})
	if got := waitFor(t, ns, "late", time.Second, "", func(*v1.BenchmarkRun) bool { return true }); len(activeTargets(got)) != 0 || got.Status.Phase.Finished() {
		t.Errorf("the later run took the freed node before the earlier run's third target: %s, active %v", got.Status.Phase, activeTargets(got))
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		probed := slices.Contains(probes, "wide/mariadb-third")
		mu.Unlock()
		if probed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the third target's server was never probed")
		}
	}
	mu.Lock()
	holding["mariadb-psoff"] = false
	mu.Unlock()

	for _, name := range []string{"wide", "late"} {
		got := waitFor(t, ns, name, 60*time.Second, "the run to finish", finished)
		if got.Status.Phase != v1.RunSucceeded {
			t.Errorf("run %s: %s, want Succeeded", name, got.Status.Phase)
		}
		for _, ts := range got.Status.Targets {
			if ts.Phase != v1.TargetSucceeded || len(ts.Steps) == 0 {
				t.Errorf("run %s target %s: %s with %d steps", name, ts.Name, ts.Phase, len(ts.Steps))
			}
		}
	}
	close(stop)
	select {
	case o := <-overfull:
		t.Errorf("more servers than the pool's two nodes at once: %s", o)
	default:
	}
	mu.Lock()
	defer mu.Unlock()
	if len(probes) != 4 || !slices.Equal(probes[2:], []string{"wide/mariadb-third", "late/mariadb"}) {
		t.Errorf("servers probed in the order %v: want wide's first two, then its third, then late's", probes)
	}
}

// spec.parallelism bounds a Parallel run below its pool: with parallelism 1 on two nodes, one
// target at a time.
func TestParallelismBoundsTheRun(t *testing.T) {
	ctx := context.Background()
	pool := poolNodes(t, "parallelism", 2)
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	startKubelet(t, ns, succeedAll(t))
	run := baseRun(ns, "one-at-a-time", 1)
	run.Spec.Order = v1.OrderParallel
	run.Spec.Parallelism = ptr.To[int32](1)
	run.Spec.Placement.Database.NodeSelector = map[string]string{specs.PoolLabel: pool}

	stop := make(chan struct{})
	most := make(chan int, 1)
	go func() {
		peak := 0
		defer func() { most <- peak }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			got := &v1.BenchmarkRun{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(run), got); err == nil {
				peak = max(peak, len(activeTargets(got)))
			}
		}
	}()
	if err := k8s.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, run.Name, 60*time.Second, "the run to finish", finished)
	close(stop)
	if got.Status.Phase != v1.RunSucceeded {
		t.Errorf("run: %s, want Succeeded", got.Status.Phase)
	}
	if peak := <-most; peak != 1 {
		t.Errorf("%d targets active at once, want parallelism 1", peak)
	}
}
