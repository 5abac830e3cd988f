package run_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/admission"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// installAdmissionPolicy puts a ValidatingAdmissionPolicy named name and a binding that enforces
// it into the fake world.
func installAdmissionPolicy(w *fakeWorld, name string) {
	w.t.Helper()
	for _, o := range admissionPolicyObjects(name, admissionregistrationv1.Deny) {
		w.create(o)
	}
}

func admissionPolicyObjects(name string, action admissionregistrationv1.ValidationAction) []client.Object {
	return []client.Object{
		&admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}},
		&admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
				ValidationActions: []admissionregistrationv1.ValidationAction{action}}},
	}
}

// A run that starts while the policy is not in force says so once in its Events, naming the
// policy and what still holds; with the policy in force it says nothing of it.
func TestRunStartSaysTheAdmissionPolicyIsAbsent(t *testing.T) {
	for _, installed := range []bool{false, true} {
		w := newFakeWorld(t)
		if !installed {
			binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
			binding.Name = "mysqlbench-" + admission.PolicyName
			if err := w.api.Delete(w.ctx, binding); err != nil {
				t.Fatal(err)
			}
		}
		run := w.create(fakeRun("adm", 1)).(*v1.BenchmarkRun)
		w.drive(run.Name, succeedAll(t), "the run to finish", finished)
		absent := withReason(w.allEvents(), v1.ReasonAdmissionPolicyAbsent)
		switch {
		case installed && len(absent) > 0:
			t.Errorf("with the policy in force: %q", absent)
		case !installed && (len(absent) != 1 || !strings.HasPrefix(absent[0], "Warning ") ||
			!strings.Contains(absent[0], "ValidatingAdmissionPolicy mysqlbench-referenced-objects is installed, but no ValidatingAdmissionPolicyBinding enforces it") ||
			!strings.Contains(absent[0], "docs/security.md")):
			t.Errorf("without a binding: Events %q, want one Warning naming the policy", absent)
		}
	}
}

