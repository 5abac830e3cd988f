// Package helm_test checks the two install paths, the Helm chart (charts/mysqlbench-operator) and
// kustomize (config/default): what they render (RBAC identical to the generated role, a hardened
// manager Deployment, a ServiceMonitor that finds the metrics Service, the opt-in Grafana dashboard
// ConfigMap) and that a real API server accepts and stores every object they create (helm install,
// and server-side apply of the kustomize build).
//
// helm and kustomize come from $HELM and $KUSTOMIZE (make test and make test-helm set both); the
// API server from $KUBEBUILDER_ASSETS. Without $HELM the tests skip, except in CI (CI=true),
// where they must run.
package helm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/mysqlbench/mysqlbench-operator/controllers/operator"
)

const (
	chartDir = "charts/mysqlbench-operator"
	testImg  = "registry.example/mysqlbench-operator:test"
)

// repoRoot is the repository root: this package lives in test/helm.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// toolFromEnv returns the path in $name, skipping the test when it is unset outside CI.
func toolFromEnv(t *testing.T, name string) string {
	t.Helper()
	p := os.Getenv(name)
	if p == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("$%s is not set, and CI must run the install tests: run them with make test or make test-helm", name)
		}
		t.Skipf("$%s is not set: run make test-helm (or make test) to check the chart and the kustomize build", name)
	}
	return p
}

// run runs a command in the repository root and returns its stdout.
func run(t *testing.T, env []string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

// helmEnv keeps helm's cache, config and data out of $HOME.
func helmEnv(t *testing.T) []string {
	dir := t.TempDir()
	return []string{
		"HELM_CACHE_HOME=" + filepath.Join(dir, "cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"HELM_DATA_HOME=" + filepath.Join(dir, "data"),
	}
}

// helmTemplate renders the chart as release "mb" in namespace "mysqlbench-system".
func helmTemplate(t *testing.T, args ...string) []*unstructured.Unstructured {
	t.Helper()
	helm := toolFromEnv(t, "HELM")
	base := []string{"template", "mb", chartDir, "--namespace", "mysqlbench-system"}
	return decodeAll(t, run(t, helmEnv(t), helm, append(base, args...)...))
}

// kustomizeBuild is what make deploy applies: config/default with the manager image set to testImg.
func kustomizeBuild(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	kustomize := toolFromEnv(t, "KUSTOMIZE")
	return decodeAll(t, run(t, []string{"KUSTOMIZE=" + kustomize, "IMG=" + testImg}, "hack/kustomize-build.sh"))
}

func decodeAll(t *testing.T, manifests []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifests), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode rendered manifests: %v", err)
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	if len(objs) == 0 {
		t.Fatal("nothing rendered")
	}
	return objs
}

// only returns the one object of a kind, converted to T.
func only[T any](t *testing.T, objs []*unstructured.Unstructured, kind string) *T {
	t.Helper()
	all := ofKind[T](t, objs, kind)
	if len(all) != 1 {
		t.Fatalf("rendered %d %s objects, want 1", len(all), kind)
	}
	return all[0]
}

func ofKind[T any](t *testing.T, objs []*unstructured.Unstructured, kind string) []*T {
	t.Helper()
	var out []*T
	for _, o := range objs {
		if o.GetKind() != kind {
			continue
		}
		v := new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, v); err != nil {
			t.Fatalf("%s %s: %v", kind, o.GetName(), err)
		}
		out = append(out, v)
	}
	return out
}

// configRules are the rules of the one Role or ClusterRole in config/rbac/<file>.
func configRules(t *testing.T, file string) []rbacv1.PolicyRule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "config", "rbac", file))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole // a Role's fields are the same
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		t.Fatalf("config/rbac/%s: %v", file, err)
	}
	if len(role.Rules) == 0 {
		t.Fatalf("config/rbac/%s has no rules", file)
	}
	return role.Rules
}

