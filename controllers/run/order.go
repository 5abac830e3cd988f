package run

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/pool"
)

// order is how a run's targets take their turns (spec.order): Sequential (sequential), Interleaved
// (interleaved) or Parallel (parallel). It is chosen once, from the spec, for each transition
// (orderOf); everything else asks the order, never the spec, what it implies.
type order interface {
	// advance makes the transitions the run's status calls for, once it has started: one for the
	// target whose turn it is (one for each active target with order Parallel), and the run's end
	// once every target has ended and is released. A failed target does not stop the others.
	advance(ctx context.Context, tx *transition) (ctrl.Result, error)
	// fits says why the run's servers cannot all run as the order needs them, "" when they can;
	// checked before a target leaves Pending.
	fits(ctx context.Context, tx *transition) (string, error)
	// sharesNode says whether the run's servers share one database node: any of the run's loads
	// loads it, and its later servers take the node its first server took.
	sharesNode() bool
	// startsNextEarly says whether a ladder step's next step may start as soon as the step's
	// load has ended: whether the next step is the same target's.
	startsNextEarly() bool
	// queueTargets are the targets of run that hold a node of its pool or wait for one now, in
	// spec order (run may be another run than the one reconciled).
	queueTargets(run *v1.BenchmarkRun) []pool.Turn
	// pendingSince is when target t became one the run works on, for how long it has waited for
	// a node of its pool.
	pendingSince(run *v1.BenchmarkRun, t v1.Target) time.Time
}

// orderOf is the order of spec: the one place that asks it.
func orderOf(spec v1.BenchmarkRunSpec) order {
	switch {
	case spec.Interleaved():
		return interleaved{}
	case spec.Parallel():
		return parallel{}
	}
	return sequential{}
}

// sequential is order Sequential: one target at a time, in spec order.
type sequential struct{}

func (sequential) advance(ctx context.Context, tx *transition) (ctrl.Result, error) {
	return tx.r.advanceInOrder(ctx, tx)
}

func (sequential) fits(context.Context, *transition) (string, error) { return "", nil }

func (sequential) sharesNode() bool { return false }

func (sequential) startsNextEarly() bool { return true }

func (sequential) queueTargets(run *v1.BenchmarkRun) []pool.Turn { return currentQueued(run) }

func (sequential) pendingSince(run *v1.BenchmarkRun, t v1.Target) time.Time {
	return pendingSince(run, t, false)
}

// advanceInOrder advances the first target in spec order that has not ended, after releasing
// what the ended ones before it leave, and finishes the run once all have ended and are released.
func (r *Reconciler) advanceInOrder(ctx context.Context, tx *transition) (ctrl.Result, error) {
	for _, t := range tx.run.Spec.Targets {
		ts := tx.target(t.Name)
		if ts.Phase.Finished() {
			if !ts.Released {
				// The status says it ended; now deal with what it leaves.
				return r.release(ctx, tx, t, ts)
			}
			continue
		}
		return r.advanceOne(ctx, tx, t, ts)
	}
	return r.finish(ctx, tx)
}

// advanceOne advances one target, with the run's objects in place.
func (r *Reconciler) advanceOne(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus) (ctrl.Result, error) {
	ctx = logf.IntoContext(ctx, logf.FromContext(ctx).WithValues("target", t.Name))
	if err := r.ensureRunObjects(ctx, tx.run); err != nil {
		return r.blocked(ctx, tx, t, ts, err)
	}
	return r.advanceTarget(ctx, tx, t, ts)
}
