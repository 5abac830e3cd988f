package run_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// Three runs in two namespaces need the one node of a database pool: they take turns in the
// order they started, the waiting ones say Queued with their position and who holds the pool,
// and none fails for waiting.
func TestRunsQueueForTheirNodePool(t *testing.T) {
	ctx := context.Background()
	pool := readyPoolNode(t, "queue")

	nsA, nsB := newNamespace(t), newNamespace(t)
	// One operator for both namespaces, as in a cluster.
	startOperator(t, nsA, operatorOptions{namespaces: []string{nsA, nsB}})
	var mu sync.Mutex
	var order []string // runs in the order their servers started
	held := true       // the first run's first step runs until the test has seen the queue
	ok := succeedAll(t)
	decide := func(job *batchv1.Job) outcome {
		mu.Lock()
		defer mu.Unlock()
		if job.Labels[specs.LabelStep] == "probe" && (len(order) == 0 || order[len(order)-1] != job.Labels[specs.LabelRun]) {
			order = append(order, job.Labels[specs.LabelRun])
		}
		if held && job.Labels[specs.LabelRun] == "first" && job.Labels[specs.LabelStep] == "s01" {
			return outcome{pending: true}
		}
		return ok(job)
	}
	startKubelet(t, nsA, decide)
	startKubelet(t, nsB, decide)

	runs := []*v1.BenchmarkRun{baseRun(nsA, "first", 1, 2), baseRun(nsB, "second", 1, 2), baseRun(nsA, "third", 1, 2)}
	// Never two servers in the pool at once.
	keys := make([]client.ObjectKey, len(runs))
	for i, run := range runs {
		keys[i] = client.ObjectKeyFromObject(run)
	}
	stop := make(chan struct{})
	overlap := make(chan string, 1)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			var holding []string
			for _, key := range keys {
				r := &v1.BenchmarkRun{}
				if err := k8s.Get(ctx, key, r); err != nil || len(r.Status.Targets) == 0 {
					continue
				}
				if p := r.Status.Targets[0].Phase; p != v1.TargetPending && !p.Finished() {
					holding = append(holding, r.Name)
				}
			}
			if len(holding) > 1 {
				select {
				case overlap <- strings.Join(holding, ", "):
				default:
				}
			}
		}
	}()
	for i, run := range runs {
		run.Spec.Targets = run.Spec.Targets[:1]
		run.Spec.Placement.Database.NodeSelector = map[string]string{specs.PoolLabel: pool}
		if err := k8s.Create(ctx, run); err != nil {
			t.Fatal(err)
		}
		if i < len(runs)-1 {
			time.Sleep(1100 * time.Millisecond) // start times have whole seconds
		}
	}
	// While the first holds the node, the others say where they stand.
	waitFor(t, nsA, "third", 20*time.Second, "the third run to say it is queued second", func(r *v1.BenchmarkRun) bool {
		c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing)
		return c != nil && c.Reason == "Queued" && strings.Contains(c.Message, "position 2") &&
			strings.Contains(c.Message, "held by "+nsA+"/first")
	})
	waitFor(t, nsB, "second", 20*time.Second, "the second run to say it is queued first", func(r *v1.BenchmarkRun) bool {
		c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing)
		return c != nil && c.Reason == "Queued" && strings.Contains(c.Message, "position 1")
	})
	mu.Lock()
	held = false
	mu.Unlock()
	for _, run := range runs {
		got := waitFor(t, run.Namespace, run.Name, 60*time.Second, "the run to finish", finished)
		if got.Status.Phase != v1.RunSucceeded {
			t.Errorf("run %s: %s (%s), want Succeeded: a queued run never fails for waiting", run.Name, got.Status.Phase, got.Status.Targets[0].Message)
		}
	}
	close(stop)
	select {
	case o := <-overlap:
		t.Errorf("runs %s held the one-node pool at the same time", o)
	default:
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(order, " ") != "first second third" {
		t.Errorf("servers started in the order %v, want first second third", order)
	}
}

