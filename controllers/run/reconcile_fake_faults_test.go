package run_test

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// TestFakeCreateRefusedForGood: an object of the run that the API server refuses in a way no
// retry changes (a quota or an admission webhook: Forbidden; Invalid) fails its target with the
// API server's own words, and the run goes on to its next target, or ends Failed when the refused
// object is one every target needs. The refused create is not retried.
func TestFakeCreateRefusedForGood(t *testing.T) {
	run := fakeRun("rf", 1)
	probe := specs.JobName(run, "mariadb", "probe", specs.Attempt{})
	server := specs.ServerName(run, "mariadb")
	secret := specs.ConnectionSecretName(run, "mariadb")
	reporter := specs.ReporterConfigMapName(run)
	cases := []struct {
		name string
		kind string // of the refused object
		obj  string // its name
		err  error
		// want are substrings of the first target's message.
		want []string
		// second is the phase the second target ends in; hits how often the create is tried.
		second v1.TargetPhase
		hits   int
	}{
		{name: "step Job over the namespace's quota", kind: "Job", obj: probe,
			err: apierrors.NewForbidden(jobsResource, probe, errors.New("exceeded quota: compute-resources, requested: limits.cpu=2, used: limits.cpu=8, limited: limits.cpu=8")),
			want: []string{"the API server rejected Job " + probe + ": ", `jobs.batch "` + probe + `" is forbidden: exceeded quota: compute-resources`,
				"fix the target's settings, or the namespace's quota or admission policy"},
			second: v1.TargetSucceeded, hits: 1},
		{name: "StatefulSet denied by an admission webhook", kind: "StatefulSet", obj: server,
			err: apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, server,
				errors.New(`admission webhook "validate.kyverno.svc-fail" denied the request: containers must not run as root`)),
			want:   []string{"the API server rejected StatefulSet " + server + ": ", `admission webhook "validate.kyverno.svc-fail" denied the request: containers must not run as root`},
			second: v1.TargetSucceeded, hits: 1},
		{name: "connection Secret invalid", kind: "Secret", obj: secret,
			err: apierrors.NewInvalid(schema.GroupKind{Kind: "Secret"}, secret, field.ErrorList{
				field.Invalid(field.NewPath("metadata", "labels"), "x", "must match the namespace's label policy")}),
			want:   []string{"the API server rejected Secret " + secret + ": ", `Secret "` + secret + `" is invalid: metadata.labels: Invalid value: "x": must match the namespace's label policy`},
			second: v1.TargetSucceeded, hits: 1},
		{name: "reporter ConfigMap every target needs", kind: "ConfigMap", obj: reporter,
			err: apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, reporter,
				errors.New(`admission webhook "cm-size.example.com" denied the request: ConfigMaps must carry the team label`)),
			want:   []string{"the API server rejected ConfigMap " + reporter + ": ", `denied the request: ConfigMaps must carry the team label`},
			second: v1.TargetFailed, hits: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newFakeWorld(t)
			w.create(run.DeepCopy())
			f := w.inject(&fault{where: onCreate, times: -1, err: tc.err, match: func(o client.Object) bool {
				return w.kind(o) == tc.kind && o.GetName() == tc.obj
			}})
			failed := w.drive(run.Name, succeedAll(t), "the first target to end", func(r *v1.BenchmarkRun) bool {
				return targetStatus(r, "mariadb").Phase.Finished()
			})
			ts := targetStatus(failed, "mariadb")
			if ts.Phase != v1.TargetFailed {
				t.Fatalf("first target %s, want Failed", ts.Phase)
			}
			for _, want := range tc.want {
				if !strings.Contains(ts.Message, want) {
					t.Errorf("message %q\nwant it to contain %q", ts.Message, want)
				}
			}
			if c := meta.FindStatusCondition(failed.Status.Conditions, v1.ConditionFailed); c == nil || c.Status != metav1.ConditionTrue ||
				!strings.Contains(c.Message, tc.want[0]) {
				t.Errorf("Failed condition %+v, want True quoting the refusal", c)
			}
			if ev := withReason(w.allEvents(), "TargetFailed"); len(ev) != 1 || !strings.Contains(ev[0], tc.want[0]) {
				t.Errorf("TargetFailed Events %v, want one quoting the refusal", ev)
			}

			got := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
			if got.Status.Phase != v1.RunFailed {
				t.Errorf("run %s, want Failed", got.Status.Phase)
			}
			if p := targetStatus(got, "mariadb-psoff").Phase; p != tc.second {
				t.Errorf("second target %s, want %s (%s)", p, tc.second, targetStatus(got, "mariadb-psoff").Message)
			}
			if f.hits != tc.hits {
				t.Errorf("the refused create was tried %d times, want %d", f.hits, tc.hits)
			}
			if twice := w.createdTwice(); len(twice) > 0 {
				t.Errorf("created more than once: %v", twice)
			}
		})
	}
}

