package helm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/controllers/operator"
)

// The admission policy shipped in the chart and in kustomize lets a user create a run or a
// schedule only when they may get every Secret and ConfigMap it names, as the API server's own
// authorizer decides for that user: alice, who may get the Secret, creates the run; bob, who
// may create runs in the same namespace but not read that Secret, cannot make the operator
// mount it for him.
func TestAdmissionPolicyChecksTheCreatorsAccess(t *testing.T) {
	for _, source := range []string{"helm", "kustomize"} {
		t.Run(source, func(t *testing.T) {
			var objs []*unstructured.Unstructured
			if source == "helm" {
				objs = helmTemplate(t)
			} else {
				objs = kustomizeBuild(t)
			}
			checkAdmissionPolicy(t, objs)
		})
	}
}

func checkAdmissionPolicy(t *testing.T, objs []*unstructured.Unstructured) {
	ctx := context.Background()
	env, admin, _, _ := apiServerEnv(t)
	applyKinds(ctx, t, admin, kustomizeBuild(t), "CustomResourceDefinition")
	waitEstablished(ctx, t, admin, "benchmarkruns.mysqlbench.io")
	waitEstablished(ctx, t, admin, "benchmarkschedules.mysqlbench.io")
	if n := applyKinds(ctx, t, admin, objs, "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"); n != 2 {
		t.Fatalf("%d admission policy objects rendered, want a policy and its binding", n)
	}

	const ns = "team-a"
	createNamespaces(ctx, t, admin, ns)
	for _, o := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "alice-db", Namespace: ns},
			StringData: map[string]string{"host": "db", "port": "3306", "user": "u", "password": "alice-only"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "alice-script", Namespace: ns}, Data: map[string]string{"bench.lua": "-- x"}},
		// Both may create, update and read runs and schedules.
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "bench-user", Namespace: ns}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"mysqlbench.io"}, Resources: []string{"benchmarkruns", "benchmarkschedules"},
			Verbs: []string{"create", "get", "update", "patch"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bench-users", Namespace: ns},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}, {Kind: "User", Name: "bob"}},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "bench-user"}},
		// Only alice may read her Secret and ConfigMap.
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "alice-data", Namespace: ns}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"alice-db"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"alice-script"}, Verbs: []string{"get"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-data", Namespace: ns},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "alice-data"}},
	} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	userClient := func(name string) client.Client {
		u, err := env.AddUser(envtest.User{Name: name}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.New(u.Config(), client.Options{Scheme: operator.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	alice, bob := userClient("alice"), userClient("bob")

	external := func(name string) *v1.BenchmarkRun {
		return &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1.BenchmarkRunSpec{
			Targets:  []v1.Target{{Name: "ext", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "alice-db"}}},
			Workload: v1.Workload{Script: "oltp_point_select"},
			Ladder:   v1.Ladder{Threads: []int32{1}},
		}}
	}
	script := func(name string) *v1.BenchmarkRun {
		return &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1.BenchmarkRunSpec{
			Targets:  []v1.Target{{Name: "m", Image: "mariadb:11.8"}},
			Workload: v1.Workload{CustomScript: &v1.ConfigMapKeySelector{Name: "alice-script", Key: "bench.lua"}},
			Ladder:   v1.Ladder{Threads: []int32{1}},
		}}
	}

	// A new policy takes a moment to be enforced: wait for bob's first refusal on a dry run.
	deadline := time.Now().Add(30 * time.Second)
	var err error
	for {
		err = bob.Create(ctx, external("probe"), client.DryRunAll)
		if err != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err == nil || !strings.Contains(err.Error(), "user bob may not get every Secret that spec.targets[].secretRef names (alice-db) in namespace team-a") ||
		!strings.Contains(err.Error(), "Name Secrets you may read") {
		t.Fatalf("bob's run naming alice's Secret: %v, want it refused naming the Secret", err)
	}
	if err := bob.Create(ctx, script("bob-script")); err == nil || !strings.Contains(err.Error(), "user bob may not get ConfigMap alice-script") {
		t.Errorf("bob's run naming alice's ConfigMap: %v, want it refused", err)
	}
	sched := &v1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "bob-nightly", Namespace: ns},
		Spec: v1.BenchmarkScheduleSpec{Schedule: "0 2 * * *", Template: v1.BenchmarkRunTemplate{Spec: external("x").Spec}}}
	if err := bob.Create(ctx, sched); err == nil || !strings.Contains(err.Error(), "(alice-db)") {
		t.Errorf("bob's schedule whose runs would name alice's Secret: %v, want it refused", err)
	}
	builtin := script("bob-builtin")
	builtin.Spec.Workload = v1.Workload{Script: "oltp_point_select"}
	if err := bob.Create(ctx, builtin); err != nil {
		t.Errorf("bob's run naming nothing of anyone's: %v", err)
	}

	if err := alice.Create(ctx, external("alice-ext")); err != nil {
		t.Fatalf("alice's run naming her own Secret: %v", err)
	}
	if err := alice.Create(ctx, script("alice-script")); err != nil {
		t.Errorf("alice's run naming her own ConfigMap: %v", err)
	}
	sched.Name = "alice-nightly"
	if err := alice.Create(ctx, sched); err != nil {
		t.Errorf("alice's schedule: %v", err)
	}

	// bob may still label alice's run: its spec stays as it was. Any change to its spec (here a
	// longer ladder) is checked against every name it holds, as a create is: refused. Pointing
	// his own run at a Secret he may not read is refused too.
	got := &v1.BenchmarkRun{}
	if err := bob.Get(ctx, client.ObjectKey{Namespace: ns, Name: "alice-ext"}, got); err != nil {
		t.Fatal(err)
	}
	got.Labels = map[string]string{"team": "a"}
	if err := bob.Update(ctx, got); err != nil {
		t.Errorf("bob labelling alice's run: %v, want it allowed (its spec unchanged)", err)
	}
	got.Spec.Ladder.Threads = []int32{1, 2}
	if err := bob.Update(ctx, got); err == nil || !strings.Contains(err.Error(), "so may not change the spec of BenchmarkRun alice-ext, which names them") {
		t.Errorf("bob lengthening the ladder of alice's run naming her Secret: %v, want it refused", err)
	}
	builtinRun := &v1.BenchmarkRun{}
	if err := bob.Get(ctx, client.ObjectKey{Namespace: ns, Name: "bob-builtin"}, builtinRun); err != nil {
		t.Fatal(err)
	}
	builtinRun.Spec.Targets = external("x").Spec.Targets
	if err := bob.Update(ctx, builtinRun); err == nil || !strings.Contains(err.Error(), "(alice-db)") {
		t.Errorf("bob pointing his run at alice's Secret: %v, want it refused", err)
	}
}

// applyKinds server-side applies the objects of the given kinds and returns how many there were.
func applyKinds(ctx context.Context, t *testing.T, c client.Client, objs []*unstructured.Unstructured, kinds ...string) int {
	t.Helper()
	n := 0
	for _, o := range objs {
		for _, k := range kinds {
			if o.GetKind() != k {
				continue
			}
			o = o.DeepCopy()
			o.SetManagedFields(nil)
			if err := c.Patch(ctx, o, client.Apply, client.FieldOwner("test-admission"), client.ForceOwnership); err != nil {
				t.Fatalf("apply %s %s: %v", o.GetKind(), o.GetName(), err)
			}
			n++
		}
	}
	return n
}
