package controllers_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/controllers"
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

// The manager finds the policy under the names kustomize and the chart give it, and only when a
// binding enforces it (Deny); otherwise it says what is missing.
func TestAdmissionPolicyCheckFindsThePolicyAndItsBinding(t *testing.T) {
	policy := func(name string) client.Object { return admissionPolicyObjects(name, admissionregistrationv1.Deny)[0] }
	binding := func(name string, action admissionregistrationv1.ValidationAction) client.Object {
		return admissionPolicyObjects(name, action)[1]
	}
	cases := []struct {
		name string
		objs []client.Object
		want string // substring of what is missing; "" when in force
	}{
		{"nothing installed", nil, "no ValidatingAdmissionPolicy referenced-objects (or *-referenced-objects) is installed"},
		{"as config/admission names it", []client.Object{policy("referenced-objects"), binding("referenced-objects", admissionregistrationv1.Deny)}, ""},
		{"as kustomize names it", []client.Object{policy("mysqlbench-referenced-objects"), binding("mysqlbench-referenced-objects", admissionregistrationv1.Deny)}, ""},
		{"as the chart names it", []client.Object{policy("mysqlbench-system-mb-referenced-objects"),
			binding("mysqlbench-system-mb-referenced-objects", admissionregistrationv1.Deny)}, ""},
		{"the policy without a binding", []client.Object{policy("mysqlbench-referenced-objects")},
			"the ValidatingAdmissionPolicy mysqlbench-referenced-objects is installed, but no ValidatingAdmissionPolicyBinding enforces it"},
		{"a binding that only warns", []client.Object{policy("mysqlbench-referenced-objects"), binding("mysqlbench-referenced-objects", admissionregistrationv1.Warn)},
			"no ValidatingAdmissionPolicyBinding enforces it"},
		{"another policy of that ending", []client.Object{policy("notreferenced-objects"), binding("notreferenced-objects", admissionregistrationv1.Deny)},
			"no ValidatingAdmissionPolicy referenced-objects"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(testenv.Scheme).WithObjects(tc.objs...).Build()
			got := (&controllers.AdmissionPolicyCheck{Reader: c}).AdmissionPolicyAbsent(context.Background())
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("AdmissionPolicyAbsent = %q, want %q", got, tc.want)
			}
		})
	}
}

// The manager says it once, not at every check, and again when it changes.
func TestAdmissionPolicyCheckLogsOnceAndOnChange(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	logged := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), lines...)
	}
	log := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{})
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme).Build()
	check := &controllers.AdmissionPolicyCheck{Reader: c, Interval: 10 * time.Millisecond, Log: log}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- check.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	time.Sleep(200 * time.Millisecond) // twenty checks
	if got := logged(); len(got) != 1 || !strings.Contains(got[0], "WARNING: no ValidatingAdmissionPolicy referenced-objects") ||
		!strings.Contains(got[0], "mysqlbench.io/allow-benchmark=true") {
		t.Fatalf("logged %q, want one warning naming the policy and the Secrets' label", got)
	}
	for _, o := range admissionPolicyObjects("referenced-objects", admissionregistrationv1.Deny) {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(logged()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if got := logged(); len(got) != 2 || !strings.Contains(got[1], "the admission policy is installed and enforced") {
		t.Fatalf("logged %q, want the warning, then once that the policy is in force", got)
	}
	if got := check.AdmissionPolicyAbsent(ctx); got != "" {
		t.Errorf("AdmissionPolicyAbsent = %q after the policy was installed", got)
	}
}

// A run that starts while the policy is not in force says so once in its Events, naming the
// policy and what still holds; with the policy in force it says nothing of it.
func TestRunStartSaysTheAdmissionPolicyIsAbsent(t *testing.T) {
	for _, installed := range []bool{false, true} {
		w := newFakeWorld(t)
		if !installed {
			binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
			binding.Name = "mysqlbench-" + controllers.AdmissionPolicyName
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
