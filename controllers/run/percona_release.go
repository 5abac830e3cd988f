package run

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
)

// ServerReleaseFinalizer holds a run with a target whose server carries a finalizer only another
// operator runs (the Percona engines' delete-PVC finalizer) until that server is gone: deleting
// the run must not leave the server, or the namespace being deleted with it, stuck in deletion
// when the Percona operator is missing or stopped. The garbage collector would delete the server
// only after the run, with nobody left to let it go.
const ServerReleaseFinalizer = "mysqlbench.io/server-release"

// releasers are the engines of run's targets that hold their servers with a foreign finalizer.
func (r *Reconciler) releasers(run *v1.BenchmarkRun) map[string]engine.DeletionReleaser {
	out := map[string]engine.DeletionReleaser{}
	for _, t := range run.Spec.Targets {
		if eng, err := r.engineFor(t); err == nil {
			if rel, ok := eng.(engine.DeletionReleaser); ok {
				out[t.Name] = rel
			}
		}
	}
	return out
}

// ensureReleaseFinalizer adds ServerReleaseFinalizer before a server that needs it is created. It
// reports whether it wrote (the write's event brings the next reconcile).
func (r *Reconciler) ensureReleaseFinalizer(ctx context.Context, run *v1.BenchmarkRun) (bool, error) {
	if controllerutil.ContainsFinalizer(run, ServerReleaseFinalizer) || len(r.releasers(run)) == 0 {
		return false, nil
	}
	patch := client.MergeFromWithOptions(run.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(run, ServerReleaseFinalizer)
	if err := r.Patch(ctx, run, patch); err != nil {
		return false, fmt.Errorf("add finalizer: %w", err)
	}
	r.written.Store(client.ObjectKeyFromObject(run), run.ResourceVersion)
	return true, nil
}

// releaseServers lets a deleted run's servers go (engine.DeletionReleaser), then the run. A
// finalizer removed in their place, whose cleanup therefore did not happen, is a Warning Event.
func (r *Reconciler) releaseServers(ctx context.Context, run *v1.BenchmarkRun) (ctrl.Result, error) {
	var wait *engine.WaitError
	for _, t := range run.Spec.Targets {
		rel, ok := r.releasers(run)[t.Name]
		if !ok {
			continue
		}
		removed, err := rel.Release(ctx, run, t)
		if we := engine.AsWait(err); we != nil {
			if wait == nil || we.After < wait.After {
				wait = we
			}
			continue
		}
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("target %s: %w", t.Name, err)
		}
		if len(removed) > 0 {
			logf.FromContext(ctx).Info("removed a server's foreign finalizers for the deleted run", "target", t.Name, "finalizers", removed)
			r.recorder.Eventf(run, warning, "ServerFinalizerRemoved", "target %s: no operator ran the finalizers %v of its server "+
				"within the grace, so the operator removed them to let the deleted run and its namespace go: the server's "+
				"PersistentVolumeClaims may be left (delete them by hand)", t.Name, removed)
		}
	}
	if wait != nil {
		logf.FromContext(ctx).V(1).Info("deleted run waits for its servers", "why", wait.Message)
		return ctrl.Result{RequeueAfter: wait.After}, nil
	}
	patch := client.MergeFromWithOptions(run.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(run, ServerReleaseFinalizer)
	if err := r.Patch(ctx, run, patch); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("remove finalizer: %w", err)
	}
	r.written.Store(client.ObjectKeyFromObject(run), run.ResourceVersion)
	return ctrl.Result{}, nil
}
