//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// TestStepOverheadOnARealCluster measures the operator's per-step overhead: how much wall-clock
// time a ladder step costs beyond its stepDuration, and where that time goes. It is a
// measurement, not a check of a target: it fails only when the run fails, or when
// E2E_MAX_STEP_OVERHEAD_SECONDS is set and the median ladder overhead is above it.
//
// One builtin MariaDB target (E2E_OVERHEAD_IMAGE, default mariadb:10.11) runs a ladder of
// 1, 2, 4, 8 threads x E2E_OVERHEAD_REPETITIONS (default 3, so 12 steps) of
// E2E_OVERHEAD_STEP (default 20s) each, without warm-up. Per step it prints:
//
//   - ladder overhead = (finishTime of step i+1 - finishTime of step i) - stepDuration: the
//     wall-clock cost of a step beyond what it measures. This is the figure of the issue's
//     target ("per-step overhead at most 2 s median"); it is printed as the stable line
//     `step overhead median: X.XX s` (from the API's timestamps, as status.targets[].steps[]
//     has them: the Jobs' startTime and completionTime, whole seconds);
//   - Job runtime overhead = (finishTime - startTime) - stepDuration;
//   - gap = startTime of step i+1's Job - finishTime of step i's Job;
//
// and the same three with millisecond precision from the test's own watch of the Jobs (when it
// saw each Job created and Complete). The Jobs and pods are watched while the run goes (the
// operator may delete finished Jobs one day), so the breakdown of each step does not depend on
// them still existing at the end:
//
//	Job created -> pod created            Job controller (creates the pod at once)
//	pod created -> scheduled              scheduler
//	scheduled -> first output             kubelet: sandbox, volumes, container create and start, launcher
//	first output -> measuring starts      sysbench: Lua init, connecting every thread
//	measuring: start -> final line - d    sysbench's own end and final report
//	final line -> terminated seen         process exit, the kubelet's PLEG relist (every 1 s) sees it
//	terminated -> next Job created        operator: the next step starts once sysbench exited with a result
//
// and, off the chain, how the step gets recorded meanwhile:
//
//	terminated -> pod Succeeded seen      kubelet: the terminating sync waits for the next relist, stops the sandbox
//	pod Succeeded -> Job Complete seen    Job controller (syncs a Job 1 s after a pod or status event)
//	Job Complete -> step in status        operator: status write
//	Job Complete -> series stored         operator: batched (every 8 ladder steps and at the target's end)
//
// "First output", "measuring starts" and "final line" come from the container log's own
// timestamps (containerd's, nanoseconds): measuring starts at the first interval line minus the
// time it reports. The watched times are when this test saw the change (a watch, tens of ms
// late at most); the API's own timestamps (conditions, startedAt/finishedAt) are whole seconds
// and are printed beside them. The client node's kubelet metrics (PLEG relist interval,
// runtime operations, pod start) are read before and after and their means printed. It also
// prints every sysbench Job of the target (a failed attempt costs a whole step), the run's
// Warning events, the Progressing condition as it changed, the full watched timeline of the
// step with the median cycle, and the machine's load average (the cluster shares its CPUs).
//
// The figure a user feels is the server's idle time between two steps: a step's measuring end
// (its measuring start plus sysbench's own total time) to the next step's measuring start, from
// the client node's container logs, printed as `idle between steps median: X s`; with
// E2E_MAX_STEP_IDLE_SECONDS set the test fails above it. The next step's Job is created while
// the current one measures (the server lock), so its chain segments overlap: "pod terminated
// seen -> next Job created" is negative then, and "first output -> measuring starts" holds the
// next client's wait for the lock.
//
// It runs only with E2E_OVERHEAD=1, on a cluster with the operator installed. On this machine's
// local cluster (needs root; builds the manager image from the current code, brings the cluster
// up, installs the operator, runs this test alone, stops the cluster it started):
//
//	hack/e2e-overhead.sh
//
// On a cluster already running with the operator installed (hack/local-operator.sh):
//
//	E2E_OVERHEAD=1 KUBECONFIG=$PWD/test/localcluster/.state/kubeconfig \
//	  E2E_SYSBENCH_IMAGE=ghcr.io/mysqlbench/sysbench:1.0.20 \
//	  go test -tags e2e -count=1 -v -run '^TestStepOverheadOnARealCluster$' -timeout 40m ./test/e2e/
func TestStepOverheadOnARealCluster(t *testing.T) {
	if os.Getenv("E2E_OVERHEAD") != "1" {
		t.Skip("a measurement of the per-step overhead: set E2E_OVERHEAD=1 (hack/e2e-overhead.sh)")
	}
	// The informers below log through controller-runtime's logger.
	logf.SetLogger(klog.NewKlogr())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newClient(t)
	ns := e2eNamespace(ctx, t, c)
	image := env("E2E_OVERHEAD_IMAGE", "mariadb:10.11")
	step, err := time.ParseDuration(env("E2E_OVERHEAD_STEP", "20s"))
	if err != nil {
		t.Fatal(err)
	}
	reps, err := strconv.Atoi(env("E2E_OVERHEAD_REPETITIONS", "3"))
	if err != nil || reps < 1 || reps > 10 {
		t.Fatalf("E2E_OVERHEAD_REPETITIONS %q: want 1 to 10", os.Getenv("E2E_OVERHEAD_REPETITIONS"))
	}
	var maxOverhead float64
	if s := os.Getenv("E2E_MAX_STEP_OVERHEAD_SECONDS"); s != "" {
		if maxOverhead, err = strconv.ParseFloat(s, 64); err != nil {
			t.Fatalf("E2E_MAX_STEP_OVERHEAD_SECONDS %q: %v", s, err)
		}
	}
	var maxIdle float64
	if s := os.Getenv("E2E_MAX_STEP_IDLE_SECONDS"); s != "" {
		if maxIdle, err = strconv.ParseFloat(s, 64); err != nil {
			t.Fatalf("E2E_MAX_STEP_IDLE_SECONDS %q: %v", s, err)
		}
	}
	threads := []int32{1, 2, 4, 8}
	const target = "mariadb"
	run := &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "overhead", Namespace: ns},
		Spec: v1.BenchmarkRunSpec{
			Targets:  []v1.Target{{Name: target, Image: image}},
			Workload: v1.Workload{Script: "oltp_point_select", Tables: 2, TableSize: 10000},
			Ladder: v1.Ladder{Threads: threads, StepDuration: &metav1.Duration{Duration: step},
				Warmup: &metav1.Duration{}},
			SysbenchImage:  os.Getenv("E2E_SYSBENCH_IMAGE"),
			StepRetryLimit: ptr.To[int32](1),
			Cleanup:        v1.CleanupAlways,
		},
	}
	if reps > 1 {
		run.Spec.Repetitions = ptr.To(int32(reps))
	}

	cfg, err := config.GetConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	w := watchRun(ctx, t, cfg, cs, ns)
	node := clientNode(t, c)
	before := kubeletMetrics(ctx, t, cs, node)

	load := loadAverage()
	recreate(t, c, run)
	w.setRun(run.UID)
	got := waitSucceeded(ctx, t, c, run, 40*time.Minute)
	after := kubeletMetrics(ctx, t, cs, node)
	if evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + run.Name + ",type=Warning"}); err == nil {
		for _, e := range evs.Items {
			t.Logf("warning event of the run: %s (x%d): %s", e.Reason, e.Count, e.Message)
		}
	}
	w.fetchMissingLogs(ctx, t)

	ts := targetStatus(got, target)
	if ts == nil || len(ts.Steps) != reps*len(threads) {
		t.Fatalf("target %s: %+v, want %d steps", target, ts, reps*len(threads))
	}
	m := w.measure(got, ts, step)
	m.print(t, step)
	t.Logf("kubelet of %s (the client node), means over this run (delta of its histograms):\n%s", node, metricsDelta(before, after))
	// The cluster shares this machine's CPUs with whatever else runs on it: the kubelet's and
	// the controllers' latencies grow with the load.
	t.Logf("this machine: %d CPUs, load average before the run %s, after %s", goruntime.NumCPU(), load, loadAverage())

	if maxIdle > 0 {
		if med := median(m.idle); !(med <= maxIdle) {
			t.Errorf("idle between steps median %.3f s (a step's measuring end to the next one's measuring start) is above E2E_MAX_STEP_IDLE_SECONDS=%g",
				med, maxIdle)
		}
	}
	if maxOverhead > 0 {
		if med := median(m.ladderAPI); !(med <= maxOverhead) {
			t.Errorf("step overhead median %.2f s (API finishTime to finishTime, minus %s) is above E2E_MAX_STEP_OVERHEAD_SECONDS=%g",
				med, step, maxOverhead)
		}
	}
	if err := c.Delete(ctx, got); err != nil {
		t.Error(err)
	}
	waitGone(t, c, got)
}

