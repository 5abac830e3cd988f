package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
	"github.com/mysqlbench/mysqlbench-operator/internal/pool"
)

// parallel is order Parallel: it advances every target that holds a node or may take one, each
// by one transition, in spec order: a target that ended is released (its node freed for the next
// target or run), a target past Pending goes one phase or step on, and Pending targets ask the
// pool queue for a node while fewer than spec.parallelism targets are active. Each
// target's server is alone on its node (exclusive placement keeps the run's own servers apart
// too), so the targets measure at the same time without sharing a server node. The run finishes
// once every target has ended and is released.
//
// A run takes what the pool gives: with fewer free nodes than its parallelism it starts with
// fewer targets and starts the next one when a node frees up, waiting in the queue in the order
// runs were created like any other; it never holds nodes idle for targets that cannot start yet.
type parallel struct{}

func (parallel) advance(ctx context.Context, tx *transition) (ctrl.Result, error) {
	r, run := tx.r, tx.run
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
	// Each target's transition sets Progressing for itself, so the condition alone would name
	// only the last one: it leads with where every target stands.
	if c := apimeta.FindStatusCondition(run.Status.Conditions, v1.ConditionProgressing); c != nil && c.Status == metav1.ConditionTrue {
		tx.progressing(c.Reason, bounded.Head(withParallelSummary(parallelSummary(run), c.Message), bounded.Condition))
	}
	return soonest(results), errors.Join(errs...)
}

// parallelSummarySep ends the summary parallelSummary puts before the latest transition's
// message.
const parallelSummarySep = " | latest: "

// parallelSummary says where each target of a parallel run stands, in spec order: its phase
// and, once it measures, how many steps it has measured.
func parallelSummary(run *v1.BenchmarkRun) string {
	parts := make([]string, 0, len(run.Status.Targets))
	for _, t := range run.Spec.Targets {
		for _, ts := range run.Status.Targets {
			if ts.Name != t.Name {
				continue
			}
			part := fmt.Sprintf("%s %s", ts.Name, ts.Phase)
			if len(ts.Steps) > 0 && !ts.Phase.Finished() {
				part += fmt.Sprintf(" (%d steps measured)", len(ts.Steps))
			}
			parts = append(parts, part)
		}
	}
	return "targets in parallel: " + strings.Join(parts, ", ")
}

// withParallelSummary puts summary before message, replacing the summary an earlier reconcile
// put there when no transition has set a new message since.
func withParallelSummary(summary, message string) string {
	if strings.HasPrefix(message, "targets in parallel: ") {
		if _, latest, ok := strings.Cut(message, parallelSummarySep); ok {
			message = latest
		} else {
			message = ""
		}
	}
	if message == "" {
		return summary
	}
	return summary + parallelSummarySep + message
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

func (parallel) fits(context.Context, *transition) (string, error) { return "", nil }

// sharesNode: each target's server is alone on its node.
func (parallel) sharesNode() bool { return false }

func (parallel) startsNextEarly() bool { return true }

// queueTargets are every target that has not finished and is past Pending, and of the Pending
// ones as many as the run's parallelism leaves room for.
func (parallel) queueTargets(run *v1.BenchmarkRun) []pool.Turn {
	var active, pending []pool.Turn
	for i := range run.Spec.Targets {
		t := &run.Spec.Targets[i]
		ts := targetStatus(run, t.Name)
		switch {
		case ts != nil && ts.Phase.Finished():
		case ts == nil || ts.Phase == v1.TargetPending || ts.Phase == "":
			pending = append(pending, pool.Turn{Target: t, Status: ts})
		default:
			active = append(active, pool.Turn{Target: t, Status: ts})
		}
	}
	room := max(0, run.Spec.ParallelismOrDefault()-len(active))
	return append(active, pending[:min(room, len(pending))]...)
}

// pendingSince: a target waits from the start or from when any other target ended, whichever
// came last.
func (parallel) pendingSince(run *v1.BenchmarkRun, t v1.Target) time.Time {
	return pendingSince(run, t, true)
}
