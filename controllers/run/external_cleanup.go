package run

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/owned"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/stepjob"
)

// ExternalCleanupFinalizer holds a run that created sbtest tables on a server the operator does
// not run (an external target) until they are dropped, or until ExternalCleanupTimeout has passed
// since the run's deletion began: deleting the run must not leave them on the user's server, and
// must not hang on a server that is gone.
const ExternalCleanupFinalizer = "mysqlbench.io/external-cleanup"

// ExternalCleanupTimeout bounds how long a deleted run waits for its external tables to be dropped.
const ExternalCleanupTimeout = 5 * time.Minute

// dropStep names the Job that drops an external target's tables when its run is deleted.
const dropStep = "drop"

// holdsExternalTables says whether an external target may have sbtest tables on its server that
// the run created and has not dropped.
func holdsExternalTables(run *v1.BenchmarkRun, t v1.Target, ts *v1.TargetStatus) bool {
	if !specs.DropsTables(run, t) || ts == nil {
		return false
	}
	switch ts.Phase {
	case v1.TargetPreparing, v1.TargetWarmingUp, v1.TargetRunning, v1.TargetCleaningUp:
		return true
	}
	return false
}

// ensureExternalFinalizer adds the finalizer before an external target's prepare creates tables.
// It reports whether it wrote (the write's event brings the next reconcile).
func (r *Reconciler) ensureExternalFinalizer(ctx context.Context, run *v1.BenchmarkRun) (bool, error) {
	if controllerutil.ContainsFinalizer(run, ExternalCleanupFinalizer) {
		return false, nil
	}
	patch := client.MergeFromWithOptions(run.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(run, ExternalCleanupFinalizer)
	if err := r.Patch(ctx, run, patch); err != nil {
		return false, fmt.Errorf("add finalizer: %w", err)
	}
	r.written.Store(client.ObjectKeyFromObject(run), run.ResourceVersion)
	return true, nil
}

// removeExternalFinalizer lets the run go once its external tables are dropped or abandoned.
func (r *Reconciler) removeExternalFinalizer(ctx context.Context, run *v1.BenchmarkRun) error {
	if !controllerutil.ContainsFinalizer(run, ExternalCleanupFinalizer) {
		return nil
	}
	patch := client.MergeFromWithOptions(run.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(run, ExternalCleanupFinalizer)
	if err := r.Patch(ctx, run, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizer: %w", err)
	}
	r.written.Store(client.ObjectKeyFromObject(run), run.ResourceVersion)
	return nil
}

// cleanupRetry is how soon a deleted run's cleanup tries again after an error that may pass (the
// API server unavailable, a create refused for a while): soon enough to use the time
// ExternalCleanupTimeout leaves, and without the growing back-off of a returned error, which
// could push the next attempt far past the timeout.
const cleanupRetry = 10 * time.Second

// finalizeDeletion drops the sbtest tables that a deleted run's external targets may hold: one
// cleanup Job per such target, waited for up to ExternalCleanupTimeout after the deletion began.
// Then the finalizer goes, with an Event for every target whose tables could not be dropped.
//
// Nothing but the timeout holds the run: whatever keeps a cleanup from starting or finishing (a
// missing reporter that cannot be written again in a namespace being deleted, a Secret that is
// gone, an API error) ends that target's cleanup at once when no retry can help, and otherwise is
// retried until the timeout, then reported.
func (r *Reconciler) finalizeDeletion(ctx context.Context, run *v1.BenchmarkRun) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	waited := r.clock.Since(run.DeletionTimestamp.Time)
	pending := false
	var recheck time.Duration // an earlier run's Job under a drop Job's name is going away
	var failures []string
	lastErr := map[string]error{} // targets whose cleanup could not be started this time
	for _, t := range run.Spec.Targets {
		var ts *v1.TargetStatus
		for i := range run.Status.Targets {
			if run.Status.Targets[i].Name == t.Name {
				ts = &run.Status.Targets[i]
			}
		}
		if !holdsExternalTables(run, t, ts) {
			continue
		}
		job, err := r.dropJob(ctx, run, t)
		if de := owned.AsDeleting(err); de != nil {
			pending = true
			recheck = de.After
			continue
		}
		if msg := unusable(err); msg != "" {
			failures = append(failures, fmt.Sprintf("target %s: %s", t.Name, msg))
			continue
		}
		if err != nil {
			log.Error(err, "cannot start the cleanup of an external target; retrying until the timeout",
				"target", t.Name, "timeout", ExternalCleanupTimeout)
			lastErr[t.Name] = err
			pending = true
			continue
		}
		finished, failed, why := stepjob.Finished(job)
		switch {
		case !finished:
			pending = true
		case failed:
			failures = append(failures, fmt.Sprintf("target %s: %s", t.Name, why))
		}
	}
	if pending && waited < ExternalCleanupTimeout {
		after := ExternalCleanupTimeout - waited
		if recheck > 0 {
			after = min(after, recheck)
		}
		if len(lastErr) > 0 {
			after = min(after, cleanupRetry)
		}
		return ctrl.Result{RequeueAfter: after}, nil
	}
	if pending {
		failures = append(failures, fmt.Sprintf("not finished within %s", ExternalCleanupTimeout))
		for _, t := range run.Spec.Targets {
			if err, ok := lastErr[t.Name]; ok {
				failures = append(failures, fmt.Sprintf("target %s: its cleanup could not start: %v", t.Name, err))
			}
		}
	}
	hide := r.eventRedactor(ctx, run)
	for _, f := range failures {
		r.recorder.Event(run, warning, "CleanupFailed", hide("the sbtest tables on the external server may be left: "+f+"; drop them by hand"))
	}
	log.Info("external tables dropped, releasing the run", "failures", len(failures))
	return ctrl.Result{}, r.removeExternalFinalizer(ctx, run)
}

// dropJob returns the Job that drops target t's tables for a deleted run, creating it first.
// A Job under its name that the run does not control, or a reporter that is not the operator's,
// is owned's or an *engine.ConfigError: that Job never runs. A reporter that is gone is written
// again first (the Job executes it); where that is refused for good (a namespace being deleted
// refuses every create) the error is an *engine.ConfigError too, and the run need not wait.
func (r *Reconciler) dropJob(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) (*batchv1.Job, error) {
	eng, err := r.engineFor(t)
	if err != nil {
		return nil, err
	}
	name := specs.JobName(run, t.Name, dropStep, specs.Attempt{})
	job := &batchv1.Job{}
	err = owned.Get(ctx, r.objects(), run, client.ObjectKey{Namespace: run.Namespace, Name: name}, job)
	if err == nil || !apierrors.IsNotFound(err) {
		return job, err
	}
	// The Job mounts the user's Secret, with the same consent as every Job of the run: a label
	// removed since leaves the tables rather than the password to the run's image.
	secret, err := r.preflight().SecretMetadata(ctx, run.Namespace, eng.ConnectionSecret(run, t))
	if err == nil {
		if why := engine.ConsentMissing(secret, t.Name); why != "" {
			return nil, &engine.ConfigError{Message: why}
		}
	} else if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("get secret %s: %w", eng.ConnectionSecret(run, t), err)
	}
	if err := r.ensure(ctx, run, stepjob.Reporter(run)); err != nil {
		return nil, err
	}
	if err := r.jobs().CheckReporter(ctx, run); err != nil {
		return nil, err
	}
	// The script the run measured with, when it recorded one; else the one there is now (the run
	// was deleted before its first Job): either way the pod runs only that content.
	digest := run.Status.CustomScriptSHA256
	if digest == "" {
		if digest, err = r.preflight().ScriptDigest(ctx, run); err != nil {
			return nil, err
		}
	}
	step := load.Step{Phase: load.PhaseCleanup, ScriptSHA256: digest}
	cleanup := specs.ForStep(run, specs.CleanupStepOf(run))
	inv, image, err := loadclient.For(cleanup.Spec.Workload).Container(cleanup.Spec, t, step, eng.ConnectionSecret(run, t), r.sysbenchImage(run))
	if err != nil {
		return nil, fmt.Errorf("build the cleanup of target %s: %w", t.Name, err)
	}
	job = specs.SysbenchJob(run, t.Name, dropStep, specs.Attempt{}, inv, image, specs.StepDeadline(step.Phase, 0))
	existing, _, err := owned.Ensure(ctx, r.objects(), run, job)
	if err != nil && engine.IsPermanentAPIError(err) {
		err = engine.Rejected(job, err)
	}
	// Not finished yet; the Job's events bring the next reconcile.
	return existing, err
}

// hasExternalData says whether the run prepares tables on a server it does not run.
func hasExternalData(run *v1.BenchmarkRun) bool {
	for _, t := range run.Spec.Targets {
		if specs.DropsTables(run, t) {
			return true
		}
	}
	return false
}