// clientNode is the name of the node of the client pool (where the sysbench pods run).
// loadAverage is /proc/loadavg's 1, 5 and 15 minute figures, or "?" where it cannot be read.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}

func clientNode(t *testing.T, c client.Client) string {
	t.Helper()
	nodes := &corev1.NodeList{}
	if err := c.List(context.Background(), nodes, client.MatchingLabels{specs.PoolLabel: specs.PoolClient}); err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) == 0 {
		t.Fatalf("no node labelled %s=%s", specs.PoolLabel, specs.PoolClient)
	}
	return nodes.Items[0].Name
}

// jobSeen is what the watch saw of one Job: when (the test's clock) and the last version.
type jobSeen struct {
	created   time.Time
	condition map[batchv1.JobConditionType]time.Time // first seen True
	last      *batchv1.Job
	history   []change
}

// change is a watched change of an object's status, summarized.
type change struct {
	at   time.Time
	what string
}

// record appends what to h when it differs from the last entry.
func record(h []change, at time.Time, what string) []change {
	if len(h) > 0 && h[len(h)-1].what == what {
		return h
	}
	return append(h, change{at, what})
}

// podSeen is what the watch saw of one sysbench pod, and its log's timestamps.
type podSeen struct {
	created, scheduled      time.Time
	condition               map[corev1.PodConditionType]time.Time // first seen True
	conditionAPI            map[corev1.PodConditionType]time.Time // its lastTransitionTime then (whole seconds)
	running, terminated     time.Time                             // the sysbench container's state first seen
	finished, finalizerGone time.Time                             // phase Succeeded/Failed; the Job's tracking finalizer removed
	last                    *corev1.Pod
	history                 []change
	log                     *logTimes
	logFetching             bool
}

