package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
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
	"github.com/mysqlbench/mysqlbench-operator/internal/pool"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

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
// first ones in that pool's queue, as many waiting targets as the pool has free nodes now
// (pool.Wake).
func (r *BenchmarkRunReconciler) queuedRuns(ctx context.Context, obj client.Object) []reconcile.Request {
	run, ok := obj.(*v1.BenchmarkRun)
	if !ok {
		return nil
	}
	selector := specs.DatabasePlacement(run).NodeSelector
	snap := pool.Snapshot{Name: pool.Name(selector)}
	var err error
	if snap.Capacity, _, err = r.poolCapacity(ctx, selector); err == nil {
		snap.Holders, snap.Waiting, err = r.poolUsers(ctx, snap.Name, nil)
	}
	if err != nil {
		logf.FromContext(ctx).Error(err, "cannot wake the runs queued for a node pool; they recheck on their own", "pool", snap.Name)
		return nil
	}
	var reqs []reconcile.Request
	for _, key := range pool.Wake(snap) {
		ns, name, _ := strings.Cut(key, "/")
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}})
	}
	return reqs
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

// poolCapacity counts the nodes with the pool's labels (matched) and those of them that can take
// a server now (Ready and schedulable).
func (r *BenchmarkRunReconciler) poolCapacity(ctx context.Context, selector map[string]string) (capacity, matched int, err error) {
	nodes := &corev1.NodeList{}
	if err := r.List(ctx, nodes, client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(selector)}, client.UnsafeDisableDeepCopy); err != nil {
		return 0, 0, fmt.Errorf("list nodes of pool %s: %w", pool.Name(selector), err)
	}
	for i := range nodes.Items {
		if pool.Usable(&nodes.Items[i]) {
			capacity++
		}
	}
	return capacity, len(nodes.Items), nil
}

// admitToPool decides, through the pool queue (internal/pool), whether the run's next target
// may start its server now; a target whose engine holds no node takes no turn. A pool with no
// Ready, schedulable node is not waited for in Provisioning: the target stays Pending, says what
// is missing, and fails when nothing changes.
func (r *BenchmarkRunReconciler) admitToPool(ctx context.Context, tx *transition, t v1.Target) (bool, ctrl.Result, error) {
	run := tx.run
	if !engine.FactsOf(t.Engine).HoldsNode {
		return true, ctrl.Result{}, nil
	}
	// Wall time, not r.clock: what the decision costs the manager, for
	// mysqlbench_queue_decision_seconds.
	start := time.Now()
	selector := specs.DatabasePlacement(run).NodeSelector
	snap := pool.Snapshot{Name: pool.Name(selector)}
	var err error
	if snap.Capacity, snap.Matched, err = r.poolCapacity(ctx, selector); err != nil {
		return false, ctrl.Result{}, err
	}
	q := pool.Request{Run: run.Namespace + "/" + run.Name, Target: t.Name, Exclusive: run.Spec.Placement.Database.IsExclusive(),
		SharesNode: tx.order.sharesNode(), Cleanup: string(run.Spec.Cleanup), Since: tx.order.pendingSince(run, t), Now: r.clock.Now(),
		SchedulingGrace: r.schedulingGrace, ReadyTimeout: r.readyTimeout}
	for _, ts := range run.Status.Targets {
		if keptByPolicy(run, ts.Name) {
			q.Kept = append(q.Kept, ts.Name)
		}
	}
	if snap.Capacity > 0 && q.Exclusive {
		// Only a server that must be alone on a node of a pool with nodes waits in line.
		if snap.Holders, snap.Waiting, err = r.poolUsers(ctx, snap.Name, run); err != nil {
			return false, ctrl.Result{}, err
		}
	}
	d := pool.Decide(snap, q)
	switch d.Verdict {
	case pool.Admitted:
		metrics.ObserveQueueDecision(metrics.QueueAdmitted, time.Since(start))
	case pool.Queued:
		tx.progressing(v1.ReasonQueued, d.Message)
		metrics.ObserveQueueDecision(metrics.QueueQueued, time.Since(start))
	case pool.NoNodes:
		tx.stalled(v1.ReasonNoPoolNodes, d.Message)
	case pool.Refused:
		return false, ctrl.Result{}, &engine.ConfigError{Message: d.Message}
	}
	return d.Start(), ctrl.Result{RequeueAfter: d.RecheckAfter}, nil
}

