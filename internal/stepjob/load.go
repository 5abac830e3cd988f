package stepjob

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// OtherLoad names what still puts, or may put, load on a server besides the Job name about to be
// created, "" when nothing does, among the run's client Jobs and pods with labels sel (the
// target's, or every target's when the targets share the server's node): a pod of the target whose sysbench container has not
// ended (except those of Job after, whose load has ended, or whose client holds the server lock
// the new Job's will wait for), or an unfinished Job of another step
// (a next step started early, before its current step failed), which is deleted. A pod of a
// Job named name that is gone and has not started yet is deleted instead of waited for: it has
// not touched the server. The cache may not show a Job just created while it shows its pod: a
// pod whose Job the API server still has is never taken for a leftover.
func (j Jobs) OtherLoad(ctx context.Context, run *v1.BenchmarkRun, target string, sel map[string]string,
	name, after string) (string, *Event, error) {
	jobs := &batchv1.JobList{}
	if err := j.Objects.Client.List(ctx, jobs, client.InNamespace(run.Namespace), client.MatchingLabels(sel)); err != nil {
		return "", nil, fmt.Errorf("list jobs of target %s: %w", target, err)
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if finished, _, _ := Finished(job); finished || job.Name == name || job.Name == after ||
			!metav1.IsControlledBy(job, run) || !job.DeletionTimestamp.IsZero() {
			continue
		}
		if pod, err := j.jobPod(ctx, job); err != nil || (pod != nil && podLoadEnded(run, labelledStep(job), pod)) {
			if err != nil {
				return "", nil, err
			}
			continue
		}
		cancelled, err := j.cancel(ctx, run, target, job.Name, name)
		if err != nil {
			return "", nil, err
		}
		return "Job " + job.Name + " (deleted)", cancelled, nil
	}
	pods := &corev1.PodList{}
	if err := j.Objects.Client.List(ctx, pods, client.InNamespace(run.Namespace), client.MatchingLabels(sel)); err != nil {
		return "", nil, fmt.Errorf("list pods of target %s: %w", target, err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		owner := p.Labels["batch.kubernetes.io/job-name"]
		if owner == after || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if _, _, terminated := containerResult(p); terminated {
			continue
		}
		if owner != name {
			// A pod of another Job still running: its Job was deleted, or the cache has not
			// shown it yet (a next step just started early). Wait for the pod, and end its Job
			// if the API server still has it unfinished.
			cancelled, err := j.cancel(ctx, run, target, owner, name)
			if err != nil {
				return "", nil, err
			}
			return "pod " + p.Name, cancelled, nil
		}
		// A pod of a Job under the name about to be created.
		if j.exists(ctx, run.Namespace, name) {
			// The cache has not seen the Job yet: it is not gone, and creating it finds it.
			continue
		}
		if p.Status.Phase == corev1.PodPending && p.DeletionTimestamp.IsZero() && !anyContainerStarted(p) {
			if err := j.Objects.Client.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
				return "", nil, fmt.Errorf("delete pod %s of the deleted job %s: %w", p.Name, name, err)
			}
		}
		return "pod " + p.Name + " of the deleted Job " + name, nil, nil
	}
	return "", nil, nil
}

// cancel deletes the run's Job named job if the API server has it unfinished: a next step
// started early, whose load must not run beside the Job name about to be created (its current
// step is retried). It is created again when its step comes. The Event says so when it was.
func (j Jobs) cancel(ctx context.Context, run *v1.BenchmarkRun, target, job, name string) (*Event, error) {
	if job == "" {
		return nil, nil
	}
	obj := &batchv1.Job{}
	if err := j.Objects.Reader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: job}, obj); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if finished, _, _ := Finished(obj); finished || !metav1.IsControlledBy(obj, run) || !obj.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	if err := j.deleteExactly(ctx, obj); err != nil {
		return nil, err
	}
	return ptr.To(event(corev1.EventTypeNormal, "StepCancelled",
		"target %s: Job %s, started early for the next step, deleted: %s comes first", target, job, name)), nil
}

// deleteExactly deletes the Job obj as read, not another one created under its name since.
func (j Jobs) deleteExactly(ctx context.Context, obj *batchv1.Job) error {
	uid := obj.UID
	if err := j.Objects.Client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete job %s: %w", obj.Name, err)
	}
	return nil
}

// CancelStartedEarly deletes the run's Job next, the next step's Job started early, because the
// current attempt, Job failed, did: its client no longer holds the server lock, so next's may
// measure now, on a server the failure may have changed, and whatever it measures must never be
// recorded. Unlike cancel it deletes next finished too. The API server is asked, past the cache,
// which may not show a Job just created. The Event says so when it was deleted.
func (j Jobs) CancelStartedEarly(ctx context.Context, run *v1.BenchmarkRun, target, next, failed string) (*Event, error) {
	obj := &batchv1.Job{}
	if err := j.Objects.Reader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: next}, obj); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(obj, run) || !obj.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	if err := j.deleteExactly(ctx, obj); err != nil {
		return nil, err
	}
	return ptr.To(event(corev1.EventTypeNormal, "StepCancelled",
		"target %s: Job %s, started early for the next step, deleted: %s failed", target, next, failed)), nil
}

// exists reads a Job from the API server (past the cache, which may lag).
func (j Jobs) exists(ctx context.Context, namespace, name string) bool {
	err := j.Objects.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &batchv1.Job{})
	return err == nil
}

// DeleteUnfinished deletes the target's sysbench Jobs that have not finished: their load
// ran against the server that is gone, and their result must never be read.
func (j Jobs) DeleteUnfinished(ctx context.Context, run *v1.BenchmarkRun, target string) error {
	jobs := &batchv1.JobList{}
	if err := j.Objects.Client.List(ctx, jobs, client.InNamespace(run.Namespace), client.MatchingLabels(specs.TargetLabels(run, target))); err != nil {
		return fmt.Errorf("list jobs of target %s: %w", target, err)
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if finished, _, _ := Finished(job); finished || !metav1.IsControlledBy(job, run) {
			continue
		}
		if err := j.Objects.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete job %s: %w", job.Name, err)
		}
	}
	return nil
}
