package schedule_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/controllers/schedule"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// nightly is a schedule at cron whose regressions alarm at once (no confirmation), with a template
// of two MariaDB targets.
func nightly(ns, name, cron string) *v1.BenchmarkSchedule {
	run := baseRun(ns, "unused", 1, 2)
	return &v1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.BenchmarkScheduleSpec{
			Schedule:   cron,
			Regression: v1.RegressionPolicy{Confirm: v1.ConfirmPolicy{Enabled: ptr.To(false)}, RunToRunCVPercent: ptr.To(0.0)},
			Template: v1.BenchmarkRunTemplate{
				Metadata: v1.RunTemplateMetadata{Labels: map[string]string{"team": "db"}, Annotations: map[string]string{"build": "nightly"}},
				Spec:     run.Spec,
			},
		},
	}
}

// baseRun is a run of two MariaDB targets at threads.
func baseRun(ns, name string, threads ...int32) *v1.BenchmarkRun {
	return &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.BenchmarkRunSpec{
			Targets: []v1.Target{
				{Name: "mariadb", Image: "mariadb:10.11"},
				{Name: "mariadb-psoff", Image: "mariadb:10.11", MyCnf: "performance_schema = OFF"},
			},
			Workload: v1.Workload{Script: "oltp_point_select", Tables: 4, TableSize: 1000},
			Ladder:   v1.Ladder{Threads: threads, StepDuration: &metav1.Duration{Duration: 3 * time.Second}},
		},
	}
}

// TestScheduleEventsFollowTheStatusWrite: the Events of a reconcile's decisions are recorded only
// once its status write succeeded. A write lost to a conflict drops them; the retry decides again
// and records them once; a stalled schedule's Event is not repeated by later reconciles. (Events
// of actions already taken are not dropped: TestScheduleActionEventsSurviveAConflictingStatusWrite.)
func TestScheduleEventsFollowTheStatusWrite(t *testing.T) {
	created := time.Date(2026, 11, 23, 10, 20, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		mutate func(*v1.BenchmarkSchedule)
		now    time.Time // the clock
		want   string    // the one Event, as the fake recorder writes it
	}{
		{"stalled", func(s *v1.BenchmarkSchedule) { s.Spec.Schedule = "61 * * * *" }, created.Add(time.Minute),
			"Warning " + v1.ReasonInvalidSchedule + ` spec.schedule "61 * * * *"`},
		{"missed", func(s *v1.BenchmarkSchedule) { s.Spec.StartingDeadlineSeconds = ptr.To[int64](60) }, created.Add(65 * time.Minute),
			"Warning " + v1.ReasonMissedSchedule + " the run due at 2026-11-23T11:00:00Z did not start within startingDeadlineSeconds (60 s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sched := nightly("ns", "events", "0 * * * *")
			sched.CreationTimestamp = metav1.NewTime(created)
			tc.mutate(sched)
			conflicts := 1
			c := fake.NewClientBuilder().WithScheme(testenv.Scheme).WithObjects(sched).WithStatusSubresource(sched).
				WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string,
					obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
					if conflicts > 0 {
						conflicts--
						return apierrors.NewConflict(schema.GroupResource{Group: v1.GroupVersion.Group, Resource: "benchmarkschedules"},
							obj.GetName(), fmt.Errorf("the object has been modified"))
					}
					return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
				}}).Build()
			rec := record.NewFakeRecorder(10)
			r := scheduleReconciler(t, c, rec, clocktesting.NewFakePassiveClock(tc.now))
			req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(sched)}
			events := func() []string {
				var got []string
				for len(rec.Events) > 0 {
					got = append(got, <-rec.Events)
				}
				return got
			}

			if res, err := r.Reconcile(context.Background(), req); err != nil || !res.Requeue { //nolint:staticcheck // the conflict's retry
				t.Fatalf("reconcile with a conflicting write: %+v, %v; want a requeue", res, err)
			}
			if got := events(); len(got) != 0 {
				t.Fatalf("Events of a reconcile whose status write failed: %q", got)
			}
			if _, err := r.Reconcile(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			if got := events(); len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
				t.Fatalf("Events after the write: %q, want one starting %q", got, tc.want)
			}
			if _, err := r.Reconcile(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			if got := events(); len(got) != 0 {
				t.Errorf("Events of a reconcile that changed nothing: %q", got)
			}
		})
	}
}

