package run_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	runctrl "github.com/mysqlbench/mysqlbench-operator/controllers/run"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// externalRun is a one-target run against a user's server, with the Secret it needs.
func externalRun(t *testing.T, ns, name string) *v1.BenchmarkRun {
	t.Helper()
	if err := k8s.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-db", Namespace: ns, Labels: map[string]string{v1.LabelAllowBenchmark: v1.AllowBenchmark}},
		StringData: map[string]string{"host": "db.example", "port": "3306", "user": "bench", "password": "pw"},
	}); err != nil {
		t.Fatal(err)
	}
	run := baseRun(ns, name, 1, 2)
	run.Spec.Targets = []v1.Target{{Name: "prod", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: name + "-db"}}}
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
		return !controllerutil.ContainsFinalizer(r, runctrl.ExternalCleanupFinalizer)
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
		return r.Status.Phase == v1.RunRunning && controllerutil.ContainsFinalizer(r, runctrl.ExternalCleanupFinalizer)
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

// fakeExternalRun is a one-target run against a user's server in the fake world, with its Secret,
// driven until its first ladder step runs (tables prepared, the cleanup finalizer in place) and
// then deleted. It returns the run as the deletion left it.
func fakeExternalRun(t *testing.T, w *fakeWorld, name string) *v1.BenchmarkRun {
	t.Helper()
	w.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-db", Namespace: fakeNS,
		Labels: map[string]string{v1.LabelAllowBenchmark: v1.AllowBenchmark}},
		Data: map[string][]byte{"host": []byte("db.example"), "port": []byte("3306"), "user": []byte("bench"), "password": []byte("pw")}})
	r := fakeRun(name, 1, 2)
	r.Spec.Targets = []v1.Target{{Name: "prod", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: name + "-db"}}}
	run := w.create(r).(*v1.BenchmarkRun)
	ok := succeedAll(t)
	w.drive(run.Name, func(job *batchv1.Job) outcome {
		if job.Labels[specs.LabelStep] == "s01" {
			return outcome{pending: true}
		}
		return ok(job)
	}, "step 1 with the finalizer in place", func(r *v1.BenchmarkRun) bool {
		return r.Status.Phase == v1.RunRunning && controllerutil.ContainsFinalizer(r, runctrl.ExternalCleanupFinalizer)
	})
	if err := w.api.Delete(w.ctx, w.run(run.Name)); err != nil {
		t.Fatal(err)
	}
	deleted := w.run(run.Name)
	// The fake client stamps the deletion with the real time: the fake clock goes on from there.
	w.clock.SetTime(deleted.DeletionTimestamp.Time)
	return deleted
}

// gone says whether the run has left the API server.
func (w *fakeWorld) gone(name string) bool {
	return !w.exists(&v1.BenchmarkRun{}, name)
}

// A deleted run whose reporter ConfigMap is gone writes it again and drops its external tables:
// the cleanup Job executes the reporter, and a missing one used to stop the cleanup with an error
// before it ever looked at the timeout, so the finalizer stayed for ever.
func TestDeletedRunWritesItsMissingReporterAndDropsTheTables(t *testing.T) {
	w := newFakeWorld(t)
	run := fakeExternalRun(t, w, "rep")
	reporter := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: specs.ReporterConfigMapName(run), Namespace: fakeNS}}
	if err := w.api.Delete(w.ctx, reporter); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10 && !w.gone(run.Name); i++ {
		if _, err := w.reconcile(run.Name); err != nil {
			t.Fatalf("reconcile %d of the deleted run: %v", i+1, err)
		}
		w.finishJobs(succeedAll(t))
		w.clock.Step(time.Second)
	}
	if !w.gone(run.Name) {
		t.Fatalf("the deleted run is still there: finalizers %v", w.run(run.Name).Finalizers)
	}
	drop := specs.JobName(run, "prod", "drop", specs.Attempt{})
	if creates, _, _ := w.counters(); creates["Job/"+drop] != 1 || creates["ConfigMap/"+reporter.Name] != 2 {
		t.Errorf("creates %v: want the reporter written again and the drop Job %s once", creates, drop)
	}
	if failed := withReason(w.allEvents(), "CleanupFailed"); len(failed) > 0 {
		t.Errorf("the tables were dropped, yet: %v", failed)
	}
}