// The chart's and kustomize's roles, by the config/rbac file their rules come from.
var (
	helmRoles = map[string]string{ // name suffix of the chart's ClusterRoles (<ns>-<release>-...) and Role
		"ClusterRole/-manager":         "role.yaml",
		"ClusterRole/-manager-cluster": "manager_cluster_role.yaml",
		"ClusterRole/-metrics-auth":    "metrics_auth_role.yaml",
		"ClusterRole/-metrics-reader":  "metrics_reader_role.yaml",
		"Role/-leader-election":        "leader_election_role.yaml",
		"ClusterRole/-kubelet-stats":   "kubelet_stats_role.yaml",    // with serverStats.kubeletCPU
		"Role/-results-database":       "results_database_role.yaml", // with resultsDatabase.secretName
	}
	kustomizeRoles = map[string]string{ // full names (namePrefix mysqlbench-)
		"ClusterRole/mysqlbench-manager-role":         "role.yaml",
		"ClusterRole/mysqlbench-manager-cluster-role": "manager_cluster_role.yaml",
		"ClusterRole/mysqlbench-metrics-auth-role":    "metrics_auth_role.yaml",
		"ClusterRole/mysqlbench-metrics-reader":       "metrics_reader_role.yaml",
		"Role/mysqlbench-leader-election-role":        "leader_election_role.yaml",
	}
)

// roles returns the rendered Roles and ClusterRoles by "Kind/name".
func roles(t *testing.T, objs []*unstructured.Unstructured) map[string][]rbacv1.PolicyRule {
	t.Helper()
	out := map[string][]rbacv1.PolicyRule{}
	for _, r := range ofKind[rbacv1.ClusterRole](t, objs, "ClusterRole") {
		out["ClusterRole/"+r.Name] = r.Rules
	}
	for _, r := range ofKind[rbacv1.Role](t, objs, "Role") {
		out["Role/"+r.Name] = r.Rules
	}
	return out
}

// role finds the rendered role whose "Kind/name" ends with suffix (after the release's prefix).
func role(t *testing.T, objs []*unstructured.Unstructured, kind, suffix string) string {
	t.Helper()
	var found []string
	for key := range roles(t, objs) {
		k, name, _ := strings.Cut(key, "/")
		if k == kind && strings.HasSuffix(name, "mysqlbench-operator"+suffix) {
			found = append(found, name)
		}
	}
	if len(found) != 1 {
		t.Fatalf("rendered %s objects %v named *%s, want one", kind, found, suffix)
	}
	return found[0]
}

// Every role of both install paths is a file of config/rbac, rule for rule (role.yaml is
// controller-gen's; controllers/run/rbac_test.go checks them all against the manager's calls),
// and there is no other.
func TestRolesAreConfigRBAC(t *testing.T) {
	for name, tc := range map[string]struct {
		render func(*testing.T) []*unstructured.Unstructured
		want   map[string]string
		suffix bool
	}{
		"helm": {func(t *testing.T) []*unstructured.Unstructured {
			return helmTemplate(t, "--set", "serverStats.kubeletCPU=true", "--set", "resultsDatabase.secretName=results-db")
		}, helmRoles, true},
		"kustomize": {kustomizeBuild, kustomizeRoles, false},
	} {
		t.Run(name, func(t *testing.T) {
			got := roles(t, tc.render(t))
			if len(got) != len(tc.want) {
				t.Errorf("rendered roles %v, want %d: %v", slices.Sorted(maps.Keys(got)), len(tc.want), slices.Sorted(maps.Keys(tc.want)))
			}
			for key, rules := range got {
				file := tc.want[key]
				if tc.suffix {
					for k, f := range tc.want {
						kind, suffix, _ := strings.Cut(k, "/")
						if strings.HasPrefix(key, kind+"/") && strings.HasSuffix(key, "mysqlbench-operator"+suffix) {
							file = f
						}
					}
				}
				if file == "" {
					t.Errorf("%s is not one of config/rbac's roles", key)
					continue
				}
				if want := configRules(t, file); !reflect.DeepEqual(rules, want) {
					t.Errorf("%s rules differ from config/rbac/%s (run make helm-crds):\ngot  %+v\nwant %+v", key, file, rules, want)
				}
			}
		})
	}
	t.Run("helm without kubelet CPU (the default)", func(t *testing.T) {
		objs := helmTemplate(t)
		for key := range roles(t, objs) {
			if strings.Contains(key, "kubelet") {
				t.Errorf("%s rendered although serverStats.kubeletCPU is false", key)
			}
		}
		d := only[appsv1.Deployment](t, objs, "Deployment")
		for _, a := range d.Spec.Template.Spec.Containers[0].Args {
			if strings.HasPrefix(a, "--kubelet-cpu-interval") {
				t.Errorf("the manager gets %s although serverStats.kubeletCPU is false", a)
			}
		}
	})
	t.Run("helm without secure metrics", func(t *testing.T) {
		for key := range roles(t, helmTemplate(t, "--set", "metrics.secure=false")) {
			if strings.Contains(key, "metrics") {
				t.Errorf("%s rendered although metrics.secure is false", key)
			}
		}
	})
}