// scheduleReconciler builds the schedule reconciler around a client of the test's own.
func scheduleReconciler(t *testing.T, c client.Client, rec record.EventRecorder, clk *clocktesting.FakePassiveClock) *schedule.Reconciler {
	t.Helper()
	r, err := schedule.New(schedule.Dependencies{
		Client: c, Scheme: testenv.Scheme, Recorder: rec, Clock: clk,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestNewBenchmarkScheduleReconcilerRefusesMissingDependencies: every dependency is required (a
// nil clock used to be replaced by the real one in SetupWithManager), and the error names each
// missing one.
func TestNewBenchmarkScheduleReconcilerRefusesMissingDependencies(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme).Build()
	full := schedule.Dependencies{Client: c, Scheme: testenv.Scheme, Recorder: record.NewFakeRecorder(1),
		Clock: clocktesting.NewFakePassiveClock(time.Now())}
	cases := []struct {
		name   string
		mutate func(*schedule.Dependencies)
		want   string // the error; "" for success
	}{
		{"all there", func(*schedule.Dependencies) {}, ""},
		{"no clock", func(d *schedule.Dependencies) { d.Clock = nil },
			"BenchmarkSchedule reconciler: missing dependencies: Clock"},
		{"no recorder and no scheme", func(d *schedule.Dependencies) { d.Recorder, d.Scheme = nil, nil },
			"BenchmarkSchedule reconciler: missing dependencies: Recorder, Scheme"},
		{"nothing", func(d *schedule.Dependencies) { *d = schedule.Dependencies{} },
			"BenchmarkSchedule reconciler: missing dependencies: Client, Clock, Recorder, Scheme"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := full
			tc.mutate(&d)
			r, err := schedule.New(d)
			switch {
			case tc.want == "" && (err != nil || r == nil):
				t.Fatalf("got %v, want a reconciler", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want || r != nil):
				t.Fatalf("got %v, %v; want the error %q", r, err, tc.want)
			}
		})
	}
}

// TestScheduleActionEventsSurviveAConflictingStatusWrite: an Event that reports a write already
// made on the API server (a run created, pruned or replaced) is recorded even when the status
// write after it conflicts, and exactly once: the retry finds the run created or gone and has
// nothing more to report. Dropping it with the status write lost it for good (a cold test run
// under load missed "Created").
func TestScheduleActionEventsSurviveAConflictingStatusWrite(t *testing.T) {
	created := time.Date(2026, 11, 23, 10, 20, 0, 0, time.UTC)
	// child is a run of the schedule, scheduled at hour h after 10:00, in phase.
	child := func(sched *v1.BenchmarkSchedule, h int, phase v1.RunPhase) *v1.BenchmarkRun {
		at := time.Date(2026, 11, 23, 10+h, 0, 0, 0, time.UTC)
		run := baseRun(sched.Namespace, v1.RunName(sched.Name, at), 1)
		run.Labels = map[string]string{v1.LabelSchedule: sched.Name}
		run.Annotations = map[string]string{v1.AnnotationScheduledTime: at.Format(time.RFC3339)}
		run.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(sched, v1.GroupVersion.WithKind("BenchmarkSchedule"))}
		run.Status.Phase = phase
		if phase.Finished() {
			run.Status.CompletionTime = ptr.To(metav1.NewTime(at.Add(30 * time.Minute)))
		}
		return run
	}
	for _, tc := range []struct {
		name     string
		mutate   func(*v1.BenchmarkSchedule)
		children func(*v1.BenchmarkSchedule) []*v1.BenchmarkRun
		now      time.Time
		want     []string // the Events' starts, in order
		runs     []string // the runs left, by name
	}{
		{name: "created", now: created.Add(41 * time.Minute),
			want: []string{"Normal Created created BenchmarkRun events-202611231100"},
			runs: []string{"events-202611231100"}},
		{name: "pruned", now: created.Add(5 * time.Minute),
			mutate: func(s *v1.BenchmarkSchedule) { s.Spec.SuccessfulRunsHistoryLimit = ptr.To[int32](1) },
			children: func(s *v1.BenchmarkSchedule) []*v1.BenchmarkRun {
				return []*v1.BenchmarkRun{child(s, -2, v1.RunSucceeded), child(s, -1, v1.RunSucceeded)}
			},
			want: []string{"Normal Pruned deleted Succeeded run events-202611230800: beyond the history limit"},
			runs: []string{"events-202611230900"}},
		{name: "replaced", now: created.Add(41 * time.Minute),
			mutate: func(s *v1.BenchmarkSchedule) { s.Spec.ConcurrencyPolicy = v1.ConcurrencyReplace },
			children: func(s *v1.BenchmarkSchedule) []*v1.BenchmarkRun {
				return []*v1.BenchmarkRun{child(s, 0, v1.RunRunning)}
			},
			want: []string{"Normal Replaced deleted active run events-202611231000",
				"Normal Created created BenchmarkRun events-202611231100"},
			runs: []string{"events-202611231100"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sched := nightly("ns", "events", "0 * * * *")
			sched.UID = "sched-uid"
			sched.CreationTimestamp = metav1.NewTime(created)
			if tc.mutate != nil {
				tc.mutate(sched)
			}
			objs := []client.Object{sched}
			if tc.children != nil {
				for _, r := range tc.children(sched) {
					objs = append(objs, r)
				}
			}
			conflicts := 1
			c := fake.NewClientBuilder().WithScheme(testenv.Scheme).WithObjects(objs...).WithStatusSubresource(sched).
				WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string,
					obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
					if _, ok := obj.(*v1.BenchmarkSchedule); ok && conflicts > 0 {
						conflicts--
						return apierrors.NewConflict(schema.GroupResource{Group: v1.GroupVersion.Group, Resource: "benchmarkschedules"},
							obj.GetName(), fmt.Errorf("the object has been modified"))
					}
					return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
				}}).Build()
			rec := record.NewFakeRecorder(10)
			r := scheduleReconciler(t, c, rec, clocktesting.NewFakePassiveClock(tc.now))
			req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(sched)}
			var got []string
			for i := 0; i < 3; i++ {
				res, err := r.Reconcile(context.Background(), req)
				if err != nil {
					t.Fatalf("reconcile %d: %v", i+1, err)
				}
				if i == 0 && !res.Requeue { //nolint:staticcheck // the conflict's retry
					t.Fatalf("reconcile with a conflicting write: %+v, want a requeue", res)
				}
				for len(rec.Events) > 0 {
					got = append(got, <-rec.Events)
				}
			}
			if conflicts != 0 {
				t.Fatal("the status write never conflicted")
			}
			if len(got) != len(tc.want) {
				t.Fatalf("Events %q, want one each of %q", got, tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("Event %d: %q, want it to start with %q", i+1, got[i], w)
				}
			}
			runs := &v1.BenchmarkRunList{}
			if err := c.List(context.Background(), runs); err != nil {
				t.Fatal(err)
			}
			if names := runNames(runs.Items); strings.Join(names, " ") != strings.Join(tc.runs, " ") {
				t.Errorf("runs %v, want %v", names, tc.runs)
			}
		})
	}
}

