package controllers_test

// The ladder's pipeline and the batched release of finished Jobs (issue #16).
//
// The next ladder step's Job is created as soon as the current step's sysbench container has
// terminated with exit code 0 and a valid final result, before the Job is reported Complete; the
// current step is recorded only from its Job's Complete condition. If the current step then
// fails, the early Job is deleted (StepCancelled) and the retry waits until no other load of the
// target runs. Finished Jobs are deleted in batches (every 8 recorded ladder steps, and at the
// target's end) with one deletecollection, after their per-second series are stored in the
// results ConfigMap with one write; failed Jobs, and a completed ladder Job whose step is not
// recorded yet, are kept.
//
// The fake world (fakeworld_test.go) plays the kubelet and the Job controller one write at a
// time: the test decides when a sysbench container ends and when its Job is reported. Only the
// deletecollection's field selector is checked against a real API server as well
// (TestBatchDeletionOnAnAPIServer): the fake client ignores field selectors in DeleteAllOf, and
// the fake world's stand-in applies them as the API server documents.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// ladderTarget is the one target of the runs here (baseRun's first).
const ladderTarget = "mariadb"

// startLadder creates a one-target run at threads in the fake world (edit changes its spec
// first) and drives it to its ladder: probe and prepare done, no ladder Job created yet.
func startLadder(t *testing.T, name string, edit func(*v1.BenchmarkRun), threads ...int32) (*fakeWorld, *v1.BenchmarkRun) {
	t.Helper()
	w := newFakeWorld(t)
	run := fakeRun(name, threads...)
	run.Spec.Targets = run.Spec.Targets[:1]
	if edit != nil {
		edit(run)
	}
	w.create(run)
	w.drive(run.Name, succeedAll(t), "the ladder", func(r *v1.BenchmarkRun) bool {
		return targetStatus(r, ladderTarget).Phase == v1.TargetRunning
	})
	for _, j := range w.jobNames() {
		if w.job(j).Labels[specs.LabelStep] != "probe" && w.job(j).Labels[specs.LabelStep] != "prepare" {
			t.Fatalf("Job %s exists before the ladder's first reconcile", j)
		}
	}
	return w, run
}

// ladderJob names the Job of step i (in measuring order) of the target at its failed-th attempt.
func ladderJob(run *v1.BenchmarkRun, i int, failed int32) string {
	rung, rep := run.Spec.LadderPosition(i)
	return specs.JobName(run, ladderTarget, specs.LadderStep(rung, rep), specs.Attempt{Failed: failed})
}

// jobNames lists the Jobs on the API server, sorted.
func (w *fakeWorld) jobNames() []string {
	w.t.Helper()
	jobs := &batchv1.JobList{}
	if err := w.api.List(w.ctx, jobs, client.InNamespace(fakeNS)); err != nil {
		w.t.Fatal(err)
	}
	var names []string
	for _, j := range jobs.Items {
		names = append(names, j.Name)
	}
	sort.Strings(names)
	return names
}

// job reads a Job from the API server.
func (w *fakeWorld) job(name string) *batchv1.Job {
	w.t.Helper()
	job := &batchv1.Job{}
	if err := w.api.Get(w.ctx, client.ObjectKey{Namespace: fakeNS, Name: name}, job); err != nil {
		w.t.Fatalf("get Job %s: %v", name, err)
	}
	return job
}

// setPod plays the Job controller and the kubelet for Job job: its pod (created if it has none)
// gets the status that status makes of it. The Job itself is left as it is.
func (w *fakeWorld) setPod(job string, status func(*corev1.Pod) corev1.PodStatus) {
	w.t.Helper()
	pod := jobPodOf(w.job(job))
	err := w.api.Get(w.ctx, client.ObjectKeyFromObject(pod), pod)
	if apierrors.IsNotFound(err) {
		pod = w.create(jobPodOf(w.job(job))).(*corev1.Pod)
	} else if err != nil {
		w.t.Fatal(err)
	}
	pod.Status = status(pod)
	if err := w.api.Status().Update(w.ctx, pod); err != nil {
		w.t.Fatal(err)
	}
}

// podExists says whether Job job's pod is on the API server.
func (w *fakeWorld) podExists(job string) bool {
	w.t.Helper()
	return w.exists(&corev1.Pod{}, job+"-x")
}

// loadPending is a pod the scheduler has not placed yet: nothing of it has run.
func loadPending(*corev1.Pod) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodPending}
}

// loadRunning is a pod whose sysbench container runs: load on the server.
func (w *fakeWorld) loadRunning(pod *corev1.Pod) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: specs.SysbenchContainer, Image: pod.Spec.Containers[0].Image, Started: ptr.To(true),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(w.clock.Now().Truncate(time.Second))}},
	}}}
}

// loadExited is a pod whose sysbench container terminated now with exitCode and message.
func (w *fakeWorld) loadExited(exitCode int32, message string) func(*corev1.Pod) corev1.PodStatus {
	return func(pod *corev1.Pod) corev1.PodStatus {
		end := metav1.NewTime(w.clock.Now().Truncate(time.Second))
		return terminatedStatus(pod, exitCode, message, metav1.NewTime(end.Add(-3*time.Second)), end)
	}
}

