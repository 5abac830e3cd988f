// Package driver is the builtin engine's driver: it provisions, reads and removes the servers
// that package builtin describes. It is a package of its own because it talks to the API server
// through controller-runtime's client, which the describers must not link (the kubectl plugin
// links them; see package object).
package driver

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/builtin"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/provision"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/server"
	"github.com/mysqlbench/mysqlbench-operator/internal/owned"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// What the builtin engine asks of the API server: its servers' StatefulSets, Services and
// NetworkPolicies are its alone (list and watch: the manager's cache watches them for the
// controller, and the node-pool queue lists the StatefulSets); the ConfigMaps, Secrets and pods
// it shares with the controller, whose markers grant the rest (controllers/).
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=configmaps;secrets,verbs=get;create;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;delete

// Engine runs each target's server itself: a Secret with generated credentials, a ConfigMap
// with my.cnf, a headless Service, a NetworkPolicy and a one-pod StatefulSet. It is the driver
// the controller uses; what it creates, without I/O, is its Describer's.
type Engine struct {
	builtin.Describer
	// Client is the manager's cached client: the operator's own objects.
	Client client.Client
	// Reader reads from the API server directly. A create that finds its object exists
	// confirms through it: the cache may not have seen the operator's own earlier create, and
	// never holds objects without the operator's labels. Nil reads through Client.
	Reader client.Reader
	Scheme *runtime.Scheme
}

// New is the builtin engine wired to a manager's cached client, its API reader and scheme.
func New(c client.Client, reader client.Reader, scheme *runtime.Scheme) *Engine {
	return &Engine{Client: c, Reader: reader, Scheme: scheme}
}

