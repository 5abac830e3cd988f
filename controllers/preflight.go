package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
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
// what it waits for; after that the target fails with what to create. Then its connection Secret
// is checked (checkConnectionSecret): before the target leaves Pending and before every Job.
func (r *BenchmarkRunReconciler) checkReferences(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus) (ok bool, res ctrl.Result, err error) {
	missing, err := r.missingReference(ctx, tx.run)
	if err == nil && missing == "" {
		return r.checkConnectionSecret(ctx, tx, t, ts)
	}
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

// checkConnectionSecret holds back a Job that must not start, or whose pod could not:
//   - a user's Secret (an external target's) is used only with its owner's consent, the label
//     v1.LabelAllowBenchmark: without it the target fails before anything mounts the Secret, as
//     it does when the label is removed during the run (no later Job mounts it, not even the one
//     that would drop the run's tables). The run's author chose what runs with the Secret (an
//     image, a script), and naming a Secret takes nothing but the right to create runs;
//   - the Secret the target's sysbench Jobs connect with must still be there (the pod of a Job
//     without it waits in CreateContainerConfigError until the Job's deadline, attempt after
//     attempt). One the operator generated cannot come back (its server was set up with those
//     passwords): the target fails at once. A user's Secret may be created again (a GitOps tool
//     replacing it): the target waits up to the scheduling grace from when the run first said it
//     is missing (the Progressing condition's transition), then fails with what to do. A Pending
//     target does not wait here.
//
// Only the Secret's metadata is read.
func (r *BenchmarkRunReconciler) checkConnectionSecret(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus) (bool, ctrl.Result, error) {
	run := tx.run
	eng, err := r.engineFor(t)
	if err != nil {
		res, err := r.failTarget(ctx, tx, t, ts, err.Error())
		return false, res, err
	}
	name := eng.ConnectionSecret(run, t)
	pending := ts.Phase == v1.TargetPending || ts.Phase == ""
	users := !engine.FactsOf(t.Engine).CreatesServer
	if name == "" || (pending && !users) {
		// The operator creates its own Secret once the target is provisioned.
		return true, ctrl.Result{}, nil
	}
	secret, err := r.secretMetadata(ctx, run.Namespace, name)
	if err == nil {
		if users {
			if why := engine.ConsentMissing(secret, t.Name); why != "" {
				res, err := r.failTarget(ctx, tx, t, ts, why+", then start a new run")
				return false, res, err
			}
		}
		return true, ctrl.Result{}, nil
	}
	if pending {
		// Looked at early only to fail early: the external engine waits for a missing Secret
		// (and bounds a read that keeps failing) once provisioning, and every Job checks again.
		return true, ctrl.Result{}, nil
	}
	if !apierrors.IsNotFound(err) {
		return false, ctrl.Result{}, fmt.Errorf("get secret %s: %w", name, err)
	}
	if !users {
		res, err := r.failTarget(ctx, tx, t, ts, fmt.Sprintf("Secret %s/%s with the credentials the operator generated for "+
			"target %s was deleted during the run: its server was set up with those passwords, which are gone, so the "+
			"target cannot go on; start a new run, and find out who deleted it", run.Namespace, name, t.Name))
		return false, res, err
	}
	missing := fmt.Sprintf("Secret %s/%s named by target %s was deleted during the run", run.Namespace, name, t.Name)
	since := r.clock.Now()
	if c := apimeta.FindStatusCondition(run.Status.Conditions, v1.ConditionProgressing); c != nil && c.Status == metav1.ConditionFalse &&
		c.Reason == v1.ReasonMissingReference && strings.Contains(c.Message, missing) {
		since = c.LastTransitionTime.Time
	}
	waited := r.clock.Since(since)
	if waited >= r.schedulingGrace {
		res, err := r.failTarget(ctx, tx, t, ts, fmt.Sprintf("%s and was not created again within %s: create it again with the keys "+
			"host, port, user and password, and start a new run", missing, r.schedulingGrace))
		return false, res, err
	}
	tx.stalled(v1.ReasonMissingReference, fmt.Sprintf("target %s: %s; its next sysbench Job waits for it until %s, then the target fails",
		t.Name, missing, since.Add(r.schedulingGrace).UTC().Format(time.RFC3339)))
	return false, ctrl.Result{RequeueAfter: min(referenceRecheck, r.schedulingGrace-waited)}, nil
}

// customScriptDigest is the digest (sysbench.Digest) of the content of workload.customScript
// as its ConfigMap holds it now, read from the API server; "" for a run without one.
func (r *BenchmarkRunReconciler) customScriptDigest(ctx context.Context, run *v1.BenchmarkRun) (string, error) {
	cs := run.Spec.Workload.CustomScript
	if cs == nil {
		return "", nil
	}
	cm := &corev1.ConfigMap{}
	if err := r.apiReader().Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: cs.Name}, cm); err != nil {
		return "", fmt.Errorf("get configmap %s: %w", cs.Name, err)
	}
	if s, ok := cm.Data[cs.Key]; ok {
		return sysbench.Digest([]byte(s)), nil
	}
	if b, ok := cm.BinaryData[cs.Key]; ok {
		return sysbench.Digest(b), nil
	}
	return "", fmt.Errorf("ConfigMap %s has no key %s", cs.Name, cs.Key)
}

// pinCustomScript is the digest a step Job of the run checks its custom script against: the
// one the run recorded in its status when it first read the script (recorded now, in this
// reconcile's status write, when there is none yet). A run measures one fixed configuration: a
// script changed since it was recorded is an *engine.ConfigError that names the ConfigMap, and no
// Job runs it. The pod checks the mounted script against the digest too, which also catches a
// change between this read and the kubelet's mount.
func (r *BenchmarkRunReconciler) pinCustomScript(ctx context.Context, tx *transition) (string, error) {
	run := tx.run
	digest, err := r.customScriptDigest(ctx, run)
	if err != nil || digest == "" {
		return "", err
	}
	pinned := run.Status.CustomScriptSHA256
	if pinned == "" {
		run.Status.CustomScriptSHA256 = digest
		return digest, nil
	}
	if digest != pinned {
		cs := run.Spec.Workload.CustomScript
		return "", &engine.ConfigError{Message: fmt.Sprintf("ConfigMap %s/%s, key %s (workload.customScript) changed during "+
			"the run: it had sha256 %s when the run first read it (status.customScriptSHA256) and has %s now, and a run "+
			"measures one fixed script, so no more steps run; put the original script back to let the run go on, or start "+
			"a new run to measure the new one", run.Namespace, cs.Name, cs.Key, pinned, digest)}
	}
	return digest, nil
}

// secretMetadata reads a Secret's metadata from the API server: its labels, never its data.
func (r *BenchmarkRunReconciler) secretMetadata(ctx context.Context, namespace, name string) (*metav1.PartialObjectMetadata, error) {
	s := &metav1.PartialObjectMetadata{}
	s.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := r.apiReader().Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		return nil, err
	}
	return s, nil
}
