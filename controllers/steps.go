package controllers

import (
	"context"
	"fmt"
	"io"
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
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/mysqlslap"
	"github.com/mysqlbench/mysqlbench-operator/internal/owned"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// jobOutcome is what a step's Job came to.
type jobOutcome struct {
	job *batchv1.Job
	// done: the Job finished; then exactly one of final and failure is set.
	done    bool
	final   *sysbench.Final
	failure string
	// code is the MySQL error code of a failure, 0 when there is none.
	code int
	// deterministic: another attempt would fail the same way (sysbench.Failure.Deterministic).
	deterministic bool
	// pod is the Job's pod, when it still exists (for its log).
	pod *corev1.Pod
}

// runPhase runs a one-Job phase (probe, prepare, warm-up, cleanup) of a target: create the Job
// of the current attempt, and when it finishes call onSuccess or count a failed attempt.
func (r *BenchmarkRunReconciler) runPhase(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	eng engine.Engine, step specs.Step, onSuccess func(*sysbench.Final)) (ctrl.Result, error) {
	out, res, err := r.stepJob(ctx, tx, t, ts, eng, step, nil)
	if err != nil || !out.done {
		return res, err
	}
	if out.failure != "" {
		if wait := r.settling(out); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
		return r.failedAttempt(ctx, tx, t, ts, step.Name, out)
	}
	onSuccess(out.final)
	return ctrl.Result{}, nil
}

// runLadderStep runs step i of the target (in measuring order: a rung of one repetition, see
// LadderPosition). The step is recorded in the status when its Job has completed (the Job's
// Complete condition, the result from its pod's termination message); the next step's Job is
// created as soon as this step's sysbench has exited with a result, without waiting the two
// seconds the kubelet and the Job controller take to report the Job complete (see nextJob).
// The step's per-second series stays in its pod's log until releaseJobs stores a batch of them.
func (r *BenchmarkRunReconciler) runLadderStep(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	eng engine.Engine, i int) (ctrl.Result, error) {
	run := tx.run
	rung, rep := run.Spec.LadderPosition(i)
	threads := run.Spec.Ladder.Threads[rung]
	step := specs.LadderStepAt(run, i)
	var next *specs.Step
	// An interleaved run's next step is usually another target's: no early start.
	// Nor when the next step measures a new server instance, which does not exist yet.
	_, nextDue := specs.ReplacementDue(run, i+1, &v1.ServerReplacement{Repetition: rep})
	if i+1 < run.Spec.StepCount() && !run.Spec.Interleaved() && !nextDue {
		s := specs.LadderStepAt(run, i+1)
		next = &s
	}
	out, res, err := r.stepJob(ctx, tx, t, ts, eng, step, next)
	if err != nil || !out.done {
		return res, err
	}
	if out.failure != "" {
		if wait := r.settling(out); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
		return r.failedAttempt(ctx, tx, t, ts, describeStep(run, i), out)
	}
	result := out.final.StepResult()
	result.Threads = threads
	if run.Spec.RepetitionsOrDefault() > 1 {
		result.Repetition = rep
	}
	if ts.ServerInstance != "" {
		result.Instance = ts.Instances
	}
	result.Attempts = ts.FailedAttempts + 1
	result.StartTime = out.job.Status.StartTime
	result.FinishTime = out.job.Status.CompletionTime
	if !specs.UsesMysqlslap(run, step) && sysbench.OverDuration(*out.final, step.Sysbench.Duration) {
		// Kept, for reading, but not a number to compare: cells and comparisons leave it out.
		// The one Event per flagged step is worth its write: nothing else tells while the run goes.
		result.OverDuration = true
		tx.event(warning, "StepOverDuration", "target %s: step %s measured %.3f s, past its %s by more than the "+
			"tolerance of %s: an event outlasted the step; its numbers are kept, marked, and left out of the statistics "+
			"and the comparison", t.Name, describeStep(run, i), out.final.DurationSeconds, step.Sysbench.Duration,
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
	return ctrl.Result{}, nil
}

// failedAttempt counts a failed attempt of a step, and fails the target once the retries are
// spent, or at once when another attempt would fail the same way (a step that measured nothing:
// the script decides that, not the server). The next attempt gets its own Job (the attempt is
// part of the name).
func (r *BenchmarkRunReconciler) failedAttempt(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	step string, out jobOutcome) (ctrl.Result, error) {
	reason := out.failure
	if out.deterministic {
		return r.failTarget(ctx, tx, t, ts, fmt.Sprintf("step %s failed, not retried (another attempt would run the "+
			"same way): %s", step, reason))
	}
	limit := tx.run.Spec.RetryLimit()
	if ts.FailedAttempts >= limit {
		return r.failTarget(ctx, tx, t, ts, fmt.Sprintf("step %s failed after %d attempts: %s", step, ts.FailedAttempts+1, reason))
	}
	ts.FailedAttempts++
	tx.event(warning, "StepFailed", "target %s: step %s failed (attempt %d of %d), retrying: %s",
		t.Name, step, ts.FailedAttempts, limit+1, reason)
	return ctrl.Result{}, nil
}

// stepJob creates the Job of the target's current attempt at step, or reads how it ended. With
// next (the ladder step after the current one), the next ladder step's Job is created as soon as
// this step's sysbench has exited with a result, while the Job still waits to be reported
// complete.
func (r *BenchmarkRunReconciler) stepJob(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus,
	eng engine.Engine, step specs.Step, next *specs.Step) (jobOutcome, ctrl.Result, error) {
	run := tx.run
	attempt := specs.AttemptOf(ts, ts.FailedAttempts)
	name := specs.JobName(run, t.Name, step.Name, attempt)
	job := &batchv1.Job{}
	// A Job under this name that the run does not control must not feed its result to the run.
	err := owned.Get(ctx, r.objects(), run, client.ObjectKey{Namespace: run.Namespace, Name: name}, job)
	if apierrors.IsNotFound(err) {
		res, err := r.createStepJob(ctx, tx, t, ts, eng, step, attempt, "")
		return jobOutcome{}, res, err
	}
	if err != nil {
		res, err := r.blocked(ctx, tx, t, ts, err)
		return jobOutcome{}, res, err
	}

	pod, err := r.jobPod(ctx, job)
	if err != nil {
		return jobOutcome{}, ctrl.Result{}, err
	}
	finished, failed, why := jobFinished(job)
	if !finished {
		if pod != nil {
			if state := engine.PodState(pod); state.Failed && state.Reason == v1.ReasonImagePull {
				// Another attempt would pull the same image: end the Job and the target now.
				if err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
					return jobOutcome{}, ctrl.Result{}, fmt.Errorf("delete job %s: %w", name, err)
				}
				_, ferr := r.failTarget(ctx, tx, t, ts, "sysbench "+state.Message)
				return jobOutcome{}, ctrl.Result{}, ferr
			}
		}
		if next != nil && loadEnded(run, step, pod) {
			// The kubelet and the Job controller take about two seconds to report the Job
			// complete after sysbench exited; the server is idle meanwhile. The step is
			// recorded when the Job is complete; the next one starts now, once.
			attempt := specs.AttemptOf(ts, 0)
			nextName := specs.JobName(run, t.Name, next.Name, attempt)
			err := owned.Get(ctx, r.objects(), run, client.ObjectKey{Namespace: run.Namespace, Name: nextName}, &batchv1.Job{})
			if err == nil {
				return jobOutcome{}, ctrl.Result{}, nil // started already; Job i's events come
			}
			if !apierrors.IsNotFound(err) {
				res, err := r.blocked(ctx, tx, t, ts, err)
				return jobOutcome{}, res, err
			}
			res, err := r.createStepJob(ctx, tx, t, ts, eng, *next, attempt, name)
			return jobOutcome{}, res, err
		}
		res, err := r.watchPending(ctx, tx, t, job, pod)
		return jobOutcome{}, res, err
	}
	out := jobOutcome{job: job, done: true, pod: pod}
	exitCode, message, terminated := containerResult(pod)
	if !terminated {
		// The Job and pod informers are independent: the Job's final condition can reach the
		// cache before the pod update that carries the result. The pod's event brings the next
		// reconcile; past the grace the result is taken as lost (a deleted pod, for example one
		// the deadline killed, never reports).
		if since := r.clock.Since(jobFinishedAt(job)); since < podResultGrace {
			return jobOutcome{}, ctrl.Result{RequeueAfter: podResultGrace - since}, nil
		}
	}
	switch {
	case terminated:
		parsed, perr := parseOutput(run, step, strings.NewReader(message))
		if perr != nil {
			out.failure = fmt.Sprintf("unreadable result: %v", perr)
			break
		}
		if f := classify(run, step, exitCode, parsed); f != nil {
			out.failure, out.code, out.deterministic = f.Reason, f.Code, f.Deterministic
		} else if failed {
			out.failure = "Job failed: " + why
		} else {
			out.final = parsed.Final
		}
	case failed:
		out.failure = "Job failed: " + why
	default:
		out.failure = "Job " + name + " completed but its pod and result are gone"
	}
	out.failure = r.redactFailure(ctx, run, t, eng, out.failure)
	return out, ctrl.Result{}, nil
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

// loadEnded says whether a step's sysbench has exited with a result: its container terminated
// with exit code 0 and a final result that is not a failure. Its Job is not necessarily
// reported complete yet; the load on the server is over.
func loadEnded(run *v1.BenchmarkRun, step specs.Step, pod *corev1.Pod) bool {
	exitCode, message, terminated := containerResult(pod)
	if !terminated || exitCode != 0 {
		return false
	}
	parsed, err := parseOutput(run, step, strings.NewReader(message))
	return err == nil && parsed.Final != nil && classify(run, step, exitCode, parsed) == nil
}

// labelledStep is the step a client Job's step label names, as far as which client it runs goes:
// one of the one-Job phases, else a ladder step.
func labelledStep(job *batchv1.Job) specs.Step {
	label := job.Labels[specs.LabelStep]
	switch label {
	case specs.StepProbe:
		return specs.ProbeStep()
	case specs.StepPrepare:
		return specs.PrepareStep()
	case specs.StepCleanup:
		return specs.CleanupStep()
	case specs.StepWarmup:
		return specs.Step{Name: label, Sysbench: sysbench.Step{Phase: sysbench.PhaseWarmup}}
	}
	return specs.Step{Name: label, Sysbench: sysbench.Step{Phase: sysbench.PhaseRun}}
}

// parseOutput reads what step's client printed (its log, or its termination message): sysbench's
// reporter lines, or mysqlslap's output in the same form (specs.UsesMysqlslap).
func parseOutput(run *v1.BenchmarkRun, step specs.Step, r io.Reader) (sysbench.Output, error) {
	if specs.UsesMysqlslap(run, step) {
		return mysqlslap.ParseOutput(r)
	}
	return sysbench.ParseOutput(r)
}

// classify is why step failed, judged by its client's error formats; nil when it succeeded. A
// sysbench ladder step must also have measured queries (mysqlslap.Classify checks its own).
func classify(run *v1.BenchmarkRun, step specs.Step, exitCode int32, out sysbench.Output) *sysbench.Failure {
	if specs.UsesMysqlslap(run, step) {
		return mysqlslap.Classify(exitCode, out)
	}
	if f := sysbench.Classify(exitCode, out); f != nil || step.Sysbench.Phase != sysbench.PhaseRun {
		return f
	}
	return sysbench.MeasuredNothing(*out.Final, step.Sysbench.Duration)
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
	if run.Spec.Interleaved() {
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
		if pod, err := r.jobPod(ctx, job); err != nil || (pod != nil && loadEnded(run, labelledStep(job), pod)) {
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
