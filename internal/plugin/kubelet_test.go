package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/kubeletstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// The fake kubelet plays, for the namespaces it serves, what envtest lacks: the StatefulSet
// controller and the kubelet of the database node (a Ready server pod per StatefulSet), the Job
// controller and the kubelet of the client node (a pod per Job whose sysbench container exits
// with a termination message, then the Job's final conditions), the garbage collector (the pods
// of deleted Jobs and StatefulSets go), and the kubelet's log endpoint (each sysbench pod's
// output, for the operator's series and for the plugin's logs command).
//
// What sysbench prints is real where it can be: probe, prepare and cleanup are the reporter's
// captured outputs against MariaDB 10.11 (internal/sysbench/testdata/reporter), a failed
// attempt is the captured 1146 failure, and the ladder steps carry the summary numbers of real
// oltp_point_select runs at 1, 2, 4 and 8 threads (/work/shared/fixtures/sysbench/
// ladder_point_select_t00N.txt: QPS, p95, min, avg and max latency), scaled per target and run
// by sysbenchNumbers so that runs and targets differ as the tests need.
type fakeKubelet struct {
	c          client.Client
	namespaces []string
	// fail says whether a Job's attempt fails (with the captured 1146 output).
	fail func(job *batchv1.Job) bool

	mu   sync.Mutex
	logs map[string]string // by namespace/pod
	jobs []string          // Jobs finished, in order

	stop    chan struct{}
	stopped chan struct{}
}

// ladderFixture is a real sysbench 1.0.20 oltp_point_select run (5 s, 4 tables x 100000 rows,
// MariaDB 10.11 on loopback): its QPS (= TPS: one query per event), and latency min/avg/p95/max
// in ms, from the summaries of ladder_point_select_t00N.txt.
type ladderFixture struct {
	qps, min, avg, p95, max float64
}

var ladderFixtures = map[int32]ladderFixture{
	1: {qps: 25057.96, min: 0.02, avg: 0.04, p95: 0.08, max: 6.59},
	2: {qps: 49105.75, min: 0.02, avg: 0.04, p95: 0.07, max: 20.29},
	4: {qps: 42975.35, min: 0.03, avg: 0.09, p95: 0.20, max: 17.15},
	8: {qps: 35338.72, min: 0.03, avg: 0.23, p95: 0.46, max: 60.26},
}

// sysbenchNumbers is what a step of run's target at threads measures in repetition rep: the
// fixture, performance_schema OFF a little faster, the run "cand" 20 % slower (and 30 % slower at
// p95) for mariadb-psoff at 2 threads, the run "base" noisy for mariadb at 1 thread, and a small
// drift per repetition elsewhere.
func sysbenchNumbers(run, target string, threads, rep int32) ladderFixture {
	f, ok := ladderFixtures[threads]
	if !ok {
		f = ladderFixtures[8]
	}
	qps, lat := 1.0, 1.0
	if strings.HasSuffix(target, "-psoff") {
		qps, lat = 1.08, 0.95
	}
	if run == "cand" && target == "mariadb-psoff" && threads == 2 {
		qps, lat = qps*0.8, lat*1.3
	}
	if run == "base" && target == "mariadb" && threads == 1 {
		qps *= []float64{1.0, 0.85, 1.12, 0.93}[(rep-1)%4]
	} else {
		qps *= 1 + 0.003*float64(rep-1)
	}
	return ladderFixture{qps: f.qps * qps, min: f.min, avg: f.avg * lat, p95: f.p95 * lat, max: f.max}
}

