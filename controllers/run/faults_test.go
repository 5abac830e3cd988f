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
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// What can never work ends the target fast with what to fix, instead of holding a database node
// until the 15-minute server timeout or a Job's deadline.
func TestWhatCannotWorkFailsFast(t *testing.T) {
	const grace = 3 * time.Second
	cases := []struct {
		name string
		// setup runs in the namespace before the run is created.
		setup func(t *testing.T, ns string)
		// mutate edits the one-target run.
		mutate func(r *v1.BenchmarkRun)
		// serverPod plays the kubelet's view of the server pod.
		serverPod func(*corev1.Pod)
		// waiting is what the Progressing condition says before the end, "" to skip.
		waiting string
		want    []string // substrings of the target's failure message
		within  time.Duration
		// noServer: nothing may have been provisioned.
		noServer bool
		// serverRemoved: the server's StatefulSet is deleted whatever the cleanup policy.
		serverRemoved bool
	}{
		{
			name: "custom script ConfigMap missing",
			mutate: func(r *v1.BenchmarkRun) {
				r.Spec.Workload.Script = ""
				r.Spec.Workload.CustomScript = &v1.ConfigMapKeySelector{Name: "nosuchcm", Key: "bench.lua"}
			},
			waiting:  "waits up to",
			want:     []string{"ConfigMap nosuchcm not found in namespace ", "create it with the key bench.lua"},
			within:   grace + 10*time.Second,
			noServer: true,
		},
		{
			name: "custom script key missing",
			setup: func(t *testing.T, ns string) {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "scripts", Namespace: ns},
					Data: map[string]string{"other.lua": "-- nothing"}}
				if err := k8s.Create(context.Background(), cm); err != nil {
					t.Fatal(err)
				}
			},
			mutate: func(r *v1.BenchmarkRun) {
				r.Spec.Workload.Script = ""
				r.Spec.Workload.CustomScript = &v1.ConfigMapKeySelector{Name: "scripts", Key: "bench.lua"}
			},
			want:     []string{"ConfigMap scripts in namespace ", "has no key bench.lua"},
			within:   grace + 10*time.Second,
			noServer: true,
		},
		{
			name: "external Secret missing",
			mutate: func(r *v1.BenchmarkRun) {
				r.Spec.Targets[0] = v1.Target{Name: "mariadb", Engine: v1.EngineExternal,
					SecretRef: &v1.LocalObjectReference{Name: "nosuchsecret"}}
			},
			want:   []string{"Secret ", "/nosuchsecret named by target mariadb does not exist"},
			within: grace + 10*time.Second,
		},
		{
			name:  "image tag that does not exist",
			setup: nil,
			serverPod: func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodPending
				p.Status.Conditions[1].Status = corev1.ConditionFalse
				cs := &p.Status.ContainerStatuses[0]
				cs.Ready = false
				cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull",
					Message: `failed to pull and unpack image "docker.io/library/mariadb:10.11": failed to resolve reference ` +
						`"docker.io/library/mariadb:10.11": docker.io/library/mariadb:10.11: not found`}}
			},
			want:          []string{"server did not start: cannot pull image mariadb:10.11", ": not found"},
			within:        10 * time.Second,
			serverRemoved: true,
		},
		{
			name: "StatefulSet forbidden by a quota",
			setup: func(t *testing.T, ns string) {
				q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "no-statefulsets", Namespace: ns},
					Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/statefulsets.apps": resource.MustParse("0")}}}
				if err := k8s.Create(context.Background(), q); err != nil {
					t.Fatal(err)
				}
				// What the quota controller (not in envtest) would write.
				q.Status = corev1.ResourceQuotaStatus{Hard: q.Spec.Hard, Used: corev1.ResourceList{"count/statefulsets.apps": resource.MustParse("0")}}
				if err := k8s.Status().Update(context.Background(), q); err != nil {
					t.Fatal(err)
				}
			},
			want:     []string{"the API server rejected StatefulSet ", "forbidden", "quota"},
			within:   10 * time.Second,
			noServer: true,
		},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			if tc.setup != nil {
				tc.setup(t, ns)
			}
			startOperator(t, ns, operatorOptions{readyTimeout: 10 * time.Minute, schedulingGrace: grace})
			startKubeletWith(t, ns, succeedAll(t), tc.serverPod)
			name := "fast" + string(rune('a'+i))
			run := baseRun(ns, name, 1)
			run.Spec.Targets = run.Spec.Targets[:1]
			if tc.mutate != nil {
				tc.mutate(run)
			}
			start := time.Now()
			if err := k8s.Create(context.Background(), run); err != nil {
				t.Fatal(err)
			}
			if tc.waiting != "" {
				waitFor(t, ns, name, 10*time.Second, "the condition to say what the run waits for", func(r *v1.BenchmarkRun) bool {
					c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing)
					return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, tc.waiting) &&
						strings.Contains(c.Message, tc.want[0])
				})
			}
			got := waitFor(t, ns, name, tc.within, "the run to fail", finished)
			took := time.Since(start)
			ts := got.Status.Targets[0]
			if got.Status.Phase != v1.RunFailed || ts.Phase != v1.TargetFailed {
				t.Fatalf("run %s, target %s %q: want both Failed", got.Status.Phase, ts.Phase, ts.Message)
			}
			for _, w := range tc.want {
				if !strings.Contains(ts.Message, w) {
					t.Errorf("message %q lacks %q", ts.Message, w)
				}
			}
			t.Logf("failed after %s: %s", took.Round(100*time.Millisecond), ts.Message)
			sts := &appsv1.StatefulSet{}
			err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: specs.ServerName(run, run.Spec.Targets[0].Name)}, sts)
			switch {
			case tc.noServer && !apierrors.IsNotFound(err):
				t.Errorf("a StatefulSet exists (err %v): nothing may be provisioned for this run", err)
			case tc.serverRemoved && err == nil && sts.DeletionTimestamp.IsZero():
				t.Errorf("StatefulSet %s still there: a server that cannot pull its image must not hold the node", sts.Name)
			}
		})
	}
}

