//go:build chaos

// Package chaos breaks things under real BenchmarkRuns on the project's local cluster
// (test/localcluster, `make test-chaos`): the manager killed again and again, the server pod
// killed in the middle of a step, a sysbench pod deleted in the middle of a step, the API server
// restarted, and three runs queued for the one database node. Every case checks from the API
// that no step was lost, none was measured twice, none that ran across a server restart was kept,
// and that the run ended Succeeded within a stated bound; a table of the cases is printed at the
// end.
//
// It needs the operator installed (hack/chaos-local.sh does it), KUBECONFIG, KUBECTL and
// CLUSTER_SH (test/localcluster/cluster.sh, for the API server restart).
package chaos

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
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
	"github.com/mysqlbench/mysqlbench-operator/test/clustertest"
)

// runBound is how long one run may take from creation to its end under any of the faults; a
// fault-free run of the ladder below takes about a minute and a half on two cores.
const runBound = 8 * time.Minute

var ladder = []int32{1, 2, 4, 8, 16}

// row is one line of the table printed at the end.
type row struct {
	name, outcome string
	// clear is how long after the fault the API said what happened (an Event or a condition).
	clear time.Duration
	total time.Duration
	note  string
}

var (
	mu   sync.Mutex
	rows []row
)

func record(r row) {
	mu.Lock()
	rows = append(rows, r)
	mu.Unlock()
}

func TestMain(m *testing.M) {
	code := m.Run()
	mu.Lock()
	defer mu.Unlock()
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "\nCASE\tOUTCOME\tTIME TO A CLEAR CONDITION\tRUN TOOK\tNOTES")
	for _, r := range rows {
		_, _ = fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.name, r.outcome, r.clear.Round(100*time.Millisecond), r.total.Round(time.Second), r.note)
	}
	_ = w.Flush()
	os.Exit(code)
}

var (
	env       = clustertest.Env
	newClient = clustertest.NewClient
)

// kubectl runs kubectl; a failure fails the test with its output.
func kubectl(t testing.TB, args ...string) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(env("KUBECTL", "kubectl"), args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
}

// namespace is a fresh namespace for one case.
func namespace(t *testing.T, c client.Client, name string) string {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	_ = c.Delete(ctx, ns)
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		err := c.Create(ctx, ns.DeepCopy())
		if err == nil {
			break
		}
		if !apierrors.IsAlreadyExists(err) || time.Now().After(deadline) {
			t.Fatalf("namespace %s: %v", name, err)
		}
	}
	// A case that failed half-way must not leave a server holding the database node.
	t.Cleanup(func() { _ = c.Delete(context.Background(), ns) })
	return name
}

// chaosRun is the run every case breaks: one MariaDB server on an emptyDir, a five-step ladder.
func chaosRun(ns, name string) *v1.BenchmarkRun {
	return &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.BenchmarkRunSpec{
			Targets:  []v1.Target{{Name: "db", Image: env("CHAOS_IMAGE", "mariadb:10.11")}},
			Workload: v1.Workload{Script: "oltp_point_select", Tables: 2, TableSize: 5000},
			Ladder: v1.Ladder{Threads: ladder, StepDuration: &metav1.Duration{Duration: 5 * time.Second},
				Warmup: &metav1.Duration{Duration: 3 * time.Second}},
			SysbenchImage:  os.Getenv("E2E_SYSBENCH_IMAGE"),
			StepRetryLimit: ptr.To[int32](2),
			Cleanup:        v1.CleanupAlways,
		},
	}
}

// get reads the run; a read error (the API server restarting) is retried by the caller.
func get(c client.Client, run *v1.BenchmarkRun) (*v1.BenchmarkRun, error) {
	got := &v1.BenchmarkRun{}
	err := c.Get(context.Background(), client.ObjectKeyFromObject(run), got)
	return got, err
}