// reportJob plays the Job controller once the pod has ended: Job name gets its final conditions,
// Complete or Failed (backoff limit).
func (w *fakeWorld) reportJob(name string, complete bool) {
	w.t.Helper()
	job := w.job(name)
	end := metav1.NewTime(w.clock.Now().Truncate(time.Second))
	job.Status = testenv.FinishedJobStatus(complete, job.CreationTimestamp, end)
	if err := w.api.Status().Update(w.ctx, job); err != nil {
		w.t.Fatal(err)
	}
}

// reportDeadline plays the Job controller ending Job name at its activeDeadlineSeconds.
func (w *fakeWorld) reportDeadline(name string) {
	w.t.Helper()
	job := w.job(name)
	end := metav1.NewTime(w.clock.Now().Truncate(time.Second))
	msg := "Job was active longer than specified deadline"
	job.Status = batchv1.JobStatus{StartTime: &job.CreationTimestamp, Failed: 1, Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonDeadlineExceeded, Message: msg, LastTransitionTime: end},
		{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonDeadlineExceeded, Message: msg, LastTransitionTime: end},
	}}
	if err := w.api.Status().Update(w.ctx, job); err != nil {
		w.t.Fatal(err)
	}
}

// steps are the target's recorded steps, as the API server has them.
func (w *fakeWorld) steps(run *v1.BenchmarkRun) []v1.StepResult {
	return targetStatus(w.run(run.Name), ladderTarget).Steps
}

// step reconciles once (after moving the clock a second, as events come) and returns the writes
// that reconcile made.
func (w *fakeWorld) step(name string) []string {
	w.t.Helper()
	w.clock.Step(time.Second)
	before := len(w.writeLog())
	w.mustReconcile(name)
	return w.writeLog()[before:]
}

// quiet reconciles n times (the pod and Job events that come while nothing is due) and fails the
// test if any of them wrote anything or recorded an Event.
func (w *fakeWorld) quiet(name string, n int, when string) {
	w.t.Helper()
	w.takeEvents()
	var writes []string
	for i := 0; i < n; i++ {
		writes = append(writes, w.step(name)...)
	}
	if len(writes) > 0 {
		w.t.Errorf("%s: %d reconciles wrote %v, want nothing", when, n, writes)
	}
	if ev := w.takeEvents(); len(ev) > 0 {
		w.t.Errorf("%s: reconciles recorded Events %v, want none", when, ev)
	}
}

// ladderOf summarizes recorded steps as "threads/attempts" in order.
func ladderOf(steps []v1.StepResult) string {
	var parts []string
	for _, s := range steps {
		parts = append(parts, fmt.Sprintf("%d/%d", s.Threads, s.Attempts))
	}
	return strings.Join(parts, " ")
}

func runCaptured(t *testing.T) string { return captured(t, "run_point_select_t4.termination-log") }

