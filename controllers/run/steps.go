package run

import (
	"context"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/owned"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/stepjob"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// runPhase runs a one-Job phase (probe, prepare, warm-up, after-ladder) of a target: create the
// Job of the current attempt, and when it finishes call onSuccess or count a failed attempt.
func (r *Reconciler) runPhase(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	eng engine.Engine, step specs.Step, onSuccess func(*load.Final)) (ctrl.Result, error) {
	return r.runStep(ctx, tx, t, ts, eng, step, nil, step.Name, func(_ stepjob.Observed, a stepjob.Action) {
		onSuccess(a.Output.Final)
	})
}

// runLadderStep runs step i of the target (in measuring order: a rung of one repetition, see
// LadderPosition). The step is recorded in the status when its Job has completed (the Job's
// Complete condition, the result from its pod's termination message); the next step's Job is
// created as soon as this step's client has exited with a result, without waiting the two
// seconds the kubelet and the Job controller take to report the Job complete (see nextJob).
// The step's per-second series stays in its pod's log until releaseJobs stores a batch of them.
func (r *Reconciler) runLadderStep(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	eng engine.Engine, i int) (ctrl.Result, error) {
	run := tx.run
	_, rep := run.Spec.LadderPosition(i)
	step := specs.TargetLadderStep(run, t, i)
	var next *specs.Step
	// An interleaved run's next step is usually another target's: no early start.
	// Nor when the next step measures a new server instance, which does not exist yet.
	_, nextDue := specs.ReplacementDue(run, i+1, &v1.ServerReplacement{Repetition: rep})
	// Nor when the next step measures data prepared again for it.
	nextFresh, _ := run.Spec.FreshDataBefore(i + 1)
	if i+1 < run.Spec.StepCount() && tx.order.startsNextEarly() && !nextDue && !nextFresh {
		s := specs.TargetLadderStep(run, t, i+1)
		next = &s
	}
	return r.runStep(ctx, tx, t, ts, eng, step, next, describeStep(run, i), func(o stepjob.Observed, a stepjob.Action) {
		r.recordStep(ctx, tx, t, ts, step, i, o, a)
	})
}

// recordStep records ladder step i's result (action record of its Job).
func (r *Reconciler) recordStep(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	step specs.Step, i int, o stepjob.Observed, a stepjob.Action) {
	run := tx.run
	rung, rep := run.Spec.LadderPosition(i)
	threads := run.Spec.Ladder.Threads[rung]
	c := loadclient.For(specs.ForStep(run, step).Spec.Workload)
	result := c.Result(step.Load, a.Output)
	result.Workload = step.Workload
	result.Threads = threads
	if run.Spec.RepetitionsOrDefault() > 1 {
		result.Repetition = rep
	}
	if ts.ServerInstance != "" {
		result.Instance = ts.Instances
	}
	result.Attempts = ts.FailedAttempts + 1
	result.StartTime = o.Job.Status.StartTime
	result.FinishTime = o.Job.Status.CompletionTime
	result.ClientCPU = r.jobs().ClientCPU(ctx, o.Pod, time.Duration(result.DurationSeconds*float64(time.Second)))
	if cpu := result.ClientCPU; cpu != nil && cpu.Saturated && !slices.ContainsFunc(ts.Steps, clientSaturated) {
		// Once per target: the steps' status says which ones.
		tx.event(warning, "ClientSaturated", "target %s: step %s's client used %.2f of its %.2f CPUs: the client may "+
			"have limited the step; give it more CPU (spec.clientResources, a larger client node) or fewer threads",
			t.Name, describeStep(run, i), cpu.Cores, cpu.Available)
	}
	if c.Capabilities().FixedDuration && sysbench.OverDuration(*a.Output.Final, step.Load.Duration) {
		// Kept, for reading, but not a number to compare: cells and comparisons leave it out.
		// The one Event per flagged step is worth its write: nothing else tells while the run goes.
		result.OverDuration = true
		tx.event(warning, "StepOverDuration", "target %s: step %s measured %.3f s, past its %s by more than the "+
			"tolerance of %s: an event outlasted the step; its numbers are kept, marked, and left out of the statistics "+
			"and the comparison", t.Name, describeStep(run, i), a.Output.Final.DurationSeconds, step.Load.Duration,
			sysbench.OverrunTolerance(step.Load.Duration))
	}
	ts.Steps = append(ts.Steps, result)
	if run.Spec.RepetitionsOrDefault() > 1 {
		// With one repetition a cell is its step: nothing to summarize, no status to spend.
		ts.Cells = cells.Status(ts.Steps)
	}
	ts.FailedAttempts = 0
	run.Status.CurrentStep = describeStep(run, i+1)
	// No Event per step: it would be one more API write per step, and the status, the results
	// and the metrics carry the step's numbers.
	tx.progressing(v1.ReasonRunning, fmt.Sprintf("target %s: %s", t.Name, run.Status.CurrentStep))
	logf.FromContext(ctx).V(1).Info("step measured", "step", step.Name, "threads", threads, "qps", result.QPS.Total, "p95Ms", result.Latency.P95Ms)
}

// runStep drives the current attempt of a target's step in three parts: observe (read the
// attempt's Job, its pod and the client's result), decide (a pure function of what was observed,
// the attempts and the spec: stepjob.Decide) and act (create, delete, record, count the attempt, fail
// the target). label names the step in messages; record stores a successful step.
func (r *Reconciler) runStep(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	eng engine.Engine, step specs.Step, next *specs.Step, label string, record func(stepjob.Observed, stepjob.Action)) (ctrl.Result, error) {
	run := tx.run
	attempt := specs.AttemptOf(ts, ts.FailedAttempts)
	name := specs.JobName(run, t.Name, step.Name, attempt)
	o, err := r.jobs().Observe(ctx, run, name)
	if err != nil {
		if o.Unreadable {
			return r.blocked(ctx, tx, t, ts, err)
		}
		return ctrl.Result{}, err
	}
	var nextLoad *load.Step
	if next != nil {
		nextLoad = &next.Load
	}
	a := stepjob.Decide(o, loadclient.For(specs.ForStep(run, step).Spec.Workload), step.Load, nextLoad, ts.FailedAttempts, run.Spec.RetryLimit())
	if a.CancelNext && next != nil {
		nextName := specs.JobName(run, t.Name, next.Name, specs.AttemptOf(ts, 0))
		cancelled, err := r.jobs().CancelStartedEarly(ctx, run, t.Name, nextName, name)
		if cancelled != nil {
			tx.record(*cancelled)
		}
		if err != nil {
			return ctrl.Result{}, err
		}
	}
	switch a.Kind {
	case stepjob.Create:
		return r.createStepJob(ctx, tx, t, ts, eng, step, attempt, "")
	case stepjob.Abandon:
		// Another attempt would fail the same way: end the Job and the target now.
		if err := r.Delete(ctx, o.Job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("delete job %s: %w", name, err)
		}
		_, ferr := r.failTarget(ctx, tx, t, ts, a.Failure)
		return ctrl.Result{}, ferr
	case stepjob.StartNext:
		res, err := r.startNext(ctx, tx, t, ts, eng, *next, name)
		if err != nil || !res.IsZero() || o.Terminated {
			return res, err
		}
		// This step still measures (it holds the server lock the next one waits for): its pod
		// is watched like any running one.
		return r.watchPending(ctx, tx, t, o.Job, o.Pod)
	case stepjob.Watch:
		res, err := r.watchPending(ctx, tx, t, o.Job, o.Pod)
		if a.After > 0 && err == nil && (res.RequeueAfter == 0 || a.After < res.RequeueAfter) {
			// The next step may start then.
			res.RequeueAfter = a.After
		}
		return res, err
	case stepjob.Wait:
		return ctrl.Result{RequeueAfter: a.After}, nil
	case stepjob.Record:
		record(o, a)
		return ctrl.Result{}, nil
	case stepjob.Fail:
		reason := r.redactFailure(ctx, run, t, eng, a.Failure)
		if a.Deterministic {
			return r.failTarget(ctx, tx, t, ts, fmt.Sprintf("step %s failed, not retried (another attempt would run the "+
				"same way): %s", label, reason))
		}
		return r.failTarget(ctx, tx, t, ts, fmt.Sprintf("step %s failed after %d attempts: %s", label, ts.FailedAttempts+1, reason))
	case stepjob.Retry:
		reason := r.redactFailure(ctx, run, t, eng, a.Failure)
		ts.FailedAttempts++
		tx.event(warning, "StepFailed", "target %s: step %s failed (attempt %d of %d), retrying: %s",
			t.Name, label, ts.FailedAttempts, run.Spec.RetryLimit()+1, reason)
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, fmt.Errorf("step %s: unknown action %d", name, a.Kind)
}

// startNext creates the Job of the next ladder step while the current one's Job (after) waits
// to be reported complete: the kubelet and the Job controller take about two seconds after the
// client exited, and the server is idle meanwhile. With a server lock it comes earlier, while the
// current step still measures: the next pod's start (half a second or more) then overlaps the
// current step, and its client waits for the lock on the server. The step is recorded when its
// Job is complete; the next one starts now, once.
func (r *Reconciler) startNext(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	eng engine.Engine, next specs.Step, after string) (ctrl.Result, error) {
	run := tx.run
	attempt := specs.AttemptOf(ts, 0)
	nextName := specs.JobName(run, t.Name, next.Name, attempt)
	err := owned.Get(ctx, r.objects(), run, client.ObjectKey{Namespace: run.Namespace, Name: nextName}, &batchv1.Job{})
	if err == nil {
		return ctrl.Result{}, nil // started already; Job i's events come
	}
	if !apierrors.IsNotFound(err) {
		return r.blocked(ctx, tx, t, ts, err)
	}
	return r.createStepJob(ctx, tx, t, ts, eng, next, attempt, after)
}

// createStepJob creates the Job of step at attempt, unless something must happen first: a
// reference to wait for, the pod of an earlier Job of that name to end, another load on the
// server to end. after names the Job this one follows when it is the next step started early,
// "" otherwise: a Job whose load has just ended (its client exited, the Job is not reported
// complete yet), or whose client holds the server lock this one's will wait for.
func (r *Reconciler) createStepJob(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	eng engine.Engine, step specs.Step, attempt specs.Attempt, after string) (ctrl.Result, error) {
	run := tx.run
	name := specs.JobName(run, t.Name, step.Name, attempt)
	// A ConfigMap deleted since the run started would leave the pod unable to mount it.
	if ok, res, err := r.checkReferences(ctx, tx, t, ts); !ok {
		return res, err
	}
	// The Job of this attempt may have been deleted while its pod still runs (orphaned, or
	// terminating), or another Job of the target may still put load on the server (a next
	// step started early whose current step then failed): a new one now would put two loads on
	// the server.
	sel := specs.TargetLabels(run, t.Name)
	if tx.order.sharesNode() {
		// The targets' servers share one node: any of the run's loads is a load on it.
		sel = specs.RunLabels(run)
	}
	sel[specs.LabelComponent] = specs.ComponentClient
	busy, cancelled, err := r.jobs().OtherLoad(ctx, run, t.Name, sel, name, after)
	if cancelled != nil {
		tx.record(*cancelled)
	}
	if err != nil || busy != "" {
		if busy != "" {
			tx.progressing(v1.ReasonWaiting, fmt.Sprintf("target %s: step %s waits for %s to end", t.Name, step.Name, busy))
		}
		// The pod's own events bring the next reconcile; the requeue bounds a missed one.
		return ctrl.Result{RequeueAfter: 10 * time.Second}, err
	}
	if step.Load.Phase == load.PhaseRun {
		// Every completed Job of the target has its result in the status now (releaseJobs
		// keeps those that do not): store the waiting series and delete those Jobs, once a
		// batch of them is waiting.
		if err := r.releaseJobs(ctx, tx, t, ts, false); err != nil {
			return r.blocked(ctx, tx, t, ts, err)
		}
	}
	// The Job executes the reporter with the database's credentials at hand.
	if err := r.jobs().CheckReporter(ctx, run); err != nil {
		return r.blocked(ctx, tx, t, ts, err)
	}
	digest, err := r.pinCustomScript(ctx, tx)
	if err != nil {
		return r.blocked(ctx, tx, t, ts, err)
	}
	step.Load.ScriptSHA256 = digest
	job, err := specs.StepJob(run, t, step, attempt, eng.ConnectionSecret(run, t), r.sysbenchImage(run))
	if err != nil {
		return r.failTarget(ctx, tx, t, ts, err.Error())
	}
	_, created, err := owned.Ensure(ctx, r.objects(), run, job)
	if err != nil {
		if engine.IsPermanentAPIError(err) {
			err = engine.Rejected(job, err)
		}
		return r.blocked(ctx, tx, t, ts, err)
	}
	if created {
		logf.FromContext(ctx).Info("created sysbench job", "job", name, "step", step.Name, "threads", step.Load.Threads, "after", after)
	}
	// The Job's events bring the next reconcile, which reads it.
	return ctrl.Result{}, nil
}

// watchPending surfaces a sysbench pod that cannot be scheduled or started (unschedulable, image
// not pullable, a missing Secret key, a volume that cannot be mounted), or a Job that cannot
// create its pod (a quota, an admission policy), after the grace period. Pod events wake the
// controller; the timer only ends the grace period, and the Job's deadline ends the wait.
func (r *Reconciler) watchPending(ctx context.Context, tx *transition, t v1.Target, job *batchv1.Job, pod *corev1.Pod) (ctrl.Result, error) {
	state := engine.State{Reason: v1.ReasonStarting}
	since := job.CreationTimestamp.Time
	if pod != nil {
		state = engine.PodState(pod)
		since = pod.CreationTimestamp.Time
	}
	switch state.Reason {
	case v1.ReasonUnschedulable, v1.ReasonImagePull, v1.ReasonConfig, v1.ReasonStarting:
	default:
		if cond := apimeta.FindStatusCondition(tx.run.Status.Conditions, v1.ConditionProgressing); cond != nil && cond.Status == metav1.ConditionFalse {
			tx.progressing(v1.ReasonRunning, fmt.Sprintf("target %s: %s", t.Name, tx.run.Status.CurrentStep))
		}
		return ctrl.Result{}, nil
	}
	if pod != nil && pod.Status.Phase != corev1.PodPending {
		return ctrl.Result{}, nil // running: nothing to wait for
	}
	waited := r.clock.Since(since)
	if waited < r.schedulingGrace {
		return ctrl.Result{RequeueAfter: r.schedulingGrace - waited}, nil
	}
	if state.Reason != v1.ReasonStarting {
		tx.stalled(state.Reason, fmt.Sprintf("target %s: sysbench %s", t.Name, state.Message))
		return ctrl.Result{}, nil
	}
	why, err := r.jobWarning(ctx, job, pod)
	if err != nil || why == "" {
		return ctrl.Result{}, err
	}
	what := "Job " + job.Name + " has no pod"
	if pod != nil {
		what = "sysbench pod " + pod.Name + " is not starting"
	}
	tx.stalled(v1.ReasonNotStarting, fmt.Sprintf("target %s: %s; the Events say %s", t.Name, what, why))
	return ctrl.Result{}, nil
}

// clientSaturated says whether a step's client used (nearly) all the CPU it had.
func clientSaturated(s v1.StepResult) bool { return s.ClientCPU != nil && s.ClientCPU.Saturated }
