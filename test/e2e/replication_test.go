//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// TestReplicationOnARealCluster runs spec.serverInstance PerRepetition on real servers: every
// repetition after the first measures a new server pod (its data prepared again on the
// emptyDir, warmed up), and no replacement counts as a restart.
//
// With E2E_REPLICATION_FULL=1 (make measure-replication) it also measures what that buys: the
// same targets run once with every repetition on one server instance (Shared) and once with a
// new instance per repetition, and it prints, per target and thread count, the coefficient of
// variation of QPS over the repetitions in each: the noise within one instance and between
// instances. E2E_REPLICATION_IMAGES (default: those of mysql:9.7 and mariadb:10.11 that
// E2E_IMAGES names, else mariadb:10.11), E2E_REPLICATION_REPETITIONS (2; full: 8),
// E2E_REPLICATION_THREADS (1; full: 1,4), E2E_STEP (5s).
func TestReplicationOnARealCluster(t *testing.T) {
	if os.Getenv("E2E_SECURITY") == "1" || os.Getenv("E2E_REPLICATION") == "0" {
		t.Skip("runs in the cluster-wide phase of the e2e suite")
	}
	ctx := context.Background()
	c := newClient(t)
	ns := e2eNamespace(ctx, t, c)
	full := os.Getenv("E2E_REPLICATION_FULL") == "1"
	images := replicationImages()
	reps, threads := 2, "1"
	if full {
		reps, threads = 8, "1,4"
	}
	reps, err := strconv.Atoi(env("E2E_REPLICATION_REPETITIONS", strconv.Itoa(reps)))
	if err != nil || reps < 2 || reps > 10 {
		t.Fatalf("E2E_REPLICATION_REPETITIONS=%q: want 2 to 10", os.Getenv("E2E_REPLICATION_REPETITIONS"))
	}
	ladder := e2eThreads(t, "E2E_REPLICATION_THREADS", threads)
	step := e2eStep(t, "5s")
	spec := func(mode v1.ServerInstanceMode) v1.BenchmarkRunSpec {
		s := v1.BenchmarkRunSpec{
			Workload: v1.Workload{Script: "oltp_point_select", Tables: 2, TableSize: 10000},
			Ladder: v1.Ladder{Threads: ladder, StepDuration: &metav1.Duration{Duration: step},
				Warmup: &metav1.Duration{Duration: step}},
			Repetitions:    ptr.To(int32(reps)),
			ServerInstance: mode,
			SysbenchImage:  os.Getenv("E2E_SYSBENCH_IMAGE"),
			StepRetryLimit: ptr.To[int32](1),
			Cleanup:        v1.CleanupAlways,
		}
		for _, img := range images {
			s.Targets = append(s.Targets, v1.Target{Name: targetName(img), Image: img})
		}
		return s
	}

	fresh := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "replicas", Namespace: ns}, Spec: spec(v1.ServerInstancePerRepetition)}
	// The server pods each target had, seen while the run went: one per repetition.
	pods := map[string]map[string]bool{}
	recreate(t, c, fresh)
	start := time.Now()
	got := watchServers(ctx, t, c, fresh, 45*time.Minute, pods)
	t.Logf("serverInstance PerRepetition: %d targets x %d thread counts x %d repetitions in %s",
		len(images), len(ladder), reps, time.Since(start).Round(time.Second))
	for _, ts := range got.Status.Targets {
		if len(ts.Steps) != reps*len(ladder) {
			t.Errorf("target %s: %d steps, want %d", ts.Name, len(ts.Steps), reps*len(ladder))
		}
		for _, s := range ts.Steps {
			if s.Instance != s.RepetitionOrDefault() {
				t.Errorf("target %s: the step at %d threads of repetition %d measured instance %d, want %d",
					ts.Name, s.Threads, s.RepetitionOrDefault(), s.Instance, s.RepetitionOrDefault())
			}
		}
		if ts.ServerRestarts != 0 || ts.Instances != int32(reps) {
			t.Errorf("target %s: %d restarts, %d instances; want 0 restarts (a replacement is none) and %d instances",
				ts.Name, ts.ServerRestarts, ts.Instances, reps)
		}
		if n := len(pods[ts.Name]); n != reps {
			t.Errorf("target %s: %d server pods seen, want %d (one per repetition)", ts.Name, n, reps)
		}
	}
	events := &corev1.EventList{}
	if err := c.List(ctx, events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
		return e.Reason == "ServerReplaced" && e.InvolvedObject.UID == got.UID
	}) {
		t.Errorf("no ServerReplaced event for run %s", got.Name)
	}
	if !full {
		deleteRun(t, c, got)
		return
	}

	shared := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "replicas-shared", Namespace: ns}, Spec: spec(v1.ServerInstanceShared)}
	recreate(t, c, shared)
	start = time.Now()
	one := watchServers(ctx, t, c, shared, 45*time.Minute, map[string]map[string]bool{})
	t.Logf("serverInstance Shared: in %s", time.Since(start).Round(time.Second))
	var rows []string
	var within, between []float64
	for i, ts := range one.Status.Targets {
		for _, th := range ladder {
			w, b := qpsCV(ts.Steps, th), qpsCV(got.Status.Targets[i].Steps, th)
			within, between = append(within, w), append(between, b)
			rows = append(rows, fmt.Sprintf("| %s | %s | %d | %.0f | %.2f %% | %.0f | %.2f %% | %.2f |", ts.Name, ts.ServerVersion, th,
				medianQPS(ts.Steps, th), 100*w, medianQPS(got.Status.Targets[i].Steps, th), 100*b, b/w))
		}
	}
	t.Logf("QPS over %d repetitions of %s steps (oltp_point_select, 2 x 10000 rows): one server instance for all "+
		"(within) vs a new one per repetition (between)\n| target | server | threads | median QPS, one instance | CV within | "+
		"median QPS, new instances | CV between | between / within |\n|---|---|---:|---:|---:|---:|---:|---:|\n%s\n"+
		"root mean square CV: within %.2f %%, between %.2f %%",
		reps, step, strings.Join(rows, "\n"), 100*rms(within), 100*rms(between))
	deleteRun(t, c, got)
	deleteRun(t, c, one)
}

