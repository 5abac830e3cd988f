package run

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/redact"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// redactFailure hides the target's connection credentials in a failure read from a step's
// output before it reaches the status, conditions and Events, which more people may read than
// the Secret: a FATAL line, a custom script or a client that echoes its option file can carry
// the password. The Secret is read (uncached) only when a step failed. When it cannot be read the
// message says where to read the output instead, never the raw output.
//
// The failure is cut to sysbench.MaxReason only after redaction: cut first, a credential at the
// edge would lose its end and no longer match, and its first part would be shown.
func (r *Reconciler) redactFailure(ctx context.Context, run *v1.BenchmarkRun, t v1.Target, eng engine.Engine, failure string) string {
	name := eng.ConnectionSecret(run, t)
	if name == "" || failure == "" {
		return bounded.Head(failure, sysbench.MaxReason)
	}
	s := &corev1.Secret{}
	if err := r.reader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, s); err != nil {
		logf.FromContext(ctx).Info("cannot read the connection Secret to redact a step's failure; keeping a generic message",
			"secret", name, "err", err.Error())
		return "the step failed, and its output cannot be shown because the connection Secret " + name +
			" (needed to hide its credentials) cannot be read: " + err.Error() + "; see the Job's pod log"
	}
	return redact.Cut(failure, sysbench.MaxReason, redact.Secret(s.Data)...)
}

// redactEvents hides the run's connection credentials in every queued Event and cuts each to
// bounded.Event after: Events quote errors and output the operator does not write itself (a
// step's log that cannot be parsed, a pod's message), and anyone who may list Events in the
// namespace reads them. The credentials are read only when there is an Event to record.
func (tx *transition) redactEvents(ctx context.Context) {
	if !tx.Queued() {
		return
	}
	tx.Rewrite(tx.r.eventRedactor(ctx, tx.run))
}

// eventRedactor returns what makes an Event message of run fit to show: the credentials of every
// connection Secret its targets use hidden (redact.Cut), then cut to bounded.Event. When a
// Secret cannot be read (other than gone: a deleted Secret's values cannot reach a new message
// through the operator), the message cannot be checked and is replaced by one that says where to
// look instead.
func (r *Reconciler) eventRedactor(ctx context.Context, run *v1.BenchmarkRun) func(string) string {
	var secrets []string
	for _, t := range run.Spec.Targets {
		eng, err := r.engineFor(t)
		if err != nil {
			continue // no engine, no Secret it could have read
		}
		name := eng.ConnectionSecret(run, t)
		if name == "" {
			continue
		}
		s := &corev1.Secret{}
		err = r.reader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, s)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			logf.FromContext(ctx).Info("cannot read a connection Secret to redact the run's Events; withholding their messages",
				"secret", name, "err", err.Error())
			return func(string) string {
				return "message withheld: the connection Secret " + name + " (needed to hide its credentials) cannot be read: " +
					bounded.Head(err.Error(), 200) + "; see the run's status and the operator's log"
			}
		}
		secrets = append(secrets, redact.Secret(s.Data)...)
	}
	return func(m string) string { return redact.Cut(m, bounded.Event, secrets...) }
}
