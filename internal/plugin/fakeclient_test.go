package plugin

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"

	client "github.com/mysqlbench/mysqlbench-operator/internal/kubeclient"
	"github.com/mysqlbench/mysqlbench-operator/internal/object"
)

// crClient serves the plugin's client (internal/kubeclient) from a controller-runtime client, so
// that a test can hand the commands controller-runtime's fake client with objects in it.
type crClient struct{ c crclient.WithWatch }

func (f crClient) Get(ctx context.Context, key client.ObjectKey, obj object.Object) error {
	return f.c.Get(ctx, key, obj)
}

// listOptions are opts as controller-runtime's.
func listOptions(opts []client.ListOption) *crclient.ListOptions {
	var o client.ListOptions
	for _, opt := range opts {
		opt.ApplyToList(&o)
	}
	return &crclient.ListOptions{Namespace: o.Namespace, LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector, Raw: o.Raw}
}

func (f crClient) List(ctx context.Context, list object.List, opts ...client.ListOption) error {
	return f.c.List(ctx, list, listOptions(opts))
}

func (f crClient) Watch(ctx context.Context, list object.List, opts ...client.ListOption) (watch.Interface, error) {
	return f.c.Watch(ctx, list, listOptions(opts))
}

func (f crClient) Create(ctx context.Context, obj object.Object, opts ...client.CreateOption) error {
	var o crclient.CreateOptions
	for _, opt := range opts {
		var co metav1.CreateOptions
		opt.ApplyToCreate(&co)
		o.DryRun, o.FieldValidation = append(o.DryRun, co.DryRun...), co.FieldValidation
	}
	return f.c.Create(ctx, obj, &o)
}