// TestFakeCreateFailsForNow: a create that fails for a reason that passes (the API server timed
// out or failed inside, the connection broke) is returned for the controller's backoff: Reconcile
// returns the error, nothing is written and nothing is counted as failed, and the next Reconcile
// creates the object; the run then ends as it would have.
func TestFakeCreateFailsForNow(t *testing.T) {
	run := fakeRun("tf", 1)
	errs := []struct {
		name string
		err  error
		is   func(error) bool
	}{
		{"ServerTimeout", apierrors.NewServerTimeout(jobsResource, "create", 2), apierrors.IsServerTimeout},
		{"InternalError", apierrors.NewInternalError(errors.New("etcdserver: leader changed")), apierrors.IsInternalError},
		{"TooManyRequests", apierrors.NewTooManyRequests("the server is busy", 1), apierrors.IsTooManyRequests},
		{"connection refused", &url.Error{Op: "Post", URL: "https://10.96.0.1:443/apis/batch/v1/namespaces/bench/jobs",
			Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}},
			func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }},
	}
	objects := []struct {
		name  string
		kind  string
		obj   string
		reach func(w *fakeWorld)
	}{
		{"reporter ConfigMap", "ConfigMap", specs.ReporterConfigMapName(run), func(w *fakeWorld) { w.mustReconcile(run.Name) }},
		{"StatefulSet", "StatefulSet", specs.ServerName(run, "mariadb"), func(w *fakeWorld) {
			w.drive(run.Name, succeedAll(w.t), "provisioning", func(r *v1.BenchmarkRun) bool {
				return targetStatus(r, "mariadb").Phase == v1.TargetProvisioning
			})
		}},
		{"probe Job", "Job", specs.JobName(run, "mariadb", "probe", specs.Attempt{}), func(w *fakeWorld) {
			w.drive(run.Name, succeedAll(w.t), "provisioning", func(r *v1.BenchmarkRun) bool {
				return targetStatus(r, "mariadb").Phase == v1.TargetProvisioning
			})
			w.mustReconcile(run.Name) // the server's objects
			w.startServers()
		}},
	}
	for _, ob := range objects {
		for _, e := range errs {
			t.Run(ob.name+"/"+e.name, func(t *testing.T) {
				t.Parallel()
				w := newFakeWorld(t)
				w.create(run.DeepCopy())
				ob.reach(w)
				before := w.run(run.Name)
				w.takeEvents()
				_, writes, _ := w.counters()
				f := w.inject(&fault{where: onCreate, times: 1, err: e.err, match: func(o client.Object) bool {
					return w.kind(o) == ob.kind && o.GetName() == ob.obj
				}})

				_, err := w.reconcile(run.Name)
				if err == nil || !e.is(err) {
					t.Fatalf("reconcile returned %v, want the create's %s", err, e.name)
				}
				if f.hits != 1 {
					t.Fatalf("the %s create was attempted %d times, want once", ob.kind, f.hits)
				}
				if _, w2, _ := w.counters(); w2 != writes {
					t.Errorf("%d status writes after a transient create error, want none", w2-writes)
				}
				if after := w.run(run.Name); !equality.Semantic.DeepEqual(before.Status, after.Status) {
					t.Errorf("status changed:\nbefore %+v\nafter  %+v", before.Status, after.Status)
				}
				if ev := w.takeEvents(); len(ev) > 0 {
					t.Errorf("Events after a transient create error: %v", ev)
				}

				w.mustReconcile(run.Name)
				if creates, _, _ := w.counters(); creates[ob.kind+"/"+ob.obj] != 1 {
					t.Errorf("%s %s created %d times by the next reconcile, want once", ob.kind, ob.obj, creates[ob.kind+"/"+ob.obj])
				}
				got := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
				if got.Status.Phase != v1.RunSucceeded {
					t.Fatalf("phase %s, want Succeeded; status %+v", got.Status.Phase, got.Status)
				}
				for _, ts := range got.Status.Targets {
					if ts.FailedAttempts != 0 || len(ts.Steps) != 1 || ts.Steps[0].Attempts != 1 {
						t.Errorf("target %s: failed attempts %d, steps %+v; a transient error counts as no attempt", ts.Name, ts.FailedAttempts, ts.Steps)
					}
				}
				if ev := withReason(w.allEvents(), "StepFailed"); len(ev) > 0 {
					t.Errorf("StepFailed Events after a transient error: %v", ev)
				}
				if twice := w.createdTwice(); len(twice) > 0 {
					t.Errorf("created more than once: %v", twice)
				}
			})
		}
	}
}