// TestPipelineNextStepStartsWhenTheLoadEnds (a, d): while step 1's sysbench runs nothing else
// starts; once it has exited with a result, the next reconcile creates step 2's Job (pl-mariadb-
// s02-a0), and that is all it writes: step 1 is not recorded before its Job is reported Complete.
// The reconciles that follow while the Job controller has not reported step 1 yet write nothing
// and create nothing again. Once Job 1 is Complete, step 1 is recorded from it (its start and
// completion times), with one status write. The last step starts nothing after it, and the run
// ends with every step measured once, in order, with its series. (Step 2's pod starts here after
// Job 1 is reported; TestPipelineEarlyJobsOwnPodIsNotWaitedFor has it start before.)
func TestPipelineNextStepStartsWhenTheLoadEnds(t *testing.T) {
	w, run := startLadder(t, "pl", nil, 1, 2, 4)
	ok := runCaptured(t)
	s1, s2, s3 := ladderJob(run, 0, 0), ladderJob(run, 1, 0), ladderJob(run, 2, 0)
	if s2 != "pl-mariadb-s02-a0" {
		t.Fatalf("step 2's Job is named %s, want pl-mariadb-s02-a0", s2)
	}

	if writes := w.step(run.Name); !slices.Equal(writes, []string{"create Job/" + s1}) {
		t.Fatalf("the ladder's first reconcile wrote %v, want Job %s created", writes, s1)
	}
	w.setPod(s1, w.loadRunning)
	w.quiet(run.Name, 2, "step 1's sysbench running")
	if w.exists(&batchv1.Job{}, s2) {
		t.Fatalf("Job %s created while step 1's sysbench runs", s2)
	}

	// Step 1's sysbench exits with its result; the Job controller has not reported the Job.
	w.setPod(s1, w.loadExited(0, ok))
	if writes := w.step(run.Name); !slices.Equal(writes, []string{"create Job/" + s2}) {
		t.Fatalf("the reconcile after step 1's sysbench exited wrote %v, want only Job %s created", writes, s2)
	}
	if got := w.job(s2); got.Labels[specs.LabelStep] != "s02" {
		t.Errorf("Job %s has step label %q, want s02", s2, got.Labels[specs.LabelStep])
	}
	if steps := w.steps(run); len(steps) != 0 {
		t.Fatalf("step 1 recorded before its Job was reported Complete: %+v", steps)
	}

	// The Job controller has not reported step 1's Job yet: the events that come meanwhile
	// bring reconciles, which have nothing to do.
	w.quiet(run.Name, 2, "step 2's Job created, Job 1 not reported yet")

	// Job 1 is reported Complete: step 1 is recorded, with its Job's times.
	w.reportJob(s1, true)
	if writes := w.step(run.Name); !slices.Equal(writes, []string{"patch status BenchmarkRun/" + run.Name}) {
		t.Errorf("the reconcile after Job 1 completed wrote %v, want the status write recording step 1", writes)
	}
	got := w.run(run.Name)
	steps := targetStatus(got, ladderTarget).Steps
	if len(steps) != 1 || steps[0].Threads != 1 || steps[0].Attempts != 1 {
		t.Fatalf("steps %s after Job 1 completed, want 1/1", ladderOf(steps))
	}
	job1 := w.job(s1)
	if !steps[0].StartTime.Equal(job1.Status.StartTime) || !steps[0].FinishTime.Equal(job1.Status.CompletionTime) {
		t.Errorf("step 1 from %v to %v, want its Job's %v to %v", steps[0].StartTime, steps[0].FinishTime,
			job1.Status.StartTime, job1.Status.CompletionTime)
	}
	if got.Status.CurrentStep != "2/3 (2 threads)" {
		t.Errorf("currentStep %q, want 2/3 (2 threads)", got.Status.CurrentStep)
	}
	w.setPod(s2, loadPending)
	w.quiet(run.Name, 1, "step 2's pod created, step 1 recorded")
	w.setPod(s2, w.loadRunning)
	w.quiet(run.Name, 2, "step 2 running, step 1 recorded")
	if c := meta.FindStatusCondition(w.run(run.Name).Status.Conditions, v1.ConditionProgressing); c == nil || c.Reason != v1.ReasonRunning {
		t.Errorf("Progressing %+v while step 2 runs, want reason %s", c, v1.ReasonRunning)
	}

	// Step 2 likewise.
	w.setPod(s2, w.loadExited(0, ok))
	if writes := w.step(run.Name); !slices.Equal(writes, []string{"create Job/" + s3}) {
		t.Fatalf("the reconcile after step 2's sysbench exited wrote %v, want only Job %s created", writes, s3)
	}
	w.reportJob(s2, true)
	w.step(run.Name)
	if steps := w.steps(run); ladderOf(steps) != "1/1 2/1" {
		t.Fatalf("steps %s, want 1/1 2/1", ladderOf(steps))
	}

	// Step 3 is the last: its exit starts nothing.
	w.setPod(s3, w.loadRunning)
	w.setPod(s3, w.loadExited(0, ok))
	jobs := w.jobNames()
	w.quiet(run.Name, 3, "the last step's sysbench exited, its Job not reported yet")
	if now := w.jobNames(); !slices.Equal(now, jobs) {
		t.Errorf("Jobs %v after the last step's sysbench exited, want %v (nothing after the last step)", now, jobs)
	}
	if steps := w.steps(run); len(steps) != 2 {
		t.Fatalf("steps %s before Job 3 completed, want 2", ladderOf(steps))
	}
	w.reportJob(s3, true)
	w.step(run.Name)

	final := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
	if final.Status.Phase != v1.RunSucceeded {
		t.Fatalf("phase %s, want Succeeded; status %+v", final.Status.Phase, final.Status)
	}
	if steps := targetStatus(final, ladderTarget).Steps; ladderOf(steps) != "1/1 2/1 4/1" {
		t.Errorf("steps %s, want 1/1 2/1 4/1 (each once, in order)", ladderOf(steps))
	}
	if twice := w.createdTwice(); len(twice) > 0 {
		t.Errorf("created more than once: %v", twice)
	}
	if n := seriesInResults(t, w, final); n != 3 {
		t.Errorf("results.json carries %d per-second series, want 3", n)
	}
	if ev := withReason(w.allEvents(), "StepCancelled"); len(ev) > 0 {
		t.Errorf("StepCancelled Events in a run without failures: %v", ev)
	}
}

