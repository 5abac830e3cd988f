// Package kubeclient is the kubectl plugin's API client: get, list, watch and create of the typed
// kinds of one scheme, over client-go's REST client, with the options of controller-runtime's
// client the plugin uses, under the same names.
//
// It exists for the plugin's size. controller-runtime's client package registers every built-in
// API group of client-go in a scheme when it is imported, and with that links every group's types
// and codecs (and the discovery client with its OpenAPI models): most of the plugin's binary. This
// client knows only the kinds of the scheme it is given and needs no discovery: the plugin reads
// a few kinds whose resources are their kinds' plurals, all of them namespaced.
package kubeclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/conversion/queryparams"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/mysqlbench/mysqlbench-operator/internal/object"
)

// Object and ObjectList are the objects and lists the client reads (package object).
type (
	Object     = object.Object
	ObjectList = object.List
)

// ObjectKey names an object: its namespace ("" for a cluster-scoped one) and name.
type ObjectKey = types.NamespacedName

// Client reads and creates objects of its scheme's kinds.
type Client interface {
	// Get reads the object under key into obj, whose type names the kind.
	Get(ctx context.Context, key ObjectKey, obj object.Object) error
	// List reads the objects opts select into list, whose type names the kind ("<Kind>List").
	List(ctx context.Context, list object.List, opts ...ListOption) error
	// Create creates obj (typed, or unstructured with its apiVersion and kind) and reads back
	// what the API server stored, or would store on a dry run, into obj.
	Create(ctx context.Context, obj object.Object, opts ...CreateOption) error
}

// WithWatch is a Client that also watches.
type WithWatch interface {
	Client
	// Watch watches the objects opts select, of the kind list's type names; its events carry
	// typed objects of that kind.
	Watch(ctx context.Context, list object.List, opts ...ListOption) (watch.Interface, error)
}

// ListOptions select the objects of a List or Watch.
type ListOptions struct {
	// Namespace limits the objects to one namespace; "" is all.
	Namespace string
	// LabelSelector and FieldSelector select by labels and fields; nil selects everything.
	LabelSelector labels.Selector
	FieldSelector fields.Selector
	// Raw holds the other list options sent as they are (resourceVersion, ...); its selectors are
	// replaced by those above when they are set.
	Raw *metav1.ListOptions
}

// ListOption sets list options.
type ListOption interface{ ApplyToList(*ListOptions) }

// ApplyToList sets the options o sets.
func (o *ListOptions) ApplyToList(to *ListOptions) {
	if o.Namespace != "" {
		to.Namespace = o.Namespace
	}
	if o.LabelSelector != nil {
		to.LabelSelector = o.LabelSelector
	}
	if o.FieldSelector != nil {
		to.FieldSelector = o.FieldSelector
	}
	if o.Raw != nil {
		to.Raw = o.Raw
	}
}

// InNamespace lists the objects of one namespace.
type InNamespace string

// ApplyToList sets the namespace.
func (n InNamespace) ApplyToList(o *ListOptions) { o.Namespace = string(n) }

// MatchingLabels lists the objects with all these labels.
type MatchingLabels map[string]string

// ApplyToList sets the label selector.
func (m MatchingLabels) ApplyToList(o *ListOptions) {
	o.LabelSelector = labels.SelectorFromValidatedSet(labels.Set(m))
}

// MatchingLabelsSelector lists the objects a label selector selects.
type MatchingLabelsSelector struct{ labels.Selector }

// ApplyToList sets the label selector.
func (m MatchingLabelsSelector) ApplyToList(o *ListOptions) { o.LabelSelector = m.Selector }

// MatchingFields lists the objects whose fields have these values (the fields the API server
// selects by for the kind: metadata.name, involvedObject.uid, ...).
type MatchingFields map[string]string

// ApplyToList sets the field selector.
func (m MatchingFields) ApplyToList(o *ListOptions) {
	o.FieldSelector = fields.SelectorFromSet(fields.Set(m))
}

// CreateOption sets create options.
type CreateOption interface{ ApplyToCreate(*metav1.CreateOptions) }

type dryRunAll struct{}

// ApplyToCreate asks for a dry run of every stage.
func (dryRunAll) ApplyToCreate(o *metav1.CreateOptions) { o.DryRun = []string{metav1.DryRunAll} }

// DryRunAll has the API server check and default the object without storing it.
var DryRunAll CreateOption = dryRunAll{}

// FieldValidation is how the API server treats unknown and duplicate fields: Strict refuses
// them, Warn warns, Ignore drops them.
type FieldValidation string

// ApplyToCreate sets the field validation.
func (f FieldValidation) ApplyToCreate(o *metav1.CreateOptions) { o.FieldValidation = string(f) }

// REST is a Client over one REST client for every group: each request names its path.
type REST struct {
	rest   rest.Interface
	scheme *runtime.Scheme
}

// New is a client of the API server cfg names for the kinds scheme knows.
func New(cfg *rest.Config, scheme *runtime.Scheme) (*REST, error) {
	cfg = rest.CopyConfig(cfg)
	// Typed objects as the scheme decodes them, without conversion: what the server sends in the
	// version asked for (controller-runtime's typed client decodes the same way).
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &REST{rest: rc, scheme: scheme}, nil
}

