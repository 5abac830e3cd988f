package run

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
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
		return okOld && okNew && pool.Held(cur) < pool.Held(old)
	},
}

// queuedRuns are the runs to wake when obj, a run, lets go of a node of its database pool: the
// first ones in that pool's queue, as many waiting targets as the pool has free nodes now
// (pool.Wake).
func (r *Reconciler) queuedRuns(ctx context.Context, obj client.Object) []reconcile.Request {
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
func (r *Reconciler) queuedRunsOfServerPod(ctx context.Context, obj client.Object) []reconcile.Request {
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
func (r *Reconciler) poolCapacity(ctx context.Context, selector map[string]string) (capacity, matched int, err error) {
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
func (r *Reconciler) admitToPool(ctx context.Context, tx *transition, t v1.Target) (bool, ctrl.Result, error) {
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
		if pool.Kept(run, ts.Name) {
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

// poolUsers lists the runs, the servers the engines find to be theirs and the operator's server
// pods, and returns the
// runs holding a node of the pool poolName and those waiting for one (pool.Users). self, the run
// being reconciled (nil for none), counts with its newest status.
func (r *Reconciler) poolUsers(ctx context.Context, poolName string, self *v1.BenchmarkRun) (holders, waiting []pool.User, err error) {
	runs := &v1.BenchmarkRunList{}
	if err := r.List(ctx, runs, client.UnsafeDisableDeepCopy); err != nil { // read only: no copy of every run
		return nil, nil, fmt.Errorf("list runs: %w", err)
	}
	servers, err := engine.ListHoldings(ctx, r.kubeClient, r.engines, pool.Runs(runs.Items, self))
	if err != nil {
		return nil, nil, err
	}
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.MatchingLabels{specs.LabelManagedBy: specs.ManagedBy, specs.LabelComponent: specs.ComponentServer},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, fmt.Errorf("list server pods: %w", err)
	}
	holders, waiting = pool.Users(poolName, pool.Listed{Runs: runs.Items, Self: self, Servers: servers, Pods: pods.Items,
		Turns: func(run *v1.BenchmarkRun) []pool.Turn { return orderOf(run.Spec).queueTargets(run) }})
	return holders, waiting, nil
}

// poolPeers are the runs of other namespaces that hold a node of the run's database pool now (the
// queue's holders, each verified): a server created now keeps away from their pods, and from no
// other namespace's pods (specs.DatabasePlacement says why). Targets the operator runs no server
// for (external) have none.
func (r *Reconciler) poolPeers(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) ([]specs.Peer, error) {
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

// currentQueued is the queue's target of a run whose targets take turns: the first that has not
// finished (currentTarget), if any.
func currentQueued(run *v1.BenchmarkRun) []pool.Turn {
	t, ts := currentTarget(run)
	if t == nil {
		return nil
	}
	return []pool.Turn{{Target: t, Status: ts}}
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