// TestPipelineEarlyJobsOwnPodIsNotWaitedFor (a): in a cluster the Job controller creates the
// early Job's pod, and the kubelet starts it, before the current Job is reported Complete (that
// report is the two seconds the pipeline saves). That pod is the load the pipeline started, not
// another one: the reconciles its events bring meanwhile write nothing (no Progressing
// WaitingForServer "waits for Job <that very Job> (not in the cache yet)", no status write per
// step on top of the step's own) and delete nothing; Job 1's report then records step 1 with the
// step's one status write.
func TestPipelineEarlyJobsOwnPodIsNotWaitedFor(t *testing.T) {
	w, run := startLadder(t, "pw", nil, 1, 2)
	s1, s2 := ladderJob(run, 0, 0), ladderJob(run, 1, 0)
	w.step(run.Name)
	w.setPod(s1, w.loadExited(0, runCaptured(t)))
	if writes := w.step(run.Name); !slices.Equal(writes, []string{"create Job/" + s2}) {
		t.Fatalf("the reconcile after step 1's sysbench exited wrote %v, want only Job %s created", writes, s2)
	}
	w.setPod(s2, loadPending)
	w.quiet(run.Name, 1, "the early Job's pod created, Job 1 not reported yet")
	w.setPod(s2, w.loadRunning)
	w.quiet(run.Name, 2, "the early Job's sysbench running, Job 1 not reported yet")
	if c := meta.FindStatusCondition(w.run(run.Name).Status.Conditions, v1.ConditionProgressing); c == nil || c.Reason != v1.ReasonRunning {
		t.Errorf("Progressing %+v while step 2 runs early, want reason %s", c, v1.ReasonRunning)
	}
	if !w.podExists(s2) {
		t.Fatalf("the early Job's pod was deleted")
	}
	w.reportJob(s1, true)
	if writes := w.step(run.Name); !slices.Equal(writes, []string{"patch status BenchmarkRun/" + run.Name}) {
		t.Errorf("the reconcile after Job 1 completed wrote %v, want the status write recording step 1", writes)
	}
	w.setPod(s2, w.loadExited(0, runCaptured(t)))
	w.reportJob(s2, true)
	final := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
	if steps := targetStatus(final, ladderTarget).Steps; final.Status.Phase != v1.RunSucceeded || ladderOf(steps) != "1/1 2/1" {
		t.Errorf("run %s with steps %s, want Succeeded with 1/1 2/1", final.Status.Phase, ladderOf(steps))
	}
	if twice := w.createdTwice(); len(twice) > 0 {
		t.Errorf("created more than once: %v", twice)
	}
}

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