// kindOf is obj's kind: its own when it is unstructured, else the scheme's for its type.
func (c *REST) kindOf(obj runtime.Object) (schema.GroupVersionKind, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		gvk := u.GroupVersionKind()
		if gvk.Kind == "" || gvk.Version == "" {
			return gvk, fmt.Errorf("object %s has no apiVersion or kind", u.GetName())
		}
		return gvk, nil
	}
	gvks, _, err := c.scheme.ObjectKinds(obj)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	return gvks[0], nil
}

// resourcePath is the path of the kind's resource in namespace ns ("" for all namespaces, or a
// cluster-scoped kind), and of the object name when name is set. The resource is the kind's
// lower-case plural, as it is for every kind the plugin reads.
func resourcePath(gvk schema.GroupVersionKind, ns, name string) string {
	parts := []string{"/apis", gvk.Group, gvk.Version}
	if gvk.Group == "" {
		parts = []string{"/api", gvk.Version}
	}
	if ns != "" {
		parts = append(parts, "namespaces", ns)
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	parts = append(parts, plural.Resource)
	if name != "" {
		parts = append(parts, name)
	}
	return path.Join(parts...)
}

// listKind is the kind of a list's items: the list's kind without "List".
func (c *REST) listKind(list object.List) (schema.GroupVersionKind, error) {
	gvk, err := c.kindOf(list)
	if err != nil {
		return gvk, err
	}
	kind, ok := strings.CutSuffix(gvk.Kind, "List")
	if !ok {
		return gvk, fmt.Errorf("%T is not a list (its kind is %s)", list, gvk.Kind)
	}
	gvk.Kind = kind
	return gvk, nil
}

// noKind is err, or the error of a kind the API server does not serve when err is its NotFound
// without an object's name: the 404 of an unknown resource, which controller-runtime's client
// reports from discovery as "no matches for kind", and which would otherwise read as a missing
// object (a CRD not installed is not a run not found).
func noKind(gvk schema.GroupVersionKind, err error) error {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return err
	}
	if d := status.Status().Details; d != nil && d.Name != "" {
		return err
	}
	return &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
}

func (c *REST) Get(ctx context.Context, key ObjectKey, obj object.Object) error {
	gvk, err := c.kindOf(obj)
	if err != nil {
		return err
	}
	return noKind(gvk, c.rest.Get().AbsPath(resourcePath(gvk, key.Namespace, key.Name)).Do(ctx).Into(obj))
}

// listRequest is the GET of a list or watch with opts, and the kind of the list's items.
func (c *REST) listRequest(list object.List, opts []ListOption, watching bool) (*rest.Request, schema.GroupVersionKind, error) {
	gvk, err := c.listKind(list)
	if err != nil {
		return nil, gvk, err
	}
	var o ListOptions
	for _, opt := range opts {
		opt.ApplyToList(&o)
	}
	raw := metav1.ListOptions{}
	if o.Raw != nil {
		raw = *o.Raw
	}
	if o.LabelSelector != nil {
		raw.LabelSelector = o.LabelSelector.String()
	}
	if o.FieldSelector != nil {
		raw.FieldSelector = o.FieldSelector.String()
	}
	raw.Watch = watching
	params, err := queryparams.Convert(&raw)
	if err != nil {
		return nil, gvk, fmt.Errorf("list options: %w", err)
	}
	req := c.rest.Get().AbsPath(resourcePath(gvk, o.Namespace, ""))
	for k, vs := range params {
		for _, v := range vs {
			req = req.Param(k, v)
		}
	}
	return req, gvk, nil
}

func (c *REST) List(ctx context.Context, list object.List, opts ...ListOption) error {
	req, gvk, err := c.listRequest(list, opts, false)
	if err != nil {
		return err
	}
	return noKind(gvk, req.Do(ctx).Into(list))
}

func (c *REST) Watch(ctx context.Context, list object.List, opts ...ListOption) (watch.Interface, error) {
	req, gvk, err := c.listRequest(list, opts, true)
	if err != nil {
		return nil, err
	}
	w, err := req.Watch(ctx)
	return w, noKind(gvk, err)
}

func (c *REST) Create(ctx context.Context, obj object.Object, opts ...CreateOption) error {
	gvk, err := c.kindOf(obj)
	if err != nil {
		return err
	}
	var o metav1.CreateOptions
	for _, opt := range opts {
		opt.ApplyToCreate(&o)
	}
	// The body names its apiVersion and kind, which typed objects leave out once decoded.
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	body, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encode %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	req := c.rest.Post().AbsPath(resourcePath(gvk, obj.GetNamespace(), "")).
		SetHeader("Content-Type", "application/json").Body(body)
	for _, dr := range o.DryRun {
		req = req.Param("dryRun", dr)
	}
	if o.FieldValidation != "" {
		req = req.Param("fieldValidation", o.FieldValidation)
	}
	res := req.Do(ctx)
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return noKind(gvk, res.Into(obj))
	}
	// Error, not Raw, decodes the API server's Status (the refusal's reason and message).
	if err := res.Error(); err != nil {
		return noKind(gvk, err)
	}
	// As stored, with its apiVersion and kind (the typed decoder would drop them).
	raw, err := res.Raw()
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, &u.Object)
}

// PodLogs streams a container's log (pods/log), following it when follow is set.
func (c *REST) PodLogs(ctx context.Context, namespace, pod, container string, follow bool) (io.ReadCloser, error) {
	req := c.rest.Get().AbsPath("/api/v1", "namespaces", namespace, "pods", pod, "log")
	if container != "" {
		req = req.Param("container", container)
	}
	if follow {
		req = req.Param("follow", "true")
	}
	return req.Stream(ctx)
}
