package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
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
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/owned"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// runPhase runs a one-Job phase (probe, prepare, warm-up, after-ladder) of a target: create the
// Job of the current attempt, and when it finishes call onSuccess or count a failed attempt.
func (r *BenchmarkRunReconciler) runPhase(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	eng engine.Engine, step specs.Step, onSuccess func(*sysbench.Final)) (ctrl.Result, error) {
	return r.runStep(ctx, tx, t, ts, eng, step, nil, step.Name, func(_ observed, a action) {
		onSuccess(a.output.Final)
	})
}

// runLadderStep runs step i of the target (in measuring order: a rung of one repetition, see
// LadderPosition). The step is recorded in the status when its Job has completed (the Job's
// Complete condition, the result from its pod's termination message); the next step's Job is
// created as soon as this step's client has exited with a result, without waiting the two
// seconds the kubelet and the Job controller take to report the Job complete (see nextJob).
// The step's per-second series stays in its pod's log until releaseJobs stores a batch of them.
func (r *BenchmarkRunReconciler) runLadderStep(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	eng engine.Engine, i int) (ctrl.Result, error) {
	run := tx.run
	_, rep := run.Spec.LadderPosition(i)
	step := specs.LadderStepAt(run, i)
	var next *specs.Step
	// An interleaved run's next step is usually another target's: no early start.
	// Nor when the next step measures a new server instance, which does not exist yet.
	_, nextDue := specs.ReplacementDue(run, i+1, &v1.ServerReplacement{Repetition: rep})
	if i+1 < run.Spec.StepCount() && tx.order.startsNextEarly() && !nextDue {
		s := specs.LadderStepAt(run, i+1)
		next = &s
	}
	return r.runStep(ctx, tx, t, ts, eng, step, next, describeStep(run, i), func(o observed, a action) {
		r.recordStep(ctx, tx, t, ts, step, i, o, a)
	})
}

