package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// referenceRecheck is how often a missing reference is looked up again within the grace: the
// user's ConfigMaps are not watched (the cache holds only the operator's own objects).
const referenceRecheck = 5 * time.Second

// missingReference names the first object the run's workload refers to that does not exist, or
// lacks the key it is read by, in words that say what to create; "" when all are there.
// A sysbench pod mounting a missing ConfigMap would sit in ContainerCreating until its
// deadline, so this is checked before any server is provisioned and before every Job.
func (r *BenchmarkRunReconciler) missingReference(ctx context.Context, run *v1.BenchmarkRun) (string, error) {
	cs := run.Spec.Workload.CustomScript
	if cs == nil {
		return "", nil
	}
	cm := &corev1.ConfigMap{}
	err := r.apiReader().Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: cs.Name}, cm)
	if apierrors.IsNotFound(err) {
		return fmt.Sprintf("ConfigMap %s not found in namespace %s: create it with the key %s holding the Lua script "+
			"named by workload.customScript", cs.Name, run.Namespace, cs.Key), nil
	}
	if err != nil {
		return "", fmt.Errorf("get configmap %s: %w", cs.Name, err)
	}
	if _, ok := cm.Data[cs.Key]; !ok {
		if _, ok := cm.BinaryData[cs.Key]; !ok {
			return fmt.Sprintf("ConfigMap %s in namespace %s has no key %s: add the Lua script under that key, "+
				"or set workload.customScript.key to one of its keys", cs.Name, run.Namespace, cs.Key), nil
		}
	}
	return "", nil
}

// checkReferences holds the target back while a reference is missing: within the scheduling
// grace after the run started (a GitOps tool may apply the ConfigMap after the run) the run says
// what it waits for; after that the target fails with what to create.
func (r *BenchmarkRunReconciler) checkReferences(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus) (ok bool, res ctrl.Result, err error) {
	missing, err := r.missingReference(ctx, tx.run)
	if err != nil || missing == "" {
		return err == nil, ctrl.Result{}, err
	}
	waited := r.clock.Since(tx.run.Status.StartTime.Time)
	if waited >= r.schedulingGrace {
		res, err := r.failTarget(ctx, tx, t, ts, missing)
		return false, res, err
	}
	tx.stalled(v1.ReasonMissingReference, fmt.Sprintf("target %s waits up to %s for a reference: %s", t.Name,
		(r.schedulingGrace-waited).Round(time.Second), missing))
	return false, ctrl.Result{RequeueAfter: min(referenceRecheck, r.schedulingGrace-waited)}, nil
}

// apiReader reads the user's objects from the API server, past the operator's label-filtered cache.
func (r *BenchmarkRunReconciler) apiReader() client.Reader { return r.reader }
