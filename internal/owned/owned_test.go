package owned

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

const (
	ns         = "bench"
	managedBy  = "app.kubernetes.io/managed-by"
	operator   = "mysqlbench-operator"
	reporterCM = "nightly-sysbench-reporter"
)

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := v1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func run(name string, uid types.UID) *v1.BenchmarkRun {
	return &v1.BenchmarkRun{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1.GroupVersion.String(), Kind: "BenchmarkRun"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: uid},
	}
}

func controllerRef(r *v1.BenchmarkRun) metav1.OwnerReference {
	return *metav1.NewControllerRef(r, v1.GroupVersion.WithKind("BenchmarkRun"))
}

// configMap is the object the run wants: the operator's labels and data.
func configMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: reporterCM, Namespace: ns, Labels: map[string]string{managedBy: operator}},
		Data:       map[string]string{"reporter.lua": "-- the operator's"},
	}
}

func TestCheck(t *testing.T) {
	s := testScheme(t)
	mine := run("nightly", "uid-1")
	earlier := run("nightly", "uid-0")
	other := run("weekly", "uid-2")
	deleted := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	cases := []struct {
		name string
		meta metav1.ObjectMeta
		// want: "" for nil, else "foreign" or "deleting", and substrings of the message.
		want     string
		contains []string
	}{
		{name: "the run's own", meta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{controllerRef(mine)}}},
		{name: "the run's own, being deleted", meta: metav1.ObjectMeta{DeletionTimestamp: &deleted, Finalizers: []string{"x"},
			OwnerReferences: []metav1.OwnerReference{controllerRef(mine)}}},
		{name: "planted without owner", want: "foreign",
			contains: []string{"ConfigMap bench/" + reporterCM + " already exists and does not belong to this run", "it has no controller", "delete it"}},
		{name: "another run's", meta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{controllerRef(other)}}, want: "foreign",
			contains: []string{"its controller is BenchmarkRun weekly", "rename the run or the target"}},
		{name: "owned but not controlled by the run", want: "foreign", meta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{
			{APIVersion: v1.GroupVersion.String(), Kind: "BenchmarkRun", Name: "nightly", UID: "uid-1"}}}},
		{name: "controlled by another kind of the run's name", want: "foreign", meta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "apps/v1", Kind: "Deployment", Name: "nightly", UID: "uid-9", Controller: ptr.To(true)}}},
			contains: []string{"its controller is Deployment nightly"}},
		{name: "an earlier run's of the same name", meta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{controllerRef(earlier)}},
			want: "deleting", contains: []string{"waiting for ConfigMap bench/" + reporterCM + " of an earlier run to be deleted", "uid-0", "garbage collector"}},
		{name: "foreign and being deleted", meta: metav1.ObjectMeta{DeletionTimestamp: &deleted, Finalizers: []string{"example.com/hold"}},
			want: "deleting", contains: []string{"2026-01-02T03:04:05Z", "example.com/hold"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cm := configMap()
			tc.meta.Name, tc.meta.Namespace = cm.Name, cm.Namespace
			cm.ObjectMeta = tc.meta
			err := Check(mine, cm, s)
			switch tc.want {
			case "":
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			case "foreign":
				if !IsForeign(err) {
					t.Fatalf("Check = %v, want a *ForeignError", err)
				}
			case "deleting":
				de := AsDeleting(err)
				if de == nil || de.After <= 0 {
					t.Fatalf("Check = %v, want a *DeletingError with a recheck", err)
				}
			}
			for _, c := range tc.contains {
				if !strings.Contains(err.Error(), c) {
					t.Errorf("message %q lacks %q", err, c)
				}
			}
		})
	}
}

// api is the API server of a test: a fake client, counting creates. cache is the manager's view
// of it: only objects with the operator's label, and (when stale) none at all.
type api struct {
	client.WithWatch
	creates atomic.Int32
}

func newAPI(s *runtime.Scheme, create func(client.Object) error, objs ...client.Object) *api {
	a := &api{}
	a.WithWatch = fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			a.creates.Add(1)
			if create != nil {
				if err := create(obj); err != nil {
					return err
				}
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	return a
}

func cacheOf(a *api, stale bool) client.Client {
	return interceptor.NewClient(a.WithWatch, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, key.Name)
			if stale {
				return notFound
			}
			if err := c.Get(ctx, key, obj, opts...); err != nil {
				return err
			}
			if obj.GetLabels()[managedBy] != operator {
				return notFound
			}
			return nil
		},
	})
}

