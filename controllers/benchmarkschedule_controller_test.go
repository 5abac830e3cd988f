package controllers_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
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
	"github.com/mysqlbench/mysqlbench-operator/controllers"
	"github.com/mysqlbench/mysqlbench-operator/internal/sink"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// The schedule tests run the BenchmarkSchedule controller with a fake clock: the test moves time
// and pokes the schedule (an annotation change brings a reconcile, as the real clock's requeue
// would). The BenchmarkRun controller runs too, without a kubelet: the test writes a run's
// measurements into its status (finish) and the run controller ends it from there, comparing it
// with its baseline as it does for every scheduled run.

// scheduler is the schedule controller under a fake clock in namespace ns.
type scheduler struct {
	t     *testing.T
	ns    string
	clock *clocktesting.FakeClock
	op    *operator
	pokes int
}

func startScheduler(t *testing.T, ns string, start time.Time) *scheduler {
	s := &scheduler{t: t, ns: ns, clock: clocktesting.NewFakeClock(start)}
	s.op = startOperator(t, ns, operatorOptions{schedules: true, scheduleClock: s.clock})
	return s
}

// restart stops the manager and starts a new one on the same clock.
func (s *scheduler) restart() {
	s.op.stop()
	s.op = startOperator(s.t, s.ns, operatorOptions{schedules: true, scheduleClock: s.clock})
}

