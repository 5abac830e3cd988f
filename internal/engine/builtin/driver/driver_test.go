package driver

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/server"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

func builtinRun(uid types.UID) *v1.BenchmarkRun {
	return &v1.BenchmarkRun{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1.GroupVersion.String(), Kind: "BenchmarkRun"},
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "bench", UID: uid},
		Spec: v1.BenchmarkRunSpec{
			Targets:  []v1.Target{{Name: "mariadb", Engine: v1.EngineBuiltin, Image: "mariadb:10.11"}},
			Workload: v1.Workload{Script: "oltp_point_select", Tables: 1, TableSize: 1000},
			Ladder:   v1.Ladder{Threads: []int32{1, 2}, StepDuration: &metav1.Duration{Duration: time.Second}},
		},
	}
}

// Provision's creates: a stale cache (the operator's own earlier create not seen yet) is
// confirmed through the API reader, never mistaken for someone else's object; an object the
// API server refuses for good ends the target with the server's message.
func TestBuiltinProvisionCreates(t *testing.T) {
	s := scheme(t)
	if err := v1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	run := builtinRun("run-uid")
	target := run.Spec.Targets[0]
	// store is the API server; provisioned once so every object exists, owned by owner.
	store := func(t *testing.T, owner *v1.BenchmarkRun) client.Client {
		c := fake.NewClientBuilder().WithScheme(s).Build()
		if err := (&Engine{Client: c, Scheme: s}).Provision(context.Background(), owner, owner.Spec.Targets[0], nil); err != nil {
			t.Fatal(err)
		}
		return c
	}
	// staleCache never sees an object: reads miss, writes go to the API server.
	staleCache := func(api client.Client) client.Client {
		return interceptor.NewClient(api.(client.WithWatch), interceptor.Funcs{
			Get: func(_ context.Context, _ client.WithWatch, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
				return apierrors.NewNotFound(schema.GroupResource{Resource: "things"}, key.Name)
			},
		})
	}

	t.Run("stale cache: the run's own objects are confirmed through the API reader", func(t *testing.T) {
		api := store(t, run)
		b := &Engine{Client: staleCache(api), Reader: api, Scheme: s}
		if err := b.Provision(context.Background(), run, target, nil); err != nil {
			t.Fatalf("Provision = %v, want nil: the objects are the run's own", err)
		}
	})
	t.Run("another run's objects under the same names stay foreign", func(t *testing.T) {
		// "nightly" + "maria-db" and "nightly-maria" + "db" meet.
		other := builtinRun("other-uid")
		other.Name = "nightly-maria"
		other.Spec.Targets[0].Name = "db"
		api := store(t, other)
		b := &Engine{Client: staleCache(api), Reader: api, Scheme: s}
		err := b.Provision(context.Background(), run, v1.Target{Name: "maria-db", Engine: v1.EngineBuiltin, Image: "mariadb:10.11"}, nil)
		if !server.IsConfigError(err) || !strings.Contains(err.Error(), "Secret bench/nightly-maria-db-credentials already exists and does not belong to this run") {
			t.Fatalf("Provision = %v, want a ConfigError naming the foreign object", err)
		}
	})
	t.Run("an earlier run's objects under the same names are waited for, never adopted", func(t *testing.T) {
		api := store(t, builtinRun("earlier-uid"))
		b := &Engine{Client: staleCache(api), Reader: api, Scheme: s}
		err := b.Provision(context.Background(), run, target, nil)
		if we := server.AsWait(err); we == nil || we.After <= 0 || !strings.Contains(we.Message, "of an earlier run to be deleted") {
			t.Fatalf("Provision = %v, want a WaitError for the earlier run's objects", err)
		}
	})
	t.Run("a create the API server forbids fails the target with its message", func(t *testing.T) {
		api := fake.NewClientBuilder().WithScheme(s).WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if _, ok := obj.(*appsv1.StatefulSet); ok {
					return apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, obj.GetName(),
						errorString(`exceeded quota: no-statefulsets, requested: count/statefulsets.apps=1, used: count/statefulsets.apps=0, limited: count/statefulsets.apps=0`))
				}
				return c.Create(ctx, obj, opts...)
			},
		}).Build()
		err := (&Engine{Client: api, Reader: api, Scheme: s}).Provision(context.Background(), run, target, nil)
		if !server.IsConfigError(err) {
			t.Fatalf("Provision = %v, want a ConfigError", err)
		}
		for _, w := range []string{"the API server rejected StatefulSet " + specs.ServerName(run, "mariadb"), "exceeded quota"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q lacks %q", err, w)
			}
		}
	})
	t.Run("a transient create error is retried", func(t *testing.T) {
		api := fake.NewClientBuilder().WithScheme(s).WithInterceptorFuncs(interceptor.Funcs{
			Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
				return apierrors.NewServiceUnavailable("etcd leader changed")
			},
		}).Build()
		err := (&Engine{Client: api, Reader: api, Scheme: s}).Provision(context.Background(), run, target, nil)
		if err == nil || server.IsConfigError(err) {
			t.Fatalf("Provision = %v, want a plain error (the reconcile is retried)", err)
		}
	})
}

type errorString string

func (e errorString) Error() string { return string(e) }