// logTimes are the container log's own timestamps (containerd's, at the line's arrival).
type logTimes struct {
	first        time.Time // the first line: sysbench's banner
	measureStart time.Time // the first interval line minus the time it reports: sysbench's --time starts
	lastInterval time.Time
	final        time.Time // the final JSON line
	last         time.Time
	intervals    int
	finalTime    float64 // the total time the final line reports
}

// runWatch records, with the test's clock, when each change of the run's Jobs, pods, results
// ConfigMap and status was seen.
type runWatch struct {
	cs   kubernetes.Interface
	ns   string
	mu   sync.Mutex
	run  types.UID
	jobs map[types.UID]*jobSeen
	pods map[types.UID]*podSeen
	// series: ConfigMap UID -> its owner's UID and when each key was first seen.
	series     map[types.UID]map[string]time.Time
	cmOwner    map[types.UID]types.UID
	stepsSeen  []time.Time // stepsSeen[i]: status.targets[0].steps reached i+1 entries
	runHistory []change    // the run's Progressing condition as it changed
	logFetches sync.WaitGroup
}

func watchRun(ctx context.Context, t *testing.T, cfg *rest.Config, cs kubernetes.Interface, ns string) *runWatch {
	t.Helper()
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1.AddToScheme(scheme))
	informers, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		t.Fatal(err)
	}
	w := &runWatch{cs: cs, ns: ns, jobs: map[types.UID]*jobSeen{}, pods: map[types.UID]*podSeen{},
		series: map[types.UID]map[string]time.Time{}, cmOwner: map[types.UID]types.UID{}}
	handle := func(obj client.Object, f func(time.Time, any)) {
		inf, err := informers.GetInformer(ctx, obj)
		if err != nil {
			t.Fatal(err)
		}
		h := func(o any) { f(time.Now(), o) }
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    h,
			UpdateFunc: func(_, o any) { h(o) },
			DeleteFunc: func(o any) { w.deleted(time.Now(), o) },
		}); err != nil {
			t.Fatal(err)
		}
	}
	handle(&batchv1.Job{}, w.job)
	handle(&corev1.Pod{}, func(now time.Time, o any) { w.pod(ctx, now, o) })
	handle(&corev1.ConfigMap{}, w.configMap)
	handle(&v1.BenchmarkRun{}, w.benchmarkRun)
	go func() { _ = informers.Start(ctx) }()
	if !informers.WaitForCacheSync(ctx) {
		t.Fatal("informers did not sync")
	}
	return w
}