// recordStep records ladder step i's result (action record of its Job).
func (r *BenchmarkRunReconciler) recordStep(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	step specs.Step, i int, o observed, a action) {
	run := tx.run
	rung, rep := run.Spec.LadderPosition(i)
	threads := run.Spec.Ladder.Threads[rung]
	c := loadclient.For(run.Spec.Workload)
	result := c.Result(step.Sysbench, a.output)
	result.Threads = threads
	if run.Spec.RepetitionsOrDefault() > 1 {
		result.Repetition = rep
	}
	if ts.ServerInstance != "" {
		result.Instance = ts.Instances
	}
	result.Attempts = ts.FailedAttempts + 1
	result.StartTime = o.job.Status.StartTime
	result.FinishTime = o.job.Status.CompletionTime
	result.ClientCPU = r.clientCPU(ctx, o.pod)
	if cpu := result.ClientCPU; cpu != nil && cpu.Saturated && !slices.ContainsFunc(ts.Steps, clientSaturated) {
		// Once per target: the steps' status says which ones.
		tx.event(warning, "ClientSaturated", "target %s: step %s's client used %.2f of its %.2f CPUs: the client may "+
			"have limited the step; give it more CPU (spec.clientResources, a larger client node) or fewer threads",
			t.Name, describeStep(run, i), cpu.Cores, cpu.Available)
	}
	if c.Capabilities().FixedDuration && sysbench.OverDuration(*a.output.Final, step.Sysbench.Duration) {
		// Kept, for reading, but not a number to compare: cells and comparisons leave it out.
		// The one Event per flagged step is worth its write: nothing else tells while the run goes.
		result.OverDuration = true
		tx.event(warning, "StepOverDuration", "target %s: step %s measured %.3f s, past its %s by more than the "+
			"tolerance of %s: an event outlasted the step; its numbers are kept, marked, and left out of the statistics "+
			"and the comparison", t.Name, describeStep(run, i), a.output.Final.DurationSeconds, step.Sysbench.Duration,
			sysbench.OverrunTolerance(step.Sysbench.Duration))
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
// the attempts and the spec: decide) and act (create, delete, record, count the attempt, fail
// the target). label names the step in messages; record stores a successful step.
func (r *BenchmarkRunReconciler) runStep(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	eng engine.Engine, step specs.Step, next *specs.Step, label string, record func(observed, action)) (ctrl.Result, error) {
	run := tx.run
	attempt := specs.AttemptOf(ts, ts.FailedAttempts)
	name := specs.JobName(run, t.Name, step.Name, attempt)
	o, err := r.observeStep(ctx, run, name)
	if err != nil {
		if o.unreadable {
			return r.blocked(ctx, tx, t, ts, err)
		}
		return ctrl.Result{}, err
	}
	a := decide(o, loadclient.For(run.Spec.Workload), step.Sysbench, next != nil, ts.FailedAttempts, run.Spec.RetryLimit())
	switch a.kind {
	case actCreate:
		return r.createStepJob(ctx, tx, t, ts, eng, step, attempt, "")
	case actAbandon:
		// Another attempt would fail the same way: end the Job and the target now.
		if err := r.Delete(ctx, o.job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("delete job %s: %w", name, err)
		}
		_, ferr := r.failTarget(ctx, tx, t, ts, a.failure)
		return ctrl.Result{}, ferr
	case actStartNext:
		return r.startNext(ctx, tx, t, ts, eng, *next, name)
	case actWatch:
		return r.watchPending(ctx, tx, t, o.job, o.pod)
	case actWait:
		return ctrl.Result{RequeueAfter: a.after}, nil
	case actRecord:
		record(o, a)
		return ctrl.Result{}, nil
	case actFail:
		reason := r.redactFailure(ctx, run, t, eng, a.failure)
		if a.deterministic {
			return r.failTarget(ctx, tx, t, ts, fmt.Sprintf("step %s failed, not retried (another attempt would run the "+
				"same way): %s", label, reason))
		}
		return r.failTarget(ctx, tx, t, ts, fmt.Sprintf("step %s failed after %d attempts: %s", label, ts.FailedAttempts+1, reason))
	case actRetry:
		reason := r.redactFailure(ctx, run, t, eng, a.failure)
		ts.FailedAttempts++
		tx.event(warning, "StepFailed", "target %s: step %s failed (attempt %d of %d), retrying: %s",
			t.Name, label, ts.FailedAttempts, run.Spec.RetryLimit()+1, reason)
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, fmt.Errorf("step %s: unknown action %d", name, a.kind)
}

// startNext creates the Job of the next ladder step while the current one's Job (ended) waits
// to be reported complete: the kubelet and the Job controller take about two seconds after the
// client exited, and the server is idle meanwhile. The step is recorded when its Job is
// complete; the next one starts now, once.
func (r *BenchmarkRunReconciler) startNext(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	eng engine.Engine, next specs.Step, ended string) (ctrl.Result, error) {
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
	return r.createStepJob(ctx, tx, t, ts, eng, next, attempt, ended)
}

// observed is what the operator read of the current attempt of a step: its Job, the Job's pod,
// and the client container's result.
type observed struct {
	// exists: the run has a Job under the attempt's name. Without one, nothing else is set.
	exists bool
	// unreadable: the Job could not be read (the error says why).
	unreadable bool
	job        *batchv1.Job
	// pod is the Job's pod, nil when it has none (yet, or any more); podState is what it shows.
	pod      *corev1.Pod
	podState engine.State
	// finished, failed and why are the Job's conditions (jobFinished).
	finished, failed bool
	why              string
	// sinceFinished is how long ago the Job finished, when it has.
	sinceFinished time.Duration
	// terminated, exitCode and message are the client container's end (containerResult).
	terminated bool
	exitCode   int32
	message    string
}

// observeStep reads the Job name of a step's current attempt, its pod, and how they ended.
func (r *BenchmarkRunReconciler) observeStep(ctx context.Context, run *v1.BenchmarkRun, name string) (observed, error) {
	job := &batchv1.Job{}
	// A Job under this name that the run does not control must not feed its result to the run.
	err := owned.Get(ctx, r.objects(), run, client.ObjectKey{Namespace: run.Namespace, Name: name}, job)
	if apierrors.IsNotFound(err) {
		return observed{}, nil
	}
	if err != nil {
		return observed{unreadable: true}, err
	}
	pod, err := r.jobPod(ctx, job)
	if err != nil {
		return observed{}, err
	}
	o := observed{exists: true, job: job, pod: pod}
	if pod != nil {
		o.podState = engine.PodState(pod)
	}
	o.finished, o.failed, o.why = jobFinished(job)
	if o.finished {
		o.sinceFinished = r.clock.Since(jobFinishedAt(job))
	}
	o.exitCode, o.message, o.terminated = containerResult(pod)
	return o, nil
}

// actionKind is what runStep does about a step's current attempt.
type actionKind int

const (
	// actCreate creates the attempt's Job.
	actCreate actionKind = iota
	// actAbandon deletes the unfinished Job and fails the target with failure: another attempt
	// would fail the same way (an image that cannot be pulled).
	actAbandon
	// actStartNext starts the next ladder step's Job: this one's load has ended.
	actStartNext
	// actWatch watches an unfinished Job's pod for a start that does not come.
	actWatch
	// actWait looks again after after: the pod's result may still reach the cache, or the
	// server's status may not show the restart that lost the connection yet.
	actWait
	// actRecord records output, the step's successful result.
	actRecord
	// actRetry counts a failed attempt (failure) and retries the step.
	actRetry
	// actFail fails the target (failure): deterministic, or the retries are spent.
	actFail
)

// action is decide's answer.
type action struct {
	kind  actionKind
	after time.Duration
	// output is what the client printed (actRecord).
	output loadclient.Output
	// failure is why the step failed, not yet redacted (actAbandon, actRetry, actFail);
	// deterministic says that another attempt would fail the same way.
	failure       string
	deterministic bool
}

// decide is what to do about a step's current attempt, from what was observed of it (o), the
// workload's client c, whether a next ladder step may start early (hasNext), and the attempts
// failed so far against the run's retry limit. It does no I/O.
func decide(o observed, c loadclient.Client, step loadclient.Step, hasNext bool, failedAttempts, retryLimit int32) action {
	if !o.exists {
		return action{kind: actCreate}
	}
	if !o.finished {
		if o.pod != nil && o.podState.Failed && o.podState.Reason == v1.ReasonImagePull {
			return action{kind: actAbandon, failure: "sysbench " + o.podState.Message}
		}
		if hasNext && loadEnded(c, step, o.terminated, o.exitCode, o.message) {
			return action{kind: actStartNext}
		}
		return action{kind: actWatch}
	}
	if !o.terminated && o.sinceFinished < podResultGrace {
		// The Job and pod informers are independent: the Job's final condition can reach the
		// cache before the pod update that carries the result. The pod's event brings the next
		// reconcile; past the grace the result is taken as lost (a deleted pod, for example one
		// the deadline killed, never reports).
		return action{kind: actWait, after: podResultGrace - o.sinceFinished}
	}
	var failure *loadclient.Failure
	var out loadclient.Output
	switch {
	case o.terminated:
		parsed, err := c.Parse(step, strings.NewReader(o.message))
		if err != nil {
			failure = &loadclient.Failure{Reason: fmt.Sprintf("unreadable result: %v", err)}
			break
		}
		failure = c.Classify(step, o.exitCode, parsed)
		switch {
		case failure != nil:
		case o.failed:
			failure = &loadclient.Failure{Reason: "Job failed: " + o.why}
		default:
			out = parsed
		}
	case o.failed:
		failure = &loadclient.Failure{Reason: "Job failed: " + o.why}
	default:
		failure = &loadclient.Failure{Reason: "Job " + o.job.Name + " completed but its pod and result are gone"}
	}
	if failure == nil {
		return action{kind: actRecord, output: out}
	}
	if loadclient.ConnectionLost(failure) && o.sinceFinished < restartSettle {
		// The server's pod status may not show the restart yet, and a restart is not the
		// step's fault.
		return action{kind: actWait, after: restartSettle - o.sinceFinished}
	}
	a := action{failure: failure.Reason, deterministic: failure.Deterministic}
	switch {
	case failure.Deterministic, failedAttempts >= retryLimit:
		a.kind = actFail
	default:
		a.kind = actRetry
	}
	return a
}

// createStepJob creates the Job of step at attempt, unless something must happen first: a
// reference to wait for, the pod of an earlier Job of that name to end, another load on the
// server to end. ended names the Job whose load has just ended (its sysbench exited, the Job is
// not reported complete yet) when this is the next step started early, "" otherwise.
func (r *BenchmarkRunReconciler) createStepJob(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	eng engine.Engine, step specs.Step, attempt specs.Attempt, ended string) (ctrl.Result, error) {
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
	if busy, err := r.otherLoad(ctx, tx, t, name, ended); err != nil || busy != "" {
		if busy != "" {
			tx.progressing(v1.ReasonWaiting, fmt.Sprintf("target %s: step %s waits for %s to end", t.Name, step.Name, busy))
		}
		// The pod's own events bring the next reconcile; the requeue bounds a missed one.
		return ctrl.Result{RequeueAfter: 10 * time.Second}, err
	}
	if step.Sysbench.Phase == sysbench.PhaseRun {
		// Every completed Job of the target has its result in the status now (releaseJobs
		// keeps those that do not): store the waiting series and delete those Jobs, once a
		// batch of them is waiting.
		if err := r.releaseJobs(ctx, tx, t, ts, false); err != nil {
			return r.blocked(ctx, tx, t, ts, err)
		}
	}
	// The Job executes the reporter with the database's credentials at hand.
	if err := r.reporterCheck(ctx, run); err != nil {
		return r.blocked(ctx, tx, t, ts, err)
	}
	digest, err := r.pinCustomScript(ctx, tx)
	if err != nil {
		return r.blocked(ctx, tx, t, ts, err)
	}
	step.Sysbench.ScriptSHA256 = digest
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
		logf.FromContext(ctx).Info("created sysbench job", "job", name, "step", step.Name, "threads", step.Sysbench.Threads, "afterLoadOf", ended)
	}
	// The Job's events bring the next reconcile, which reads it.
	return ctrl.Result{}, nil
}

// loadEnded says whether a step's client has exited with a result: its container terminated
// with exit code 0 and a final result that is not a failure. Its Job is not necessarily reported
// complete yet; the load on the server is over.
func loadEnded(c loadclient.Client, step loadclient.Step, terminated bool, exitCode int32, message string) bool {
	if !terminated || exitCode != 0 {
		return false
	}
	parsed, err := c.Parse(step, strings.NewReader(message))
	return err == nil && parsed.Final != nil && c.Classify(step, exitCode, parsed) == nil
}

// podLoadEnded is loadEnded for the client container of pod.
func podLoadEnded(run *v1.BenchmarkRun, step specs.Step, pod *corev1.Pod) bool {
	exitCode, message, terminated := containerResult(pod)
	return loadEnded(loadclient.For(run.Spec.Workload), step.Sysbench, terminated, exitCode, message)
}

// labelledStep is the step a client Job's step label names, as far as which client program it
// runs goes: one of the one-Job phases (whose step names are their phases' names), else a
// ladder step.
func labelledStep(job *batchv1.Job) specs.Step {
	label := job.Labels[specs.LabelStep]
	switch phase := loadclient.Phase(label); phase {
	case loadclient.PhaseProbe, loadclient.PhasePrepare, loadclient.PhaseCleanup, loadclient.PhaseWarmup, loadclient.PhaseCheck:
		return specs.Step{Name: label, Sysbench: sysbench.Step{Phase: phase}}
	}
	return specs.Step{Name: label, Sysbench: sysbench.Step{Phase: sysbench.PhaseRun}}
}

// otherLoad names what still puts, or may put, load on the target's server besides the Job name
// about to be created, "" when nothing does: a pod of the target whose sysbench container has not
// ended (except those of Job ended, whose load has), or an unfinished Job of another step
// (a next step started early, before its current step failed), which is deleted. A pod of a
// Job named name that is gone and has not started yet is deleted instead of waited for: it has
// not touched the server. The cache may not show a Job just created while it shows its pod: a
// pod whose Job the API server still has is never taken for a leftover.
func (r *BenchmarkRunReconciler) otherLoad(ctx context.Context, tx *transition, t v1.Target, name, ended string) (string, error) {
	run := tx.run
	sel := specs.TargetLabels(run, t.Name)
	if tx.order.sharesNode() {
		// The targets' servers share one node: any of the run's loads is a load on it.
		sel = specs.RunLabels(run)
	}
	sel[specs.LabelComponent] = specs.ComponentClient
	jobs := &batchv1.JobList{}
	if err := r.List(ctx, jobs, client.InNamespace(run.Namespace), client.MatchingLabels(sel)); err != nil {
		return "", fmt.Errorf("list jobs of target %s: %w", t.Name, err)
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if finished, _, _ := jobFinished(job); finished || job.Name == name || job.Name == ended ||
			!metav1.IsControlledBy(job, run) || !job.DeletionTimestamp.IsZero() {
			continue
		}
		if pod, err := r.jobPod(ctx, job); err != nil || (pod != nil && podLoadEnded(run, labelledStep(job), pod)) {
			if err != nil {
				return "", err
			}
			continue
		}
		if err := r.cancelJob(ctx, tx, t, job.Name, name); err != nil {
			return "", err
		}
		return "Job " + job.Name + " (deleted)", nil
	}
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(run.Namespace), client.MatchingLabels(sel)); err != nil {
		return "", fmt.Errorf("list pods of target %s: %w", t.Name, err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		owner := p.Labels["batch.kubernetes.io/job-name"]
		if owner == ended || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if _, _, terminated := containerResult(p); terminated {
			continue
		}
		if owner != name {
			// A pod of another Job still running: its Job was deleted, or the cache has not
			// shown it yet (a next step just started early). Wait for the pod, and end its Job
			// if the API server still has it unfinished.
			if err := r.cancelJob(ctx, tx, t, owner, name); err != nil {
				return "", err
			}
			return "pod " + p.Name, nil
		}
		// A pod of a Job under the name about to be created.
		if r.jobExists(ctx, run.Namespace, name) {
			// The cache has not seen the Job yet: it is not gone, and creating it finds it.
			continue
		}
		if p.Status.Phase == corev1.PodPending && p.DeletionTimestamp.IsZero() && !anyContainerStarted(p) {
			if err := r.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
				return "", fmt.Errorf("delete pod %s of the deleted job %s: %w", p.Name, name, err)
			}
		}
		return "pod " + p.Name + " of the deleted Job " + name, nil
	}
	return "", nil
}

// cancelJob deletes the run's Job named job if the API server has it unfinished: a next step
// started early, whose load must not run beside the Job name about to be created (its current
// step is retried). It is created again when its step comes.
func (r *BenchmarkRunReconciler) cancelJob(ctx context.Context, tx *transition, t v1.Target, job, name string) error {
	if job == "" {
		return nil
	}
	j := &batchv1.Job{}
	if err := r.reader.Get(ctx, client.ObjectKey{Namespace: tx.run.Namespace, Name: job}, j); err != nil {
		return client.IgnoreNotFound(err)
	}
	if finished, _, _ := jobFinished(j); finished || !metav1.IsControlledBy(j, tx.run) || !j.DeletionTimestamp.IsZero() {
		return nil
	}
	uid := j.UID
	if err := r.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete job %s: %w", job, err)
	}
	tx.event(normal, "StepCancelled", "target %s: Job %s, started early for the next step, deleted: %s comes first",
		t.Name, job, name)
	return nil
}