// The NetworkPolicy comes with the server unless the run opts out, and goes with it.
func TestBuiltinNetworkPolicy(t *testing.T) {
	s := scheme(t)
	if err := v1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, setting := range []v1.NetworkPolicyMode{"", v1.NetworkPolicyEnabled, v1.NetworkPolicyDisabled} {
		t.Run(string(setting), func(t *testing.T) {
			run := builtinRun("run-uid")
			run.Spec.NetworkPolicy = setting
			c := fake.NewClientBuilder().WithScheme(s).Build()
			b := &Engine{Client: c, Scheme: s}
			if err := b.Provision(context.Background(), run, run.Spec.Targets[0], nil); err != nil {
				t.Fatal(err)
			}
			key := client.ObjectKey{Namespace: run.Namespace, Name: specs.ServerName(run, "mariadb")}
			np := &networkingv1.NetworkPolicy{}
			err := c.Get(context.Background(), key, np)
			want := setting != v1.NetworkPolicyDisabled
			if want && (err != nil || !metav1.IsControlledBy(np, run)) {
				t.Fatalf("NetworkPolicy %s: %v (controlled by the run: %v), want one the run controls", key.Name, err, err == nil && metav1.IsControlledBy(np, run))
			}
			if !want && !apierrors.IsNotFound(err) {
				t.Fatalf("networkPolicy Disabled, yet NetworkPolicy %s: %v", key.Name, err)
			}
			if err := b.Teardown(context.Background(), run, run.Spec.Targets[0]); err != nil {
				t.Fatal(err)
			}
			if err := c.Get(context.Background(), key, &networkingv1.NetworkPolicy{}); !apierrors.IsNotFound(err) {
				t.Fatalf("after Teardown: %v, want NotFound", err)
			}
		})
	}
}

// Ready trusts the pod "<server>-0" only when the run's StatefulSet controls it.
func TestBuiltinReadyPlantedPod(t *testing.T) {
	s := scheme(t)
	if err := v1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	run := builtinRun("run-uid")
	c := fake.NewClientBuilder().WithScheme(s).Build()
	b := &Engine{Client: c, Scheme: s}
	ctx := context.Background()
	if st, err := b.Ready(ctx, run, run.Spec.Targets[0]); err != nil || st.Ready || st.Failed {
		t.Fatalf("Ready before Provision = %+v, %v; want starting", st, err)
	}
	// Planted before the StatefulSet made its own: ready, with the server's labels.
	name := specs.ServerName(run, "mariadb")
	planted := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-0", Namespace: run.Namespace,
		Labels: specs.ServerPodLabels(run, "mariadb")}}
	planted.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if err := c.Create(ctx, planted); err != nil {
		t.Fatal(err)
	}
	if err := b.Provision(ctx, run, run.Spec.Targets[0], nil); err != nil {
		t.Fatal(err)
	}
	st, err := b.Ready(ctx, run, run.Spec.Targets[0])
	if err != nil || st.Ready || !st.Failed || !strings.Contains(st.Message, "Pod bench/"+name+"-0 is not the pod of the run's StatefulSet") {
		t.Fatalf("Ready with a planted pod = %+v, %v; want Failed naming the pod", st, err)
	}
	// The StatefulSet's own pod is read as usual.
	if err := c.Delete(ctx, planted); err != nil {
		t.Fatal(err)
	}
	sts := &appsv1.StatefulSet{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, sts); err != nil {
		t.Fatal(err)
	}
	pod := planted.DeepCopy()
	pod.ResourceVersion = ""
	pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(sts, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if st, err := b.Ready(ctx, run, run.Spec.Targets[0]); err != nil || !st.Ready {
		t.Fatalf("Ready with the StatefulSet's pod = %+v, %v; want Ready", st, err)
	}
}

// Replace deletes the server pod only while it is still the instance named: a repeat after the
// replacement began (the old pod terminating, or a new one running) deletes nothing.
func TestBuiltinReplace(t *testing.T) {
	s := scheme(t)
	run := builtinRun("run-uid")
	target := run.Spec.Targets[0]
	name := specs.ServerName(run, target.Name) + "-0"
	pod := func(uid types.UID, restarts int32) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: run.Namespace, UID: uid},
			Status:     corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "mysql", RestartCount: restarts}}},
		}
	}
	for _, c := range []struct {
		name     string
		pod      *corev1.Pod // nil: no pod
		instance string
		deleted  bool
	}{
		{"the instance measured: deleted", pod("uid-1", 0), "uid-1/0", true},
		{"a new pod already: kept", pod("uid-2", 0), "uid-1/0", false},
		{"the same pod restarted since: kept", pod("uid-1", 1), "uid-1/0", false},
		{"no pod: nothing to do", nil, "uid-1/0", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(s)
			if c.pod != nil {
				b = b.WithObjects(c.pod)
			}
			cl := b.Build()
			if err := (&Engine{Client: cl, Scheme: s}).Replace(context.Background(), run, target, c.instance); err != nil {
				t.Fatal(err)
			}
			err := cl.Get(context.Background(), client.ObjectKey{Namespace: run.Namespace, Name: name}, &corev1.Pod{})
			if gone := apierrors.IsNotFound(err); c.pod != nil && gone != c.deleted {
				t.Errorf("pod deleted %v, want %v (get: %v)", gone, c.deleted, err)
			}
		})
	}
}
