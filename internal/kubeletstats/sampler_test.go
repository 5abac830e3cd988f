package kubeletstats_test

// The Sampler against a real API server (envtest: the runs and pods it finds) and a fake kubelet
// (httptest: envtest has no kubelets) reached through the same REST client and URL as in the
// manager.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/kubeletstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

var k8s client.Client

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, "../..", func(_ *envtest.Environment, c client.Client) { k8s = c }))
}

// fakeKubelet serves /api/v1/nodes/{node}/proxy/stats/summary as the API server's node proxy
// would: each container's usage grows at its rate from its start, read at the fake clock's time.
type fakeKubelet struct {
	clock *clocktesting.FakeClock
	mu    sync.Mutex
	// containers by node: pod namespace/name -> container -> rate in cores and start.
	containers map[string][]fakeContainer
	forbidden  bool
	requests   []string // "node?query"
}

type fakeContainer struct {
	namespace, pod, name string
	start                time.Time
	cores                float64
}

func (k *fakeKubelet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	defer k.mu.Unlock()
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/v1/nodes/")
	node, suffix, _ := strings.Cut(rest, "/")
	if !ok || suffix != "proxy/stats/summary" || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	k.requests = append(k.requests, node+"?"+r.URL.RawQuery)
	w.Header().Set("Content-Type", "application/json")
	if k.forbidden {
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(metav1.Status{
			TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Reason: metav1.StatusReasonForbidden,
			Code: http.StatusForbidden, Message: fmt.Sprintf(`nodes "%s" is forbidden: User "system:serviceaccount:mysqlbench-system:mb" `+
				`cannot get resource "nodes/proxy" in API group "" at the cluster scope`, node),
		})
		return
	}
	now := k.clock.Now()
	type cpu struct {
		Time  string `json:"time"`
		Usage uint64 `json:"usageCoreNanoSeconds"`
	}
	type container struct {
		Name      string `json:"name"`
		StartTime string `json:"startTime"`
		CPU       cpu    `json:"cpu"`
	}
	type pod struct {
		PodRef     map[string]string `json:"podRef"`
		Containers []container       `json:"containers"`
	}
	var pods []pod
	for _, c := range k.containers[node] {
		usage := uint64(now.Sub(c.start).Seconds() * c.cores * 1e9)
		pods = append(pods, pod{
			PodRef: map[string]string{"name": c.pod, "namespace": c.namespace},
			Containers: []container{{Name: c.name, StartTime: c.start.UTC().Format(time.RFC3339),
				CPU: cpu{Time: now.UTC().Format(time.RFC3339), Usage: usage}}},
		})
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"node": map[string]string{"nodeName": node}, "pods": pods})
}

func (k *fakeKubelet) calls() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.requests...)
}

// world is one test's namespace with a run of a builtin and a Percona Server target, their
// server pods running on nodes db-1 and db-2, a pod of someone else's on db-3, and a Sampler.
type world struct {
	ns      string
	run     *v1.BenchmarkRun
	clock   *clocktesting.FakeClock
	kubelet *fakeKubelet
	sampler *kubeletstats.Sampler
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cpu-"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	run := &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "cpu", Namespace: ns.Name},
		Spec: v1.BenchmarkRunSpec{
			Targets: []v1.Target{
				{Name: "maria", Image: "mariadb:10.11"},
				{Name: "ps", Engine: v1.EnginePerconaServer, Image: "percona/percona-server:8.0.46-37.1"},
				{Name: "pxc", Engine: v1.EnginePerconaXtraDBCluster},
				{Name: "prod", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "prod"}},
			},
			Workload: v1.Workload{Script: "oltp_point_select", Tables: 1, TableSize: 1000},
			Ladder:   v1.Ladder{Threads: []int32{1}, StepDuration: &metav1.Duration{Duration: 10 * time.Second}},
		},
	}
	if err := k8s.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	run.Status.Phase = v1.RunRunning
	run.Status.Targets = []v1.TargetStatus{
		{Name: "maria", Phase: v1.TargetRunning}, {Name: "ps", Phase: v1.TargetRunning},
		{Name: "pxc", Phase: v1.TargetPending}, {Name: "prod", Phase: v1.TargetPending},
	}
	if err := k8s.Status().Update(ctx, run); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 23, 21, 0, 0, 0, time.UTC)
	w := &world{ns: ns.Name, run: run, clock: clocktesting.NewFakeClock(start)}
	w.pod(t, "cpu-maria-0", "db-1", specs.ServerPodLabels(run, "maria"))
	// Percona's pods: the run and target labels only (percona.serverPod), Percona's own otherwise.
	w.pod(t, "ps-cpu-ps-mysql-0", "db-2", map[string]string{specs.LabelRun: "cpu", specs.LabelTarget: "ps",
		"app.kubernetes.io/managed-by": "percona-server-mysql-operator"})
	w.pod(t, "someone-elses", "db-3", map[string]string{"app": "other"})

	w.kubelet = &fakeKubelet{clock: w.clock, containers: map[string][]fakeContainer{
		"db-1": {{namespace: ns.Name, pod: "cpu-maria-0", name: "mysql", start: start.Add(-time.Minute), cores: 1.5}},
		"db-2": {
			{namespace: ns.Name, pod: "ps-cpu-ps-mysql-0", name: "mysql", start: start.Add(-time.Minute), cores: 0.75},
			{namespace: ns.Name, pod: "ps-cpu-ps-mysql-0", name: "xtrabackup", start: start.Add(-time.Minute), cores: 0.01},
		},
		"db-3": {{namespace: ns.Name, pod: "someone-elses", name: "app", start: start, cores: 1}},
	}}
	srv := httptest.NewServer(w.kubelet)
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	w.sampler, err = kubeletstats.New(k8s, k8s, kubeletstats.APIServerProxy{Client: cs.CoreV1().RESTClient()}, w.clock,
		ctrl.Log, kubeletstats.Config{Interval: 2 * time.Second, Retention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) pod(t *testing.T, name, node string, labels map[string]string) {
	t.Helper()
	ctx := context.Background()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns, Labels: labels},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "x"}},
			AutomountServiceAccountToken: ptr.To(false)},
	}
	if err := k8s.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	if err := k8s.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}
}

