package controllers_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
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

func TestPlacementReachesEveryPodTemplate(t *testing.T) {
	ns := newNamespace(t)
	readyNode(t, ns+"-nvme", map[string]string{"disk": "nvme"}) // the database pool's one node
	startOperator(t, ns, operatorOptions{})
	startKubelet(t, ns, func(job *batchv1.Job) outcome { return outcome{pending: true} })
	run := baseRun(ns, "placed", 1)
	run.Spec.Targets = run.Spec.Targets[:1]
	run.Spec.Placement = v1.Placement{
		Database: v1.DatabasePlacement{PoolPlacement: v1.PoolPlacement{
			NodeSelector: map[string]string{"disk": "nvme"},
			Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
		}},
		Client: v1.PoolPlacement{
			NodeSelector: map[string]string{"role": "loadgen"},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}},
		},
	}
	run.Spec.ClientResources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ns, "placed", 20*time.Second, "the probe Job", func(r *v1.BenchmarkRun) bool {
		return k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "placed-mariadb-probe-a0"}, &batchv1.Job{}) == nil
	})
	sts := &appsv1.StatefulSet{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "placed-mariadb"}, sts); err != nil {
		t.Fatal(err)
	}
	ps := sts.Spec.Template.Spec
	if ps.NodeSelector["disk"] != "nvme" || len(ps.Tolerations) != 1 || ps.Tolerations[0].Key != "dedicated" ||
		ps.Affinity == nil || len(ps.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Errorf("server pod placement: %+v %+v %+v", ps.NodeSelector, ps.Tolerations, ps.Affinity)
	}
	job := &batchv1.Job{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "placed-mariadb-probe-a0"}, job); err != nil {
		t.Fatal(err)
	}
	js := job.Spec.Template.Spec
	if js.NodeSelector["role"] != "loadgen" || len(js.Tolerations) != 1 || js.Tolerations[0].Key != specs.DedicatedTaint ||
		js.Affinity.NodeAffinity == nil || len(js.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 ||
		!js.Containers[0].Resources.Limits.Cpu().Equal(resource.MustParse("4")) || js.Containers[0].Image != "sysbench:test" {
		t.Errorf("client pod placement: %+v %+v %+v %+v", js.NodeSelector, js.Tolerations, js.Affinity, js.Containers[0].Resources)
	}
	// The credentials reach both only by reference.
	secret := &corev1.Secret{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "placed-mariadb-credentials"}, secret); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []any{sts, job} {
		b, _ := json.Marshal(obj)
		if strings.Contains(string(b), string(secret.Data[sysbench.SecretKeyPassword])) ||
			strings.Contains(string(b), string(secret.Data[specs.SecretKeyRootPassword])) {
			t.Errorf("%T holds a literal password", obj)
		}
	}
}

func TestMaxConnectionsOverrideBelowTheLadderIsRejected(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	startKubelet(t, ns, succeedAll(t))
	run := baseRun(ns, "maxconn", 1, 2, 200)
	run.Spec.Targets[0].MyCnf = "max_connections = 100"
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "maxconn", 30*time.Second, "the run to finish", finished)
	ts := got.Status.Targets[0]
	if ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, "max_connections = 100") ||
		!strings.Contains(ts.Message, "raise it to at least 201") {
		t.Errorf("target: %s %q", ts.Phase, ts.Message)
	}
	if got.Status.Targets[1].Phase != v1.TargetSucceeded {
		t.Errorf("the other target: %s", got.Status.Targets[1].Phase)
	}
	// The rejected target never got a server.
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "maxconn-mariadb"}, &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
		t.Errorf("a server was created for the rejected target: %v", err)
	}
}

