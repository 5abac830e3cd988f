package run_test

// Nothing a run waits for is waited for without end: an error reading the server's state, a
// connection Secret deleted while the run goes on. Each test drives one run in the fake world,
// whose clock moves only when the test says so.

import (
	"errors"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// fakeExternal is a one-target run against a user's server in the fake world, with its Secret.
func fakeExternal(w *fakeWorld, name string) *v1.BenchmarkRun {
	w.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-db", Namespace: fakeNS,
		Labels: map[string]string{v1.LabelAllowBenchmark: v1.AllowBenchmark}},
		Data: map[string][]byte{"host": []byte("db.example"), "port": []byte("3306"), "user": []byte("bench"), "password": []byte("pw")}})
	r := fakeRun(name, 1, 2, 4)
	r.Spec.Targets = []v1.Target{{Name: "prod", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: name + "-db"}}}
	return w.create(r).(*v1.BenchmarkRun)
}

// An engine that cannot read its server's state (here the API server refuses to read the
// external target's Secret: a role that lacks it) has its error retried by the controller's
// back-off, as any error that may pass, but only until the server ready timeout (10 minutes in
// the fake world); the first retry after it fails the target with the error. It used to be
// retried for ever.
func TestReadyErrorHasADeadline(t *testing.T) {
	w := newFakeWorld(t)
	run := fakeExternal(w, "rdy")
	f := w.inject(&fault{where: onObjectRead, times: -1, match: func(o client.Object) bool { return o.GetName() == "rdy-db" },
		err: apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "rdy-db",
			errors.New(`User "system:serviceaccount:mysqlbench:manager" cannot get resource "secrets"`))})
	for i := 0; i < 5 && targetStatus(w.run(run.Name), "prod").Phase != v1.TargetProvisioning; i++ {
		w.mustReconcile(run.Name) // started, the cleanup finalizer, out of Pending (external targets hold no node)
	}
	start := w.clock.Now()
	for w.clock.Since(start) < 10*time.Minute {
		if _, err := w.reconcile(run.Name); !apierrors.IsForbidden(err) {
			t.Fatalf("after %s: reconcile returned %v; want the error, for the back-off", w.clock.Since(start), err)
		}
		if ts := targetStatus(w.run(run.Name), "prod"); ts.Phase != v1.TargetProvisioning {
			t.Fatalf("after %s: target %s %q, want it still Provisioning", w.clock.Since(start), ts.Phase, ts.Message)
		}
		w.clock.Step(time.Minute)
	}
	got := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
	ts := targetStatus(got, "prod")
	if ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, "server not ready after 10m0s: read the state of target prod's server") ||
		!strings.Contains(ts.Message, `cannot get resource "secrets"`) {
		t.Errorf("target %s %q, want Failed with the error", ts.Phase, ts.Message)
	}
	if f.hits < 10 {
		t.Errorf("the Secret was read %d times, want every retry to try", f.hits)
	}
}

// driveToStep2 drives the run until its first target measures step 2, which stays running.
func driveToStep2(t *testing.T, w *fakeWorld, run *v1.BenchmarkRun, target string) func(*batchv1.Job) outcome {
	t.Helper()
	ok := succeedAll(t)
	hold := func(job *batchv1.Job) outcome {
		if job.Labels[specs.LabelStep] == "s02" {
			return outcome{pending: true}
		}
		return ok(job)
	}
	w.drive(run.Name, hold, "step 2", func(r *v1.BenchmarkRun) bool { return len(targetStatus(r, target).Steps) == 1 })
	return ok
}