// clusterBindings returns the ClusterRoleBindings by the ClusterRole they bind.
func clusterBindings(t *testing.T, objs []*unstructured.Unstructured) map[string]*rbacv1.ClusterRoleBinding {
	t.Helper()
	out := map[string]*rbacv1.ClusterRoleBinding{}
	for _, b := range ofKind[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding") {
		if _, dup := out[b.RoleRef.Name]; dup {
			t.Errorf("two ClusterRoleBindings of %s", b.RoleRef.Name)
		}
		out[b.RoleRef.Name] = b
	}
	return out
}

func TestChartBindsManagerRole(t *testing.T) {
	t.Run("all namespaces: ClusterRoleBindings only", func(t *testing.T) {
		objs := helmTemplate(t)
		sa := only[corev1.ServiceAccount](t, objs, "ServiceAccount")
		crbs := clusterBindings(t, objs)
		for _, suffix := range []string{"-manager", "-manager-cluster", "-metrics-auth"} {
			name := role(t, objs, "ClusterRole", suffix)
			crb, ok := crbs[name]
			if !ok {
				t.Errorf("ClusterRole %s is not bound cluster-wide", name)
				continue
			}
			checkBinding(t, crb.RoleRef, crb.Subjects, "ClusterRole", name, sa)
		}
		if len(crbs) != 3 {
			t.Errorf("%d ClusterRoleBindings, want the manager's three (no metrics.readers)", len(crbs))
		}
		for _, rb := range ofKind[rbacv1.RoleBinding](t, objs, "RoleBinding") {
			if rb.RoleRef.Kind == "ClusterRole" {
				t.Errorf("RoleBinding %s/%s binds ClusterRole %s although every namespace is watched", rb.Namespace, rb.Name, rb.RoleRef.Name)
			}
		}
	})
	t.Run("watchNamespaces: the manager role by a RoleBinding in each, the cluster-scoped ones cluster-wide", func(t *testing.T) {
		objs := helmTemplate(t, "--set", "watchNamespaces={team-a,team-b}")
		manager := role(t, objs, "ClusterRole", "-manager")
		sa := only[corev1.ServiceAccount](t, objs, "ServiceAccount")
		crbs := clusterBindings(t, objs)
		if _, ok := crbs[manager]; ok {
			t.Errorf("ClusterRole %s bound cluster-wide with watchNamespaces set", manager)
		}
		// Nodes, TokenReviews and SubjectAccessReviews are cluster-scoped: a RoleBinding would
		// grant nothing on them.
		for _, suffix := range []string{"-manager-cluster", "-metrics-auth"} {
			name := role(t, objs, "ClusterRole", suffix)
			if crb, ok := crbs[name]; !ok {
				t.Errorf("ClusterRole %s is not bound cluster-wide with watchNamespaces set", name)
			} else {
				checkBinding(t, crb.RoleRef, crb.Subjects, "ClusterRole", name, sa)
			}
		}
		bound := map[string]bool{}
		for _, rb := range ofKind[rbacv1.RoleBinding](t, objs, "RoleBinding") {
			if rb.RoleRef.Kind == "ClusterRole" {
				checkBinding(t, rb.RoleRef, rb.Subjects, "ClusterRole", manager, sa)
				bound[rb.Namespace] = true
			}
		}
		if !reflect.DeepEqual(bound, map[string]bool{"team-a": true, "team-b": true}) {
			t.Errorf("manager role bound in %v, want team-a and team-b", bound)
		}
	})
	t.Run("the cluster-scoped role reads cluster-scoped resources only", func(t *testing.T) {
		// Bound cluster-wide even with watchNamespaces: a namespaced resource here would reach
		// every namespace.
		clusterScoped := map[string]bool{"nodes": true, "validatingadmissionpolicies": true, "validatingadmissionpolicybindings": true}
		for _, r := range configRules(t, "manager_cluster_role.yaml") {
			for _, res := range r.Resources {
				if !clusterScoped[res] {
					t.Errorf("manager_cluster_role.yaml grants %v on %s: only cluster-scoped resources belong there", r.Verbs, res)
				}
			}
			for _, v := range r.Verbs {
				if v != "get" && v != "list" && v != "watch" {
					t.Errorf("manager_cluster_role.yaml grants %s: it only reads", v)
				}
			}
		}
	})
	t.Run("kubelet CPU: get nodes/proxy only, bound cluster-wide with watchNamespaces too", func(t *testing.T) {
		objs := helmTemplate(t, "--set", "serverStats.kubeletCPU=true", "--set", "watchNamespaces={team-a}")
		name := role(t, objs, "ClusterRole", "-kubelet-stats")
		sa := only[corev1.ServiceAccount](t, objs, "ServiceAccount")
		if crb, ok := clusterBindings(t, objs)[name]; !ok {
			t.Errorf("ClusterRole %s is not bound cluster-wide", name)
		} else {
			checkBinding(t, crb.RoleRef, crb.Subjects, "ClusterRole", name, sa)
		}
		want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes/proxy"}, Verbs: []string{"get"}}}
		if got := roles(t, objs)["ClusterRole/"+name]; !reflect.DeepEqual(got, want) {
			t.Errorf("ClusterRole %s grants %+v, want exactly %+v", name, got, want)
		}
		d := only[appsv1.Deployment](t, objs, "Deployment")
		if !slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--kubelet-cpu-interval=2s") {
			t.Errorf("the manager's args %v lack --kubelet-cpu-interval=2s", d.Spec.Template.Spec.Containers[0].Args)
		}
	})
	t.Run("metrics readers", func(t *testing.T) {
		objs := helmTemplate(t, "--set", "metrics.readers[0].name=prometheus", "--set", "metrics.readers[0].namespace=monitoring")
		reader := role(t, objs, "ClusterRole", "-metrics-reader")
		crb, ok := clusterBindings(t, objs)[reader]
		want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus", Namespace: "monitoring"}}
		if !ok || !reflect.DeepEqual(crb.Subjects, want) {
			t.Errorf("ClusterRole %s bound to %+v, want %+v", reader, crb, want)
		}
	})
	t.Run("kustomize: every role but metrics-reader bound to the manager", func(t *testing.T) {
		objs := kustomizeBuild(t)
		sa := only[corev1.ServiceAccount](t, objs, "ServiceAccount")
		crbs := clusterBindings(t, objs)
		for _, name := range []string{"mysqlbench-manager-role", "mysqlbench-manager-cluster-role", "mysqlbench-metrics-auth-role"} {
			if crb, ok := crbs[name]; !ok {
				t.Errorf("ClusterRole %s is not bound", name)
			} else {
				checkBinding(t, crb.RoleRef, crb.Subjects, "ClusterRole", name, sa)
			}
		}
		if crb, ok := crbs["mysqlbench-metrics-reader"]; ok {
			t.Errorf("metrics-reader bound to %+v: it is for scrapers, bound by the user", crb.Subjects)
		}
		rb := only[rbacv1.RoleBinding](t, objs, "RoleBinding")
		checkBinding(t, rb.RoleRef, rb.Subjects, "Role", "mysqlbench-leader-election-role", sa)
	})
	t.Run("leader election Role in the release namespace", func(t *testing.T) {
		objs := helmTemplate(t)
		sa := only[corev1.ServiceAccount](t, objs, "ServiceAccount")
		role := only[rbacv1.Role](t, objs, "Role")
		if role.Namespace != "mysqlbench-system" {
			t.Errorf("leader election Role in %q, want the release namespace", role.Namespace)
		}
		if !grants(role.Rules, "coordination.k8s.io", "leases", "create", "get", "update") ||
			!grants(role.Rules, "", "events", "create") {
			t.Errorf("leader election Role cannot manage leases and events: %+v", role.Rules)
		}
		var found bool
		for _, rb := range ofKind[rbacv1.RoleBinding](t, objs, "RoleBinding") {
			if rb.RoleRef.Kind == "Role" && rb.RoleRef.Name == role.Name && rb.Namespace == role.Namespace {
				checkBinding(t, rb.RoleRef, rb.Subjects, "Role", role.Name, sa)
				found = true
			}
		}
		if !found {
			t.Error("no RoleBinding for the leader election Role")
		}
	})
}