// A run whose own kept servers hold every node of its pool could wait for ever: its next target
// fails at once, saying why.
func TestOwnKeptServersCannotBeWaitedFor(t *testing.T) {
	ctx := context.Background()
	pool := readyPoolNode(t, "kept")
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	startKubelet(t, ns, succeedAll(t))
	run := baseRun(ns, "kept", 1)
	run.Spec.Cleanup = v1.CleanupNever
	run.Spec.Placement.Database.NodeSelector = map[string]string{specs.PoolLabel: pool}
	if err := k8s.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "kept", 20*time.Second, "the run to finish", finished)
	first, second := got.Status.Targets[0], got.Status.Targets[1]
	if first.Phase != v1.TargetSucceeded || second.Phase != v1.TargetFailed ||
		!strings.Contains(second.Message, "this run's own earlier servers") || !strings.Contains(second.Message, "cleanup: Always") {
		t.Errorf("targets %s, %s %q: want the first measured and the second failed, naming the kept servers", first.Phase, second.Phase, second.Message)
	}
}

// readyPoolNode creates a Ready node alone in a database pool of its own, deleted after the test,
// and returns the pool's name (the node's mysqlbench.io/pool label value).
func readyPoolNode(t *testing.T, prefix string) string {
	t.Helper()
	pool := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
	readyNode(t, pool, map[string]string{specs.PoolLabel: pool})
	return pool
}

// readyNode creates a Ready node with labels, deleted after the test.
func readyNode(t testing.TB, name string, labels map[string]string) {
	t.Helper()
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := k8s.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), node) })
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	if err := k8s.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
}

// Only servers that runs hold count in a pool's queue. StatefulSets with the operator's labels
// that no run holds (one with no replicas in another namespace, one naming a run that does not
// exist, one claiming to be the server of a run's target that has not started) never make a run
// wait: it runs on the pool's one node at once.
func TestQueueCountsOnlyServersRunsHold(t *testing.T) {
	ctx := context.Background()
	pool := readyPoolNode(t, "forged")
	ns, other := newNamespace(t), newNamespace(t)
	startOperator(t, ns, operatorOptions{namespaces: []string{other}})
	startKubelet(t, ns, succeedAll(t))

	// A run of the namespace that waits before its first target: its status holds no server.
	idle := baseRun(ns, "idle", 1)
	idle.Spec.Targets = idle.Spec.Targets[:1]
	idle.Spec.Workload.CustomScript = &v1.ConfigMapKeySelector{Name: "never-there", Key: "x.lua"}
	idle.Spec.Workload.Script = ""
	if err := k8s.Create(ctx, idle); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ns, "idle", 20*time.Second, "the idle run to wait for its script", func(r *v1.BenchmarkRun) bool {
		return r.Status.Phase == v1.RunPending
	})
	idle = waitFor(t, ns, "idle", time.Second, "the idle run", func(*v1.BenchmarkRun) bool { return true })
	forged := func(ns, name, target string, refs []metav1.OwnerReference) {
		labels := map[string]string{specs.LabelManagedBy: specs.ManagedBy, specs.LabelComponent: specs.ComponentServer,
			specs.LabelRun: "idle", specs.LabelTarget: target}
		sts := &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, OwnerReferences: refs},
			Spec: appsv1.StatefulSetSpec{
				Replicas: ptr.To[int32](0),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{NodeSelector: map[string]string{specs.PoolLabel: pool},
						Containers: []corev1.Container{{Name: "mysql", Image: "mysql:8.4"}}},
				},
			},
		}
		if err := k8s.Create(ctx, sts); err != nil {
			t.Fatal(err)
		}
	}
	idleRef := *metav1.NewControllerRef(idle, v1.GroupVersion.WithKind("BenchmarkRun"))
	ghostRef := idleRef
	ghostRef.Name, ghostRef.UID = "ghost", "uid-of-no-run"
	forged(other, "someone-elses", "mariadb", nil)
	forged(ns, "ghost-mariadb", "mariadb", []metav1.OwnerReference{ghostRef})
	forged(ns, specs.ServerName(idle, "mariadb"), "mariadb", []metav1.OwnerReference{idleRef})

	run := baseRun(ns, "measured", 1)
	run.Spec.Targets = run.Spec.Targets[:1]
	run.Spec.Placement.Database.NodeSelector = map[string]string{specs.PoolLabel: pool}
	if err := k8s.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, run.Name, 30*time.Second, "the run to finish", func(r *v1.BenchmarkRun) bool {
		if c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing); c != nil && c.Reason == v1.ReasonQueued {
			t.Fatalf("the run is queued behind servers no run holds: %s", c.Message)
		}
		return finished(r)
	})
	if got.Status.Phase != v1.RunSucceeded {
		t.Errorf("run %s: %+v", got.Status.Phase, got.Status.Targets)
	}
}