// start runs the sampler's Start with the fake clock and returns once its first poll made calls
// requests.
func (w *world) start(t *testing.T, calls int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.sampler.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("sampler stopped with %v", err)
		}
	})
	waitFor(t, func() bool {
		return len(w.kubelet.calls()) >= calls && w.clock.HasWaiters() && kubeletstats.PollsDone(w.sampler) >= 1
	})
}

// tick advances the fake clock by d n times, each time waiting for the poll it starts to finish:
// stepping the clock while a poll is in flight would move that poll's sample times.
func (w *world) tick(t *testing.T, n int, d time.Duration) {
	t.Helper()
	for range n {
		before := kubeletstats.PollsDone(w.sampler)
		w.clock.Step(d)
		waitFor(t, func() bool { return kubeletstats.PollsDone(w.sampler) > before })
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSamplerStepCPU(t *testing.T) {
	w := newWorld(t)
	t0 := w.clock.Now()
	w.start(t, 2)
	w.tick(t, 10, 2*time.Second) // samples at t0, t0+2s, ..., t0+20s

	// Only the nodes hosting server pods, with only CPU and memory asked for.
	for _, c := range w.kubelet.calls() {
		if c != "db-1?only_cpu_and_memory=true" && c != "db-2?only_cpu_and_memory=true" {
			t.Errorf("the sampler asked for %s", c)
		}
	}
	ctx := context.Background()
	for _, tc := range []struct {
		target, container string
		cores             float64
	}{{"maria", "mysql", 1.5}, {"ps", "mysql", 0.75}} {
		// A step from 3 s to 15 s: samples at 4, 6, ..., 14 s inside, and at 2 and 16 s beyond:
		// the usage is interpolated to 3 and 15 s.
		cpu, missing := w.sampler.StepCPU(ctx, w.run, tc.target, t0.Add(3*time.Second), t0.Add(15*time.Second))
		if missing != "" {
			t.Fatalf("%s: missing %q", tc.target, missing)
		}
		if cpu.Container != tc.container || cpu.Samples != 6 || math.Abs(cpu.PerSecond-tc.cores) > 1e-6 ||
			math.Abs(cpu.Seconds-12*tc.cores) > 1e-6 || cpu.From != float64(t0.Unix()+3) || cpu.To != float64(t0.Unix()+15) {
			t.Errorf("%s: got %+v, want %s, 6 samples, over +3 s to +15 s, %v cores", tc.target, cpu, tc.container, tc.cores)
		}
		if cpu.PerQuery != 0 {
			t.Errorf("%s: PerQuery %v: the caller fills it", tc.target, cpu.PerQuery)
		}
	}
	for _, tc := range []struct {
		name, target string
		from, to     time.Duration
		want         string
	}{
		{"a step shorter than two samples", "maria", 5 * time.Second, 6500 * time.Millisecond, "1 kubelet sample fell inside the step's 1.5 s"},
		{"a step after the last sample", "maria", 30 * time.Second, 40 * time.Second, "0 kubelet samples fell inside"},
		{"a target whose server never ran", "pxc", 3 * time.Second, 15 * time.Second, "no kubelet sample of container pxc of target pxc"},
		{"an external target", "prod", 3 * time.Second, 15 * time.Second, "external server"},
		{"a step that began before the sampler", "maria", -10 * time.Second, time.Second, "after the step began"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cpu, missing := w.sampler.StepCPU(ctx, w.run, tc.target, t0.Add(tc.from), t0.Add(tc.to))
			if cpu != nil || !strings.Contains(missing, tc.want) {
				t.Errorf("got %+v, %q; want no CPU saying %q", cpu, missing, tc.want)
			}
		})
	}
}

func TestSamplerRestartedContainer(t *testing.T) {
	w := newWorld(t)
	t0 := w.clock.Now()
	w.start(t, 2)
	w.tick(t, 3, 2*time.Second)
	w.kubelet.mu.Lock()
	w.kubelet.containers["db-1"][0].start = w.clock.Now() // the server container restarted
	w.kubelet.mu.Unlock()
	w.tick(t, 3, 2*time.Second)
	_, missing := w.sampler.StepCPU(context.Background(), w.run, "maria", t0.Add(time.Second), t0.Add(11*time.Second))
	if !strings.Contains(missing, "restarted during the step") {
		t.Errorf("missing %q, want the restart named", missing)
	}
	// A step after the restart has CPU again.
	if cpu, missing := w.sampler.StepCPU(context.Background(), w.run, "maria", t0.Add(7*time.Second), t0.Add(12*time.Second)); cpu == nil {
		t.Errorf("after the restart: %q", missing)
	}
}

func TestSamplerForbidden(t *testing.T) {
	w := newWorld(t)
	w.kubelet.forbidden = true
	t0 := w.clock.Now()
	w.start(t, 1)
	calls := len(w.kubelet.calls())
	if calls != 1 {
		t.Fatalf("%d requests after a 403, want one (the other node would say the same)", calls)
	}
	// Asked again only after ForbiddenRecheck.
	w.clock.Step(2 * time.Second)
	time.Sleep(50 * time.Millisecond)
	if n := len(w.kubelet.calls()); n != calls {
		t.Errorf("asked again %d times within %s of a 403", n-calls, kubeletstats.ForbiddenRecheck)
	}
	_, missing := w.sampler.StepCPU(context.Background(), w.run, "maria", t0, t0.Add(10*time.Second))
	for _, want := range []string{"may not read the kubelet's stats", "get on nodes/proxy", "serverStats.kubeletCPU=true"} {
		if !strings.Contains(missing, want) {
			t.Errorf("missing %q, want it to say %q", missing, want)
		}
	}
	// Granted later: the sampler notices at its next recheck.
	w.kubelet.mu.Lock()
	w.kubelet.forbidden = false
	w.kubelet.mu.Unlock()
	w.tick(t, 1, kubeletstats.ForbiddenRecheck)
	w.tick(t, 3, 2*time.Second)
	now := w.clock.Now()
	if cpu, missing := w.sampler.StepCPU(context.Background(), w.run, "maria", now.Add(-5*time.Second), now); cpu == nil {
		t.Errorf("after the permission was granted: %q", missing)
	}
}

// A running step's client pod is sampled too: its CPU over the step says whether the client kept
// up, and a client that was never sampled says why.
func TestSamplerClientCPU(t *testing.T) {
	w := newWorld(t)
	t0 := w.clock.Now()
	client := specs.ClientPodLabels(w.run, "maria", "s01")
	w.pod(t, "cpu-maria-s01-a0-x", "client-1", client)
	w.kubelet.mu.Lock()
	w.kubelet.containers["client-1"] = []fakeContainer{{namespace: w.ns, pod: "cpu-maria-s01-a0-x", name: specs.SysbenchContainer,
		start: t0, cores: 1.8}}
	w.kubelet.mu.Unlock()
	w.start(t, 3)
	w.tick(t, 8, 2*time.Second)
	ctx := context.Background()
	u, missing := w.sampler.ClientCPU(ctx, w.ns, "cpu-maria-s01-a0-x", specs.SysbenchContainer, t0.Add(time.Second), t0.Add(13*time.Second))
	if missing != "" || math.Abs(u.PerSecond-1.8) > 1e-6 || u.Samples != 6 {
		t.Errorf("client CPU %+v, %q: want 1.8 cores over 6 samples", u, missing)
	}
	// The server's StepCPU is not confused by the client's container.
	if cpu, missing := w.sampler.StepCPU(ctx, w.run, "maria", t0.Add(time.Second), t0.Add(13*time.Second)); missing != "" ||
		math.Abs(cpu.PerSecond-1.5) > 1e-6 {
		t.Errorf("server CPU %+v, %q: want 1.5 cores", cpu, missing)
	}
	if _, missing := w.sampler.ClientCPU(ctx, w.ns, "cpu-maria-s02-a0-y", specs.SysbenchContainer, t0, t0.Add(10*time.Second)); !strings.Contains(missing, "never sampled") {
		t.Errorf("an unsampled client: %q", missing)
	}
	if _, missing := w.sampler.ClientCPU(ctx, w.ns, "cpu-maria-s01-a0-x", specs.SysbenchContainer, t0.Add(5*time.Second), t0.Add(6*time.Second)); !strings.Contains(missing, "fell inside") {
		t.Errorf("a step shorter than two samples: %q", missing)
	}
}