func TestExternalTargetAndCleanupNeverKeepsServers(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	ok := succeedAll(t)
	var mu sync.Mutex
	ran := map[string]*batchv1.Job{}
	startKubelet(t, ns, func(job *batchv1.Job) outcome {
		mu.Lock()
		ran[job.Name] = job.DeepCopy()
		mu.Unlock()
		return ok(job)
	})
	if err := k8s.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "prod-db", Namespace: ns, Labels: map[string]string{v1.LabelAllowBenchmark: v1.AllowBenchmark}},
		StringData: map[string]string{"host": "db.example", "port": "3306", "user": "bench", "password": "s3cret-value"},
	}); err != nil {
		t.Fatal(err)
	}
	run := baseRun(ns, "ext", 1, 2)
	run.Spec.Cleanup = v1.CleanupNever
	run.Spec.Targets = []v1.Target{
		{Name: "prod", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "prod-db"}},
		{Name: "local", Image: "mysql:8.0.40"},
	}
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "ext", 60*time.Second, "the run to finish", finished)
	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("phase %s: %+v", got.Status.Phase, got.Status.Targets)
	}
	// The external target's Jobs connect through the user's Secret; its tables are dropped.
	// (Its finished Jobs are deleted by now: the kubelet kept what it ran.)
	mu.Lock()
	job, dropped := ran["ext-prod-cleanup-a0"]
	mu.Unlock()
	if !dropped {
		t.Fatalf("no cleanup Job ran for the external target")
	}
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name != "prod-db" {
			t.Errorf("env %s reads Secret %s, want prod-db", e.Name, e.ValueFrom.SecretKeyRef.Name)
		}
	}
	// cleanup: Never keeps the builtin server.
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "ext-local"}, &appsv1.StatefulSet{}); err != nil {
		t.Errorf("cleanup Never deleted the server: %v", err)
	}
	// The user's Secret is neither owned nor touched.
	s := &corev1.Secret{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "prod-db"}, s); err != nil || len(s.OwnerReferences) != 0 {
		t.Errorf("user secret: %v %+v", err, s.OwnerReferences)
	}
	if b, _ := json.Marshal(got.Status); strings.Contains(string(b), "s3cret-value") {
		t.Errorf("status holds the password")
	}
	events := &corev1.EventList{}
	if err := k8s.List(context.Background(), events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if strings.Contains(e.Message, "s3cret-value") {
			t.Errorf("event %s holds the password", e.Reason)
		}
	}
}

func TestDeletingARunLeavesNothingBehind(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	startKubelet(t, ns, func(job *batchv1.Job) outcome {
		if job.Labels[specs.LabelStep] == "probe" {
			return outcome{message: probeMessage}
		}
		return outcome{pending: true} // prepare never ends
	})
	run := baseRun(ns, "gone", 1)
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "gone", 30*time.Second, "prepare to start", func(r *v1.BenchmarkRun) bool {
		return r.Status.Phase == v1.RunPreparing
	})
	// envtest has no garbage collector: what the collector deletes with the run is everything
	// that names the run as its controller. So every object in the namespace but the user's
	// must do so.
	assertOwned(t, ns, got)
	if err := k8s.Delete(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(got), &v1.BenchmarkRun{}); !apierrors.IsNotFound(err) {
		t.Errorf("run still there after delete (a finalizer?): %v", err)
	}
}

// assertOwned checks that every object the operator created in ns is controlled by run, so the
// garbage collector deletes it with the run.
func assertOwned(t *testing.T, ns string, run *v1.BenchmarkRun) {
	t.Helper()
	lists := []client.ObjectList{&appsv1.StatefulSetList{}, &corev1.ServiceList{}, &corev1.ConfigMapList{},
		&corev1.SecretList{}, &batchv1.JobList{}}
	n := 0
	for _, l := range lists {
		if err := k8s.List(context.Background(), l, client.InNamespace(ns), client.MatchingLabels{specs.LabelManagedBy: specs.ManagedBy}); err != nil {
			t.Fatal(err)
		}
		items, _ := meta.ExtractList(l)
		for _, o := range items {
			obj := o.(client.Object)
			n++
			if !metav1.IsControlledBy(obj, run) {
				t.Errorf("%T %s is not controlled by the run: %+v", obj, obj.GetName(), obj.GetOwnerReferences())
			}
		}
	}
	if n == 0 {
		t.Errorf("found no objects of the run to check")
	}
}

func assertEvents(t *testing.T, ns, run string, reasons ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		events := &corev1.EventList{}
		if err := k8s.List(context.Background(), events, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == run {
				seen[e.Reason] = true
			}
		}
		var missing []string
		for _, r := range reasons {
			if !seen[r] {
				missing = append(missing, r)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("events %v missing; seen %v", missing, seen)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestRunsWhoseNamesMeetDoNotShareAServer(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	startKubelet(t, ns, func(job *batchv1.Job) outcome {
		if job.Labels[specs.LabelStep] == "probe" {
			return outcome{message: probeMessage}
		}
		return outcome{pending: true}
	})
	// "a" + "b-c" and "a-b" + "c" both name their server a-b-c.
	first := baseRun(ns, "a", 1)
	first.Spec.Targets = []v1.Target{{Name: "b-c", Image: "mariadb:10.11"}}
	if err := k8s.Create(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ns, "a", 20*time.Second, "the first run to prepare", func(r *v1.BenchmarkRun) bool {
		return r.Status.Phase == v1.RunPreparing
	})
	second := baseRun(ns, "a-b", 1)
	second.Spec.Targets = []v1.Target{{Name: "c", Image: "mariadb:10.11"}}
	if err := k8s.Create(context.Background(), second); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "a-b", 20*time.Second, "the second run to finish", finished)
	if ts := got.Status.Targets[0]; ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, "already exists and does not belong to this run") {
		t.Errorf("second run's target: %s %q", ts.Phase, ts.Message)
	}
	// The first run's server is untouched (cleanup Always of the failed target must not delete it).
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "a-b-c"}, &appsv1.StatefulSet{}); err != nil {
		t.Errorf("the first run's server is gone: %v", err)
	}
}

