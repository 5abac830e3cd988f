package driver

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/percona"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/server"
)

const (
	pw1 = "abcdefghijklmnopqrstuvwx"
	pw2 = "ABCDEFGHIJKLMNOPQRSTUVW0"
)

// The Percona engines' Secrets: the system users' and the benchmark password's must hold
// passwords of the operator's shape under the keys it writes (the Percona operator may add keys);
// the connection Secret exactly what the operator derives.
func TestEnsurePerconaChecksSecrets(t *testing.T) {
	s := scheme(t)
	if err := v1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run := perconaRun()
	target := v1.Target{Name: "ps", Engine: v1.EnginePerconaServer}
	own := []metav1.OwnerReference{*metav1.NewControllerRef(run, v1.GroupVersion.WithKind("BenchmarkRun"))}
	users := percona.SystemUsers[v1.EnginePerconaServer]
	passwords := func(pw string) map[string]string {
		m := map[string]string{}
		for _, u := range users {
			m[u] = pw
		}
		return m
	}
	for _, tc := range []struct {
		name          string
		existing, obj *corev1.Secret
		generated     []string
		exact         bool
		want          string // "" for no error
	}{
		{"users with the operator's shape and a key the Percona operator added",
			func() *corev1.Secret {
				s := percona.UsersSecret(run, target, passwords(pw2))
				s.StringData["pmmserverkey"] = "x"
				return s
			}(), percona.UsersSecret(run, target, passwords(pw1)), users, false, ""},
		{"users with a root password someone chose",
			func() *corev1.Secret {
				p := passwords(pw2)
				p["root"] = "known"
				return percona.UsersSecret(run, target, p)
			}(), percona.UsersSecret(run, target, passwords(pw1)), users, false, "keys: root not a password the operator generates"},
		{"connection Secret to another host",
			percona.ConnectionSecret(run, target, "attacker.example", pw1, pw2),
			percona.ConnectionSecret(run, target, "ps-mysql-primary.bench", pw1, pw2), nil, true, "keys: host changed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.existing.SetOwnerReferences(own)
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(tc.existing).Build()
			p := NewServer(c, nil, s)
			_, err := ensurePercona(ctx, p, run, target, tc.obj, tc.generated, tc.exact)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("ensurePercona: %v, want the Secret accepted", err)
			case tc.want != "" && (!server.IsConfigError(err) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("ensurePercona: %v, want a ConfigError containing %q", err, tc.want)
			}
		})
	}
}

func perconaRun() *v1.BenchmarkRun {
	return &v1.BenchmarkRun{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1.GroupVersion.String(), Kind: "BenchmarkRun"},
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "bench", UID: "run-uid"},
		Spec: v1.BenchmarkRunSpec{
			Workload: v1.Workload{Script: "oltp_read_only", Tables: 4},
			Ladder:   v1.Ladder{Threads: []int32{1, 4, 16}},
		},
	}
}

func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}
