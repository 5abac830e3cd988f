package run_test

// Unit tests of the reconcile paths with the fake client and interceptors (issue #16), beside the
// envtest suite: status write conflicts, refused and failing creates, objects of someone else
// under the run's names, stale cache reads and failing reads of the run. Each test drives one
// run Reconcile by Reconcile (fakeworld_test.go) and plays the kubelet itself.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

var (
	runsResource = schema.GroupResource{Group: v1.GroupVersion.Group, Resource: "benchmarkruns"}
	jobsResource = schema.GroupResource{Group: "batch", Resource: "jobs"}
)

// TestFakeRunToSuccess is the fake world's baseline: a two-target run reaches Succeeded, every
// object is created once, every phase's Event is recorded once per target (no Warning), the
// servers are torn down and results.json carries each step's per-second series. The fault tests
// below start from this path.
func TestFakeRunToSuccess(t *testing.T) {
	w := newFakeWorld(t)
	run := w.create(fakeRun("fk", 1, 2)).(*v1.BenchmarkRun)
	got := w.drive(run.Name, succeedAll(t), "the run to finish", finished)

	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("phase %s, want Succeeded; status %+v", got.Status.Phase, got.Status)
	}
	for _, tg := range run.Spec.Targets {
		ts := targetStatus(got, tg.Name)
		if ts.Phase != v1.TargetSucceeded || len(ts.Steps) != 2 || ts.ServerVersion != "10.11.14-MariaDB-0+deb12u2" {
			t.Errorf("target %s: %s, %d steps, server %q", tg.Name, ts.Phase, len(ts.Steps), ts.ServerVersion)
		}
		if w.exists(&appsv1.StatefulSet{}, specs.ServerName(run, tg.Name)) {
			t.Errorf("target %s: StatefulSet still there after the run", tg.Name)
		}
	}
	if twice := w.createdTwice(); len(twice) > 0 {
		t.Errorf("created more than once: %v", twice)
	}
	creates, _, _ := w.counters()
	for _, want := range []string{"ConfigMap/fk-sysbench-reporter", "ConfigMap/fk-results", "StatefulSet/fk-mariadb",
		"Secret/fk-mariadb-credentials", "NetworkPolicy/fk-mariadb", "Job/fk-mariadb-probe-a0", "Job/fk-mariadb-prepare-a0",
		"Job/fk-mariadb-s01-a0", "Job/fk-mariadb-psoff-s02-a0"} {
		if creates[want] != 1 {
			t.Errorf("%s created %d times, want once; creates %v", want, creates[want], creates)
		}
	}
	events := w.allEvents()
	for reason, want := range map[string]int{"Started": 1, "TargetProvisioning": 2, "TargetPreparing": 2, "TargetRunning": 2,
		"TargetCleaningUp": 2, "TargetSucceeded": 2, "Succeeded": 1} {
		if got := withReason(events, reason); len(got) != want {
			t.Errorf("%d %s Events, want %d: %v", len(got), reason, want, got)
		}
	}
	if len(events) == 0 || !strings.HasPrefix(events[0], "Normal Started ") || !strings.HasPrefix(events[len(events)-1], "Normal Succeeded ") {
		t.Errorf("Events %v, want Started first and Succeeded last", events)
	}
	for _, e := range events {
		if strings.HasPrefix(e, "Warning ") {
			t.Errorf("Warning Event in a run without faults: %s", e)
		}
	}
	if n := seriesInResults(t, w, run); n != 4 {
		t.Errorf("results.json carries %d per-second series, want 4 (one per step)", n)
	}
}

// A step log without the reporter's server snapshots (a sysbench image whose sysbench never
// calls init/done, say) loses the server counters, not the step: one Warning per target's batch
// names the steps, and serverStats.enabled false asks for none.
func TestFakeRunWithoutServerSnapshots(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		w := newFakeWorld(t)
		w.logs.log = captured(t, "run_point_select_t4.txt")
		r := fakeRun(fmt.Sprintf("ns%v", enabled), 1, 2)
		r.Spec.ServerStats = &v1.ServerStats{Enabled: &enabled}
		run := w.create(r).(*v1.BenchmarkRun)
		got := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
		if got.Status.Phase != v1.RunSucceeded {
			t.Fatalf("phase %s, want Succeeded", got.Status.Phase)
		}
		warnings := withReason(w.allEvents(), "ServerStatsUnavailable")
		want := 0
		if enabled {
			want = len(run.Spec.Targets)
		}
		if len(warnings) != want {
			t.Errorf("serverStats.enabled %v: %d ServerStatsUnavailable Events, want %d: %v", enabled, len(warnings), want, warnings)
		}
		for _, e := range warnings {
			if !strings.Contains(e, "2 step(s) (threads 1, 2)") || !strings.Contains(e, "0 start and 0 end server snapshots") {
				t.Errorf("Event %q does not name the steps and the reason", e)
			}
		}
		if n := seriesInResults(t, w, run); n != 4 {
			t.Errorf("results.json carries %d per-second series, want 4", n)
		}
	}
}

