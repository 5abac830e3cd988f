package helm_test

// The manager as the chart installs it: the chart's ServiceAccount with exactly the chart's RBAC,
// the chart's Deployment arguments, the real wiring (controllers/operator, which cmd/main.go
// runs), against an API server that enforces RBAC and the OwnerReferencesPermissionEnforcement
// admission plugin (OpenShift has it on: creating an object owned by a run needs update on the
// run's finalizers).

import (
	"context"
	"crypto/tls"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/controllers/operator"
	"github.com/mysqlbench/mysqlbench-operator/internal/apicalls"
)

const (
	releaseNS = "mysqlbench-system"
	watched   = "team-a"
	unwatched = "team-b"
)

// installedManager is the manager of a chart release, running as the release's ServiceAccount.
type installedManager struct {
	calls       *apicalls.Recorder
	admin       client.Client
	adminCfg    *rest.Config
	rendered    []*unstructured.Unstructured
	metricsAddr string
}

// startInstalledManager installs the chart (helm install, the CRDs included) with the given values
// into a fresh API server and starts the manager as the chart's ServiceAccount with the
// Deployment's arguments (the metrics address moved to a free local port, probes off). Every
// request of the manager is recorded.
func startInstalledManager(t *testing.T, clockAhead time.Duration, values ...string) *installedManager {
	t.Helper()
	helm := toolFromEnv(t, "HELM")
	ctx := context.Background()
	admin, kubeconfig, adminCfg := apiServerConfig(t)
	env := append(helmEnv(t), "KUBECONFIG="+kubeconfig)
	createNamespaces(ctx, t, admin, watched, unwatched)
	args := append([]string{"--namespace", releaseNS}, values...)
	run(t, env, helm, append([]string{"install", "mb", chartDir, "--create-namespace"}, args...)...)
	rendered := decodeAll(t, run(t, helmEnv(t), helm, append([]string{"template", "mb", chartDir}, args...)...))
	waitEstablished(ctx, t, admin, "benchmarkruns.mysqlbench.io")
	waitEstablished(ctx, t, admin, "benchmarkschedules.mysqlbench.io")

	d := only[appsv1.Deployment](t, rendered, "Deployment")
	sa := d.Spec.Template.Spec.ServiceAccountName
	var o operator.Options
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	o.BindFlags(fs)
	var flags []string
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		if !strings.HasPrefix(a, "-v=") { // klog's, not the manager's
			flags = append(flags, a)
		}
	}
	if err := fs.Parse(flags); err != nil {
		t.Fatalf("the Deployment's arguments %q: %v", flags, err)
	}
	o.MetricsAddr = freeAddr(t)
	o.ProbeAddr = "0"
	o.SkipNameValidation = true
	ctrl.SetLogger(klog.NewKlogr())
	if clockAhead != 0 {
		o.ScheduleClock = clocktesting.NewFakePassiveClock(time.Now().Add(clockAhead))
	}

	m := &installedManager{calls: apicalls.NewRecorder(), admin: admin, adminCfg: adminCfg, rendered: rendered,
		metricsAddr: o.MetricsAddr}
	mgr, err := operator.New(m.calls.Wrap(m.serviceAccountConfig(t, d.Namespace, sa)), o)
	if err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager stopped with %v", err)
		}
	})
	return m
}

// serviceAccountConfig is a rest.Config for the API server that authenticates as the
// ServiceAccount, with a token from the TokenRequest API.
func (m *installedManager) serviceAccountConfig(t *testing.T, namespace, name string) *rest.Config {
	t.Helper()
	return &rest.Config{
		Host:            m.adminCfg.Host,
		TLSClientConfig: rest.TLSClientConfig{CAData: m.adminCfg.CAData},
		BearerToken:     m.token(t, namespace, name),
	}
}

func (m *installedManager) token(t *testing.T, namespace, name string) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(m.adminCfg)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(context.Background(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of ServiceAccount %s/%s: %v", namespace, name, err)
	}
	return tr.Status.Token
}

// rules are the rendered rules of the role whose name ends with suffix.
func (m *installedManager) rules(t *testing.T, kind, suffix string) []rbacv1.PolicyRule {
	t.Helper()
	return roles(t, m.rendered)[kind+"/"+role(t, m.rendered, kind, suffix)]
}

