package controllers

import (
	"context"
	"errors"

	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// advanceParallel advances every target of an order Parallel run that holds a node or may take
// one, each by one transition, in spec order: a target that ended is released (its node freed for
// the next target or run), a target past Pending goes one phase or step on, and Pending targets
// ask the pool queue for a node while fewer than spec.parallelism targets are active. Each
// target's server is alone on its node (exclusive placement keeps the run's own servers apart
// too), so the targets measure at the same time without sharing a server node. The run finishes
// once every target has ended and is released.
//
// A run takes what the pool gives: with fewer free nodes than its parallelism it starts with
// fewer targets and starts the next one when a node frees up, waiting in the queue in the order
// runs started like any other; it never holds nodes idle for targets that cannot start yet.
func (r *BenchmarkRunReconciler) advanceParallel(ctx context.Context, tx *transition) (ctrl.Result, error) {
	run := tx.run
	// Every entry first: tx.target appends missing ones, which would move entries already
	// pointed to.
	for _, t := range run.Spec.Targets {
		tx.target(t.Name)
	}
	limit := run.Spec.ParallelismOrDefault()
	active := 0
	for _, t := range run.Spec.Targets {
		if targetActive(tx.target(t.Name)) {
			active++
		}
	}
	var (
		results []ctrl.Result
		errs    []error
		done    = true
		first   string
	)
	for _, t := range run.Spec.Targets {
		ts := tx.target(t.Name)
		var res ctrl.Result
		var err error
		switch {
		case ts.Phase.Finished():
			if ts.Released {
				continue
			}
			done = false
			res, err = r.release(ctx, tx, t, ts)
		case targetActive(ts):
			done = false
			res, err = r.advanceOne(ctx, tx, t, ts)
		default:
			done = false
			if active >= limit {
				continue
			}
			res, err = r.advanceOne(ctx, tx, t, ts)
			if targetActive(ts) {
				active++
			}
		}
		if first == "" && targetActive(ts) {
			first = t.Name
		}
		results = append(results, res)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if done {
		return r.finish(ctx, tx)
	}
	if first != "" {
		// Several targets are current: the status names the first in spec order.
		run.Status.CurrentTarget = first
	}
	return soonest(results), errors.Join(errs...)
}

// targetActive says whether a target is past Pending and has not ended: it holds its server.
func targetActive(ts *v1.TargetStatus) bool {
	return ts.Phase != "" && ts.Phase != v1.TargetPending && !ts.Phase.Finished()
}

// soonest merges the results of several targets' transitions: a requeue if any asks for one, at
// the earliest time any asks for.
func soonest(results []ctrl.Result) ctrl.Result {
	var out ctrl.Result
	for _, r := range results {
		if r.Requeue { //nolint:staticcheck // a target's transition may still ask for an immediate requeue
			out.Requeue = true //nolint:staticcheck // see above
		}
		if r.RequeueAfter > 0 && (out.RequeueAfter == 0 || r.RequeueAfter < out.RequeueAfter) {
			out.RequeueAfter = r.RequeueAfter
		}
	}
	return out
}
