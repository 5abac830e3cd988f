package run_test

import (
	"context"
	"crypto/sha256"
	"fmt"
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
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// outcome is what the fake kubelet makes of a Job.
type outcome struct {
	exitCode int32
	message  string // termination message
	failed   bool   // Job fails (with a terminated container unless noPod)
	noPod    bool
	pending  bool // leave the Job running
	// resultLate writes the pod's result a second after the Job's final condition, as when the
	// operator's pod informer lags behind its Job informer.
	resultLate bool
}

// kubelet plays the node and the Job/StatefulSet controllers that envtest lacks: it creates the
// server pod of every StatefulSet (Ready unless serverPod says otherwise) and finishes every Job
// as decide says, with a pod carrying the container's exit code and termination message.
type kubelet struct {
	t         *testing.T
	ns        string
	decide    func(job *batchv1.Job) outcome
	serverPod func(pod *corev1.Pod) // edits the server pod's status; nil: Ready
	// bind names the node a new server pod is bound to, as the scheduler would; nil: db-node.
	bind    func(pod *corev1.Pod) string
	c       client.Client // the API server it plays the node of; the suite's when nil
	mu      sync.Mutex
	jobs    []string // Job names in the order they were finished
	paused  bool
	stop    chan struct{}
	stopped chan struct{}
}

func startKubelet(t *testing.T, ns string, decide func(*batchv1.Job) outcome) *kubelet {
	return startKubeletWith(t, ns, decide, nil)
}

func startKubeletWith(t *testing.T, ns string, decide func(*batchv1.Job) outcome, serverPod func(*corev1.Pod)) *kubelet {
	k := &kubelet{t: t, ns: ns, decide: decide, serverPod: serverPod, stop: make(chan struct{}), stopped: make(chan struct{})}
	go k.loop()
	t.Cleanup(func() { close(k.stop); <-k.stopped })
	return k
}

// startKubeletBinding is startKubelet with each server pod bound to the node bind names.
func startKubeletBinding(t *testing.T, ns string, decide func(*batchv1.Job) outcome, bind func(*corev1.Pod) string) *kubelet {
	k := &kubelet{t: t, ns: ns, decide: decide, bind: bind, stop: make(chan struct{}), stopped: make(chan struct{})}
	go k.loop()
	t.Cleanup(func() { close(k.stop); <-k.stopped })
	return k
}

// startKubeletOn plays the kubelet of another API server than the suite's.
func startKubeletOn(t *testing.T, c client.Client, ns string, decide func(*batchv1.Job) outcome) *kubelet {
	k := &kubelet{t: t, ns: ns, decide: decide, c: c, stop: make(chan struct{}), stopped: make(chan struct{})}
	go k.loop()
	t.Cleanup(func() { close(k.stop); <-k.stopped })
	return k
}

func (k *kubelet) client() client.Client {
	if k.c != nil {
		return k.c
	}
	return k8s
}

func (k *kubelet) setPaused(p bool) {
	k.mu.Lock()
	k.paused = p
	k.mu.Unlock()
}

func (k *kubelet) finished() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.jobs...)
}

func (k *kubelet) loop() {
	defer close(k.stopped)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-tick.C:
		}
		k.mu.Lock()
		paused := k.paused
		k.mu.Unlock()
		if paused {
			continue
		}
		if err := k.sync(context.Background()); err != nil && !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
			k.t.Logf("fake kubelet: %v", err)
		}
	}
}

func (k *kubelet) sync(ctx context.Context) error {
	stss := &appsv1.StatefulSetList{}
	if err := k.client().List(ctx, stss, client.InNamespace(k.ns)); err != nil {
		return err
	}
	for i := range stss.Items {
		if err := k.runServer(ctx, &stss.Items[i]); err != nil {
			return err
		}
	}
	if err := collectServerPods(ctx, k.client(), k.ns, stss.Items); err != nil {
		return err
	}
	jobs := &batchv1.JobList{}
	if err := k.client().List(ctx, jobs, client.InNamespace(k.ns)); err != nil {
		return err
	}
	for i := range jobs.Items {
		if err := k.runJob(ctx, &jobs.Items[i]); err != nil {
			return err
		}
	}
	return nil
}

func (k *kubelet) runServer(ctx context.Context, sts *appsv1.StatefulSet) error {
	if !sts.DeletionTimestamp.IsZero() {
		return nil
	}
	pod := &corev1.Pod{}
	key := client.ObjectKey{Namespace: sts.Namespace, Name: sts.Name + "-0"}
	if err := k.client().Get(ctx, key, pod); err == nil {
		if !pod.DeletionTimestamp.IsZero() {
			// A kubelet ends a deleted pod's containers, then removes it for good.
			return client.IgnoreNotFound(k.client().Delete(ctx, pod, client.GracePeriodSeconds(0)))
		}
		return nil
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	pod = serverPodOf(sts)
	if k.bind != nil {
		pod.Spec.NodeName = k.bind(pod)
	}
	if err := k.client().Create(ctx, pod); err != nil {
		return err
	}
	pod.Status = readyServerStatus(pod)
	if k.serverPod != nil {
		k.serverPod(pod)
	}
	return k.client().Status().Update(ctx, pod)
}

func (k *kubelet) runJob(ctx context.Context, job *batchv1.Job) error {
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed {
			return nil
		}
	}
	o := k.decide(job)
	if o.pending {
		return nil
	}
	start := metav1.NewTime(time.Now().Add(-time.Second).Truncate(time.Second))
	end := metav1.NewTime(time.Now().Truncate(time.Second))
	if !o.noPod {
		pod := jobPodOf(job)
		if err := k.client().Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		pod.Status = terminatedStatus(pod, o.exitCode, o.message, start, end)
		writeResult := func() error { return k.client().Status().Update(ctx, pod) }
		if o.resultLate {
			// The Job's condition lands first, the pod's result a moment later.
			defer func() {
				time.Sleep(time.Second)
				if err := writeResult(); err != nil {
					k.t.Logf("fake kubelet: late pod result: %v", err)
				}
			}()
		} else if err := writeResult(); err != nil {
			return err
		}
	}
	job.Status = testenv.FinishedJobStatus(!o.failed, start, end)
	if err := k.client().Status().Update(ctx, job); err != nil {
		return err
	}
	k.mu.Lock()
	k.jobs = append(k.jobs, job.Name)
	k.mu.Unlock()
	return nil
}

