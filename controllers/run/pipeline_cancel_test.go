package run_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// TestPipelineEarlyJobCancelledWhenTheStepFails (b): step 1's sysbench exits with a result, step
// 2's Job starts early, and then Job 1 ends Failed (DeadlineExceeded). The failed attempt is
// counted; the reconcile about to create the retry (s01-a1) deletes the early Job instead
// (StepCancelled, naming both) and waits; the retry is not created while the early Job's pod
// still runs sysbench, and is created once the pod is gone (at once when the early Job had no
// pod yet). An early Job whose own sysbench has already exited is not cancelled: its load is over
// and its result stands. Either way the run ends with each step measured once, in order, the
// failed Job kept.
func TestPipelineEarlyJobCancelledWhenTheStepFails(t *testing.T) {
	cases := []struct {
		name string
		// early is the early Job's pod when Job 1 fails: nil for none.
		early func(w *fakeWorld) func(*corev1.Pod) corev1.PodStatus
		// cancelled: the early Job is deleted; waits: the retry then waits for its pod.
		cancelled, waits bool
	}{
		{name: "early pod running sysbench", cancelled: true, waits: true,
			early: func(w *fakeWorld) func(*corev1.Pod) corev1.PodStatus { return w.loadRunning }},
		{name: "early pod pending", cancelled: true, waits: true,
			early: func(*fakeWorld) func(*corev1.Pod) corev1.PodStatus { return loadPending }},
		{name: "early Job without a pod yet", cancelled: true},
		{name: "early pod's sysbench already exited",
			early: func(w *fakeWorld) func(*corev1.Pod) corev1.PodStatus { return w.loadExited(0, runCaptured(w.t)) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, run := startLadder(t, "pc", nil, 1, 2, 4)
			ok := runCaptured(t)
			s1a0, s1a1, s2 := ladderJob(run, 0, 0), ladderJob(run, 0, 1), ladderJob(run, 1, 0)
			w.step(run.Name)
			w.setPod(s1a0, w.loadExited(0, ok))
			if writes := w.step(run.Name); !slices.Equal(writes, []string{"create Job/" + s2}) {
				t.Fatalf("the reconcile after step 1's sysbench exited wrote %v, want Job %s created", writes, s2)
			}
			if tc.early != nil {
				w.setPod(s2, tc.early(w))
			}

			// Job 1 ends Failed after all.
			w.reportDeadline(s1a0)
			w.takeEvents()
			w.step(run.Name)
			ts := targetStatus(w.run(run.Name), ladderTarget)
			if ts.FailedAttempts != 1 || len(ts.Steps) != 0 {
				t.Fatalf("failed attempts %d, steps %s after Job 1 failed; want 1 and none", ts.FailedAttempts, ladderOf(ts.Steps))
			}
			if ev := withReason(w.takeEvents(), "StepFailed"); len(ev) != 1 || !strings.Contains(ev[0], "DeadlineExceeded") {
				t.Errorf("StepFailed Events %v, want one naming DeadlineExceeded", ev)
			}

			// The reconcile that would create the retry.
			writes := w.step(run.Name)
			cancelled := withReason(w.takeEvents(), "StepCancelled")
			if !tc.cancelled {
				if len(cancelled) > 0 || !w.exists(&batchv1.Job{}, s2) {
					t.Fatalf("early Job %s cancelled (%v) although its sysbench had exited", s2, cancelled)
				}
				if !slices.Contains(writes, "create Job/"+s1a1) {
					t.Fatalf("the retry %s was not created at once (wrote %v): the early Job's load is over", s1a1, writes)
				}
			} else {
				if w.exists(&batchv1.Job{}, s2) {
					t.Fatalf("early Job %s still there when the retry is due (wrote %v)", s2, writes)
				}
				if len(cancelled) != 1 || !strings.Contains(cancelled[0], s2) || !strings.Contains(cancelled[0], s1a1) {
					t.Errorf("StepCancelled Events %v, want one naming %s and %s", cancelled, s2, s1a1)
				}
				if w.exists(&batchv1.Job{}, s1a1) {
					t.Fatalf("retry %s created in the reconcile that deleted the early Job", s1a1)
				}
				if c := meta.FindStatusCondition(w.run(run.Name).Status.Conditions, v1.ConditionProgressing); c == nil ||
					c.Reason != v1.ReasonWaiting || !strings.Contains(c.Message, s2) {
					t.Errorf("Progressing %+v while the retry waits, want %s naming %s", c, v1.ReasonWaiting, s2)
				}
				if tc.waits {
					// envtest and the fake world have no garbage collector: the pod stays.
					for i := 0; i < 3; i++ {
						w.step(run.Name)
						if w.exists(&batchv1.Job{}, s1a1) {
							t.Fatalf("retry %s created while the early Job's pod %s is there", s1a1, s2+"-x")
						}
					}
					if !w.podExists(s2) {
						t.Fatalf("the early Job's pod was deleted by the reconciler; it is the garbage collector's")
					}
					w.collectGarbage()
				}
				if writes := w.step(run.Name); !slices.Contains(writes, "create Job/"+s1a1) {
					t.Fatalf("retry %s not created once nothing else runs (wrote %v)", s1a1, writes)
				}
			}

			// The retry runs; step 2 starts early again (or, when its load had ended, stands).
			w.setPod(s1a1, w.loadExited(0, ok))
			w.step(run.Name)
			if !w.exists(&batchv1.Job{}, s2) {
				t.Fatalf("Job %s not there after the retry's sysbench exited", s2)
			}
			w.reportJob(s1a1, true)
			w.step(run.Name)
			if steps := w.steps(run); ladderOf(steps) != "1/2" {
				t.Fatalf("steps %s after the retry completed, want 1/2", ladderOf(steps))
			}
			if !tc.cancelled {
				w.reportJob(s2, true)
			}
			final := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
			if final.Status.Phase != v1.RunSucceeded {
				t.Fatalf("phase %s, want Succeeded; status %+v", final.Status.Phase, final.Status)
			}
			if steps := targetStatus(final, ladderTarget).Steps; ladderOf(steps) != "1/2 2/1 4/1" {
				t.Errorf("steps %s, want 1/2 2/1 4/1 (each once, in order)", ladderOf(steps))
			}
			creates, _, _ := w.counters()
			wantS2 := 1
			if tc.cancelled {
				wantS2 = 2 // created again when its step came
			}
			for k, n := range creates {
				want := 1
				if k == "Job/"+s2 {
					want = wantS2
				}
				if n != want {
					t.Errorf("%s created %d times, want %d", k, n, want)
				}
			}
			if !w.exists(&batchv1.Job{}, s1a0) {
				t.Errorf("the failed Job %s was deleted; failed Jobs are kept", s1a0)
			}
			if n := len(withReason(w.allEvents(), "StepCancelled")); n != map[bool]int{true: 1}[tc.cancelled] {
				t.Errorf("%d StepCancelled Events over the run", n)
			}
		})
	}
}

