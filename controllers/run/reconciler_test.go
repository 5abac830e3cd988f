package run_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

func cacheFor(namespaces ...string) cache.Options {
	opts := cache.Options{DefaultNamespaces: map[string]cache.Config{}}
	for _, ns := range namespaces {
		opts.DefaultNamespaces[ns] = cache.Config{}
	}
	return opts
}

// The captured 4-thread run every successful step reports (run_point_select_t4.termination-log).
var want4 = struct {
	tps, qps, min, avg, p95, max, dur float64
}{17934.04, 17934.04, 0.069, 0.222, 0.499, 10.351, 3.004}

func TestTwoTargetsThreeStepsEndToEnd(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{log: withServerSnapshots(t, captured(t, "run_point_select_t4.txt"))})
	kl := startKubelet(t, ns, succeedAll(t))

	run := baseRun(ns, "pk", 1, 2, 4)
	run.Spec.Ladder.Warmup = &metav1.Duration{Duration: 5 * time.Second}
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "pk", 60*time.Second, "the run to finish", finished)

	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("phase %s, want Succeeded; status %+v", got.Status.Phase, got.Status)
	}
	if got.Status.ObservedGeneration != got.Generation {
		t.Errorf("observedGeneration %d, want %d", got.Status.ObservedGeneration, got.Generation)
	}
	for typ, want := range map[string]metav1.ConditionStatus{
		v1.ConditionReady: metav1.ConditionTrue, v1.ConditionProgressing: metav1.ConditionFalse, v1.ConditionFailed: metav1.ConditionFalse,
	} {
		if c := meta.FindStatusCondition(got.Status.Conditions, typ); c == nil || c.Status != want {
			t.Errorf("condition %s = %+v, want %s", typ, c, want)
		}
	}
	if got.Status.ResultsConfigMap != "pk-results" || got.Status.CurrentTarget != "" || got.Status.CompletionTime == nil {
		t.Errorf("results %q current %q completion %v", got.Status.ResultsConfigMap, got.Status.CurrentTarget, got.Status.CompletionTime)
	}
	if len(got.Status.Targets) != 2 {
		t.Fatalf("want 2 target statuses, got %+v", got.Status.Targets)
	}
	for i, ts := range got.Status.Targets {
		if ts.Name != run.Spec.Targets[i].Name || ts.Phase != v1.TargetSucceeded || ts.ServerVersion != "10.11.14-MariaDB-0+deb12u2" {
			t.Errorf("target %d: %s %s %q", i, ts.Name, ts.Phase, ts.ServerVersion)
		}
		if len(ts.Steps) != 3 {
			t.Fatalf("target %s: %d steps, want 3", ts.Name, len(ts.Steps))
		}
		for j, s := range ts.Steps {
			want := run.Spec.Ladder.Threads[j]
			if s.Threads != want || s.TPS != want4.tps || s.QPS.Total != want4.qps || s.QPS.Read != want4.qps ||
				s.QPS.Write != 0 || s.Latency.MinMs != want4.min || s.Latency.AvgMs != want4.avg ||
				s.Latency.P95Ms != want4.p95 || s.Latency.MaxMs != want4.max || s.DurationSeconds != want4.dur ||
				s.Errors != 0 || s.Reconnects != 0 || s.Attempts != 1 || s.StartTime == nil || s.FinishTime == nil {
				t.Errorf("target %s step %d: %+v", ts.Name, j, s)
			}
		}
	}

	// One Job per phase and step, in lifecycle order, each finished once.
	var wantJobs []string
	for _, tg := range []string{"mariadb", "mariadb-psoff"} {
		for _, s := range []string{"probe", "prepare", "warmup", "s01", "s02", "s03"} {
			wantJobs = append(wantJobs, "pk-"+tg+"-"+s+"-a0")
		}
	}
	if got := kl.finished(); strings.Join(got, ",") != strings.Join(wantJobs, ",") {
		t.Errorf("jobs ran in order\n%v\nwant\n%v", got, wantJobs)
	}

	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "pk-results"}, cm); err != nil {
		t.Fatal(err)
	}
	if len(cm.Data) != 5 || !strings.HasPrefix(cm.Data["qps-by-threads.svg"], "<?xml") || cm.Data["server.csv"] == "" {
		t.Errorf("results keys %v, want results.json, results.csv, report.md, server.csv and the qps-by-threads.svg chart only", keys(cm.Data))
	}
	md := cm.Data["report.md"]
	for _, want := range []string{
		"| Threads | mariadb (10.11.14-MariaDB-0+deb12u2) | mariadb-psoff (10.11.14-MariaDB-0+deb12u2) |",
		"| 1 | 17,934 | 17,934 | x1.00 (no interval) |",
		"| 2 | 17,934 | 17,934 | x1.00 (no interval) |",
		"| 4 | 17,934 | 17,934 | x1.00 (no interval) |",
		"| 4 | 0.499 | 0.499 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	rows, err := csv.NewReader(strings.NewReader(cm.Data["results.csv"])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 7 || rows[1][0] != "mariadb" || rows[1][2] != "1" || rows[6][0] != "mariadb-psoff" || rows[6][2] != "4" {
		t.Errorf("results.csv rows: %v", rows)
	}
	var doc struct {
		Run struct {
			Phase string `json:"phase"`
		} `json:"run"`
		Targets []struct {
			Name  string `json:"name"`
			Steps []struct {
				Series struct {
					QPS []float64 `json:"qps"`
				} `json:"series"`
			} `json:"steps"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(cm.Data["results.json"]), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Targets) != 2 || len(doc.Targets[0].Steps) != 3 || len(doc.Targets[1].Steps[2].Series.QPS) != 2 {
		t.Errorf("results.json lacks the per-second series of each step (the captured log has 2): %s", cm.Data["results.json"])
	}
	if doc.Run.Phase != "Succeeded" {
		t.Errorf("results.json says the run is %q, want Succeeded", doc.Run.Phase)
	}
	// What the server did in each step, from the snapshots in the step's log.
	decoded, err := results.Decode([]byte(cm.Data["results.json"]))
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range decoded.Targets {
		for _, st := range tr.Steps {
			server, ok, err := st.DecodedServer()
			if err != nil || !ok || server.Seconds <= 0 || len(server.Counters) == 0 || !server.PerformanceSchema || len(server.Waits) == 0 {
				t.Errorf("target %s, %d threads: server stats %+v, %v, %v", tr.Name, st.Threads, server, ok, err)
			}
		}
	}

	// cleanup: Always deleted each server once its ladder was done.
	for _, tg := range []string{"mariadb", "mariadb-psoff"} {
		err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "pk-" + tg}, &appsv1.StatefulSet{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("StatefulSet pk-%s still exists after cleanup Always: %v", tg, err)
		}
	}
	assertEvents(t, ns, "pk", "Started", "TargetProvisioning", "TargetPreparing", "TargetSucceeded", "Succeeded")
	assertOwned(t, ns, got)
}

func TestFailingStepIsRetriedThenFailsTheTarget(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	notPrepared := captured(t, "run_not_prepared_1146.txt")
	okRun := captured(t, "run_point_select_t4.termination-log")
	ok := succeedAll(t)
	startKubelet(t, ns, func(job *batchv1.Job) outcome {
		switch {
		// First target: step 2 always fails like a run against missing tables (exit 1, the
		// kubelet's log tail as termination message).
		case strings.HasPrefix(job.Name, "retry-mariadb-s02"):
			return outcome{exitCode: 1, message: notPrepared, failed: true}
		// Second target: step 1 fails once, then succeeds.
		case job.Name == "retry-mariadb-psoff-s01-a0":
			return outcome{exitCode: 1, message: notPrepared, failed: true}
		case job.Name == "retry-mariadb-psoff-s01-a1":
			return outcome{message: okRun}
		}
		return ok(job)
	})
	run := baseRun(ns, "retry", 1, 2, 4)
	run.Spec.StepRetryLimit = ptr.To[int32](1)
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "retry", 60*time.Second, "the run to finish", finished)
	if got.Status.Phase != v1.RunFailed {
		t.Fatalf("phase %s, want Failed", got.Status.Phase)
	}
	first, second := got.Status.Targets[0], got.Status.Targets[1]
	wantMsg := "step 2/3 (2 threads) failed after 2 attempts: error 1146"
	if first.Phase != v1.TargetFailed || !strings.Contains(first.Message, wantMsg) || !strings.Contains(first.Message, "prepare") {
		t.Errorf("first target: %s %q, want Failed with %q", first.Phase, first.Message, wantMsg)
	}
	if len(first.Steps) != 1 {
		t.Errorf("first target kept %d steps, want the 1 before the failure", len(first.Steps))
	}
	if second.Phase != v1.TargetSucceeded || len(second.Steps) != 3 || second.Steps[0].Attempts != 2 || second.Steps[1].Attempts != 1 {
		t.Errorf("second target: %s, steps %+v", second.Phase, second.Steps)
	}
	c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionFailed)
	if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "target mariadb: "+wantMsg) {
		t.Errorf("Failed condition %+v", c)
	}
	if r := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionReady); r == nil || r.Status != metav1.ConditionFalse {
		t.Errorf("Ready condition %+v, want False", r)
	}
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "retry-results"}, cm); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cm.Data["report.md"], "| 2 | — | 17,934 | — |") || !strings.Contains(cm.Data["report.md"], "error 1146") {
		t.Errorf("report.md should show the failed target's missing steps and reason:\n%s", cm.Data["report.md"])
	}
	assertEvents(t, ns, "retry", "StepFailed", "TargetFailed", "Failed")
}

func TestServerThatNeverBecomesReady(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{readyTimeout: 4 * time.Second, schedulingGrace: time.Second})
	startKubeletWith(t, ns, succeedAll(t), func(pod *corev1.Pod) {
		switch pod.Labels[specs.LabelTarget] {
		case "mariadb": // no node fits
			pod.Spec.NodeName = ""
			pod.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
				Message: "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
			}}}
		case "mariadb-psoff": // a bad my.cnf: mysqld exits at once, again and again
			pod.Status.Conditions[1].Status = corev1.ConditionFalse
			pod.Status.ContainerStatuses[0].Ready = false
			pod.Status.ContainerStatuses[0].RestartCount = 3
			pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
			pod.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 7, Message: "2026-11-22 10:00:00 0 [ERROR] mariadbd: unknown variable 'performance_schema_typo=OFF'\n2026-11-22 10:00:00 0 [ERROR] Aborting\n",
			}}
		}
	})
	run := baseRun(ns, "stuck", 1)
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	// While waiting, the scheduler's message surfaces as a condition.
	waitFor(t, ns, "stuck", 20*time.Second, "an Unschedulable condition", func(r *v1.BenchmarkRun) bool {
		c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == "Unschedulable" &&
			strings.Contains(c.Message, "didn't match Pod's node affinity/selector")
	})
	got := waitFor(t, ns, "stuck", 30*time.Second, "the run to finish", finished)
	first, second := got.Status.Targets[0], got.Status.Targets[1]
	if first.Phase != v1.TargetFailed || !strings.Contains(first.Message, "server not ready after 4s") ||
		!strings.Contains(first.Message, "cannot be scheduled: 0/3 nodes are available") {
		t.Errorf("unschedulable target: %s %q", first.Phase, first.Message)
	}
	if second.Phase != v1.TargetFailed || !strings.Contains(second.Message, "unknown variable 'performance_schema_typo=OFF'") {
		t.Errorf("crashing target: %s %q", second.Phase, second.Message)
	}
	if got.Status.Phase != v1.RunFailed {
		t.Errorf("run phase %s, want Failed", got.Status.Phase)
	}
}

// A failed initialization leaves a data directory the restarts then fail on with another error
// (MySQL 9.x with an authentication-policy it rejects, then "Table 'mysql.user' doesn't exist").
// The failure must quote the first exit, which has left the pod's status by then, and quote an
// error once when every restart repeats it (with another timestamp each time).
func TestServerFailureQuotesTheFirstExit(t *testing.T) {
	const firstErr = "[ERROR] [MY-013797] [Server] Option --authentication-policy is set to an invalid value."
	cases := []struct {
		name, later string
		check       func(msg string) bool
		want        string
	}{
		{"a later restart fails otherwise", "2026-11-22T04:50:09Z 0 [ERROR] [MY-010735] [Server] Table 'mysql.user' doesn't exist\n",
			func(msg string) bool {
				i, j := strings.Index(msg, "MY-013797"), strings.Index(msg, "mysql.user")
				return strings.HasPrefix(msg, "server did not start: exit 1 (code 1): ") && i >= 0 && j > i &&
					strings.Contains(msg, "exited 4 times")
			}, "exit 1 (MY-013797) quoted before the later exits (mysql.user, 4 exits)"},
		{"every restart repeats it", "2026-11-22T04:50:09Z 0 " + firstErr + "\n2026-11-22T04:50:09Z 0 [ERROR] [MY-010119] [Server] Aborting\n",
			func(msg string) bool {
				return strings.Count(msg, "MY-013797") == 1 && strings.Contains(msg, "exited 4 times") &&
					!strings.Contains(msg, "later:")
			}, "the error quoted once, with the count of exits"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			startOperator(t, ns, operatorOptions{readyTimeout: time.Minute})
			startKubeletWith(t, ns, succeedAll(t), func(pod *corev1.Pod) {
				// Exit 1, before the kubelet restarted the container.
				pod.Status.Conditions[1].Status = corev1.ConditionFalse
				cs := &pod.Status.ContainerStatuses[0]
				cs.Ready = false
				cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1,
					Message: "2026-11-22T04:50:01Z 0 " + firstErr + "\n2026-11-22T04:50:01Z 0 [ERROR] [MY-010119] [Server] Aborting\n"}}
			})
			name := fmt.Sprintf("firstexit%d", i)
			run := baseRun(ns, name, 1)
			run.Spec.Targets = run.Spec.Targets[:1]
			if err := k8s.Create(context.Background(), run); err != nil {
				t.Fatal(err)
			}
			got := waitFor(t, ns, name, 20*time.Second, "the first exit in status", func(r *v1.BenchmarkRun) bool {
				return len(r.Status.Targets) == 1 && r.Status.Targets[0].FirstServerExit != ""
			})
			if fe := got.Status.Targets[0].FirstServerExit; fe != "exit 1 (code 1): "+firstErr+" | [ERROR] [MY-010119] [Server] Aborting" {
				t.Errorf("firstServerExit %q, want exit 1 with the server's errors", fe)
			}
			if c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionProgressing); c == nil || !strings.Contains(c.Message, "exited once") {
				t.Errorf("Progressing %+v, want it to say the server exited once", c)
			}
			// Later restarts; the kubelet keeps only the last two exits.
			pod := &corev1.Pod{}
			key := client.ObjectKey{Namespace: ns, Name: specs.ServerName(run, "mariadb") + "-0"}
			if err := k8s.Get(context.Background(), key, pod); err != nil {
				t.Fatal(err)
			}
			cs := &pod.Status.ContainerStatuses[0]
			cs.RestartCount = 3
			cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
			cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: tc.later}}
			if err := k8s.Status().Update(context.Background(), pod); err != nil {
				t.Fatal(err)
			}
			got = waitFor(t, ns, name, 20*time.Second, "the run to finish", finished)
			ts := got.Status.Targets[0]
			if ts.Phase != v1.TargetFailed || !tc.check(ts.Message) {
				t.Errorf("target %s %q, want Failed with %s", ts.Phase, ts.Message, tc.want)
			}
		})
	}
}

func TestOperatorRestartBetweenStepsResumes(t *testing.T) {
	ns := newNamespace(t)
	op := startOperator(t, ns, operatorOptions{})
	var created []string
	ok := succeedAll(t)
	stepsDone := 0
	kl := startKubelet(t, ns, func(job *batchv1.Job) outcome {
		created = append(created, job.Name)
		if strings.Contains(job.Name, "-s0") {
			stepsDone++
		}
		return ok(job)
	})
	run := baseRun(ns, "resume", 1, 2, 4, 8)
	run.Spec.Targets = run.Spec.Targets[:1]
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ns, "resume", 30*time.Second, "step 2 recorded", func(r *v1.BenchmarkRun) bool {
		return len(r.Status.Targets) == 1 && len(r.Status.Targets[0].Steps) >= 2
	})
	// Stop the operator; the step in flight finishes while it is down.
	kl.setPaused(true)
	op.stop()
	kl.setPaused(false)
	time.Sleep(300 * time.Millisecond)
	before := waitFor(t, ns, "resume", 5*time.Second, "the run", func(*v1.BenchmarkRun) bool { return true })
	if before.Status.Phase == v1.RunSucceeded {
		t.Fatalf("the run finished without the operator")
	}
	startOperator(t, ns, operatorOptions{})
	got := waitFor(t, ns, "resume", 30*time.Second, "the run to finish", finished)
	if got.Status.Phase != v1.RunSucceeded || len(got.Status.Targets[0].Steps) != 4 {
		t.Fatalf("after restart: %s with %d steps", got.Status.Phase, len(got.Status.Targets[0].Steps))
	}
	for i, s := range got.Status.Targets[0].Steps {
		if s.Threads != run.Spec.Ladder.Threads[i] || s.Attempts != 1 {
			t.Errorf("step %d: threads %d attempts %d", i, s.Threads, s.Attempts)
		}
	}
	// The finished Jobs are deleted once their results are stored: count what the kubelet ran.
	unique := map[string]bool{}
	for _, name := range created {
		unique[name] = true
	}
	if len(unique) != 6 || stepsDone != 4 {
		t.Errorf("%d Jobs (want probe, prepare and 4 steps, none repeated), %d steps run: %v", len(unique), stepsDone, created)
	}
}
