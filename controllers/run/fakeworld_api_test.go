package run_test

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// stamp is what the API server adds to every object it creates.
func (w *fakeWorld) stamp(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
	w.mu.Lock()
	w.uids++
	uid := types.UID(fmt.Sprintf("uid-%04d", w.uids))
	w.mu.Unlock()
	if obj.GetUID() == "" {
		obj.SetUID(uid)
	}
	if ts := obj.GetCreationTimestamp(); ts.IsZero() {
		obj.SetCreationTimestamp(metav1.NewTime(w.clock.Now().Truncate(time.Second)))
	}
	if obj.GetGeneration() == 0 {
		obj.SetGeneration(1)
	}
	return c.Create(ctx, obj, opts...)
}

// strike returns the armed fault at where that matches obj, counting the hit, or nil.
func (w *fakeWorld) strike(where string, obj client.Object) *fault {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range w.faults {
		if f.where != where || f.times == 0 || (f.match != nil && !f.match(obj)) {
			continue
		}
		if f.times > 0 {
			f.times--
		}
		f.hits++
		return f
	}
	return nil
}

// inject arms a fault; the returned fault counts its hits.
func (w *fakeWorld) inject(f *fault) *fault {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.faults = append(w.faults, f)
	return f
}

func (w *fakeWorld) setStale(run *v1.BenchmarkRun) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stale = run
}

// cacheFiltered are the kinds cachetrim.Options filters by the operator's label.
func cacheFiltered(obj runtime.Object) bool {
	switch obj.(type) {
	case *corev1.Pod, *corev1.Secret, *corev1.ConfigMap, *corev1.Service, *batchv1.Job, *appsv1.StatefulSet, *networkingv1.NetworkPolicy,
		*corev1.PodList, *corev1.SecretList, *corev1.ConfigMapList, *corev1.ServiceList, *batchv1.JobList, *appsv1.StatefulSetList,
		*networkingv1.NetworkPolicyList:
		return true
	}
	return false
}

func ours(obj client.Object) bool { return obj.GetLabels()[specs.LabelManagedBy] == specs.ManagedBy }

func (w *fakeWorld) cacheGet(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if run, ok := obj.(*v1.BenchmarkRun); ok {
		if f := w.strike(onCacheGet, obj); f != nil {
			return f.err
		}
		w.mu.Lock()
		stale := w.stale
		w.mu.Unlock()
		if stale != nil && client.ObjectKeyFromObject(stale) == key {
			stale.DeepCopyInto(run)
			return nil
		}
	}
	if err := c.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if cacheFiltered(obj) && !ours(obj) {
		// The informer never saw it: only a create's AlreadyExists reveals it.
		return apierrors.NewNotFound(w.resource(obj), key.Name)
	}
	if w.isHidden(obj) {
		return apierrors.NewNotFound(w.resource(obj), key.Name)
	}
	return nil
}

// hide keeps the object of kind ("Job") named name out of the cache until show: the API server
// has it, the informer has not seen it yet.
func (w *fakeWorld) hide(kind, name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.hidden == nil {
		w.hidden = map[string]bool{}
	}
	w.hidden[kind+"/"+name] = true
}

// show lets the cache show an object hide kept out of it.
func (w *fakeWorld) show(kind, name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.hidden, kind+"/"+name)
}

func (w *fakeWorld) isHidden(obj client.Object) bool {
	kind := w.kind(obj)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hidden[kind+"/"+obj.GetName()]
}

// onCacheList sets (or with nil clears) what runs before every List through the cache.
func (w *fakeWorld) onCacheList(f func(client.ObjectList)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.beforeList = f
}

func (w *fakeWorld) cacheList(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
	w.mu.Lock()
	before := w.beforeList
	w.mu.Unlock()
	if before != nil {
		before(list)
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return err
	}
	if !cacheFiltered(list) {
		return nil
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	kept := items[:0]
	for _, item := range items {
		if o, ok := item.(client.Object); ok && ours(o) && !w.isHidden(o) {
			kept = append(kept, item)
		}
	}
	return meta.SetList(list, kept)
}

func (w *fakeWorld) operatorCreate(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
	if f := w.strike(onCreate, obj); f != nil {
		return f.err
	}
	if err := c.Create(ctx, obj, opts...); err != nil {
		return err
	}
	w.mu.Lock()
	w.creates[w.kind(obj)+"/"+obj.GetName()]++
	w.mu.Unlock()
	w.wrote("create", obj)
	return nil
}

// wrote logs a write of the reconciler's that succeeded.
func (w *fakeWorld) wrote(verb string, obj client.Object) {
	what := w.kind(obj)
	if obj.GetName() != "" {
		what += "/" + obj.GetName()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, verb+" "+what)
}

// writeLog returns the reconciler's writes so far (a copy).
func (w *fakeWorld) writeLog() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.writes...)
}

