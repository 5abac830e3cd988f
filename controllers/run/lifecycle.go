package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/admission"
	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/owned"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/scheduled"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// advance makes the transition the run's status calls for: its start, then what its order
// calls for (order.advance).
func (r *Reconciler) advance(ctx context.Context, tx *transition) (ctrl.Result, error) {
	if tx.run.Status.Phase == "" {
		r.start(ctx, tx)
		return ctrl.Result{}, nil
	}
	return tx.order.advance(ctx, tx)
}

// blocked acts on an object the target cannot use: one under a name the run needs that another
// run or someone else holds, or one that is not what the operator wrote (an *owned.ForeignError
// or *engine.ConfigError), fails the target with what to do; an earlier run's object of the
// same name on its way out (*owned.DeletingError) is waited for. Other errors are returned to be
// retried.
func (r *Reconciler) blocked(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	err error) (ctrl.Result, error) {
	if de := owned.AsDeleting(err); de != nil {
		tx.progressing(v1.ReasonWaiting, fmt.Sprintf("target %s: %s", t.Name, de.Error()))
		return ctrl.Result{RequeueAfter: de.After}, nil
	}
	if msg := unusable(err); msg != "" {
		return r.failTarget(ctx, tx, t, ts, msg)
	}
	return ctrl.Result{}, err
}

// unusable is the message of an error that no retry can heal, for the user: an object of someone
// else under the run's name, or a spec or object that cannot work. "" for any other error.
func unusable(err error) string {
	var fe *owned.ForeignError
	var ce *engine.ConfigError
	switch {
	case errors.As(err, &fe):
		return fe.Error()
	case errors.As(err, &ce):
		return ce.Message
	}
	return ""
}

// start records the run's start: every target Pending, the first one up next. Without the
// admission policy in force the run's Events say so, once: nobody checked that its author may
// read what it names.
func (r *Reconciler) start(ctx context.Context, tx *transition) {
	run := tx.run
	now := tx.now()
	run.Status.StartTime = &now
	run.Status.Phase = v1.RunPending
	for _, t := range run.Spec.Targets {
		tx.target(t.Name)
	}
	run.Status.ResultsConfigMap = specs.ResultsConfigMapName(run)
	what := fmt.Sprintf("benchmarking %d targets at %d thread counts", len(run.Spec.Targets), len(run.Spec.Ladder.Threads))
	if reps := run.Spec.RepetitionsOrDefault(); reps > 1 {
		what += fmt.Sprintf(", %d repetitions", reps)
	}
	tx.progressing(v1.ReasonRunning, what)
	tx.SetCondition(v1.ConditionReady, metav1.ConditionFalse, v1.ReasonRunning, "the run has not finished")
	tx.event(normal, "Started", "%s", what)
	if absent := r.admission.Absent(ctx); absent != "" {
		tx.event(warning, v1.ReasonAdmissionPolicyAbsent, "%s: %s", absent, admission.Consequence)
	}
}

