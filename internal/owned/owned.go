// Package owned finds the objects a BenchmarkRun creates under names derived from its own name and
// its targets' names, and lets the operator use one only when the run controls it. Anyone allowed
// to create objects in the namespace can take such a name first (a ConfigMap named like the run's
// reporter would be executed by every sysbench Job, with the database password in its
// environment), and two runs' names can meet ("a" + "b-c" and "a-b" + "c"). So every object found
// under a derived name is checked: the run's own is used, an earlier run's of the same name that
// is on its way out is waited for (GitOps tools delete and re-create runs under one name), and
// anything else stops the target with what to do.
//
// The operator's cache holds only objects with its labels: a planted object without them is
// invisible to a cached Get, and only the create's AlreadyExists reveals it. Ensure then reads the
// object through the API server before it decides.
package owned

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// Recheck is how soon an object that is being deleted is looked at again. Its deletion's events
// do not wake the controller when the cache cannot see the object.
const Recheck = 5 * time.Second

// Objects reads and creates a run's objects.
type Objects struct {
	// Client is the manager's cached client: it creates, and reads the operator's own objects.
	Client client.Client
	// Reader reads from the API server: objects without the operator's labels, and objects
	// the cache has not seen yet. Nil reads through Client.
	Reader client.Reader
	// Scheme gives typed objects their kind, for owner references and messages.
	Scheme *runtime.Scheme
}

func (o Objects) reader() client.Reader {
	if o.Reader != nil {
		return o.Reader
	}
	return o.Client
}

// ForeignError says that an object under a name the run needs exists and is not the run's.
type ForeignError struct {
	// Object is "Kind namespace/name".
	Object string
	// Owner says whose it is: "it has no controller", "its controller is BenchmarkRun x".
	Owner string
}

func (e *ForeignError) Error() string {
	return fmt.Sprintf("%s already exists and does not belong to this run (%s): delete it, "+
		"or rename the run or the target so that the run's objects get other names", e.Object, e.Owner)
}

// DeletingError says that an object under a name the run needs is on its way out: it is being
// deleted, or it belongs to an earlier run of the same name, which the garbage collector removes
// with its objects. The run waits for it and never adopts it.
type DeletingError struct {
	Object string
	// Why it goes: the finalizers that hold it, or the earlier run it belonged to.
	Detail string
	// After is when to look again.
	After time.Duration
}

func (e *DeletingError) Error() string {
	return fmt.Sprintf("waiting for %s of an earlier run to be deleted (%s)", e.Object, e.Detail)
}

// IsForeign says whether err is (or wraps) a *ForeignError.
func IsForeign(err error) bool {
	var fe *ForeignError
	return errors.As(err, &fe)
}

// AsDeleting returns the *DeletingError err is or wraps, or nil.
func AsDeleting(err error) *DeletingError {
	var de *DeletingError
	if errors.As(err, &de) {
		return de
	}
	return nil
}

// Check says whether the run may use obj, found under a name the run needs: nil when the run
// controls it, a *DeletingError for an object that is going away, a *ForeignError for anything
// else.
func Check(run *v1.BenchmarkRun, obj client.Object, scheme *runtime.Scheme) error {
	if metav1.IsControlledBy(obj, run) {
		return nil
	}
	what := Describe(obj, scheme)
	if ts := obj.GetDeletionTimestamp(); ts != nil {
		detail := "deletion requested at " + ts.UTC().Format(time.RFC3339)
		if f := obj.GetFinalizers(); len(f) > 0 {
			detail += fmt.Sprintf(", held by the finalizers %s", strings.Join(f, ", "))
		}
		return &DeletingError{Object: what, Detail: detail, After: Recheck}
	}
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return &ForeignError{Object: what, Owner: "it has no controller"}
	}
	if isRun(ref) && ref.Name == run.Name {
		// Names are unique: a run of this name with another UID no longer exists, and the
		// garbage collector deletes what it controlled.
		return &DeletingError{Object: what, After: Recheck, Detail: fmt.Sprintf(
			"it belonged to BenchmarkRun %s with UID %s, which is gone; the garbage collector deletes it", ref.Name, ref.UID)}
	}
	return &ForeignError{Object: what, Owner: fmt.Sprintf("its controller is %s %s", ref.Kind, ref.Name)}
}

// OfEarlierRun says whether obj's controller is a BenchmarkRun of run's name that is not run: an
// earlier run of the same name, which is gone (names are unique), and whose objects the garbage
// collector deletes. Only such an object is the operator's to help on its way out; an object with
// another controller, or none, is someone else's even under a name the run needs.
func OfEarlierRun(run *v1.BenchmarkRun, obj client.Object) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && isRun(ref) && ref.Name == run.Name && ref.UID != run.UID
}

