// Package preflight says whether a target of a run may go on, before anything is provisioned for
// it and before each of its Jobs: the objects the run names that the user owns are there (the
// custom script's ConfigMap with its key, the connection Secret), and the user consented to the
// use of a Secret. It reads them from the API server, past the operator's label-filtered cache,
// and decides; the BenchmarkRun reconciler fails the target or waits, as the Verdict says.
package preflight

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// Checks reads what a run names from the API server.
type Checks struct {
	// Reader reads the user's objects (the manager's API reader: the cache holds none of them).
	Reader client.Reader
	Clock  clock.PassiveClock
	// Grace is how long a missing reference is waited for (the scheduling grace).
	Grace time.Duration
}

// Verdict says whether a target may go on: it may when Fail and Wait are empty. Fail is why the
// target fails; Wait is what it waits for (the run says so, stalled), until Requeue has passed.
type Verdict struct {
	Fail, Wait string
	Requeue    time.Duration
}

// Recheck is how often a missing reference is looked up again within the grace: the
// user's ConfigMaps are not watched (the cache holds only the operator's own objects).
const Recheck = 5 * time.Second

// missingReference names the first object the run's workload refers to that does not exist, or
// lacks the key it is read by, in words that say what to create; "" when all are there.
// A sysbench pod mounting a missing ConfigMap would sit in ContainerCreating until its
// deadline, so this is checked before any server is provisioned and before every Job.
func (c Checks) missingReference(ctx context.Context, run *v1.BenchmarkRun) (string, error) {
	cs := run.Spec.CustomScript()
	if cs == nil {
		return "", nil
	}
	cm := &corev1.ConfigMap{}
	err := c.Reader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: cs.Name}, cm)
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

// Target says whether target t of run may go on, before it leaves Pending and before every Job.
// It is held back while a reference is missing: within the scheduling grace after the run started
// (a GitOps tool may apply the ConfigMap after the run) the run says what it waits for; after that
// the target fails with what to create. Then its connection Secret is checked (connectionSecret):
// secret names it ("" for none); engineErr, when set, is why the target has no engine, and fails it.
func (c Checks) Target(ctx context.Context, run *v1.BenchmarkRun, t v1.Target, ts *v1.TargetStatus,
	secret string, engineErr error) (Verdict, error) {
	missing, err := c.missingReference(ctx, run)
	if err != nil {
		return Verdict{}, err
	}
	if missing == "" {
		return c.connectionSecret(ctx, run, t, ts, secret, engineErr)
	}
	waited := c.Clock.Since(run.Status.StartTime.Time)
	if waited >= c.Grace {
		return Verdict{Fail: missing}, nil
	}
	return Verdict{Wait: fmt.Sprintf("target %s waits up to %s for a reference: %s", t.Name,
		(c.Grace - waited).Round(time.Second), missing), Requeue: min(Recheck, c.Grace-waited)}, nil
}

// connectionSecret holds back a Job that must not start, or whose pod could not:
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
func (c Checks) connectionSecret(ctx context.Context, run *v1.BenchmarkRun, t v1.Target, ts *v1.TargetStatus,
	name string, engineErr error) (Verdict, error) {
	if engineErr != nil {
		return Verdict{Fail: engineErr.Error()}, nil
	}
	pending := ts.Phase == v1.TargetPending || ts.Phase == ""
	users := !engine.FactsOf(t.Engine).CreatesServer
	if name == "" || (pending && !users) {
		// The operator creates its own Secret once the target is provisioned.
		return Verdict{}, nil
	}
	secret, err := c.SecretMetadata(ctx, run.Namespace, name)
	if err == nil {
		if users {
			if why := engine.ConsentMissing(secret, t.Name); why != "" {
				return Verdict{Fail: why + ", then start a new run"}, nil
			}
		}
		return Verdict{}, nil
	}
	if pending {
		// Looked at early only to fail early: the external engine waits for a missing Secret
		// (and bounds a read that keeps failing) once provisioning, and every Job checks again.
		return Verdict{}, nil
	}
	if !apierrors.IsNotFound(err) {
		return Verdict{}, fmt.Errorf("get secret %s: %w", name, err)
	}
	if !users {
		return Verdict{Fail: fmt.Sprintf("Secret %s/%s with the credentials the operator generated for "+
			"target %s was deleted during the run: its server was set up with those passwords, which are gone, so the "+
			"target cannot go on; start a new run, and find out who deleted it", run.Namespace, name, t.Name)}, nil
	}
	missing := fmt.Sprintf("Secret %s/%s named by target %s was deleted during the run", run.Namespace, name, t.Name)
	since := c.Clock.Now()
	if c := apimeta.FindStatusCondition(run.Status.Conditions, v1.ConditionProgressing); c != nil && c.Status == metav1.ConditionFalse &&
		c.Reason == v1.ReasonMissingReference && strings.Contains(c.Message, missing) {
		since = c.LastTransitionTime.Time
	}
	waited := c.Clock.Since(since)
	if waited >= c.Grace {
		return Verdict{Fail: fmt.Sprintf("%s and was not created again within %s: create it again with the keys "+
			"host, port, user and password, and start a new run", missing, c.Grace)}, nil
	}
	return Verdict{Wait: fmt.Sprintf("target %s: %s; its next sysbench Job waits for it until %s, then the target fails",
		t.Name, missing, since.Add(c.Grace).UTC().Format(time.RFC3339)), Requeue: min(Recheck, c.Grace-waited)}, nil
}

// ScriptDigest is the digest (sysbench.Digest) of the content of workload.customScript
// as its ConfigMap holds it now, read from the API server; "" for a run without one.
func (c Checks) ScriptDigest(ctx context.Context, run *v1.BenchmarkRun) (string, error) {
	cs := run.Spec.CustomScript()
	if cs == nil {
		return "", nil
	}
	cm := &corev1.ConfigMap{}
	if err := c.Reader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: cs.Name}, cm); err != nil {
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

// SecretMetadata reads a Secret's metadata from the API server: its labels, never its data.
func (c Checks) SecretMetadata(ctx context.Context, namespace, name string) (*metav1.PartialObjectMetadata, error) {
	s := &metav1.PartialObjectMetadata{}
	s.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := c.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		return nil, err
	}
	return s, nil
}