// TestBatchReleaseEveryEightSteps (e): a ladder of 10 steps whose step 3 fails once. Nothing is
// stored or deleted until 8 steps are recorded; then the reconcile that creates the next Job
// first stores the 8 series with one update of the results ConfigMap and deletes the 8 ladder
// Jobs with the probe and prepare ones in one deletecollection: the failed Job s03-a0 (same step
// label as the completed s03-a1) and the Jobs of steps not recorded yet survive, a Complete one
// included. At the target's end the rest go with one more update and deletecollection; the failed
// Job stays. "reported with its pod" has the Job controller report each Job with its pod's end
// (the batch comes before the 9th Job); "pipelined" starts each next step early (the batch comes
// before the 10th Job, the 9th's reported Complete just before the batch lists the Jobs).
func TestBatchReleaseEveryEightSteps(t *testing.T) {
	threads := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, pipelined := range []bool{false, true} {
		name := "reported with its pod"
		if pipelined {
			name = "pipelined"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w, run := startLadder(t, "bt", nil, threads...)
			ok, notPrepared := runCaptured(t), captured(t, "run_not_prepared_1146.txt")
			results := "ConfigMap/" + specs.ResultsConfigMapName(run)
			probe := specs.JobName(run, ladderTarget, "probe", specs.Attempt{})
			prepare := specs.JobName(run, ladderTarget, "prepare", specs.Attempt{})
			s3a0, s9, s10 := ladderJob(run, 2, 0), ladderJob(run, 8, 0), ladderJob(run, 9, 0)
			batchAt := s9 // the Job whose creation comes with the first batch
			if pipelined {
				batchAt = s10
			}
			var batch []string // the writes of the reconcile that created batchAt
			check := func(writes []string) {
				t.Helper()
				if slices.Contains(writes, "create Job/"+batchAt) {
					batch = writes
					return
				}
				for _, wr := range writes {
					if batch == nil && (wr == "update "+results || strings.HasPrefix(wr, "deletecollection ")) {
						t.Fatalf("%s with %d steps recorded (before Job %s): %v", wr, len(w.steps(run)), batchAt, writes)
					}
				}
			}

			for i := range threads {
				var failed int32
				if i == 2 {
					// Step 3's first attempt fails: its Job is kept for its log.
					if !w.exists(&batchv1.Job{}, s3a0) {
						check(w.step(run.Name))
					}
					w.setPod(s3a0, w.loadExited(1, notPrepared))
					check(w.step(run.Name))
					w.reportJob(s3a0, false)
					check(w.step(run.Name))
					failed = 1
				}
				job := ladderJob(run, i, failed)
				if !w.exists(&batchv1.Job{}, job) {
					check(w.step(run.Name))
				}
				if !w.exists(&batchv1.Job{}, job) {
					t.Fatalf("no Job %s for step %d", job, i+1)
				}
				w.setPod(job, w.loadRunning)
				if pipelined {
					w.setPod(job, w.loadExited(0, ok))
					if i == 8 {
						// The Job controller reports Job 9 Complete while the reconcile that
						// starts step 10 early runs: after it read Job 9, before it lists the
						// target's Jobs.
						w.onCacheList(func(l client.ObjectList) {
							if _, isJobs := l.(*batchv1.JobList); isJobs {
								w.onCacheList(nil)
								w.reportJob(s9, true)
							}
						})
					}
					check(w.step(run.Name))
					w.onCacheList(nil)
					if i == 8 {
						if batch == nil {
							t.Fatalf("no batch when step 9's sysbench exited with 8 steps recorded (steps %s, Jobs %v)",
								ladderOf(w.steps(run)), w.jobNames())
						}
						if n := len(w.steps(run)); n != 8 {
							t.Fatalf("%d steps recorded in the reconcile that started step 10 early, want 8", n)
						}
					} else {
						w.reportJob(job, true)
					}
				} else {
					w.setPod(job, w.loadExited(0, ok))
					w.reportJob(job, true)
				}
				check(w.step(run.Name))
				if n := len(w.steps(run)); n != i+1 {
					t.Fatalf("%d steps recorded after Job %s completed, want %d", n, job, i+1)
				}
			}

			w.drive(run.Name, succeedAll(t), "the target's end", func(r *v1.BenchmarkRun) bool {
				return targetStatus(r, ladderTarget).Released
			})

			// The first batch.
			if batch == nil {
				t.Fatalf("no batch before Job %s", batchAt)
			}
			want := []string{"update " + results, "deletecollection Job", "create Job/" + batchAt}
			if !slices.Equal(batch, want) {
				t.Errorf("the reconcile that created Job %s wrote %v, want %v", batchAt, batch, want)
			}
			w.mu.Lock()
			collections := slices.Clone(w.collections)
			w.mu.Unlock()
			if len(collections) != 2 {
				t.Fatalf("%d deletecollections, want 2 (the batch and the target's end)", len(collections))
			}
			wantDeleted := []string{prepare, probe}
			for i := range 8 {
				wantDeleted = append(wantDeleted, ladderJob(run, i, map[bool]int32{true: 1}[i == 2]))
			}
			sort.Strings(wantDeleted)
			if got := slices.Sorted(slices.Values(collections[0])); !slices.Equal(got, wantDeleted) {
				t.Errorf("the batch deleted %v, want %v", got, wantDeleted)
			}

			// The target's end: the rest, the failed Job kept.
			if got := slices.Sorted(slices.Values(collections[1])); !slices.Equal(got, []string{s9, s10}) {
				t.Errorf("the target's end deleted %v, want %v", got, []string{s9, s10})
			}
			if got := w.jobNames(); !slices.Equal(got, []string{s3a0}) {
				t.Errorf("Jobs left after the target's end %v, want the failed %s only", got, s3a0)
			}
			final := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
			if steps := targetStatus(final, ladderTarget).Steps; final.Status.Phase != v1.RunSucceeded ||
				ladderOf(steps) != "1/1 2/1 3/2 4/1 5/1 6/1 7/1 8/1 9/1 10/1" {
				t.Errorf("run %s with steps %s, want Succeeded with each step once, step 3 in 2 attempts", final.Status.Phase, ladderOf(steps))
			}
			if n := seriesInResults(t, w, final); n != len(threads) {
				t.Errorf("results.json carries %d per-second series, want %d", n, len(threads))
			}
			updates := 0
			for _, wr := range w.writeLog() {
				if wr == "update "+results {
					updates++
				}
			}
			if updates != 3 {
				t.Errorf("%d updates of the results ConfigMap, want 3 (two batches, then the results)", updates)
			}
			if twice := w.createdTwice(); len(twice) > 0 {
				t.Errorf("created more than once: %v", twice)
			}
		})
	}

	t.Run("the first batch stores 8 series", func(t *testing.T) {
		t.Parallel()
		w, run := startLadder(t, "bs", nil, threads...)
		ok := runCaptured(t)
		for i := range 8 {
			job := ladderJob(run, i, 0)
			w.step(run.Name)
			w.setPod(job, w.loadExited(0, ok))
			w.reportJob(job, true)
			w.step(run.Name)
		}
		cm := &corev1.ConfigMap{}
		if !w.exists(cm, specs.ResultsConfigMapName(run)) {
			t.Fatal("no results ConfigMap")
		}
		if len(cm.Data) != 0 {
			t.Fatalf("results ConfigMap holds %v with 8 steps recorded and no Job after them, want nothing yet", keys(cm.Data))
		}
		w.step(run.Name) // the 9th Job, after the batch
		if !w.exists(cm, specs.ResultsConfigMapName(run)) {
			t.Fatal("no results ConfigMap")
		}
		var want []string
		for _, th := range threads[:8] {
			want = append(want, report.SeriesKey(ladderTarget, th, 1), report.ServerKey(ladderTarget, th, 1))
		}
		slices.Sort(want)
		if got := slices.Sorted(slices.Values(keys(cm.Data))); !slices.Equal(got, want) {
			t.Errorf("results ConfigMap keys %v, want the 8 steps' series and server counters %v", got, want)
		}
		for k, v := range cm.Data {
			if !json.Valid([]byte(v)) || len(v) < 10 {
				t.Errorf("%s is %q", k, v)
			}
		}
		for _, th := range threads[:8] {
			if _, err := results.DecodeServer(cm.Data[report.ServerKey(ladderTarget, th, 1)]); err != nil {
				t.Errorf("server counters of %d threads: %v", th, err)
			}
		}
	})
}

