package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/redact"
)

// redactFailure hides the target's connection credentials in a failure read from a step's
// output before it reaches the status, conditions and Events, which more people may read than
// the Secret: a FATAL line, a custom script or a client that echoes its option file can carry
// the password. The Secret is read (uncached) only when a step failed. When it cannot be read the
// message keeps only its first line's MySQL error, never the raw output.
func (r *BenchmarkRunReconciler) redactFailure(ctx context.Context, run *v1.BenchmarkRun, t v1.Target, eng engine.Engine, failure string) string {
	name := eng.ConnectionSecret(run, t)
	if name == "" || failure == "" {
		return failure
	}
	s := &corev1.Secret{}
	if err := r.reader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, s); err != nil {
		logf.FromContext(ctx).Info("cannot read the connection Secret to redact a step's failure; keeping a generic message",
			"secret", name, "err", err.Error())
		return "the step failed, and its output cannot be shown because the connection Secret " + name +
			" (needed to hide its credentials) cannot be read: " + err.Error() + "; see the Job's pod log"
	}
	return redact.Values(failure, redact.Secret(s.Data)...)
}
