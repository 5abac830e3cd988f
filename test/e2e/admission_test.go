//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/test/clustertest"
)

// TestAdmissionPolicyOnARealCluster: with the chart installed (its admission policy is on by
// default), a user who may create runs but not get a Secret cannot create a run that names it,
// and one who may get it can. The creates are server-side dry runs: admission runs in full, and
// no server starts.
func TestAdmissionPolicyOnARealCluster(t *testing.T) {
	ctx := context.Background()
	admin := newClient(t)
	ns := env("E2E_ADMISSION_NAMESPACE", "mysqlbench-e2e-admission")
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, o := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "alice-db", Namespace: ns},
			StringData: map[string]string{"host": "db", "port": "3306", "user": "u", "password": "alice-only"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "bench-user", Namespace: ns}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"mysqlbench.io"}, Resources: []string{"benchmarkruns"}, Verbs: []string{"create"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bench-users", Namespace: ns},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: "e2e-alice"}, {Kind: "User", Name: "e2e-bob"}},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "bench-user"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "alice-db", Namespace: ns}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"alice-db"}, Verbs: []string{"get"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-db", Namespace: ns},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: "e2e-alice"}},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "alice-db"}},
	} {
		if err := admin.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	run := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: ns}, Spec: v1.BenchmarkRunSpec{
		Targets:  []v1.Target{{Name: "ext", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "alice-db"}}},
		Workload: v1.Workload{Script: "oltp_point_select"},
		Ladder:   v1.Ladder{Threads: []int32{1}},
	}}
	bob, alice := clustertest.NewClientAs(t, "e2e-bob"), clustertest.NewClientAs(t, "e2e-alice")
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		// RBAC and the policy reach the API server's caches a moment after their create.
		err = bob.Create(ctx, run.DeepCopy(), client.DryRunAll)
		if (err != nil && strings.Contains(err.Error(), "ValidatingAdmissionPolicy")) || time.Now().After(deadline) {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "user e2e-bob may not get every Secret that spec.targets[].secretRef names (alice-db)") {
		t.Fatalf("e2e-bob's run naming a Secret he may not get: %v, want the admission policy's refusal", err)
	}
	if err := alice.Create(ctx, run.DeepCopy(), client.DryRunAll); err != nil {
		t.Errorf("e2e-alice's run naming her Secret: %v", err)
	}
	t.Logf("e2e-bob refused: %v", err)
}
