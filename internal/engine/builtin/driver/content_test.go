package driver

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
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/builtin"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/server"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

const (
	pw1 = "abcdefghijklmnopqrstuvwx"
	pw2 = "ABCDEFGHIJKLMNOPQRSTUVW0"
)

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
	serverName := specs.ServerName(run, target.Name)
	secret := specs.ConnectionSecretName(run, target.Name)

	t.Run("its own, twice", func(t *testing.T) {
		c := fake.NewClientBuilder().WithScheme(s).Build()
		b := &Engine{Client: c, Scheme: s}
		for i := range 2 {
			if err := b.Provision(ctx, run, target, nil); err != nil {
				t.Fatalf("provision %d: %v", i+1, err)
			}
		}
		cm, sec := &corev1.ConfigMap{}, &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: serverName}, cm); err != nil {
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
			cm, err := builtin.ConfigMap(run, target)
			if err != nil {
				t.Fatal(err)
			}
			cm.Data[builtin.GrantsKey] += "GRANT ALL ON *.* TO 'sbtest'@'%';\n"
			return cm
		}(), "ConfigMap bench/" + serverName + ", the my.cnf of target mariadb's server and the SQL it runs as root on its first start, " +
			"does not hold what the operator writes for this run (its data is not what the operator writes for this run)"},
		{"credentials with a chosen password", builtin.ConnectionSecret(run, target.Name, pw1, "known"),
			"Secret bench/" + secret + ", the credentials of target mariadb's server and of its sysbench Jobs, " +
				"does not hold what the operator writes for this run (keys: password not a password the operator generates)"},
		{"credentials of another host", func() client.Object {
			sec := builtin.ConnectionSecret(run, target.Name, pw1, pw2)
			sec.StringData["host"] = "attacker.example"
			return sec
		}(), "(keys: host changed)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.forged.SetOwnerReferences(own)
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(tc.forged).Build()
			err := (&Engine{Client: c, Scheme: s}).Provision(ctx, run, target, nil)
			if !server.IsConfigError(err) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "delete it and create the run again") {
				t.Fatalf("Provision: %v; want a ConfigError containing %q and what to do", err, tc.want)
			}
			if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: serverName}, &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
				t.Errorf("StatefulSet: %v, want none created", err)
			}
		})
	}
}