// poolNode adds a node of pool to the fake world, Ready or not.
func (w *fakeWorld) poolNode(name, pool string, ready bool) {
	status := corev1.ConditionTrue
	if !ready {
		status = corev1.ConditionFalse
	}
	w.create(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{specs.PoolLabel: pool}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}}})
}

// A target whose database pool has no Ready, schedulable node provisions nothing and stays
// Pending, saying what is missing and until when it waits: the scheduling grace when no node has
// the pool's labels at all, the server ready timeout when they exist but are not Ready. Then it
// fails with the same words, and the run goes on.
func TestNoPoolNodesIsSaidAndBounded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		nodes  func(w *fakeWorld)
		within time.Duration // the fake world's scheduling grace (1m) or ready timeout (10m)
		want   string
	}{
		{"no node has the labels", func(*fakeWorld) {}, time.Minute,
			"needs a node of the database pool mysqlbench.io/pool=gpu, and no node has those labels: label the nodes meant for " +
				"benchmark servers (kubectl label node <node> mysqlbench.io/pool=gpu), or set placement.database.nodeSelector"},
		{"its nodes are not Ready", func(w *fakeWorld) { w.poolNode("gpu-1", "gpu", false) }, 10 * time.Minute,
			"needs a node of the database pool mysqlbench.io/pool=gpu, and none of the 1 node(s) with its labels is Ready and schedulable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newFakeWorld(t)
			tc.nodes(w)
			r := fakeRun("nonodes", 1)
			r.Spec.Targets = r.Spec.Targets[:1]
			r.Spec.Placement.Database.NodeSelector = map[string]string{specs.PoolLabel: "gpu"}
			run := w.create(r).(*v1.BenchmarkRun)
			start := w.clock.Now()
			w.mustReconcile(run.Name) // started
			for w.clock.Since(start) < tc.within {
				w.mustReconcile(run.Name)
				got := w.run(run.Name)
				ts := targetStatus(got, "mariadb")
				if ts.Phase != v1.TargetPending || got.Status.Phase != v1.RunPending {
					t.Fatalf("after %s: run %s, target %s %q; want both Pending", w.clock.Since(start), got.Status.Phase, ts.Phase, ts.Message)
				}
				c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionProgressing)
				if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1.ReasonNoPoolNodes || !strings.Contains(c.Message, tc.want) ||
					!strings.Contains(c.Message, "fails if no node is there by "+start.Add(tc.within).UTC().Format(time.RFC3339)) {
					t.Fatalf("Progressing %+v, want False %s saying %q and until when", c, v1.ReasonNoPoolNodes, tc.want)
				}
				w.clock.Step(10 * time.Second)
			}
			got := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
			ts := targetStatus(got, "mariadb")
			if ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, tc.want) || !strings.Contains(ts.Message, "(waited "+tc.within.String()+")") {
				t.Errorf("target %s %q, want Failed saying %q", ts.Phase, ts.Message, tc.want)
			}
			if creates, _, _ := w.counters(); creates["StatefulSet/"+specs.ServerName(run, "mariadb")] != 0 {
				t.Errorf("a server was created for a pool without nodes: %v", creates)
			}
		})
	}
}