// round2 and round3 keep the decimals sysbench's reporter prints.
func round2(x float64) float64 { return math.Round(x*100) / 100 }
func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// stepOutput is the reporter's output of a 3-second run step (what the pod logs) and its final
// line (the termination message), in the reporter's format (see run_point_select_t4.txt).
func stepOutput(n ladderFixture, threads int32) (log, final string) {
	const seconds = 3.0
	fin := map[string]any{
		"type": "final", "version": 1, "command": "run", "sysbench": "1.0.20", "threads": threads, "percentile": 95,
		"durationSeconds": seconds, "events": int64(n.qps * seconds), "tps": round2(n.qps),
		"qps":       map[string]float64{"total": round2(n.qps), "read": round2(n.qps), "write": 0, "other": 0},
		"queries":   map[string]int64{"total": int64(n.qps * seconds), "read": int64(n.qps * seconds), "write": 0, "other": 0},
		"latencyMs": map[string]float64{"min": n.min, "avg": round3(n.avg), "pct": round3(n.p95), "max": n.max, "sum": round3(n.avg * n.qps * seconds)},
		"errors":    0, "reconnects": 0,
	}
	b, err := json.Marshal(fin)
	if err != nil {
		panic(err)
	}
	final = string(b) + "\n"
	var sb strings.Builder
	fmt.Fprintf(&sb, "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\nRunning the test with following options:\n"+
		"Number of threads: %d\nReport intermediate results every 1 second(s)\nInitializing random number generator from current time\n\n\n"+
		"Initializing worker threads...\n\nThreads started!\n\n", threads)
	for i, k := range []float64{0.97, 1.03, 1.0} {
		q := round2(n.qps * k)
		fmt.Fprintf(&sb, `{"type":"interval","time":%.3f,"threads":%d,"threadsRunning":%d,"tps":%.2f,"qps":%.2f,"readQps":%.2f,`+
			`"writeQps":0.00,"otherQps":0.00,"latencyPctMs":%.3f,"errorsPerSec":0.00,"reconnectsPerSec":0.00}`+"\n",
			float64(i+1)+0.003, threads, threads, q, q, q, n.p95*(2-k))
	}
	sb.WriteString(final)
	return sb.String(), final
}

// captured reads a real sysbench output the sysbench package's tests recorded.
func captured(name string) string {
	b, err := os.ReadFile(filepath.Join("..", "sysbench", "testdata", "reporter", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

const probeMessage = `{"type":"final","version":1,"command":"probe","sysbench":"1.0.20","threads":1,"durationSeconds":0,"server":"10.11.14-MariaDB-0+deb12u2"}` + "\n"

func startKubelet(c client.Client, fail func(*batchv1.Job) bool, namespaces ...string) *fakeKubelet {
	k := &fakeKubelet{c: c, namespaces: namespaces, fail: fail, logs: map[string]string{},
		stop: make(chan struct{}), stopped: make(chan struct{})}
	go k.loop()
	return k
}

func (k *fakeKubelet) close() {
	close(k.stop)
	<-k.stopped
}

func (k *fakeKubelet) loop() {
	defer close(k.stopped)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-tick.C:
		}
		for _, ns := range k.namespaces {
			if err := k.sync(context.Background(), ns); err != nil && !apierrors.IsConflict(err) &&
				!apierrors.IsAlreadyExists(err) && !apierrors.IsNotFound(err) {
				fmt.Fprintln(os.Stderr, "fake kubelet:", err)
			}
		}
	}
}

func (k *fakeKubelet) sync(ctx context.Context, ns string) error {
	stss := &appsv1.StatefulSetList{}
	if err := k.c.List(ctx, stss, client.InNamespace(ns)); err != nil {
		return err
	}
	for i := range stss.Items {
		if err := k.runServer(ctx, &stss.Items[i]); err != nil {
			return err
		}
	}
	jobs := &batchv1.JobList{}
	if err := k.c.List(ctx, jobs, client.InNamespace(ns)); err != nil {
		return err
	}
	owners := map[string]bool{}
	for i := range jobs.Items {
		owners[string(jobs.Items[i].UID)] = true
		if err := k.runJob(ctx, &jobs.Items[i]); err != nil {
			return err
		}
	}
	for i := range stss.Items {
		owners[string(stss.Items[i].UID)] = true
	}
	// The garbage collector: pods whose Job or StatefulSet is gone go too.
	pods := &corev1.PodList{}
	if err := k.c.List(ctx, pods, client.InNamespace(ns)); err != nil {
		return err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if o := metav1.GetControllerOf(p); o != nil && !owners[string(o.UID)] {
			if err := k.c.Delete(ctx, p, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			k.mu.Lock()
			delete(k.logs, p.Namespace+"/"+p.Name) // its log goes with it
			k.mu.Unlock()
		}
	}
	return nil
}

func (k *fakeKubelet) runServer(ctx context.Context, sts *appsv1.StatefulSet) error {
	if !sts.DeletionTimestamp.IsZero() {
		return nil
	}
	pod := &corev1.Pod{}
	if err := k.c.Get(ctx, client.ObjectKey{Namespace: sts.Namespace, Name: sts.Name + "-0"}, pod); err == nil {
		return nil
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	pod = &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: sts.Name + "-0", Namespace: sts.Namespace, Labels: sts.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sts, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))}},
		Spec: sts.Spec.Template.Spec,
	}
	pod.Spec.NodeName = "db-node"
	if err := k.c.Create(ctx, pod); err != nil {
		return err
	}
	now := metav1.Now()
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
		ContainerStatuses: []corev1.ContainerStatus{{Name: pod.Spec.Containers[0].Name, Ready: true, Image: pod.Spec.Containers[0].Image,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}},
	}
	return k.c.Status().Update(ctx, pod)
}

