// Package driver is the Percona engines' driver: it creates, reads and removes the Percona
// resources and Secrets that package percona describes. It is a package of its own because it
// talks to the API server through controller-runtime's client, which the describers must not link
// (the kubectl plugin links them; see package object).
package driver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/percona"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/provision"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/server"
	"github.com/mysqlbench/mysqlbench-operator/internal/owned"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// DefaultPollInterval is how often a Percona server's readiness is read when the
// controller could not watch its kind (the CRD was installed after the operator started).
const DefaultPollInterval = 10 * time.Second

// What the Percona engines ask of the API server: the Percona resources are theirs alone (patch:
// the finalizers of a resource stuck in deletion; list and watch: the controller watches a kind
// the cluster knows at setup); the Secrets they share with the controller, whose markers grant
// the rest (controllers/).
// +kubebuilder:rbac:groups=ps.percona.com,resources=perconaservermysqls,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups=pxc.percona.com,resources=perconaxtradbclusters,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;delete

// Engine runs each target's server through a Percona operator: a PerconaServerMySQL or a
// PerconaXtraDBCluster owned by the run, a Secret with the operator's system users, a Secret with
// the benchmark user's password and, once the operator publishes the endpoint, the connection
// Secret sysbench reads. The Percona objects are read and written as unstructured objects, which
// the manager's client reads from the API server, not its cache: nothing starts an informer for
// a kind the cluster may not have.
type Engine struct {
	percona.Describer
	Client client.Client
	Scheme *runtime.Scheme
	// PollInterval bounds the wait between readiness reads while the kind is not watched;
	// DefaultPollInterval when 0.
	PollInterval time.Duration
	// Reader reads from the API server: objects without the operator's labels, which the
	// cached Client cannot see. Nil reads them as unstructured through Client, which the
	// manager's client serves from the API server.
	Reader client.Reader
	// StuckDeletionGrace is how long an earlier run's resource under the same name may stay in
	// deletion before the operator removes the Percona finalizers that hold it (no Percona
	// operator runs them); DefaultStuckDeletionGrace when 0.
	StuckDeletionGrace time.Duration

	watched atomic.Bool
}

// NewServer is the percona-server engine (PerconaServerMySQL, ps.percona.com/v1), wired to a
// manager's client, its API reader (nil: read through the client) and scheme.
func NewServer(c client.Client, reader client.Reader, scheme *runtime.Scheme) *Engine {
	return &Engine{Describer: percona.Server, Client: c, Reader: reader, Scheme: scheme}
}

// NewXtraDBCluster is the percona-xtradb-cluster engine (PerconaXtraDBCluster,
// pxc.percona.com/v1), wired as NewServer's.
func NewXtraDBCluster(c client.Client, reader client.Reader, scheme *runtime.Scheme) *Engine {
	return &Engine{Describer: percona.XtraDBCluster, Client: c, Reader: reader, Scheme: scheme}
}

// ServerKind is the Percona kind this engine creates.
func (p *Engine) ServerKind() schema.GroupVersionKind { return p.Flavor().Kind }

// SetWatched records whether the controller watches ServerKind.
func (p *Engine) SetWatched(w bool) { p.watched.Store(w) }

// notInstalled is the failure of a target whose Percona operator is missing: retrying does not
// help until someone installs it.
func (p *Engine) notInstalled(t v1.Target) *server.ConfigError {
	return &server.ConfigError{Message: fmt.Sprintf(
		"target %s: engine %s needs the %s, but its CustomResourceDefinition %s is not installed in this cluster: "+
			"install the Percona operator (%s) and create the run again, or use engine builtin",
		t.Name, p.Flavor().Engine, p.Flavor().Operator, p.Flavor().CRD, p.Flavor().Docs)}
}