func isRun(ref *metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == v1.GroupVersion.Group && ref.Kind == "BenchmarkRun"
}

// Get reads the object named key into obj from the cache and checks that the run controls it.
// NotFound means the cache holds no such object; one without the operator's labels may exist
// all the same, and Ensure finds it.
func Get(ctx context.Context, o Objects, run *v1.BenchmarkRun, key client.ObjectKey, obj client.Object) error {
	return get(ctx, o.Client, o.Scheme, run, key, obj)
}

// Read is Get through the API server, for an object whose current content matters more than a
// read's cost.
func Read(ctx context.Context, o Objects, run *v1.BenchmarkRun, key client.ObjectKey, obj client.Object) error {
	return get(ctx, o.reader(), o.Scheme, run, key, obj)
}

func get(ctx context.Context, r client.Reader, scheme *runtime.Scheme, run *v1.BenchmarkRun, key client.ObjectKey, obj client.Object) error {
	if err := r.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return err
		}
		return fmt.Errorf("get %s %s/%s: %w", kindOf(obj, scheme), key.Namespace, key.Name, err)
	}
	return Check(run, obj, scheme)
}

// Ensure makes obj exist, controlled by the run, and returns the object that exists: obj itself
// when Ensure created it (created is true), else what the cache or the API server holds. Nothing
// is updated. The returned error is a *ForeignError or *DeletingError (with the existing object
// returned) when the name is taken, else the create's or read's error, wrapped: callers classify
// it (apierrors and meta.IsNoMatchError see through the wrapping).
func Ensure[T client.Object](ctx context.Context, o Objects, run *v1.BenchmarkRun, obj T) (existing T, created bool, err error) {
	key := client.ObjectKeyFromObject(obj)
	// Called on every reconcile while the run waits: look before creating, so waiting costs
	// cache reads, not API writes.
	existing = empty(obj)
	err = o.Client.Get(ctx, key, existing)
	if err == nil {
		return existing, false, Check(run, existing, o.Scheme)
	}
	what := Describe(obj, o.Scheme)
	if !apierrors.IsNotFound(err) {
		return existing, false, fmt.Errorf("get %s: %w", what, err)
	}
	if err := controllerutil.SetControllerReference(run, obj, o.Scheme); err != nil {
		return existing, false, fmt.Errorf("own %s: %w", what, err)
	}
	err = o.Client.Create(ctx, obj)
	if err == nil {
		return obj, true, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return existing, false, fmt.Errorf("create %s: %w", what, err)
	}
	// The cache had not seen the run's own earlier create yet, or the object is someone
	// else's without the operator's labels, which the cache never holds: only the API server
	// can say which.
	existing = empty(obj)
	if err := o.reader().Get(ctx, key, existing); err != nil {
		if apierrors.IsNotFound(err) {
			// Deleted in between: the next reconcile creates it.
			return existing, false, fmt.Errorf("%s existed at create and was gone when read back", what)
		}
		return existing, false, fmt.Errorf("get %s: %w", what, err)
	}
	return existing, false, Check(run, existing, o.Scheme)
}

// empty is a new object of obj's type (and kind, for unstructured ones) to read into: decoding
// into a filled object would merge the server's maps into the ones already there.
func empty[T client.Object](obj T) T {
	if u, ok := any(obj).(*unstructured.Unstructured); ok {
		n := &unstructured.Unstructured{}
		n.SetGroupVersionKind(u.GroupVersionKind())
		return any(n).(T)
	}
	return reflect.New(reflect.TypeOf(obj).Elem()).Interface().(T)
}

// Describe names an object for a message: "Kind namespace/name".
func Describe(obj client.Object, scheme *runtime.Scheme) string {
	return fmt.Sprintf("%s %s/%s", kindOf(obj, scheme), obj.GetNamespace(), obj.GetName())
}

// kindOf is an object's kind: from its TypeMeta (unstructured objects), else the scheme, else its
// Go type (typed objects read from the API server carry no TypeMeta).
func kindOf(obj client.Object, scheme *runtime.Scheme) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	if scheme != nil {
		if gvks, _, err := scheme.ObjectKinds(obj); err == nil && len(gvks) > 0 {
			return gvks[0].Kind
		}
	}
	t := fmt.Sprintf("%T", obj)
	return t[strings.LastIndex(t, ".")+1:]
}