// seriesInResults counts the steps of results.json that carry their per-second series.
func seriesInResults(t *testing.T, w *fakeWorld, run *v1.BenchmarkRun) int {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if !w.exists(cm, specs.ResultsConfigMapName(run)) {
		t.Fatalf("no results ConfigMap")
	}
	var doc struct {
		Targets []struct {
			Steps []struct {
				Series json.RawMessage `json:"series"`
			} `json:"steps"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(cm.Data["results.json"]), &doc); err != nil {
		t.Fatalf("results.json: %v; data keys %v", err, keys(cm.Data))
	}
	n := 0
	for _, tr := range doc.Targets {
		for _, s := range tr.Steps {
			if len(s.Series) > 0 {
				n++
			}
		}
	}
	return n
}

// TestFakeStatusWriteConflict: when the status write that carries a transition fails, nothing of
// the transition counts. A conflict (injected, or real: someone wrote the run between the
// reconciler's read and its write, and the merge patch carries the resourceVersion it read)
// makes Reconcile ask for a plain requeue without an error; another error is returned. Either
// way no Event is recorded, the status on the server is unchanged, and the next Reconcile makes
// the transition, once: its Event is recorded once, nothing is created twice, no step or failed
// attempt is counted twice, and the run ends as it would have, with every recorded step's
// per-second series in results.json (the results are rendered once even when the final status
// write is repeated).
//
// The fault strikes the first status write whose content makes the transition, whichever
// reconcile that is, so the test does not depend on how many reconciles lead up to it.
func TestFakeStatusWriteConflict(t *testing.T) {
	transitions := []struct {
		name    string
		threads []int32
		single  bool // one target only
		// failing names the first target's ladder Job attempts that fail (exit 1, error 1146);
		// retries is spec.stepRetryLimit when set.
		failing string
		retries *int32
		// made says whether a run's status has made the transition.
		made func(r *v1.BenchmarkRun) bool
		// reason of the transition's Event ("" when it records none), and how many of them the
		// whole run records.
		reason string
		events int
		// phase the run ends in; steps the first target records (the second records all), and
		// the attempts its steps took in all (0: one each).
		phase    v1.RunPhase
		steps    int
		attempts int32
	}{
		{name: "start", threads: []int32{1},
			made:   func(r *v1.BenchmarkRun) bool { return r.Status.Phase != "" },
			reason: "Started", events: 1, phase: v1.RunSucceeded, steps: 1},
		{name: "target starts provisioning (after creating the run's ConfigMaps)", threads: []int32{1},
			made:   func(r *v1.BenchmarkRun) bool { return targetStatus(r, "mariadb").Phase == v1.TargetProvisioning },
			reason: "TargetProvisioning", events: 2, phase: v1.RunSucceeded, steps: 1},
		{name: "probe read, data prepared next", threads: []int32{1},
			made:   func(r *v1.BenchmarkRun) bool { return targetStatus(r, "mariadb").Phase == v1.TargetPreparing },
			reason: "TargetPreparing", events: 2, phase: v1.RunSucceeded, steps: 1},
		{name: "step recorded", threads: []int32{1, 2},
			made:  func(r *v1.BenchmarkRun) bool { return len(targetStatus(r, "mariadb").Steps) == 1 },
			phase: v1.RunSucceeded, steps: 2},
		{name: "failed attempt counted", threads: []int32{1, 2}, failing: "cf-mariadb-s02-a0",
			made:   func(r *v1.BenchmarkRun) bool { return targetStatus(r, "mariadb").FailedAttempts == 1 },
			reason: "StepFailed", events: 1, phase: v1.RunSucceeded, steps: 2, attempts: 3},
		{name: "target failed", threads: []int32{1, 2}, failing: "cf-mariadb-s02-", retries: ptr.To[int32](0),
			made:   func(r *v1.BenchmarkRun) bool { return targetStatus(r, "mariadb").Phase == v1.TargetFailed },
			reason: "TargetFailed", events: 1, phase: v1.RunFailed, steps: 1},
		{name: "target succeeded", threads: []int32{1},
			made:   func(r *v1.BenchmarkRun) bool { return targetStatus(r, "mariadb").Phase == v1.TargetSucceeded },
			reason: "TargetSucceeded", events: 2, phase: v1.RunSucceeded, steps: 1},
		{name: "run succeeded (after writing the results)", threads: []int32{1, 2}, single: true,
			made:   func(r *v1.BenchmarkRun) bool { return r.Status.Phase == v1.RunSucceeded },
			reason: "Succeeded", events: 1, phase: v1.RunSucceeded, steps: 2},
	}
	faults := []struct {
		name     string
		fault    func(w *fakeWorld, name string) *fault
		conflict bool
	}{
		{name: "injected conflict", conflict: true, fault: func(w *fakeWorld, name string) *fault {
			return &fault{err: apierrors.NewConflict(runsResource, name,
				errors.New("the object has been modified; please apply your changes to the latest version and try again"))}
		}},
		{name: "concurrent writer", conflict: true, fault: func(w *fakeWorld, name string) *fault {
			return &fault{before: func() {
				run := w.run(name)
				metav1.SetMetaDataAnnotation(&run.ObjectMeta, "example.com/touched", w.clock.Now().String())
				if err := w.api.Update(w.ctx, run); err != nil {
					w.t.Errorf("concurrent write: %v", err)
				}
			}}
		}},
		{name: "internal error", fault: func(w *fakeWorld, name string) *fault {
			return &fault{err: apierrors.NewInternalError(errors.New("etcdserver: request timed out"))}
		}},
	}
	for _, tr := range transitions {
		for _, fc := range faults {
			t.Run(tr.name+"/"+fc.name, func(t *testing.T) {
				t.Parallel()
				w := newFakeWorld(t)
				run := fakeRun("cf", tr.threads...)
				if tr.single {
					run.Spec.Targets = run.Spec.Targets[:1]
				}
				run.Spec.StepRetryLimit = tr.retries
				w.create(run)
				decide := succeedAll(t)
				if tr.failing != "" {
					ok, notPrepared := decide, captured(t, "run_not_prepared_1146.txt")
					decide = func(job *batchv1.Job) outcome {
						if strings.HasPrefix(job.Name, tr.failing) {
							return outcome{exitCode: 1, message: notPrepared, failed: true}
						}
						return ok(job)
					}
				}
				f := fc.fault(w, run.Name)
				f.where, f.times = onStatusPatch, 1
				f.match = func(o client.Object) bool { return tr.made(o.(*v1.BenchmarkRun)) }
				w.inject(f)

				// Reconcile, playing the kubelet, until the fault struck.
				var before *v1.BenchmarkRun
				var res ctrl.Result
				var err error
				for i := 0; f.hits == 0; i++ {
					if i == 200 {
						t.Fatalf("no status write made the transition in 200 reconciles; status %+v", w.run(run.Name).Status)
					}
					if i > 0 {
						if err != nil {
							t.Fatalf("reconcile %d: %v", i, err)
						}
						w.startServers()
						w.finishJobs(decide)
						w.clock.Step(time.Second)
					}
					before = w.run(run.Name)
					w.takeEvents()
					res, err = w.reconcile(run.Name)
				}
				switch {
				case fc.conflict && err != nil:
					t.Fatalf("reconcile returned %v on a status write conflict, want a plain requeue", err)
				case fc.conflict && !res.Requeue: //nolint:staticcheck // the reconciler asks for a plain requeue
					t.Errorf("result %+v on a status write conflict, want Requeue", res)
				case !fc.conflict && !apierrors.IsInternalError(err):
					t.Fatalf("reconcile returned %v, want the status write's InternalError", err)
				}
				if ev := w.takeEvents(); len(ev) > 0 {
					t.Errorf("Events recorded although the status write failed: %v", ev)
				}
				after := w.run(run.Name)
				if !equality.Semantic.DeepEqual(before.Status, after.Status) {
					t.Errorf("status changed although its write failed:\nbefore %+v\nafter  %+v", before.Status, after.Status)
				}
				if tr.made(after) {
					t.Fatal("the transition is in the status although its write failed")
				}

				w.mustReconcile(run.Name)
				if !tr.made(w.run(run.Name)) {
					t.Fatalf("the reconcile after the failed write did not make the transition; status %+v", w.run(run.Name).Status)
				}
				if ev := withReason(w.takeEvents(), tr.reason); tr.reason != "" && len(ev) != 1 {
					t.Errorf("%s Events of the repeated transition: %v, want one", tr.reason, ev)
				}

				got := w.drive(run.Name, decide, "the run to finish", finished)
				if got.Status.Phase != tr.phase {
					t.Fatalf("phase %s, want %s; status %+v", got.Status.Phase, tr.phase, got.Status)
				}
				steps := 0
				for i, ts := range got.Status.Targets {
					want := len(tr.threads)
					if i == 0 {
						want = tr.steps
					}
					if len(ts.Steps) != want {
						t.Errorf("target %s: %d steps recorded, want %d", ts.Name, len(ts.Steps), want)
					}
					steps += len(ts.Steps)
					attempts, wantAttempts := int32(0), int32(len(ts.Steps))
					for _, st := range ts.Steps {
						attempts += st.Attempts
					}
					if i == 0 && tr.attempts > 0 {
						wantAttempts = tr.attempts
					}
					if attempts != wantAttempts {
						t.Errorf("target %s: its steps took %d attempts, want %d", ts.Name, attempts, wantAttempts)
					}
				}
				if ev := withReason(w.allEvents(), tr.reason); tr.reason != "" && len(ev) != tr.events {
					t.Errorf("%s Events over the run: %d, want %d: %v", tr.reason, len(ev), tr.events, ev)
				}
				if twice := w.createdTwice(); len(twice) > 0 {
					t.Errorf("created more than once: %v", twice)
				}
				if n := seriesInResults(t, w, got); n != steps {
					t.Errorf("results.json carries %d per-second series, want %d (one per step)", n, steps)
				}
			})
		}
	}
}