// jobExists reads a Job from the API server (past the cache, which may lag).
func (r *BenchmarkRunReconciler) jobExists(ctx context.Context, namespace, name string) bool {
	err := r.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &batchv1.Job{})
	return err == nil
}

// podResultGrace is how long after a Job finished the operator waits for its pod's result to
// show up in the cache.
const podResultGrace = 30 * time.Second

// jobFinishedAt is when the Job's Complete or Failed condition was set.
func jobFinishedAt(job *batchv1.Job) time.Time {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// jobFinished reads a Job's outcome from its conditions (never from completionTime, which only
// successful Jobs get).
func jobFinished(job *batchv1.Job) (finished, failed bool, why string) {
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return true, false, ""
		case batchv1.JobFailed:
			why = c.Reason
			if c.Message != "" {
				why += ": " + c.Message
			}
			if c.Reason == batchv1.JobReasonDeadlineExceeded {
				why = fmt.Sprintf("did not finish within its deadline of %ds (DeadlineExceeded)", ptrValue(job.Spec.ActiveDeadlineSeconds))
			}
			return true, true, why
		}
	}
	return false, false, ""
}

func ptrValue(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// jobPod returns the Job's pod (the newest, backoffLimit is 0 so there is normally one), or nil.
func (r *BenchmarkRunReconciler) jobPod(ctx context.Context, job *batchv1.Job) (*corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(job.Namespace),
		client.MatchingLabels{"batch.kubernetes.io/job-name": job.Name, specs.LabelManagedBy: specs.ManagedBy}); err != nil {
		return nil, fmt.Errorf("list pods of job %s: %w", job.Name, err)
	}
	var newest *corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if !metav1.IsControlledBy(p, job) {
			continue
		}
		if newest == nil || p.CreationTimestamp.After(newest.CreationTimestamp.Time) {
			newest = p
		}
	}
	return newest, nil
}

// anyContainerStarted says whether a container of the pod has run.
func anyContainerStarted(p *corev1.Pod) bool {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running != nil || cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil {
			return true
		}
	}
	return false
}

// containerResult is the sysbench container's exit code and termination message.
func containerResult(pod *corev1.Pod) (int32, string, bool) {
	if pod == nil {
		return 0, "", false
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == specs.SysbenchContainer && cs.State.Terminated != nil {
			return cs.State.Terminated.ExitCode, cs.State.Terminated.Message, true
		}
	}
	return 0, "", false
}

// watchPending surfaces a sysbench pod that cannot be scheduled or started (unschedulable, image
// not pullable, a missing Secret key, a volume that cannot be mounted), or a Job that cannot
// create its pod (a quota, an admission policy), after the grace period. Pod events wake the
// controller; the timer only ends the grace period, and the Job's deadline ends the wait.
func (r *BenchmarkRunReconciler) watchPending(ctx context.Context, tx *transition, t v1.Target, job *batchv1.Job, pod *corev1.Pod) (ctrl.Result, error) {
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
