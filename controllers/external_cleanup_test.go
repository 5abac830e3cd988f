package controllers_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/controllers"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// externalRun is a one-target run against a user's server, with the Secret it needs.
func externalRun(t *testing.T, ns, name string) *v1.BenchmarkRun {
	t.Helper()
	if err := k8s.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-db", Namespace: ns},
		StringData: map[string]string{"host": "db.example", "port": "3306", "user": "bench", "password": "pw"},
	}); err != nil {
		t.Fatal(err)
	}
	run := baseRun(ns, name, 1, 2)
	run.Spec.Targets = []v1.Target{{Name: "prod", Engine: v1.EngineExternal, SecretRef: &corev1.LocalObjectReference{Name: name + "-db"}}}
	return run
}

// An external target that fails after its tables were prepared drops them before it ends Failed:
// the user's server keeps nothing of a failed run.
func TestFailedExternalTargetDropsItsTables(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	notPrepared := captured(t, "run_not_prepared_1146.txt")
	ok := succeedAll(t)
	var mu sync.Mutex
	var jobs []string
	startKubelet(t, ns, func(job *batchv1.Job) outcome {
		mu.Lock()
		if len(jobs) == 0 || jobs[len(jobs)-1] != job.Name {
			jobs = append(jobs, job.Name)
		}
		mu.Unlock()
		if job.Labels[specs.LabelStep] == "s02" {
			return outcome{exitCode: 1, message: notPrepared, failed: true}
		}
		return ok(job)
	})
	run := externalRun(t, ns, "extfail")
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "extfail", 30*time.Second, "the run to finish", finished)
	ts := got.Status.Targets[0]
	if ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, "step 2/2") || !strings.Contains(ts.Message, "1146") {
		t.Fatalf("target %s %q, want Failed with step 2's error", ts.Phase, ts.Message)
	}
	mu.Lock()
	last := jobs[len(jobs)-1]
	mu.Unlock()
	if !strings.Contains(last, "-cleanup-") {
		t.Errorf("last Job %s, want the cleanup that drops the tables (Jobs: %v)", last, jobs)
	}
	assertEvents(t, ns, "extfail", "TargetFailing", "TargetFailed")
	// The finalizer that guarded the tables is gone with them.
	waitFor(t, ns, "extfail", 10*time.Second, "the finalizer to go", func(r *v1.BenchmarkRun) bool {
		return !controllerutil.ContainsFinalizer(r, controllers.ExternalCleanupFinalizer)
	})
}

// A run deleted while its external target holds tables on the user's server stays until a Job
// has dropped them.
func TestDeletedRunDropsExternalTables(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	ok := succeedAll(t)
	var mu sync.Mutex
	dropDone := false
	startKubelet(t, ns, func(job *batchv1.Job) outcome {
		switch job.Labels[specs.LabelStep] {
		case "s01":
			return outcome{pending: true} // the run is deleted during step 1
		case "drop":
			mu.Lock()
			dropDone = true
			mu.Unlock()
			return outcome{message: captured(t, "cleanup_point_select.termination-log")}
		}
		return ok(job)
	})
	run := externalRun(t, ns, "extdel")
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ns, "extdel", 30*time.Second, "step 1 with the finalizer in place", func(r *v1.BenchmarkRun) bool {
		return r.Status.Phase == v1.RunRunning && controllerutil.ContainsFinalizer(r, controllers.ExternalCleanupFinalizer)
	})
	if err := k8s.Delete(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(run), &v1.BenchmarkRun{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run is still there 20s after its deletion (err %v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if !dropDone {
		t.Error("the run went without a Job dropping the external tables")
	}
}
