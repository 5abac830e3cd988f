package engine

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

const (
	pw1 = "abcdefghijklmnopqrstuvwx"
	pw2 = "ABCDEFGHIJKLMNOPQRSTUVW0"
)

func TestGenerated(t *testing.T) {
	for s, want := range map[string]bool{pw1: true, pw2: true, "": false, "known": false,
		pw1[:23]: false, pw1 + "y": false, pw1[:23] + "-": false, pw1[:23] + "é"[:1]: false} {
		if got := generated(s); got != want {
			t.Errorf("generated(%q) = %v, want %v", s, got, want)
		}
	}
	for range 20 {
		p, err := password()
		if err != nil || !generated(p) {
			t.Fatalf("password() = %q, %v: not of its own shape", p, err)
		}
	}
}

// secretDiffers names what a Secret found under a name the run needs has that the operator's
// does not: changed fixed values, passwords of another shape, missing keys and, when exact,
// added ones. Never a value.
func TestSecretDiffers(t *testing.T) {
	want := &corev1.Secret{Type: corev1.SecretTypeOpaque, StringData: map[string]string{
		"host": "srv-0.srv.bench.svc", "port": "3306", "user": "sbtest", "password": pw1, "root-password": pw2}}
	data := func(edit func(map[string][]byte)) *corev1.Secret {
		s := &corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{}}
		for k, v := range want.StringData {
			s.Data[k] = []byte(v)
		}
		if edit != nil {
			edit(s.Data)
		}
		return s
	}
	generatedKeys := []string{"password", "root-password"}
	for _, tc := range []struct {
		name  string
		got   *corev1.Secret
		exact bool
		want  string
	}{
		{"the operator's", data(nil), true, ""},
		{"other passwords of the operator's shape", data(func(d map[string][]byte) { d["password"] = []byte(pw2) }), true, ""},
		{"a password the forger chose", data(func(d map[string][]byte) { d["password"] = []byte("known") }), true,
			"keys: password not a password the operator generates"},
		{"another host", data(func(d map[string][]byte) { d["host"] = []byte("attacker.example") }), true, "keys: host changed"},
		{"a key missing", data(func(d map[string][]byte) { delete(d, "user") }), true, "keys: user missing"},
		{"a key added", data(func(d map[string][]byte) { d["ssl-ca"] = []byte("x") }), true, "keys: ssl-ca added"},
		{"a key added, not exact", data(func(d map[string][]byte) { d["pmmserverkey"] = []byte("x") }), false, ""},
		{"another type", func() *corev1.Secret { s := data(nil); s.Type = corev1.SecretTypeBasicAuth; return s }(), true,
			"its type is kubernetes.io/basic-auth, not Opaque"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := secretDiffers(tc.got, want, generatedKeys, tc.exact)
			if got != tc.want {
				t.Errorf("secretDiffers = %q, want %q", got, tc.want)
			}
			if strings.Contains(got, "attacker") || strings.Contains(got, "known") {
				t.Errorf("it quotes a value: %q", got)
			}
		})
	}
}

