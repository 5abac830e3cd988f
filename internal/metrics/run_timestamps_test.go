package metrics

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

const (
	runStartFamily      = "mysqlbench_run_start_timestamp_seconds"
	runCompletionFamily = "mysqlbench_run_completion_timestamp_seconds"
)

// seriesByLabels is the namespace's series of family, keyed by their labels but namespace.
func seriesByLabels(t *testing.T, namespace, family string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range series(t, namespace, family) {
		l := labels(m)
		key := l[LabelSchedule] + "/" + l[LabelRun]
		if o, ok := l[LabelOutcome]; ok {
			key += "/" + o
		}
		if len(l) != 3 && len(l) != 4 {
			t.Errorf("%s: labels %v", family, l)
		}
		out[key] = m.GetGauge().GetValue()
	}
	return out
}

func TestRecordRunTimestamps(t *testing.T) {
	ns := "run-timestamps"
	t.Cleanup(func() { ForgetSchedule(ns, "nightly"); ForgetRun(ns, "adhoc") })
	started := time.Date(2026, 11, 2, 2, 0, 0, 0, time.UTC)
	completed := started.Add(95 * time.Minute)

	sched := mkRun(ns, "nightly-1", "nightly")
	sched.Status.StartTime = &metav1.Time{Time: started}
	RecordRunStarted(sched)
	if got, want := seriesByLabels(t, ns, runStartFamily), map[string]float64{"nightly/nightly-1": float64(started.Unix())}; !equalValues(got, want) {
		t.Errorf("after the start: %s = %v, want %v", runStartFamily, got, want)
	}
	if got := seriesByLabels(t, ns, runCompletionFamily); len(got) != 0 {
		t.Errorf("before the end: %s = %v, want no series", runCompletionFamily, got)
	}

	sched.Status.CompletionTime = &metav1.Time{Time: completed}
	RecordOutcome(sched, v1.RunSucceeded)

	// A standalone run that failed without a start or completion time: its creation stands in
	// for the start and the time of the outcome for the end.
	defer func(old func() time.Time) { now = old }(now)
	failedAt := completed.Add(time.Hour + 250*time.Millisecond)
	now = func() time.Time { return failedAt }
	adhoc := mkRun(ns, "adhoc", "")
	adhoc.CreationTimestamp = metav1.NewTime(started.Add(time.Hour))
	RecordOutcome(adhoc, v1.RunFailed)

	wantStart := map[string]float64{
		"nightly/nightly-1": float64(started.Unix()),
		"/adhoc":            float64(started.Add(time.Hour).Unix()),
	}
	if got := seriesByLabels(t, ns, runStartFamily); !equalValues(got, wantStart) {
		t.Errorf("%s = %v, want %v", runStartFamily, got, wantStart)
	}
	wantEnd := map[string]float64{
		"nightly/nightly-1/succeeded": float64(completed.Unix()),
		"/adhoc/failed":               float64(failedAt.UnixMilli()) / 1000,
	}
	if got := seriesByLabels(t, ns, runCompletionFamily); !equalValues(got, wantEnd) {
		t.Errorf("%s = %v, want %v", runCompletionFamily, got, wantEnd)
	}
}

// A step recorded of a run the manager saw start before it did still marks the run's start.
func TestRecordStepRecordsRunStart(t *testing.T) {
	ns := "run-timestamps-step"
	t.Cleanup(func() { ForgetSchedule(ns, "nightly") })
	started := time.Date(2026, 11, 3, 2, 0, 0, 0, time.UTC)
	run := mkRun(ns, "nightly-1", "nightly")
	run.Status.StartTime = &metav1.Time{Time: started}
	s := step(8, 1000, 50, 2)
	stepStart := metav1.NewTime(started.Add(10 * time.Minute))
	s.StartTime = &stepStart
	RecordStep(run, "mysql80", "8.0.36", s)
	if got, want := seriesByLabels(t, ns, runStartFamily), map[string]float64{"nightly/nightly-1": float64(started.Unix())}; !equalValues(got, want) {
		t.Errorf("%s = %v, want %v (the run's start, not its step's)", runStartFamily, got, want)
	}
}

func TestForgetRunTimestamps(t *testing.T) {
	ns := "run-timestamps-forget"
	t.Cleanup(func() { ForgetSchedule(ns, "nightly") })
	at := metav1.NewTime(time.Date(2026, 11, 4, 2, 0, 0, 0, time.UTC))
	for _, name := range []string{"nightly-1", "nightly-2"} {
		run := mkRun(ns, name, "nightly")
		run.Status.StartTime, run.Status.CompletionTime = &at, &at
		RecordOutcome(run, v1.RunSucceeded)
	}
	// The older run keeps its marks while it exists: a schedule's runs each get their own.
	for _, f := range []string{runStartFamily, runCompletionFamily} {
		if got := runsOf(t, ns, f); len(got) != 2 {
			t.Errorf("%s: runs %v, want nightly-1 and nightly-2", f, got)
		}
	}
	ForgetRun(ns, "nightly-1")
	for _, f := range []string{runStartFamily, runCompletionFamily} {
		if got := runsOf(t, ns, f); len(got) != 1 || got[0] != "nightly-2" {
			t.Errorf("after ForgetRun(nightly-1): %s runs %v, want [nightly-2]", f, got)
		}
	}
	ForgetSchedule(ns, "nightly")
	for _, f := range []string{runStartFamily, runCompletionFamily} {
		if got := runsOf(t, ns, f); len(got) != 0 {
			t.Errorf("after ForgetSchedule: %s runs %v, want none", f, got)
		}
	}
}

func equalValues(got, want map[string]float64) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			return false
		}
	}
	return true
}