// A connection Secret deleted during the run is noticed before the next Job, which could not
// start without it, and the target fails saying which Secret and what to do: at once for the
// credentials the operator generated (its server was set up with them; nothing can bring them
// back), after the scheduling grace (1 minute in the fake world) for a user's Secret, which may
// be created again meanwhile. Without it every Job's pod sat in CreateContainerConfigError
// until the Job's deadline, attempt after attempt.
func TestConnectionSecretDeletedMidRun(t *testing.T) {
	t.Run("generated credentials", func(t *testing.T) {
		w := newFakeWorld(t)
		r := fakeRun("gen", 1, 2, 4)
		r.Spec.Targets = r.Spec.Targets[:1]
		run := w.create(r).(*v1.BenchmarkRun)
		ok := driveToStep2(t, w, run, "mariadb")
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: specs.ConnectionSecretName(run, "mariadb"), Namespace: fakeNS}}
		if err := w.api.Delete(w.ctx, secret); err != nil {
			t.Fatal(err)
		}
		jobs, _, _ := w.counters()
		w.finishJobs(ok) // step 2 ends: step 3's Job would need the Secret
		got := w.drive(run.Name, ok, "the target to end", func(r *v1.BenchmarkRun) bool { return targetStatus(r, "mariadb").Phase.Finished() })
		ts := targetStatus(got, "mariadb")
		want := "Secret bench/" + secret.Name + " with the credentials the operator generated for target mariadb was deleted during the run"
		if ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, want) || !strings.Contains(ts.Message, "start a new run") {
			t.Fatalf("target %s %q, want Failed with %q and what to do", ts.Phase, ts.Message, want)
		}
		after, _, _ := w.counters()
		for k, n := range after {
			if strings.HasPrefix(k, "Job/") && n > jobs[k] {
				t.Errorf("%s created after the Secret was deleted", k)
			}
		}
	})
	t.Run("a user's Secret", func(t *testing.T) {
		w := newFakeWorld(t)
		run := fakeExternal(w, "usr")
		ok := driveToStep2(t, w, run, "prod")
		if err := w.api.Delete(w.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "usr-db", Namespace: fakeNS}}); err != nil {
			t.Fatal(err)
		}
		w.finishJobs(ok)
		w.mustReconcile(run.Name) // records step 2
		start := w.clock.Now()
		want := "Secret bench/usr-db named by target prod was deleted during the run"
		for w.clock.Since(start) < time.Minute {
			w.mustReconcile(run.Name)
			got := w.run(run.Name)
			if ts := targetStatus(got, "prod"); ts.Phase != v1.TargetRunning {
				t.Fatalf("after %s: target %s %q, want it waiting for the Secret within the grace", w.clock.Since(start), ts.Phase, ts.Message)
			}
			c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionProgressing)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1.ReasonMissingReference || !strings.Contains(c.Message, want) {
				t.Fatalf("Progressing %+v, want False %s with %q", c, v1.ReasonMissingReference, want)
			}
			w.clock.Step(10 * time.Second)
		}
		got := w.drive(run.Name, ok, "the run to finish", finished)
		ts := targetStatus(got, "prod")
		if ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, want) ||
			!strings.Contains(ts.Message, "create it again with the keys host, port, user and password") {
			t.Fatalf("target %s %q, want Failed with %q and what to do", ts.Phase, ts.Message, want)
		}
	})
	t.Run("a user's Secret created again within the grace", func(t *testing.T) {
		w := newFakeWorld(t)
		run := fakeExternal(w, "back")
		ok := driveToStep2(t, w, run, "prod")
		secret := &corev1.Secret{}
		if err := w.api.Get(w.ctx, client.ObjectKey{Namespace: fakeNS, Name: "back-db"}, secret); err != nil {
			t.Fatal(err)
		}
		if err := w.api.Delete(w.ctx, secret); err != nil {
			t.Fatal(err)
		}
		w.finishJobs(ok)
		for range 3 {
			w.mustReconcile(run.Name)
			w.clock.Step(10 * time.Second)
		}
		secret.ResourceVersion = ""
		w.create(secret)
		got := w.drive(run.Name, ok, "the run to finish", finished)
		if ts := targetStatus(got, "prod"); got.Status.Phase != v1.RunSucceeded {
			t.Fatalf("run %s, target %s %q: want it to go on once the Secret is back", got.Status.Phase, ts.Phase, ts.Message)
		}
	})
}

// An object under a name the server needs that is being deleted is waited for (an earlier run's
// object on its way out), but not for ever: one whose finalizer nobody runs fails the target at
// the server ready timeout (10 minutes in the fake world), saying what it waited for.
func TestProvisionWaitHasADeadline(t *testing.T) {
	w := newFakeWorld(t)
	r := fakeRun("stuck", 1)
	r.Spec.Targets = r.Spec.Targets[:1]
	stuck := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: specs.ServerName(r, "mariadb"), Namespace: fakeNS,
		Finalizers: []string{"example.com/never"}}}
	w.create(stuck)
	if err := w.api.Delete(w.ctx, stuck); err != nil {
		t.Fatal(err)
	}
	run := w.create(r).(*v1.BenchmarkRun)
	w.drive(run.Name, succeedAll(t), "provisioning", func(r *v1.BenchmarkRun) bool {
		return targetStatus(r, "mariadb").Phase == v1.TargetProvisioning
	})
	start := targetStatus(w.run(run.Name), "mariadb").StartTime.Time
	for w.clock.Since(start) < 10*time.Minute {
		res := w.mustReconcile(run.Name)
		got := w.run(run.Name)
		if ts := targetStatus(got, "mariadb"); ts.Phase != v1.TargetProvisioning {
			t.Fatalf("after %s: target %s %q, want it waiting", w.clock.Since(start), ts.Phase, ts.Message)
		}
		if c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionProgressing); c == nil || !strings.Contains(c.Message, "waiting for ConfigMap bench/"+stuck.Name) {
			t.Fatalf("Progressing %+v, want what it waits for", c)
		}
		if res.RequeueAfter <= 0 || res.RequeueAfter > w.clock.Since(start)+10*time.Minute {
			t.Fatalf("requeue after %s", res.RequeueAfter)
		}
		w.clock.Step(30 * time.Second)
	}
	got := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
	ts := targetStatus(got, "mariadb")
	if ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, "server not provisioned after 10m0s: waiting for ConfigMap bench/"+stuck.Name) ||
		!strings.Contains(ts.Message, "example.com/never") {
		t.Errorf("target %s %q, want Failed naming what it waited for", ts.Phase, ts.Message)
	}
}