// advanceTarget moves the current target one phase further.
func (r *Reconciler) advanceTarget(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus) (ctrl.Result, error) {
	run := tx.run
	eng, err := r.engineFor(t)
	if err != nil {
		return r.failTarget(ctx, tx, t, ts, err.Error())
	}
	run.Status.CurrentTarget = t.Name

	if ts.Phase == v1.TargetRunning {
		// Before the server is watched: once its pod is deleted, the next look would otherwise
		// take the replacement for a restart.
		if rep, due := specs.ReplacementDue(run, len(ts.Steps), ts.LastReplacement); due {
			return r.replaceServer(ctx, tx, t, ts, eng, rep)
		}
	}
	switch ts.Phase {
	case v1.TargetPreparing, v1.TargetWarmingUp, v1.TargetRunning:
		// The data and the measurements belong to one server instance.
		if handled, res, err := r.watchServer(ctx, tx, t, ts, eng); handled || err != nil {
			return res, err
		}
	}

	switch ts.Phase {
	case v1.TargetPending, "":
		// Nothing is provisioned for data that cannot fit the volume, or for a run that names
		// a ConfigMap that is not there.
		if err := specs.CheckTargetData(run.Spec, t); err != nil {
			return r.failTarget(ctx, tx, t, ts, err.Error())
		}
		if ok, res, err := r.checkReferences(ctx, tx, t, ts); !ok {
			return res, err
		}
		msg, err := tx.order.fits(ctx, tx)
		if err != nil {
			return ctrl.Result{}, err
		}
		if msg != "" {
			return r.failTarget(ctx, tx, t, ts, msg)
		}
		// A server needs a node of its pool to itself: wait in line, without a timeout.
		if ok, res, err := r.admitToPool(ctx, tx, t); !ok {
			if engine.IsConfigError(err) {
				return r.failTarget(ctx, tx, t, ts, err.Error())
			}
			return res, err
		}
		now := tx.now()
		ts.StartTime = &now
		r.enter(tx, t, ts, specs.NextPhase(run, v1.TargetPending))
		return ctrl.Result{}, nil

	case v1.TargetProvisioning:
		return r.provision(ctx, tx, t, ts, eng)

	case v1.TargetPreparing:
		// The data for the next step: the first one's, or data prepared again for a later one.
		i := len(ts.Steps)
		return r.runPhase(ctx, tx, t, ts, eng, specs.PrepareStepAt(run, i),
			func(*load.Final) {
				if fresh, _ := run.Spec.FreshDataBefore(i); fresh {
					ts.PreparedFor = int32(i + 1)
				}
				r.enter(tx, t, ts, afterPrepare(run))
			})

	case v1.TargetWarmingUp:
		return r.runPhase(ctx, tx, t, ts, eng, specs.WarmupStepAt(run, len(ts.Steps)),
			func(*load.Final) { r.enter(tx, t, ts, specs.NextPhase(run, v1.TargetWarmingUp)) })

	case v1.TargetRunning:
		// The next step is the count of recorded ones, whatever restarts came in between: a
		// step (one rung of one repetition) is recorded once and then never measured again.
		i := len(ts.Steps)
		if i >= run.Spec.StepCount() {
			r.enter(tx, t, ts, specs.NextPhase(run, v1.TargetRunning))
			return ctrl.Result{}, nil
		}
		if fresh, why := run.Spec.FreshDataBefore(i); fresh && ts.PreparedFor < int32(i+1) {
			// Decided and recorded here, prepared by the next reconcile (Preparing, then the
			// warm-up), so that the step measures data no earlier workload has changed.
			w := run.Spec.WorkloadAt(i)
			r.enter(tx, t, ts, v1.TargetPreparing)
			tx.event(normal, "DataPreparedAgain", "target %s: preparing the data again before workload %s (step %s): %s",
				t.Name, w.Name, describeStep(run, i), why)
			return ctrl.Result{}, nil
		}
		return r.runLadderStep(ctx, tx, t, ts, eng, i)

	case v1.TargetCleaningUp:
		if step, ok := specs.AfterLadderStep(run, t); ok {
			return r.runPhase(ctx, tx, t, ts, eng, step,
				func(*load.Final) {
					if ts.Message != "" {
						// It failed earlier; its tables are gone now.
						_, _ = r.failTarget(ctx, tx, t, ts, ts.Message)
						return
					}
					r.succeedTarget(tx, t, ts)
				})
		}
		r.succeedTarget(tx, t, ts)
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, fmt.Errorf("target %s has unknown phase %q", t.Name, ts.Phase)
}

// enter moves a target to phase, resetting the failed attempts of the phase it leaves.
func (r *Reconciler) enter(tx *transition, t v1.Target, ts *v1.TargetStatus, phase v1.TargetPhase) {
	run := tx.run
	ts.Phase = phase
	ts.FailedAttempts = 0
	switch phase {
	case v1.TargetProvisioning:
		run.Status.Phase = v1.RunProvisioning
		run.Status.CurrentStep = "provision"
	case v1.TargetPreparing:
		run.Status.Phase = v1.RunPreparing
		run.Status.CurrentStep = "prepare"
	case v1.TargetWarmingUp:
		run.Status.Phase = v1.RunPreparing
		run.Status.CurrentStep = "warmup"
	case v1.TargetRunning:
		run.Status.Phase = v1.RunRunning
		run.Status.CurrentStep = describeStep(run, len(ts.Steps))
	case v1.TargetCleaningUp:
		run.Status.CurrentStep = "cleanup"
	}
	tx.progressing(v1.ReasonRunning, fmt.Sprintf("target %s: %s", t.Name, run.Status.CurrentStep))
	tx.event(normal, "Target"+string(phase), "target %s: %s", t.Name, phaseMessage(phase))
}

func phaseMessage(p v1.TargetPhase) string {
	switch p {
	case v1.TargetProvisioning:
		return "provisioning the server"
	case v1.TargetPreparing:
		return "server ready, preparing data"
	case v1.TargetWarmingUp:
		return "warming up"
	case v1.TargetRunning:
		return "running the ladder"
	case v1.TargetCleaningUp:
		return "ladder done, cleaning up"
	}
	return string(p)
}

// describeStep is the status' currentStep for step i of a target (in measuring order), e.g.
// "3/11 (8 threads)", or with repetitions "14/33 (8 threads, repetition 2/3)", and with several
// workloads "14/40 (read-only, 8 threads)".
func describeStep(run *v1.BenchmarkRun, i int) string {
	threads := run.Spec.Ladder.Threads
	total := run.Spec.StepCount()
	if i >= total {
		return "cleanup"
	}
	rung, rep := run.Spec.LadderPosition(i)
	what := fmt.Sprintf("%d threads", threads[rung])
	if w := run.Spec.WorkloadAt(i); w.Name != "" {
		what = w.Name + ", " + what
	}
	if reps := run.Spec.RepetitionsOrDefault(); reps > 1 {
		return fmt.Sprintf("%d/%d (%s, repetition %d/%d)", i+1, total, what, rep, reps)
	}
	return fmt.Sprintf("%d/%d (%s)", i+1, total, what)
}

// afterPrepare is the phase after prepare: the warm-up when there is one.
func afterPrepare(run *v1.BenchmarkRun) v1.TargetPhase {
	return specs.NextPhase(run, v1.TargetPreparing)
}

// provision creates the server, waits until it is ready, then proves the benchmark account with
// the probe Job and records the server's real version. Every wait here, whatever it waits for
// (the server, an earlier run's object on its way out, an API error to pass), ends with the
// server ready timeout, counted from when the target left the queue or its server last
// restarted.
func (r *Reconciler) provision(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus, eng engine.Engine) (ctrl.Result, error) {
	run := tx.run
	since := ts.StartTime.Time
	if ts.LastServerRestart != nil && ts.LastServerRestart.Time.After(since) {
		since = ts.LastServerRestart.Time.Time
	}
	if ts.LastReplacement != nil && ts.LastReplacement.Time.After(since) {
		since = ts.LastReplacement.Time.Time
	}
	waited := r.clock.Since(since)
	peers, err := r.poolPeers(ctx, run, t)
	if err != nil {
		return r.failPastReadyTimeout(ctx, tx, t, ts, since, fmt.Errorf("provision target %s: %w", t.Name, err))
	}
	if err := eng.Provision(ctx, run, t, peers); err != nil {
		if engine.IsConfigError(err) {
			return r.failTarget(ctx, tx, t, ts, err.Error())
		}
		if we := engine.AsWait(err); we != nil {
			if waited >= r.readyTimeout {
				return r.failTarget(ctx, tx, t, ts, fmt.Sprintf("server not provisioned after %s: %s", r.readyTimeout, we.Message))
			}
			tx.progressing(v1.ReasonWaiting, fmt.Sprintf("target %s: %s", t.Name, we.Message))
			return ctrl.Result{RequeueAfter: min(we.After, r.readyTimeout-waited)}, nil
		}
		return r.failPastReadyTimeout(ctx, tx, t, ts, since, fmt.Errorf("provision target %s: %w", t.Name, err))
	}
	state, err := eng.Ready(ctx, run, t)
	if err != nil {
		return r.failPastReadyTimeout(ctx, tx, t, ts, since, fmt.Errorf("read the state of target %s's server: %w", t.Name, err))
	}
	if state.Exit != nil && ts.FirstServerExit == "" && !state.Ready {
		ts.FirstServerExit = bounded.Head(state.Exit.String(), bounded.Status)
	}
	if state.Failed {
		if state.Reason == v1.ReasonImagePull {
			// Nothing to inspect, and its pod would hold the node: remove it whatever the
			// cleanup policy says. The one teardown before the status records the target's
			// end: a server that never started has nothing the status must say first, and a
			// repeat after a failed status write provisions it again and ends the same way.
			if err := eng.Teardown(ctx, run, t); err != nil {
				return ctrl.Result{}, fmt.Errorf("tear down target %s: %w", t.Name, err)
			}
		}
		msg := state.Message
		if first := ts.FirstServerExit; first != "" && !strings.Contains(msg, exitOutput(first)) {
			// The first exit has left the pod's status and failed otherwise: quote it before
			// the later ones.
			msg = first + "; later: " + msg
		}
		return r.failTarget(ctx, tx, t, ts, "server did not start: "+msg)
	}
	if !state.Ready {
		if waited >= r.readyTimeout {
			return r.failTarget(ctx, tx, t, ts, fmt.Sprintf("server not ready after %s: %s",
				r.readyTimeout, state.Message))
		}
		if state.Reason == v1.ReasonSecret && waited >= r.schedulingGrace {
			// The user's connection Secret: nothing the operator starts will create it.
			return r.failTarget(ctx, tx, t, ts, state.Message)
		}
		why := ""
		if state.Reason == v1.ReasonStarting && waited >= r.schedulingGrace && engine.FactsOf(t.Engine).OwnPod {
			if why, err = r.serverWarning(ctx, run, t); err != nil {
				return ctrl.Result{}, err
			}
		}
		if state.Reason == v1.ReasonUnschedulable && waited >= r.schedulingGrace {
			tx.stalled(v1.ReasonUnschedulable, fmt.Sprintf("target %s: %s", t.Name, state.Message))
		} else if why != "" {
			tx.stalled(v1.ReasonNotStarting, fmt.Sprintf("target %s: %s; the Events say %s", t.Name, state.Message, why))
		} else if state.Message != "" {
			tx.progressing(v1.ReasonWaiting, fmt.Sprintf("target %s: %s", t.Name, state.Message))
		}
		// Pod events wake the controller; the timer only enforces the bounds.
		next := r.readyTimeout - waited
		if waited < r.schedulingGrace {
			next = r.schedulingGrace - waited
		}
		if state.RecheckAfter > 0 && state.RecheckAfter < next {
			// A server whose changes do not wake the controller (a kind it could not watch).
			next = state.RecheckAfter
		}
		return ctrl.Result{RequeueAfter: next}, nil
	}
	return r.runPhase(ctx, tx, t, ts, eng, specs.ProbeStepOf(run),
		func(f *load.Final) {
			ts.ServerVersion = f.Server
			if state.Instance != "" {
				ts.Instances++
			}
			if d := ts.ServerImageDigest; d != "" && state.ImageDigest != "" && state.ImageDigest != d {
				// A moving tag pulled again for a new pod: the steps would mix two servers.
				_, _ = r.failTarget(ctx, tx, t, ts, fmt.Sprintf("the server's image %s changed during the run: the first "+
					"instance ran %s, instance %d runs %s (the tag moved and a new pod pulled it again); its steps would "+
					"measure two different servers: pin the image by digest (%s@%s) and start a new run",
					t.Image, d, ts.Instances+1, state.ImageDigest, t.Image, d))
				return
			}
			ts.ServerInstance = state.Instance
			r.recordNode(ctx, ts, state.NodeName)
			if state.ImageDigest != "" {
				ts.ServerImageDigest = state.ImageDigest
			}
			restart := ts.LastServerRestart
			replaced := ts.LastReplacement != nil && ts.LastReplacement.Replaced != ""
			if replaced {
				// A new instance the operator asked for: no restart of the past says anything
				// about its data.
				ts.LastReplacement.Replaced = ""
				restart = nil
			} else if ts.ServerRestarts == 0 {
				r.enter(tx, t, ts, specs.NextPhase(run, v1.TargetProvisioning))
				return
			}
			next, failure := afterRestartProbe(specs.ForWorkload(run, run.Spec.WorkloadAt(len(ts.Steps))), restart, f.Tables)
			if failure != "" {
				_, _ = r.failTarget(ctx, tx, t, ts, failure)
				return
			}
			r.enter(tx, t, ts, next)
		})
}

// failPastReadyTimeout returns an error of provisioning or of reading the server's state (the API
// server refusing a read, a kind it cannot serve) for the controller's back-off, which retries
// it, until the server ready timeout since since has passed; from the first retry after that,
// the target fails with the error instead of retrying for ever.
func (r *Reconciler) failPastReadyTimeout(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	since time.Time, err error) (ctrl.Result, error) {
	if r.clock.Since(since) >= r.readyTimeout {
		return r.failTarget(ctx, tx, t, ts, fmt.Sprintf("server not ready after %s: %v", r.readyTimeout, err))
	}
	return ctrl.Result{}, err
}

// succeedTarget marks the target done. Its server and Jobs are dealt with once the status says
// so (release).
func (r *Reconciler) succeedTarget(tx *transition, t v1.Target, ts *v1.TargetStatus) {
	now := tx.now()
	ts.Phase = v1.TargetSucceeded
	ts.CompletionTime = &now
	ts.FailedAttempts = 0
	tx.event(normal, "TargetSucceeded", "target %s: %d steps measured, server %s", t.Name, len(ts.Steps), ts.ServerVersion)
}

// failTarget marks a target failed with a message for the user and lets the run go on with the
// next target. Its server is deleted or kept (for inspection) per the cleanup policy once the
// status says it failed (release).
func (r *Reconciler) failTarget(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus, message string) (ctrl.Result, error) {
	if holdsExternalTables(tx.run, t, ts) && ts.Phase != v1.TargetCleaningUp {
		// The run's tables must not stay on the user's server: drop them, then end Failed.
		ts.Message = bounded.Head(message, bounded.Status)
		r.enter(tx, t, ts, v1.TargetCleaningUp)
		tx.event(warning, "TargetFailing", "target %s: %s; dropping its sbtest tables before it ends", t.Name, message)
		return ctrl.Result{}, nil
	}
	if ts.Phase == v1.TargetCleaningUp && ts.Message != "" && message != ts.Message {
		message = ts.Message + "; dropping its sbtest tables failed too: " + message
	}
	logf.FromContext(ctx).Info("target failed", "reason", message)
	now := tx.now()
	if ts.StartTime == nil {
		ts.StartTime = &now
	}
	ts.Phase = v1.TargetFailed
	ts.Message = bounded.Head(message, bounded.Status)
	ts.CompletionTime = &now
	tx.SetCondition(v1.ConditionFailed, metav1.ConditionTrue, v1.ReasonTargetFailed, fmt.Sprintf("target %s: %s", t.Name, message))
	tx.event(warning, "TargetFailed", "target %s: %s", t.Name, message)
	return ctrl.Result{}, nil
}

// release deals with what a target that has ended leaves behind, after the status recorded its
// end: the per-second series of its steps are stored and its finished Jobs deleted (failed ones
// are kept for their logs), and its server is deleted unless spec.cleanup keeps it (Never keeps
// every server, OnSuccess the failed targets'). A crash before ts.Released is written repeats
// it; every part is idempotent.
func (r *Reconciler) release(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus) (ctrl.Result, error) {
	run := tx.run
	// A target that failed mid-ladder may have a next step's Job started early: end its load.
	if err := r.jobs().DeleteUnfinished(ctx, run, t.Name); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.releaseJobs(ctx, tx, t, ts, true); err != nil {
		if owned.AsDeleting(err) != nil || unusable(err) != "" {
			// The results ConfigMap is not the run's: the series cannot be stored; the run
			// fails when it writes its results, with its measurements in the status.
			tx.event(warning, "SeriesUnavailable", "target %s: the per-second series were not stored: %v", t.Name, err)
		} else {
			return ctrl.Result{}, err
		}
	}
	if deletesServer(run, ts) {
		if eng, err := r.engineFor(t); err == nil {
			if err := eng.Teardown(ctx, run, t); err != nil {
				// The run's deletion removes the server anyway; do not hold the results back.
				tx.event(warning, "TeardownFailed", "target %s: %v", t.Name, err)
			}
		}
	}
	ts.Released = true
	return ctrl.Result{}, nil
}

// deletesServer says whether the cleanup policy deletes the server of a target that has ended:
// Always does, OnSuccess only a succeeded target's, Never none.
func deletesServer(run *v1.BenchmarkRun, ts *v1.TargetStatus) bool {
	switch run.Spec.Cleanup {
	case v1.CleanupNever:
		return false
	case v1.CleanupAlways:
		return true
	default:
		return ts.Phase == v1.TargetSucceeded
	}
}

// finish ends the run in three steps, each recorded before the next so that any of them can be
// interrupted and repeated: first the status records that every target has ended (completion
// time, and for a scheduled run its comparison with the baseline); then the results ConfigMap
// is written from that status; then the final phase and conditions (Ready only once the results
// are there).
func (r *Reconciler) finish(ctx context.Context, tx *transition) (ctrl.Result, error) {
	run := tx.run
	if run.Status.CompletionTime == nil {
		now := tx.now()
		run.Status.CompletionTime = &now
		run.Status.CurrentTarget = ""
		run.Status.CurrentStep = ""
		if err := r.compareWithBaseline(ctx, tx); err != nil {
			return ctrl.Result{}, err
		}
		tx.progressing(v1.ReasonWritingResults, "every target has ended; writing the results into ConfigMap "+run.Status.ResultsConfigMap)
		return ctrl.Result{}, nil
	}
	before := run.Status.DeepCopy()
	r.conclude(tx, "")
	comparison := ""
	if run.Status.Comparison != nil {
		comparison = scheduled.Markdown(ctx, r, run)
	}
	resultsJSON, err := r.resultsConfigMap().Write(ctx, run, comparison)
	if err == nil {
		// The rows go into the results database with the final status, in its write.
		var doc *results.Doc
		if d, derr := results.Decode([]byte(resultsJSON)); derr == nil {
			doc = d
		}
		return ctrl.Result{RequeueAfter: r.storeResults(ctx, tx, doc)}, nil
	}
	// Nothing is concluded until the results are written...
	run.Status = *before
	tx.Drop()
	if de := owned.AsDeleting(err); de != nil {
		tx.progressing(v1.ReasonWaiting, "the results: "+de.Error())
		return ctrl.Result{RequeueAfter: de.After}, nil
	}
	msg := unusable(err)
	if msg == "" {
		return ctrl.Result{}, err
	}
	// ...unless they cannot be: the ConfigMap under their name is not the run's. The run ends
	// Failed, its measurements in its status only.
	r.conclude(tx, msg)
	return ctrl.Result{RequeueAfter: r.storeResults(ctx, tx, nil)}, nil
}

// conclude sets the run's final phase and conditions. unwritten says why the results ConfigMap
// cannot be written, "" when it can: the run then fails, and its status names no ConfigMap.
func (r *Reconciler) conclude(tx *transition, unwritten string) {
	run := tx.run
	var failed []string
	for _, ts := range run.Status.Targets {
		if ts.Phase == v1.TargetFailed {
			failed = append(failed, ts.Name)
		}
	}
	took := run.Status.CompletionTime.Sub(run.Status.StartTime.Time).Round(time.Second)
	if len(failed) == 0 && unwritten == "" {
		run.Status.Phase = v1.RunSucceeded
		tx.SetCondition(v1.ConditionReady, metav1.ConditionTrue, v1.ReasonSucceeded,
			fmt.Sprintf("all %d targets measured in %s; results in ConfigMap %s", len(run.Spec.Targets), took, run.Status.ResultsConfigMap))
		tx.SetCondition(v1.ConditionProgressing, metav1.ConditionFalse, v1.ReasonSucceeded, "the run has finished")
		tx.SetCondition(v1.ConditionFailed, metav1.ConditionFalse, v1.ReasonSucceeded, "no target failed")
		tx.event(normal, "Succeeded", "all %d targets measured in %s; results in ConfigMap %s", len(run.Spec.Targets), took, run.Status.ResultsConfigMap)
		return
	}
	run.Status.Phase = v1.RunFailed
	msg := fmt.Sprintf("%d of %d targets failed (%v); results of the others in ConfigMap %s",
		len(failed), len(run.Spec.Targets), failed, run.Status.ResultsConfigMap)
	if unwritten != "" {
		run.Status.ResultsConfigMap = ""
		msg = fmt.Sprintf("%d of %d targets failed (%v)", len(failed), len(run.Spec.Targets), failed)
		if len(failed) == 0 {
			msg = fmt.Sprintf("all %d targets measured in %s", len(run.Spec.Targets), took)
		}
		msg += "; the results were not written, the measurements are in the status only: " + unwritten
		tx.SetCondition(v1.ConditionFailed, metav1.ConditionTrue, v1.ReasonTargetFailed, msg)
	}
	tx.SetCondition(v1.ConditionReady, metav1.ConditionFalse, v1.ReasonTargetFailed, msg)
	tx.SetCondition(v1.ConditionProgressing, metav1.ConditionFalse, v1.ReasonTargetFailed, "the run has finished")
	tx.event(warning, "Failed", "%s", msg)
}

// exitOutput is the server's output in an exit as engine.ServerExit.String wrote it
// ("exit 1 (code 1): <output>").
func exitOutput(exit string) string {
	if _, out, ok := strings.Cut(exit, "): "); ok {
		return out
	}
	return exit
}
