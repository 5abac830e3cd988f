package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/metrics"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// queueRecheck is how often a queued run near the head of its pool's queue looks at the pool
// again: a freed node wakes the runs next in line (queuedRuns), and the recheck catches what
// wakes no one (a node added or made Ready, a wake-up lost to an error) and refreshes the
// position a run's status shows. Runs further back recheck less often (recheckAfter).
const queueRecheck = 10 * time.Second

// recheckAfter is when a target queued behind ahead waiters recheck its pool of capacity nodes:
// queueRecheck for one within a pool's worth of the head, one more queueRecheck for each further
// pool's worth, at most 6: every queued run's recheck reads every run, and a run that many
// nodes' turns away cannot start sooner anyway (its position is up to a minute old then).
func recheckAfter(ahead, capacity int) time.Duration {
	return queueRecheck * time.Duration(min(1+ahead/max(capacity, 1), 6))
}

// nodeReleased passes the run events that can free a node of a pool: a run deleted, or its
// current target leaving the phases that hold a server.
var nodeReleased = predicate.Funcs{
	CreateFunc:  func(crevent.CreateEvent) bool { return false },
	GenericFunc: func(crevent.GenericEvent) bool { return false },
	DeleteFunc:  func(crevent.DeleteEvent) bool { return true },
	UpdateFunc: func(e crevent.UpdateEvent) bool {
		old, okOld := e.ObjectOld.(*v1.BenchmarkRun)
		cur, okNew := e.ObjectNew.(*v1.BenchmarkRun)
		return okOld && okNew && heldServers(cur) < heldServers(old)
	},
}

// heldServers counts the run's servers up or coming up: its targets past Pending that have not
// ended, and those that ended whose server is not released yet.
func heldServers(run *v1.BenchmarkRun) int {
	n := 0
	for _, ts := range run.Status.Targets {
		if (ts.Phase.Finished() && !ts.Released) || (!ts.Phase.Finished() && ts.Phase != v1.TargetPending && ts.Phase != "") {
			n++
		}
	}
	return n
}

// queuedRuns are the runs to wake when obj, a run, lets go of a node of its database pool: the
// first ones in that pool's queue, as many waiting targets as the pool has free nodes now (a
// waiter starts while the holders and the waiters before it are fewer than the nodes). Waking
// every queued run instead made each release cost a decision per queued run, each reading every
// run: quadratic in the runs. The runs further back could not start yet; their recheck
// (queueRecheck) refreshes their position.
func (r *BenchmarkRunReconciler) queuedRuns(ctx context.Context, obj client.Object) []reconcile.Request {
	run, ok := obj.(*v1.BenchmarkRun)
	if !ok {
		return nil
	}
	selector := specs.DatabasePlacement(run).NodeSelector
	pool := poolName(selector)
	capacity, _, err := r.poolCapacity(ctx, selector)
	if err != nil {
		logf.FromContext(ctx).Error(err, "cannot wake the runs queued for a node pool; they recheck on their own", "pool", pool)
		return nil
	}
	holders, waiting, err := r.poolUsers(ctx, pool, nil)
	if err != nil {
		logf.FromContext(ctx).Error(err, "cannot wake the runs queued for a node pool; they recheck on their own", "pool", pool)
		return nil
	}
	return nextInLine(capacity-len(holders), waiting)
}

// serverPodGone passes the deletion of a server pod the operator made.
var serverPodGone = predicate.Funcs{
	CreateFunc:  func(crevent.CreateEvent) bool { return false },
	UpdateFunc:  func(crevent.UpdateEvent) bool { return false },
	GenericFunc: func(crevent.GenericEvent) bool { return false },
	DeleteFunc: func(e crevent.DeleteEvent) bool {
		l := e.Object.GetLabels()
		return l[specs.LabelManagedBy] == specs.ManagedBy && l[specs.LabelComponent] == specs.ComponentServer
	},
}