// TestFakeNameTakenBySomeoneElse: an object under a name the run needs that the run does not
// control fails the target with "does not belong to this run" and what to do, and is left as
// it was (cleanup Always tears down only the run's own objects). Without the operator's label the
// label-filtered cache cannot see it and only the create's AlreadyExists reveals it; with the
// label, the cache shows it and it is checked before any create.
func TestFakeNameTakenBySomeoneElse(t *testing.T) {
	run := fakeRun("nt", 1)
	run.Spec.Cleanup = v1.CleanupAlways
	otherRun := func(obj client.Object) client.Object {
		obj.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: v1.GroupVersion.String(), Kind: "BenchmarkRun",
			Name: "other", UID: "uid-other", Controller: ptr.To(true)}})
		return obj
	}
	cases := []struct {
		name   string
		obj    client.Object
		owner  string // how the message names the owner
		second v1.TargetPhase
	}{
		{"step Job", plantedObject("step Job", run, "mariadb"), "it has no controller", v1.TargetSucceeded},
		{"step Job with the operator's labels", plantedObject("step Job with the operator's labels", run, "mariadb"),
			"it has no controller", v1.TargetSucceeded},
		{"connection Secret of another run", otherRun(plantedObject("connection Secret", run, "mariadb")),
			"its controller is BenchmarkRun other", v1.TargetSucceeded},
		{"StatefulSet", plantedObject("StatefulSet", run, "mariadb"), "it has no controller", v1.TargetSucceeded},
		{"reporter ConfigMap", plantedObject("reporter ConfigMap", run, "mariadb"), "it has no controller", v1.TargetFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newFakeWorld(t)
			planted := w.create(tc.obj)
			w.create(run.DeepCopy())
			got := w.drive(run.Name, notPlanted(succeedAll(t)), "the run to finish", finished)
			ts := targetStatus(got, "mariadb")
			want := w.kind(planted) + " " + fakeNS + "/" + planted.GetName() + " already exists and does not belong to this run (" + tc.owner + ")"
			if ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, want) {
				t.Errorf("first target %s %q\nwant Failed with %q", ts.Phase, ts.Message, want)
			}
			if p := targetStatus(got, "mariadb-psoff").Phase; p != tc.second {
				t.Errorf("second target %s, want %s (%s)", p, tc.second, targetStatus(got, "mariadb-psoff").Message)
			}
			if got.Status.Phase != v1.RunFailed {
				t.Errorf("run %s, want Failed", got.Status.Phase)
			}
			untouched(t, w.api, planted)
			if creates, _, _ := w.counters(); creates[w.kind(planted)+"/"+planted.GetName()] != 0 {
				t.Errorf("the planted object's name was created over")
			}
			if twice := w.createdTwice(); len(twice) > 0 {
				t.Errorf("created more than once: %v", twice)
			}
		})
	}
}