func TestEnsure(t *testing.T) {
	s := testScheme(t)
	mine := run("nightly", "uid-1")
	deleted := metav1.Now()
	planted := func(edit func(*corev1.ConfigMap)) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: reporterCM, Namespace: ns},
			Data: map[string]string{"reporter.lua": "os.execute('steal')", "extra.lua": "--"}}
		if edit != nil {
			edit(cm)
		}
		return cm
	}
	cases := []struct {
		name     string
		existing *corev1.ConfigMap
		stale    bool
		create   func(client.Object) error
		// want: "created", "existing", "foreign", "deleting", or "error".
		want    string
		creates int32
		check   func(t *testing.T, err error)
	}{
		{name: "missing: created, controlled by the run", want: "created", creates: 1},
		{name: "the run's own, cached: no create", want: "existing", creates: 0,
			existing: planted(func(cm *corev1.ConfigMap) {
				cm.Labels = map[string]string{managedBy: operator}
				cm.OwnerReferences = []metav1.OwnerReference{controllerRef(mine)}
			})},
		{name: "the run's own, not cached yet: confirmed through the API server", want: "existing", creates: 1, stale: true,
			existing: planted(func(cm *corev1.ConfigMap) {
				cm.Labels = map[string]string{managedBy: operator}
				cm.OwnerReferences = []metav1.OwnerReference{controllerRef(mine)}
			})},
		{name: "planted without labels: invisible to the cache, foreign", want: "foreign", creates: 1, existing: planted(nil)},
		{name: "planted with the operator's labels: foreign without a create", want: "foreign", creates: 0,
			existing: planted(func(cm *corev1.ConfigMap) { cm.Labels = map[string]string{managedBy: operator} })},
		{name: "an earlier run's of the same name: waited for", want: "deleting", creates: 1,
			existing: planted(func(cm *corev1.ConfigMap) {
				cm.OwnerReferences = []metav1.OwnerReference{controllerRef(run("nightly", "uid-0"))}
			})},
		{name: "being deleted: waited for", want: "deleting", creates: 1,
			existing: planted(func(cm *corev1.ConfigMap) {
				cm.Finalizers = []string{"example.com/hold"}
				cm.DeletionTimestamp = &deleted
			})},
		{name: "refused by the API server: its error, classifiable", want: "error", creates: 1,
			create: func(obj client.Object) error {
				return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, obj.GetName(), errString("exceeded quota"))
			},
			check: func(t *testing.T, err error) {
				if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "create ConfigMap bench/"+reporterCM) {
					t.Errorf("error %v: want a wrapped Forbidden naming the object", err)
				}
			}},
		{name: "gone when read back: a plain error, retried", want: "error", creates: 1, stale: true,
			create: func(obj client.Object) error {
				return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, obj.GetName())
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var objs []client.Object
			if tc.existing != nil {
				objs = append(objs, tc.existing)
			}
			a := newAPI(s, tc.create, objs...)
			var before corev1.ConfigMap
			if tc.existing != nil {
				if err := a.Get(context.Background(), client.ObjectKeyFromObject(tc.existing), &before); err != nil {
					t.Fatal(err)
				}
			}
			o := Objects{Client: cacheOf(a, tc.stale), Reader: a, Scheme: s}
			want := configMap()
			got, created, err := Ensure(context.Background(), o, mine, want)
			if n := a.creates.Load(); n != tc.creates {
				t.Errorf("%d creates, want %d", n, tc.creates)
			}
			switch tc.want {
			case "created", "existing":
				if err != nil || created != (tc.want == "created") {
					t.Fatalf("Ensure = created %v, %v; want %s", created, err, tc.want)
				}
				if !metav1.IsControlledBy(got, mine) {
					t.Errorf("returned object is not controlled by the run: %v", got.OwnerReferences)
				}
				if tc.want == "existing" && got.Data["reporter.lua"] != tc.existing.Data["reporter.lua"] {
					t.Errorf("returned data %v, want the existing object's", got.Data)
				}
			case "foreign", "deleting":
				if tc.want == "foreign" && !IsForeign(err) || tc.want == "deleting" && AsDeleting(err) == nil {
					t.Fatalf("Ensure = %v, want %s", err, tc.want)
				}
				// What is returned is the object as the API server holds it, not merged with
				// the run's wanted data.
				if got.Name != reporterCM || got.Data["reporter.lua"] != tc.existing.Data["reporter.lua"] || len(got.Data) != 2 {
					t.Errorf("returned %s %v, want the existing object", got.Name, got.Data)
				}
			case "error":
				if err == nil || IsForeign(err) || AsDeleting(err) != nil || created {
					t.Fatalf("Ensure = created %v, %v; want a plain error", created, err)
				}
				if tc.check != nil {
					tc.check(t, err)
				}
			}
			if tc.existing == nil {
				return
			}
			// Whatever was there is left exactly as it was.
			var after corev1.ConfigMap
			if err := a.Get(context.Background(), client.ObjectKeyFromObject(tc.existing), &after); err != nil {
				t.Fatal(err)
			}
			if after.ResourceVersion != before.ResourceVersion {
				t.Errorf("the existing object was written: resourceVersion %s -> %s", before.ResourceVersion, after.ResourceVersion)
			}
		})
	}
}

