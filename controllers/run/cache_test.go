package run_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mysqlbench/mysqlbench-operator/internal/cachetrim"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// Anyone who may create Secrets in a watched namespace can label them as the operator's. The
// manager's cache holds such a Secret's metadata only: not its data (up to 1 MiB) nor its
// annotations (kubectl apply keeps a copy of the data there), so a tenant's Secrets cost the
// manager a few hundred bytes each. Unlabelled Secrets are not cached at all.
func TestCacheKeepsNoSecretData(t *testing.T) {
	ns := newNamespace(t)
	opts := cachetrim.Options(cacheFor(ns))
	opts.Scheme = testenv.Scheme
	c, err := cache.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = c.Start(ctx) }()

	big := map[string][]byte{"password": []byte(strings.Repeat("p", 512<<10))}
	labelled := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "labelled", Namespace: ns, Labels: map[string]string{specs.LabelManagedBy: specs.ManagedBy},
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("a", 200<<10)}},
		Data: big,
	}
	plain := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: ns}, Data: big}
	for _, s := range []*corev1.Secret{labelled, plain} {
		if err := k8s.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	got := &corev1.Secret{}
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := c.Get(ctx, client.ObjectKeyFromObject(labelled), got)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the labelled Secret never reached the cache: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got.Data != nil || got.StringData != nil || got.Annotations != nil || got.ManagedFields != nil {
		t.Errorf("the cache holds the labelled Secret with %d data keys, %d annotations, %d managedFields entries; want its metadata only",
			len(got.Data), len(got.Annotations), len(got.ManagedFields))
	}
	if got.Labels[specs.LabelManagedBy] != specs.ManagedBy || got.UID != labelled.UID || got.Type != corev1.SecretTypeOpaque {
		t.Errorf("the cached Secret lost its identity: labels %v, uid %q, type %q", got.Labels, got.UID, got.Type)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(plain), &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("the unlabelled Secret in the cache: %v", err)
	}
}

// The same through the manager's real cache: a tenant's labelled ConfigMap, Service and
// NetworkPolicy are cached with the metadata the operator reads only (their labels cut to the
// operator's, no annotations, no data or spec).
func TestCacheKeepsOnlyWhatTheOperatorReads(t *testing.T) {
	ns := newNamespace(t)
	opts := cachetrim.Options(cacheFor(ns))
	opts.Scheme = testenv.Scheme
	c, err := cache.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = c.Start(ctx) }()
	labels := map[string]string{specs.LabelManagedBy: specs.ManagedBy, specs.LabelRun: "r"}
	for i := 0; i < 200; i++ {
		labels[fmt.Sprintf("example.com/k%03d", i)] = strings.Repeat("v", 63)
	}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels,
			Annotations: map[string]string{"example.com/blob": strings.Repeat("a", 200<<10)}}
	}
	objs := []client.Object{
		&corev1.ConfigMap{ObjectMeta: meta("cm"), Data: map[string]string{"k": strings.Repeat("c", 200<<10)}},
		&corev1.Service{ObjectMeta: meta("svc"), Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 3306}}}},
		&networkingv1.NetworkPolicy{ObjectMeta: meta("np")},
	}
	for _, o := range objs {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range objs {
		got := o.DeepCopyObject().(client.Object)
		deadline := time.Now().Add(20 * time.Second)
		for c.Get(ctx, client.ObjectKeyFromObject(o), got) != nil {
			if time.Now().After(deadline) {
				t.Fatalf("%s never reached the cache", o.GetName())
			}
			time.Sleep(50 * time.Millisecond)
		}
		if len(got.GetLabels()) != 2 || got.GetLabels()[specs.LabelRun] != "r" || got.GetAnnotations() != nil || got.GetUID() != o.GetUID() {
			t.Errorf("%s cached with %d labels and %d annotations, want the operator's 2 labels and none", o.GetName(),
				len(got.GetLabels()), len(got.GetAnnotations()))
		}
		switch g := got.(type) {
		case *corev1.ConfigMap:
			if g.Data != nil {
				t.Errorf("the ConfigMap's data is cached")
			}
		case *corev1.Service:
			if len(g.Spec.Ports) != 0 {
				t.Errorf("the Service's spec is cached")
			}
		}
	}
}