// Provision creates the Secrets and the Percona resource, each controlled by the run, and the
// connection Secret once the Percona operator has published the server's endpoint. It only
// creates: the spec cannot change once the run started, and passwords stay as generated (those
// generated for a Secret that exists already are dropped).
func (p *Engine) Provision(ctx context.Context, run *v1.BenchmarkRun, t v1.Target, peers []specs.Peer) error {
	pw := map[string]string{}
	for _, u := range percona.SystemUsers[p.Flavor().Engine] {
		s, err := server.Password()
		if err != nil {
			return fmt.Errorf("generate the %s password: %w", u, err)
		}
		pw[u] = s
	}
	s, err := server.Password()
	if err != nil {
		return fmt.Errorf("generate the benchmark user's password: %w", err)
	}
	objs, err := percona.Objects(p.Flavor().Engine, run, t, pw, s, peers...)
	if err != nil {
		return &server.ConfigError{Message: err.Error()}
	}
	// Look for the resource first: without the Percona CRD the target fails before anything is
	// created for it.
	current, err := p.get(ctx, run, t)
	if meta.IsNoMatchError(err) {
		return p.notInstalled(t)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("get %s: %w", describe(objs.Server), err)
	}
	missing := apierrors.IsNotFound(err)
	// The Percona operator may add keys of its own to the system users' Secret; the benchmark
	// password's is read by the Percona operator only. Neither is made immutable.
	users, err := ensurePercona(ctx, p, run, t, objs.Users, percona.SystemUsers[p.Flavor().Engine], false)
	if err != nil {
		return err
	}
	bench, err := ensurePercona(ctx, p, run, t, objs.Password, []string{percona.PasswordKey}, false)
	if err != nil {
		return err
	}

	if missing {
		_, err := ensurePercona(ctx, p, run, t, objs.Server, nil, false)
		return err
	}
	if err := owned.Check(run, current, p.Scheme); err != nil {
		return p.ownership(ctx, run, t, current, current, err)
	}
	st := percona.ReadStatus(current)
	if st.State != percona.StateReady || st.Host == "" {
		return nil
	}
	// The Secret sysbench reads, from the published endpoint and the generated passwords: nobody
	// else writes it, so it is immutable and must hold exactly that.
	conn := percona.ConnectionSecret(run, t, st.Host, secretValue(users, "root"), secretValue(bench, percona.PasswordKey))
	conn.Immutable = ptr.To(true)
	_, err = ensurePercona(ctx, p, run, t, conn, nil, true)
	return err
}

// secretValue is a key of a Secret read back (Data) or just created (StringData, as built).
func secretValue(s *corev1.Secret, key string) string {
	if v, ok := s.Data[key]; ok {
		return string(v)
	}
	return s.StringData[key]
}

func (p *Engine) objects() owned.Objects {
	reader := p.Reader
	if reader == nil {
		reader = unstructuredReader{Client: p.Client, Scheme: p.Scheme}
	}
	return owned.Objects{Client: p.Client, Reader: reader, Scheme: p.Scheme}
}

// ensurePercona creates obj controlled by the run unless it exists, and returns what exists. A
// Secret that existed already must hold what the operator writes (server.SecretDiffers): generated keys
// passwords of the operator's shape, the other keys obj's values, and with exact nothing else.
// Its content is read from the API server: the cache keeps no Secret data.
func ensurePercona[T client.Object](ctx context.Context, p *Engine, run *v1.BenchmarkRun, t v1.Target, obj T,
	generatedKeys []string, exact bool) (T, error) {
	existing, created, err := owned.Ensure(ctx, p.objects(), run, obj)
	if err != nil {
		return existing, p.ownership(ctx, run, t, obj, existing, err)
	}
	want, isSecret := any(obj).(*corev1.Secret)
	if _, ok := any(existing).(*corev1.Secret); ok && isSecret && !created {
		got := &corev1.Secret{}
		if err := owned.Read(ctx, p.objects(), run, client.ObjectKeyFromObject(want), got); err != nil {
			return existing, fmt.Errorf("read back %s: %w", describe(want), err)
		}
		existing = any(got).(T)
		if d := server.SecretDiffers(got, want, generatedKeys, exact); d != "" {
			return existing, server.NotTheOperators(describe(got), "which target "+t.Name+"'s server or its sysbench Jobs connect with", d)
		}
	}
	return existing, nil
}

// ownership is what a Percona target does about obj when the object under its name (existing) is
// not the run's, or the API server refused to create it.
func (p *Engine) ownership(ctx context.Context, run *v1.BenchmarkRun, t v1.Target, obj, existing client.Object, err error) error {
	switch {
	case meta.IsNoMatchError(err):
		return p.notInstalled(t)
	case server.IsPermanentAPIError(err):
		// The Percona CRD's own validation refused the object (a target setting such as
		// crVersion or image the installed operator does not accept), or a quota or policy did.
		return &server.ConfigError{Message: fmt.Sprintf("the API server refused %s: %v", describe(obj), server.APIStatus(err))}
	}
	// Only an earlier run's resource is the operator's to unblock: anyone else's resource in
	// deletion waits for its own operator, however long that takes, and keeps its finalizers.
	if u, ok := existing.(*unstructured.Unstructured); ok && owned.AsDeleting(err) != nil &&
		u.GetDeletionTimestamp() != nil && u.GroupVersionKind() == p.Flavor().Kind && owned.OfEarlierRun(run, u) {
		return p.awaitDeletion(ctx, u)
	}
	return provision.Ownership(obj, err)
}

// unstructuredReader reads objects from the API server through the manager's client, which
// caches typed objects only: each is read as unstructured and converted.
type unstructuredReader struct {
	client.Client
	Scheme *runtime.Scheme
}