// queuedRunsOfServerPod wakes the runs queued for the pool of the run whose server pod is gone.
func (r *BenchmarkRunReconciler) queuedRunsOfServerPod(ctx context.Context, obj client.Object) []reconcile.Request {
	runs := &v1.BenchmarkRunList{}
	if err := r.List(ctx, runs, client.InNamespace(obj.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		logf.FromContext(ctx).Error(err, "cannot wake the runs queued for a node pool; they recheck on their own")
		return nil
	}
	for i := range runs.Items {
		if specs.LabelValue(runs.Items[i].Name) == obj.GetLabels()[specs.LabelRun] {
			return r.queuedRuns(ctx, &runs.Items[i])
		}
	}
	return nil
}

// nextInLine are the runs of the first free waiting targets (in queue order), each once: those
// that may take a node when free nodes are.
func nextInLine(free int, waiting []poolUser) []reconcile.Request {
	free = min(max(free, 0), len(waiting))
	var reqs []reconcile.Request
	woken := map[string]bool{}
	for _, w := range waiting[:free] {
		if woken[w.key] {
			continue
		}
		woken[w.key] = true
		ns, name, _ := strings.Cut(w.key, "/")
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}})
	}
	return reqs
}

// poolCapacity counts the nodes with the pool's labels (matched) and those of them that can take
// a server now (Ready and schedulable).
func (r *BenchmarkRunReconciler) poolCapacity(ctx context.Context, selector map[string]string) (capacity, matched int, err error) {
	nodes := &corev1.NodeList{}
	if err := r.List(ctx, nodes, client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(selector)}, client.UnsafeDisableDeepCopy); err != nil {
		return 0, 0, fmt.Errorf("list nodes of pool %s: %w", poolName(selector), err)
	}
	for i := range nodes.Items {
		if nodeUsable(&nodes.Items[i]) {
			capacity++
		}
	}
	return capacity, len(nodes.Items), nil
}

// poolUser is a run that holds or waits for a node of a database pool.
type poolUser struct {
	key     string // namespace/name
	target  string
	started time.Time
	why     string // for holders: what holds the node
	// exclusive: the run's servers must be alone on their nodes.
	exclusive bool
}

// admitToPool decides whether the run's next target may start its server now. Servers that must
// be alone on their nodes (exclusive database placement, the default) are queued per node pool:
// a target starts only while the pool has a node that no server holds and no run created
// earlier is waiting for. Runs wait in the order they were created (to the second, then by namespace
// and name) across namespaces, and a queued run never fails for waiting: its condition says
// Queued, its position and who holds the pool. A pool with no Ready, schedulable node is not
// waited for in Provisioning: the target stays Pending, says what is missing, and fails when
// nothing changes (noPoolNodes).
func (r *BenchmarkRunReconciler) admitToPool(ctx context.Context, tx *transition, t v1.Target) (bool, ctrl.Result, error) {
	run := tx.run
	if !engine.FactsOf(t.Engine).HoldsNode {
		return true, ctrl.Result{}, nil
	}
	// Wall time, not r.clock: what the decision costs the manager, for
	// mysqlbench_queue_decision_seconds.
	start := time.Now()
	selector := specs.DatabasePlacement(run).NodeSelector
	pool := poolName(selector)
	capacity, matched, err := r.poolCapacity(ctx, selector)
	if err != nil {
		return false, ctrl.Result{}, err
	}
	if capacity == 0 {
		return r.noPoolNodes(tx, t, selector, matched)
	}
	if !run.Spec.Placement.Database.IsExclusive() {
		return true, ctrl.Result{}, nil
	}
	holders, waiting, err := r.poolUsers(ctx, pool, run)
	if err != nil {
		return false, ctrl.Result{}, err
	}
	self := run.Namespace + "/" + run.Name
	if run.Spec.Interleaved() {
		// An interleaved run's servers share the node its first server took.
		for _, h := range holders {
			if h.key == self {
				metrics.ObserveQueueDecision(metrics.QueueAdmitted, time.Since(start))
				return true, ctrl.Result{}, nil
			}
		}
	}
	own := 0
	for _, h := range holders {
		if h.key == self && keptByPolicy(run, h.target) {
			own++
		}
	}
	if own >= capacity {
		// Only deleting the run frees its kept servers: waiting would never end.
		return false, ctrl.Result{}, &engine.ConfigError{Message: fmt.Sprintf("target %s needs a node of the database pool %s, "+
			"but this run's own earlier servers, kept by its cleanup policy %q, hold all %d of its Ready node(s): "+
			"set cleanup: Always, or add nodes to the pool", t.Name, pool, run.Spec.Cleanup, capacity)}
	}
	var ahead []poolUser
	for _, w := range waiting {
		if w.key == self && w.target == t.Name {
			break
		}
		ahead = append(ahead, w)
	}
	if len(holders)+len(ahead) < capacity {
		metrics.ObserveQueueDecision(metrics.QueueAdmitted, time.Since(start))
		return true, ctrl.Result{}, nil
	}
	tx.progressing(v1.ReasonQueued, queuedMessage(t, pool, capacity, holders, ahead))
	metrics.ObserveQueueDecision(metrics.QueueQueued, time.Since(start))
	return false, ctrl.Result{RequeueAfter: recheckAfter(len(ahead), capacity)}, nil
}

