package run_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
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
