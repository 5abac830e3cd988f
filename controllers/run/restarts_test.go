package run_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	runctrl "github.com/mysqlbench/mysqlbench-operator/controllers/run"
	"github.com/mysqlbench/mysqlbench-operator/internal/admission"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// A server that restarts in the middle of a step: the step's Job is discarded, the operator waits
// for the server, prepares again only when the data is gone, warms up and measures the step
// again. Nothing measured across the restart is kept, and no step is lost or measured twice.
func TestServerRestartMidStepIsMeasuredAgain(t *testing.T) {
	probeWith4Tables := strings.Replace(probeMessage, `"threads":1,`, `"threads":1,"tables":4,`, 1)
	cases := []struct {
		name string
		// restart plays the restart on the server pod.
		restart func(t *testing.T, pod *corev1.Pod)
		// probe is what the probe after the restart reports.
		probe string
		// reprepared: the data was gone, prepare ran again.
		reprepared bool
	}{
		{
			name: "pod replaced on an emptyDir: data gone, prepared again",
			restart: func(t *testing.T, pod *corev1.Pod) {
				// Deleted; the fake StatefulSet controller creates a new pod (new UID).
				if err := k8s.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); err != nil {
					t.Fatal(err)
				}
			},
			probe:      probeMessage,
			reprepared: true,
		},
		{
			name: "container restarted: data kept, warmed up again",
			restart: func(t *testing.T, pod *corev1.Pod) {
				cs := &pod.Status.ContainerStatuses[0]
				cs.RestartCount = 1
				cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}
				if err := k8s.Status().Update(context.Background(), pod); err != nil {
					t.Fatal(err)
				}
			},
			probe: probeWith4Tables,
		},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			startOperator(t, ns, operatorOptions{})
			ok := succeedAll(t)
			var mu sync.Mutex
			var held types.UID
			var created []string
			startKubelet(t, ns, func(job *batchv1.Job) outcome {
				mu.Lock()
				defer mu.Unlock()
				if len(created) == 0 || created[len(created)-1] != job.Name {
					created = append(created, job.Name)
				}
				if strings.Contains(job.Name, "-s02-") && (held == "" || held == job.UID) {
					held = job.UID // step 2 is under way when the server restarts
					return outcome{pending: true}
				}
				if job.Labels[specs.LabelStep] == "probe" && strings.Contains(job.Name, "-probe-r1") {
					return outcome{message: tc.probe}
				}
				return ok(job)
			})
			name := "restart" + string(rune('a'+i))
			run := baseRun(ns, name, 1, 2, 4)
			run.Spec.Targets = run.Spec.Targets[:1]
			run.Spec.Ladder.Warmup = &metav1.Duration{Duration: 2 * time.Second}
			if err := k8s.Create(context.Background(), run); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			var step2 types.UID
			for deadline := time.Now().Add(20 * time.Second); step2 == ""; time.Sleep(50 * time.Millisecond) {
				mu.Lock()
				step2 = held
				mu.Unlock()
				if time.Now().After(deadline) {
					t.Fatal("step 2 never started")
				}
			}
			restartAt := time.Now()
			pod := &corev1.Pod{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: specs.ServerName(run, "mariadb") + "-0"}, pod); err != nil {
				t.Fatal(err)
			}
			tc.restart(t, pod)

			got := waitFor(t, ns, name, 30*time.Second, "the run to finish", finished)
			ts := got.Status.Targets[0]
			if got.Status.Phase != v1.RunSucceeded || len(ts.Steps) != 3 {
				t.Fatalf("run %s with %d steps (%s), want Succeeded with 3", got.Status.Phase, len(ts.Steps), ts.Message)
			}
			for i, s := range ts.Steps {
				if s.Threads != run.Spec.Ladder.Threads[i] || s.Attempts != 1 {
					t.Errorf("step %d: %d threads, %d attempts; want %d threads, 1 attempt", i+1, s.Threads, s.Attempts, run.Spec.Ladder.Threads[i])
				}
			}
			// Step 2 was measured after the restart, by a new Job; the held one is gone.
			if s := ts.Steps[1]; s.StartTime == nil || s.StartTime.Time.Before(restartAt.Add(-time.Second).Truncate(time.Second)) {
				t.Errorf("step 2 started %v, before the restart at %v: measured across it", s.StartTime, restartAt)
			}
			old := &batchv1.Job{}
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: specs.JobName(run, "mariadb", "s02", specs.Attempt{})}, old)
			if err == nil && old.UID == step2 && old.DeletionTimestamp.IsZero() {
				t.Errorf("the Job of step 2 that ran across the restart was not deleted")
			} else if err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
			if ts.ServerRestarts != 1 || ts.LastServerRestart == nil || !strings.Contains(ts.LastServerRestart.During, "2/3") {
				t.Errorf("serverRestarts %d, lastServerRestart %+v: want 1, during step 2/3", ts.ServerRestarts, ts.LastServerRestart)
			}
			mu.Lock()
			after := strings.Join(created[indexOf(created, "probe-r1a0"):], " ")
			mu.Unlock()
			if strings.Contains(after, "prepare-r1") != tc.reprepared || !strings.Contains(after, "warmup-r1a0") {
				t.Errorf("Jobs after the restart: %s; want prepare again %v, then a warm-up", after, tc.reprepared)
			}
			assertEvents(t, ns, name, "ServerRestarted")
		})
	}
}