// A step Job deleted while its pod still runs (orphaned, or terminating) is not re-created until
// that pod ended: two loads on one server would corrupt both measurements.
func TestDeletedStepJobWaitsForItsPod(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	ok := succeedAll(t)
	var mu sync.Mutex
	var heldUID types.UID
	kl := startKubelet(t, ns, func(job *batchv1.Job) outcome {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(job.Name, "-s01-") && (heldUID == "" || heldUID == job.UID) {
			heldUID = job.UID // the test plays this Job's pod itself
			return outcome{pending: true}
		}
		return ok(job)
	})
	run := baseRun(ns, "leftover", 1, 2)
	run.Spec.Targets = run.Spec.Targets[:1]
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Wait until the fake kubelet holds step 1's Job (it then never finishes that one).
	job := &batchv1.Job{}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		uid := heldUID
		mu.Unlock()
		if uid != "" {
			name := specs.JobName(run, "mariadb", "s01", specs.Attempt{})
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no Job for step 1")
		}
	}
	// Its pod runs sysbench; then someone deletes the Job.
	pod := jobPodOf(job)
	if err := k8s.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: specs.SysbenchContainer, Image: pod.Spec.Containers[0].Image,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	// Background: envtest runs no garbage collector, so the pod stays, as an orphaned or a
	// slowly terminating one would.
	if err := k8s.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ns, "leftover", 10*time.Second, "the condition to name the running pod", func(r *v1.BenchmarkRun) bool {
		c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing)
		return c != nil && strings.Contains(c.Message, "waits for pod "+pod.Name)
	})
	// For as long as the pod runs, no Job of that name exists again.
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(job), &batchv1.Job{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("Job %s exists again (err %v) while the old pod still runs", job.Name, err)
		}
	}
	// The old pod ends: the step runs again and the run completes, every step measured once.
	// (The fake kubelet names a Job's pod after the Job: it waits until the old pod is gone.)
	kl.setPaused(true)
	time.Sleep(200 * time.Millisecond) // a sync already under way ends (ticks are 50 ms)
	pod.Status.Phase = corev1.PodFailed
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 143}}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		again := &batchv1.Job{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), again); err == nil && again.UID != job.UID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no new Job for step 1 after the old pod ended")
		}
	}
	if err := k8s.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	kl.setPaused(false)
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		jobs := &batchv1.JobList{}
		_ = k8s.List(ctx, jobs, client.InNamespace(ns))
		for _, j := range jobs.Items {
			t.Logf("job %s uid %s conditions %+v", j.Name, j.UID, j.Status.Conditions)
		}
		pods := &corev1.PodList{}
		_ = k8s.List(ctx, pods, client.InNamespace(ns))
		for _, p := range pods.Items {
			t.Logf("pod %s owner %v phase %s", p.Name, p.OwnerReferences, p.Status.Phase)
		}
	})
	got := waitFor(t, ns, "leftover", 20*time.Second, "the run to finish", finished)
	if got.Status.Phase != v1.RunSucceeded || len(got.Status.Targets[0].Steps) != 2 {
		t.Fatalf("run %s with %d steps, want Succeeded with 2", got.Status.Phase, len(got.Status.Targets[0].Steps))
	}
	for _, s := range got.Status.Targets[0].Steps {
		if s.Attempts != 1 {
			t.Errorf("step at %d threads took %d attempts, want 1: the deleted Job is not a failed attempt", s.Threads, s.Attempts)
		}
	}
}