func checkBinding(t *testing.T, ref rbacv1.RoleRef, subjects []rbacv1.Subject, kind, name string, sa *corev1.ServiceAccount) {
	t.Helper()
	if ref.Kind != kind || ref.Name != name {
		t.Errorf("binding refers to %s %s, want %s %s", ref.Kind, ref.Name, kind, name)
	}
	want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: sa.Namespace}}
	if !reflect.DeepEqual(subjects, want) {
		t.Errorf("binding subjects %+v, want %+v", subjects, want)
	}
}

func grants(rules []rbacv1.PolicyRule, group, resource string, verbs ...string) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) {
			missing := slices.DeleteFunc(slices.Clone(verbs), func(v string) bool { return slices.Contains(r.Verbs, v) })
			if len(missing) == 0 {
				return true
			}
		}
	}
	return false
}

func TestManagerDeploymentIsHardened(t *testing.T) {
	cases := []struct {
		name     string
		render   func(*testing.T) []*unstructured.Unstructured
		image    string
		replicas int32
		args     []string // must all be present
		noArgs   []string // flag prefixes that must be absent
		metrics  int32    // the container port named metrics
	}{{
		name:     "helm defaults",
		render:   func(t *testing.T) []*unstructured.Unstructured { return helmTemplate(t) },
		image:    "ghcr.io/mysqlbench/mysqlbench-operator:" + chartAppVersion(t),
		replicas: 1,
		args: []string{"--leader-elect", "--leader-election-namespace=mysqlbench-system",
			"--sysbench-image=ghcr.io/mysqlbench/sysbench:1.0.20", "--metrics-bind-address=:8443", "--metrics-secure",
			"--health-probe-bind-address=:8081"},
		noArgs:  []string{"--watch-namespaces", "--server-ready-timeout", "--results-outbox-timeout"},
		metrics: 8443,
	}, {
		name: "helm with plain HTTP metrics",
		render: func(t *testing.T) []*unstructured.Unstructured {
			return helmTemplate(t, "--set", "metrics.secure=false", "--set", "metrics.port=8080")
		},
		image:    "ghcr.io/mysqlbench/mysqlbench-operator:" + chartAppVersion(t),
		replicas: 1,
		args:     []string{"--metrics-bind-address=:8080"},
		noArgs:   []string{"--metrics-secure"},
		metrics:  8080,
	}, {
		name: "helm with values",
		render: func(t *testing.T) []*unstructured.Unstructured {
			return helmTemplate(t, "--set", "watchNamespaces={team-a,team-b}", "--set", "replicas=2",
				"--set", "sysbenchImage=registry.example/sysbench:1.0.20-1", "--set", "image.repository=registry.example/op",
				"--set", "image.tag=v9", "--set", "serverReadyTimeout=20m", "--set", "logVerbosity=2",
				"--set", "resultsDatabase.outboxTimeout=48h")
		},
		image:    "registry.example/op:v9",
		replicas: 2,
		args: []string{"--leader-elect", "--watch-namespaces=team-a,team-b",
			"--sysbench-image=registry.example/sysbench:1.0.20-1", "--server-ready-timeout=20m", "-v=2",
			"--results-outbox-timeout=48h"},
		metrics: 8443,
	}, {
		name:     "kustomize",
		render:   kustomizeBuild,
		image:    testImg,
		replicas: 1,
		args: []string{"--leader-elect", "--sysbench-image=ghcr.io/mysqlbench/sysbench:1.0.20",
			"--metrics-bind-address=:8443", "--metrics-secure", "--health-probe-bind-address=:8081"},
		noArgs:  []string{"--watch-namespaces"},
		metrics: 8443,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := tc.render(t)
			d := only[appsv1.Deployment](t, objs, "Deployment")
			sa := only[corev1.ServiceAccount](t, objs, "ServiceAccount")
			if d.Spec.Replicas == nil || *d.Spec.Replicas != tc.replicas {
				t.Errorf("replicas %v, want %d", d.Spec.Replicas, tc.replicas)
			}
			pod := d.Spec.Template.Spec
			if pod.ServiceAccountName != sa.Name || d.Namespace != sa.Namespace {
				t.Errorf("runs as %s/%s, want the rendered ServiceAccount %s/%s", d.Namespace, pod.ServiceAccountName, sa.Namespace, sa.Name)
			}
			psc := pod.SecurityContext
			if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot ||
				psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("pod securityContext %+v: want runAsNonRoot and seccomp RuntimeDefault", psc)
			}
			if len(pod.Containers) != 1 {
				t.Fatalf("%d containers, want the manager alone", len(pod.Containers))
			}
			c := pod.Containers[0]
			if c.Image != tc.image {
				t.Errorf("image %q, want %q", c.Image, tc.image)
			}
			sc := c.SecurityContext
			if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
				sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
				sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
				t.Errorf("container securityContext %+v: want no privilege escalation, read-only root, all capabilities dropped", sc)
			}
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if _, ok := c.Resources.Requests[r]; !ok {
					t.Errorf("no %s request", r)
				}
				if _, ok := c.Resources.Limits[r]; !ok {
					t.Errorf("no %s limit", r)
				}
			}
			ports := map[string]int32{}
			for _, p := range c.Ports {
				ports[p.Name] = p.ContainerPort
			}
			if ports["metrics"] != tc.metrics {
				t.Errorf("container ports %v: want metrics on %d", ports, tc.metrics)
			}
			checkProbe(t, "liveness", c.LivenessProbe, "/healthz", ports)
			checkProbe(t, "readiness", c.ReadinessProbe, "/readyz", ports)
			for _, a := range tc.args {
				if !slices.Contains(c.Args, a) {
					t.Errorf("args %q lack %q", c.Args, a)
				}
			}
			for _, prefix := range tc.noArgs {
				for _, a := range c.Args {
					if strings.HasPrefix(a, prefix) {
						t.Errorf("args %q: unexpected %q", c.Args, a)
					}
				}
			}
		})
	}
}

