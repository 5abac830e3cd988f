package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// advanceInterleaved is advance for spec.order Interleaved: every target is brought up to
// measuring (provisioned, prepared, warmed up) one after another in spec order while the earlier
// ones wait with their servers up; then the targets measure in the order of
// specs.InterleavedOrder, one step at a time on the shared database node; once no target has a
// step left, they clean up and end, and only then are servers torn down, so that no teardown
// loads the node while another target measures.
func (r *BenchmarkRunReconciler) advanceInterleaved(ctx context.Context, tx *transition) (ctrl.Result, error) {
	run := tx.run
	total := run.Spec.StepCount()
	measuringLeft := false
	for _, t := range run.Spec.Targets {
		ts := tx.target(t.Name)
		if ts.Phase == v1.TargetRunning && len(ts.Steps) < total {
			measuringLeft = true
		}
	}
	// Bring-up first, in spec order: a target that has not reached its ladder goes one phase on.
	for _, t := range run.Spec.Targets {
		ts := tx.target(t.Name)
		if ts.Phase.Finished() || ts.Phase == v1.TargetRunning || ts.Phase == v1.TargetCleaningUp {
			continue
		}
		return r.advanceOne(ctx, tx, t, ts)
	}
	if measuringLeft {
		slot, ok := specs.NextInterleaved(run)
		if !ok {
			return ctrl.Result{}, fmt.Errorf("interleaved run %s: targets have steps left but none is next", run.Name)
		}
		for _, t := range run.Spec.Targets {
			if t.Name == slot.Target {
				return r.advanceOne(ctx, tx, t, tx.target(t.Name))
			}
		}
	}
	// Measuring is over: clean up, end and release, target by target.
	return r.advanceInOrder(ctx, tx)
}

// advanceOne advances one target, with the run's objects in place.
func (r *BenchmarkRunReconciler) advanceOne(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus) (ctrl.Result, error) {
	ctx = logf.IntoContext(ctx, logf.FromContext(ctx).WithValues("target", t.Name))
	if err := r.ensureRunObjects(ctx, tx.run); err != nil {
		return r.blocked(ctx, tx, t, ts, err)
	}
	return r.advanceTarget(ctx, tx, t, ts)
}

// interleavedFit says why an interleaved run's servers cannot all be up together on one node
// of its database pool, "" when they fit: the sum of their requests (limits where a request is
// unset) against the allocatable CPU and memory of the pool's largest Ready node. Checked
// before anything starts, so that a run that cannot work fails at once instead of holding the
// node with servers that never schedule.
func (r *BenchmarkRunReconciler) interleavedFit(ctx context.Context, run *v1.BenchmarkRun) (string, error) {
	selector := specs.DatabasePlacement(run).NodeSelector
	nodes := &corev1.NodeList{}
	if err := r.List(ctx, nodes, client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(selector)}); err != nil {
		return "", fmt.Errorf("list nodes of pool %s: %w", poolName(selector), err)
	}
	var usable []corev1.Node
	for i := range nodes.Items {
		if nodeUsable(&nodes.Items[i]) {
			usable = append(usable, nodes.Items[i])
		}
	}
	if len(usable) == 0 {
		return "", nil // the queue says the pool has no Ready node, and waits
	}
	return InterleavedFit(run.Spec.Targets, usable), nil
}

// InterleavedFit is interleavedFit's decision: "" when the targets' servers fit together on the
// largest of nodes, else what does not fit and what to do.
func InterleavedFit(targets []v1.Target, nodes []corev1.Node) string {
	need := corev1.ResourceList{}
	for _, t := range targets {
		if t.Resources == nil {
			continue
		}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			q, ok := t.Resources.Requests[name]
			if !ok {
				q, ok = t.Resources.Limits[name]
			}
			if ok {
				sum := need[name]
				sum.Add(q)
				need[name] = sum
			}
		}
	}
	var best *corev1.Node
	for i := range nodes {
		n := &nodes[i]
		if fitsIn(need, n.Status.Allocatable) {
			return ""
		}
		if best == nil || n.Status.Allocatable.Memory().Cmp(*best.Status.Allocatable.Memory()) > 0 {
			best = n
		}
	}
	if best == nil {
		return ""
	}
	alloc := best.Status.Allocatable
	return fmt.Sprintf("order Interleaved keeps all %d targets' servers up together on one database node, and their "+
		"resources add up to %s CPU and %s memory, more than any Ready node of the pool can hold (node %s: %s CPU, %s memory "+
		"allocatable): lower the targets' resources, use fewer targets, or use order Sequential",
		len(targets), qty(need, corev1.ResourceCPU), qty(need, corev1.ResourceMemory), best.Name,
		qty(alloc, corev1.ResourceCPU), qty(alloc, corev1.ResourceMemory))
}

func fitsIn(need, alloc corev1.ResourceList) bool {
	for name, q := range need {
		a, ok := alloc[name]
		if ok && q.Cmp(a) > 0 {
			return false
		}
	}
	return true
}

func qty(l corev1.ResourceList, name corev1.ResourceName) string {
	q, ok := l[name]
	if !ok {
		return "0"
	}
	return q.String()
}
