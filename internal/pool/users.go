package pool

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/server"
	"github.com/mysqlbench/mysqlbench-operator/internal/enginefacts"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// Turn is a target of a run in its pool's queue, with its status (nil before the run started on
// it).
type Turn struct {
	Target *v1.Target
	Status *v1.TargetStatus
}

// Listed is what the reconciler listed for the users of a pool: every run, the servers the
// engines found to be runs' (engine.ListHoldings, over the same runs with Self's newest status)
// and the operator's server pods. Self, the run being reconciled (nil for none), counts with its
// newest status; Turns are the targets of a run that hold a node of its pool or wait for one now
// (the run's order says which).
type Listed struct {
	Runs    []v1.BenchmarkRun
	Self    *v1.BenchmarkRun
	Servers []server.Holding
	Pods    []corev1.Pod
	Turns   func(*v1.BenchmarkRun) []Turn
}

// Runs indexes runs by key, self (nil for none) with its newest status: the map the engines'
// Holdings read and Users' Self must agree with.
func Runs(runs []v1.BenchmarkRun, self *v1.BenchmarkRun) map[client.ObjectKey]*v1.BenchmarkRun {
	byKey := make(map[client.ObjectKey]*v1.BenchmarkRun, len(runs)+1)
	for i := range runs {
		byKey[client.ObjectKeyFromObject(&runs[i])] = &runs[i]
	}
	if self != nil {
		byKey[client.ObjectKeyFromObject(self)] = self
	}
	return byKey
}

// Users returns the runs holding a node of pool (a server with the pool's node selector, or a
// target past Pending whose server the cache has not shown yet) and the runs waiting for one, in
// the queue's order (order), from what the reconciler listed.
//
// Labels prove nothing: anyone who may create StatefulSets can give one the operator's labels
// (and one with no replicas holds no node at all). A server counts only when a run that exists
// controls it (the owner reference's UID is that run's), it is that run's server for the target
// it is labelled with (its name derived from both: the engine's Holdings), and the run's status
// says that target holds its server (holdsServer).
func Users(pool string, l Listed) (holders, waiting []User) {
	byKey := Runs(l.Runs, l.Self)
	held := map[string]User{}
	for _, s := range l.Servers {
		if Name(s.NodeSelector) != pool || !holdsServer(s.Run, s.Target) {
			continue
		}
		key := s.Run.Namespace + "/" + s.Run.Name
		held[key+"#"+s.Target] = User{Run: key, Target: s.Target, Exclusive: s.Run.Spec.Placement.Database.IsExclusive(),
			Why: fmt.Sprintf("%s (target %s, %s)", key, s.Target, s.Object)}
	}
	lingeringServers(pool, l.Pods, byKey, held)
	for i := range l.Runs {
		other := &l.Runs[i]
		if l.Self != nil && other.Namespace == l.Self.Namespace && other.Name == l.Self.Name {
			other = l.Self // the newest status
		}
		// Runs wait in the order they were created, counting those the operator has not
		// reconciled yet: after a restart or a leader change the runs created meanwhile are
		// reconciled in no particular order, and the first one reconciled must not take a node
		// before runs created earlier.
		if other.Status.Phase.Finished() || !other.DeletionTimestamp.IsZero() ||
			!other.Spec.Placement.Database.IsExclusive() || Name(specs.DatabasePlacement(other).NodeSelector) != pool {
			continue
		}
		key := other.Namespace + "/" + other.Name
		for _, q := range l.Turns(other) {
			if !enginefacts.Of(q.Target.Engine).HoldsNode {
				continue
			}
			user := User{Run: key, Target: q.Target.Name, Created: other.CreationTimestamp.Time, Exclusive: true}
			if q.Status == nil || q.Status.Phase == v1.TargetPending || q.Status.Phase == "" {
				waiting = append(waiting, user)
				continue
			}
			if _, ok := held[key+"#"+q.Target.Name]; !ok {
				user.Why = fmt.Sprintf("%s (target %s, %s)", key, q.Target.Name, strings.ToLower(string(q.Status.Phase)))
				held[key+"#"+q.Target.Name] = user
			}
		}
	}
	for _, h := range held {
		holders = append(holders, h)
	}
	order(holders, waiting)
	return holders, waiting
}

// lingeringServers adds to held the server pods still on a node of the pool whose target
// released it: the pod shuts its server down for seconds after its StatefulSet is gone. A
// server created meanwhile could not be scheduled there (the exclusive anti-affinity still sees
// the old pod), and the scheduler need not try it again for minutes once the old pod is gone: a
// node is free only when its last server pod is. Labels prove nothing, so a pod counts only as
// the server of a run that exists, in this pool, whose status says the target released it, and
// whose controller carries the name that run gives that target's StatefulSet. (A deleted run's
// pods are not counted: nothing vouches for them.)
func lingeringServers(pool string, pods []corev1.Pod, runs map[client.ObjectKey]*v1.BenchmarkRun, held map[string]User) {
	if len(pods) == 0 {
		return
	}
	byLabel := make(map[client.ObjectKey]*v1.BenchmarkRun, len(runs))
	for _, run := range runs {
		byLabel[client.ObjectKey{Namespace: run.Namespace, Name: specs.LabelValue(run.Name)}] = run
	}
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		run := byLabel[client.ObjectKey{Namespace: p.Namespace, Name: p.Labels[specs.LabelRun]}]
		target := p.Labels[specs.LabelTarget]
		if run == nil || !run.DeletionTimestamp.IsZero() || Name(specs.DatabasePlacement(run).NodeSelector) != pool {
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
		held[key+"#"+target] = User{Run: key, Target: target, Exclusive: run.Spec.Placement.Database.IsExclusive(),
			Why: fmt.Sprintf("%s (target %s, its released server pod %s still on node %s)", key, target, p.Name, p.Spec.NodeName)}
	}
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
			case !ts.Phase.Finished() || !ts.Released || Kept(run, target):
				return true
			}
		}
	}
	return false
}

// Kept says whether the run's cleanup policy keeps the server of its finished target:
// Never keeps every server, OnSuccess the failed targets' ones. A server the policy deletes may
// still show in the cache for a moment after its teardown.
func Kept(run *v1.BenchmarkRun, target string) bool {
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

// Held counts the run's servers up or coming up: its targets past Pending that have not
// ended, and those that ended whose server is not released yet.
func Held(run *v1.BenchmarkRun) int {
	n := 0
	for _, ts := range run.Status.Targets {
		if (ts.Phase.Finished() && !ts.Released) || (!ts.Phase.Finished() && ts.Phase != v1.TargetPending && ts.Phase != "") {
			n++
		}
	}
	return n
}
