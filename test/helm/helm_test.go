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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
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
