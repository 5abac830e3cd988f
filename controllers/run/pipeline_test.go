package run_test

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
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
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
