package run_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// jobEnv is the sysbench container's environment of Job name (literal values only).
func (w *fakeWorld) jobEnv(name string) map[string]string {
	w.t.Helper()
	env := map[string]string{}
	for _, e := range w.job(name).Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	return env
}

// TestPipelineNextStepWaitsOnTheServerLock: with steps long enough to hold the server lock
// (specs.MinServerLockStep), every ladder Job carries the target's lock, and the next step's Job
// is created while the current step still measures, once its sysbench has run for three seconds
// of the operator's clock (so that it holds the lock the next one's client will wait for): the
// next pod's start no longer falls between the two steps. Nothing else changes: a step is still
// recorded from its Job's Complete condition, one early Job at a time, each step once, in order.
// When the current step's client fails while the next step's Job waits, that Job is deleted at
// once (StepCancelled), before the failed Job is even reported, and created again after the
// retry.
func TestPipelineNextStepWaitsOnTheServerLock(t *testing.T) {
	w, run := startLadder(t, "pk", func(r *v1.BenchmarkRun) {
		r.Spec.Ladder.StepDuration = &metav1.Duration{Duration: 20 * time.Second}
	}, 1, 2, 4)
	ok := runCaptured(t)
	s1, s2, s3 := ladderJob(run, 0, 0), ladderJob(run, 1, 0), ladderJob(run, 2, 0)
	s2a1 := ladderJob(run, 1, 1)

	if writes := w.step(run.Name); !slices.Equal(writes, []string{"create Job/" + s1}) {
		t.Fatalf("the ladder's first reconcile wrote %v, want Job %s created", writes, s1)
	}
	lock := specs.ServerLockName(w.run(run.Name), ladderTarget)
	if env := w.jobEnv(s1); env["MYSQLBENCH_SERVER_LOCK"] != lock || env["MYSQLBENCH_SERVER_LOCK_WAIT"] != "320" {
		t.Fatalf("Job %s's lock %q wait %q, want %q and 320 (the step and the slack)", s1,
			env["MYSQLBENCH_SERVER_LOCK"], env["MYSQLBENCH_SERVER_LOCK_WAIT"], lock)
	}

	// Step 1's sysbench starts: two seconds later (of the operator's clock, against a startedAt
	// in whole seconds) it may not hold the lock yet.
	w.setPod(s1, w.loadRunning)
	for i := 1; i <= 2; i++ {
		if writes := w.step(run.Name); len(writes) > 0 {
			t.Fatalf("%d s into step 1 the reconcile wrote %v, want nothing yet", i, writes)
		}
	}
	if writes := w.step(run.Name); !slices.Equal(writes, []string{"create Job/" + s2}) {
		t.Fatalf("three seconds into step 1 the reconcile wrote %v, want Job %s created", writes, s2)
	}
	if env := w.jobEnv(s2); env["MYSQLBENCH_SERVER_LOCK"] != lock {
		t.Fatalf("Job %s waits on lock %q, want step 1's %q", s2, env["MYSQLBENCH_SERVER_LOCK"], lock)
	}
	// Its pod runs, its client waits on the server; step 1 measures on. Nothing else starts:
	// step 2 is not the current step yet.
	w.setPod(s2, w.loadRunning)
	w.quiet(run.Name, 5, "step 1 measuring, step 2's client waiting for the lock")
	if w.exists(&batchv1.Job{}, s3) {
		t.Fatalf("Job %s created while step 2 still waits", s3)
	}

	// Step 1 ends; it is recorded from its Job, and step 2 (which has held the lock since)
	// starts step 3's Job.
	w.setPod(s1, w.loadExited(0, ok))
	w.quiet(run.Name, 1, "step 1's sysbench exited, its Job not reported")
	w.reportJob(s1, true)
	w.step(run.Name)
	if steps := w.steps(run); ladderOf(steps) != "1/1" {
		t.Fatalf("steps %s after Job 1 completed, want 1/1", ladderOf(steps))
	}
	if writes := w.step(run.Name); !slices.Equal(writes, []string{"create Job/" + s3}) {
		t.Fatalf("with step 2 measuring the reconcile wrote %v, want Job %s created", writes, s3)
	}
	w.setPod(s3, w.loadRunning)

	// Step 2's client fails: step 3's client is free to measure now, on a server the failure
	// may have changed. Its Job goes before step 2's Job is even reported failed.
	w.takeEvents()
	w.setPod(s2, w.loadExited(1, captured(t, "run_not_prepared_1146.txt")))
	w.step(run.Name)
	if w.exists(&batchv1.Job{}, s3) {
		t.Fatalf("Job %s, started early, still there after step 2's client failed", s3)
	}
	if ev := withReason(w.takeEvents(), "StepCancelled"); len(ev) != 1 || !strings.Contains(ev[0], s3) || !strings.Contains(ev[0], s2) {
		t.Errorf("StepCancelled Events %v, want one naming %s and the failed %s", ev, s3, s2)
	}
	w.reportJob(s2, false)
	w.step(run.Name)
	if ts := targetStatus(w.run(run.Name), ladderTarget); ts.FailedAttempts != 1 || ladderOf(ts.Steps) != "1/1" {
		t.Fatalf("failed attempts %d, steps %s; want 1 and 1/1", ts.FailedAttempts, ladderOf(ts.Steps))
	}
	// The retry waits for the cancelled Job's pod (the garbage collector's to delete).
	w.step(run.Name)
	if w.exists(&batchv1.Job{}, s2a1) {
		t.Fatalf("retry %s created while the cancelled Job's pod runs", s2a1)
	}
	w.collectGarbage()
	if writes := w.step(run.Name); !slices.Contains(writes, "create Job/"+s2a1) {
		t.Fatalf("retry %s not created once nothing else runs (wrote %v)", s2a1, writes)
	}

	final := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
	if final.Status.Phase != v1.RunSucceeded {
		t.Fatalf("phase %s, want Succeeded; status %+v", final.Status.Phase, final.Status)
	}
	if steps := targetStatus(final, ladderTarget).Steps; ladderOf(steps) != "1/1 2/2 4/1" {
		t.Errorf("steps %s, want 1/1 2/2 4/1 (each once, in order)", ladderOf(steps))
	}
	creates, _, _ := w.counters()
	for k, n := range creates {
		want := 1
		if k == "Job/"+s3 {
			want = 2 // created again when its step came
		}
		if n != want {
			t.Errorf("%s created %d times, want %d", k, n, want)
		}
	}
}