// TestBatchKeepsTheAttemptsThatFailed (e): a step whose first attempt's sysbench exited 0 without
// a usable result (no final report, an error line after it, an unreadable one) has a Job the Job
// controller reports Complete, though the attempt failed and the status holds the retry's result.
// Only Jobs whose result the status holds are released: the batch reads the step's series from
// the retry's log only (the failed attempt's log is never read into the results) and keeps the
// failed attempt's Job for its log.
func TestBatchKeepsTheAttemptsThatFailed(t *testing.T) {
	for _, tc := range []struct{ name, message string }{
		{"no final report", "sysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta2)\n"},
		{"an error line after the final report", "{\"type\":\"final\",\"version\":1,\"command\":\"run\",\"threads\":1}\n" +
			"FATAL: mysql_stmt_execute() returned error 1213 (Deadlock found when trying to get lock; try restarting transaction)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, run := startLadder(t, "bk", nil, 1, 2)
			s1a0, s1a1 := ladderJob(run, 0, 0), ladderJob(run, 0, 1)
			// The failed attempt's log differs from every other pod's.
			w.setPodLog(s1a0+"-x", captured(t, "run_read_write_t2.txt"))
			w.step(run.Name)
			w.setPod(s1a0, w.loadExited(0, tc.message))
			w.reportJob(s1a0, true)
			w.step(run.Name)
			if ts := targetStatus(w.run(run.Name), ladderTarget); ts.FailedAttempts != 1 {
				t.Fatalf("failed attempts %d after Job %s, want 1", ts.FailedAttempts, s1a0)
			}
			final := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
			if steps := targetStatus(final, ladderTarget).Steps; final.Status.Phase != v1.RunSucceeded || ladderOf(steps) != "1/2 2/1" {
				t.Fatalf("run %s with steps %s, want Succeeded with 1/2 2/1", final.Status.Phase, ladderOf(steps))
			}
			if n := w.podLogReads(s1a0 + "-x"); n != 0 {
				t.Errorf("the log of %s, whose result the status does not hold, was read %d times for step 1's series "+
					"(the series key of step 1 gets whichever of %s and %s the Job list has last)", s1a0, n, s1a0, s1a1)
			}
			if n := w.podLogReads(s1a1 + "-x"); n != 1 {
				t.Errorf("the log of %s, the recorded attempt, was read %d times, want once", s1a1, n)
			}
			if !w.exists(&batchv1.Job{}, s1a0) {
				t.Errorf("Job %s, whose attempt failed, was deleted with the released Jobs; Jobs left %v", s1a0, w.jobNames())
			}
		})
	}
}

// TestBatchWritesPerLadderStep (e): over a 10-step ladder run with the pipeline, the API writes
// the ladder costs, the Job creations, the status writes that record the steps, and the batched
// series writes and deletecollections (at 8 steps and at the target's end), are at most 3 per step
// (issue #16), with exactly one status write per step. Each step's pod goes pending, running,
// exited, with a reconcile after each change, as its events would bring. "next pod after the
// report": the Job controller reports the current Job before the next step's pod appears; "next
// pod first": it creates and starts the next step's pod first, as in a cluster, where reporting
// the Job takes about two seconds.
func TestBatchWritesPerLadderStep(t *testing.T) {
	threads := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, nextPodFirst := range []bool{false, true} {
		name := "next pod after the report"
		if nextPodFirst {
			name = "next pod first"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w, run := startLadder(t, "bw", nil, threads...)
			ok := runCaptured(t)
			results := "ConfigMap/" + specs.ResultsConfigMapName(run)
			start := len(w.writeLog())
			w.takeEvents()
			w.step(run.Name)
			startPod := func(job string) {
				w.setPod(job, loadPending)
				w.step(run.Name)
				w.setPod(job, w.loadRunning)
				w.step(run.Name)
			}
			for i := range threads {
				job := ladderJob(run, i, 0)
				if i == 0 || !nextPodFirst {
					startPod(job)
				}
				w.setPod(job, w.loadExited(0, ok))
				w.step(run.Name)
				if i+1 < len(threads) {
					if !w.exists(&batchv1.Job{}, ladderJob(run, i+1, 0)) {
						t.Fatalf("Job %s not created early", ladderJob(run, i+1, 0))
					}
					if nextPodFirst {
						startPod(ladderJob(run, i+1, 0))
					}
				}
				w.reportJob(job, true)
				w.step(run.Name)
				if n := len(w.steps(run)); n != i+1 {
					t.Fatalf("%d steps recorded after Job %s completed, want %d", n, job, i+1)
				}
			}
			ladder := w.writeLog()[start:]
			events := w.takeEvents()
			mid := len(w.writeLog())
			w.drive(run.Name, succeedAll(t), "the target's end", func(r *v1.BenchmarkRun) bool { return targetStatus(r, ladderTarget).Released })
			var batches []string
			for _, wr := range w.writeLog()[mid:] {
				if wr == "update "+results || strings.HasPrefix(wr, "deletecollection ") {
					batches = append(batches, wr)
				}
			}
			tally := map[string]int{}
			for _, wr := range append(slices.Clone(ladder), batches...) {
				verb, what, _ := strings.Cut(wr, " ")
				if i := strings.LastIndex(what, "/"); i >= 0 && verb != "patch" {
					what = what[:i]
				}
				tally[verb+" "+what]++
			}
			total := len(ladder) + len(batches) + len(events)
			perStep := float64(total) / float64(len(threads))
			t.Logf("%d ladder steps: %d writes (%v), %d Events: %.2f writes per step", len(threads), total, tally, len(events), perStep)
			if perStep > 3 {
				t.Errorf("%.2f API writes per ladder step, want at most 3: %v, Events %v", perStep, tally, events)
			}
			if n := tally["patch status BenchmarkRun/"+run.Name]; n != len(threads) {
				t.Errorf("%d status writes over the ladder, want %d (one recording each step): %v", n, len(threads), ladder)
			}
			if tally["create Job"] != len(threads) || tally["update ConfigMap"] != 2 || tally["deletecollection Job"] != 2 || len(events) > 0 {
				t.Errorf("writes %v and Events %v, want %d Job creations, 2 results updates and 2 deletecollections, no Event",
					tally, events, len(threads))
			}
		})
	}
}