// replicationImages are the servers docs/evidence.md's figures are for (MySQL 9.7, MariaDB 10.11),
// among those the suite runs.
func replicationImages() []string {
	if s := os.Getenv("E2E_REPLICATION_IMAGES"); s != "" {
		return strings.Split(s, ",")
	}
	var imgs []string
	for _, img := range strings.Split(env("E2E_IMAGES", ""), ",") {
		if img == "mysql:9.7" || img == "mariadb:10.11" {
			imgs = append(imgs, img)
		}
	}
	if len(imgs) == 0 || os.Getenv("E2E_REPLICATION_FULL") != "1" {
		// One target is enough to prove the mechanism in the suite.
		return []string{"mariadb:10.11"}
	}
	return imgs
}

// watchServers waits for the run to succeed, recording the server pods of each target by UID.
func watchServers(ctx context.Context, t *testing.T, c client.Client, run *v1.BenchmarkRun, timeout time.Duration,
	pods map[string]map[string]bool) *v1.BenchmarkRun {
	t.Helper()
	deadline := time.Now().Add(timeout)
	got := &v1.BenchmarkRun{}
	for {
		for _, tg := range run.Spec.Targets {
			pod := &corev1.Pod{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: specs.ServerName(run, tg.Name) + "-0"}, pod); err == nil {
				if pods[tg.Name] == nil {
					pods[tg.Name] = map[string]bool{}
				}
				pods[tg.Name][string(pod.UID)] = true
			}
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			t.Fatal(err)
		}
		if got.Status.Phase == v1.RunSucceeded {
			return got
		}
		if got.Status.Phase == v1.RunFailed {
			t.Fatalf("run %s failed: %+v", run.Name, got.Status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s not done after %s: %+v", run.Name, timeout, got.Status)
		}
		time.Sleep(time.Second)
	}
}

func deleteRun(t *testing.T, c client.Client, run *v1.BenchmarkRun) {
	t.Helper()
	if err := c.Delete(context.Background(), run); err != nil {
		t.Error(err)
		return
	}
	waitGone(t, c, run)
}

func qpsAt(steps []v1.StepResult, threads int32) []float64 {
	var q []float64
	for _, s := range steps {
		if s.Threads == threads && !s.OverDuration {
			q = append(q, s.QPS.Total)
		}
	}
	return q
}

// qpsCV is the sample coefficient of variation of the QPS of the steps at threads.
func qpsCV(steps []v1.StepResult, threads int32) float64 {
	q := qpsAt(steps, threads)
	if len(q) < 2 {
		return math.NaN()
	}
	return stddev(q) / mean(q)
}

func medianQPS(steps []v1.StepResult, threads int32) float64 {
	q := qpsAt(steps, threads)
	if len(q) == 0 {
		return math.NaN()
	}
	slices.Sort(q)
	if len(q)%2 == 1 {
		return q[len(q)/2]
	}
	return (q[len(q)/2-1] + q[len(q)/2]) / 2
}

func rms(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x * x
	}
	return math.Sqrt(s / float64(len(xs)))
}