// at sets the fake clock and pokes the schedule so it reconciles at that time.
func (s *scheduler) at(name string, now time.Time) {
	s.t.Helper()
	s.clock.SetTime(now)
	s.pokes++
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"test.mysqlbench.io/poke":"%d"}}}`, s.pokes)
	sched := &v1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name}}
	if err := k8s.Patch(context.Background(), sched, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		s.t.Fatal(err)
	}
	// The reconcile of this poke has run once the status says so: every reconcile writes
	// observedGeneration and conditions, but the poke changes neither, so wait on the runs and
	// status the caller checks next (waitSchedule/waitRuns) instead.
}

// nightly is a schedule whose regressions alarm at once: confirmation (on by default) has its own
// tests (schedule_confirm_test.go), which turn it back on.
func nightly(ns, name, cron string) *v1.BenchmarkSchedule {
	run := baseRun(ns, "unused", 1, 2)
	return &v1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.BenchmarkScheduleSpec{
			Schedule: cron,
			// The fake runs differ by their repetitions' jitter only: no between-run allowance,
			// so the thresholds decide (compare's tests cover the allowance).
			Regression: v1.RegressionPolicy{Confirm: v1.ConfirmPolicy{Enabled: ptr.To(false)}, RunToRunCVPercent: ptr.To(0.0)},
			Template: v1.BenchmarkRunTemplate{
				Metadata: v1.RunTemplateMetadata{Labels: map[string]string{"team": "db"}, Annotations: map[string]string{"build": "nightly"}},
				Spec:     run.Spec,
			},
		},
	}
}

func createSchedule(t *testing.T, s *v1.BenchmarkSchedule) *v1.BenchmarkSchedule {
	t.Helper()
	if err := k8s.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// waitSchedule polls the schedule until cond holds.
func waitSchedule(t *testing.T, ns, name, what string, cond func(*v1.BenchmarkSchedule) bool) *v1.BenchmarkSchedule {
	t.Helper()
	return waitScheduleFor(t, ns, name, 20*time.Second, what, cond)
}

// runsOf lists the schedule's runs by name.
func runsOf(t *testing.T, ns, schedule string) []v1.BenchmarkRun {
	t.Helper()
	list := &v1.BenchmarkRunList{}
	if err := k8s.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels{v1.LabelSchedule: schedule}); err != nil {
		t.Fatal(err)
	}
	var out []v1.BenchmarkRun
	for _, r := range list.Items {
		if r.DeletionTimestamp.IsZero() {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func runNames(runs []v1.BenchmarkRun) []string {
	var names []string
	for _, r := range runs {
		names = append(names, r.Name)
	}
	return names
}

// waitRuns waits until the schedule's runs are exactly want (by name), and stay so for a moment
// (so a duplicate created late would be seen).
func waitRuns(t *testing.T, ns, schedule string, want ...string) []v1.BenchmarkRun {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		runs := runsOf(t, ns, schedule)
		if strings.Join(runNames(runs), ",") == strings.Join(want, ",") {
			time.Sleep(300 * time.Millisecond)
			if again := runsOf(t, ns, schedule); strings.Join(runNames(again), ",") == strings.Join(want, ",") {
				return again
			}
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs of %s: %v, want %v", schedule, runNames(runs), want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// finish brings a run to its end: it writes the status the BenchmarkRun controller has when every
// target has ended (one step result per (target, threads, repetition) from qps/p95, the targets
// Succeeded, or Failed for a failed run, and released), and the run controller concludes it from
// there as it would any run: compares a successful run with its baseline, writes the results
// ConfigMap and the final phase. finish waits for that phase.
func finish(t *testing.T, ns, name string, phase v1.RunPhase, cells map[string][2]float64) {
	t.Helper()
	// Five repetitions spread by ±0.4 % around the given values (their median): enough for the
	// U test to decide at alpha 0.05.
	finishRounds(t, ns, name, phase, cells, map[string][]float64{"": {1, 1.002, 0.998, 1.004, 0.996}})
}

// finishRounds is finish with one repetition per factor: repetition k of a cell of target measures
// its QPS times factors[target][k] (factors[""] for targets not named), and its p95 divided by it.
func finishRounds(t *testing.T, ns, name string, phase v1.RunPhase, cells map[string][2]float64, factors map[string][]float64) {
	t.Helper()
	ctx := context.Background()
	byTarget := map[string][]v1.StepResult{}
	var targets []string
	for key, v := range cells {
		var target string
		var threads int32
		if _, err := fmt.Sscanf(strings.Replace(key, "@", " ", 1), "%s %d", &target, &threads); err != nil {
			t.Fatalf("cell %q: want target@threads", key)
		}
		if _, ok := byTarget[target]; !ok {
			targets = append(targets, target)
		}
		fs, ok := factors[target]
		if !ok {
			fs = factors[""]
		}
		for k, f := range fs {
			qps, p95 := v[0]*f, v[1]/f
			byTarget[target] = append(byTarget[target], v1.StepResult{
				Threads: threads, Repetition: int32(k + 1), TPS: qps, QPS: v1.QPS{Total: qps, Read: qps},
				Latency: v1.Latency{MinMs: 0.01, AvgMs: p95 / 2, P95Ms: p95, MaxMs: p95 * 3}, DurationSeconds: 10,
			})
		}
	}
	sort.Strings(targets)
	// The run controller writes the same status while it starts the run: retry on conflicts.
	for attempt := 0; ; attempt++ {
		run := &v1.BenchmarkRun{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, run); err != nil {
			t.Fatal(err)
		}
		now := metav1.NewTime(time.Now().Truncate(time.Second))
		run.Status.Phase = v1.RunRunning
		run.Status.StartTime = &now
		run.Status.CompletionTime = nil
		run.Status.ResultsConfigMap = name + "-results"
		run.Status.Targets = nil
		for _, target := range targets {
			steps := byTarget[target]
			sort.SliceStable(steps, func(i, j int) bool { return steps[i].Threads < steps[j].Threads })
			tp := v1.TargetSucceeded
			if phase == v1.RunFailed {
				tp = v1.TargetFailed
			}
			run.Status.Targets = append(run.Status.Targets, v1.TargetStatus{Name: target, Phase: tp,
				ServerVersion: "10.11.14-MariaDB", Steps: steps, Released: true})
		}
		err := k8s.Status().Update(ctx, run)
		if err == nil {
			break
		}
		if !apierrors.IsConflict(err) || attempt > 50 {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitFor(t, ns, name, 20*time.Second, "phase "+string(phase), func(r *v1.BenchmarkRun) bool { return r.Status.Phase == phase })
}

// cellsOf is a result grid: every target at 1 and 2 threads with the given QPS and p95.
func cellsOf(qps, p95 float64) map[string][2]float64 {
	return map[string][2]float64{
		"mariadb@1": {qps, p95}, "mariadb@2": {2 * qps, p95},
		"mariadb-psoff@1": {qps, p95}, "mariadb-psoff@2": {2 * qps, p95},
	}
}

func condition(conds []metav1.Condition, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return *c
	}
	return metav1.Condition{}
}

func hasCondition(conds []metav1.Condition, typ string, status metav1.ConditionStatus, reason string) bool {
	c := meta.FindStatusCondition(conds, typ)
	return c != nil && c.Status == status && (reason == "" || c.Reason == reason)
}

// nextAt is the next wall-clock time hh:mm in loc strictly after t.
func nextAt(t time.Time, loc *time.Location, hour, minute int) time.Time {
	l := t.In(loc)
	c := time.Date(l.Year(), l.Month(), l.Day(), hour, minute, 0, 0, loc)
	for !c.After(t) {
		c = time.Date(c.Year(), c.Month(), c.Day()+1, hour, minute, 0, 0, loc)
	}
	return c
}

func TestScheduleCreatesTheRunOnTimeInItsTimeZone(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())
	sched := nightly(ns, "nightly", "30 2 * * *")
	sched.Spec.TimeZone = ptr.To("Asia/Kolkata") // UTC+5:30: 02:30 there is 21:00 UTC the day before
	sched.Spec.Template.Spec.Repetitions = ptr.To[int32](2)
	createSchedule(t, sched)
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Fatal(err)
	}
	due := nextAt(sched.CreationTimestamp.Time, kolkata, 2, 30)

	got := waitSchedule(t, ns, "nightly", "nextScheduleTime", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.NextScheduleTime != nil
	})
	if !got.Status.NextScheduleTime.Equal(&metav1.Time{Time: due}) {
		t.Errorf("nextScheduleTime %s, want %s (02:30 Asia/Kolkata)", got.Status.NextScheduleTime.UTC(), due.UTC())
	}
	if !hasCondition(got.Status.Conditions, v1.ConditionReady, metav1.ConditionTrue, v1.ReasonScheduled) ||
		!hasCondition(got.Status.Conditions, v1.ConditionStalled, metav1.ConditionFalse, "") || got.Status.ObservedGeneration != got.Generation {
		t.Errorf("conditions %+v, observedGeneration %d", got.Status.Conditions, got.Status.ObservedGeneration)
	}

	s.at("nightly", due.Add(-time.Second))
	waitRuns(t, ns, "nightly")

	s.at("nightly", due.Add(time.Second))
	name := "nightly-" + due.UTC().Format("200601021504")
	runs := waitRuns(t, ns, "nightly", name)
	run := runs[0]
	if !metav1.IsControlledBy(&run, sched) {
		t.Errorf("run %s is not controlled by the schedule: %+v", run.Name, run.OwnerReferences)
	}
	if run.Labels["team"] != "db" || run.Annotations["build"] != "nightly" ||
		run.Annotations[v1.AnnotationScheduledTime] != due.UTC().Format(time.RFC3339) {
		t.Errorf("labels %v annotations %v", run.Labels, run.Annotations)
	}
	if len(run.Spec.Targets) != 2 || run.Spec.Ladder.Threads[1] != 2 {
		t.Errorf("spec not copied from the template: %+v", run.Spec)
	}
	if run.Spec.ServerInstance != v1.ServerInstancePerRepetition || sched.Spec.Template.Spec.ServerInstance != "" {
		t.Errorf("serverInstance %q (template %q), want PerRepetition: a scheduled run's repetitions each on a new server",
			run.Spec.ServerInstance, sched.Spec.Template.Spec.ServerInstance)
	}
	got = waitSchedule(t, ns, "nightly", "lastScheduleTime and active", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.LastScheduleTime != nil && len(s.Status.Active) == 1
	})
	if !got.Status.LastScheduleTime.Equal(&metav1.Time{Time: due}) || got.Status.Active[0] != name ||
		!got.Status.NextScheduleTime.Equal(&metav1.Time{Time: due.AddDate(0, 0, 1)}) {
		t.Errorf("status %+v", got.Status)
	}
	assertEvents(t, ns, "nightly", "Created")
}

func TestMissedWindowInsideAndOutsideTheStartingDeadline(t *testing.T) {
	ns := newNamespace(t)
	start := time.Now()
	s := startScheduler(t, ns, start)
	sched := nightly(ns, "hourly", "0 * * * *")
	sched.Spec.StartingDeadlineSeconds = ptr.To[int64](600)
	createSchedule(t, sched)
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)

	// Inside: the manager comes back 5 minutes late, within the 10 minute deadline.
	s.at("hourly", h1.Add(5*time.Minute))
	run1 := "hourly-" + h1.UTC().Format("200601021504")
	waitRuns(t, ns, "hourly", run1)
	finish(t, ns, run1, v1.RunSucceeded, cellsOf(1000, 1))

	// Outside: 20 minutes late for the next hour, past the deadline: skipped, with an Event.
	h2 := h1.Add(time.Hour)
	s.at("hourly", h2.Add(20*time.Minute))
	got := waitSchedule(t, ns, "hourly", "lastMissedTime", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.LastMissedTime != nil
	})
	if !got.Status.LastMissedTime.Equal(&metav1.Time{Time: h2}) {
		t.Errorf("lastMissedTime %s, want %s", got.Status.LastMissedTime, h2)
	}
	waitRuns(t, ns, "hourly", run1)
	assertEvents(t, ns, "hourly", "Created", v1.ReasonMissedSchedule)

	// Without a deadline, a manager down for three hours starts one run, for the newest time.
	s.clock.SetTime(time.Now())
	sched2 := createSchedule(t, nightly(ns, "catchup", "0 * * * *"))
	c1 := sched2.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	s.at("catchup", c1.Add(2*time.Hour+30*time.Minute))
	waitRuns(t, ns, "catchup", "catchup-"+c1.Add(2*time.Hour).UTC().Format("200601021504"))
}

func TestForbidWaitsForTheActiveRunAllowDoesNot(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())
	forbid := createSchedule(t, nightly(ns, "forbid", "0 * * * *"))
	allow := nightly(ns, "allow", "0 * * * *")
	allow.Spec.ConcurrencyPolicy = v1.ConcurrencyAllow
	createSchedule(t, allow)
	h1 := forbid.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	if h1a := allow.CreationTimestamp.Truncate(time.Hour).Add(time.Hour); !h1a.Equal(h1) {
		t.Skip("the two schedules were created on both sides of an hour")
	}
	name := func(sched string, at time.Time) string { return sched + "-" + at.UTC().Format("200601021504") }

	s.at("forbid", h1.Add(time.Second))
	s.at("allow", h1.Add(time.Second))
	waitRuns(t, ns, "forbid", name("forbid", h1))
	waitRuns(t, ns, "allow", name("allow", h1))

	// An hour later the first runs are still active.
	h2 := h1.Add(time.Hour)
	s.at("forbid", h2.Add(time.Second))
	s.at("allow", h2.Add(time.Second))
	waitRuns(t, ns, "allow", name("allow", h1), name("allow", h2))
	got := waitSchedule(t, ns, "forbid", "waiting for the active run", func(s *v1.BenchmarkSchedule) bool {
		return hasCondition(s.Status.Conditions, v1.ConditionReady, metav1.ConditionTrue, v1.ReasonWaitingForRun)
	})
	if c := condition(got.Status.Conditions, v1.ConditionReady); !strings.Contains(c.Message, name("forbid", h1)) {
		t.Errorf("Ready message %q, want it to name the active run", c.Message)
	}
	waitRuns(t, ns, "forbid", name("forbid", h1))

	// Once the active run finishes, the waiting run starts (no deadline: late is fine).
	s.clock.SetTime(h2.Add(10 * time.Minute))
	finish(t, ns, name("forbid", h1), v1.RunSucceeded, cellsOf(1000, 1))
	waitRuns(t, ns, "forbid", name("forbid", h1), name("forbid", h2))
}

func TestReplaceDeletesTheActiveRun(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())
	sched := nightly(ns, "replace", "0 * * * *")
	sched.Spec.ConcurrencyPolicy = v1.ConcurrencyReplace
	createSchedule(t, sched)
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	s.at("replace", h1.Add(time.Second))
	first := "replace-" + h1.UTC().Format("200601021504")
	waitRuns(t, ns, "replace", first)
	s.at("replace", h1.Add(time.Hour+time.Second))
	waitRuns(t, ns, "replace", "replace-"+h1.Add(time.Hour).UTC().Format("200601021504"))
	assertEvents(t, ns, "replace", "Created", "Replaced")
}

func TestSuspendedScheduleCreatesNothing(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())
	sched := nightly(ns, "paused", "0 * * * *")
	sched.Spec.Suspend = ptr.To(true)
	sched.Spec.StartingDeadlineSeconds = ptr.To[int64](60)
	createSchedule(t, sched)
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	s.at("paused", h1.Add(time.Second))
	got := waitSchedule(t, ns, "paused", "Ready=Suspended", func(s *v1.BenchmarkSchedule) bool {
		return hasCondition(s.Status.Conditions, v1.ConditionReady, metav1.ConditionTrue, v1.ReasonSuspended)
	})
	if got.Status.NextScheduleTime != nil {
		t.Errorf("nextScheduleTime %s while suspended", got.Status.NextScheduleTime)
	}
	waitRuns(t, ns, "paused")

	// Resumed ten minutes later: the 60 s deadline has passed, the missed time is skipped and
	// the next one runs.
	s.clock.SetTime(h1.Add(10 * time.Minute))
	patch := []byte(`{"spec":{"suspend":false}}`)
	if err := k8s.Patch(context.Background(), got, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
	waitSchedule(t, ns, "paused", "resumed", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.NextScheduleTime != nil && s.Status.ObservedGeneration == s.Generation
	})
	waitRuns(t, ns, "paused")
	s.at("paused", h1.Add(time.Hour+time.Second))
	waitRuns(t, ns, "paused", "paused-"+h1.Add(time.Hour).UTC().Format("200601021504"))
}

func TestHistoryLimitsPruneTheOldestRuns(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())
	sched := nightly(ns, "hist", "0 * * * *")
	sched.Spec.SuccessfulRunsHistoryLimit = ptr.To[int32](2)
	sched.Spec.FailedRunsHistoryLimit = ptr.To[int32](1)
	createSchedule(t, sched)
	h := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	phases := []v1.RunPhase{v1.RunSucceeded, v1.RunFailed, v1.RunSucceeded, v1.RunFailed, v1.RunSucceeded}
	var names []string
	for i, phase := range phases {
		at := h.Add(time.Duration(i) * time.Hour)
		s.at("hist", at.Add(time.Second))
		name := "hist-" + at.UTC().Format("200601021504")
		names = append(names, name)
		waitFor(t, ns, name, 20*time.Second, "run "+name, func(*v1.BenchmarkRun) bool { return true })
		finish(t, ns, name, phase, cellsOf(1000, 1))
	}
	// Kept: the newest two successful (2 and 4) and the newest failed (3).
	want := []string{names[2], names[3], names[4]}
	sort.Strings(want)
	waitRuns(t, ns, "hist", want...)
	got := waitSchedule(t, ns, "hist", "lastRun", func(s *v1.BenchmarkSchedule) bool { return s.Status.LastRun == names[4] })
	if got.Status.LastRunPhase != v1.RunSucceeded || len(got.Status.Active) != 0 || got.Status.LastSuccessfulTime == nil {
		t.Errorf("status %+v", got.Status)
	}
	assertEvents(t, ns, "hist", "Created", "Pruned")
}

func TestDeterministicNamesSurviveARestartAndForeignRunsAreNotAdopted(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())
	sched := createSchedule(t, nightly(ns, "det", "0 * * * *"))
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	name1 := "det-" + h1.UTC().Format("200601021504")

	// The manager created the run and crashed before writing the schedule's status, and the new
	// manager's cache does not show the run yet (here: it lacks the schedule label, so the
	// schedule's list misses it): it tries to create the run again, finds its own run under the
	// deterministic name, and creates no second one.
	s.op.stop()
	run := baseRun(ns, name1, 1, 2)
	run.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1.GroupVersion.String(), Kind: "BenchmarkSchedule",
		Name: sched.Name, UID: sched.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	s.clock.SetTime(h1.Add(time.Second))
	s.op = startOperator(t, ns, operatorOptions{schedules: true, scheduleClock: s.clock})
	got := waitSchedule(t, ns, "det", "lastScheduleTime", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.LastScheduleTime != nil
	})
	all := &v1.BenchmarkRunList{}
	if err := k8s.List(context.Background(), all, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != 1 || all.Items[0].Name != name1 || !got.Status.LastScheduleTime.Equal(&metav1.Time{Time: h1}) ||
		!hasCondition(got.Status.Conditions, v1.ConditionReady, metav1.ConditionTrue, v1.ReasonScheduled) {
		t.Errorf("runs %v, status %+v", runNames(all.Items), got.Status)
	}
	// Restarting again at the same instant changes nothing either.
	s.restart()
	s.at("det", h1.Add(2*time.Second))
	time.Sleep(500 * time.Millisecond)
	if err := k8s.List(context.Background(), all, client.InNamespace(ns)); err != nil || len(all.Items) != 1 {
		t.Errorf("after a second restart: %v %v", runNames(all.Items), err)
	}

	// A run of the next hour's name that this schedule does not own is neither adopted nor
	// replaced: the schedule says so.
	finish(t, ns, name1, v1.RunSucceeded, cellsOf(1000, 1))
	h2 := h1.Add(time.Hour)
	foreign := baseRun(ns, "det-"+h2.UTC().Format("200601021504"), 1)
	if err := k8s.Create(context.Background(), foreign); err != nil {
		t.Fatal(err)
	}
	s.at("det", h2.Add(time.Second))
	got = waitSchedule(t, ns, "det", "RunNameTaken", func(s *v1.BenchmarkSchedule) bool {
		return hasCondition(s.Status.Conditions, v1.ConditionReady, metav1.ConditionFalse, v1.ReasonRunNameTaken)
	})
	if c := condition(got.Status.Conditions, v1.ConditionReady); !strings.Contains(c.Message, foreign.Name) {
		t.Errorf("Ready message %q, want it to name %s", c.Message, foreign.Name)
	}
	if !hasCondition(got.Status.Conditions, v1.ConditionStalled, metav1.ConditionTrue, v1.ReasonRunNameTaken) {
		t.Errorf("Stalled %+v, want True: the user must act", condition(got.Status.Conditions, v1.ConditionStalled))
	}
	f := &v1.BenchmarkRun{}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(foreign), f); err != nil || len(f.OwnerReferences) != 0 {
		t.Errorf("foreign run: %v, owners %+v", err, f.OwnerReferences)
	}
	// It stays Stalled (other reconciles do not clear it) until the next run is created.
	s.at("det", h2.Add(time.Minute))
	time.Sleep(300 * time.Millisecond)
	waitSchedule(t, ns, "det", "still Stalled", func(s *v1.BenchmarkSchedule) bool {
		return hasCondition(s.Status.Conditions, v1.ConditionStalled, metav1.ConditionTrue, v1.ReasonRunNameTaken)
	})
	h3 := h2.Add(time.Hour)
	s.at("det", h3.Add(time.Second))
	waitRuns(t, ns, "det", "det-"+h3.UTC().Format("200601021504"))
	waitSchedule(t, ns, "det", "no longer Stalled", func(s *v1.BenchmarkSchedule) bool {
		return hasCondition(s.Status.Conditions, v1.ConditionStalled, metav1.ConditionFalse, "") &&
			hasCondition(s.Status.Conditions, v1.ConditionReady, metav1.ConditionTrue, v1.ReasonScheduled)
	})
}

func TestEditingTheTemplateChangesOnlyTheNextRun(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())
	sched := createSchedule(t, nightly(ns, "edit", "0 * * * *"))
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	s.at("edit", h1.Add(time.Second))
	first := "edit-" + h1.UTC().Format("200601021504")
	waitRuns(t, ns, "edit", first)
	finish(t, ns, first, v1.RunSucceeded, cellsOf(1000, 1))

	patch := []byte(`{"spec":{"template":{"spec":{"ladder":{"threads":[4,8,16]}}}}}`)
	if err := k8s.Patch(context.Background(), sched, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
	// The scheduled time comes after the edit was seen (an edit in the very second a run is
	// due may or may not make it into that run).
	waitSchedule(t, ns, "edit", "the edit observed", func(s *v1.BenchmarkSchedule) bool {
		return s.Generation == 2 && s.Status.ObservedGeneration == 2
	})
	s.at("edit", h1.Add(time.Hour+time.Second))
	second := "edit-" + h1.Add(time.Hour).UTC().Format("200601021504")
	runs := waitRuns(t, ns, "edit", first, second)
	if got := runs[0].Spec.Ladder.Threads; len(got) != 2 || got[1] != 2 {
		t.Errorf("the existing run's ladder changed to %v", got)
	}
	if got := runs[1].Spec.Ladder.Threads; len(got) != 3 || got[2] != 16 {
		t.Errorf("the next run's ladder is %v, want the edited [4 8 16]", got)
	}
}

func TestInvalidScheduleOrTimeZoneStallsWithWhatToFix(t *testing.T) {
	ns := newNamespace(t)
	startScheduler(t, ns, time.Now())
	bad := createSchedule(t, nightly(ns, "badcron", "61 * * * *"))
	got := waitSchedule(t, ns, "badcron", "Stalled", func(s *v1.BenchmarkSchedule) bool {
		return hasCondition(s.Status.Conditions, v1.ConditionStalled, metav1.ConditionTrue, v1.ReasonInvalidSchedule)
	})
	if c := condition(got.Status.Conditions, v1.ConditionStalled); !strings.Contains(c.Message, `"61 * * * *"`) || !strings.Contains(c.Message, "five fields") {
		t.Errorf("Stalled message %q", c.Message)
	}
	if !hasCondition(got.Status.Conditions, v1.ConditionReady, metav1.ConditionFalse, v1.ReasonInvalidSchedule) {
		t.Errorf("Ready %+v", condition(got.Status.Conditions, v1.ConditionReady))
	}
	// Fixing it clears Stalled.
	if err := k8s.Patch(context.Background(), bad, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"schedule":"@daily"}}`))); err != nil {
		t.Fatal(err)
	}
	waitSchedule(t, ns, "badcron", "not Stalled", func(s *v1.BenchmarkSchedule) bool {
		return hasCondition(s.Status.Conditions, v1.ConditionStalled, metav1.ConditionFalse, "") &&
			hasCondition(s.Status.Conditions, v1.ConditionReady, metav1.ConditionTrue, "")
	})

	tz := nightly(ns, "badtz", "0 2 * * *")
	tz.Spec.TimeZone = ptr.To("Mars/Olympus_Mons")
	createSchedule(t, tz)
	got = waitSchedule(t, ns, "badtz", "Stalled", func(s *v1.BenchmarkSchedule) bool {
		return hasCondition(s.Status.Conditions, v1.ConditionStalled, metav1.ConditionTrue, v1.ReasonInvalidTimeZone)
	})
	if c := condition(got.Status.Conditions, v1.ConditionStalled); !strings.Contains(c.Message, "Mars/Olympus_Mons") || !strings.Contains(c.Message, "IANA") {
		t.Errorf("Stalled message %q", c.Message)
	}
}