// The Queued message names what holds the pool even when no server does: a run that started
// earlier and waits before this one (here for a ConfigMap it names) keeps the pool's one node
// for its turn, and the message says which run that is.
func TestQueuedMessageNamesTheEarlierWaiters(t *testing.T) {
	w := newFakeWorld(t)
	w.poolNode("solo-1", "solo", true)
	first := fakeRun("first", 1)
	first.Spec.Targets = first.Spec.Targets[:1]
	first.Spec.Placement.Database.NodeSelector = map[string]string{specs.PoolLabel: "solo"}
	first.Spec.Workload.Script = ""
	first.Spec.Workload.CustomScript = &v1.ConfigMapKeySelector{Name: "later", Key: "bench.lua"}
	w.create(first)
	w.mustReconcile("first") // started
	w.mustReconcile("first") // waits for its ConfigMap
	w.clock.Step(time.Second)
	second := fakeRun("second", 1)
	second.Spec.Targets = second.Spec.Targets[:1]
	second.Spec.Placement.Database.NodeSelector = map[string]string{specs.PoolLabel: "solo"}
	w.create(second)
	w.mustReconcile("second")
	w.mustReconcile("second")
	c := meta.FindStatusCondition(w.run("second").Status.Conditions, v1.ConditionProgressing)
	want := "target mariadb is queued for the database node pool mysqlbench.io/pool=solo (1 Ready node(s)): position 2; " +
		"no server holds it yet; 1 run(s) created earlier wait before it: bench/first (target mariadb)"
	if c == nil || c.Reason != v1.ReasonQueued || c.Message != want {
		t.Fatalf("Progressing %+v, want Queued with %q", c, want)
	}
}

// A server's anti-affinity names, across namespaces, only the runs that hold nodes of its pool
// when it is created (verified as the queue verifies them), never a selector of every namespace:
// a pod anyone labels like a benchmark pod elsewhere cannot keep the server off its node. The
// first server of the pool names no other namespace; the second names the first's run.
func TestServerAntiAffinityNamesThePoolsHolders(t *testing.T) {
	ctx := context.Background()
	pool := fmt.Sprintf("peers-%d", time.Now().UnixNano())
	readyNode(t, pool+"-1", map[string]string{specs.PoolLabel: pool})
	readyNode(t, pool+"-2", map[string]string{specs.PoolLabel: pool})
	nsA, nsB := newNamespace(t), newNamespace(t)
	startOperator(t, nsA, operatorOptions{namespaces: []string{nsB}})
	hold := func(job *batchv1.Job) outcome {
		if job.Labels[specs.LabelStep] == "s01" {
			return outcome{pending: true} // both hold their nodes until the test ends
		}
		return succeedAll(t)(job)
	}
	startKubelet(t, nsA, hold)
	startKubelet(t, nsB, hold)
	terms := func(ns string, run *v1.BenchmarkRun) []corev1.PodAffinityTerm {
		t.Helper()
		sts := &appsv1.StatefulSet{}
		key := client.ObjectKey{Namespace: ns, Name: specs.ServerName(run, "mariadb")}
		for deadline := time.Now().Add(20 * time.Second); k8s.Get(ctx, key, sts) != nil; time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no StatefulSet %s", key)
			}
		}
		return sts.Spec.Template.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	var runs []*v1.BenchmarkRun
	for _, ns := range []string{nsB, nsA} {
		run := baseRun(ns, "peer", 1)
		run.Spec.Targets = run.Spec.Targets[:1]
		run.Spec.Placement.Database.NodeSelector = map[string]string{specs.PoolLabel: pool}
		if err := k8s.Create(ctx, run); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ns, run.Name, 20*time.Second, "step 1", func(r *v1.BenchmarkRun) bool { return r.Status.Phase == v1.RunRunning })
		runs = append(runs, run)
	}
	first, second := terms(nsB, runs[0]), terms(nsA, runs[1])
	for _, term := range append(append([]corev1.PodAffinityTerm{}, first...), second...) {
		if term.NamespaceSelector != nil {
			t.Errorf("a term with a namespace selector %v: labelled pods of any namespace would match it", term.NamespaceSelector)
		}
	}
	if len(first) != 1 || len(first[0].Namespaces) != 0 {
		t.Errorf("the first server's terms %+v: want its own namespace's only", first)
	}
	var peer *corev1.PodAffinityTerm
	for i := range second {
		if len(second[i].Namespaces) == 1 && second[i].Namespaces[0] == nsB {
			peer = &second[i]
		}
	}
	if len(second) != 2 || peer == nil {
		t.Fatalf("the second server's terms %+v: want its own namespace's and the first run's in %s", second, nsB)
	}
	sel, err := metav1.LabelSelectorAsSelector(peer.LabelSelector)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set(specs.ServerPodLabels(runs[0], "mariadb"))) || sel.Matches(labels.Set(specs.ServerPodLabels(baseRun(nsB, "forged", 1), "mariadb"))) {
		t.Errorf("the peer term %v must match the first run's server and no other run's", peer.LabelSelector)
	}
}