// checkCalls fails on any request the API server's authorizer refused, and on any call the
// namespace's (or, for calls in no namespace, the cluster-wide) roles of the chart do not grant.
func (m *installedManager) checkCalls(t *testing.T) {
	t.Helper()
	for _, d := range m.calls.Denials() {
		t.Errorf("the API server refused the manager %s %s: %s", d.Method, d.Path, d.Message)
	}
	clusterWide := slices.Concat(m.rules(t, "ClusterRole", "-manager-cluster"), m.rules(t, "ClusterRole", "-metrics-auth"))
	byNamespace := map[string][]rbacv1.PolicyRule{
		"":        clusterWide,
		watched:   m.rules(t, "ClusterRole", "-manager"),
		releaseNS: m.rules(t, "Role", "-leader-election"),
	}
	for _, ns := range append([]string{""}, m.calls.Namespaces()...) {
		rules, ok := byNamespace[ns]
		if !ok {
			t.Errorf("the manager called %v in namespace %s, where the chart grants it nothing", m.calls.CallsIn(ns), ns)
			continue
		}
		for _, c := range m.calls.CallsIn(ns) {
			if !apicalls.Allows(rules, c) {
				t.Errorf("the manager called %s in namespace %q, which the chart's roles there do not grant", c, ns)
			}
		}
	}
}

// TestWatchNamespacesInstall: installed for one namespace, the manager starts without an RBAC
// error (its Node informer included: Nodes are cluster-scoped), provisions a run and creates a
// scheduled run there (objects owned by a run and by a schedule: their finalizers grants), leaves
// the other namespace alone, and uses every verb of its leader election Role.
func TestWatchNamespacesInstall(t *testing.T) {
	// The schedule's clock runs ahead so that its every-minute schedule is due at once.
	m := startInstalledManager(t, 70*time.Second, "--set", "watchNamespaces={"+watched+"}")
	ctx := context.Background()

	// A Ready node of the database pool: the run's queue counts it.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "db-1", Labels: map[string]string{"mysqlbench.io/pool": "database"}}}
	if err := m.admin.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	if err := m.admin.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	createSample(ctx, t, m.admin, watched)
	createSample(ctx, t, m.admin, unwatched)

	// The run is provisioned: the manager created its server's objects, each owned by the run.
	run := &v1.BenchmarkRun{}
	m.waitUntil(t, 30*time.Second, "the run in "+watched+" to provision its first target", func() bool {
		err := m.admin.Get(ctx, client.ObjectKey{Namespace: watched, Name: "quick-psoff"}, run)
		return err == nil && len(run.Status.Targets) > 0 && run.Status.Targets[0].Phase != "" &&
			run.Status.Targets[0].Phase != v1.TargetPending
	})
	if run.Status.Phase == v1.RunFailed {
		t.Fatalf("run failed: %+v", run.Status)
	}
	for _, obj := range []client.Object{&appsv1.StatefulSet{}, &corev1.Service{}, &corev1.Secret{}} {
		list := &unstructured.UnstructuredList{}
		gvk := gvkOf(t, m.admin, obj)
		list.SetGroupVersionKind(gvk)
		m.waitUntil(t, 10*time.Second, "a "+gvk.Kind+" owned by the run", func() bool {
			if err := m.admin.List(ctx, list, client.InNamespace(watched)); err != nil {
				t.Fatal(err)
			}
			for _, o := range list.Items {
				for _, ref := range o.GetOwnerReferences() {
					if ref.UID == run.UID && ptr.Deref(ref.BlockOwnerDeletion, false) {
						return true
					}
				}
			}
			return false
		})
	}

	// The schedule comes after the run holds the pool's one node: its run, started in the same
	// second, would otherwise be first in the queue (ties go by name) and the run would wait.
	sched := readSample(t, "mysqlbench_v1alpha1_benchmarkschedule_nightly.yaml")
	sched.SetNamespace(watched)
	_ = unstructured.SetNestedField(sched.Object, "* * * * *", "spec", "schedule")
	unstructured.RemoveNestedField(sched.Object, "spec", "timeZone")
	if err := m.admin.Create(ctx, sched); err != nil {
		t.Fatal(err)
	}

	// The schedule created its run, owned by the schedule.
	m.waitUntil(t, 30*time.Second, "the schedule to create its run", func() bool {
		runs := &v1.BenchmarkRunList{}
		if err := m.admin.List(ctx, runs, client.InNamespace(watched)); err != nil {
			t.Fatal(err)
		}
		for _, r := range runs.Items {
			if ref := metav1.GetControllerOf(&r); ref != nil && ref.Kind == "BenchmarkSchedule" && ref.UID == sched.GetUID() {
				return true
			}
		}
		return false
	})

	// Leader election: the Lease in the release namespace, renewed (update) at least once.
	lease := &coordinationv1.Lease{}
	if err := m.admin.Get(ctx, client.ObjectKey{Namespace: releaseNS, Name: operator.LeaderElectionID}, lease); err != nil {
		t.Errorf("leader election Lease: %v", err)
	}
	leRules := m.rules(t, "Role", "-leader-election")
	m.waitUntil(t, 20*time.Second, "every verb of the leader election Role to be used", func() bool {
		return len(apicalls.Unused(leRules, m.calls.CallsIn(releaseNS))) == 0
	})

	// The unwatched namespace: not a single call, and its run untouched.
	if calls := m.calls.CallsIn(unwatched); len(calls) != 0 {
		t.Errorf("the manager called %v in %s, which it does not watch", calls, unwatched)
	}
	other := &v1.BenchmarkRun{}
	if err := m.admin.Get(ctx, client.ObjectKey{Namespace: unwatched, Name: "quick-psoff"}, other); err != nil {
		t.Fatal(err)
	}
	if other.Status.Phase != "" || len(other.Finalizers) != 0 {
		t.Errorf("the run in %s was touched: phase %q, finalizers %v", unwatched, other.Status.Phase, other.Finalizers)
	}
	m.checkCalls(t)
	if t.Failed() {
		t.Logf("the manager's calls: %v", m.calls.Calls())
	}
}