// TestFakeStaleCacheIsReadAgain: when the cache returns a copy of the run older than the
// reconciler's own last status write, the reconciler reads the run again through the APIReader
// and acts on that: a failed target's torn-down server is not provisioned again, a recorded step
// is not recorded again (the next step's Job is created instead), a run deleted meanwhile is left
// alone.
func TestFakeStaleCacheIsReadAgain(t *testing.T) {
	t.Run("failed target's server is not provisioned again", func(t *testing.T) {
		w := newFakeWorld(t)
		run := fakeRun("st", 1)
		run.Spec.Cleanup = v1.CleanupAlways
		w.create(run)
		w.drive(run.Name, succeedAll(t), "provisioning", func(r *v1.BenchmarkRun) bool {
			return targetStatus(r, "mariadb").Phase == v1.TargetProvisioning
		})
		w.mustReconcile(run.Name) // the server's objects
		sts := &appsv1.StatefulSet{}
		server := specs.ServerName(run, "mariadb")
		if !w.exists(sts, server) {
			t.Fatal("no StatefulSet after provisioning")
		}
		provisioning := w.run(run.Name)
		// The server crash-loops: the target fails and its server is torn down.
		pod := w.create(serverPodOf(sts)).(*corev1.Pod)
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "mysql", Image: "mariadb:10.11", RestartCount: 3,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "[ERROR] bad option\n"}},
		}}}
		if err := w.api.Status().Update(w.ctx, pod); err != nil {
			t.Fatal(err)
		}
		w.mustReconcile(run.Name)
		if ts := targetStatus(w.run(run.Name), "mariadb"); ts.Phase != v1.TargetFailed {
			t.Fatalf("target %s %q, want Failed", ts.Phase, ts.Message)
		}
		// The server is deleted with the failure or, once the status says the target failed,
		// by the reconcile after it.
		for i := 0; w.exists(&appsv1.StatefulSet{}, server); i++ {
			if i == 2 {
				t.Fatalf("StatefulSet still there after the failure (cleanup Always); events %v", w.allEvents())
			}
			w.mustReconcile(run.Name)
		}
		if p := targetStatus(w.run(run.Name), "mariadb-psoff").Phase; p != v1.TargetPending {
			t.Fatalf("second target %s before the stale reconcile, want Pending", p)
		}

		w.setStale(provisioning)
		before, writes, reads := w.counters()
		w.takeEvents()
		if _, err := w.reconcile(run.Name); err != nil {
			t.Fatal(err)
		}
		after, writes2, reads2 := w.counters()
		if reads2 == reads {
			t.Error("the run was not read again through the APIReader")
		}
		for k, n := range after {
			if n != before[k] && strings.Contains(k, server) {
				t.Errorf("a reconcile from the stale cache created %s for the failed target", k)
			}
		}
		if w.exists(&appsv1.StatefulSet{}, server) {
			t.Error("the failed target's StatefulSet exists again")
		}
		fresh := w.run(run.Name)
		if ts := targetStatus(fresh, "mariadb"); ts.Phase != v1.TargetFailed {
			t.Errorf("first target %s after the stale reconcile, want Failed", ts.Phase)
		}
		// It acted on the fresh copy: the next target moved, in one write that did not conflict.
		if p := targetStatus(fresh, "mariadb-psoff").Phase; p != v1.TargetProvisioning || writes2 != writes+1 {
			t.Errorf("second target %s after %d writes, want Provisioning after one", p, writes2-writes)
		}
		if ev := w.takeEvents(); len(withReason(ev, "TargetFailed")) > 0 || len(withReason(ev, "TargetProvisioning")) != 1 {
			t.Errorf("Events %v, want the second target's TargetProvisioning only", ev)
		}
		w.setStale(nil)
		got := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
		if got.Status.Phase != v1.RunFailed || targetStatus(got, "mariadb-psoff").Phase != v1.TargetSucceeded {
			t.Errorf("run %s, second target %s; want Failed with the second target Succeeded", got.Status.Phase, targetStatus(got, "mariadb-psoff").Phase)
		}
	})

	t.Run("recorded step is not recorded again", func(t *testing.T) {
		w := newFakeWorld(t)
		run := fakeRun("ss", 1, 2)
		run.Spec.Targets = run.Spec.Targets[:1]
		w.create(run)
		w.drive(run.Name, succeedAll(t), "the ladder", func(r *v1.BenchmarkRun) bool {
			return targetStatus(r, "mariadb").Phase == v1.TargetRunning
		})
		w.mustReconcile(run.Name) // the first step's Job
		w.finishJobs(succeedAll(t))
		running := w.run(run.Name)
		w.mustReconcile(run.Name)
		if n := len(targetStatus(w.run(run.Name), "mariadb").Steps); n != 1 {
			t.Fatalf("%d steps recorded, want 1", n)
		}
		_, writes, reads := w.counters()

		w.setStale(running)
		res, err := w.reconcile(run.Name)
		if err != nil {
			t.Fatal(err)
		}
		if res.Requeue { //nolint:staticcheck // a requeue here means it wrote from the stale copy and conflicted
			t.Error("the reconcile acted on the stale copy (its status write conflicted)")
		}
		_, writes2, reads2 := w.counters()
		if reads2 == reads {
			t.Error("the run was not read again through the APIReader")
		}
		if writes2 != writes {
			t.Errorf("%d status writes: the step was recorded again", writes2-writes)
		}
		if n := len(targetStatus(w.run(run.Name), "mariadb").Steps); n != 1 {
			t.Errorf("%d steps recorded after the stale reconcile, want 1", n)
		}
		second := specs.JobName(run, "mariadb", specs.LadderStep(1, 1), specs.Attempt{})
		if !w.exists(&batchv1.Job{}, second) {
			t.Errorf("the second step's Job %s was not created: the reconcile did not act on the fresh copy", second)
		}
		w.setStale(nil)
		got := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
		if steps := targetStatus(got, "mariadb").Steps; got.Status.Phase != v1.RunSucceeded || len(steps) != 2 {
			t.Errorf("run %s with %d steps, want Succeeded with 2", got.Status.Phase, len(steps))
		}
		if twice := w.createdTwice(); len(twice) > 0 {
			t.Errorf("created more than once: %v", twice)
		}
	})

	t.Run("run deleted meanwhile", func(t *testing.T) {
		w := newFakeWorld(t)
		run := fakeRun("sd", 1)
		w.create(run)
		w.drive(run.Name, succeedAll(t), "provisioning", func(r *v1.BenchmarkRun) bool {
			return targetStatus(r, "mariadb").Phase == v1.TargetProvisioning
		})
		w.setStale(w.run(run.Name).DeepCopy())
		// One more write makes the cached copy stale; then the run is deleted.
		w.mustReconcile(run.Name)
		if err := w.api.Delete(w.ctx, w.run(run.Name)); err != nil {
			t.Fatal(err)
		}
		before, writes, _ := w.counters()
		res, err := w.reconcile(run.Name)
		if err != nil || !res.IsZero() {
			t.Fatalf("reconcile of a run deleted behind a stale cache: %+v, %v; want nothing", res, err)
		}
		if after, writes2, _ := w.counters(); len(after) != len(before) || writes2 != writes {
			t.Errorf("a reconcile of a deleted run created %d objects and wrote %d times", len(after)-len(before), writes2-writes)
		}
	})
}

