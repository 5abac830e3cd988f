package run_test

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// counters returns the reconciler's successful creates (a copy), status writes and APIReader
// reads of the run so far.
func (w *fakeWorld) counters() (creates map[string]int, statusWrites, runReads int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	creates = make(map[string]int, len(w.creates))
	for k, v := range w.creates {
		creates[k] = v
	}
	return creates, w.statusWrites, w.runReads
}

// createdTwice lists the objects the reconciler created more than once.
func (w *fakeWorld) createdTwice() []string {
	creates, _, _ := w.counters()
	var twice []string
	for k, n := range creates {
		if n > 1 {
			twice = append(twice, fmt.Sprintf("%s (%d times)", k, n))
		}
	}
	return twice
}

// create creates a run (or anything else) as a user would.
func (w *fakeWorld) create(obj client.Object) client.Object {
	w.t.Helper()
	if err := w.api.Create(w.ctx, obj); err != nil {
		w.t.Fatalf("create %s %s: %v", w.kind(obj), obj.GetName(), err)
	}
	return obj
}

// run reads the run as it is on the API server.
func (w *fakeWorld) run(name string) *v1.BenchmarkRun {
	w.t.Helper()
	run := &v1.BenchmarkRun{}
	if err := w.api.Get(w.ctx, client.ObjectKey{Namespace: fakeNS, Name: name}, run); err != nil {
		w.t.Fatalf("get run %s: %v", name, err)
	}
	return run
}

// reconcile runs one Reconcile of the run.
func (w *fakeWorld) reconcile(name string) (ctrl.Result, error) {
	return w.r.Reconcile(w.ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: fakeNS, Name: name}})
}

// mustReconcile runs one Reconcile and fails the test on an error.
func (w *fakeWorld) mustReconcile(name string) ctrl.Result {
	w.t.Helper()
	res, err := w.reconcile(name)
	if err != nil {
		w.t.Fatalf("reconcile: %v", err)
	}
	return res
}

// takeEvents returns the Events recorded since the last call.
func (w *fakeWorld) takeEvents() []string {
	var out []string
	for {
		select {
		case e := <-w.events.Events:
			out = append(out, e)
		default:
			w.mu.Lock()
			w.recorded = append(w.recorded, out...)
			w.mu.Unlock()
			return out
		}
	}
}

// allEvents returns every Event recorded so far.
func (w *fakeWorld) allEvents() []string {
	w.takeEvents()
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.recorded...)
}

// withReason keeps the Events of a reason ("Normal TargetSucceeded ...").
func withReason(events []string, reason string) []string {
	var out []string
	for _, e := range events {
		if f := strings.Fields(e); len(f) > 1 && f[1] == reason {
			out = append(out, e)
		}
	}
	return out
}

// startServers plays the StatefulSet controller and the kubelet: every StatefulSet without its
// pod gets one, Ready.
func (w *fakeWorld) startServers() {
	w.t.Helper()
	stss := &appsv1.StatefulSetList{}
	if err := w.api.List(w.ctx, stss, client.InNamespace(fakeNS)); err != nil {
		w.t.Fatal(err)
	}
	for i := range stss.Items {
		sts := &stss.Items[i]
		err := w.api.Get(w.ctx, client.ObjectKey{Namespace: fakeNS, Name: sts.Name + "-0"}, &corev1.Pod{})
		if err == nil {
			continue
		}
		if !apierrors.IsNotFound(err) {
			w.t.Fatal(err)
		}
		pod := w.create(serverPodOf(sts)).(*corev1.Pod)
		pod.Status = readyServerStatus(pod)
		if err := w.api.Status().Update(w.ctx, pod); err != nil {
			w.t.Fatal(err)
		}
	}
	if err := collectServerPods(w.ctx, w.api, fakeNS, stss.Items); err != nil {
		w.t.Fatal(err)
	}
}

// finishJobs plays the Job controller and the kubelet: every unfinished Job ends as decide says
// (a pod whose sysbench container terminated with the outcome's exit code and termination
// message, then the Job's final conditions).
func (w *fakeWorld) finishJobs(decide func(*batchv1.Job) outcome) {
	w.t.Helper()
	jobs := &batchv1.JobList{}
	if err := w.api.List(w.ctx, jobs, client.InNamespace(fakeNS)); err != nil {
		w.t.Fatal(err)
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if jobDone(job) {
			continue
		}
		o := decide(job)
		if o.pending {
			continue
		}
		end := metav1.NewTime(w.clock.Now().Truncate(time.Second))
		start := metav1.NewTime(end.Add(-time.Second))
		if !o.noPod {
			pod := w.create(jobPodOf(job)).(*corev1.Pod)
			pod.Status = terminatedStatus(pod, o.exitCode, o.message, start, end)
			if err := w.api.Status().Update(w.ctx, pod); err != nil {
				w.t.Fatal(err)
			}
		}
		job.Status = testenv.FinishedJobStatus(!o.failed, start, end)
		if err := w.api.Status().Update(w.ctx, job); err != nil {
			w.t.Fatal(err)
		}
	}
}

// drive reconciles the run until cond holds, playing the kubelet between reconciles (servers
// Ready, Jobs finished as decide says) and moving the clock a second each time. Every reconcile
// must succeed. It returns the run as cond saw it.
func (w *fakeWorld) drive(name string, decide func(*batchv1.Job) outcome, what string, cond func(*v1.BenchmarkRun) bool) *v1.BenchmarkRun {
	w.t.Helper()
	for i := 0; i < 200; i++ {
		w.mustReconcile(name)
		if run := w.run(name); cond(run) {
			return run
		}
		w.startServers()
		w.finishJobs(decide)
		w.clock.Step(time.Second)
	}
	w.t.Fatalf("%s: not reached after 200 reconciles; status %+v", what, w.run(name).Status)
	return nil
}

// exists says whether the object of obj's type named name is on the API server.
func (w *fakeWorld) exists(obj client.Object, name string) bool {
	w.t.Helper()
	err := w.api.Get(w.ctx, client.ObjectKey{Namespace: fakeNS, Name: name}, obj)
	if err != nil && !apierrors.IsNotFound(err) {
		w.t.Fatal(err)
	}
	return err == nil
}

// targetStatus is the status of target name, or a zero one.
func targetStatus(run *v1.BenchmarkRun, name string) v1.TargetStatus {
	for _, ts := range run.Status.Targets {
		if ts.Name == name {
			return ts
		}
	}
	return v1.TargetStatus{}
}

// fakeRun is a run of the two targets of baseRun at the given thread counts in the fake world,
// with a UID of its own name.
func fakeRun(name string, threads ...int32) *v1.BenchmarkRun {
	run := baseRun(fakeNS, name, threads...)
	run.UID = types.UID("run-" + name)
	return run
}
