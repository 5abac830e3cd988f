package driver

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/server"
)

func TestExternalReady(t *testing.T) {
	run := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "pk-lookup", Namespace: "bench"}}
	target := v1.Target{Name: "rds", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "rds-conn"}}
	secret := func(data map[string]string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rds-conn", Namespace: "bench"}, Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return s
	}
	complete := map[string]string{"host": "db.example.com", "port": "3306", "user": "sbtest", "password": "s3cr3t-Value"}
	without := func(keys ...string) map[string]string {
		m := map[string]string{}
		for k, v := range complete {
			m[k] = v
		}
		for _, k := range keys {
			delete(m, k)
		}
		return m
	}
	tests := []struct {
		name        string
		objs        []client.Object
		want        server.State
		wantMessage []string
		notMessage  []string
	}{
		{
			name:        "secret missing: wait, say what to create",
			want:        server.State{Reason: v1.ReasonSecret},
			wantMessage: []string{"Secret bench/rds-conn", "target rds", "does not exist", "create it with the keys host, port, user and password"},
		},
		{
			name: "secret in another namespace does not count",
			objs: []client.Object{func() *corev1.Secret { s := secret(complete); s.Namespace = "other"; return s }()},
			want: server.State{Reason: v1.ReasonSecret},
		},
		{
			name:        "missing password: failed, names the key",
			objs:        []client.Object{secret(without("password"))},
			want:        server.State{Failed: true, Reason: v1.ReasonSecret},
			wantMessage: []string{"Secret bench/rds-conn", "target rds", "lacks the keys password:"},
		},
		{
			name:        "several keys missing, sorted",
			objs:        []client.Object{secret(without("user", "host", "port"))},
			want:        server.State{Failed: true, Reason: v1.ReasonSecret},
			wantMessage: []string{"lacks the keys host, port, user:"},
			notMessage:  []string{"password,"},
		},
		{
			name:        "empty value counts as missing",
			objs:        []client.Object{secret(map[string]string{"host": "", "port": "3306", "user": "u", "password": "p"})},
			want:        server.State{Failed: true, Reason: v1.ReasonSecret},
			wantMessage: []string{"lacks the keys host:"},
		},
		{
			name:        "empty secret",
			objs:        []client.Object{secret(nil)},
			want:        server.State{Failed: true, Reason: v1.ReasonSecret},
			wantMessage: []string{"lacks the keys host, password, port, user:"},
		},
		{
			name: "complete secret: ready",
			objs: []client.Object{secret(complete)},
			want: server.State{Ready: true},
		},
		{
			name: "database is optional",
			objs: []client.Object{secret(map[string]string{"host": "h", "port": "3306", "user": "u", "password": "p", "database": "bench"})},
			want: server.State{Ready: true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(tc.objs...).Build()
			e := &Engine{Reader: c}
			got, err := e.Ready(context.Background(), run, target)
			if err != nil {
				t.Fatal(err)
			}
			if got.Ready != tc.want.Ready || got.Failed != tc.want.Failed || got.Reason != tc.want.Reason {
				t.Errorf("Ready = %+v, want Ready=%v Failed=%v Reason=%q", got, tc.want.Ready, tc.want.Failed, tc.want.Reason)
			}
			for _, w := range tc.wantMessage {
				if !strings.Contains(got.Message, w) {
					t.Errorf("message %q lacks %q", got.Message, w)
				}
			}
			for _, w := range tc.notMessage {
				if strings.Contains(got.Message, w) {
					t.Errorf("message %q has %q", got.Message, w)
				}
			}
			// The Secret's values never reach the message.
			for _, o := range tc.objs {
				for k, v := range o.(*corev1.Secret).Data {
					if k == "password" && len(v) >= 6 && strings.Contains(got.Message, string(v)) {
						t.Errorf("message %q shows the password", got.Message)
					}
				}
			}
		})
	}

	t.Run("read errors are returned", func(t *testing.T) {
		boom := errors.New("etcd unavailable")
		c := fake.NewClientBuilder().WithScheme(scheme(t)).WithInterceptorFuncs(interceptor.Funcs{
			Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
				return boom
			},
		}).Build()
		_, err := (&Engine{Reader: c}).Ready(context.Background(), run, target)
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "rds-conn") {
			t.Errorf("Ready error = %v, want the read error wrapped with the Secret's name", err)
		}
	})
}

func TestExternalIsPassive(t *testing.T) {
	run := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "pk-lookup", Namespace: "bench"}}
	target := v1.Target{Name: "rds", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "rds-conn"}}
	e := &Engine{}
	if got := e.ConnectionSecret(run, target); got != "rds-conn" {
		t.Errorf("ConnectionSecret = %q, want the user's Secret", got)
	}
	if got := e.ConnectionSecret(run, v1.Target{Name: "x"}); got != "" {
		t.Errorf("ConnectionSecret without secretRef = %q", got)
	}
	// Provision and Teardown must not touch anything: a nil Reader would panic if they did.
	if err := e.Provision(context.Background(), run, target, nil); err != nil {
		t.Error(err)
	}
	if err := e.Teardown(context.Background(), run, target); err != nil {
		t.Error(err)
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