func (w *runWatch) setRun(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.run = uid
}

func (w *runWatch) job(now time.Time, o any) {
	j, ok := o.(*batchv1.Job)
	if !ok || j.Labels[specs.LabelComponent] != specs.ComponentClient {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.jobs[j.UID]
	if s == nil {
		s = &jobSeen{created: now, condition: map[batchv1.JobConditionType]time.Time{}}
		w.jobs[j.UID] = s
	}
	for _, c := range j.Status.Conditions {
		if c.Status == corev1.ConditionTrue && s.condition[c.Type].IsZero() {
			s.condition[c.Type] = now
		}
	}
	s.last = j.DeepCopy()
	s.history = record(s.history, now, jobSummary(j))
}

func jobSummary(j *batchv1.Job) string {
	st := j.Status
	var conds []string
	for _, c := range st.Conditions {
		if c.Status == corev1.ConditionTrue {
			conds = append(conds, string(c.Type))
		}
	}
	uncounted := 0
	if u := st.UncountedTerminatedPods; u != nil {
		uncounted = len(u.Succeeded) + len(u.Failed)
	}
	return fmt.Sprintf("Job: active %d, ready %d, succeeded %d, failed %d, terminating %d, uncounted %d, started %v, conditions %v",
		st.Active, ptr.Deref(st.Ready, 0), st.Succeeded, st.Failed, ptr.Deref(st.Terminating, 0), uncounted,
		st.StartTime != nil, conds)
}

func podSummary(p *corev1.Pod) string {
	var conds []string
	for _, c := range p.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			conds = append(conds, string(c.Type))
		}
	}
	state := "-"
	for _, c := range p.Status.ContainerStatuses {
		switch {
		case c.Name != specs.SysbenchContainer:
		case c.State.Waiting != nil:
			state = "waiting " + c.State.Waiting.Reason
		case c.State.Running != nil:
			state = "running"
		case c.State.Terminated != nil:
			state = fmt.Sprintf("terminated, exit %d", c.State.Terminated.ExitCode)
		}
	}
	return fmt.Sprintf("pod: %s, node %q, sysbench %s, finalizer %v, deleting %v, conditions %v", p.Status.Phase,
		p.Spec.NodeName, state, slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer), p.DeletionTimestamp != nil, conds)
}

func (w *runWatch) pod(ctx context.Context, now time.Time, o any) {
	p, ok := o.(*corev1.Pod)
	if !ok || p.Labels[specs.LabelComponent] != specs.ComponentClient {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.pods[p.UID]
	if s == nil {
		s = &podSeen{created: now, condition: map[corev1.PodConditionType]time.Time{},
			conditionAPI: map[corev1.PodConditionType]time.Time{}}
		w.pods[p.UID] = s
	}
	if p.Spec.NodeName != "" && s.scheduled.IsZero() {
		s.scheduled = now
	}
	// Conditions that turn False again (ContainersReady, PodReadyToStartContainers when the
	// sandbox is gone) are recorded when first seen True.
	for _, c := range p.Status.Conditions {
		if c.Status == corev1.ConditionTrue && s.condition[c.Type].IsZero() {
			s.condition[c.Type] = now
			s.conditionAPI[c.Type] = c.LastTransitionTime.Time
		}
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.Name != specs.SysbenchContainer {
			continue
		}
		if c.State.Running != nil && s.running.IsZero() {
			s.running = now
		}
		if c.State.Terminated != nil && s.terminated.IsZero() {
			s.terminated = now
		}
	}
	if (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) && s.finished.IsZero() {
		s.finished = now
	}
	if s.last != nil && slices.Contains(s.last.Finalizers, batchv1.JobTrackingFinalizer) &&
		!slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer) && s.finalizerGone.IsZero() {
		s.finalizerGone = now
	}
	s.last = p.DeepCopy()
	s.history = record(s.history, now, podSummary(p))
	if !s.terminated.IsZero() && !s.logFetching {
		// Read the log while the pod exists: the operator may delete finished Jobs.
		s.logFetching = true
		w.logFetches.Add(1)
		go func() {
			defer w.logFetches.Done()
			lt, err := readLogTimes(ctx, w.cs, p.Namespace, p.Name)
			w.mu.Lock()
			defer w.mu.Unlock()
			if err == nil {
				s.log = lt
			} else {
				s.logFetching = false
			}
		}()
	}
}

