package helm_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/mysqlbench/mysqlbench-operator/controllers/operator"
)

// helmTemplateFails renders the chart with args, which must fail, and returns helm's output.
func helmTemplateFails(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(toolFromEnv(t, "HELM"), append([]string{"template", "mb", chartDir}, args...)...)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), helmEnv(t)...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Errorf("helm template %s succeeded, want it refused", strings.Join(args, " "))
	}
	return string(out)
}

func subset(sub, of map[string]string) bool {
	for k, v := range sub {
		if of[k] != v {
			return false
		}
	}
	return true
}

// apiServer starts an envtest API server without CRDs (the install under test brings them) and
// returns a client and a system:masters kubeconfig for helm and kubectl.
func apiServer(t *testing.T) (client.Client, string) {
	t.Helper()
	c, kubeconfig, _ := apiServerConfig(t)
	return c, kubeconfig
}

// apiServerConfig is apiServer that also returns the client's rest.Config. The API server runs
// the OwnerReferencesPermissionEnforcement admission plugin besides its defaults, as OpenShift
// does: the manager's RBAC must hold there too.
func apiServerConfig(t *testing.T) (client.Client, string, *rest.Config) {
	t.Helper()
	_, c, kubeconfig, cfg := apiServerEnv(t)
	return c, kubeconfig, cfg
}

// apiServerEnv is apiServerConfig with the environment, for tests that add users.
func apiServerEnv(t *testing.T) (*envtest.Environment, client.Client, string, *rest.Config) {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run make test-helm, which provides kube-apiserver and etcd")
	}
	env := &envtest.Environment{BinaryAssetsDirectory: assets}
	env.ControlPlane.GetAPIServer().Configure().Append("enable-admission-plugins", "OwnerReferencesPermissionEnforcement")
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start envtest from %s: %v", assets, err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop envtest: %v", err)
		}
	})
	user, err := env.AddUser(envtest.User{Name: "helm", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatalf("add user: %v", err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: operator.Scheme})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return env, c, path, cfg
}

