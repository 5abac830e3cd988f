package run_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	perconaengine "github.com/mysqlbench/mysqlbench-operator/internal/engine/percona"
	"github.com/mysqlbench/mysqlbench-operator/internal/owned"
)

// An earlier run's PerconaServerMySQL under the name a new run needs, stuck in deletion because
// no Percona operator runs its delete-PVC finalizer: the new run says what it waits for, and after
// the grace removes the Percona finalizer itself, so the name is never blocked for good.
func TestPerconaNameHeldByAStuckDeletion(t *testing.T) {
	restCfg, c := perconaAPI(t)
	ns := perconaNamespace(t, c, "percona-stuck")
	ctx := context.Background()
	target := v1.Target{Name: "ps84", Engine: v1.EnginePerconaServer}
	earlier := perconaRun(ns, "nightly", target)
	earlier.Spec.Storage = &v1.Storage{Size: resource.MustParse("5Gi")}
	stuck, err := perconaengine.PerconaServerMySQL(earlier, target)
	if err != nil {
		t.Fatal(err)
	}
	if len(stuck.GetFinalizers()) == 0 {
		t.Fatal("the builder set no finalizer: nothing to test")
	}
	// It was the earlier run's: that run, gone now, was its controller.
	earlier.UID = "uid-of-the-earlier-nightly"
	stuck.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(earlier, v1.GroupVersion.WithKind("BenchmarkRun"))})
	if err := c.Create(ctx, stuck); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, stuck); err != nil {
		t.Fatal(err)
	}
	startOperator(t, ns, operatorOptions{log: captured(t, "run_point_select_t4.txt"), restConfig: restCfg,
		stuckDeletionGrace: 3 * time.Second})
	startKubeletOn(t, c, ns, func(*batchv1.Job) outcome { return outcome{pending: true} })
	fakePercona(t, c, ns, perconaengine.PerconaServerMySQLKind, func(u *unstructured.Unstructured) map[string]any {
		return map[string]any{"state": "initializing"}
	})
	run := perconaRun(ns, "nightly", target)
	run.Spec.Storage = &v1.Storage{Size: resource.MustParse("5Gi")}
	if err := c.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	waitForOn(t, c, ns, run.Name, 10*time.Second, "the wait for the earlier resource", func(r *v1.BenchmarkRun) bool {
		cond := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing)
		return cond != nil && strings.Contains(cond.Message, "of an earlier run to be deleted")
	})
	// After the grace the earlier resource goes, and the run's own takes its name.
	name := perconaengine.ResourceName(run, "ps84")
	deadline := time.Now().Add(20 * time.Second)
	for {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(perconaengine.PerconaServerMySQLKind)
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
		if err == nil && metav1.IsControlledBy(u, getRun(t, c, run)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run's PerconaServerMySQL never replaced the stuck one (err %v, finalizers %v)", err, u.GetFinalizers())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r := getRun(t, c, run); r.Status.Targets[0].Phase.Finished() {
		t.Errorf("target %s %q: waiting for a stuck deletion must not fail it", r.Status.Targets[0].Phase, r.Status.Targets[0].Message)
	}
}