func (r unstructuredReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return r.Client.Get(ctx, key, obj, opts...)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvkOf(obj, r.Scheme))
	if err := r.Client.Get(ctx, key, u, opts...); err != nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj)
}

// DefaultStuckDeletionGrace is Percona.StuckDeletionGrace's default.
const DefaultStuckDeletionGrace = 2 * time.Minute

// awaitDeletion waits for an earlier run's resource under the name this run needs (its controller
// is a BenchmarkRun of this name that is gone). Its deletion waits for the Percona operator to run
// the finalizers it carries (the delete-PVC one the earlier run asked for); with no Percona
// operator running, nothing ever would, and the name would stay blocked. So after the grace the
// operator removes the percona.com/ finalizers itself and says that the PVCs may be left.
func (p *Engine) awaitDeletion(ctx context.Context, existing *unstructured.Unstructured) error {
	grace := cmp.Or(p.StuckDeletionGrace, DefaultStuckDeletionGrace)
	waited := time.Since(existing.GetDeletionTimestamp().Time)
	var kept, stripped []string
	for _, f := range existing.GetFinalizers() {
		if strings.HasPrefix(f, "percona.com/") {
			stripped = append(stripped, f)
		} else {
			kept = append(kept, f)
		}
	}
	if waited < grace || len(stripped) == 0 {
		return &server.WaitError{After: min(10*time.Second, max(grace-waited, time.Second)), Message: fmt.Sprintf(
			"waiting for %s of an earlier run to be deleted (finalizers %v; the operator removes its Percona ones "+
				"after %s if no Percona operator runs them)", describe(existing), existing.GetFinalizers(), grace)}
	}
	patch := client.MergeFromWithOptions(existing.DeepCopy(), client.MergeFromWithOptimisticLock{})
	existing.SetFinalizers(kept)
	if err := p.Client.Patch(ctx, existing, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizers %v from %s: %w", stripped, describe(existing), err)
	}
	return &server.WaitError{After: time.Second, Message: fmt.Sprintf(
		"%s of an earlier run was stuck in deletion for %s: removed its finalizers %v, which no Percona operator ran; "+
			"its PersistentVolumeClaims may be left (delete them by hand)", describe(existing), waited.Round(time.Second), stripped)}
}

// Release deletes the run's Percona resource of target t, its run being deleted, and waits for it
// to go. The Percona operator's delete-PVC finalizer deletes its PVCs and lets it go; with no
// Percona operator running (uninstalled, or stopped), nothing ever would, so once the resource has
// waited StuckDeletionGrace the percona.com/ finalizers are removed here, and removed says which
// (its PVCs may be left). A resource the run does not control, or a kind the cluster no longer
// has, is left alone.
func (p *Engine) Release(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) ([]string, error) {
	u, err := p.get(ctx, run, t)
	if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get %s %s: %w", p.Flavor().Kind.Kind, percona.ResourceName(run, t.Name), err)
	}
	if !metav1.IsControlledBy(u, run) {
		return nil, nil
	}
	grace := cmp.Or(p.StuckDeletionGrace, DefaultStuckDeletionGrace)
	if u.GetDeletionTimestamp() == nil {
		if err := p.Client.Delete(ctx, u, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("delete %s: %w", describe(u), err)
		}
		return nil, &server.WaitError{After: min(time.Second, grace), Message: fmt.Sprintf("deleting %s", describe(u))}
	}
	waited := time.Since(u.GetDeletionTimestamp().Time)
	var kept, stripped []string
	for _, f := range u.GetFinalizers() {
		if strings.HasPrefix(f, "percona.com/") {
			stripped = append(stripped, f)
		} else {
			kept = append(kept, f)
		}
	}
	if len(stripped) == 0 || waited < grace {
		return nil, &server.WaitError{After: min(10*time.Second, max(grace-waited, time.Second)), Message: fmt.Sprintf(
			"waiting for %s to be deleted (finalizers %v; the operator removes its Percona ones after %s if no Percona "+
				"operator runs them)", describe(u), u.GetFinalizers(), grace)}
	}
	patch := client.MergeFromWithOptions(u.DeepCopy(), client.MergeFromWithOptimisticLock{})
	u.SetFinalizers(kept)
	if err := p.Client.Patch(ctx, u, patch); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("remove finalizers %v from %s: %w", stripped, describe(u), err)
	}
	return stripped, nil
}

func (p *Engine) get(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(p.Flavor().Kind)
	err := p.Client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: percona.ResourceName(run, t.Name)}, u)
	return u, err
}

