package run

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/pool"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// interleaved is order Interleaved: every target is brought up to measuring (provisioned,
// prepared, warmed up) one after another in spec order while the earlier ones wait with their
// servers up; then the targets measure in the order of specs.InterleavedOrder, one step at a time
// on the shared database node; once no target has a step left, they clean up and end, and only
// then are servers torn down, so that no teardown loads the node while another target measures.
type interleaved struct{}

func (interleaved) advance(ctx context.Context, tx *transition) (ctrl.Result, error) {
	r, run := tx.r, tx.run
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

// fits says why an interleaved run's servers cannot all be up together on one node of its
// database pool, "" when they fit: the sum of their requests (limits where a request is unset)
// against the allocatable CPU and memory of the pool's largest Ready node (pool.Fit). Checked
// before anything starts, so that a run that cannot work fails at once instead of holding the
// node with servers that never schedule.
func (interleaved) fits(ctx context.Context, tx *transition) (string, error) {
	r, run := tx.r, tx.run
	selector := specs.DatabasePlacement(run).NodeSelector
	nodes := &corev1.NodeList{}
	if err := r.List(ctx, nodes, client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(selector)}); err != nil {
		return "", fmt.Errorf("list nodes of pool %s: %w", pool.Name(selector), err)
	}
	var usable []corev1.Node
	for i := range nodes.Items {
		if pool.Usable(&nodes.Items[i]) {
			usable = append(usable, nodes.Items[i])
		}
	}
	if len(usable) == 0 {
		return "", nil // the queue says the pool has no Ready node, and waits
	}
	return pool.Fit(run.Spec.Targets, usable), nil
}

// sharesNode: the targets' servers are up together on one database node, the one the first took.
func (interleaved) sharesNode() bool { return true }

// startsNextEarly: the next step is usually another target's.
func (interleaved) startsNextEarly() bool { return false }

func (interleaved) queueTargets(run *v1.BenchmarkRun) []pool.Turn { return currentQueued(run) }

func (interleaved) pendingSince(run *v1.BenchmarkRun, t v1.Target) time.Time {
	return pendingSince(run, t, false)
}
