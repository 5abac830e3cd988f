package run

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/warnings"
)

// serverWarning is why the builtin server's pod is not starting, from the Events of the pod or,
// while it does not exist, of its StatefulSet; "" when they say nothing.
func (r *Reconciler) serverWarning(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) (string, error) {
	name := specs.ServerName(run, t.Name)
	pod := &corev1.Pod{}
	err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name + "-0"}, pod)
	if err == nil {
		return warnings.Newest(ctx, r.apiReader(), run.Namespace, pod.UID)
	}
	if !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("get server pod: %w", err)
	}
	sts := &appsv1.StatefulSet{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, sts); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	return warnings.Newest(ctx, r.apiReader(), run.Namespace, sts.UID)
}

// jobWarning is why a step's Job has no running pod, from the Events of its pod or, while it
// has none, of the Job (FailedCreate: a quota, an admission policy).
func (r *Reconciler) jobWarning(ctx context.Context, job *batchv1.Job, pod *corev1.Pod) (string, error) {
	if pod != nil {
		return warnings.Newest(ctx, r.apiReader(), pod.Namespace, pod.UID)
	}
	return warnings.Newest(ctx, r.apiReader(), job.Namespace, job.UID)
}