// TestFakeRunReadFails: a read of the run that fails for another reason than NotFound, through
// the cache or (when the cache is stale) through the APIReader, is returned, and nothing is
// written, created or recorded: the reconciler never acts on a run it could not read, nor on the
// stale copy. The next Reconcile goes on. NotFound is no error.
func TestFakeRunReadFails(t *testing.T) {
	unavailable := apierrors.NewServiceUnavailable("the API server is shutting down")
	cases := []struct {
		name    string
		where   string
		stale   bool
		err     error
		wantErr func(error) bool
	}{
		{"cache: InternalError", onCacheGet, false, apierrors.NewInternalError(errors.New("informer failed")), apierrors.IsInternalError},
		{"cache: timeout", onCacheGet, false, apierrors.NewTimeoutError("request did not complete within 60s", 0), apierrors.IsTimeout},
		{"APIReader behind a stale cache: ServiceUnavailable", onReaderGet, true, unavailable, apierrors.IsServiceUnavailable},
		{"APIReader behind a stale cache: connection reset", onReaderGet, true,
			&url.Error{Op: "Get", URL: "https://10.96.0.1:443/apis/mysqlbench.io/v1alpha1/namespaces/bench/benchmarkruns/rd",
				Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}},
			func(err error) bool { return errors.Is(err, syscall.ECONNRESET) }},
		{"cache: NotFound", onCacheGet, false, apierrors.NewNotFound(runsResource, "rd"), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newFakeWorld(t)
			run := fakeRun("rd", 1)
			w.create(run)
			w.drive(run.Name, succeedAll(t), "provisioning", func(r *v1.BenchmarkRun) bool {
				return targetStatus(r, "mariadb").Phase == v1.TargetProvisioning
			})
			if tc.stale {
				// A status write the cache has not seen: the reconciler must read again.
				w.setStale(w.run(run.Name))
				w.mustReconcile(run.Name)
			}
			// The next reconcile would create the server's objects and write a condition.
			before := w.run(run.Name)
			creates, writes, _ := w.counters()
			w.takeEvents()
			f := w.inject(&fault{where: tc.where, times: 1, err: tc.err})

			res, err := w.reconcile(run.Name)
			if tc.wantErr == nil {
				if err != nil || !res.IsZero() {
					t.Errorf("reconcile of a run that is not found: %+v, %v; want nothing", res, err)
				}
			} else if !tc.wantErr(err) {
				t.Errorf("reconcile returned %v, want the read's error", err)
			}
			if f.hits != 1 {
				t.Fatalf("the fault struck %d times, want once", f.hits)
			}
			after, writes2, _ := w.counters()
			if len(after) != len(creates) || writes2 != writes {
				t.Errorf("created %d objects and wrote the status %d times after a failed read", len(after)-len(creates), writes2-writes)
			}
			if ev := w.takeEvents(); len(ev) > 0 {
				t.Errorf("Events after a failed read: %v", ev)
			}
			if now := w.run(run.Name); now.ResourceVersion != before.ResourceVersion {
				t.Errorf("the run changed after a failed read: %+v", now.Status)
			}

			w.setStale(nil)
			w.mustReconcile(run.Name)
			if !w.exists(&appsv1.StatefulSet{}, specs.ServerName(run, "mariadb")) {
				t.Error("the reconcile after the failed read did not provision the server")
			}
			got := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
			if got.Status.Phase != v1.RunSucceeded {
				t.Errorf("phase %s, want Succeeded", got.Status.Phase)
			}
		})
	}
}