// Confirmation turned off after the run controller deferred a run's alarm: the schedule records
// the regression as unconfirmed (Skipped) and alarms, so the run's condition does not wait for
// ever. (Through the schedule reconciler on a fake client: the window between the two
// controllers cannot be hit reliably on envtest.)
func TestConfirmationTurnedOffAlarmsADeferredRegression(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 20, 0, 0, time.UTC)
	sched := nightly("ns", "off", "0 * * * *")
	sched.UID = "sched-uid"
	sched.CreationTimestamp = metav1.NewTime(now.Add(-3 * time.Hour))
	child := func(h int, comparison *v1.Comparison) *v1.BenchmarkRun {
		at := time.Date(2026, 11, 23, 10+h, 0, 0, 0, time.UTC)
		run := baseRun("ns", v1.RunName("off", at), 1)
		run.Labels = map[string]string{v1.LabelSchedule: "off"}
		run.Annotations = map[string]string{v1.AnnotationScheduledTime: at.Format(time.RFC3339)}
		run.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(sched, v1.GroupVersion.WithKind("BenchmarkSchedule"))}
		run.Status.Phase = v1.RunSucceeded
		run.Status.CompletionTime = ptr.To(metav1.NewTime(at.Add(10 * time.Minute)))
		run.Status.Comparison = comparison
		if comparison != nil {
			run.Status.Conditions = []metav1.Condition{{Type: v1.ConditionRegressed, Status: metav1.ConditionUnknown,
				Reason: v1.ReasonAwaitingConfirmation, Message: "deferred", LastTransitionTime: metav1.NewTime(at)}}
		}
		return run
	}
	old := child(-2, nil)
	regressed := child(-1, &v1.Comparison{Run: v1.RunName("off", time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)),
		Baseline: old.Name, Verdict: v1.VerdictRegressed, ComparedCells: 2, RegressedCells: 1, Message: "1 of 2 cells regressed"})
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme).WithObjects(sched, old, regressed).WithStatusSubresource(sched).Build()
	rec := record.NewFakeRecorder(10)
	r := scheduleReconciler(t, c, rec, clocktesting.NewFakePassiveClock(now))
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(sched)}); err != nil {
		t.Fatal(err)
	}
	got := &v1.BenchmarkSchedule{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(sched), got); err != nil {
		t.Fatal(err)
	}
	if conf := got.Status.Confirmation; conf == nil || conf.Run != regressed.Name || conf.State != v1.ConfirmationSkipped ||
		!strings.Contains(conf.Message, "spec.regression.confirm.enabled is false") {
		t.Fatalf("confirmation %+v", conf)
	}
	if cond := condition(got.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionTrue || cond.Reason != v1.ReasonRegressionUnconfirmed {
		t.Errorf("schedule Regressed %+v", cond)
	}
	var events []string
	for len(rec.Events) > 0 {
		if e := <-rec.Events; strings.HasPrefix(e, "Warning") {
			events = append(events, e)
		}
	}
	if len(events) != 1 || !strings.HasPrefix(events[0], "Warning RegressionUnconfirmed "+regressed.Name) {
		t.Errorf("Warning Events %q, want one RegressionUnconfirmed", events)
	}
	list := &v1.BenchmarkRunList{}
	if err := c.List(context.Background(), list, client.MatchingLabels{v1.LabelConfirmationOf: "off"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d confirmation runs created with confirmation off", len(list.Items))
	}
}

func condition(conds []metav1.Condition, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return *c
	}
	return metav1.Condition{}
}

func runNames(runs []v1.BenchmarkRun) []string {
	var names []string
	for _, r := range runs {
		names = append(names, r.Name)
	}
	return names
}
