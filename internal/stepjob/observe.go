// Package stepjob is a run's step Jobs as the BenchmarkRun reconciler sees them: what it reads of
// the current attempt of a step (Observe: the Job, its pod, how they ended), what to do about it
// (Decide, no I/O), what else still loads a target's server (OtherLoad), and what finished Jobs
// leave behind (Release: their per-second series and server counters into the results
// ConfigMap, then the Jobs deleted). The reconciler creates the Jobs and records the steps; it
// queues the Events this package returns in its status transaction.
package stepjob

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/owned"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// Jobs reads, and deletes, a run's step Jobs and their pods.
type Jobs struct {
	// Objects reads the run's objects through the manager's cache (Client) and past it
	// (Reader), and deletes them (Client).
	Objects owned.Objects
	Clock   clock.PassiveClock
	// Logs reads a finished step's pod log for its per-second series.
	Logs LogReader
	// CPU gives steps their server's and client's CPU from the kubelet; nil means off.
	CPU CPUSource
}

// Event is an Event the Jobs call for, for the run's status transaction to record.
type Event struct {
	Type, Reason, Message string
}

func event(typ, reason, format string, args ...any) Event {
	return Event{Type: typ, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Observed is what the operator read of the current attempt of a step: its Job, the Job's pod,
// and the client container's result.
type Observed struct {
	// Exists: the run has a Job under the attempt's name. Without one, nothing else is set.
	Exists bool
	// Unreadable: the Job could not be read (the error says why).
	Unreadable bool
	Job        *batchv1.Job
	// Pod is the Job's pod, nil when it has none (yet, or any more); PodState is what it shows.
	Pod      *corev1.Pod
	PodState engine.State
	// Finished, Failed and Why are the Job's conditions (Finished).
	Finished, Failed bool
	Why              string
	// SinceFinished is how long ago the Job finished, when it has.
	SinceFinished time.Duration
	// Terminated, ExitCode and Message are the client container's end (containerResult).
	Terminated bool
	ExitCode   int32
	Message    string
	// Running says that the client container runs, RunningFor for how long (from its
	// startedAt, truncated to whole seconds, so up to a second more than it ran).
	Running    bool
	RunningFor time.Duration
}

// Observe reads the Job name of a step's current attempt, its pod, and how they ended.
func (j Jobs) Observe(ctx context.Context, run *v1.BenchmarkRun, name string) (Observed, error) {
	job := &batchv1.Job{}
	// A Job under this name that the run does not control must not feed its result to the run.
	err := owned.Get(ctx, j.Objects, run, client.ObjectKey{Namespace: run.Namespace, Name: name}, job)
	if apierrors.IsNotFound(err) {
		return Observed{}, nil
	}
	if err != nil {
		return Observed{Unreadable: true}, err
	}
	pod, err := j.jobPod(ctx, job)
	if err != nil {
		return Observed{}, err
	}
	o := Observed{Exists: true, Job: job, Pod: pod}
	if pod != nil {
		o.PodState = engine.PodState(pod)
	}
	o.Finished, o.Failed, o.Why = Finished(job)
	if o.Finished {
		o.SinceFinished = j.Clock.Since(finishedAt(job))
	}
	o.ExitCode, o.Message, o.Terminated = containerResult(pod)
	if since, ok := containerRunningSince(pod); ok {
		o.Running, o.RunningFor = true, j.Clock.Since(since)
	}
	return o, nil
}

// jobPod returns the Job's pod (the newest, backoffLimit is 0 so there is normally one), or nil.
func (j Jobs) jobPod(ctx context.Context, job *batchv1.Job) (*corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := j.Objects.Client.List(ctx, pods, client.InNamespace(job.Namespace),
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

// podResultGrace is how long after a Job finished the operator waits for its pod's result to
// show up in the cache.
const podResultGrace = 30 * time.Second

// finishedAt is when the Job's Complete or Failed condition was set.
func finishedAt(job *batchv1.Job) time.Time {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// Finished reads a Job's outcome from its conditions (never from completionTime, which only
// successful Jobs get).
func Finished(job *batchv1.Job) (finished, failed bool, why string) {
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

// containerRunningSince is when the pod's client container started, if it runs.
func containerRunningSince(pod *corev1.Pod) (time.Time, bool) {
	if pod == nil {
		return time.Time{}, false
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == specs.SysbenchContainer && cs.State.Running != nil {
			return cs.State.Running.StartedAt.Time, true
		}
	}
	return time.Time{}, false
}

// loadEnded says whether a step's client has exited with a result: its container terminated
// with exit code 0 and a final result that is not a failure. Its Job is not necessarily reported
// complete yet; the load on the server is over.
func loadEnded(c loadclient.Client, step load.Step, terminated bool, exitCode int32, message string) bool {
	if !terminated || exitCode != 0 {
		return false
	}
	parsed, err := c.Parse(step, strings.NewReader(message))
	return err == nil && parsed.Final != nil && c.Classify(step, exitCode, parsed) == nil
}

// podLoadEnded is loadEnded for the client container of pod.
func podLoadEnded(run *v1.BenchmarkRun, step specs.Step, pod *corev1.Pod) bool {
	exitCode, message, terminated := containerResult(pod)
	return loadEnded(loadclient.For(specs.WorkloadOfLabel(run, step.Name).Workload), step.Load, terminated, exitCode, message)
}

// labelledStep is the step a client Job's step label names, as far as which client program it
// runs goes: one of the one-Job phases (whose step names are their phases' names), else a
// ladder step.
func labelledStep(job *batchv1.Job) specs.Step {
	label := job.Labels[specs.LabelStep]
	if phase, ok := specs.PhaseOfLabel(label); ok {
		return specs.Step{Name: label, Load: load.Step{Phase: phase}}
	}
	return specs.Step{Name: label, Load: load.Step{Phase: load.PhaseRun}}
}