// deleted notes the deletion of a watched Job or pod in its history.
func (w *runWatch) deleted(now time.Time, o any) {
	if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch o := o.(type) {
	case *batchv1.Job:
		if s := w.jobs[o.UID]; s != nil {
			s.history = record(s.history, now, "Job deleted")
		}
	case *corev1.Pod:
		if s := w.pods[o.UID]; s != nil {
			s.history = record(s.history, now, "pod deleted")
		}
	}
}

func (w *runWatch) configMap(now time.Time, o any) {
	cm, ok := o.(*corev1.ConfigMap)
	if !ok {
		return
	}
	owner := metav1.GetControllerOf(cm)
	if owner == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cmOwner[cm.UID] = owner.UID
	keys := w.series[cm.UID]
	if keys == nil {
		keys = map[string]time.Time{}
		w.series[cm.UID] = keys
	}
	for k := range cm.Data {
		if _, ok := keys[k]; !ok {
			keys[k] = now
		}
	}
}

func (w *runWatch) benchmarkRun(now time.Time, o any) {
	r, ok := o.(*v1.BenchmarkRun)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.run == "" || r.UID != w.run || len(r.Status.Targets) == 0 {
		return
	}
	for len(w.stepsSeen) < len(r.Status.Targets[0].Steps) {
		w.stepsSeen = append(w.stepsSeen, now)
	}
	if c := apimeta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing); c != nil {
		w.runHistory = record(w.runHistory, now, fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message))
	}
}

// fetchMissingLogs waits for the log reads under way and retries the ones that failed.
func (w *runWatch) fetchMissingLogs(ctx context.Context, t *testing.T) {
	w.logFetches.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.pods {
		if s.log != nil || s.last == nil {
			continue
		}
		lt, err := readLogTimes(ctx, w.cs, s.last.Namespace, s.last.Name)
		if err != nil {
			t.Logf("log of pod %s: %v", s.last.Name, err)
			continue
		}
		s.log = lt
	}
}

// readLogTimes reads the sysbench container's log with the runtime's timestamps.
func readLogTimes(ctx context.Context, cs kubernetes.Interface, ns, pod string) (*logTimes, error) {
	rc, err := cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: specs.SysbenchContainer, Timestamps: true}).Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	lt := &logTimes{}
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		stamp, text, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil {
			continue
		}
		if lt.first.IsZero() {
			lt.first = at
		}
		lt.last = at
		var line struct {
			Type            string  `json:"type"`
			Time            float64 `json:"time"`            // interval: sysbench's time since measuring started
			DurationSeconds float64 `json:"durationSeconds"` // final: the total time measured
		}
		if !strings.HasPrefix(text, "{") || json.Unmarshal([]byte(text), &line) != nil {
			continue
		}
		switch line.Type {
		case "interval":
			if lt.intervals == 0 {
				lt.measureStart = at.Add(-time.Duration(line.Time * float64(time.Second)))
			}
			lt.intervals++
			lt.lastInterval = at
		case "final":
			lt.final = at
			lt.finalTime = line.DurationSeconds
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if lt.first.IsZero() {
		return nil, fmt.Errorf("empty log")
	}
	return lt, nil
}