// Provision creates the target's objects, each controlled by the run. Nothing is updated in
// place: the spec cannot change once the run started, and the credentials must stay as generated
// (the passwords generated for a Secret that exists already are dropped).
func (b *Engine) Provision(ctx context.Context, run *v1.BenchmarkRun, t v1.Target, peers []specs.Peer) error {
	root, err1 := server.Password()
	user, err2 := server.Password()
	if err1 != nil || err2 != nil {
		return fmt.Errorf("generate passwords: %w", errors.Join(err1, err2))
	}
	objs, err := builtin.Objects(run, t, root, user, peers...)
	if err != nil {
		return &server.ConfigError{Message: err.Error()}
	}
	for _, obj := range objs {
		// Nobody changes them once created, the operator included: what the server and
		// sysbench read is what the operator wrote, or what it checked.
		switch o := obj.(type) {
		case *corev1.ConfigMap:
			o.Immutable = ptr.To(true)
		case *corev1.Secret:
			o.Immutable = ptr.To(true)
		}
		// Names are derived from the run and target names, so an object may exist that is not
		// the run's: never benchmark another run's server, never hand sysbench a planted Secret.
		_, created, err := owned.Ensure(ctx, b.objects(), run, obj)
		if err != nil {
			return provision.Ownership(obj, err)
		}
		if !created {
			if err := b.checkContent(ctx, t, obj); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkContent reads the object under want's name from the API server (the cache holds no
// ConfigMap data) and says whether it holds what the operator writes: the server's ConfigMap
// and its credentials Secret are executed and connected with, and a controller reference naming
// the run can be forged (see server.SecretDiffers). A difference is a *ConfigError that names the object.
func (b *Engine) checkContent(ctx context.Context, t v1.Target, want client.Object) error {
	reader := b.Reader
	if reader == nil {
		reader = b.Client
	}
	key := client.ObjectKeyFromObject(want)
	switch w := want.(type) {
	case *corev1.ConfigMap:
		got := &corev1.ConfigMap{}
		if err := reader.Get(ctx, key, got); err != nil {
			return fmt.Errorf("get configmap %s: %w", key.Name, err)
		}
		if d := server.ConfigMapDiffers(got, w); d != "" {
			return server.NotTheOperators("ConfigMap "+key.String(), "the my.cnf of target "+t.Name+"'s server and the SQL it runs as root "+
				"on its first start", d)
		}
	case *corev1.Secret:
		got := &corev1.Secret{}
		if err := reader.Get(ctx, key, got); err != nil {
			return fmt.Errorf("get secret %s: %w", key.Name, err)
		}
		if d := server.SecretDiffers(got, w, []string{sysbench.SecretKeyPassword, specs.SecretKeyRootPassword}, true); d != "" {
			return server.NotTheOperators("Secret "+key.String(), "the credentials of target "+t.Name+"'s server and of its sysbench Jobs", d)
		}
	}
	return nil
}

func (b *Engine) objects() owned.Objects {
	return owned.Objects{Client: b.Client, Reader: b.Reader, Scheme: b.Scheme}
}

// Ready reads the server pod: Ready, or why not (unschedulable, image pull, crash loop). The pod
// counts only when the run's StatefulSet controls it: a pod planted under the name "<server>-0"
// before the StatefulSet made its own would otherwise pass for the server.
func (b *Engine) Ready(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) (server.State, error) {
	name := specs.ServerName(run, t.Name)
	sts := &appsv1.StatefulSet{}
	if err := owned.Get(ctx, b.objects(), run, client.ObjectKey{Namespace: run.Namespace, Name: name}, sts); err != nil {
		if apierrors.IsNotFound(err) {
			return server.State{Reason: v1.ReasonStarting, Message: "waiting for StatefulSet " + name + " to be created"}, nil
		}
		if err := provision.Ownership(sts, err); server.IsConfigError(err) {
			return server.State{Failed: true, Reason: v1.ReasonConfig, Message: err.Error()}, nil
		} else if we := server.AsWait(err); we != nil {
			return server.State{Reason: v1.ReasonStarting, Message: we.Message, RecheckAfter: we.After}, nil
		}
		return server.State{}, fmt.Errorf("get statefulset %s: %w", name, err)
	}
	pod := &corev1.Pod{}
	err := b.Client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: builtin.PodName(run, t.Name)}, pod)
	if apierrors.IsNotFound(err) {
		return server.State{Reason: v1.ReasonStarting, Message: "waiting for StatefulSet " + name + " to create its pod"}, nil
	}
	if err != nil {
		return server.State{}, fmt.Errorf("get server pod: %w", err)
	}
	if !metav1.IsControlledBy(pod, sts) {
		return server.State{Failed: true, Reason: v1.ReasonConfig, Message: fmt.Sprintf("Pod %s/%s is not the pod of the run's "+
			"StatefulSet %s: delete it, or rename the run or the target so their objects get other names", pod.Namespace, pod.Name, name)}, nil
	}
	return server.PodState(pod), nil
}

// Replace deletes the server pod of the given instance; the run's StatefulSet creates a new
// one. The UID precondition makes a late repeat a no-op: it never deletes the new pod.
func (b *Engine) Replace(ctx context.Context, run *v1.BenchmarkRun, t v1.Target, instance string) error {
	name := builtin.PodName(run, t.Name)
	// From the cache (pods are watched, not read one by one): a stale copy is harmless, the
	// UID precondition below decides.
	pod := &corev1.Pod{}
	err := b.Client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, pod)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get server pod %s: %w", name, err)
	}
	if server.Instance(pod) != instance || pod.DeletionTimestamp != nil {
		return nil
	}
	uid := pod.UID
	err = b.Client.Delete(ctx, pod, client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete server pod %s: %w", name, err)
	}
	return nil
}

// Teardown deletes the StatefulSet (its PVC goes with it), Service, ConfigMap, Secret and NetworkPolicy: only
// those this run controls, since another run's objects can carry the same names.
func (b *Engine) Teardown(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) error {
	name := specs.ServerName(run, t.Name)
	objs := []client.Object{&appsv1.StatefulSet{}, &corev1.Service{}, &corev1.ConfigMap{}, &corev1.Secret{}, &networkingv1.NetworkPolicy{}}
	names := []string{name, name, name, specs.ConnectionSecretName(run, t.Name), name}
	// Read through the API server: the cache may not show an object created moments ago, which
	// would then outlive its run.
	reader := b.Reader
	if reader == nil {
		reader = b.Client
	}
	for i, obj := range objs {
		err := reader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: names[i]}, obj)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("get %T %s: %w", obj, names[i], err)
		}
		if !metav1.IsControlledBy(obj, run) {
			continue
		}
		uid := obj.GetUID()
		err = b.Client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground),
			client.Preconditions{UID: &uid})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %T %s: %w", obj, names[i], err)
		}
	}
	return nil
}
