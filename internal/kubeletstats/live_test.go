package kubeletstats_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/kubeletstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// TestLiveAgainstCgroup checks the Sampler on a real cluster whose nodes run on this host (the
// local cluster, test/localcluster, as root): while the BenchmarkRun MYSQLBENCH_LIVE_RUN (in
// namespace MYSQLBENCH_LIVE_NAMESPACE, default "default") runs its ladder, it takes windows of
// MYSQLBENCH_LIVE_WINDOW (default 15s), reads the server container's cgroup CPU counter
// (cpuacct.usage, cgroup v1) at each window's ends itself, and compares that with StepCPU over the
// same window. Then it prints StepCPU for each finished ladder step (the Job's start and finish,
// whole seconds) with the step's QPS: CPU seconds per query.
//
//	MYSQLBENCH_LIVE_KUBECONFIG=test/localcluster/.state/kubeconfig MYSQLBENCH_LIVE_RUN=cpu go test ./internal/kubeletstats -run Live -v
func TestLiveAgainstCgroup(t *testing.T) {
	kubeconfig, runName := os.Getenv("MYSQLBENCH_LIVE_KUBECONFIG"), os.Getenv("MYSQLBENCH_LIVE_RUN")
	if kubeconfig == "" || runName == "" {
		t.Skip("MYSQLBENCH_LIVE_KUBECONFIG and MYSQLBENCH_LIVE_RUN name a cluster on this host and a running BenchmarkRun")
	}
	ns := cmpOr(os.Getenv("MYSQLBENCH_LIVE_NAMESPACE"), "default")
	window := 15 * time.Second
	if w := os.Getenv("MYSQLBENCH_LIVE_WINDOW"); w != "" {
		var err error
		if window, err = time.ParseDuration(w); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := kubeletstats.New(c, c, kubeletstats.APIServerProxy{Client: cs.CoreV1().RESTClient()}, clock.RealClock{}, ctrl.Log,
		kubeletstats.Config{Interval: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = s.Start(ctx) }()

	run := &v1.BenchmarkRun{}
	get := func() {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: runName}, run); err != nil {
			t.Fatal(err)
		}
	}
	get()
	target := func() string { return run.Status.CurrentTarget }
	for get(); !run.Status.Phase.Finished(); get() {
		tgt := target()
		phase := targetPhase(run, tgt)
		if phase != v1.TargetRunning {
			time.Sleep(time.Second)
			continue
		}
		path, err := cgroupOf(ctx, c, run, tgt)
		if err != nil {
			t.Logf("target %s: %v", tgt, err)
			time.Sleep(time.Second)
			continue
		}
		from, u0, err := readUsage(path)
		if err != nil {
			t.Logf("target %s: %v", tgt, err)
			continue
		}
		time.Sleep(window)
		to, u1, err := readUsage(path)
		if err != nil {
			t.Logf("target %s: %v", tgt, err)
			continue
		}
		truth := float64(u1-u0) / 1e9 / to.Sub(from).Seconds()
		cpu, missing := s.StepCPU(ctx, run, tgt, from, to)
		if cpu == nil {
			t.Logf("target %s window %s: cgroup %.3f cores; sampler: %s", tgt, to.Sub(from).Round(time.Millisecond), truth, missing)
			continue
		}
		t.Logf("target %s window %s: cgroup %.3f cores; sampler %.3f cores (%.3f s over %.3f s, %d samples): %+.1f %%",
			tgt, to.Sub(from).Round(time.Millisecond), truth, cpu.PerSecond, cpu.Seconds, cpu.To-cpu.From, cpu.Samples,
			100*(cpu.PerSecond/truth-1))
	}
	t.Logf("run %s %s", runName, run.Status.Phase)
	for _, ts := range run.Status.Targets {
		for _, st := range ts.Steps {
			if st.StartTime == nil || st.FinishTime == nil {
				continue
			}
			cpu, missing := s.StepCPU(ctx, run, ts.Name, st.StartTime.Time, st.FinishTime.Time)
			if cpu == nil {
				t.Logf("%s %d threads: %.0f QPS; %s", ts.Name, st.Threads, st.QPS.Total, missing)
				continue
			}
			t.Logf("%s %d threads: %.0f QPS, %.3f cores (%d samples over %.1f s): %.1f µs CPU per query",
				ts.Name, st.Threads, st.QPS.Total, cpu.PerSecond, cpu.Samples, cpu.To-cpu.From, 1e6*cpu.PerSecond/st.QPS.Total)
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func targetPhase(run *v1.BenchmarkRun, target string) v1.TargetPhase {
	for _, ts := range run.Status.Targets {
		if ts.Name == target {
			return ts.Phase
		}
	}
	return ""
}

// cgroupOf finds the cpuacct cgroup directory of the target's server container on this host.
func cgroupOf(ctx context.Context, c client.Client, run *v1.BenchmarkRun, target string) (string, error) {
	pod := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: specs.ServerName(run, target) + "-0"}, pod); err != nil {
		return "", err
	}
	var id string
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == "mysql" {
			_, id, _ = strings.Cut(cs.ContainerID, "://")
		}
	}
	if id == "" {
		return "", fmt.Errorf("pod %s has no mysql container ID yet", pod.Name)
	}
	matches, _ := filepath.Glob("/sys/fs/cgroup/cpuacct/*/kubepods*/*/pod" + string(pod.UID) + "/" + id)
	matches2, _ := filepath.Glob("/sys/fs/cgroup/cpuacct/*/kubepods*/pod" + string(pod.UID) + "/" + id)
	matches = append(matches, matches2...)
	if len(matches) != 1 {
		return "", fmt.Errorf("cgroup of container %s: found %v", id, matches)
	}
	return matches[0], nil
}

func readUsage(dir string) (time.Time, uint64, error) {
	data, err := os.ReadFile(filepath.Join(dir, "cpuacct.usage"))
	at := time.Now()
	if err != nil {
		return at, 0, err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	return at, n, err
}