// output is what a Job's sysbench prints, its termination message and exit code.
func (k *fakeKubelet) output(job *batchv1.Job) (log, message string, exitCode int32) {
	if k.fail != nil && k.fail(job) {
		log = captured("run_not_prepared_1146.txt")
		// TerminationMessageFallbackToLogsOnError: the kubelet keeps the log's tail.
		return log, log[max(0, len(log)-2048):], 1
	}
	switch job.Labels[specs.LabelStep] {
	case "probe":
		return probeMessage, probeMessage, 0
	case "prepare":
		return captured("prepare_point_select.txt"), captured("prepare_point_select.termination-log"), 0
	case "cleanup":
		return captured("cleanup_point_select.txt"), captured("cleanup_point_select.termination-log"), 0
	}
	var threads int32
	for _, a := range job.Spec.Template.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(a, "--threads="); ok {
			n, _ := strconv.Atoi(v)
			threads = int32(n)
		}
	}
	rep := int32(1)
	if step := job.Labels[specs.LabelStep]; strings.HasPrefix(step, "r") {
		n, _ := strconv.Atoi(step[1:strings.Index(step, "s")])
		rep = int32(n)
	}
	if job.Labels[specs.LabelStep] == "warmup" {
		rep = 0
	}
	log, message = stepOutput(sysbenchNumbers(job.Labels[specs.LabelRun], job.Labels[specs.LabelTarget], threads, max(rep, 1)), threads)
	if job.Labels[specs.LabelStep] != "warmup" {
		log = withServerSnapshots(log, job.Labels[specs.LabelRun], job.Labels[specs.LabelTarget], threads)
	}
	return log, message, 0
}

// serverCapture is the reporter's server lines of a real run step against MySQL 9.7 with the
// synch wait instruments on (internal/sysbench/testdata/server/mysql97_read_write.txt): the
// start's (serverBegin and server) and the end's.
var serverCapture = sync.OnceValues(func() (start, end []string) {
	b, err := os.ReadFile(filepath.Join("..", "sysbench", "testdata", "server", "mysql97_read_write.txt"))
	if err != nil {
		panic(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, `{"type":"serverBegin","version":1,"at":"start"}`), strings.HasPrefix(line, `{"type":"server","version":1,"at":"start"`):
			start = append(start, line)
		case strings.HasPrefix(line, `{"type":"serverBegin","version":1,"at":"end"}`), strings.HasPrefix(line, `{"type":"server","version":1,"at":"end"`):
			end = append(end, line)
		}
	}
	if len(start) != 2 || len(end) != 2 {
		panic(fmt.Sprintf("the MySQL 9.7 capture has %d start and %d end snapshot lines, want 2 of each", len(start), len(end)))
	}
	return start, end
})

// withServerSnapshots puts the captured server snapshots around a ladder step's log, as the
// reporter prints them with spec.serverStats on (the default). A target named *-psoff gets them
// as a server with performance_schema OFF gives them (performanceSchema false, no waits); run
// pk's mariadb at 8 threads gets no end snapshot (as when sysbench dies before done()), so the
// operator stores no server counters for that step and says why in an Event.
func withServerSnapshots(log, run, target string, threads int32) string {
	start, end := serverCapture()
	start, end = slices.Clone(start), slices.Clone(end)
	if strings.HasSuffix(target, "-psoff") {
		start[1], end[1] = performanceSchemaOff(start[1]), performanceSchemaOff(end[1])
	}
	if run == "pk" && target == "mariadb" && threads == 8 {
		end = nil
	}
	out := strings.Join(start, "\n") + "\n" + log
	if len(end) > 0 {
		out += strings.Join(end, "\n") + "\n"
	}
	return out
}

