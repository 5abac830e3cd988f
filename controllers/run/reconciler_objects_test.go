package run_test

import (
	"context"
	"encoding/json"
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
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

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
		!strings.Contains(ts.Message, "raise it to at least 202") {
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