// An external target's Secret is used only while it carries its owner's opt-in: without it (or
// with another value) the target fails before any Job mounts the Secret, saying which Secret,
// which label and the command that adds it; a label removed during the run stops the next Job,
// the one that would drop the tables included.
func TestExternalSecretNeedsItsOwnersOptIn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   string
	}{
		{"no label", nil, "does not carry the label mysqlbench.io/allow-benchmark"},
		{"another value", map[string]string{v1.LabelAllowBenchmark: "yes"}, `carries the label mysqlbench.io/allow-benchmark="yes", not "true"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newFakeWorld(t)
			run := fakeExternal(w, "nolabel")
			secret := &corev1.Secret{}
			if err := w.api.Get(w.ctx, client.ObjectKey{Namespace: fakeNS, Name: "nolabel-db"}, secret); err != nil {
				t.Fatal(err)
			}
			secret.Labels = tc.labels
			if err := w.api.Update(w.ctx, secret); err != nil {
				t.Fatal(err)
			}
			got := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
			checkConsentFailure(t, got, w.allEvents(), tc.want)
			if ts := targetStatus(got, "prod"); ts.StartTime == nil || ts.Phase != v1.TargetFailed {
				t.Errorf("target %+v, want Failed", ts)
			}
			creates, _, _ := w.counters()
			for k := range creates {
				if strings.HasPrefix(k, "Job/") {
					t.Errorf("%s created for a Secret without its owner's opt-in", k)
				}
			}
		})
	}
	t.Run("removed during the run", func(t *testing.T) {
		w := newFakeWorld(t)
		run := fakeExternal(w, "withdrawn")
		ok := driveToStep2(t, w, run, "prod")
		secret := &corev1.Secret{}
		if err := w.api.Get(w.ctx, client.ObjectKey{Namespace: fakeNS, Name: "withdrawn-db"}, secret); err != nil {
			t.Fatal(err)
		}
		delete(secret.Labels, v1.LabelAllowBenchmark)
		if err := w.api.Update(w.ctx, secret); err != nil {
			t.Fatal(err)
		}
		jobs, _, _ := w.counters()
		w.finishJobs(ok)
		got := w.drive(run.Name, ok, "the run to finish", finished)
		checkConsentFailure(t, got, w.allEvents(), "does not carry the label")
		after, _, _ := w.counters()
		for k, n := range after {
			if strings.HasPrefix(k, "Job/") && n > jobs[k] {
				t.Errorf("%s created after the Secret's opt-in was removed", k)
			}
		}
	})
}

func checkConsentFailure(t *testing.T, got *v1.BenchmarkRun, events []string, want string) {
	t.Helper()
	ts := targetStatus(got, "prod")
	secret := got.Spec.Targets[0].SecretRef.Name
	for _, s := range []string{want, "Secret bench/" + secret + " named by target prod",
		"kubectl label secret " + secret + " -n bench mysqlbench.io/allow-benchmark=true"} {
		if !strings.Contains(ts.Message, s) {
			t.Errorf("target %s %q, want it to say %q", ts.Phase, ts.Message, s)
		}
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionFailed); c == nil || !strings.Contains(c.Message, want) {
		t.Errorf("Failed condition %+v, want it to say %q", c, want)
	}
	if failed := withReason(events, "TargetFailed"); len(failed) != 1 || !strings.Contains(failed[0], want) {
		t.Errorf("TargetFailed Events %q, want one saying %q", failed, want)
	}
}

// The same on a real API server, with the manager as cmd/main.go wires it: the target fails
// naming the Secret and the label, no Job of the run exists, and the Secret is untouched.
func TestExternalSecretWithoutOptInIsNeverMounted(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	startKubelet(t, ns, succeedAll(t))
	ctx := context.Background()
	if err := k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "prod-db", Namespace: ns},
		StringData: map[string]string{"host": "db.example", "port": "3306", "user": "bench", "password": "s3cret-value"},
	}); err != nil {
		t.Fatal(err)
	}
	run := baseRun(ns, "optin", 1)
	run.Spec.Targets = []v1.Target{{Name: "prod", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "prod-db"}}}
	if err := k8s.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, run.Name, 60*time.Second, "the run to finish", finished)
	ts := targetStatus(got, "prod")
	want := "Secret " + ns + "/prod-db named by target prod does not carry the label mysqlbench.io/allow-benchmark"
	if got.Status.Phase != v1.RunFailed || ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, want) ||
		!strings.Contains(ts.Message, "kubectl label secret prod-db -n "+ns+" mysqlbench.io/allow-benchmark=true") {
		t.Fatalf("run %s, target %s %q; want it Failed with %q and the command that opts the Secret in", got.Status.Phase, ts.Phase, ts.Message, want)
	}
	jobs := &batchv1.JobList{}
	if err := k8s.List(ctx, jobs, client.InNamespace(ns), client.MatchingLabels{specs.LabelRun: run.Name}); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) > 0 {
		t.Errorf("%d Jobs created for a Secret without its owner's opt-in, want none (the first: %s)", len(jobs.Items), jobs.Items[0].Name)
	}
	events := &corev1.EventList{}
	if err := k8s.List(ctx, events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var said bool
	for _, e := range events.Items {
		said = said || e.Reason == "TargetFailed" && strings.Contains(e.Message, want)
		if strings.Contains(e.Message, "s3cret-value") {
			t.Errorf("Event %s holds the password", e.Reason)
		}
	}
	if !said {
		t.Errorf("no TargetFailed Event says %q", want)
	}
}

// applyAdmissionPolicy installs the real policy of config/admission with a binding like
// config/admission's, narrowed to namespace ns so the suite's other tests are not checked; both
// are removed when the test ends.
func applyAdmissionPolicy(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	for file, obj := range map[string]any{"policy.yaml": policy, "binding.yaml": binding} {
		b, err := os.ReadFile(filepath.Join("..", "..", "config", "admission", file))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.UnmarshalStrict(b, obj); err != nil {
			t.Fatalf("config/admission/%s: %v", file, err)
		}
	}
	binding.Spec.MatchResources = &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
		MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}}
	for _, o := range []client.Object{policy, binding} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := k8s.Delete(context.Background(), o); err != nil {
				t.Errorf("remove %s: %v", o.GetName(), err)
			}
		})
	}
}

// userClient is a client of the suite's API server authenticated as user name, with no groups
// beyond system:authenticated: RBAC decides what it may do.
func userClient(t *testing.T, name string) client.Client {
	t.Helper()
	u, err := env.AddUser(envtest.User{Name: name}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(u.Config(), client.Options{Scheme: testenv.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The admission policy of config/admission against the suite's CRDs: bob may update every run
// and schedule of the namespace but may not get Secret prod-db. alice's run, pending, and her
// schedule name prod-db. Every change bob makes to what they run or read (a script ConfigMap of
// his, his sysbench image, a longer ladder) is refused with the policy's message, for the run and
// for the schedule's template: the operator would mount prod-db's password into his code. What
// changes nothing that runs (labels, annotations; a schedule's suspend) still passes, and alice
// may change her own. The policy used to check only the names a request adds, and let all of
// bob's patches through.
func TestAdmissionPolicyRechecksEveryChange(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	applyAdmissionPolicy(t, ns)
	rbac := func(name string, rules ...rbacv1.PolicyRule) []client.Object {
		return []client.Object{
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: rules},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Subjects: []rbacv1.Subject{{Kind: "User", Name: name}},
				RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name}},
		}
	}
	runs := rbacv1.PolicyRule{APIGroups: []string{"mysqlbench.io"}, Resources: []string{"benchmarkruns", "benchmarkschedules"},
		Verbs: []string{"get", "create", "update", "patch"}}
	objs := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "prod-db", Namespace: ns, Labels: map[string]string{v1.LabelAllowBenchmark: v1.AllowBenchmark}},
			StringData: map[string]string{"host": "db", "port": "3306", "user": "u", "password": "alice-only"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bob-script", Namespace: ns}, Data: map[string]string{"bench.lua": "-- bob's"}},
	}
	objs = append(objs, rbac("alice", runs, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"},
		ResourceNames: []string{"prod-db"}, Verbs: []string{"get"}})...)
	objs = append(objs, rbac("bob", runs, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"},
		ResourceNames: []string{"bob-script"}, Verbs: []string{"get"}})...)
	for _, o := range objs {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	alice, bob := userClient(t, "alice"), userClient(t, "bob")

	run := baseRun(ns, "alice-ext", 1)
	run.Spec.Targets = []v1.Target{{Name: "prod", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "prod-db"}}}
	// A new policy takes a moment to be enforced: wait until bob's create naming prod-db is refused.
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		probe := run.DeepCopy()
		probe.Name = "bob-probe"
		if err = bob.Create(ctx, probe, client.DryRunAll); err != nil || time.Now().After(deadline) {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "user bob may not get every Secret that spec.targets[].secretRef names (prod-db)") {
		t.Fatalf("bob's run naming prod-db: %v, want the policy's refusal", err)
	}
	if err := alice.Create(ctx, run); err != nil {
		t.Fatalf("alice's run naming her Secret: %v", err)
	}
	sched := &v1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "alice-nightly", Namespace: ns},
		Spec: v1.BenchmarkScheduleSpec{Schedule: "0 2 * * *", Template: v1.BenchmarkRunTemplate{Spec: run.Spec}}}
	if err := alice.Create(ctx, sched); err != nil {
		t.Fatalf("alice's schedule naming her Secret: %v", err)
	}

	// patchAs reads obj as c, applies edit and sends the difference as a merge patch.
	patchAs := func(c client.Client, obj client.Object, edit func()) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
		base := obj.DeepCopyObject().(client.Object)
		edit()
		return c.Patch(ctx, obj, client.MergeFrom(base))
	}
	refusedRun := "user bob may not get every Secret that spec.targets[].secretRef names (prod-db) in namespace " + ns +
		", so may not change the spec of BenchmarkRun alice-ext, which names them"
	refusedSchedule := "user bob may not get every Secret that spec.template.spec.targets[].secretRef names (prod-db) in namespace " + ns +
		", so may not change the spec of BenchmarkSchedule alice-nightly, which names them"
	changes := []struct {
		name string
		edit func(*v1.BenchmarkRunSpec)
	}{
		{"his Lua script", func(s *v1.BenchmarkRunSpec) {
			s.Workload.Script = ""
			s.Workload.CustomScript = &v1.ConfigMapKeySelector{Name: "bob-script", Key: "bench.lua"}
		}},
		{"his sysbench image", func(s *v1.BenchmarkRunSpec) { s.SysbenchImage = "registry.example/bob/sysbench:1.0.20" }},
		{"a longer ladder", func(s *v1.BenchmarkRunSpec) { s.Ladder.Threads = []int32{1, 2} }},
	}
	for _, ch := range changes {
		r := &v1.BenchmarkRun{ObjectMeta: run.ObjectMeta}
		if err := patchAs(bob, r, func() { ch.edit(&r.Spec) }); err == nil || !strings.Contains(err.Error(), refusedRun) {
			t.Errorf("bob patching alice's pending run with %s: %v, want refused with %q", ch.name, err, refusedRun)
		}
		s := &v1.BenchmarkSchedule{ObjectMeta: sched.ObjectMeta}
		if err := patchAs(bob, s, func() { ch.edit(&s.Spec.Template.Spec) }); err == nil || !strings.Contains(err.Error(), refusedSchedule) {
			t.Errorf("bob patching alice's schedule template with %s: %v, want refused with %q", ch.name, err, refusedSchedule)
		}
	}
	got := &v1.BenchmarkRun{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.SysbenchImage != "" || got.Spec.Workload.CustomScript != nil || len(got.Spec.Ladder.Threads) != 1 {
		t.Errorf("alice's run was changed: %+v", got.Spec)
	}

	// Nothing of what runs changes: admitted, whoever asks.
	r := &v1.BenchmarkRun{ObjectMeta: run.ObjectMeta}
	if err := patchAs(bob, r, func() {
		r.Labels = map[string]string{"team": "a"}
		r.Annotations = map[string]string{"note": "bob was here"}
	}); err != nil {
		t.Errorf("bob labelling alice's run: %v, want it admitted", err)
	}
	// An update that sends the whole object writes the stored default stepDuration "60s" back as
	// "1m0s": the same duration, not a change.
	if err := bob.Get(ctx, client.ObjectKeyFromObject(run), r); err != nil {
		t.Fatal(err)
	}
	r.Labels["by"] = "update"
	if err := bob.Update(ctx, r); err != nil {
		t.Errorf("bob labelling alice's run with an update of the whole object: %v, want it admitted", err)
	}
	s := &v1.BenchmarkSchedule{ObjectMeta: sched.ObjectMeta}
	if err := patchAs(bob, s, func() {
		s.Labels = map[string]string{"team": "a"}
		s.Spec.Suspend = ptr.To(true)
	}); err != nil {
		t.Errorf("bob labelling and suspending alice's schedule (its template unchanged): %v, want it admitted", err)
	}
	// alice may change hers.
	r = &v1.BenchmarkRun{ObjectMeta: run.ObjectMeta}
	if err := patchAs(alice, r, func() { r.Spec.SysbenchImage = "registry.example/alice/sysbench:1.0.20" }); err != nil {
		t.Errorf("alice changing her run's image: %v", err)
	}
	s = &v1.BenchmarkSchedule{ObjectMeta: sched.ObjectMeta}
	if err := patchAs(alice, s, func() { s.Spec.Template.Spec.Ladder.Threads = []int32{1, 2, 4} }); err != nil {
		t.Errorf("alice changing her schedule's template: %v", err)
	}
}

// A run deleted after its tables were prepared drops them with a Job that mounts the Secret: once
// the Secret's owner has removed the opt-in, that Job is not created either. The run goes, and an
// Event says the tables may be left and why.
func TestDeletedRunDropsNothingWithoutTheOptIn(t *testing.T) {
	w := newFakeWorld(t)
	run := fakeExternalRun(t, w, "wd")
	secret := &corev1.Secret{}
	if err := w.api.Get(w.ctx, client.ObjectKey{Namespace: fakeNS, Name: "wd-db"}, secret); err != nil {
		t.Fatal(err)
	}
	secret.Labels = nil
	if err := w.api.Update(w.ctx, secret); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10 && !w.gone(run.Name); i++ {
		if _, err := w.reconcile(run.Name); err != nil {
			t.Fatalf("reconcile %d of the deleted run: %v", i+1, err)
		}
		w.finishJobs(succeedAll(t))
		w.clock.Step(time.Second)
	}
	if !w.gone(run.Name) {
		t.Fatalf("the deleted run is still there: finalizers %v", w.run(run.Name).Finalizers)
	}
	drop := specs.JobName(run, "prod", "drop", specs.Attempt{})
	if creates, _, _ := w.counters(); creates["Job/"+drop] != 0 {
		t.Errorf("the drop Job %s was created for a Secret whose opt-in was removed", drop)
	}
	failed := withReason(w.allEvents(), "CleanupFailed")
	if len(failed) != 1 || !strings.Contains(failed[0], "the sbtest tables on the external server may be left") ||
		!strings.Contains(failed[0], "Secret bench/wd-db named by target prod does not carry the label mysqlbench.io/allow-benchmark") {
		t.Errorf("CleanupFailed Events %q, want one saying the tables may be left because of the missing label", failed)
	}
}