// indexOf is the index of the first name containing sub, or len(names).
func indexOf(names []string, sub string) int {
	for i, n := range names {
		if strings.Contains(n, sub) {
			return i
		}
	}
	return len(names)
}

// A reconcile that reads the run from a cache that has not caught up with the operator's own
// last status write must not redo a transition already made: here, re-create the server of a
// target that has just failed and been torn down (seen on the local cluster: the server then held
// the only database node and the next target never got one).
func TestStaleCacheDoesNotRedoATransition(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	var stale *v1.BenchmarkRun // when set, reads of the run return this older copy
	var mu sync.Mutex
	direct, err := client.NewWithWatch(cfg, client.Options{Scheme: testenv.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	c := interceptor.NewClient(direct, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			mu.Lock()
			s := stale
			mu.Unlock()
			if run, ok := obj.(*v1.BenchmarkRun); ok && s != nil {
				s.DeepCopyInto(run)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	// The engines' writes are counted: a stale reconcile must not create anything.
	creates := 0
	engineClient := interceptor.NewClient(direct, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			mu.Lock()
			creates++
			mu.Unlock()
			return c.Create(ctx, obj, opts...)
		},
	})
	r, err := runctrl.New(runctrl.Dependencies{
		Client: c, APIReader: k8s, Scheme: testenv.Scheme, Recorder: record.NewFakeRecorder(100),
		Engines: engine.All(engineClient, k8s, testenv.Scheme), Logs: &fakeLogs{}, Clock: clock.RealClock{},
		AdmissionPolicy: &admission.Check{Reader: k8s},
	}, runctrl.Options{ServerReadyTimeout: time.Minute, SchedulingGrace: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	run := baseRun(ns, "stale", 1)
	run.Spec.Targets = run.Spec.Targets[:1]
	run.Spec.Cleanup = v1.CleanupAlways
	// A pool of its own: without the namespace-bound cache, the runs of every test would share
	// the default one.
	run.Spec.Placement.Database.NodeSelector = map[string]string{specs.PoolLabel: readyPoolNode(t, "stale")}
	if err := k8s.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(run)
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
			t.Fatal(err)
		}
	}
	sts := &appsv1.StatefulSet{}
	stsKey := client.ObjectKey{Namespace: ns, Name: specs.ServerName(run, "mariadb")}
	for i := 0; i < 10 && apierrors.IsNotFound(k8s.Get(ctx, stsKey, sts)); i++ {
		reconcile()
	}
	if err := k8s.Get(ctx, stsKey, sts); err != nil {
		t.Fatalf("no StatefulSet after provisioning: %v", err)
	}
	provisioning := &v1.BenchmarkRun{}
	if err := k8s.Get(ctx, key, provisioning); err != nil {
		t.Fatal(err)
	}
	// The server crash-loops: the target fails and its objects are deleted.
	pod := serverPodOf(sts)
	if err := k8s.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "mysql", Image: "mariadb:10.11", RestartCount: 3,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "[ERROR] bad option\n"}},
	}}}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	reconcile()
	failed := &v1.BenchmarkRun{}
	if err := k8s.Get(ctx, key, failed); err != nil {
		t.Fatal(err)
	}
	if ts := failed.Status.Targets[0]; ts.Phase != v1.TargetFailed {
		t.Fatalf("target %s %q, want Failed", ts.Phase, ts.Message)
	}
	// The status recorded the failure; the next reconcile releases the target (deletes its
	// server, cleanup Always).
	reconcile()
	if err := k8s.Get(ctx, stsKey, &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
		t.Fatalf("StatefulSet after the failure: %v, want it deleted (cleanup Always)", err)
	}
	// The cache still shows the run provisioning.
	mu.Lock()
	stale = provisioning
	creates = 0
	mu.Unlock()
	reconcile()
	mu.Lock()
	defer mu.Unlock()
	if creates != 0 {
		t.Errorf("a reconcile from the stale cache created %d objects for the failed target", creates)
	}
	if err := k8s.Get(ctx, stsKey, &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
		t.Errorf("the failed target's StatefulSet exists again (err %v)", err)
	}
}