// queuedMessage says where a queued target stands and what is before it: the runs whose servers
// hold the pool's nodes and the runs created earlier that wait for one, the first few of each
// named (a pool of a hundred nodes would otherwise put a hundred holders in every queued run's
// status, rewritten as they change). With no server up the pool is held by the earlier waiters
// alone (one that has not taken its turn yet, or waits for something else first), and those are
// named instead.
func queuedMessage(t v1.Target, pool string, capacity int, holders, ahead []poolUser) string {
	const named = 5
	msg := fmt.Sprintf("target %s is queued for the database node pool %s (%d Ready node(s)): position %d",
		t.Name, pool, capacity, len(ahead)+1)
	if len(holders) > 0 {
		held := make([]string, 0, min(len(holders), named))
		for _, h := range holders[:min(len(holders), named)] {
			held = append(held, h.why)
		}
		msg += "; held by " + strings.Join(held, ", ")
		if len(holders) > named {
			msg += fmt.Sprintf(" and %d more", len(holders)-named)
		}
	} else {
		msg += "; no server holds it yet"
	}
	if len(ahead) > 0 {
		before := make([]string, 0, min(len(ahead), named))
		for _, w := range ahead[:min(len(ahead), named)] {
			before = append(before, fmt.Sprintf("%s (target %s)", w.key, w.target))
		}
		list := strings.Join(before, ", ")
		if len(ahead) > named {
			list += fmt.Sprintf(" and %d more", len(ahead)-named)
		}
		msg += fmt.Sprintf("; %d run(s) created earlier wait before it: %s", len(ahead), list)
	}
	return msg
}

// noPoolNodes holds back a target whose database pool has no Ready, schedulable node: nothing is
// provisioned that could not be scheduled (a server pod that stays Pending while its run says
// Provisioning). The run says what is missing and the target waits, from when it became the
// current target: up to the scheduling grace when no node has the pool's labels at all (a typo
// in the selector, nodes never labelled), up to the server ready timeout when the pool's nodes
// exist but are NotReady or cordoned (a reboot, a drain); then it fails with the same words.
func (r *BenchmarkRunReconciler) noPoolNodes(tx *transition, t v1.Target, selector map[string]string, matched int) (bool, ctrl.Result, error) {
	pool := poolName(selector)
	desc := "of the database pool " + pool
	if pool == "" {
		desc = "(placement.database.nodeSelector is empty: any node)"
	}
	var msg string
	limit := r.readyTimeout
	if matched == 0 {
		limit = r.schedulingGrace
		msg = fmt.Sprintf("target %s needs a node %s, and no node has those labels: label the nodes meant for benchmark "+
			"servers (kubectl label node <node> %s), or set placement.database.nodeSelector to labels your nodes have",
			t.Name, desc, strings.ReplaceAll(pool, ",", " "))
	} else {
		msg = fmt.Sprintf("target %s needs a node %s, and none of the %d node(s) with its labels is Ready and schedulable: "+
			"bring one back (kubectl get nodes shows NotReady or SchedulingDisabled) or add one", t.Name, desc, matched)
	}
	since := pendingSince(tx.run, t)
	waited := r.clock.Since(since)
	if waited >= limit {
		return false, ctrl.Result{}, &engine.ConfigError{Message: fmt.Sprintf("%s (waited %s)", msg, limit)}
	}
	tx.stalled(v1.ReasonNoPoolNodes, fmt.Sprintf("%s; nothing is provisioned meanwhile, and the target fails if no node is there by %s",
		msg, since.Add(limit).UTC().Format(time.RFC3339)))
	return false, ctrl.Result{RequeueAfter: min(queueRecheck, limit-waited)}, nil
}

