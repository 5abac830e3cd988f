package controllers

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// newestWarning is the newest Warning Event about the object with uid ("FailedMount: ..."), ""
// when there is none. Events say what pod and controller status do not: why a StatefulSet or a
// Job cannot create its pod (a quota, an admission policy) and why a pod cannot start its
// containers (a volume that cannot be mounted).
func (r *BenchmarkRunReconciler) newestWarning(ctx context.Context, namespace string, uid types.UID) (string, error) {
	events := &corev1.EventList{}
	if err := r.apiReader().List(ctx, events, client.InNamespace(namespace),
		client.MatchingFields{"involvedObject.uid": string(uid), "type": corev1.EventTypeWarning}); err != nil {
		return "", fmt.Errorf("list events: %w", err)
	}
	var newest *corev1.Event
	var newestAt time.Time
	for i := range events.Items {
		e := &events.Items[i]
		at := eventTime(e)
		if newest == nil || at.After(newestAt) {
			newest, newestAt = e, at
		}
	}
	if newest == nil {
		return "", nil
	}
	return bounded.Head(newest.Reason+": "+newest.Message, bounded.Status), nil
}

// eventTime is when an Event last happened, whichever API wrote it.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// serverWarning is why the builtin server's pod is not starting, from the Events of the pod or,
// while it does not exist, of its StatefulSet; "" when they say nothing.
func (r *BenchmarkRunReconciler) serverWarning(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) (string, error) {
	name := specs.ServerName(run, t.Name)
	pod := &corev1.Pod{}
	err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name + "-0"}, pod)
	if err == nil {
		return r.newestWarning(ctx, run.Namespace, pod.UID)
	}
	if !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("get server pod: %w", err)
	}
	sts := &appsv1.StatefulSet{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, sts); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	return r.newestWarning(ctx, run.Namespace, sts.UID)
}

// jobWarning is why a step's Job has no running pod, from the Events of its pod or, while it
// has none, of the Job (FailedCreate: a quota, an admission policy).
func (r *BenchmarkRunReconciler) jobWarning(ctx context.Context, job *batchv1.Job, pod *corev1.Pod) (string, error) {
	if pod != nil {
		return r.newestWarning(ctx, pod.Namespace, pod.UID)
	}
	return r.newestWarning(ctx, job.Namespace, job.UID)
}