// A pod that never starts says why within the grace, from the cluster's Events: the server's
// volume cannot be mounted, a step's Job cannot create its pod.
func TestWaitsSayWhatTheyWaitFor(t *testing.T) {
	ctx := context.Background()
	warn := func(t *testing.T, obj client.Object, kind, reason, message string) {
		t.Helper()
		e := &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{GenerateName: obj.GetName() + ".", Namespace: obj.GetNamespace()},
			InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(),
				UID: obj.GetUID()},
			Type: corev1.EventTypeWarning, Reason: reason, Message: message,
			FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1,
			Source: corev1.EventSource{Component: "kubelet"},
		}
		if err := k8s.Create(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("server volume cannot be mounted", func(t *testing.T) {
		ns := newNamespace(t)
		startOperator(t, ns, operatorOptions{readyTimeout: 10 * time.Minute, schedulingGrace: 2 * time.Second})
		startKubeletWith(t, ns, succeedAll(t), func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.Conditions[1].Status = corev1.ConditionFalse
			p.Status.ContainerStatuses[0].Ready = false
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
		})
		run := baseRun(ns, "mount", 1)
		run.Spec.Targets = run.Spec.Targets[:1]
		if err := k8s.Create(ctx, run); err != nil {
			t.Fatal(err)
		}
		pod := &corev1.Pod{}
		key := client.ObjectKey{Namespace: ns, Name: specs.ServerName(run, "mariadb") + "-0"}
		for deadline := time.Now().Add(10 * time.Second); k8s.Get(ctx, key, pod) != nil; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("no server pod")
			}
		}
		warn(t, pod, "Pod", "FailedMount", `MountVolume.SetUp failed for volume "data" : rpc error: volume not attached`)
		waitFor(t, ns, "mount", 15*time.Second, "Stalled with the mount failure", func(r *v1.BenchmarkRun) bool {
			c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing)
			return c != nil && c.Status == metav1.ConditionFalse && c.Reason == "NotStarting" &&
				strings.Contains(c.Message, "FailedMount: MountVolume.SetUp failed")
		})
	})
	t.Run("step Job cannot create its pod", func(t *testing.T) {
		ns := newNamespace(t)
		startOperator(t, ns, operatorOptions{schedulingGrace: 2 * time.Second})
		ok := succeedAll(t)
		startKubelet(t, ns, func(job *batchv1.Job) outcome {
			if job.Labels[specs.LabelStep] == "s01" {
				return outcome{pending: true} // no pod: the Job controller is refused
			}
			return ok(job)
		})
		run := baseRun(ns, "quota", 1)
		run.Spec.Targets = run.Spec.Targets[:1]
		if err := k8s.Create(ctx, run); err != nil {
			t.Fatal(err)
		}
		job := &batchv1.Job{}
		key := client.ObjectKey{Namespace: ns, Name: specs.JobName(run, "mariadb", "s01", specs.Attempt{})}
		for deadline := time.Now().Add(15 * time.Second); k8s.Get(ctx, key, job) != nil; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("no Job for step 1")
			}
		}
		warn(t, job, "Job", "FailedCreate", `Error creating: pods "x" is forbidden: exceeded quota: compute, requested: cpu=1, used: cpu=4, limited: cpu=4`)
		waitFor(t, ns, "quota", 15*time.Second, "Stalled with the Job's FailedCreate", func(r *v1.BenchmarkRun) bool {
			c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing)
			return c != nil && c.Status == metav1.ConditionFalse && c.Reason == "NotStarting" &&
				strings.Contains(c.Message, "has no pod") && strings.Contains(c.Message, "exceeded quota")
		})
	})
}