// Ready reads the Percona resource's status: ready with an endpoint (and the connection Secret
// written), or the operator's state and messages. The error state fails the target with the
// operator's own words; a missing CRD fails it with how to install the operator.
func (p *Engine) Ready(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) (server.State, error) {
	name := percona.ResourceName(run, t.Name)
	what := fmt.Sprintf("%s %s/%s", p.Flavor().Kind.Kind, run.Namespace, name)
	waiting := func(msg string) (server.State, error) {
		s := server.State{Reason: v1.ReasonStarting, Message: msg}
		if !p.watched.Load() {
			s.RecheckAfter = p.pollInterval()
		}
		return s, nil
	}
	u, err := p.get(ctx, run, t)
	switch {
	case meta.IsNoMatchError(err):
		return server.State{Failed: true, Reason: v1.ReasonConfig, Message: p.notInstalled(t).Message}, nil
	case apierrors.IsNotFound(err):
		return waiting("waiting for " + what + " to be created")
	case err != nil:
		return server.State{}, fmt.Errorf("get %s: %w", what, err)
	}
	st := percona.ReadStatus(u)
	details := ""
	if len(st.Messages) > 0 {
		details = ": " + strings.Join(st.Messages, "; ")
	}
	switch {
	case st.State == percona.StateError:
		return server.State{Failed: true, Reason: v1.ReasonOperator, Message: fmt.Sprintf(
			"the Percona operator reports %s in state error%s", what, orNoDetails(details))}, nil
	case st.State == "":
		return waiting(fmt.Sprintf("waiting for the %s to take up %s (is it running and watching namespace %s?)",
			p.Flavor().Operator, what, run.Namespace))
	case st.State != percona.StateReady || st.Stale:
		return waiting(fmt.Sprintf("%s is %s%s", what, st.State, details))
	case st.Host == "":
		return waiting(what + " is ready but has no status.host yet")
	}
	// Provision checked the Secret it wrote; this read may be the first to see it.
	err = owned.Get(ctx, p.objects(), run, client.ObjectKey{Namespace: run.Namespace, Name: specs.ConnectionSecretName(run, t.Name)}, &corev1.Secret{})
	switch {
	case apierrors.IsNotFound(err):
		// Provision writes it on the next pass now that the endpoint is known.
		return waiting(what + " is ready; writing the connection Secret")
	case owned.IsForeign(err):
		return server.State{Failed: true, Reason: v1.ReasonSecret, Message: err.Error()}, nil
	case owned.AsDeleting(err) != nil:
		return waiting(err.Error())
	case err != nil:
		return server.State{}, fmt.Errorf("get connection secret: %w", err)
	}
	return server.State{Ready: true}, nil
}

func orNoDetails(details string) string {
	if details == "" {
		return " (it published no message; see the Percona operator's log)"
	}
	return details
}

func (p *Engine) pollInterval() time.Duration {
	if p.PollInterval > 0 {
		return p.PollInterval
	}
	return DefaultPollInterval
}

// Teardown deletes the Percona resource (its operator deletes the pods, and the PVCs through the
// delete-PVC finalizer the resource was created with) and the three Secrets. Only objects the run controls are deleted; a missing CRD means
// there is nothing to delete.
func (p *Engine) Teardown(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(p.Flavor().Kind)
	objs := []client.Object{u, &corev1.Secret{}, &corev1.Secret{}, &corev1.Secret{}}
	names := []string{
		percona.ResourceName(run, t.Name), specs.ConnectionSecretName(run, t.Name),
		percona.PasswordSecretName(run, t.Name), percona.UsersSecretName(run, t.Name),
	}
	var errs []error
	for i, obj := range objs {
		err := p.Client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: names[i]}, obj)
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("get %s %s: %w", gvkOf(obj, p.Scheme).Kind, names[i], err))
			continue
		}
		if !metav1.IsControlledBy(obj, run) {
			continue
		}
		err = p.Client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s: %w", describe(obj), err))
		}
	}
	return errors.Join(errs...)
}

// gvkOf is an object's kind: from the object (unstructured) or the scheme (typed).
func gvkOf(obj client.Object, scheme *runtime.Scheme) schema.GroupVersionKind {
	if gvk := obj.GetObjectKind().GroupVersionKind(); !gvk.Empty() {
		return gvk
	}
	if scheme != nil {
		if gvks, _, err := scheme.ObjectKinds(obj); err == nil && len(gvks) > 0 {
			return gvks[0]
		}
	}
	return schema.GroupVersionKind{}
}

func describe(obj client.Object) string {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		if _, ok := obj.(*corev1.Secret); ok {
			kind = "Secret"
		}
	}
	return fmt.Sprintf("%s %s/%s", kind, obj.GetNamespace(), obj.GetName())
}
