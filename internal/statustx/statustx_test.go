package statustx_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/statustx"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// envConfig is the API server TestMain starts.
var envConfig *rest.Config

func TestMain(m *testing.M) {
	env, cfg, err := testenv.Start(filepath.Join("..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	envConfig = cfg
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop envtest:", err)
	}
	os.Exit(code)
}

// scheduleStatus is where a BenchmarkSchedule keeps what the transaction maintains.
var scheduleStatus = statustx.Fields[*v1.BenchmarkSchedule]{
	Status:             func(s *v1.BenchmarkSchedule) any { return &s.Status },
	ObservedGeneration: func(s *v1.BenchmarkSchedule) *int64 { return &s.Status.ObservedGeneration },
	Conditions:         func(s *v1.BenchmarkSchedule) *[]metav1.Condition { return &s.Status.Conditions },
}

// The status transaction both reconcilers write through, against a real API server: one
// write only when the status changed or the generation moved, observedGeneration and the
// conditions stamped with the generation, derive only before a write, Events only after a write
// that succeeded (those of actions taken even after one that failed), and a conflict turned into
// a requeue.
func TestStatusTx(t *testing.T) {
	if envConfig == nil {
		t.Fatal("no API server: TestMain starts it")
	}
	ctx := context.Background()
	c, err := client.New(envConfig, client.Options{Scheme: testenv.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := "statustx"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	sched := &v1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"},
		Spec: v1.BenchmarkScheduleSpec{Schedule: "0 2 * * *", Template: v1.BenchmarkRunTemplate{Spec: v1.BenchmarkRunSpec{
			Targets:  []v1.Target{{Name: "mariadb", Image: "mariadb:10.11"}},
			Workload: v1.Workload{Script: "oltp_point_select", Tables: 1, TableSize: 1000},
			Ladder:   v1.Ladder{Threads: []int32{1}, StepDuration: &metav1.Duration{Duration: 3 * time.Second}},
		}}},
	}
	if err := c.Create(ctx, sched); err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 5, 1, 2, 0, 0, 0, time.UTC))
	read := func() *v1.BenchmarkSchedule {
		t.Helper()
		got := &v1.BenchmarkSchedule{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(sched), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	events := func(rec *record.FakeRecorder) []string {
		var out []string
		for {
			select {
			case e := <-rec.Events:
				out = append(out, e)
			default:
				return out
			}
		}
	}

	// A change: written once, derive before it, then every Event.
	rec := record.NewFakeRecorder(10)
	tx := statustx.New(scheduleStatus, clk, read())
	tx.SetCondition(v1.ConditionReady, metav1.ConditionTrue, v1.ReasonScheduled, "next run at 02:00")
	tx.Queue(corev1.EventTypeNormal, "Decided", "a decision")
	tx.QueueDone(corev1.EventTypeNormal, "Created", "an action")
	derived := 0
	wrote, err := tx.Commit(ctx, c.Status(), rec, func() { derived++ })
	if err != nil || !wrote || derived != 1 {
		t.Fatalf("first commit: wrote %v, err %v, derive called %d times; want a write, derive once", wrote, err, derived)
	}
	got := read()
	cond := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionReady)
	if got.Status.ObservedGeneration != got.Generation || cond == nil || cond.ObservedGeneration != got.Generation ||
		!cond.LastTransitionTime.Time.Equal(clk.Now()) {
		t.Errorf("observedGeneration %d, Ready %+v; want generation %d and the clock's time", got.Status.ObservedGeneration, cond, got.Generation)
	}
	if ev := events(rec); !slices.Equal(ev, []string{"Normal Decided a decision", "Normal Created an action"}) {
		t.Errorf("Events %q, want the decision and the action", ev)
	}

	// No change: no write (the resourceVersion stays), no derive, the Events still recorded.
	same := read()
	tx = statustx.New(scheduleStatus, clk, same)
	tx.SetCondition(v1.ConditionReady, metav1.ConditionTrue, v1.ReasonScheduled, "next run at 02:00")
	tx.Queue(corev1.EventTypeNormal, "Decided", "again")
	wrote, err = tx.Commit(ctx, c.Status(), rec, func() { derived++ })
	if err != nil || wrote || derived != 1 || read().ResourceVersion != same.ResourceVersion {
		t.Errorf("unchanged commit: wrote %v, err %v, derive called %d times; want no write", wrote, err, derived)
	}
	if ev := events(rec); !slices.Equal(ev, []string{"Normal Decided again"}) {
		t.Errorf("Events %q, want the one queued", ev)
	}

	// The spec moved on and the status did not change: observedGeneration is written.
	spec := read()
	spec.Spec.Schedule = "0 3 * * *"
	if err := c.Update(ctx, spec); err != nil {
		t.Fatal(err)
	}
	tx = statustx.New(scheduleStatus, clk, read())
	if wrote, err = tx.Commit(ctx, c.Status(), rec, nil); err != nil || !wrote {
		t.Errorf("commit after a spec change: wrote %v, err %v; want a write", wrote, err)
	}
	if got := read(); got.Status.ObservedGeneration != got.Generation || got.Generation < 2 {
		t.Errorf("observedGeneration %d, generation %d; want them equal", got.Status.ObservedGeneration, got.Generation)
	}

	// A stale copy: the write conflicts, only the action's Event is recorded, and Reconcile
	// requeues.
	stale := read()
	newer := read()
	newer.Status.Verdict = "written by someone else"
	if err := c.Status().Update(ctx, newer); err != nil {
		t.Fatal(err)
	}
	tx = statustx.New(scheduleStatus, clk, stale)
	tx.SetCondition(v1.ConditionReady, metav1.ConditionFalse, v1.ReasonInvalidTemplate, "a stale decision")
	tx.Queue(corev1.EventTypeWarning, "Decided", "stale")
	tx.QueueDone(corev1.EventTypeNormal, "Deleted", "an action")
	wrote, err = tx.Commit(ctx, c.Status(), rec, nil)
	if wrote || !apierrors.IsConflict(err) {
		t.Fatalf("stale commit: wrote %v, err %v; want a conflict", wrote, err)
	}
	if ev := events(rec); !slices.Equal(ev, []string{"Normal Deleted an action"}) {
		t.Errorf("Events %q, want only the action's", ev)
	}
	if got := read(); got.Status.Verdict != "written by someone else" ||
		meta.IsStatusConditionFalse(got.Status.Conditions, v1.ConditionReady) {
		t.Errorf("the stale copy overwrote the newer status: %+v", got.Status)
	}
	if res, rerr := statustx.Reconciled(ctx, ctrl.Result{RequeueAfter: time.Minute}, nil, err); rerr != nil || !res.Requeue { //nolint:staticcheck // what reconciled returns
		t.Errorf("reconciled after a conflict: %+v, %v; want a requeue", res, rerr)
	}
}

// What Reconcile returns after the commit: a conflict requeues at once, another write error is
// returned, else the reconcile's own result or error.
func TestReconciled(t *testing.T) {
	later := ctrl.Result{RequeueAfter: time.Minute}
	failed := errors.New("a step failed")
	unwritten := errors.New("write status: the API server is gone")
	conflict := apierrors.NewConflict(schema.GroupResource{Group: v1.GroupVersion.Group, Resource: "benchmarkruns"}, "r", errors.New("stale"))
	for _, tc := range []struct {
		name      string
		result    ctrl.Result
		err, werr error
		want      ctrl.Result
		wantErr   error
	}{
		{"written", later, nil, nil, later, nil},
		{"step failed, written", later, failed, nil, ctrl.Result{}, failed},
		{"write failed", later, failed, unwritten, ctrl.Result{}, unwritten},
		{"conflict", later, failed, conflict, ctrl.Result{Requeue: true}, nil}, //nolint:staticcheck // plain retry on conflict
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := statustx.Reconciled(context.Background(), tc.result, tc.err, tc.werr)
			if got != tc.want || !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Errorf("reconciled = %+v, %v; want %+v, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