// A released server's pod that is still shutting down keeps its node: the next run waits, saying
// which pod it waits for, and starts as soon as that pod is gone (woken by its deletion, not by
// the queue's periodic recheck). A server created earlier could not be scheduled on the node.
func TestQueueWaitsForTheLastServerPod(t *testing.T) {
	ctx := context.Background()
	pool := readyPoolNode(t, "linger")
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	var mu sync.Mutex
	held := true // the first run's first step waits until its server pod has the finalizer
	ok := succeedAll(t)
	startKubelet(t, ns, func(job *batchv1.Job) outcome {
		mu.Lock()
		defer mu.Unlock()
		if held && job.Labels[specs.LabelRun] == "first" && job.Labels[specs.LabelStep] == "s01" {
			return outcome{pending: true}
		}
		return ok(job)
	})
	runs := []*v1.BenchmarkRun{baseRun(ns, "first", 1, 2), baseRun(ns, "second", 1, 2)}
	for i, run := range runs {
		run.Spec.Targets = run.Spec.Targets[:1]
		run.Spec.Placement.Database.NodeSelector = map[string]string{specs.PoolLabel: pool}
		if err := k8s.Create(ctx, run); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			time.Sleep(1100 * time.Millisecond) // start times have whole seconds
		}
	}
	// The first run's server pod will take its time to go (a finalizer stands for the server's
	// shutdown).
	key := client.ObjectKey{Namespace: ns, Name: specs.ServerName(runs[0], "mariadb") + "-0"}
	pod := &corev1.Pod{}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err := k8s.Get(ctx, key, pod); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first run's server pod never appeared")
		}
	}
	patch := client.MergeFrom(pod.DeepCopy())
	pod.Finalizers = append(pod.Finalizers, "test.mysqlbench.io/still-shutting-down")
	if err := k8s.Patch(ctx, pod, patch); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	held = false
	mu.Unlock()
	if got := waitFor(t, ns, "first", 30*time.Second, "the first run to finish", finished); got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("first run %s", got.Status.Phase)
	}
	waitFor(t, ns, "second", 20*time.Second, "the second run to wait for the first run's server pod", func(r *v1.BenchmarkRun) bool {
		c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing)
		return c != nil && c.Reason == v1.ReasonQueued && strings.Contains(c.Message, "released server pod "+key.Name+" still on node")
	})
	if err := k8s.Get(ctx, key, pod); err != nil || pod.DeletionTimestamp.IsZero() {
		t.Fatalf("the first run's server pod: %v, deletion %v: want it terminating", err, pod.DeletionTimestamp)
	}
	time.Sleep(2 * time.Second)
	if r := waitFor(t, ns, "second", time.Second, "", func(*v1.BenchmarkRun) bool { return true }); r.Status.Targets[0].Phase != v1.TargetPending {
		t.Fatalf("the second run's target is %s while the first run's server pod still shuts down, want Pending", r.Status.Targets[0].Phase)
	}
	// The pod goes: the second run starts within the wake-up, well before the 10 s recheck.
	gone := time.Now()
	patch = client.MergeFrom(pod.DeepCopy())
	pod.Finalizers = nil
	if err := k8s.Patch(ctx, pod, patch); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ns, "second", 5*time.Second, "the second run to start once the pod is gone", func(r *v1.BenchmarkRun) bool {
		return len(r.Status.Targets) > 0 && r.Status.Targets[0].Phase != v1.TargetPending
	})
	t.Logf("the second run started %s after the first run's last server pod went", time.Since(gone).Round(10*time.Millisecond))
	if got := waitFor(t, ns, "second", 30*time.Second, "the second run to finish", finished); got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("second run %s", got.Status.Phase)
	}
}