// requireStored fails unless every object exists on the server.
func requireStored(ctx context.Context, t *testing.T, c client.Client, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(o.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), got); err != nil {
			t.Errorf("%s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
}

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// waitEstablished waits until the API server serves the CRD.
func waitEstablished(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(crdGVK)
		err := c.Get(ctx, client.ObjectKey{Name: name}, crd)
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, cond := range conds {
				if m, ok := cond.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD %s not established: %v", name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// createSample creates the quick sample BenchmarkRun, proving the installed CRD serves and
// validates it.
func createSample(ctx context.Context, t *testing.T, c client.Client, namespace string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "config", "samples", "mysqlbench_v1alpha1_benchmarkrun.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	run := decodeAll(t, data)[0]
	run.SetNamespace(namespace)
	if err := c.Create(ctx, run); err != nil {
		t.Fatalf("create sample BenchmarkRun: %v", err)
	}
}

func createNamespaces(ctx context.Context, t *testing.T, c client.Client, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil {
			t.Fatalf("namespace %s: %v", n, err)
		}
	}
}

func TestHelmInstall(t *testing.T) {
	helm := toolFromEnv(t, "HELM")
	ctx := context.Background()
	c, kubeconfig := apiServer(t)
	env := append(helmEnv(t), "KUBECONFIG="+kubeconfig)
	createNamespaces(ctx, t, c, "team-a", "team-b")

	// All namespaces, as most users install it.
	out := run(t, env, helm, "install", "mb", chartDir, "--namespace", "mysqlbench-system", "--create-namespace")
	if !bytes.Contains(out, []byte("kubectl label node <database-node> mysqlbench.io/pool=database")) ||
		!bytes.Contains(out, []byte("kubectl taint node <database-node> mysqlbench.io/dedicated=database:NoSchedule")) {
		t.Errorf("helm install NOTES do not say how to prepare the database pool:\n%s", out)
	}
	rendered := helmTemplate(t)
	kinds := map[string]bool{}
	for _, o := range rendered {
		kinds[o.GetKind()] = true
	}
	for _, k := range []string{"Deployment", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Service"} {
		if !kinds[k] {
			t.Errorf("the chart renders no %s", k)
		}
	}
	requireStored(ctx, t, c, rendered)
	// crds/ is installed by helm install itself, not rendered by helm template.
	waitEstablished(ctx, t, c, "benchmarkruns.mysqlbench.io")
	createSample(ctx, t, c, "team-a")

	// A second release limited to two namespaces, next to the first (CRDs already there), with
	// the Grafana dashboard's ConfigMap.
	scoped := []string{"--namespace", "mb-scoped", "--set", "watchNamespaces={team-a,team-b}", "--set", "grafana.dashboard.enabled=true"}
	run(t, env, helm, append([]string{"install", "mb", chartDir, "--create-namespace"}, scoped...)...)
	scopedObjs := decodeAll(t, run(t, helmEnv(t), helm, append([]string{"template", "mb", chartDir}, scoped...)...))
	requireStored(ctx, t, c, scopedObjs)
	if n := len(dashboards(t, scopedObjs)); n != 1 {
		t.Errorf("the scoped release rendered %d dashboard ConfigMaps, want 1", n)
	}

	// Uninstall removes the release's objects but keeps the CRD, and with it the users' runs.
	run(t, env, helm, "uninstall", "mb", "--namespace", "mysqlbench-system", "--wait")
	d := &appsv1.Deployment{}
	err := c.Get(ctx, client.ObjectKey{Namespace: "mysqlbench-system", Name: "mb-mysqlbench-operator"}, d)
	if !apierrors.IsNotFound(err) {
		t.Errorf("Deployment after helm uninstall: %v, want NotFound", err)
	}
	waitEstablished(ctx, t, c, "benchmarkruns.mysqlbench.io")
}

func TestKustomizeApply(t *testing.T) {
	objs := kustomizeBuild(t)
	ctx := context.Background()
	c, _ := apiServer(t)

	// Namespaces and CRDs first, as kubectl apply would order them.
	first := func(o *unstructured.Unstructured) bool {
		return o.GetKind() == "Namespace" || o.GetKind() == "CustomResourceDefinition"
	}
	apply := func(o *unstructured.Unstructured, opts ...client.PatchOption) error {
		o = o.DeepCopy()
		o.SetManagedFields(nil)
		return c.Patch(ctx, o, client.Apply, append(opts, client.FieldOwner("test-kustomize"), client.ForceOwnership)...)
	}
	for _, o := range objs {
		if first(o) {
			if err := apply(o); err != nil {
				t.Fatalf("apply %s %s: %v", o.GetKind(), o.GetName(), err)
			}
			if o.GetKind() == "CustomResourceDefinition" {
				waitEstablished(ctx, t, c, o.GetName())
			}
		}
	}
	// The rest: a server-side dry run of everything, then the real apply.
	for _, dryRun := range []bool{true, false} {
		for _, o := range objs {
			if first(o) {
				continue
			}
			var opts []client.PatchOption
			if dryRun {
				opts = append(opts, client.DryRunAll)
			}
			if err := apply(o, opts...); err != nil {
				t.Fatalf("apply %s %s/%s (dry run %v): %v", o.GetKind(), o.GetNamespace(), o.GetName(), dryRun, err)
			}
		}
	}
	requireStored(ctx, t, c, objs)
	createSample(ctx, t, c, "default")

	sa := only[corev1.ServiceAccount](t, objs, "ServiceAccount")
	if sa.Namespace != "mysqlbench-system" || !strings.HasPrefix(sa.Name, "mysqlbench-") {
		t.Errorf("ServiceAccount %s/%s: want namespace mysqlbench-system and the mysqlbench- prefix", sa.Namespace, sa.Name)
	}
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" && o.GetKind() != "Namespace" && !strings.HasPrefix(o.GetName(), "mysqlbench-") {
			t.Errorf("%s %s lacks the mysqlbench- name prefix", o.GetKind(), o.GetName())
		}
	}
}