func checkProbe(t *testing.T, which string, p *corev1.Probe, path string, ports map[string]int32) {
	t.Helper()
	if p == nil || p.HTTPGet == nil {
		t.Errorf("no HTTP %s probe", which)
		return
	}
	port := p.HTTPGet.Port.IntVal
	if p.HTTPGet.Port.StrVal != "" {
		port = ports[p.HTTPGet.Port.StrVal]
	}
	if p.HTTPGet.Path != path || port != 8081 {
		t.Errorf("%s probe on %s port %d, want %s on 8081", which, p.HTTPGet.Path, port, path)
	}
}

func chartAppVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &chart); err != nil || chart.AppVersion == "" {
		t.Fatalf("Chart.yaml appVersion: %q, %v", chart.AppVersion, err)
	}
	return chart.AppVersion
}

func TestServiceMonitorScrapesManager(t *testing.T) {
	objs := helmTemplate(t, "--set", "serviceMonitor.enabled=true", "--set", "serviceMonitor.labels.release=prom")
	svc := only[corev1.Service](t, objs, "Service")
	d := only[appsv1.Deployment](t, objs, "Deployment")
	sms := ofKind[unstructured.Unstructured](t, objs, "ServiceMonitor")
	if len(sms) != 1 {
		t.Fatalf("rendered %d ServiceMonitors, want 1", len(sms))
	}
	sm := sms[0]
	if sm.GetAPIVersion() != "monitoring.coreos.com/v1" || sm.GetLabels()["release"] != "prom" {
		t.Errorf("ServiceMonitor %s with labels %v, want monitoring.coreos.com/v1 labelled release=prom", sm.GetAPIVersion(), sm.GetLabels())
	}
	selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	if len(selector) == 0 || !subset(selector, svc.Labels) {
		t.Errorf("ServiceMonitor selects %v, which does not match the metrics Service's labels %v", selector, svc.Labels)
	}
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(endpoints) != 1 || endpoints[0].(map[string]any)["port"] != "metrics" {
		t.Errorf("ServiceMonitor endpoints %v, want the port named metrics", endpoints)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "metrics" || svc.Spec.Ports[0].TargetPort.StrVal != "metrics" {
		t.Errorf("metrics Service ports %+v, want one named metrics targeting the container port metrics", svc.Spec.Ports)
	}
	if len(svc.Spec.Selector) == 0 || !subset(svc.Spec.Selector, d.Spec.Template.Labels) {
		t.Errorf("metrics Service selects %v, not the manager pods labelled %v", svc.Spec.Selector, d.Spec.Template.Labels)
	}
	// Secure metrics (the default): HTTPS with the scraper's ServiceAccount token; the manager's
	// certificate is self-signed. honorLabels: the metrics' own namespace label (the run's) stays
	// namespace, which the Grafana dashboard filters on.
	want := map[string]any{"port": "metrics", "path": "/metrics", "scheme": "https", "interval": "30s", "scrapeTimeout": "10s",
		"bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token", "tlsConfig": map[string]any{"insecureSkipVerify": true},
		"honorLabels": true}
	if len(endpoints) == 1 && !reflect.DeepEqual(endpoints[0], want) {
		t.Errorf("ServiceMonitor endpoint %v, want %v", endpoints[0], want)
	}
	plain := ofKind[unstructured.Unstructured](t, helmTemplate(t, "--set", "serviceMonitor.enabled=true",
		"--set", "metrics.secure=false", "--set", "metrics.port=8080"), "ServiceMonitor")
	endpoints, _, _ = unstructured.NestedSlice(plain[0].Object, "spec", "endpoints")
	if e := endpoints[0].(map[string]any); e["scheme"] != "http" || e["bearerTokenFile"] != nil || e["tlsConfig"] != nil {
		t.Errorf("ServiceMonitor endpoint %v with metrics.secure=false, want plain http", e)
	}
}

const (
	dashboardKey        = "mysqlbench-dashboard.json"
	historyDashboardKey = "mysqlbench-history-dashboard.json"
)

// dashboards returns the rendered ConfigMaps that hold the Grafana dashboard or carry the
// sidecar's default label.
func dashboards(t *testing.T, objs []*unstructured.Unstructured) []*corev1.ConfigMap {
	t.Helper()
	var out []*corev1.ConfigMap
	for _, cm := range ofKind[corev1.ConfigMap](t, objs, "ConfigMap") {
		if _, ok := cm.Data[dashboardKey]; ok || cm.Labels["grafana_dashboard"] != "" {
			out = append(out, cm)
		}
	}
	return out
}

// The Grafana dashboard is opt-in: a ConfigMap for Grafana's dashboard sidecar holding the
// chart's files/grafana/mysqlbench-dashboard.json (internal/metrics checks its queries against
// the exported metrics).
func TestGrafanaDashboard(t *testing.T) {
	file, err := os.ReadFile(filepath.Join(repoRoot(t), chartDir, "files", "grafana", dashboardKey))
	if err != nil {
		t.Fatal(err)
	}
	var want any
	if err := json.Unmarshal(file, &want); err != nil {
		t.Fatalf("%s: %v", dashboardKey, err)
	}
	t.Run("disabled by default", func(t *testing.T) {
		if cms := dashboards(t, helmTemplate(t)); len(cms) != 0 {
			t.Errorf("rendered dashboard ConfigMap %s/%s although grafana.dashboard.enabled is false", cms[0].Namespace, cms[0].Name)
		}
	})
	t.Run("enabled", func(t *testing.T) {
		cms := dashboards(t, helmTemplate(t, "--set", "grafana.dashboard.enabled=true"))
		if len(cms) != 1 {
			t.Fatalf("rendered %d dashboard ConfigMaps, want 1", len(cms))
		}
		cm := cms[0]
		if cm.Namespace != "mysqlbench-system" || cm.Labels["grafana_dashboard"] != "1" || len(cm.Annotations) != 0 {
			t.Errorf("ConfigMap %s/%s labels %v annotations %v: want the release namespace, grafana_dashboard=1 and no annotations",
				cm.Namespace, cm.Name, cm.Labels, cm.Annotations)
		}
		var got any
		if err := json.Unmarshal([]byte(cm.Data[dashboardKey]), &got); err != nil {
			t.Fatalf("%s in the ConfigMap is not JSON: %v", dashboardKey, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s in the ConfigMap differs from the chart's file", dashboardKey)
		}
		if cm.Data[dashboardKey] != strings.TrimRight(string(file), "\n") {
			t.Errorf("%s in the ConfigMap is not the file verbatim", dashboardKey)
		}
		// The history dashboard (internal/resultsdb runs its SQL) is the second key, on by default.
		history, err := os.ReadFile(filepath.Join(repoRoot(t), chartDir, "files", "grafana", historyDashboardKey))
		if err != nil {
			t.Fatal(err)
		}
		if cm.Data[historyDashboardKey] != strings.TrimRight(string(history), "\n") {
			t.Errorf("%s in the ConfigMap is not the file verbatim", historyDashboardKey)
		}
		cms = dashboards(t, helmTemplate(t, "--set", "grafana.dashboard.enabled=true", "--set", "grafana.dashboard.history=false"))
		if len(cms) != 1 || len(cms[0].Data) != 1 || cms[0].Data[dashboardKey] == "" {
			t.Errorf("grafana.dashboard.history=false: want the Prometheus dashboard alone")
		}
	})
	t.Run("labels, annotations and namespace", func(t *testing.T) {
		cms := dashboards(t, helmTemplate(t, "--set", "grafana.dashboard.enabled=true", "--set", "grafana.dashboard.namespace=monitoring",
			"--set", "grafana.dashboard.labels.grafana_dashboard=null", "--set-string", "grafana.dashboard.labels.dashboards=mysqlbench",
			"--set", "grafana.dashboard.annotations.grafana_folder=Benchmarks"))
		if len(cms) != 1 {
			t.Fatalf("rendered %d dashboard ConfigMaps, want 1", len(cms))
		}
		cm := cms[0]
		if _, ok := cm.Labels["grafana_dashboard"]; ok || cm.Labels["dashboards"] != "mysqlbench" {
			t.Errorf("labels %v: want dashboards=mysqlbench instead of grafana_dashboard", cm.Labels)
		}
		if cm.Namespace != "monitoring" || !reflect.DeepEqual(cm.Annotations, map[string]string{"grafana_folder": "Benchmarks"}) {
			t.Errorf("ConfigMap in %q annotated %v, want monitoring and grafana_folder=Benchmarks", cm.Namespace, cm.Annotations)
		}
	})
	t.Run("the schema rejects", func(t *testing.T) {
		for _, tc := range []struct{ set, want string }{
			{"grafana.dashboard.enabled=yes", "/grafana/dashboard/enabled"},
			{"grafana.dashboards.enabled=true", "dashboards"},
			{"grafana.dashboard.labels.grafana_dashboard=1", "/grafana/dashboard/labels/grafana_dashboard"},
			{"grafana.dashboard.namespace=Monitoring", "/grafana/dashboard/namespace"},
		} {
			if out := helmTemplateFails(t, "--set", tc.set); !strings.Contains(out, tc.want) {
				t.Errorf("--set %s: helm says %q, want it to name %s", tc.set, out, tc.want)
			}
		}
	})
}

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