// TestPipelineNoEarlyJobAfterAFailedLoad (c): a step whose sysbench ended without a usable
// result (an error exit, an error line after the final report, no final report, an unreadable
// one, killed after it) starts nothing early. When its Job is reported, the failed attempt is
// counted and the retry is created at once (no other load runs), and the next step only after
// the retry's result.
func TestPipelineNoEarlyJobAfterAFailedLoad(t *testing.T) {
	cases := []struct {
		name     string
		exitCode int32
		message  func(t *testing.T) string
	}{
		{"exit 1, MySQL error 1146", 1, func(t *testing.T) string { return captured(t, "run_not_prepared_1146.txt") }},
		{"exit 0 with an error line after the final report", 0, func(t *testing.T) string {
			return runCaptured(t) + "FATAL: mysql_stmt_execute() returned error 1213 (Deadlock found when trying to get lock; try restarting transaction)\n"
		}},
		{"exit 0 without a final report", 0, func(*testing.T) string { return "sysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta2)\n" }},
		{"exit 0 with an unreadable final report", 0, func(t *testing.T) string {
			return strings.TrimSuffix(runCaptured(t), "\n")[:120] + "\n"
		}},
		{"killed after its final report", 137, runCaptured},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, run := startLadder(t, "pf", nil, 1, 2)
			s1a0, s1a1, s2 := ladderJob(run, 0, 0), ladderJob(run, 0, 1), ladderJob(run, 1, 0)
			w.step(run.Name)
			w.setPod(s1a0, w.loadRunning)
			w.setPod(s1a0, w.loadExited(tc.exitCode, tc.message(t)))
			w.quiet(run.Name, 3, "step 1's sysbench ended without a result, Job 1 not reported")
			if w.exists(&batchv1.Job{}, s2) {
				t.Fatalf("Job %s created after step 1's sysbench ended without a result", s2)
			}

			w.reportJob(s1a0, tc.exitCode == 0)
			w.step(run.Name)
			if ts := targetStatus(w.run(run.Name), ladderTarget); ts.FailedAttempts != 1 || len(ts.Steps) != 0 {
				t.Fatalf("failed attempts %d, steps %s; want 1 and none", ts.FailedAttempts, ladderOf(ts.Steps))
			}
			if writes := w.step(run.Name); !slices.Equal(writes, []string{"create Job/" + s1a1}) {
				t.Fatalf("the reconcile after the failed attempt wrote %v, want the retry %s created", writes, s1a1)
			}
			if w.exists(&batchv1.Job{}, s2) {
				t.Fatalf("Job %s created beside the retry", s2)
			}
			final := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
			if steps := targetStatus(final, ladderTarget).Steps; final.Status.Phase != v1.RunSucceeded || ladderOf(steps) != "1/2 2/1" {
				t.Errorf("run %s with steps %s, want Succeeded with 1/2 2/1", final.Status.Phase, ladderOf(steps))
			}
			if twice := w.createdTwice(); len(twice) > 0 {
				t.Errorf("created more than once: %v", twice)
			}
			if tc.exitCode != 0 && !w.exists(&batchv1.Job{}, s1a0) {
				// (A Complete Job whose result failed: TestBatchKeepsTheAttemptsThatFailed.)
				t.Errorf("the failed Job %s was deleted; failed Jobs are kept", s1a0)
			}
		})
	}
}