// pendingSince is when target t became one the run works on: when the target before it ended
// (targets run one at a time, in spec order), or when the run started. With order Parallel, a
// target waits from the start or from when any other target ended, whichever came last.
func pendingSince(run *v1.BenchmarkRun, t v1.Target) time.Time {
	since := run.Status.StartTime.Time
	for _, st := range run.Spec.Targets {
		if st.Name == t.Name && !run.Spec.Parallel() {
			break
		}
		for _, ts := range run.Status.Targets {
			if ts.Name == st.Name && ts.CompletionTime != nil && ts.CompletionTime.After(since) {
				since = ts.CompletionTime.Time
			}
		}
	}
	return since
}

// poolUsers returns the runs holding a node of pool (a server its engine finds among listed
// objects, with the pool's node selector, or a target past Pending whose server the cache has
// not shown yet) and the runs waiting for one, oldest first. self, the run being reconciled (nil for none), counts with its
// newest status.
//
// Labels prove nothing: anyone who may create StatefulSets can give one the operator's labels
// (and one with no replicas holds no node at all). A server counts only when a run that exists
// controls it (the owner reference's UID is that run's), it is that run's server for the target
// it is labelled with (its name derived from both; the engine's Holdings), and the run's status
// says that target holds its server (holdsServer).
func (r *BenchmarkRunReconciler) poolUsers(ctx context.Context, pool string, self *v1.BenchmarkRun) (holders, waiting []poolUser, err error) {
	runs := &v1.BenchmarkRunList{}
	if err := r.List(ctx, runs, client.UnsafeDisableDeepCopy); err != nil { // read only: no copy of every run
		return nil, nil, fmt.Errorf("list runs: %w", err)
	}
	byKey := make(map[client.ObjectKey]*v1.BenchmarkRun, len(runs.Items))
	for i := range runs.Items {
		byKey[client.ObjectKeyFromObject(&runs.Items[i])] = &runs.Items[i]
	}
	if self != nil {
		byKey[client.ObjectKeyFromObject(self)] = self // the newest status
	}
	held := map[string]poolUser{}
	servers, err := engine.ListHoldings(ctx, r.kubeClient, r.engines, byKey)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range servers {
		if poolName(s.NodeSelector) != pool || !holdsServer(s.Run, s.Target) {
			continue
		}
		key := s.Run.Namespace + "/" + s.Run.Name
		held[key+"#"+s.Target] = poolUser{key: key, target: s.Target, exclusive: s.Run.Spec.Placement.Database.IsExclusive(),
			why: fmt.Sprintf("%s (target %s, %s)", key, s.Target, s.Object)}
	}
	if err := r.lingeringServers(ctx, pool, byKey, held); err != nil {
		return nil, nil, err
	}
	for i := range runs.Items {
		other := &runs.Items[i]
		if self != nil && other.Namespace == self.Namespace && other.Name == self.Name {
			other = self // the newest status
		}
		// Runs wait in the order they were created, counting those the operator has not
		// reconciled yet: after a restart or a leader change the runs created meanwhile are
		// reconciled in no particular order, and the first one reconciled must not take a node
		// before runs created earlier.
		if other.Status.Phase.Finished() || !other.DeletionTimestamp.IsZero() ||
			!other.Spec.Placement.Database.IsExclusive() || poolName(specs.DatabasePlacement(other).NodeSelector) != pool {
			continue
		}
		key := other.Namespace + "/" + other.Name
		for _, q := range queueTargets(other) {
			if !engine.FactsOf(q.target.Engine).HoldsNode {
				continue
			}
			user := poolUser{key: key, target: q.target.Name, started: other.CreationTimestamp.Time, exclusive: true}
			if q.status == nil || q.status.Phase == v1.TargetPending || q.status.Phase == "" {
				waiting = append(waiting, user)
				continue
			}
			if _, ok := held[key+"#"+q.target.Name]; !ok {
				user.why = fmt.Sprintf("%s (target %s, %s)", key, q.target.Name, strings.ToLower(string(q.status.Phase)))
				held[key+"#"+q.target.Name] = user
			}
		}
	}
	for _, h := range held {
		holders = append(holders, h)
	}
	sort.Slice(holders, func(i, j int) bool { return holders[i].why < holders[j].why })
	sort.SliceStable(waiting, func(i, j int) bool {
		if !waiting[i].started.Equal(waiting[j].started) {
			return waiting[i].started.Before(waiting[j].started)
		}
		return waiting[i].key < waiting[j].key
	})
	return holders, waiting, nil
}