func TestStepResultArrivingAfterTheJobConditionIsNotAFailure(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	ok := succeedAll(t)
	startKubelet(t, ns, func(job *batchv1.Job) outcome {
		o := ok(job)
		o.resultLate = true
		return o
	})
	run := baseRun(ns, "late", 1, 2)
	run.Spec.Targets = run.Spec.Targets[:1]
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "late", 60*time.Second, "the run to finish", finished)
	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("phase %s: %+v", got.Status.Phase, got.Status.Targets)
	}
	for _, s := range got.Status.Targets[0].Steps {
		if s.Attempts != 1 || s.QPS.Total != want4.qps {
			t.Errorf("step %+v: want one attempt with the captured result", s)
		}
	}
}

// Repetitions run the ladder as rounds, ascending then descending, and an operator restart in
// the middle of a repetition neither loses a step nor measures one twice.
func TestRepetitionsInterleaveAndSurviveARestart(t *testing.T) {
	ns := newNamespace(t)
	op := startOperator(t, ns, operatorOptions{})
	ok := succeedAll(t)
	var mu sync.Mutex
	var ran []string
	kl := startKubelet(t, ns, func(job *batchv1.Job) outcome {
		if step := job.Labels[specs.LabelStep]; strings.Contains(step, "s0") {
			mu.Lock()
			ran = append(ran, step)
			mu.Unlock()
		}
		return ok(job)
	})
	run := baseRun(ns, "reps", 1, 2, 4)
	run.Spec.Targets = run.Spec.Targets[:1]
	run.Spec.Repetitions = ptr.To[int32](3)
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ns, "reps", 30*time.Second, "the first step of repetition 2 recorded", func(r *v1.BenchmarkRun) bool {
		return len(r.Status.Targets) == 1 && len(r.Status.Targets[0].Steps) >= 4
	})
	kl.setPaused(true)
	op.stop()
	kl.setPaused(false)
	time.Sleep(300 * time.Millisecond)
	startOperator(t, ns, operatorOptions{})
	got := waitFor(t, ns, "reps", 60*time.Second, "the run to finish", finished)
	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("phase %s: %+v", got.Status.Phase, got.Status)
	}
	wantThreads := []int32{1, 2, 4, 4, 2, 1, 1, 2, 4}
	wantReps := []int32{1, 1, 1, 2, 2, 2, 3, 3, 3}
	steps := got.Status.Targets[0].Steps
	if len(steps) != len(wantThreads) {
		t.Fatalf("%d steps, want %d: %+v", len(steps), len(wantThreads), steps)
	}
	for i, s := range steps {
		if s.Threads != wantThreads[i] || s.Repetition != wantReps[i] || s.Attempts != 1 {
			t.Errorf("step %d: threads %d repetition %d attempts %d, want %d, %d, 1", i, s.Threads, s.Repetition, s.Attempts,
				wantThreads[i], wantReps[i])
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := "s01,s02,s03,r2s03,r2s02,r2s01,r3s01,r3s02,r3s03"
	if strings.Join(ran, ",") != want {
		t.Errorf("steps ran %v, want each once in the order %s", ran, want)
	}
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "reps-results"}, cm); err != nil {
		t.Fatal(err)
	}
	if rows := strings.Count(cm.Data["results.csv"], "\nmariadb,"); rows != 9 {
		t.Errorf("results.csv has %d step rows, want 9:\n%s", rows, cm.Data["results.csv"])
	}
	// Every repetition reported the captured result: medians equal it, with no spread.
	cells := got.Status.Targets[0].Cells
	if len(cells) != 3 {
		t.Fatalf("status cells %+v, want 3", cells)
	}
	for i, c := range cells {
		if c.Threads != wantThreads[i] || c.N != 3 || c.QPS.Median != want4.qps || c.TPS.Median != want4.tps ||
			c.P95Ms.Median != want4.p95 || c.QPS.CV != 0 || c.QPS.CIConfidence != 0.75 {
			t.Errorf("cell %d: %+v", i, c)
		}
	}
	for _, want := range []string{"## Statistics per cell", "| mariadb | 4 | 3 | 75 % | 17,934 [17,934, 17,934] | 0.0 % |"} {
		if !strings.Contains(cm.Data["report.md"], want) {
			t.Errorf("report.md lacks %q:\n%s", want, cm.Data["report.md"])
		}
	}
}