// A server restart in the middle of a repetition discards that step only: it is measured again
// (as the same rung of the same repetition), the others are kept, none is measured twice.
func TestServerRestartMidRepetitionIsMeasuredAgain(t *testing.T) {
	probeWith4Tables := strings.Replace(probeMessage, `"threads":1,`, `"threads":1,"tables":4,`, 1)
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	ok := succeedAll(t)
	var mu sync.Mutex
	var held types.UID
	var steps []string
	startKubelet(t, ns, func(job *batchv1.Job) outcome {
		mu.Lock()
		defer mu.Unlock()
		step := job.Labels[specs.LabelStep]
		if strings.Contains(step, "s0") && (len(steps) == 0 || steps[len(steps)-1] != job.Name) {
			steps = append(steps, job.Name)
		}
		if step == "r2s02" && (held == "" || held == job.UID) {
			held = job.UID // repetition 2 at 2 threads is under way when the server restarts
			return outcome{pending: true}
		}
		if step == "probe" && strings.Contains(job.Name, "-probe-r1") {
			return outcome{message: probeWith4Tables}
		}
		return ok(job)
	})
	run := baseRun(ns, "restart-rep", 1, 2, 4)
	run.Spec.Targets = run.Spec.Targets[:1]
	run.Spec.Repetitions = ptr.To[int32](2)
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		h := held
		mu.Unlock()
		if h != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("repetition 2 at 2 threads never started")
		}
	}
	pod := &corev1.Pod{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: specs.ServerName(run, "mariadb") + "-0"}, pod); err != nil {
		t.Fatal(err)
	}
	cs := &pod.Status.ContainerStatuses[0]
	cs.RestartCount = 1
	cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}
	if err := k8s.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}

	got := waitFor(t, ns, "restart-rep", 30*time.Second, "the run to finish", finished)
	ts := got.Status.Targets[0]
	wantThreads, wantReps := []int32{1, 2, 4, 4, 2, 1}, []int32{1, 1, 1, 2, 2, 2}
	if got.Status.Phase != v1.RunSucceeded || len(ts.Steps) != len(wantThreads) {
		t.Fatalf("run %s with %d steps (%s), want Succeeded with 6", got.Status.Phase, len(ts.Steps), ts.Message)
	}
	for i, s := range ts.Steps {
		if s.Threads != wantThreads[i] || s.Repetition != wantReps[i] || s.Attempts != 1 {
			t.Errorf("step %d: %d threads, repetition %d, %d attempts", i+1, s.Threads, s.Repetition, s.Attempts)
		}
	}
	if ts.ServerRestarts != 1 || ts.LastServerRestart == nil || ts.LastServerRestart.During != "5/6 (2 threads, repetition 2/2)" {
		t.Errorf("serverRestarts %d, lastServerRestart %+v", ts.ServerRestarts, ts.LastServerRestart)
	}
	mu.Lock()
	defer mu.Unlock()
	// The held Job of r2s02 (before the restart) and its successor after it; every other step once.
	want := strings.Join([]string{
		"restart-rep-mariadb-s01-a0", "restart-rep-mariadb-s02-a0", "restart-rep-mariadb-s03-a0",
		"restart-rep-mariadb-r2s03-a0", "restart-rep-mariadb-r2s02-a0", "restart-rep-mariadb-r2s02-r1a0", "restart-rep-mariadb-r2s01-r1a0",
	}, " ")
	if got := strings.Join(steps, " "); got != want {
		t.Errorf("step Jobs %s\nwant %s", got, want)
	}
}