// lingeringServers adds to held the server pods still on a node of the pool whose target
// released it: the pod shuts its server down for seconds after its StatefulSet is gone. A
// server created meanwhile could not be scheduled there (the exclusive anti-affinity still sees
// the old pod), and the scheduler need not try it again for minutes once the old pod is gone: a
// node is free only when its last server pod is. Labels prove nothing, so a pod counts only as
// the server of a run that exists, in this pool, whose status says the target released it, and
// whose controller carries the name that run gives that target's StatefulSet. (A deleted run's
// pods are not counted: nothing vouches for them.)
func (r *BenchmarkRunReconciler) lingeringServers(ctx context.Context, pool string, runs map[client.ObjectKey]*v1.BenchmarkRun,
	held map[string]poolUser) error {
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.MatchingLabels{specs.LabelManagedBy: specs.ManagedBy, specs.LabelComponent: specs.ComponentServer},
		client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list server pods: %w", err)
	}
	if len(pods.Items) == 0 {
		return nil
	}
	byLabel := make(map[client.ObjectKey]*v1.BenchmarkRun, len(runs))
	for _, run := range runs {
		byLabel[client.ObjectKey{Namespace: run.Namespace, Name: specs.LabelValue(run.Name)}] = run
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		run := byLabel[client.ObjectKey{Namespace: p.Namespace, Name: p.Labels[specs.LabelRun]}]
		target := p.Labels[specs.LabelTarget]
		if run == nil || !run.DeletionTimestamp.IsZero() || poolName(specs.DatabasePlacement(run).NodeSelector) != pool {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(p)
		if ref == nil || ref.Kind != "StatefulSet" || ref.Name != specs.ServerName(run, target) {
			continue
		}
		released := false
		for _, ts := range run.Status.Targets {
			released = released || (ts.Name == target && ts.Phase.Finished() && ts.Released)
		}
		key := run.Namespace + "/" + run.Name
		if _, ok := held[key+"#"+target]; ok || !released {
			continue
		}
		held[key+"#"+target] = poolUser{key: key, target: target, exclusive: run.Spec.Placement.Database.IsExclusive(),
			why: fmt.Sprintf("%s (target %s, its released server pod %s still on node %s)", key, target, p.Name, p.Spec.NodeName)}
	}
	return nil
}

// poolPeers are the runs of other namespaces that hold a node of the run's database pool now (the
// queue's holders, each verified): a server created now keeps away from their pods, and from no
// other namespace's pods (specs.DatabasePlacement says why). Targets the operator runs no server
// for (external) have none.
func (r *BenchmarkRunReconciler) poolPeers(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) ([]specs.Peer, error) {
	if !engine.FactsOf(t.Engine).HoldsNode {
		return nil, nil
	}
	holders, _, err := r.poolUsers(ctx, poolName(specs.DatabasePlacement(run).NodeSelector), run)
	if err != nil {
		return nil, err
	}
	var peers []specs.Peer
	for _, h := range holders {
		ns, name, _ := strings.Cut(h.key, "/")
		if ns != run.Namespace {
			peers = append(peers, specs.Peer{Namespace: ns, Run: name, Exclusive: h.exclusive})
		}
	}
	return peers, nil
}