// collectServerPods plays the garbage collector, which envtest does not run, for server pods:
// the pod of a StatefulSet that is gone (stss are the namespace's StatefulSets) is deleted, as
// the queue waits for a released server's last pod to go before it gives its node away.
func collectServerPods(ctx context.Context, c client.Client, ns string, stss []appsv1.StatefulSet) error {
	alive := map[types.UID]bool{}
	for i := range stss {
		alive[stss[i].UID] = stss[i].DeletionTimestamp.IsZero()
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{specs.LabelComponent: specs.ComponentServer}); err != nil {
		return err
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		ref := metav1.GetControllerOf(pod)
		if ref == nil || ref.Kind != "StatefulSet" || alive[ref.UID] {
			continue
		}
		if err := c.Delete(ctx, pod, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// What the Job and StatefulSet controllers and the kubelet would write, for the fake kubelets of
// this suite and of BenchmarkScale.

// serverPodOf is the pod a StatefulSet's controller creates, bound to the database node.
func serverPodOf(sts *appsv1.StatefulSet) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: sts.Name + "-0", Namespace: sts.Namespace, Labels: sts.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sts, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))}},
		Spec: sts.Spec.Template.Spec,
	}
	pod.Spec.NodeName = "db-node"
	return pod
}

// readyServerStatus is a running, ready server pod.
func readyServerStatus(pod *corev1.Pod) corev1.PodStatus {
	now := metav1.Now()
	return corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "mysql", Ready: true, Image: pod.Spec.Containers[0].Image,
			ImageID: imageIDOf(pod.Spec.Containers[0].Image),
			State:   corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}},
	}
}

// imageIDOf is what a kubelet reports for an image pulled by tag: the repository and the digest
// its registry served (here a digest of the reference, stable per image).
func imageIDOf(image string) string {
	repo := strings.SplitN(strings.SplitN(image, "@", 2)[0], ":", 2)[0]
	return fmt.Sprintf("docker.io/library/%s@sha256:%x", repo, sha256.Sum256([]byte(strings.SplitN(image, "@", 2)[0])))
}

// jobPodOf is the pod the Job controller creates, bound to the client node.
func jobPodOf(job *batchv1.Job) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-x", Namespace: job.Namespace,
			Labels:          mergeLabels(job.Spec.Template.Labels, map[string]string{"batch.kubernetes.io/job-name": job.Name}),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}},
		Spec: job.Spec.Template.Spec,
	}
	pod.Spec.NodeName = "client-node"
	return pod
}

// terminatedStatus is a sysbench pod whose container exited with exitCode and message.
func terminatedStatus(pod *corev1.Pod, exitCode int32, message string, start, end metav1.Time) corev1.PodStatus {
	phase := corev1.PodSucceeded
	if exitCode != 0 {
		phase = corev1.PodFailed
	}
	return corev1.PodStatus{
		Phase: phase,
		ContainerStatuses: []corev1.ContainerStatus{{Name: specs.SysbenchContainer, Image: pod.Spec.Containers[0].Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: exitCode, Message: message, StartedAt: start, FinishedAt: end,
			}}}},
	}
}

func mergeLabels(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// succeedAll finishes every Job the way real sysbench did: the probe reports the server version,
// prepare/cleanup/warm-up/steps report the captured results.
func succeedAll(t *testing.T) func(*batchv1.Job) outcome {
	run := captured(t, "run_point_select_t4.termination-log")
	prepare := captured(t, "prepare_point_select.termination-log")
	cleanup := captured(t, "cleanup_point_select.termination-log")
	return func(job *batchv1.Job) outcome {
		switch job.Labels[specs.LabelStep] {
		case "probe":
			return outcome{message: probeMessage}
		case "prepare":
			return outcome{message: prepare}
		case "cleanup":
			return outcome{message: cleanup}
		default:
			return outcome{message: run}
		}
	}
}

// waitFor polls the run until cond holds (or fails the test after timeout).
func waitFor(t *testing.T, ns, name string, timeout time.Duration, what string, cond func(*v1.BenchmarkRun) bool) *v1.BenchmarkRun {
	t.Helper()
	deadline := time.Now().Add(timeout)
	run := &v1.BenchmarkRun{}
	for {
		err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, run)
		if err == nil && cond(run) {
			return run
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; status: %+v", timeout, what, run.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func finished(r *v1.BenchmarkRun) bool {
	return r.Status.Phase == v1.RunSucceeded || r.Status.Phase == v1.RunFailed
}

func baseRun(ns, name string, threads ...int32) *v1.BenchmarkRun {
	return &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.BenchmarkRunSpec{
			Targets: []v1.Target{
				{Name: "mariadb", Image: "mariadb:10.11"},
				{Name: "mariadb-psoff", Image: "mariadb:10.11", MyCnf: "performance_schema = OFF"},
			},
			Workload: v1.Workload{Script: "oltp_point_select", Tables: 4, TableSize: 1000},
			Ladder:   v1.Ladder{Threads: threads, StepDuration: &metav1.Duration{Duration: 3 * time.Second}},
		},
	}
}