// waitUntil polls the run until cond holds, tolerating read errors, for at most d.
func waitUntil(t *testing.T, c client.Client, run *v1.BenchmarkRun, d time.Duration, what string, cond func(*v1.BenchmarkRun) bool) *v1.BenchmarkRun {
	t.Helper()
	deadline := time.Now().Add(d)
	var last *v1.BenchmarkRun
	for {
		if got, err := get(c, run); err == nil {
			last = got
			if cond(got) {
				return got
			}
		}
		if time.Now().After(deadline) {
			if last != nil {
				t.Fatalf("%s: not within %s; status %+v", what, d, last.Status)
			}
			t.Fatalf("%s: not within %s; the run could not be read", what, d)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func finished(r *v1.BenchmarkRun) bool { return r.Status.Phase.Finished() }

// inStep says whether the run is measuring ladder step i (0-based) and its Job's pod runs.
func inStep(c client.Client, i int) func(*v1.BenchmarkRun) bool {
	return func(r *v1.BenchmarkRun) bool {
		if r.Status.Phase != v1.RunRunning || len(r.Status.Targets) == 0 || len(r.Status.Targets[0].Steps) != i {
			return false
		}
		return stepPod(c, r, i) != nil
	}
}

// stepPod is the running pod of ladder step i's current Job, or nil.
func stepPod(c client.Client, run *v1.BenchmarkRun, i int) *corev1.Pod {
	pods := &corev1.PodList{}
	if err := c.List(context.Background(), pods, client.InNamespace(run.Namespace),
		client.MatchingLabels{specs.LabelRun: run.Name, specs.LabelStep: specs.LadderStep(i, 1)}); err != nil {
		return nil
	}
	for j := range pods.Items {
		p := &pods.Items[j]
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp.IsZero() {
			return p
		}
	}
	return nil
}

// checkLadder asserts what every case must keep: the run Succeeded with every step of the ladder
// measured exactly once, in order, none of it before the last server restart.
func checkLadder(t *testing.T, got *v1.BenchmarkRun) {
	t.Helper()
	checkLadderOf(t, got, ladder)
}

func checkLadderOf(t *testing.T, got *v1.BenchmarkRun, ladder []int32) {
	t.Helper()
	if got.Status.Phase != v1.RunSucceeded {
		msg := ""
		if len(got.Status.Targets) > 0 {
			msg = got.Status.Targets[0].Message
		}
		t.Fatalf("run %s (%s): want Succeeded", got.Status.Phase, msg)
	}
	ts := got.Status.Targets[0]
	if len(ts.Steps) != len(ladder) {
		t.Fatalf("%d steps measured, want %d: a step was lost or measured twice", len(ts.Steps), len(ladder))
	}
	for i, s := range ts.Steps {
		if s.Threads != ladder[i] {
			t.Errorf("step %d measured %d threads, want %d", i+1, s.Threads, ladder[i])
		}
		if s.QPS.Total <= 0 {
			t.Errorf("step %d: %v qps", i+1, s.QPS.Total)
		}
	}
	if r := ts.LastServerRestart; r != nil {
		for i, s := range ts.Steps {
			if s.StartTime != nil && s.FinishTime != nil && s.StartTime.Before(&r.Time) && r.Time.Before(s.FinishTime) {
				t.Errorf("step %d ran from %v to %v, across the server restart at %v, and was kept", i+1, s.StartTime, s.FinishTime, r.Time)
			}
		}
	}
}

// jobsOf lists the run's sysbench Jobs by name.
func jobsOf(t *testing.T, c client.Client, run *v1.BenchmarkRun) []string {
	t.Helper()
	seen := jobsSeen(run)
	if err := listJobs(c, run, seen); err != nil {
		t.Fatal(err)
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	names := make([]string, 0, len(seen.names))
	for n := range seen.names {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// jobNames are the names of every Job of a run seen while it went: the operator deletes
// finished Jobs once their results are stored, so the Jobs left at the end are not all it ran.
type jobNames struct {
	mu    sync.Mutex
	names map[string]bool
}

var (
	jobsMu   sync.Mutex
	jobsByNS = map[string]*jobNames{}
)

func jobsSeen(run *v1.BenchmarkRun) *jobNames {
	jobsMu.Lock()
	defer jobsMu.Unlock()
	key := run.Namespace + "/" + run.Name
	if jobsByNS[key] == nil {
		jobsByNS[key] = &jobNames{names: map[string]bool{}}
	}
	return jobsByNS[key]
}

func listJobs(c client.Client, run *v1.BenchmarkRun, seen *jobNames) error {
	jobs := &batchv1.JobList{}
	if err := c.List(context.Background(), jobs, client.InNamespace(run.Namespace), client.MatchingLabels{specs.LabelRun: run.Name}); err != nil {
		return err
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	for _, j := range jobs.Items {
		seen.names[j.Name] = true
	}
	return nil
}

// recordJobs notes the run's Jobs every half second until the test ends (a Job lives at least
// its step's duration, seconds, before the operator deletes it). Transient list errors (the API
// server restarted by a test) are skipped.
func recordJobs(t *testing.T, c client.Client, run *v1.BenchmarkRun) {
	seen := jobsSeen(run)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			_ = listJobs(c, run, seen)
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// eventAfter waits for an Event of reason about the run newer than since, and returns when it
// was seen.
func eventAfter(t *testing.T, c client.Client, run *v1.BenchmarkRun, reason string, since time.Time, d time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		events := &corev1.EventList{}
		if err := c.List(context.Background(), events, client.InNamespace(run.Namespace)); err == nil {
			for _, e := range events.Items {
				if e.Reason == reason && e.InvolvedObject.Name == run.Name && !e.LastTimestamp.Time.Before(since.Truncate(time.Second)) {
					return time.Now()
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s Event within %s", reason, d)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func start(t *testing.T, c client.Client, run *v1.BenchmarkRun) time.Time {
	t.Helper()
	if err := c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	recordJobs(t, c, run)
	return time.Now()
}

// managerPod is the operator's running pod, waited for (a killed one's replacement starts).
func managerPod(t *testing.T, c client.Client) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		pods := &corev1.PodList{}
		err := c.List(context.Background(), pods, client.InNamespace(env("OPERATOR_NAMESPACE", "mysqlbench-system")),
			client.MatchingLabels{"app.kubernetes.io/name": "mysqlbench-operator"})
		if err == nil {
			for _, p := range pods.Items {
				if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp.IsZero() {
					return p.Name
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no running manager pod within 2m (err %v)", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// The manager killed (force-deleted, as a node failure would) at random points across the whole
// run, five times: the new manager resumes from the status, nothing is lost or repeated.
func TestManagerKilledAcrossTheLadder(t *testing.T) {
	c := newClient(t)
	ns := namespace(t, c, "chaos-manager")
	run := chaosRun(ns, "manager")
	// A longer ladder, so that the kills land in provisioning, prepare, warm-up and many steps.
	run.Spec.Ladder.Threads = []int32{1, 2, 4, 8, 16, 32, 64, 128}
	t0 := start(t, c, run)
	kills, worst := 0, time.Duration(0)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for kills < 6 {
		time.Sleep(time.Duration(2+rng.IntN(8)) * time.Second)
		before, err := get(c, run)
		if err != nil || before.Status.Phase.Finished() {
			break
		}
		pod := managerPod(t, c)
		killedAt := time.Now()
		kubectl(t, "-n", env("OPERATOR_NAMESPACE", "mysqlbench-system"), "delete", "pod", pod, "--force", "--grace-period=0", "--wait=false")
		kills++
		t.Logf("kill %d: manager pod %s during %q", kills, pod, before.Status.CurrentStep)
		// A clear condition: the run moves again (its status changes) or ends.
		waitUntil(t, c, run, 3*time.Minute, "the run to move after the manager was killed", func(r *v1.BenchmarkRun) bool {
			return r.Status.Phase.Finished() || r.ResourceVersion != before.ResourceVersion
		})
		worst = max(worst, time.Since(killedAt))
	}
	got := waitUntil(t, c, run, runBound, "the run to finish", finished)
	if kills < 5 {
		t.Errorf("the run ended after %d kills of the manager, want at least 5", kills)
	}
	checkLadderOf(t, got, run.Spec.Ladder.Threads)
	for _, s := range got.Status.Targets[0].Steps {
		if s.Attempts != 1 {
			t.Errorf("step %d threads took %d attempts: a manager restart is not a failed attempt", s.Threads, s.Attempts)
		}
	}
	for _, j := range jobsOf(t, c, got) {
		if !strings.HasSuffix(j, "-a0") {
			t.Errorf("Job %s: a manager restart made a second attempt", j)
		}
	}
	record(row{name: fmt.Sprintf("manager killed %d times", kills), outcome: string(got.Status.Phase), clear: worst,
		total: time.Since(t0), note: "clear = worst time from a kill to the next status change"})
}

// The server pod deleted in the middle of step 2 (emptyDir: its data goes with it): the step is
// discarded, the data prepared again, the warm-up run, and step 2 measured again.
func TestServerKilledMidStep(t *testing.T) {
	c := newClient(t)
	ns := namespace(t, c, "chaos-server")
	run := chaosRun(ns, "server")
	t0 := start(t, c, run)
	waitUntil(t, c, run, runBound, "step 2 to run", inStep(c, 1))
	killedAt := time.Now()
	kubectl(t, "-n", ns, "delete", "pod", specs.ServerName(run, "db")+"-0", "--force", "--grace-period=0", "--wait=false")
	seen := eventAfter(t, c, run, "ServerRestarted", killedAt, 2*time.Minute)
	got := waitUntil(t, c, run, runBound, "the run to finish", finished)
	checkLadder(t, got)
	ts := got.Status.Targets[0]
	if ts.ServerRestarts != 1 || ts.LastServerRestart == nil || !strings.Contains(ts.LastServerRestart.During, "2/") {
		t.Errorf("serverRestarts %d, lastServerRestart %+v: want 1, during step 2", ts.ServerRestarts, ts.LastServerRestart)
	}
	jobs := strings.Join(jobsOf(t, c, got), " ")
	if !strings.Contains(jobs, "-prepare-r1a0") || !strings.Contains(jobs, "-warmup-r1a0") || !strings.Contains(jobs, "-s02-r1a0") {
		t.Errorf("Jobs %s: want prepare, warm-up and step 2 again after the restart", jobs)
	}
	record(row{name: "server pod killed in step 2", outcome: string(got.Status.Phase), clear: seen.Sub(killedAt),
		total: time.Since(t0), note: "ServerRestarted Event; data prepared again, step 2 measured again"})
}

// The sysbench pod of step 2 deleted while it runs: the Job fails, the step is retried as a new
// attempt and measured once.
func TestSysbenchPodDeletedMidStep(t *testing.T) {
	c := newClient(t)
	ns := namespace(t, c, "chaos-client")
	run := chaosRun(ns, "client")
	t0 := start(t, c, run)
	cur := waitUntil(t, c, run, runBound, "step 2 to run", inStep(c, 1))
	pod := stepPod(c, cur, 1)
	killedAt := time.Now()
	kubectl(t, "-n", ns, "delete", "pod", pod.Name, "--force", "--grace-period=0", "--wait=false")
	seen := eventAfter(t, c, run, "StepFailed", killedAt, 2*time.Minute)
	got := waitUntil(t, c, run, runBound, "the run to finish", finished)
	checkLadder(t, got)
	if a := got.Status.Targets[0].Steps[1].Attempts; a != 2 {
		t.Errorf("step 2 took %d attempts, want 2 (the deleted one and its retry)", a)
	}
	record(row{name: "sysbench pod deleted in step 2", outcome: string(got.Status.Phase), clear: seen.Sub(killedAt),
		total: time.Since(t0), note: "StepFailed Event; retried as attempt 2"})
}

// The API server restarted in the middle of step 2: watches break and resume, nothing is lost.
func TestAPIServerRestartedMidRun(t *testing.T) {
	c := newClient(t)
	ns := namespace(t, c, "chaos-apiserver")
	run := chaosRun(ns, "apiserver")
	t0 := start(t, c, run)
	before := waitUntil(t, c, run, runBound, "step 2 to run", inStep(c, 1))
	restartedAt := time.Now()
	out, err := exec.Command(env("CLUSTER_SH", "test/localcluster/cluster.sh"), "restart-apiserver").CombinedOutput()
	if err != nil {
		t.Fatalf("restart the API server: %v\n%s", err, out)
	}
	t.Logf("%s", bytes.TrimSpace(out))
	// The manager may lose its leader lease while the API server is away and restart, after
	// the kubelet's crash-loop back-off.
	after := waitUntil(t, c, run, 6*time.Minute, "the run to move after the restart", func(r *v1.BenchmarkRun) bool {
		return r.Status.Phase.Finished() || len(r.Status.Targets[0].Steps) > len(before.Status.Targets[0].Steps)
	})
	clear := time.Since(restartedAt)
	got := waitUntil(t, c, run, runBound, "the run to finish", finished)
	checkLadder(t, got)
	for _, s := range got.Status.Targets[0].Steps {
		if s.Attempts != 1 {
			t.Errorf("step %d threads took %d attempts across an API server restart", s.Threads, s.Attempts)
		}
	}
	_ = after
	record(row{name: "API server restarted in step 2", outcome: string(got.Status.Phase), clear: clear,
		total: time.Since(t0), note: "clear = restart to the next measured step"})
}

// Three runs for the one database node: they take turns in creation order, the waiting ones say
// Queued with their position, none fails for waiting, and the node never serves two at once.
func TestThreeRunsQueueForTheDatabaseNode(t *testing.T) {
	c := newClient(t)
	ns := namespace(t, c, "chaos-queue")
	var runs []*v1.BenchmarkRun
	t0 := time.Now()
	for i, name := range []string{"first", "second", "third"} {
		run := chaosRun(ns, name)
		run.Spec.Ladder.Threads = []int32{1, 4}
		runs = append(runs, run)
		start(t, c, run)
		if i < 2 {
			time.Sleep(1100 * time.Millisecond) // start times have whole seconds
		}
	}
	var queuedSeen time.Duration
	positions := map[string]bool{}
	deadline := time.Now().Add(3 * runBound)
	for {
		done := 0
		for _, run := range runs {
			got, err := get(c, run)
			if err != nil || len(got.Status.Targets) == 0 {
				continue
			}
			if got.Status.Phase.Finished() {
				done++
				continue
			}
			if cond := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionProgressing); cond != nil && cond.Reason == "Queued" {
				if queuedSeen == 0 {
					queuedSeen = time.Since(t0)
				}
				for _, p := range []string{"position 1", "position 2"} {
					if strings.Contains(cond.Message, p) {
						positions[run.Name+" "+p] = true
					}
				}
			}
		}
		if done == len(runs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the three runs did not finish within %s", 3*runBound)
		}
		time.Sleep(300 * time.Millisecond)
	}
	// Each target holds the node from when it left Pending (startTime) to when it ended
	// (completionTime), both written by the operator: no two of these intervals may overlap.
	var finishes []time.Time
	type hold struct {
		run        string
		start, end time.Time
	}
	var holds []hold
	for _, run := range runs {
		got, err := get(c, run)
		if err != nil {
			t.Fatal(err)
		}
		if ts := got.Status.Targets[0]; ts.StartTime != nil && ts.CompletionTime != nil {
			holds = append(holds, hold{got.Name, ts.StartTime.Time, ts.CompletionTime.Time})
		}
		if got.Status.Phase != v1.RunSucceeded || len(got.Status.Targets[0].Steps) != 2 {
			t.Errorf("run %s: %s with %d steps (%s), want Succeeded with 2: a queued run never fails for waiting",
				got.Name, got.Status.Phase, len(got.Status.Targets[0].Steps), got.Status.Targets[0].Message)
		}
		finishes = append(finishes, got.Status.CompletionTime.Time)
	}
	for i := range holds {
		for j := i + 1; j < len(holds); j++ {
			a, b := holds[i], holds[j]
			if a.start.Before(b.end) && b.start.Before(a.end) {
				t.Errorf("runs %s (%v to %v) and %s (%v to %v) held the database node at the same time",
					a.run, a.start, a.end, b.run, b.start, b.end)
			}
		}
	}
	if !sort.SliceIsSorted(finishes, func(i, j int) bool { return finishes[i].Before(finishes[j]) }) {
		t.Errorf("runs finished at %v: want creation order", finishes)
	}
	if !positions["third position 2"] || !positions["second position 1"] {
		t.Errorf("queue positions seen: %v; want second at 1 and third at 2", positions)
	}
	record(row{name: "three runs for one database node", outcome: "3 Succeeded", clear: queuedSeen,
		total: time.Since(t0), note: "clear = creation to the first Queued condition; finished in creation order"})
}
