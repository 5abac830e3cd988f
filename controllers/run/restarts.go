package run

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
)

// maxServerRestarts is how many restarts of its server a target survives: a server that keeps
// restarting (out of memory, a failing node) cannot be measured.
const maxServerRestarts = 3

// watchServer checks, while the target's data and measurements depend on it, that the server is
// still the instance they were made on. After a restart (or a replaced pod) the step in progress
// is discarded: nothing measured across a restart is kept. It reports whether it handled the
// reconcile.
func (r *Reconciler) watchServer(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	eng engine.Engine) (bool, ctrl.Result, error) {
	if ts.ServerInstance == "" {
		// An engine that cannot tell server instances apart (external, Percona): a restart
		// shows as lost connections, retried as failed attempts.
		return false, ctrl.Result{}, nil
	}
	state, err := eng.Ready(ctx, tx.run, t)
	if err != nil {
		return true, ctrl.Result{}, err
	}
	if state.Instance == ts.ServerInstance {
		return false, ctrl.Result{}, nil
	}
	what := "its pod is gone"
	switch {
	case state.Exit != nil && state.Instance != "":
		what = fmt.Sprintf("the server container exited (code %d): %s", state.Exit.ExitCode, state.Exit.Output)
	case state.Instance != "":
		what = "its pod was replaced"
	case state.Message != "":
		what = state.Message
	}
	res, err := r.serverRestarted(ctx, tx, t, ts, what)
	return true, res, err
}

// serverRestarted discards the step in progress and sends the target back to wait for its
// server; the probe then decides whether the data must be prepared again.
func (r *Reconciler) serverRestarted(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	what string) (ctrl.Result, error) {
	run := tx.run
	during := run.Status.CurrentStep
	logf.FromContext(ctx).Info("server restarted", "during", during, "restarts", ts.ServerRestarts+1, "what", what)
	if err := r.jobs().DeleteUnfinished(ctx, run, t.Name); err != nil {
		return ctrl.Result{}, err
	}
	ts.ServerRestarts++
	ts.LastServerRestart = &v1.ServerRestart{Time: tx.now(), During: during, Message: bounded.Head(what, bounded.Status)}
	ts.ServerInstance = ""
	if ts.ServerRestarts > maxServerRestarts {
		return r.failTarget(ctx, tx, t, ts, fmt.Sprintf("the server restarted %d times during the run, the last time during %s (%s): "+
			"a server that keeps restarting cannot be measured; check its log, memory limit and node", ts.ServerRestarts, during, what))
	}
	tx.event(warning, "ServerRestarted", "target %s: the server restarted during %s (%s); that step is discarded and "+
		"measured again once the server is ready, its sbtest tables checked (prepared again if gone) and warmed up",
		t.Name, during, what)
	r.enter(tx, t, ts, v1.TargetProvisioning)
	return ctrl.Result{}, nil
}

// replaceServer gives the target a new server instance for repetition rep: it deletes the
// current instance's pod (the StatefulSet starts a new one) and provisions again, as after a
// restart, but nothing is discarded and no restart is counted: the previous repetition ended
// with its last step recorded.
func (r *Reconciler) replaceServer(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	eng engine.Engine, rep int32) (ctrl.Result, error) {
	rp, ok := eng.(engine.Replacer)
	if !ok {
		return r.failTarget(ctx, tx, t, ts, fmt.Sprintf("serverInstance %s needs a server the operator can replace; "+
			"engine %s cannot: use serverInstance %s", v1.ServerInstancePerRepetition, t.Engine, v1.ServerInstanceShared))
	}
	if err := r.jobs().DeleteUnfinished(ctx, tx.run, t.Name); err != nil {
		return ctrl.Result{}, err
	}
	old := ts.ServerInstance
	if err := rp.Replace(ctx, tx.run, t, old); err != nil {
		return ctrl.Result{}, fmt.Errorf("replace target %s's server: %w", t.Name, err)
	}
	logf.FromContext(ctx).Info("server replaced", "target", t.Name, "repetition", rep, "replaced", old)
	ts.LastReplacement = &v1.ServerReplacement{Time: tx.now(), Repetition: rep, Replaced: old}
	ts.ServerInstance = ""
	tx.event(normal, "ServerReplaced", "target %s: a new server instance for repetition %d of %d (serverInstance %s)",
		t.Name, rep, tx.run.Spec.RepetitionsOrDefault(), v1.ServerInstancePerRepetition)
	r.enter(tx, t, ts, v1.TargetProvisioning)
	return ctrl.Result{}, nil
}

// afterRestartProbe is where a target goes after the probe of a restarted server: its sbtest
// tables survived (a container restart, or a persistent volume), so a warm-up brings the caches
// back, or they are gone (a new pod on an emptyDir) and must be prepared again. Tables that a
// prepare cut short by the restart was filling are never trusted. A client that prepares no
// data (mysqlslap) has no tables to keep.
func afterRestartProbe(run *v1.BenchmarkRun, restart *v1.ServerRestart, tablesFound int32) (v1.TargetPhase, string) {
	w := run.Spec.Workload
	tables := max(w.Tables, 1)
	duringPrepare := restart != nil && restart.During == "prepare"
	switch {
	case !loadclient.For(w).Capabilities().PreparesData:
		// The client makes its own tables at every step: nothing to prepare again.
		return afterPrepare(run), ""
	case tablesFound >= tables && !duringPrepare:
		return afterPrepare(run), ""
	case w.SkipPrepare:
		return v1.TargetFailed, fmt.Sprintf("the server restarted and %d of the %d sbtest tables are left; "+
			"with workload.skipPrepare the operator does not create them: load them again and start a new run", tablesFound, tables)
	default:
		return v1.TargetPreparing, ""
	}
}