func TestRegressionDetectedAgainstThePreviousRun(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())
	sched := createSchedule(t, nightly(ns, "reg", "0 * * * *"))
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	name := func(i int) string { return "reg-" + h1.Add(time.Duration(i)*time.Hour).UTC().Format("200601021504") }

	// The first run has nothing to compare with.
	s.at("reg", h1.Add(time.Second))
	waitRuns(t, ns, "reg", name(0))
	finish(t, ns, name(0), v1.RunSucceeded, cellsOf(10000, 1.0))
	first := waitFor(t, ns, name(0), 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	if first.Status.Comparison.Verdict != v1.VerdictNoBaseline ||
		!hasCondition(first.Status.Conditions, v1.ConditionRegressed, metav1.ConditionFalse, v1.ReasonNoBaseline) {
		t.Errorf("first run: %+v, conditions %+v", first.Status.Comparison, first.Status.Conditions)
	}

	// The second is within the thresholds: 4 % slower (threshold 5 %), p95 8 % higher (10 %).
	s.at("reg", h1.Add(time.Hour+time.Second))
	waitRuns(t, ns, "reg", name(0), name(1))
	finish(t, ns, name(1), v1.RunSucceeded, cellsOf(9600, 1.08))
	second := waitFor(t, ns, name(1), 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	if c := second.Status.Comparison; c.Verdict != v1.VerdictNoRegression || c.Baseline != name(0) || c.ComparedCells != 4 || c.RegressedCells != 0 {
		t.Errorf("second run: %+v", c)
	}
	got := waitSchedule(t, ns, "reg", "verdict OK", func(s *v1.BenchmarkSchedule) bool { return s.Status.Verdict == "OK 0/4" })
	if !hasCondition(got.Status.Conditions, v1.ConditionRegressed, metav1.ConditionFalse, v1.ReasonNoRegression) {
		t.Errorf("schedule Regressed %+v", condition(got.Status.Conditions, v1.ConditionRegressed))
	}

	// The third drops one cell by 12 % and raises another's p95 by 30 %: two regressed cells,
	// compared with the second run (the previous one), not the first.
	s.at("reg", h1.Add(2*time.Hour+time.Second))
	waitRuns(t, ns, "reg", name(0), name(1), name(2))
	cells := cellsOf(9600, 1.08)
	cells["mariadb@2"] = [2]float64{2 * 9600 * 0.88, 1.08}
	cells["mariadb-psoff@1"] = [2]float64{9600, 1.08 * 1.3}
	finish(t, ns, name(2), v1.RunSucceeded, cells)
	third := waitFor(t, ns, name(2), 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	c := third.Status.Comparison
	if c.Verdict != v1.VerdictRegressed || c.Baseline != name(1) || c.RegressedCells != 2 || c.ComparedCells != 4 || len(c.Worst) != 2 {
		t.Fatalf("third run: %+v", c)
	}
	if c.Worst[0].Target != "mariadb-psoff" || c.Worst[0].Threads != 1 || c.Worst[1].Target != "mariadb" || c.Worst[1].QPSChangePercent != -12 {
		t.Errorf("worst cells %+v, want mariadb-psoff@1 (p95 +30%%) then mariadb@2 (QPS -12%%)", c.Worst)
	}
	if !strings.Contains(c.Message, "cells: 2 regressed") || !strings.Contains(c.Message, "mariadb at 2 threads: QPS -12.0%") {
		t.Errorf("message %q", c.Message)
	}
	if !hasCondition(third.Status.Conditions, v1.ConditionRegressed, metav1.ConditionTrue, v1.ReasonRegressed) {
		t.Errorf("run Regressed %+v", condition(third.Status.Conditions, v1.ConditionRegressed))
	}
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name(2) + "-results"}, cm); err != nil {
		t.Fatal(err)
	}
	md := cm.Data[sink.ComparisonKey]
	// Old then new, as benchstat; both cells and both targets' geomean rows regressed.
	if !strings.Contains(md, "# "+name(1)+" vs "+name(2)) || strings.Count(md, "**regressed**") != 4 || cm.Data["report.md"] == "" {
		t.Errorf("comparison.md:\n%s\nkeys %v", md, keys(cm.Data))
	}
	got = waitSchedule(t, ns, "reg", "verdict Regressed", func(s *v1.BenchmarkSchedule) bool { return s.Status.Verdict == "Regressed 2/4" })
	if cond := condition(got.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, name(2)) {
		t.Errorf("schedule Regressed %+v", cond)
	}
	if got.Status.LastComparison == nil || got.Status.LastComparison.Run != name(2) {
		t.Errorf("lastComparison %+v", got.Status.LastComparison)
	}
	// Three nights are too few for a change point; the analysis is recorded for the newest run.
	got = waitSchedule(t, ns, "reg", "history", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.History != nil && s.Status.History.Run == name(2)
	})
	if h := got.Status.History; h.Runs != 3 || h.RegressedCells != 0 || len(h.ChangePoints) != 0 {
		t.Errorf("history %+v", h)
	}
	assertEvents(t, ns, "reg", "Created", v1.ReasonNoBaseline, v1.ReasonNoRegression, v1.ReasonRegressed)
	assertWarning(t, ns, "reg", v1.ReasonRegressed, "mariadb-psoff at 1 threads")
}