// TestPipelineCacheLagDeletesNothing (f): step 2's Job exists on the API server but the cache
// has not shown it yet, while it shows its pod (the Job and pod informers are independent). No
// reconcile takes the pod for the leftover of a deleted Job (a pending pod that has not started
// is what would be deleted) and none creates the Job again; once the cache shows the Job, the run
// goes on. With neither the Job nor its pod in the cache, the create finds the Job the API server
// has and creates nothing either.
func TestPipelineCacheLagDeletesNothing(t *testing.T) {
	cases := []struct {
		name string
		pod  func(w *fakeWorld) func(*corev1.Pod) corev1.PodStatus // nil: no pod yet
		// recorded: step 1's Job is Complete (and recorded) while the cache lags.
		recorded bool
	}{
		{name: "pending pod, step 1 not reported", pod: func(*fakeWorld) func(*corev1.Pod) corev1.PodStatus { return loadPending }},
		{name: "running pod, step 1 not reported", pod: func(w *fakeWorld) func(*corev1.Pod) corev1.PodStatus { return w.loadRunning }},
		{name: "pending pod, step 1 recorded", recorded: true, pod: func(*fakeWorld) func(*corev1.Pod) corev1.PodStatus { return loadPending }},
		{name: "no pod, step 1 recorded", recorded: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, run := startLadder(t, "cl", nil, 1, 2)
			ok := runCaptured(t)
			s1, s2 := ladderJob(run, 0, 0), ladderJob(run, 1, 0)
			w.step(run.Name)
			w.setPod(s1, w.loadExited(0, ok))
			w.step(run.Name)
			if !w.exists(&batchv1.Job{}, s2) {
				t.Fatalf("Job %s not created early", s2)
			}
			w.hide("Job", s2)
			if tc.pod != nil {
				w.setPod(s2, tc.pod(w))
			}
			if tc.recorded {
				w.reportJob(s1, true)
				w.step(run.Name)
				if n := len(w.steps(run)); n != 1 {
					t.Fatalf("%d steps recorded after Job 1 completed, want 1", n)
				}
			}
			for i := 0; i < 3; i++ {
				writes := w.step(run.Name)
				for _, wr := range writes {
					if strings.HasPrefix(wr, "delete") || strings.HasPrefix(wr, "create") {
						t.Errorf("reconcile %d with Job %s not in the cache: %s", i, s2, wr)
					}
				}
			}
			if tc.pod != nil && !w.podExists(s2) {
				t.Fatalf("the pod of Job %s, which the cache had not shown yet, was deleted", s2)
			}
			if !w.exists(&batchv1.Job{}, s2) {
				t.Fatalf("Job %s was deleted", s2)
			}

			w.show("Job", s2)
			if !tc.recorded {
				w.reportJob(s1, true)
			}
			w.setPod(s2, w.loadExited(0, ok))
			w.reportJob(s2, true)
			final := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
			if steps := targetStatus(final, ladderTarget).Steps; final.Status.Phase != v1.RunSucceeded || ladderOf(steps) != "1/1 2/1" {
				t.Errorf("run %s with steps %s, want Succeeded with 1/1 2/1", final.Status.Phase, ladderOf(steps))
			}
			if twice := w.createdTwice(); len(twice) > 0 {
				t.Errorf("created more than once: %v", twice)
			}
		})
	}
}

// apiWrites counts the requests that pass through a rest.Config it wraps, by "METHOD path".
type apiWrites struct {
	mu sync.Mutex
	n  map[string]int
}

func (a *apiWrites) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method != http.MethodGet {
				a.mu.Lock()
				a.n[req.Method+" "+req.URL.Path]++
				a.mu.Unlock()
			}
			return rt.RoundTrip(req)
		})
	})
	return cfg
}