// holdsServer says whether run holds target's server now, a server its engine found to be the
// run's (engine.ListHoldings): the target's status is past Pending and not released, or ended
// with its server kept by the cleanup policy. A server torn down a moment ago is not held.
func holdsServer(run *v1.BenchmarkRun, target string) bool {
	for _, t := range run.Spec.Targets {
		if t.Name != target {
			continue
		}
		for _, ts := range run.Status.Targets {
			if ts.Name != target {
				continue
			}
			switch {
			case ts.Phase == "" || ts.Phase == v1.TargetPending:
				return false
			case !ts.Phase.Finished() || !ts.Released || keptByPolicy(run, target):
				return true
			}
		}
	}
	return false
}

// queued is a target of a run in its pool's queue, with its status (nil before the run started
// on it).
type queued struct {
	target *v1.Target
	status *v1.TargetStatus
}

// queueTargets are a run's targets that hold a node of its pool or wait for one now, in spec
// order: for order Parallel every target that has not finished and is past Pending, and of the
// Pending ones as many as its parallelism leaves room for; for the other orders the first target
// that has not finished (currentTarget).
func queueTargets(run *v1.BenchmarkRun) []queued {
	if !run.Spec.Parallel() {
		t, ts := currentTarget(run)
		if t == nil {
			return nil
		}
		return []queued{{t, ts}}
	}
	var active, pending []queued
	for i := range run.Spec.Targets {
		t := &run.Spec.Targets[i]
		ts := targetStatus(run, t.Name)
		switch {
		case ts != nil && ts.Phase.Finished():
		case ts == nil || ts.Phase == v1.TargetPending || ts.Phase == "":
			pending = append(pending, queued{t, ts})
		default:
			active = append(active, queued{t, ts})
		}
	}
	room := max(0, run.Spec.ParallelismOrDefault()-len(active))
	return append(active, pending[:min(room, len(pending))]...)
}

// targetStatus is the status of the run's target name, nil when it has none yet.
func targetStatus(run *v1.BenchmarkRun, name string) *v1.TargetStatus {
	for j := range run.Status.Targets {
		if run.Status.Targets[j].Name == name {
			return &run.Status.Targets[j]
		}
	}
	return nil
}

// currentTarget is the first target of a run that has not finished, with its status (nil
// before the run started on it).
func currentTarget(run *v1.BenchmarkRun) (*v1.Target, *v1.TargetStatus) {
	for i := range run.Spec.Targets {
		t := &run.Spec.Targets[i]
		var ts *v1.TargetStatus
		for j := range run.Status.Targets {
			if run.Status.Targets[j].Name == t.Name {
				ts = &run.Status.Targets[j]
			}
		}
		if ts == nil || !ts.Phase.Finished() {
			return t, ts
		}
	}
	return nil, nil
}

// poolName is a node selector in a stable, readable form ("mysqlbench.io/pool=database").
func poolName(selector map[string]string) string {
	parts := make([]string, 0, len(selector))
	for k, v := range selector {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// nodeUsable says whether a node can take a server: Ready and not cordoned.
func nodeUsable(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// keptByPolicy says whether the run's cleanup policy keeps the server of its finished target:
// Never keeps every server, OnSuccess the failed targets' ones. A server the policy deletes may
// still show in the cache for a moment after its teardown.
func keptByPolicy(run *v1.BenchmarkRun, target string) bool {
	for _, ts := range run.Status.Targets {
		if ts.Name != target {
			continue
		}
		switch {
		case !ts.Phase.Finished():
			return false
		case run.Spec.Cleanup == v1.CleanupNever:
			return true
		case run.Spec.Cleanup == v1.CleanupAlways:
			return false
		default: // OnSuccess
			return ts.Phase == v1.TargetFailed
		}
	}
	return false
}