// TestSecureMetrics: --metrics-secure as the chart sets it up. The endpoint answers only bearer
// tokens the API server authenticates and authorizes for get /metrics (the metrics-reader
// ClusterRole, bound to metrics.readers), and the manager needs its metrics-auth ClusterRole to
// ask (without it, every scrape would fail with a 500).
func TestSecureMetrics(t *testing.T) {
	m := startInstalledManager(t, 0, "--set", "watchNamespaces={"+watched+"}",
		"--set", "metrics.readers[0].name=prometheus", "--set", "metrics.readers[0].namespace=monitoring")
	ctx := context.Background()
	createNamespaces(ctx, t, m.admin, "monitoring")
	for _, name := range []string{"prometheus", "stranger"} {
		if err := m.admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "monitoring", Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	scrape := func(token string) (int, string) {
		t.Helper()
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			// The manager's certificate is self-signed, as the ServiceMonitor's tlsConfig says.
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed on purpose
		}}
		req, err := http.NewRequest(http.MethodGet, "https://"+m.metricsAddr+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		var resp *http.Response
		m.waitUntil(t, 20*time.Second, "the metrics endpoint to answer", func() bool {
			resp, err = c.Do(req)
			return err == nil
		})
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(body)
	}

	if code, body := scrape(""); code != http.StatusUnauthorized {
		t.Errorf("no token: %d %q, want 401", code, body)
	}
	if code, body := scrape(m.token(t, "monitoring", "stranger")); code != http.StatusForbidden {
		t.Errorf("a ServiceAccount without the metrics-reader role: %d %q, want 403", code, body)
	}
	code, body := scrape(m.token(t, "monitoring", "prometheus"))
	if code != http.StatusOK || !strings.Contains(body, "\ncontroller_runtime_reconcile_total{") {
		t.Errorf("the metrics-reader's ServiceAccount: %d, want 200 with the controllers' metrics:\n%.2000s", code, body)
	}
	// Both reviews were asked by the manager itself, as its ServiceAccount.
	authRules := m.rules(t, "ClusterRole", "-metrics-auth")
	if unused := apicalls.Unused(authRules, m.calls.CallsIn("")); len(unused) != 0 {
		t.Errorf("the metrics-auth role grants %v, which the manager did not use to check the scrapes", unused)
	}
	m.checkCalls(t)
}