// Unstructured objects (the Percona resources) keep their kind through the read back, and the
// messages name it.
func TestEnsureUnstructured(t *testing.T) {
	s := testScheme(t)
	mine := run("nightly", "uid-1")
	a := newAPI(s, nil, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: reporterCM, Namespace: ns}})
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	u.SetNamespace(ns)
	u.SetName(reporterCM)
	got, _, err := Ensure(context.Background(), Objects{Client: cacheOf(a, true), Reader: a, Scheme: s}, mine, u)
	if !IsForeign(err) || !strings.HasPrefix(err.Error(), "ConfigMap bench/"+reporterCM+" already exists") {
		t.Fatalf("Ensure = %v, want a foreign ConfigMap", err)
	}
	if got.GetKind() != "ConfigMap" || got.GetResourceVersion() == "" {
		t.Errorf("returned %v, want the existing ConfigMap", got.Object)
	}
}

// Get and Read check control; NotFound passes through unwrapped.
func TestGetAndRead(t *testing.T) {
	s := testScheme(t)
	mine := run("nightly", "uid-1")
	a := newAPI(s, nil, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: reporterCM, Namespace: ns}})
	o := Objects{Client: cacheOf(a, false), Reader: a, Scheme: s}
	key := client.ObjectKey{Namespace: ns, Name: reporterCM}
	if err := Get(context.Background(), o, mine, key, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("cached Get of an unlabelled object = %v, want NotFound", err)
	}
	if err := Read(context.Background(), o, mine, key, &corev1.ConfigMap{}); !IsForeign(err) {
		t.Errorf("Read = %v, want foreign", err)
	}
	if err := Read(context.Background(), o, mine, client.ObjectKey{Namespace: ns, Name: "nothing"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("Read of a missing object = %v, want NotFound", err)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// OfEarlierRun: only an object whose controller is a BenchmarkRun of the run's own name with
// another UID (an earlier run of that name, gone) is an earlier run's; a controller of another
// kind, group or name, a plain owner reference, no owner, or the run itself is not.
func TestOfEarlierRun(t *testing.T) {
	self := run("nightly", "uid-now")
	earlier := run("nightly", "uid-before")
	other := run("weekly", "uid-other")
	notController := controllerRef(earlier)
	notController.Controller = nil
	otherGroup := controllerRef(earlier)
	otherGroup.APIVersion = "example.com/v1"
	deployment := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "nightly", UID: "uid-d", Controller: ptr.To(true)}
	for _, tc := range []struct {
		name string
		refs []metav1.OwnerReference
		want bool
	}{
		{"an earlier run of the name", []metav1.OwnerReference{controllerRef(earlier)}, true},
		{"the run itself", []metav1.OwnerReference{controllerRef(self)}, false},
		{"no owner", nil, false},
		{"a run of another name", []metav1.OwnerReference{controllerRef(other)}, false},
		{"an owner that is not the controller", []metav1.OwnerReference{notController}, false},
		{"a BenchmarkRun of another group", []metav1.OwnerReference{otherGroup}, false},
		{"a Deployment of the name", []metav1.OwnerReference{deployment}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := configMap()
			obj.OwnerReferences = tc.refs
			if got := OfEarlierRun(self, obj); got != tc.want {
				t.Errorf("OfEarlierRun = %v, want %v", got, tc.want)
			}
		})
	}
}