// A PerconaServerMySQL in deletion under the name a run needs that is not an earlier run's (no
// controller, or another one) keeps its Percona finalizers, whatever the grace: it waits for its
// own Percona operator, and removing them would skip the cleanup its owner asked for (its PVCs).
// The run says what it waits for.
func TestPerconaForeignStuckDeletionKeepsItsFinalizers(t *testing.T) {
	restCfg, c := perconaAPI(t)
	ctx := context.Background()
	target := v1.Target{Name: "ps84", Engine: v1.EnginePerconaServer}
	for i, tc := range []struct {
		name string
		refs []metav1.OwnerReference
	}{
		{"no controller", nil},
		{"a run of another name", []metav1.OwnerReference{{APIVersion: v1.GroupVersion.String(), Kind: "BenchmarkRun",
			Name: "weekly", UID: "uid-of-weekly", Controller: ptr.To(true)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := perconaNamespace(t, c, fmt.Sprintf("percona-foreign-stuck-%d", i))
			withStorage := perconaRun(ns, "nightly", target)
			withStorage.Spec.Storage = &v1.Storage{Size: resource.MustParse("5Gi")}
			theirs, err := perconaengine.PerconaServerMySQL(withStorage, target)
			if err != nil {
				t.Fatal(err)
			}
			finalizers := theirs.GetFinalizers()
			if len(finalizers) == 0 {
				t.Fatal("the builder set no finalizer: nothing to test")
			}
			theirs.SetOwnerReferences(tc.refs)
			if err := c.Create(ctx, theirs); err != nil {
				t.Fatal(err)
			}
			if err := c.Delete(ctx, theirs); err != nil {
				t.Fatal(err)
			}
			const grace = time.Second
			startOperator(t, ns, operatorOptions{restConfig: restCfg, stuckDeletionGrace: grace})
			run := perconaRun(ns, "nightly", target)
			run.Spec.Storage = &v1.Storage{Size: resource.MustParse("5Gi")}
			if err := c.Create(ctx, run); err != nil {
				t.Fatal(err)
			}
			waitForOn(t, c, ns, run.Name, 10*time.Second, "the run to say what it waits for", func(r *v1.BenchmarkRun) bool {
				cond := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing)
				return cond != nil && strings.Contains(cond.Message, "waiting for PerconaServerMySQL "+ns+"/"+theirs.GetName())
			})
			// Well past the grace, with the rechecks it brings: the finalizers are still there.
			for end := time.Now().Add(grace + 2*owned.Recheck); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
				got := getPercona(t, c, perconaengine.PerconaServerMySQLKind, ns, theirs.GetName())
				if fmt.Sprint(got.GetFinalizers()) != fmt.Sprint(finalizers) {
					t.Fatalf("finalizers %v of a resource that is not an earlier run's, want %v untouched", got.GetFinalizers(), finalizers)
				}
			}
			if r := getRun(t, c, run); r.Status.Targets[0].Phase != v1.TargetProvisioning {
				t.Errorf("target %s %q, want it waiting in Provisioning", r.Status.Targets[0].Phase, r.Status.Targets[0].Message)
			}
		})
	}
}

// Deleting a run lets its Percona resource go, Percona operator or not: with none running (as
// here), the delete-PVC finalizer the resource was created with is removed once the grace has
// passed, the run and the resource are gone, and a Warning says that the PVCs may be left.
func TestPerconaResourceReleasedWhenItsRunIsDeleted(t *testing.T) {
	restCfg, c := perconaAPI(t)
	ns := perconaNamespace(t, c, "percona-release")
	ctx := context.Background()
	target := v1.Target{Name: "ps84", Engine: v1.EnginePerconaServer}
	startOperator(t, ns, operatorOptions{restConfig: restCfg, stuckDeletionGrace: 2 * time.Second})
	run := perconaRun(ns, "doomed", target)
	run.Spec.Storage = &v1.Storage{Size: resource.MustParse("5Gi")}
	if err := c.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	name := perconaengine.ResourceName(run, "ps84")
	deadline := time.Now().Add(20 * time.Second)
	for {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(perconaengine.PerconaServerMySQLKind)
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err == nil && len(u.GetFinalizers()) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run never created its PerconaServerMySQL with its delete-PVC finalizer")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := c.Delete(ctx, getRun(t, c, run)); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(perconaengine.PerconaServerMySQLKind)
		rerr := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: run.Name}, &v1.BenchmarkRun{})
		uerr := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
		if apierrors.IsNotFound(rerr) && apierrors.IsNotFound(uerr) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deleted run (%v) or its PerconaServerMySQL (%v, finalizers %v) is still there", rerr, uerr, u.GetFinalizers())
		}
		time.Sleep(200 * time.Millisecond)
	}
	events := &corev1.EventList{}
	if err := c.List(ctx, events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Reason == "ServerFinalizerRemoved" && strings.Contains(e.Message, "percona.com/delete-mysql-pvc") {
			return
		}
	}
	t.Error("no ServerFinalizerRemoved Warning naming the removed finalizer")
}