func (a *apiWrites) count(key string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n[key]
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestBatchDeletionOnAnAPIServer (e, envtest): the same batches against a real API server, which
// applies the deletecollection's field selector (the fake client does not): a 10-step ladder
// whose step 3 fails once; when step 10's Job exists (held pending), the first batch has deleted
// the probe, prepare and the first 8 ladder Jobs with one deletecollection after one update of the
// results ConfigMap holding their 8 series, and kept the failed s03-a0, which shares its step
// label with the deleted s03-a1. At the run's end only the failed Job is left, after one more
// deletecollection.
func TestBatchDeletionOnAnAPIServer(t *testing.T) {
	ns := newNamespace(t)
	calls := &apiWrites{n: map[string]int{}}
	startOperator(t, ns, operatorOptions{restConfig: calls.wrap(cfg), log: captured(t, "run_point_select_t4.txt")})
	ok, notPrepared := succeedAll(t), captured(t, "run_not_prepared_1146.txt")
	threads := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	run := baseRun(ns, "bd", threads...)
	run.Spec.Targets = run.Spec.Targets[:1]
	s3a0, s10 := ladderJob(run, 2, 0), ladderJob(run, 9, 0)
	var mu sync.Mutex
	hold := true
	startKubelet(t, ns, func(job *batchv1.Job) outcome {
		mu.Lock()
		defer mu.Unlock()
		switch job.Name {
		case s3a0:
			return outcome{exitCode: 1, message: notPrepared, failed: true}
		case s10:
			if hold {
				return outcome{pending: true}
			}
		}
		return ok(job)
	})
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	collection := "DELETE /apis/batch/v1/namespaces/" + ns + "/jobs"
	resultsPut := "PUT /api/v1/namespaces/" + ns + "/configmaps/" + specs.ResultsConfigMapName(run)

	waitFor(t, ns, run.Name, 2*time.Minute, "9 steps recorded", func(r *v1.BenchmarkRun) bool {
		return len(targetStatus(r, ladderTarget).Steps) == 9
	})
	deadline := time.Now().Add(30 * time.Second)
	for k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: s10}, &batchv1.Job{}) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("no Job %s after step 9 was recorded", s10)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := calls.count(collection); n != 1 {
		t.Errorf("%d deletecollections of Jobs with 9 steps recorded, want 1", n)
	}
	if n := calls.count(resultsPut); n != 1 {
		t.Errorf("%d updates of the results ConfigMap with 9 steps recorded, want 1", n)
	}
	jobsLeft := func() []string {
		t.Helper()
		jobs := &batchv1.JobList{}
		if err := k8s.List(context.Background(), jobs, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, j := range jobs.Items {
			names = append(names, j.Name)
		}
		sort.Strings(names)
		return names
	}
	left := jobsLeft()
	for _, gone := range []string{specs.JobName(run, ladderTarget, "probe", specs.Attempt{}),
		specs.JobName(run, ladderTarget, "prepare", specs.Attempt{}), ladderJob(run, 0, 0), ladderJob(run, 2, 1), ladderJob(run, 7, 0)} {
		if slices.Contains(left, gone) {
			t.Errorf("Job %s still there after the first batch: %v", gone, left)
		}
	}
	for _, kept := range []string{s3a0, s10} {
		if !slices.Contains(left, kept) {
			t.Errorf("Job %s deleted by the first batch; Jobs left %v", kept, left)
		}
	}
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: specs.ResultsConfigMapName(run)}, cm); err != nil {
		t.Fatal(err)
	}
	var series []string
	for k := range cm.Data {
		if strings.HasPrefix(k, "series.") {
			series = append(series, k)
		}
	}
	sort.Strings(series)
	var want []string
	for _, th := range threads[:8] {
		want = append(want, report.SeriesKey(ladderTarget, th, 1))
	}
	if !slices.Equal(series, want) {
		t.Errorf("results ConfigMap series %v after the first batch, want %v", series, want)
	}

	mu.Lock()
	hold = false
	mu.Unlock()
	got := waitFor(t, ns, run.Name, 2*time.Minute, "the run to finish", finished)
	if steps := targetStatus(got, ladderTarget).Steps; got.Status.Phase != v1.RunSucceeded ||
		ladderOf(steps) != "1/1 2/1 3/2 4/1 5/1 6/1 7/1 8/1 9/1 10/1" {
		t.Fatalf("run %s with steps %s, want Succeeded with each step once", got.Status.Phase, ladderOf(steps))
	}
	if left := jobsLeft(); !slices.Equal(left, []string{s3a0}) {
		t.Errorf("Jobs left after the run %v, want the failed %s only", left, s3a0)
	}
	if n := calls.count(collection); n != 2 {
		t.Errorf("%d deletecollections of Jobs over the run, want 2", n)
	}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: specs.ResultsConfigMapName(run)}, cm); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Targets []struct {
			Steps []struct {
				Series json.RawMessage `json:"series"`
			} `json:"steps"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(cm.Data["results.json"]), &doc); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	n := 0
	for _, tr := range doc.Targets {
		for _, s := range tr.Steps {
			if len(s.Series) > 0 {
				n++
			}
		}
	}
	if n != len(threads) {
		t.Errorf("results.json carries %d per-second series, want %d", n, len(threads))
	}
}