// Provision creates the server's ConfigMap and credentials Secret immutable and, finding them on a
// later pass, uses them only as the operator wrote them: one with the run's controller reference
// but other content (the reference can be forged) fails the target before the StatefulSet exists.
func TestBuiltinProvisionChecksWhatItFinds(t *testing.T) {
	s := scheme(t)
	if err := v1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run := builtinRun("run-uid")
	target := run.Spec.Targets[0]
	own := []metav1.OwnerReference{*metav1.NewControllerRef(run, v1.GroupVersion.WithKind("BenchmarkRun"))}
	server := specs.ServerName(run, target.Name)
	secret := specs.ConnectionSecretName(run, target.Name)

	t.Run("its own, twice", func(t *testing.T) {
		c := fake.NewClientBuilder().WithScheme(s).Build()
		b := &Builtin{Client: c, Scheme: s}
		for i := range 2 {
			if err := b.Provision(ctx, run, target, nil); err != nil {
				t.Fatalf("provision %d: %v", i+1, err)
			}
		}
		cm, sec := &corev1.ConfigMap{}, &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: server}, cm); err != nil {
			t.Fatal(err)
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: secret}, sec); err != nil {
			t.Fatal(err)
		}
		if cm.Immutable == nil || !*cm.Immutable || sec.Immutable == nil || !*sec.Immutable {
			t.Errorf("immutable: ConfigMap %v, Secret %v; want both true", cm.Immutable, sec.Immutable)
		}
	})
	for _, tc := range []struct {
		name   string
		forged client.Object
		want   string
	}{
		{"server ConfigMap with more SQL", func() client.Object {
			cm, err := specs.ServerConfigMap(run, target)
			if err != nil {
				t.Fatal(err)
			}
			cm.Data[specs.GrantsKey] += "GRANT ALL ON *.* TO 'sbtest'@'%';\n"
			return cm
		}(), "ConfigMap bench/" + server + ", the my.cnf of target mariadb's server and the SQL it runs as root on its first start, " +
			"does not hold what the operator writes for this run (its data is not what the operator writes for this run)"},
		{"credentials with a chosen password", specs.ConnectionSecret(run, target.Name, pw1, "known"),
			"Secret bench/" + secret + ", the credentials of target mariadb's server and of its sysbench Jobs, " +
				"does not hold what the operator writes for this run (keys: password not a password the operator generates)"},
		{"credentials of another host", func() client.Object {
			sec := specs.ConnectionSecret(run, target.Name, pw1, pw2)
			sec.StringData["host"] = "attacker.example"
			return sec
		}(), "(keys: host changed)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.forged.SetOwnerReferences(own)
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(tc.forged).Build()
			err := (&Builtin{Client: c, Scheme: s}).Provision(ctx, run, target, nil)
			if !IsConfigError(err) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "delete it and create the run again") {
				t.Fatalf("Provision: %v; want a ConfigError containing %q and what to do", err, tc.want)
			}
			if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: server}, &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
				t.Errorf("StatefulSet: %v, want none created", err)
			}
		})
	}
}

// The Percona engines' Secrets: the system users' and the benchmark password's must hold
// passwords of the operator's shape under the keys it writes (the Percona operator may add keys);
// the connection Secret exactly what the operator derives.
func TestEnsurePerconaChecksSecrets(t *testing.T) {
	s := scheme(t)
	if err := v1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run := builtinRun("run-uid")
	target := v1.Target{Name: "ps", Engine: v1.EnginePerconaServer}
	own := []metav1.OwnerReference{*metav1.NewControllerRef(run, v1.GroupVersion.WithKind("BenchmarkRun"))}
	users := specs.PerconaSystemUsers[v1.EnginePerconaServer]
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
				s := specs.PerconaUsersSecret(run, target, passwords(pw2))
				s.StringData["pmmserverkey"] = "x"
				return s
			}(), specs.PerconaUsersSecret(run, target, passwords(pw1)), users, false, ""},
		{"users with a root password someone chose",
			func() *corev1.Secret {
				p := passwords(pw2)
				p["root"] = "known"
				return specs.PerconaUsersSecret(run, target, p)
			}(), specs.PerconaUsersSecret(run, target, passwords(pw1)), users, false, "keys: root not a password the operator generates"},
		{"connection Secret to another host",
			specs.PerconaConnectionSecret(run, target, "attacker.example", pw1, pw2),
			specs.PerconaConnectionSecret(run, target, "ps-mysql-primary.bench", pw1, pw2), nil, true, "keys: host changed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.existing.SetOwnerReferences(own)
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(tc.existing).Build()
			p := NewPerconaServer(c, s)
			_, err := ensurePercona(ctx, p, run, target, tc.obj, tc.generated, tc.exact)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("ensurePercona: %v, want the Secret accepted", err)
			case tc.want != "" && (!IsConfigError(err) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("ensurePercona: %v, want a ConfigError containing %q", err, tc.want)
			}
		})
	}
}