func (w *fakeWorld) operatorUpdate(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
	if err := c.Update(ctx, obj, opts...); err != nil {
		return err
	}
	w.wrote("update", obj)
	return nil
}

func (w *fakeWorld) operatorPatch(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if err := c.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	w.wrote("patch", obj)
	return nil
}

func (w *fakeWorld) operatorDelete(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
	if err := c.Delete(ctx, obj, opts...); err != nil {
		return err
	}
	w.wrote("delete", obj)
	return nil
}

// operatorDeleteAllOf is a deletecollection as the API server serves it. The fake client's
// DeleteAllOf ignores the field selector (it would delete the Jobs a "metadata.name!=x" term
// keeps): the objects are selected here by namespace, labels and fields, and deleted one by one.
// Like the API server's, it deletes the selected objects only, not their pods (envtest and the
// fake world run no garbage collector: collectGarbage plays it).
func (w *fakeWorld) operatorDeleteAllOf(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
	o := client.DeleteAllOfOptions{}
	o.ApplyOptions(opts)
	gvk, err := apiutil.GVKForObject(obj, testenv.Scheme)
	if err != nil {
		return err
	}
	gvk.Kind += "List"
	ro, err := testenv.Scheme.New(gvk)
	if err != nil {
		return err
	}
	list := ro.(client.ObjectList)
	listOpts := []client.ListOption{client.InNamespace(o.Namespace)}
	if o.LabelSelector != nil {
		listOpts = append(listOpts, client.MatchingLabelsSelector{Selector: o.LabelSelector})
	}
	if err := c.List(ctx, list, listOpts...); err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	var deleted []string
	for _, item := range items {
		it := item.(client.Object)
		if o.FieldSelector != nil && !o.FieldSelector.Matches(fields.Set{"metadata.name": it.GetName(), "metadata.namespace": it.GetNamespace()}) {
			continue
		}
		if err := c.Delete(ctx, it, &o.DeleteOptions); client.IgnoreNotFound(err) != nil {
			return err
		}
		deleted = append(deleted, it.GetName())
	}
	w.wrote("deletecollection", obj)
	w.mu.Lock()
	w.collections = append(w.collections, deleted)
	w.mu.Unlock()
	return nil
}

func (w *fakeWorld) subResourceUpdate(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if err := c.SubResource(sub).Update(ctx, obj, opts...); err != nil {
		return err
	}
	w.wrote("update "+sub, obj)
	return nil
}

// collectGarbage plays the garbage collector: every pod whose controlling Job is gone is deleted.
func (w *fakeWorld) collectGarbage() {
	w.t.Helper()
	pods := &corev1.PodList{}
	if err := w.api.List(w.ctx, pods, client.InNamespace(fakeNS)); err != nil {
		w.t.Fatal(err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.Kind != "Job" || w.exists(&batchv1.Job{}, ref.Name) {
			continue
		}
		if err := w.api.Delete(w.ctx, p); client.IgnoreNotFound(err) != nil {
			w.t.Fatal(err)
		}
	}
}

func (w *fakeWorld) statusPatch(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if _, ok := obj.(*v1.BenchmarkRun); ok && sub == "status" {
		if f := w.strike(onStatusPatch, obj); f != nil {
			if f.before == nil {
				return f.err
			}
			f.before()
		}
	}
	if err := c.SubResource(sub).Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	w.mu.Lock()
	w.statusWrites++
	w.mu.Unlock()
	w.wrote("patch "+sub, obj)
	return nil
}

func (w *fakeWorld) readerGet(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*v1.BenchmarkRun); ok {
		w.mu.Lock()
		w.runReads++
		w.mu.Unlock()
		if f := w.strike(onReaderGet, obj); f != nil {
			return f.err
		}
	} else {
		obj.SetName(key.Name) // for the fault's match
		if f := w.strike(onObjectRead, obj); f != nil {
			return f.err
		}
	}
	return c.Get(ctx, key, obj, opts...)
}

func (w *fakeWorld) kind(obj runtime.Object) string {
	gvk, err := apiutil.GVKForObject(obj, testenv.Scheme)
	if err != nil {
		w.t.Fatalf("kind of %T: %v", obj, err)
	}
	return gvk.Kind
}

func (w *fakeWorld) resource(obj runtime.Object) schema.GroupResource {
	gvk, err := apiutil.GVKForObject(obj, testenv.Scheme)
	if err != nil {
		w.t.Fatalf("kind of %T: %v", obj, err)
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural.GroupResource()
}