// pendingSince is when target t became one the run works on: when the target before it ended
// (targets run one at a time, in spec order), or when the run started. Targets that run
// concurrently wait from the start or from when any other target ended, whichever came last.
func pendingSince(run *v1.BenchmarkRun, t v1.Target, concurrent bool) time.Time {
	since := run.Status.StartTime.Time
	for _, st := range run.Spec.Targets {
		if st.Name == t.Name && !concurrent {
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

// poolUsers returns the runs holding a node of pool (a server StatefulSet with the pool's node
// selector, or a target past Pending whose StatefulSet the cache has not shown yet) and the runs
// waiting for one, oldest first. self, the run being reconciled (nil for none), counts with its
// newest status.
//
// Labels prove nothing: anyone who may create StatefulSets can give one the operator's labels
// (and one with no replicas holds no node at all). A StatefulSet counts only when a run that
// exists controls it (the owner reference's UID is that run's), it is that run's server for the
// target it is labelled with (its name derived from both), and the run's status says that target
// holds its server; see runServer.
func (r *BenchmarkRunReconciler) poolUsers(ctx context.Context, poolName string, self *v1.BenchmarkRun) (holders, waiting []pool.User, err error) {
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
	held := map[string]pool.User{}
	stss := &appsv1.StatefulSetList{}
	if err := r.List(ctx, stss, client.MatchingLabels{specs.LabelManagedBy: specs.ManagedBy}); err != nil {
		return nil, nil, fmt.Errorf("list server statefulsets: %w", err)
	}
	for i := range stss.Items {
		sts := &stss.Items[i]
		if sts.Spec.Template.Labels[specs.LabelComponent] != specs.ComponentServer ||
			pool.Name(sts.Spec.Template.Spec.NodeSelector) != poolName || !sts.DeletionTimestamp.IsZero() {
			continue
		}
		owner, target := runServer(sts, byKey)
		if owner == nil {
			continue
		}
		key := owner.Namespace + "/" + owner.Name
		held[key+"#"+target] = pool.User{Run: key, Target: target, Exclusive: owner.Spec.Placement.Database.IsExclusive(),
			Why: fmt.Sprintf("%s (target %s, StatefulSet %s)", key, target, sts.Name)}
	}
	if err := r.lingeringServers(ctx, poolName, byKey, held); err != nil {
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
			!other.Spec.Placement.Database.IsExclusive() || pool.Name(specs.DatabasePlacement(other).NodeSelector) != poolName {
			continue
		}
		key := other.Namespace + "/" + other.Name
		for _, q := range orderOf(other.Spec).queueTargets(other) {
			if !engine.FactsOf(q.target.Engine).HoldsNode {
				continue
			}
			user := pool.User{Run: key, Target: q.target.Name, Created: other.CreationTimestamp.Time, Exclusive: true}
			if q.status == nil || q.status.Phase == v1.TargetPending || q.status.Phase == "" {
				waiting = append(waiting, user)
				continue
			}
			if _, ok := held[key+"#"+q.target.Name]; !ok {
				user.Why = fmt.Sprintf("%s (target %s, %s)", key, q.target.Name, strings.ToLower(string(q.status.Phase)))
				held[key+"#"+q.target.Name] = user
			}
		}
	}
	for _, h := range held {
		holders = append(holders, h)
	}
	pool.Order(holders, waiting)
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
func (r *BenchmarkRunReconciler) lingeringServers(ctx context.Context, poolName string, runs map[client.ObjectKey]*v1.BenchmarkRun,
	held map[string]pool.User) error {
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
		if run == nil || !run.DeletionTimestamp.IsZero() || pool.Name(specs.DatabasePlacement(run).NodeSelector) != poolName {
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
		held[key+"#"+target] = pool.User{Run: key, Target: target, Exclusive: run.Spec.Placement.Database.IsExclusive(),
			Why: fmt.Sprintf("%s (target %s, its released server pod %s still on node %s)", key, target, p.Name, p.Spec.NodeName)}
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
	holders, _, err := r.poolUsers(ctx, pool.Name(specs.DatabasePlacement(run).NodeSelector), run)
	if err != nil {
		return nil, err
	}
	var peers []specs.Peer
	for _, h := range holders {
		ns, name, _ := strings.Cut(h.Run, "/")
		if ns != run.Namespace {
			peers = append(peers, specs.Peer{Namespace: ns, Run: name, Exclusive: h.Exclusive})
		}
	}
	return peers, nil
}

// runServer returns the run whose server sts is and the target it serves, when the run holds
// that server now: the run exists and controls sts (by UID), sts carries the name the run's
// target gives its server, and the target's status is past Pending and not released, or ended
// with its server kept by the cleanup policy. Anything else (a StatefulSet with the operator's
// labels that someone else made, one naming a run that is gone, a server torn down a moment ago)
// returns nil.
func runServer(sts *appsv1.StatefulSet, runs map[client.ObjectKey]*v1.BenchmarkRun) (*v1.BenchmarkRun, string) {
	ref := metav1.GetControllerOfNoCopy(sts)
	if ref == nil || ref.Kind != "BenchmarkRun" {
		return nil, ""
	}
	run := runs[client.ObjectKey{Namespace: sts.Namespace, Name: ref.Name}]
	if run == nil || run.UID != ref.UID || !run.DeletionTimestamp.IsZero() {
		return nil, ""
	}
	target := sts.Labels[specs.LabelTarget]
	if specs.ServerName(run, target) != sts.Name {
		return nil, ""
	}
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
				return nil, ""
			case !ts.Phase.Finished() || !ts.Released || keptByPolicy(run, target):
				return run, target
			}
		}
	}
	return nil, ""
}

// queued is a target of a run in its pool's queue, with its status (nil before the run started
// on it).
type queued struct {
	target *v1.Target
	status *v1.TargetStatus
}

// currentQueued is the queue's target of a run whose targets take turns: the first that has not
// finished (currentTarget), if any.
func currentQueued(run *v1.BenchmarkRun) []queued {
	t, ts := currentTarget(run)
	if t == nil {
		return nil
	}
	return []queued{{t, ts}}
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