// serverInstance PerRepetition: each repetition after the first gets a new server pod, whose
// data is prepared again (an emptyDir goes with its pod) and warmed up; the replacement is no
// restart (nothing discarded, nothing counted), and each step records its instance.
func TestServerInstancePerRepetition(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	ok := succeedAll(t)
	var mu sync.Mutex
	var created []string
	startKubelet(t, ns, func(job *batchv1.Job) outcome {
		mu.Lock()
		if len(created) == 0 || created[len(created)-1] != job.Name {
			created = append(created, job.Name)
		}
		mu.Unlock()
		return ok(job)
	})
	ctx := context.Background()
	run := baseRun(ns, "fresh", 1, 2)
	run.Spec.Targets = run.Spec.Targets[:1]
	run.Spec.Repetitions = ptr.To[int32](3)
	run.Spec.ServerInstance = v1.ServerInstancePerRepetition
	run.Spec.Ladder.Warmup = &metav1.Duration{Duration: 2 * time.Second}
	if err := k8s.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	// The pods the server had, by UID, as the run goes.
	uids := map[types.UID]bool{}
	got := &v1.BenchmarkRun{}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		pod := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: specs.ServerName(run, "mariadb") + "-0"}, pod); err == nil {
			uids[pod.UID] = true
		}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			t.Fatal(err)
		}
		if finished(got) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not finish: %+v", got.Status)
		}
	}
	ts := got.Status.Targets[0]
	if got.Status.Phase != v1.RunSucceeded || len(ts.Steps) != 6 {
		t.Fatalf("run %s with %d steps (%s), want Succeeded with 6", got.Status.Phase, len(ts.Steps), ts.Message)
	}
	for i, s := range ts.Steps {
		if want := s.Repetition; s.Instance != want {
			t.Errorf("step %d (repetition %d) measured instance %d, want %d", i+1, s.Repetition, s.Instance, want)
		}
	}
	if ts.ServerRestarts != 0 || ts.Instances != 3 || ts.LastReplacement == nil || ts.LastReplacement.Repetition != 3 ||
		ts.LastReplacement.Replaced != "" {
		t.Errorf("serverRestarts %d, instances %d, lastReplacement %+v: want 0, 3, repetition 3 with its instance probed",
			ts.ServerRestarts, ts.Instances, ts.LastReplacement)
	}
	if len(uids) != 3 {
		t.Errorf("the server had %d pods, want 3 (one per repetition)", len(uids))
	}
	if want := engine.ImageDigest(imageIDOf("mariadb:10.11")); ts.ServerImageDigest != want || want == "" {
		t.Errorf("serverImageDigest %q, want %q (the kubelet's imageID)", ts.ServerImageDigest, want)
	}
	mu.Lock()
	jobs := strings.Join(created, " ")
	mu.Unlock()
	for _, rep := range []string{"i2", "i3"} {
		for _, step := range []string{"probe-" + rep, "prepare-" + rep, "warmup-" + rep} {
			if !strings.Contains(jobs, step) {
				t.Errorf("no %s Job for the new instance: %s", step, jobs)
			}
		}
	}
	// Each new instance is probed after the previous repetition's last step and before its own
	// repetition's first (the ladder descends in repetition 2).
	if i, j, k := indexOf(created, "-s02-"), indexOf(created, "probe-i2"), indexOf(created, "r2s02"); i >= j || j >= k {
		t.Errorf("repetition 2's instance not probed between repetition 1's last step and its own first: %s", jobs)
	}
	assertEvents(t, ns, "fresh", "ServerReplaced")
}

// A tag that moves between two instances of a target's server (a new pod pulled it again) would
// mix two servers in one target's steps: the target fails, saying how to pin the image.
func TestServerImageMovedBetweenInstancesFails(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	var mu sync.Mutex
	pods := 0
	startKubeletWith(t, ns, succeedAll(t), func(pod *corev1.Pod) {
		mu.Lock()
		defer mu.Unlock()
		pods++
		if pods > 1 {
			pod.Status.ContainerStatuses[0].ImageID = imageIDOf("mariadb:10.11-moved")
		}
	})
	run := baseRun(ns, "moved", 1)
	run.Spec.Targets = run.Spec.Targets[:1]
	run.Spec.Repetitions = ptr.To[int32](2)
	run.Spec.ServerInstance = v1.ServerInstancePerRepetition
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "moved", 30*time.Second, "the run to finish", finished)
	ts := got.Status.Targets[0]
	if ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, "image mariadb:10.11 changed during the run") ||
		!strings.Contains(ts.Message, "pin the image by digest (mariadb:10.11@sha256:") || len(ts.Steps) != 1 {
		t.Errorf("target %s with %d steps: %q; want Failed after 1 step, saying the image changed and how to pin it",
			ts.Phase, len(ts.Steps), ts.Message)
	}
}