// TestFakeIdleReconcileWritesNothing: reconciles while a step's Job runs (the Job's and pods'
// events wake the controller many times per step) write nothing, create nothing, record no Event,
// and only ask to be woken when the scheduling grace of the pending Job ends.
func TestFakeIdleReconcileWritesNothing(t *testing.T) {
	w := newFakeWorld(t)
	run := fakeRun("id", 1)
	w.create(run)
	w.drive(run.Name, succeedAll(t), "the ladder", func(r *v1.BenchmarkRun) bool {
		return targetStatus(r, "mariadb").Phase == v1.TargetRunning
	})
	w.mustReconcile(run.Name) // the step's Job
	step := specs.JobName(run, "mariadb", specs.LadderStep(0, 1), specs.Attempt{})
	if !w.exists(&batchv1.Job{}, step) {
		t.Fatalf("no Job %s", step)
	}
	before := w.run(run.Name)
	creates, writes, _ := w.counters()
	w.takeEvents()
	for i := 0; i < 5; i++ {
		w.clock.Step(10 * time.Second)
		res := w.mustReconcile(run.Name)
		if want := time.Minute - time.Duration(i+1)*10*time.Second; res.RequeueAfter != want {
			t.Errorf("reconcile %d: RequeueAfter %s, want %s (the rest of the scheduling grace)", i, res.RequeueAfter, want)
		}
	}
	after, writes2, _ := w.counters()
	if len(after) != len(creates) || writes2 != writes {
		t.Errorf("idle reconciles created %d objects and wrote the status %d times", len(after)-len(creates), writes2-writes)
	}
	if ev := w.takeEvents(); len(ev) > 0 {
		t.Errorf("idle reconciles recorded Events: %v", ev)
	}
	if now := w.run(run.Name); now.ResourceVersion != before.ResourceVersion {
		t.Errorf("the run changed: %+v", now.Status)
	}
}