func readSample(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "config", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	return decodeAll(t, data)[0]
}

func gvkOf(t *testing.T, c client.Client, obj client.Object) schema.GroupVersionKind {
	t.Helper()
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return gvk
}

// waitUntil polls cond; when it times out, it names what the API server refused the manager.
func (m *installedManager) waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			for _, d := range m.calls.Denials() {
				t.Errorf("the API server refused the manager %s %s: %s", d.Method, d.Path, d.Message)
			}
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freeAddr is a local address no one listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// TestKubeletCPU: with serverStats.kubeletCPU the manager samples the kubelet of a node that
// hosts a server pod through the API server's node proxy, and its ClusterRole grants exactly
// that call, watchNamespaces or not (Nodes are cluster-scoped). envtest has no kubelet: the API
// server authorizes the request, then fails to reach the node, which is all this checks. Without
// the value but with the sampler turned on by hand, the API server refuses the call: that is the
// refusal the sampler reports (kubeletstats' tests check what it says).
func TestKubeletCPU(t *testing.T) {
	// The request as the recorder names it (every path segment after the node's name) and as
	// RBAC authorizes it (nodes/proxy).
	summaryCall := apicalls.Call{Verb: "get", Resource: "nodes", Subresource: "proxy/stats/summary"}
	proxyCall := apicalls.Call{Verb: "get", Resource: "nodes", Subresource: "proxy"}
	serverPod := func(t *testing.T, m *installedManager) {
		t.Helper()
		ctx := context.Background()
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "db-1"}}
		if err := m.admin.Create(ctx, node); err != nil {
			t.Fatal(err)
		}
		// A builtin server pod as the StatefulSet makes it (the labels the operator's cache and
		// the sampler select), bound and running.
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "quick-mariadb-0", Namespace: watched, Labels: map[string]string{
				"app.kubernetes.io/managed-by": "mysqlbench-operator", "app.kubernetes.io/component": "server",
				"app.kubernetes.io/name": "mysqlbench", "mysqlbench.io/run": "quick", "mysqlbench.io/target": "mariadb",
			}},
			Spec: corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "mysql", Image: "mariadb:10.11"}}},
		}
		if err := m.admin.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		pod.Status.Phase = corev1.PodRunning
		if err := m.admin.Status().Update(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("granted by serverStats.kubeletCPU", func(t *testing.T) {
		m := startInstalledManager(t, 0, "--set", "watchNamespaces={"+watched+"}", "--set", "serverStats.kubeletCPU=true",
			"--set", "serverStats.kubeletCPUInterval=500ms")
		serverPod(t, m)
		m.waitUntil(t, 20*time.Second, "the sampler to ask the node's kubelet", func() bool {
			return slices.Contains(m.calls.CallsIn(""), summaryCall)
		})
		if !apicalls.Allows(m.rules(t, "ClusterRole", "-kubelet-stats"), proxyCall) {
			t.Errorf("the kubelet-stats ClusterRole does not grant %s", proxyCall)
		}
		for _, d := range m.calls.Denials() {
			t.Errorf("the API server refused the manager %s %s: %s", d.Method, d.Path, d.Message)
		}
	})
	t.Run("refused without it", func(t *testing.T) {
		m := startInstalledManager(t, 0, "--set", "watchNamespaces={"+watched+"}",
			"--set", "extraArgs={--kubelet-cpu-interval=500ms}")
		serverPod(t, m)
		m.waitUntil(t, 20*time.Second, "the API server to refuse the sampler", func() bool {
			return slices.ContainsFunc(m.calls.Denials(), func(d apicalls.Denial) bool { return d.Call == summaryCall })
		})
		for _, d := range m.calls.Denials() {
			if d.Call != summaryCall {
				t.Errorf("the API server refused the manager %s %s: %s", d.Method, d.Path, d.Message)
			}
		}
		time.Sleep(2 * time.Second) // four intervals: the sampler must not ask again (kubeletstats.ForbiddenRecheck)
		if n := len(slices.DeleteFunc(m.calls.Denials(), func(d apicalls.Denial) bool { return d.Call != summaryCall })); n != 1 {
			t.Errorf("the sampler was refused %d times, want once until its recheck", n)
		}
	})
}