// TestPipelineNothingEarlyOutsideTheLadder (d): the probe, prepare and warm-up Jobs start no
// ladder Job (nor anything else) when their sysbench has exited and their Job is not reported
// yet; the first ladder Job is created only once the warm-up is recorded. The last step of the
// ladder starts nothing either, with repetitions too (where the step before it starts the next
// repetition's first step early).
func TestPipelineNothingEarlyOutsideTheLadder(t *testing.T) {
	t.Run("probe, prepare, warm-up", func(t *testing.T) {
		t.Parallel()
		w := newFakeWorld(t)
		run := fakeRun("po", 1, 2)
		run.Spec.Targets = run.Spec.Targets[:1]
		run.Spec.Ladder.Warmup = &metav1.Duration{Duration: 5 * time.Second}
		w.create(run)
		ok := succeedAll(t)
		for _, phase := range []string{"probe", "prepare", "warmup"} {
			name := specs.JobName(run, ladderTarget, phase, specs.Attempt{})
			for i := 0; !w.exists(&batchv1.Job{}, name); i++ {
				if i == 20 {
					t.Fatalf("no %s Job after 20 reconciles; status %+v", phase, w.run(run.Name).Status)
				}
				w.step(run.Name)
				w.startServers()
			}
			jobs := w.jobNames()
			w.setPod(name, w.loadRunning)
			w.setPod(name, w.loadExited(0, ok(w.job(name)).message))
			w.quiet(run.Name, 3, "the "+phase+" sysbench exited, its Job not reported")
			if now := w.jobNames(); !slices.Equal(now, jobs) {
				t.Fatalf("Jobs %v after the %s sysbench exited, want %v", now, phase, jobs)
			}
			w.reportJob(name, true)
		}
		w.step(run.Name) // the warm-up is recorded
		if ts := targetStatus(w.run(run.Name), ladderTarget); ts.Phase != v1.TargetRunning {
			t.Fatalf("target %s after the warm-up, want Running", ts.Phase)
		}
		if writes := w.step(run.Name); !slices.Equal(writes, []string{"create Job/" + ladderJob(run, 0, 0)}) {
			t.Errorf("the ladder's first reconcile wrote %v, want its first Job created", writes)
		}
	})

	for _, tc := range []struct {
		name        string
		threads     []int32
		repetitions int32
		want        []string // the ladder's Jobs, in order
	}{
		{"one step", []int32{1}, 1, []string{"pz-mariadb-s01-a0"}},
		{"one rung, two repetitions", []int32{1}, 2, []string{"pz-mariadb-s01-a0", "pz-mariadb-r2s01-a0"}},
	} {
		t.Run("last step: "+tc.name, func(t *testing.T) {
			t.Parallel()
			w, run := startLadder(t, "pz", func(r *v1.BenchmarkRun) { r.Spec.Repetitions = ptr.To(tc.repetitions) }, tc.threads...)
			ok := runCaptured(t)
			w.step(run.Name)
			for i, name := range tc.want {
				if !w.exists(&batchv1.Job{}, name) {
					t.Fatalf("no Job %s for step %d", name, i+1)
				}
				w.setPod(name, w.loadExited(0, ok))
				writes := w.step(run.Name)
				if i+1 < len(tc.want) {
					if !slices.Equal(writes, []string{"create Job/" + tc.want[i+1]}) {
						t.Fatalf("step %d's sysbench exited: wrote %v, want Job %s created", i+1, writes, tc.want[i+1])
					}
				} else {
					if len(writes) > 0 {
						t.Fatalf("the last step's sysbench exited: wrote %v, want nothing", writes)
					}
					w.quiet(run.Name, 2, "the last step's sysbench exited")
				}
				w.reportJob(name, true)
				w.step(run.Name)
			}
			final := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
			if steps := targetStatus(final, ladderTarget).Steps; final.Status.Phase != v1.RunSucceeded || len(steps) != len(tc.want) {
				t.Errorf("run %s with steps %s, want Succeeded with %d", final.Status.Phase, ladderOf(steps), len(tc.want))
			}
			if twice := w.createdTwice(); len(twice) > 0 {
				t.Errorf("created more than once: %v", twice)
			}
		})
	}
}