// An Inconclusive comparison makes the next run measure more repetitions, within
// spec.regression.maxRepetitions.
func TestInconclusiveComparisonAddsRepetitions(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())
	sched := nightly(ns, "adapt", "0 * * * *")
	// No minimum effect for QPS: no interval can show "unchanged", so identical runs are
	// Inconclusive.
	sched.Spec.Regression = v1.RegressionPolicy{QPSDropPercent: ptr.To(0.0), MaxRepetitions: ptr.To[int32](3)}
	createSchedule(t, sched)
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	name := func(i int) string { return "adapt-" + h1.Add(time.Duration(i)*time.Hour).UTC().Format("200601021504") }

	var names []string
	for i := range 2 {
		s.at("adapt", h1.Add(time.Duration(i)*time.Hour+time.Second))
		names = append(names, name(i))
		runs := waitRuns(t, ns, "adapt", names...)
		if got := runs[i].Spec.RepetitionsOrDefault(); got != 1 {
			t.Fatalf("run %d: %d repetitions, want the template's 1", i, got)
		}
		finish(t, ns, name(i), v1.RunSucceeded, cellsOf(10000, 1.0))
		waitFor(t, ns, name(i), 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	}
	got := waitSchedule(t, ns, "adapt", "verdict Inconclusive", func(s *v1.BenchmarkSchedule) bool { return s.Status.Verdict == "Inconclusive 2/2 targets" })
	if !hasCondition(got.Status.Conditions, v1.ConditionRegressed, metav1.ConditionFalse, v1.ReasonInconclusive) {
		t.Errorf("schedule Regressed %+v", condition(got.Status.Conditions, v1.ConditionRegressed))
	}
	// Twice the inconclusive run's 1 repetition.
	s.at("adapt", h1.Add(2*time.Hour+time.Second))
	runs := waitRuns(t, ns, "adapt", name(0), name(1), name(2))
	if got := runs[2].Spec.RepetitionsOrDefault(); got != 2 {
		t.Fatalf("run after an Inconclusive comparison: %d repetitions, want 2", got)
	}
	finish(t, ns, name(2), v1.RunSucceeded, cellsOf(10000, 1.0))
	waitFor(t, ns, name(2), 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	// Inconclusive again: 4, bounded by maxRepetitions 3.
	s.at("adapt", h1.Add(3*time.Hour+time.Second))
	runs = waitRuns(t, ns, "adapt", name(0), name(1), name(2), name(3))
	if got := runs[3].Spec.RepetitionsOrDefault(); got != 3 {
		t.Fatalf("run after a second Inconclusive comparison: %d repetitions, want maxRepetitions 3", got)
	}
	assertEvents(t, ns, "adapt", "Created")
}

// A slow drift that no comparison of neighbours shows (-1.5 % a night against a 5 % minimum
// effect) is found in the schedule's history.
func TestHistoryCatchesADriftThatNoComparisonShows(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())
	sched := nightly(ns, "drift", "0 * * * *")
	sched.Spec.SuccessfulRunsHistoryLimit = ptr.To[int32](20)
	createSchedule(t, sched)
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	name := func(i int) string { return "drift-" + h1.Add(time.Duration(i)*time.Hour).UTC().Format("200601021504") }

	const nights = 10
	var names []string
	for i := range nights {
		s.at("drift", h1.Add(time.Duration(i)*time.Hour+time.Second))
		names = append(names, name(i))
		waitRuns(t, ns, "drift", names...)
		noise := []float64{1.003, 0.997}[i%2]
		finish(t, ns, name(i), v1.RunSucceeded, cellsOf(10000*(1-0.015*float64(i))*noise, 1.0))
		run := waitFor(t, ns, name(i), 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
		if c := run.Status.Comparison; c.Verdict == v1.VerdictRegressed {
			t.Fatalf("night %d regressed against the night before: %s", i, c.Message)
		}
	}
	got := waitSchedule(t, ns, "drift", "the history of the last night", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.History != nil && s.Status.History.Run == name(nights-1)
	})
	h := got.Status.History
	if h.Runs != nights || h.RegressedCells != 4 || len(h.ChangePoints) != 4 {
		t.Fatalf("history %+v", h)
	}
	for _, cp := range h.ChangePoints {
		if cp.Metric != v1.AckQPS || !cp.Regressed || cp.ChangePercent > -5 || cp.P >= 0.05 {
			t.Errorf("change point %+v", cp)
		}
	}
	if cond := condition(got.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionFalse {
		t.Errorf("the Regressed condition stays the newest comparison's: %+v", cond)
	}
	assertWarning(t, ns, "drift", v1.ReasonChangePoint, "4 cells shifted for the worse over the last 10 runs")
}

func TestThresholdsAndPinnedBaselineAreHonoured(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())

	// A pinned baseline outside the schedule: a release run.
	release := baseRun(ns, "release-1", 1, 2)
	if err := k8s.Create(context.Background(), release); err != nil {
		t.Fatal(err)
	}
	finish(t, ns, "release-1", v1.RunSucceeded, cellsOf(10000, 1.0))

	sched := nightly(ns, "lax", "0 * * * *")
	sched.Spec.Regression = v1.RegressionPolicy{QPSDropPercent: ptr.To(20.0), P95RisePercent: ptr.To(50.0), BaselineRun: "release-1", RunToRunCVPercent: ptr.To(0.0)}
	createSchedule(t, sched)
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	name := func(i int) string { return "lax-" + h1.Add(time.Duration(i)*time.Hour).UTC().Format("200601021504") }

	// 15 % slower and p95 +40 %: within 20 % and 50 %.
	s.at("lax", h1.Add(time.Second))
	waitRuns(t, ns, "lax", name(0))
	finish(t, ns, name(0), v1.RunSucceeded, cellsOf(8500, 1.4))
	r0 := waitFor(t, ns, name(0), 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	if c := r0.Status.Comparison; c.Verdict != v1.VerdictNoRegression || c.Baseline != "release-1" || c.QPSDropPercent != 20 || c.P95RisePercent != 50 {
		t.Errorf("first run: %+v", c)
	}
	// 25 % slower than the release (but not than the previous run, 8500 -> 7500 is -11.8 %):
	// the pinned baseline decides.
	s.at("lax", h1.Add(time.Hour+time.Second))
	waitRuns(t, ns, "lax", name(0), name(1))
	finish(t, ns, name(1), v1.RunSucceeded, cellsOf(7500, 1.0))
	r1 := waitFor(t, ns, name(1), 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	if c := r1.Status.Comparison; c.Verdict != v1.VerdictRegressed || c.Baseline != "release-1" || c.RegressedCells != 4 {
		t.Errorf("second run: %+v", c)
	}

	// A pinned baseline that does not exist: NoBaseline, saying what to fix.
	s.clock.SetTime(time.Now())
	gone := nightly(ns, "gone", "0 * * * *")
	gone.Spec.Regression.BaselineRun = "no-such-run"
	createSchedule(t, gone)
	g1 := gone.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	s.at("gone", g1.Add(time.Second))
	gname := "gone-" + g1.UTC().Format("200601021504")
	waitRuns(t, ns, "gone", gname)
	finish(t, ns, gname, v1.RunSucceeded, cellsOf(1000, 1))
	rg := waitFor(t, ns, gname, 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	if c := rg.Status.Comparison; c.Verdict != v1.VerdictNoBaseline || !strings.Contains(c.Message, "no-such-run does not exist") {
		t.Errorf("run with a missing pinned baseline: %+v", c)
	}
}

// TestScheduledRunsEndToEndWithMetrics runs both controllers (the BenchmarkRun controller with
// the fake kubelet) on the real clock: a schedule firing every minute creates runs that run to
// Succeeded, the second is compared with the first, and the manager's metrics endpoint serves
// results, outcomes, step durations and the verdict with the documented labels.
func TestScheduledRunsEndToEndWithMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for two minute boundaries")
	}
	ns := newNamespace(t)
	addr := freeAddr(t)
	startOperator(t, ns, operatorOptions{log: captured(t, "run_point_select_t4.txt"), schedules: true, metricsAddr: addr})
	startKubelet(t, ns, succeedAll(t))
	sched := nightly(ns, "minutely", "* * * * *")
	sched.Spec.Template.Spec.Ladder.Threads = []int32{1, 2}
	createSchedule(t, sched)

	got := waitScheduleFor(t, ns, "minutely", 200*time.Second, "two compared runs", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.LastComparison != nil && s.Status.LastComparison.Baseline != ""
	})
	// One repetition a cell: identical captured results must not regress, and no test can call
	// them unchanged either; a cell's t test needs 3 repetitions a side.
	if c := got.Status.LastComparison; c.Verdict != v1.VerdictInconclusive || c.ComparedCells != 4 || c.InconclusiveCells != 4 ||
		c.NeededRepetitions != 3 || got.Status.Verdict != "Inconclusive 2/2 targets" {
		t.Errorf("comparison %+v, verdict %q", c, got.Status.Verdict)
	}
	if !hasCondition(got.Status.Conditions, v1.ConditionRegressed, metav1.ConditionFalse, v1.ReasonInconclusive) {
		t.Errorf("schedule Regressed %+v", condition(got.Status.Conditions, v1.ConditionRegressed))
	}
	run := got.Status.LastComparison.Run
	// Suspend it so no further run records results while the metrics are read.
	if err := k8s.Patch(context.Background(), sched, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"suspend":true}}`))); err != nil {
		t.Fatal(err)
	}
	got = waitScheduleFor(t, ns, "minutely", 60*time.Second, "no active run", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.ObservedGeneration == s.Generation && len(s.Status.Active) == 0
	})
	if c := got.Status.LastComparison; c.Run != run {
		// A run that was active when suspended finished and was compared: read its series.
		run = c.Run
	}

	body := scrape(t, addr)
	for _, want := range []string{
		fmt.Sprintf(`mysqlbench_step_qps{namespace="%s",run="%s",schedule="minutely",server_version="10.11.14-MariaDB-0+deb12u2",target="mariadb",threads="2"} %g`, ns, run, want4.qps),
		fmt.Sprintf(`mysqlbench_step_tps{namespace="%s",run="%s",schedule="minutely",server_version="10.11.14-MariaDB-0+deb12u2",target="mariadb-psoff",threads="1"} %g`, ns, run, want4.tps),
		fmt.Sprintf(`mysqlbench_step_latency_p95_seconds{namespace="%s",run="%s",schedule="minutely",server_version="10.11.14-MariaDB-0+deb12u2",target="mariadb",threads="1"}`, ns, run),
		fmt.Sprintf(`mysqlbench_runs_total{namespace="%s",outcome="succeeded",schedule="minutely"}`, ns),
		fmt.Sprintf(`mysqlbench_step_duration_seconds_count{namespace="%s",schedule="minutely"}`, ns),
		fmt.Sprintf(`mysqlbench_schedule_regressed_cells{namespace="%s",schedule="minutely"} 0`, ns),
		fmt.Sprintf(`mysqlbench_schedule_compared_cells{namespace="%s",schedule="minutely"} 4`, ns),
		fmt.Sprintf(`mysqlbench_schedule_cells{namespace="%s",schedule="minutely",verdict="Inconclusive"} 4`, ns),
		fmt.Sprintf(`mysqlbench_schedule_cells{namespace="%s",schedule="minutely",verdict="Regressed"} 0`, ns),
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// Only the newest run of the schedule is exported: 2 targets x 2 thread counts.
	if n := strings.Count(body, fmt.Sprintf(`mysqlbench_step_qps{namespace="%s"`, ns)); n != 4 {
		t.Errorf("%d mysqlbench_step_qps series for the schedule, want 4 (one run's)", n)
	}
	// Deleting the schedule removes its series.
	if err := k8s.Delete(context.Background(), sched); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for strings.Contains(scrape(t, addr), `schedule="minutely"`) {
		if time.Now().After(deadline) {
			t.Fatal("the deleted schedule's series are still exported")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func waitScheduleFor(t *testing.T, ns, name string, timeout time.Duration, what string, cond func(*v1.BenchmarkSchedule) bool) *v1.BenchmarkSchedule {
	t.Helper()
	deadline := time.Now().Add(timeout)
	s := &v1.BenchmarkSchedule{}
	for {
		err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s)
		if err == nil && cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; status: %+v", timeout, what, s.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func scrape(t *testing.T, addr string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, rerr := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if rerr == nil && resp.StatusCode == http.StatusOK {
				return string(b)
			}
			err = fmt.Errorf("status %d, %w", resp.StatusCode, rerr)
		}
		if time.Now().After(deadline) {
			t.Fatalf("scrape %s: %v", addr, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// assertWarning checks that the schedule has a Warning Event of reason whose message contains
// text. The Events of a reconcile are recorded after its status write, through the recorder's
// asynchronous broadcaster: one may reach the API server a moment after the status a test saw, so
// this waits for it (up to 10 s; a busy CI machine once needed more than none).
func assertWarning(t *testing.T, ns, name, reason, text string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		events := &corev1.EventList{}
		if err := k8s.List(context.Background(), events, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == name && e.Reason == reason && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, text) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Errorf("no Warning %s Event on %s containing %q", reason, name, text)
			return
		}
		time.Sleep(100 * time.Millisecond)
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
func scheduleReconciler(t *testing.T, c client.Client, rec record.EventRecorder, clk *clocktesting.FakePassiveClock) *controllers.BenchmarkScheduleReconciler {
	t.Helper()
	r, err := controllers.NewBenchmarkScheduleReconciler(controllers.ScheduleDependencies{
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
	full := controllers.ScheduleDependencies{Client: c, Scheme: testenv.Scheme, Recorder: record.NewFakeRecorder(1),
		Clock: clocktesting.NewFakePassiveClock(time.Now())}
	cases := []struct {
		name   string
		mutate func(*controllers.ScheduleDependencies)
		want   string // the error; "" for success
	}{
		{"all there", func(*controllers.ScheduleDependencies) {}, ""},
		{"no clock", func(d *controllers.ScheduleDependencies) { d.Clock = nil },
			"BenchmarkSchedule reconciler: missing dependencies: Clock"},
		{"no recorder and no scheme", func(d *controllers.ScheduleDependencies) { d.Recorder, d.Scheme = nil, nil },
			"BenchmarkSchedule reconciler: missing dependencies: Recorder, Scheme"},
		{"nothing", func(d *controllers.ScheduleDependencies) { *d = controllers.ScheduleDependencies{} },
			"BenchmarkSchedule reconciler: missing dependencies: Client, Clock, Recorder, Scheme"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := full
			tc.mutate(&d)
			r, err := controllers.NewBenchmarkScheduleReconciler(d)
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
