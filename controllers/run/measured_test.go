package run_test

import (
	"context"
	"encoding/csv"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// The 2 s ladder steps of internal/sysbench's TestRealMeasured, as real sysbench 1.0.20 reported
// them: point selects (2.003 s), a custom script whose one event ran 3 s without SQL, and one whose
// first event was a 3.5 s query.
const (
	normalStep    = "run_point_select_t2_normal.termination-log"
	noSQLStep     = "run_no_sql_long_event_t1.termination-log"
	longEventStep = "run_long_event_t2.termination-log"
)

// measuredKubelet finishes every Job like succeedAll, ladder steps with the normal capture unless
// step names a capture for the Job.
func measuredKubelet(t *testing.T, step func(job *batchv1.Job) string) func(*batchv1.Job) outcome {
	ok := succeedAll(t)
	messages := map[string]string{}
	for _, name := range []string{normalStep, noSQLStep, longEventStep} {
		messages[name] = captured(t, name)
	}
	return func(job *batchv1.Job) outcome {
		switch job.Labels[specs.LabelStep] {
		case specs.StepProbe, specs.StepPrepare, specs.StepWarmup, specs.StepCleanup:
			return ok(job)
		}
		name := step(job)
		if name == "" {
			name = normalStep
		}
		return outcome{message: messages[name]}
	}
}

// jobsOf are the Jobs the kubelet finished whose names start with prefix.
func jobsOf(kl *kubelet, prefix string) []string {
	var out []string
	for _, j := range kl.finished() {
		if strings.HasPrefix(j, prefix) {
			out = append(out, j)
		}
	}
	return out
}

// A ladder step whose script ran no SQL fails its target at its first attempt, with a reason
// that says what the script did; the retries are not spent on it, and the run goes on.
func TestStepThatMeasuredNothingFailsWithoutRetries(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	kl := startKubelet(t, ns, measuredKubelet(t, func(job *batchv1.Job) string {
		if strings.HasPrefix(job.Name, "nosql-mariadb-s") {
			return noSQLStep
		}
		return ""
	}))
	run := baseRun(ns, "nosql", 1, 2)
	run.Spec.Ladder.StepDuration = &metav1.Duration{Duration: 2 * time.Second}
	run.Spec.StepRetryLimit = ptr.To[int32](3)
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "nosql", 60*time.Second, "the run to finish", finished)
	if got.Status.Phase != v1.RunFailed {
		t.Fatalf("phase %s, want Failed", got.Status.Phase)
	}
	first, second := got.Status.Targets[0], got.Status.Targets[1]
	want := "step 1/2 (1 threads) failed, not retried (another attempt would run the same way): the step measured " +
		"nothing: sysbench counted 1 event and 0 queries in 3.004 s (a 2s step): the script's event() ran no SQL"
	if first.Phase != v1.TargetFailed || !strings.Contains(first.Message, want) || len(first.Steps) != 0 {
		t.Errorf("first target: %s %q with %d steps, want Failed saying %q", first.Phase, first.Message, len(first.Steps), want)
	}
	if jobs := jobsOf(kl, "nosql-mariadb-s"); strings.Join(jobs, ",") != "nosql-mariadb-s01-a0" {
		t.Errorf("ladder Jobs of the first target %v, want the one attempt nosql-mariadb-s01-a0", jobs)
	}
	if second.Phase != v1.TargetSucceeded || len(second.Steps) != 2 || second.Steps[0].OverDuration {
		t.Errorf("second target: %s with steps %+v, want both steps, none flagged", second.Phase, second.Steps)
	}
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "nosql-results"}, cm); err != nil {
		t.Fatal(err)
	}
	if md := cm.Data["report.md"]; !strings.Contains(md, "| 1 | — | 70,606 | — |") || !strings.Contains(md, "measured nothing") {
		t.Errorf("report.md shows a number for the step that measured nothing, or not why:\n%s", md)
	}
	assertEvents(t, ns, "nosql", "TargetFailed", "Failed")
	events := &corev1.EventList{}
	if err := k8s.List(context.Background(), events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Reason == "StepFailed" {
			t.Errorf("a retry was announced: %s", e.Message)
		}
	}
}

// A step that ran past its duration is recorded, flagged, left out of its cell and marked in the
// report; the run succeeds.
func TestStepPastItsDurationIsFlaggedAndLeftOutOfItsCell(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	startKubelet(t, ns, measuredKubelet(t, func(job *batchv1.Job) string {
		if job.Name == "long-mariadb-s02-a0" { // 2 threads, repetition 1
			return longEventStep
		}
		return ""
	}))
	run := baseRun(ns, "long", 1, 2)
	run.Spec.Targets = run.Spec.Targets[:1]
	run.Spec.Ladder.StepDuration = &metav1.Duration{Duration: 2 * time.Second}
	run.Spec.Repetitions = ptr.To[int32](2)
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "long", 60*time.Second, "the run to finish", finished)
	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("phase %s, want Succeeded; status %+v", got.Status.Phase, got.Status)
	}
	ts := got.Status.Targets[0]
	if len(ts.Steps) != 4 {
		t.Fatalf("%d steps, want 4", len(ts.Steps))
	}
	for _, s := range ts.Steps {
		flagged := s.Threads == 2 && s.Repetition == 1
		if s.OverDuration != flagged || flagged && s.DurationSeconds != 3.503 {
			t.Errorf("step %d threads repetition %d: overDuration %v after %.3f s, want %v", s.Threads, s.Repetition,
				s.OverDuration, s.DurationSeconds, flagged)
		}
	}
	for _, c := range ts.Cells {
		// The flagged step's 40335.61 QPS is not a sample: the cell is its other repetition.
		if c.Threads == 2 && (c.N != 1 || c.QPS.Median != 70606.42) || c.Threads == 1 && c.N != 2 {
			t.Errorf("cell %+v", c)
		}
	}
	assertWarning(t, ns, "long", "StepOverDuration", "step 2/4 (2 threads, repetition 1/2) measured 3.503 s, past its 2s")

	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "long-results"}, cm); err != nil {
		t.Fatal(err)
	}
	md := cm.Data["report.md"]
	for _, want := range []string{
		"| 2 | 70,606 † |",
		"† ran past its step: sysbench measured the steps below for longer than the step's 2 s plus the tolerance of 1 s",
		"- mariadb at 2 threads (repetition 1): measured 3.503 s, QPS 40,336, p95 0.0140 ms",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	rows, err := csv.NewReader(strings.NewReader(cm.Data["results.csv"])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(rows[0], "over_duration")
	over := 0
	for _, r := range rows[1:] {
		if col >= 0 && r[col] == "true" {
			over++
		}
	}
	if col < 0 || over != 1 {
		t.Errorf("results.csv: over_duration column %d, %d rows flagged, want 1", col, over)
	}
}
