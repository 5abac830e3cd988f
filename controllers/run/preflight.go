package run

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/preflight"
)

// preflight reads what the run names from the API server.
func (r *Reconciler) preflight() preflight.Checks {
	return preflight.Checks{Reader: r.apiReader(), Clock: r.clock, Grace: r.schedulingGrace}
}

// checkReferences holds the target back, before it leaves Pending and before every Job, while
// what the run names is missing or may not be used (preflight.Checks.Target): the target fails or
// waits, the run saying what for.
func (r *Reconciler) checkReferences(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus) (ok bool, res ctrl.Result, err error) {
	secret := ""
	eng, engErr := r.engineFor(t)
	if engErr == nil {
		secret = eng.ConnectionSecret(tx.run, t)
	}
	v, err := r.preflight().Target(ctx, tx.run, t, ts, secret, engErr)
	switch {
	case err != nil:
		return false, ctrl.Result{}, err
	case v.Fail != "":
		res, err := r.failTarget(ctx, tx, t, ts, v.Fail)
		return false, res, err
	case v.Wait != "":
		tx.stalled(v1.ReasonMissingReference, v.Wait)
		return false, ctrl.Result{RequeueAfter: v.Requeue}, nil
	}
	return true, ctrl.Result{}, nil
}

// pinCustomScript is the digest a step Job of the run checks its custom script against: the
// one the run recorded in its status when it first read the script (recorded now, in this
// reconcile's status write, when there is none yet). A run measures one fixed configuration: a
// script changed since it was recorded is an *engine.ConfigError that names the ConfigMap, and no
// Job runs it. The pod checks the mounted script against the digest too, which also catches a
// change between this read and the kubelet's mount.
func (r *Reconciler) pinCustomScript(ctx context.Context, tx *transition) (string, error) {
	run := tx.run
	digest, err := r.preflight().ScriptDigest(ctx, run)
	if err != nil || digest == "" {
		return "", err
	}
	pinned := run.Status.CustomScriptSHA256
	if pinned == "" {
		run.Status.CustomScriptSHA256 = digest
		return digest, nil
	}
	if digest != pinned {
		cs := run.Spec.CustomScript()
		return "", &engine.ConfigError{Message: fmt.Sprintf("ConfigMap %s/%s, key %s (workload.customScript) changed during "+
			"the run: it had sha256 %s when the run first read it (status.customScriptSHA256) and has %s now, and a run "+
			"measures one fixed script, so no more steps run; put the original script back to let the run go on, or start "+
			"a new run to measure the new one", run.Namespace, cs.Name, cs.Key, pinned, digest)}
	}
	return digest, nil
}