// performanceSchemaOff rewrites a server line as performance_schema OFF leaves it, its counts
// kept exact (json.Number).
func performanceSchemaOff(line string) string {
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		panic(err)
	}
	m["performanceSchema"] = false
	delete(m, "waits")
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// kubeletCPU plays the operator's kubelet CPU sampler (stepjob.CPUSource): the server
// container of a target kept 0.9 cores busy during every step, except on the *-psoff targets,
// whose node's stats the operator may not read.
type kubeletCPU struct{}

func (kubeletCPU) StepCPU(_ context.Context, _ *v1.BenchmarkRun, target string, from, to time.Time) (*serverstats.CPU, string) {
	if strings.HasSuffix(target, "-psoff") {
		return nil, "no CPU: the operator may not read the kubelet's stats; it needs get on nodes/proxy, cluster-wide"
	}
	const cores = 0.9
	// The kubelet's samples fall inside the step: 10 ms after it started, 10 ms before it ended.
	f, t := from.Add(10*time.Millisecond), to.Add(-10*time.Millisecond)
	sec := t.Sub(f).Seconds()
	return &serverstats.CPU{Container: "mysql", Seconds: cores * sec, From: float64(f.UnixMicro()) / 1e6,
		To: float64(t.UnixMicro()) / 1e6, Samples: 3, PerSecond: cores}, ""
}

// ClientCPU: the sampler never saw the clients (the plugin's fake kubelet ends their pods at
// once).
func (kubeletCPU) ClientCPU(context.Context, string, string, string, time.Time, time.Time) (kubeletstats.Usage, string) {
	return kubeletstats.Usage{}, "no client CPU: the client container was never sampled"
}

func (k *fakeKubelet) runJob(ctx context.Context, job *batchv1.Job) error {
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed {
			return nil
		}
	}
	if !job.DeletionTimestamp.IsZero() {
		return nil
	}
	log, message, exitCode := k.output(job)
	start := metav1.NewTime(time.Now().Add(-time.Second).Truncate(time.Second))
	end := metav1.NewTime(time.Now().Truncate(time.Second))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-" + string(job.UID)[:5], Namespace: job.Namespace,
			Labels:          merge(job.Spec.Template.Labels, map[string]string{"batch.kubernetes.io/job-name": job.Name}),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}},
		Spec: job.Spec.Template.Spec,
	}
	pod.Spec.NodeName = "client-node"
	if err := k.c.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	k.mu.Lock()
	k.logs[pod.Namespace+"/"+pod.Name] = log
	k.mu.Unlock()
	phase := corev1.PodSucceeded
	if exitCode != 0 {
		phase = corev1.PodFailed
	}
	pod.Status = corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{
		Name: specs.SysbenchContainer, Image: pod.Spec.Containers[0].Image,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exitCode, Message: message, StartedAt: start, FinishedAt: end,
		}},
	}}}
	if err := k.c.Status().Update(ctx, pod); err != nil {
		return err
	}
	job.Status = testenv.FinishedJobStatus(exitCode == 0, start, end)
	if err := k.c.Status().Update(ctx, job); err != nil {
		return err
	}
	k.mu.Lock()
	k.jobs = append(k.jobs, job.Namespace+"/"+job.Name)
	k.mu.Unlock()
	return nil
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// Logs serves a pod's log to the operator (stepjob.LogReader), as the kubelet would:
// an error for a pod it never ran.
func (k *fakeKubelet) Logs(_ context.Context, namespace, pod, _ string) (io.ReadCloser, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	log, ok := k.logs[namespace+"/"+pod]
	if !ok {
		return nil, fmt.Errorf("pods %q not found", pod)
	}
	return io.NopCloser(strings.NewReader(log)), nil
}

// Stream serves the same logs to the plugin (PodLogs).
func (k *fakeKubelet) Stream(ctx context.Context, namespace, pod, container string, _ bool) (io.ReadCloser, error) {
	return k.Logs(ctx, namespace, pod, container)
}