// A run deleted with its namespace: the namespace refuses every create, so the reporter cannot be
// written again and no cleanup Job can start. The run goes at once, saying the tables may be left,
// instead of holding the namespace's deletion.
func TestDeletedRunInATerminatingNamespaceGoesAtOnce(t *testing.T) {
	w := newFakeWorld(t)
	run := fakeExternalRun(t, w, "term")
	reporter := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: specs.ReporterConfigMapName(run), Namespace: fakeNS}}
	if err := w.api.Delete(w.ctx, reporter); err != nil {
		t.Fatal(err)
	}
	w.inject(&fault{where: onCreate, times: -1, err: apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"},
		reporter.Name, errors.New("unable to create new content in namespace bench because it is being terminated"))})
	if _, err := w.reconcile(run.Name); err != nil {
		t.Fatalf("reconcile of the deleted run: %v", err)
	}
	if !w.gone(run.Name) {
		t.Fatalf("the deleted run is still there: finalizers %v", w.run(run.Name).Finalizers)
	}
	failed := withReason(w.allEvents(), "CleanupFailed")
	if len(failed) != 1 || !strings.Contains(failed[0], "target prod") || !strings.Contains(failed[0], "being terminated") ||
		!strings.Contains(failed[0], "drop them by hand") {
		t.Errorf("CleanupFailed Events %q, want one naming the target, the refusal and what to do", failed)
	}
}

// An error that keeps the cleanup Job from being created (here the API server fails every create)
// is retried, without the growing back-off of a returned error, until the timeout; then the run
// goes, saying why its tables may be left.
func TestDeletedRunGoesAfterTheTimeoutWhateverTheError(t *testing.T) {
	w := newFakeWorld(t)
	run := fakeExternalRun(t, w, "tmo")
	f := w.inject(&fault{where: onCreate, times: -1, err: apierrors.NewInternalError(errors.New("etcdserver: request timed out"))})
	for waited := time.Duration(0); waited < runctrl.ExternalCleanupTimeout; waited += 10 * time.Second {
		res, err := w.reconcile(run.Name)
		if err != nil {
			t.Fatalf("after %s: reconcile returned %v; want a requeue within the timeout", waited, err)
		}
		if res.RequeueAfter <= 0 || res.RequeueAfter > 10*time.Second {
			t.Fatalf("after %s: requeue after %s, want a retry within 10s", waited, res.RequeueAfter)
		}
		if w.gone(run.Name) {
			t.Fatalf("the run went after %s, before the timeout", waited)
		}
		w.clock.Step(10 * time.Second)
	}
	if _, err := w.reconcile(run.Name); err != nil {
		t.Fatalf("reconcile after the timeout: %v", err)
	}
	if !w.gone(run.Name) {
		t.Fatalf("the deleted run is still there after %s: finalizers %v", runctrl.ExternalCleanupTimeout, w.run(run.Name).Finalizers)
	}
	if f.hits < 2 {
		t.Errorf("the create was tried %d times, want retries", f.hits)
	}
	failed := strings.Join(withReason(w.allEvents(), "CleanupFailed"), "\n")
	if !strings.Contains(failed, "not finished within 5m0s") || !strings.Contains(failed, "target prod: its cleanup could not start") ||
		!strings.Contains(failed, "request timed out") {
		t.Errorf("CleanupFailed Events %q, want the timeout and the error", failed)
	}
}

// A cleanup Job that never ends (its pod cannot start in a namespace being deleted, or the user's
// server does not answer) holds the run until the timeout, not longer.
func TestDeletedRunGoesWhenItsCleanupNeverEnds(t *testing.T) {
	w := newFakeWorld(t)
	run := fakeExternalRun(t, w, "hang")
	never := func(*batchv1.Job) outcome { return outcome{pending: true} }
	for waited := time.Duration(0); waited < runctrl.ExternalCleanupTimeout; waited += 30 * time.Second {
		if _, err := w.reconcile(run.Name); err != nil {
			t.Fatalf("after %s: %v", waited, err)
		}
		if w.gone(run.Name) {
			t.Fatalf("the run went after %s, before its cleanup ended or timed out", waited)
		}
		w.finishJobs(never)
		w.clock.Step(30 * time.Second)
	}
	if _, err := w.reconcile(run.Name); err != nil {
		t.Fatal(err)
	}
	if !w.gone(run.Name) {
		t.Fatalf("the deleted run is still there after %s", runctrl.ExternalCleanupTimeout)
	}
	if creates, _, _ := w.counters(); creates["Job/"+specs.JobName(run, "prod", "drop", specs.Attempt{})] != 1 {
		t.Errorf("creates %v: want the drop Job once", creates)
	}
	if failed := withReason(w.allEvents(), "CleanupFailed"); len(failed) != 1 || !strings.Contains(failed[0], "not finished within 5m0s") {
		t.Errorf("CleanupFailed Events %q, want the timeout", failed)
	}
}
