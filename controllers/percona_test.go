package controllers_test

// The Percona engines against the real Percona CRDs. The suite's own envtest runs without them
// (the clusters most users start with), which is what the not-installed test needs; the other
// tests share a second envtest, started on first use, with the PerconaServerMySQL CRD of the PS
// operator v1.2.0 and the PerconaXtraDBCluster CRD of the PXC operator v1.18.0 installed. Both
// live in this package so the full-ladder tests reuse the suite's operator and fake kubelet;
// a separate package would have to copy them. The API server enforces Percona's own schemas
// and CEL rules on every object the operator creates; the tests then play the Percona operator
// (status.state, status.host through the status subresource) and the kubelet (sysbench Jobs).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	perconaengine "github.com/mysqlbench/mysqlbench-operator/internal/engine/percona"
	"github.com/mysqlbench/mysqlbench-operator/internal/owned"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// pxcModule holds the PerconaXtraDBCluster CRD (deploy/crd.yaml).
const pxcModule = "github.com/percona/percona-xtradb-cluster-operator@v1.18.0"

var percona struct {
	once sync.Once
	env  *envtest.Environment
	cfg  *rest.Config
	k8s  client.Client
	err  error
	skip string
}

// perconaCRDs finds the two CRD files: MYSQLBENCH_PERCONA_PS_CRD (default: the copy in the
// shared vendor-crds folder next to the repository) and MYSQLBENCH_PERCONA_PXC_CRD (default: the
// PXC operator's Go module, fetched with `go mod download`; it is not a dependency of the
// project). A missing file skips the tests, except in CI, where it fails them.
func perconaCRDs() (ps, pxc string, err error) {
	ps = os.Getenv("MYSQLBENCH_PERCONA_PS_CRD")
	if ps == "" {
		ps = filepath.Join("..", "..", "shared", "vendor-crds", "percona-server-mysql-operator-v1.2.0", "crd.yaml")
	}
	if _, err := os.Stat(ps); err != nil {
		return "", "", fmt.Errorf("the PerconaServerMySQL CRD (set MYSQLBENCH_PERCONA_PS_CRD): %w", err)
	}
	pxc = os.Getenv("MYSQLBENCH_PERCONA_PXC_CRD")
	if pxc == "" {
		cmd := exec.Command("go", "mod", "download", "-json", pxcModule)
		// Outside the project's module, so that nothing is added to go.mod or go.sum; the checksum
		// database lacks some of Percona's versions.
		cmd.Dir = os.TempDir()
		cmd.Env = append(os.Environ(), "GONOSUMDB=github.com/percona", "GOFLAGS=", "GO111MODULE=on")
		out, err := cmd.Output()
		var mod struct{ Dir, Error string }
		if err == nil {
			err = json.Unmarshal(out, &mod)
		}
		if err != nil || mod.Dir == "" {
			return "", "", fmt.Errorf("go mod download %s (or set MYSQLBENCH_PERCONA_PXC_CRD): %w %s", pxcModule, err, mod.Error)
		}
		pxc = filepath.Join(mod.Dir, "deploy", "crd.yaml")
	}
	if _, err := os.Stat(pxc); err != nil {
		return "", "", fmt.Errorf("the PerconaXtraDBCluster CRD (set MYSQLBENCH_PERCONA_PXC_CRD): %w", err)
	}
	return ps, pxc, nil
}

// perconaAPI is the envtest with the Percona CRDs, started on first use.
func perconaAPI(t *testing.T) (*rest.Config, client.Client) {
	t.Helper()
	percona.once.Do(func() {
		ps, pxc, err := perconaCRDs()
		if err != nil {
			if os.Getenv("CI") == "true" {
				percona.err = err
			} else {
				percona.skip = err.Error()
			}
			return
		}
		percona.env, percona.cfg, percona.err = testenv.Start("..", ps, pxc)
		if percona.err == nil {
			percona.k8s, percona.err = client.New(percona.cfg, client.Options{Scheme: testenv.Scheme})
		}
	})
	if percona.skip != "" {
		t.Skip("Percona CRDs not found:", percona.skip)
	}
	if percona.err != nil {
		t.Fatal(percona.err)
	}
	return percona.cfg, percona.k8s
}

func stopPerconaEnv() {
	if percona.env != nil {
		if err := percona.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop the Percona envtest:", err)
		}
	}
}

func perconaNamespace(t *testing.T, c client.Client, name string) string {
	t.Helper()
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// fakePercona plays a Percona operator: every resource of kind in ns gets the status set
// returns (nil: leave it alone), written through the status subresource.
func fakePercona(t *testing.T, c client.Client, ns string, kind schema.GroupVersionKind, set func(u *unstructured.Unstructured) map[string]any) {
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(kind.GroupVersion().WithKind(kind.Kind + "List"))
			if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
				t.Logf("fake Percona operator: %v", err)
				continue
			}
			for i := range list.Items {
				u := &list.Items[i]
				status := set(u)
				if status == nil || !u.GetDeletionTimestamp().IsZero() {
					continue
				}
				if cur, _, _ := unstructured.NestedMap(u.Object, "status"); fmt.Sprint(cur) == fmt.Sprint(status) {
					continue
				}
				u.Object["status"] = status
				if err := c.Status().Update(context.Background(), u); err != nil && !apierrors.IsConflict(err) {
					t.Logf("fake Percona operator: %v", err)
				}
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-stopped })
}

func waitForOn(t *testing.T, c client.Client, ns, name string, timeout time.Duration, what string, cond func(*v1.BenchmarkRun) bool) *v1.BenchmarkRun {
	t.Helper()
	deadline := time.Now().Add(timeout)
	run := &v1.BenchmarkRun{}
	for {
		err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, run)
		if err == nil && cond(run) {
			return run
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; status: %+v", timeout, what, run.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func perconaRun(ns, name string, targets ...v1.Target) *v1.BenchmarkRun {
	return &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.BenchmarkRunSpec{
			Targets:  targets,
			Workload: v1.Workload{Script: "oltp_point_select", Tables: 4, TableSize: 1000},
			Ladder:   v1.Ladder{Threads: []int32{1, 2, 400}, StepDuration: &metav1.Duration{Duration: 3 * time.Second}},
		},
	}
}

func getPercona(t *testing.T, c client.Client, kind schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind)
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatalf("get %s %s: %v", kind.Kind, name, err)
	}
	return u
}

func nested[T any](t *testing.T, u *unstructured.Unstructured, path ...string) T {
	t.Helper()
	v, found, err := unstructured.NestedFieldNoCopy(u.Object, path...)
	if err != nil || !found {
		t.Fatalf("%s has no %s (%v)", u.GetName(), strings.Join(path, "."), err)
	}
	out, ok := v.(T)
	if !ok {
		t.Fatalf("%s.%s is %T, want %T", u.GetName(), strings.Join(path, "."), v, out)
	}
	return out
}

// Without the Percona CRDs (the suite's own API server), a Percona target fails on its first
// reconcile with how to fix it, and the run ends instead of waiting.
func TestPerconaEnginesWithoutTheirCRDsFailAtOnce(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{log: captured(t, "run_point_select_t4.txt")})
	startKubelet(t, ns, succeedAll(t))
	run := perconaRun(ns, "no-percona",
		v1.Target{Name: "ps", Engine: v1.EnginePerconaServer},
		v1.Target{Name: "pxc", Engine: v1.EnginePerconaXtraDBCluster},
	)
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, run.Name, 20*time.Second, "the run to fail", finished)
	if got.Status.Phase != v1.RunFailed {
		t.Fatalf("phase %s, want Failed", got.Status.Phase)
	}
	for i, want := range []string{"perconaservermysqls.ps.percona.com", "perconaxtradbclusters.pxc.percona.com"} {
		ts := got.Status.Targets[i]
		if ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, want+" is not installed") ||
			!strings.Contains(ts.Message, "install the Percona operator") {
			t.Errorf("target %s: %s %q, want Failed saying %s is not installed and to install the operator", ts.Name, ts.Phase, ts.Message, want)
		}
		if ts.CompletionTime == nil || ts.CompletionTime.Sub(ts.StartTime.Time) > 5*time.Second {
			t.Errorf("target %s took %v to fail, want at once", ts.Name, ts.CompletionTime)
		}
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionFailed); c == nil || !strings.Contains(c.Message, "install the Percona operator") {
		t.Errorf("Failed condition %+v does not tell to install the Percona operator", c)
	}
	// Nothing was created for the targets.
	secrets := &corev1.SecretList{}
	if err := k8s.List(context.Background(), secrets, client.InNamespace(ns), client.MatchingLabels{specs.LabelRun: run.Name}); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 0 {
		t.Errorf("%d Secrets left behind for targets that could not run", len(secrets.Items))
	}
}

// Every variant the engines build is accepted by the API server under Percona's own schemas and
// CEL rules (async without orchestrator or proxy needs the unsafe flags; Router needs group
// replication; volumeSpec holds exactly one source).
func TestPerconaResourcesPassPerconaValidation(t *testing.T) {
	_, c := perconaAPI(t)
	ns := perconaNamespace(t, c, "percona-variants")
	ctx := context.Background()
	run := perconaRun(ns, "variants")
	run.UID = "0b1d2c3e-0000-4000-8000-000000000001" // owner references need one
	run.Spec.Placement.Database.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"nvme"}}},
		}}},
	}}
	cpu := &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
	targets := []v1.Target{
		{Name: "ps", Engine: v1.EnginePerconaServer, Image: "percona/percona-server:8.0.46-37.1", MyCnf: "performance_schema = OFF", Resources: cpu},
		{Name: "ps-haproxy", Engine: v1.EnginePerconaServer, Percona: &v1.PerconaOptions{Proxy: v1.PerconaProxyHAProxy}},
		{Name: "ps-router", Engine: v1.EnginePerconaServer, Percona: &v1.PerconaOptions{Proxy: v1.PerconaProxyRouter}},
		{Name: "pxc57", Engine: v1.EnginePerconaXtraDBCluster, Image: "percona/percona-xtradb-cluster:5.7.44-31.65", Resources: cpu},
		{Name: "pxc-haproxy", Engine: v1.EnginePerconaXtraDBCluster, Percona: &v1.PerconaOptions{Proxy: v1.PerconaProxyHAProxy}},
		{Name: "pxc-proxysql", Engine: v1.EnginePerconaXtraDBCluster, Percona: &v1.PerconaOptions{Proxy: v1.PerconaProxySQL}},
	}
	for _, storage := range []*v1.Storage{nil, {Size: resource.MustParse("20Gi"), StorageClassName: ptr.To("fast")}} {
		run.Spec.Storage = storage
		for _, tg := range targets {
			name := fmt.Sprintf("%s storage=%v", tg.Name, storage != nil)
			build := perconaengine.PerconaServerMySQL
			if tg.Engine == v1.EnginePerconaXtraDBCluster {
				build = perconaengine.PerconaXtraDBCluster
			}
			u, err := build(run, tg)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			u.SetName(fmt.Sprintf("%s-%t", tg.Name, storage != nil))
			if err := c.Create(ctx, u, client.DryRunAll); err != nil {
				t.Errorf("%s: the API server refused the %s: %v", name, u.GetKind(), err)
			}
		}
	}
	// And the rules bite: the same PerconaServerMySQL without the unsafe flag for a
	// proxy-less async cluster is refused, so the acceptance above is not vacuous.
	u, err := perconaengine.PerconaServerMySQL(run, targets[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(u.Object, false, "spec", "unsafeFlags", "proxy"); err != nil {
		t.Fatal(err)
	}
	err = c.Create(ctx, u, client.DryRunAll)
	if err == nil || !strings.Contains(err.Error(), "'proxy.haproxy.enabled' must be true unless 'unsafeFlags.proxy' is enabled") {
		t.Errorf("want Percona's CEL rule to refuse async without proxy or unsafe flag, got %v", err)
	}
}

// A percona-server target through a full ladder: the operator creates the PerconaServerMySQL
// and its Secrets, the (fake) Percona operator reports it ready with an endpoint, the connection
// Secret points there, the ladder runs, and the server is torn down.
func TestPerconaServerThroughAFullLadder(t *testing.T) {
	restCfg, c := perconaAPI(t)
	ns := perconaNamespace(t, c, "percona-ps-ladder")
	startOperator(t, ns, operatorOptions{log: captured(t, "run_point_select_t4.txt"), restConfig: restCfg})
	kl := startKubeletOn(t, c, ns, succeedAll(t))
	fakePercona(t, c, ns, perconaengine.PerconaServerMySQLKind, func(u *unstructured.Unstructured) map[string]any {
		return map[string]any{"state": "ready", "host": u.GetName() + "-mysql-primary." + ns,
			"mysql": map[string]any{"ready": int64(1), "size": int64(1), "state": "ready"}}
	})
	run := perconaRun(ns, "ps", v1.Target{Name: "ps80", Engine: v1.EnginePerconaServer,
		Image: "percona/percona-server:8.0.46-37.1", MyCnf: "performance_schema = OFF"})
	run.Spec.Cleanup = v1.CleanupOnSuccess
	if err := c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	name := perconaengine.ResourceName(run, "ps80")

	// While the target runs, the server is the operator's PerconaServerMySQL, as configured.
	waitForOn(t, c, ns, run.Name, 30*time.Second, "the ladder to start", func(r *v1.BenchmarkRun) bool {
		return len(r.Status.Targets) == 1 && (r.Status.Targets[0].Phase == v1.TargetPreparing || r.Status.Targets[0].Phase.Finished() ||
			r.Status.Targets[0].Phase == v1.TargetRunning)
	})
	got := waitForOn(t, c, ns, run.Name, 60*time.Second, "the run to finish", finished)
	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("phase %s, want Succeeded; targets %+v", got.Status.Phase, got.Status.Targets)
	}
	ts := got.Status.Targets[0]
	if len(ts.Steps) != 3 || ts.Steps[2].Threads != 400 || ts.ServerVersion == "" {
		t.Errorf("target status %+v, want 3 steps up to 400 threads and a server version", ts)
	}
	want := []string{"probe", "prepare", "s01", "s02", "s03"}
	if jobs := kl.finished(); len(jobs) != len(want) {
		t.Errorf("Jobs %v, want one each of %v", jobs, want)
	}

	// Torn down on success: the resource and every Secret of the target.
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(perconaengine.PerconaServerMySQLKind)
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u); !apierrors.IsNotFound(err) {
		t.Errorf("PerconaServerMySQL %s still there after success with cleanup OnSuccess: %v", name, err)
	}
	secrets := &corev1.SecretList{}
	if err := c.List(context.Background(), secrets, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 0 {
		t.Errorf("%d Secrets left after teardown", len(secrets.Items))
	}
}

// What the percona-server engine creates, read back from the API server while the target waits
// for the (fake) Percona operator, then the connection Secret once it publishes the endpoint.
func TestPerconaServerObjectsAndConnectionSecret(t *testing.T) {
	restCfg, c := perconaAPI(t)
	ns := perconaNamespace(t, c, "percona-ps-objects")
	startOperator(t, ns, operatorOptions{log: captured(t, "run_point_select_t4.txt"), restConfig: restCfg})
	startKubeletOn(t, c, ns, func(*batchv1.Job) outcome { return outcome{pending: true} })
	var ready sync.Map
	fakePercona(t, c, ns, perconaengine.PerconaServerMySQLKind, func(u *unstructured.Unstructured) map[string]any {
		if _, ok := ready.Load(u.GetName()); !ok {
			return map[string]any{"state": "initializing"}
		}
		return map[string]any{"state": "ready", "host": u.GetName() + "-haproxy." + ns + ":3306"}
	})
	run := perconaRun(ns, "objects", v1.Target{Name: "ps84", Engine: v1.EnginePerconaServer,
		MyCnf: "max_connections = 2000\nperformance_schema = OFF", Percona: &v1.PerconaOptions{Proxy: v1.PerconaProxyHAProxy}})
	run.Spec.Storage = &v1.Storage{Size: resource.MustParse("5Gi")}
	if err := c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	name := perconaengine.ResourceName(run, "ps84")
	waitForOn(t, c, ns, run.Name, 20*time.Second, "the wait for the Percona operator", func(r *v1.BenchmarkRun) bool {
		c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing)
		return c != nil && strings.Contains(c.Message, "PerconaServerMySQL "+ns+"/"+name+" is initializing")
	})
	u := getPercona(t, c, perconaengine.PerconaServerMySQLKind, ns, name)
	if !metav1.IsControlledBy(u, getRun(t, c, run)) {
		t.Errorf("PerconaServerMySQL is not owned by the run: %v", u.GetOwnerReferences())
	}
	if got := nested[string](t, u, "spec", "mysql", "image"); got != perconaengine.DefaultPSImage {
		t.Errorf("mysql.image %q, want the operator release's default %q", got, perconaengine.DefaultPSImage)
	}
	if got := nested[string](t, u, "spec", "mysql", "clusterType"); got != "async" {
		t.Errorf("clusterType %q, want async", got)
	}
	if !nested[bool](t, u, "spec", "proxy", "haproxy", "enabled") || nested[bool](t, u, "spec", "orchestrator", "enabled") ||
		nested[bool](t, u, "spec", "unsafeFlags", "proxy") || !nested[bool](t, u, "spec", "unsafeFlags", "orchestrator") {
		t.Errorf("want HAProxy on, orchestrator off (unsafe flag set), no proxy unsafe flag: %v", u.Object["spec"])
	}
	cnf := nested[string](t, u, "spec", "mysql", "configuration")
	if !strings.Contains(cnf, "max_connections = 410") || !strings.HasSuffix(cnf, "max_connections = 2000\nperformance_schema = OFF\n") {
		t.Errorf("mysql.configuration should hold the operator's settings, then the target's:\n%s", cnf)
	}
	if got := nested[string](t, u, "spec", "upgradeOptions", "apply"); got != "disabled" {
		t.Errorf("upgradeOptions.apply %q, want disabled", got)
	}
	if got := nested[string](t, u, "spec", "mysql", "volumeSpec", "persistentVolumeClaim", "resources", "requests", "storage"); got != "5Gi" {
		t.Errorf("volume request %q, want 5Gi", got)
	}
	if fin := u.GetFinalizers(); len(fin) != 1 || fin[0] != "percona.com/delete-mysql-pvc" {
		t.Errorf("finalizers %v, want the PVC deletion finalizer", fin)
	}
	sel := nested[map[string]any](t, u, "spec", "mysql", "nodeSelector")
	if sel[specs.PoolLabel] != specs.PoolDatabase {
		t.Errorf("mysql.nodeSelector %v, want the database pool", sel)
	}
	if _, ok := nested[map[string]any](t, u, "spec", "mysql", "affinity", "advanced")["podAntiAffinity"]; !ok {
		t.Errorf("mysql.affinity.advanced lacks the exclusive anti-affinity")
	}
	users := &corev1.Secret{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: nested[string](t, u, "spec", "secretsName")}, users); err != nil {
		t.Fatalf("the Secret named by secretsName: %v", err)
	}
	for _, k := range perconaengine.SystemUsers[v1.EnginePerconaServer] {
		if len(users.Data[k]) != 24 {
			t.Errorf("system user %s has no generated password", k)
		}
	}
	env := nested[[]any](t, u, "spec", "mysql", "env")
	if len(env) != 3 || !strings.Contains(fmt.Sprint(env), "MYSQL_DATABASE") || !strings.Contains(fmt.Sprint(env), perconaengine.PasswordSecretName(run, "ps84")) {
		t.Errorf("mysql.env %v, want MYSQL_DATABASE, MYSQL_USER and MYSQL_PASSWORD from the password Secret", env)
	}
	conn := &corev1.Secret{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: specs.ConnectionSecretName(run, "ps84")}, conn); !apierrors.IsNotFound(err) {
		t.Errorf("connection Secret exists before the endpoint is known: %v", err)
	}

	ready.Store(name, true)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: specs.ConnectionSecretName(run, "ps84")}, conn)
		if err == nil {
			break
		}
		if !apierrors.IsNotFound(err) || time.Now().After(deadline) {
			t.Fatalf("no connection Secret once the server is ready: %v", err)
		}
	}
	pw := &corev1.Secret{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: perconaengine.PasswordSecretName(run, "ps84")}, pw); err != nil {
		t.Fatal(err)
	}
	wantConn := map[string]string{
		sysbench.SecretKeyHost: name + "-haproxy." + ns, sysbench.SecretKeyPort: "3306",
		sysbench.SecretKeyUser: "sbtest", sysbench.SecretKeyDatabase: "sbtest",
		sysbench.SecretKeyPassword: string(pw.Data[perconaengine.PasswordKey]), specs.SecretKeyRootPassword: string(users.Data["root"]),
	}
	for k, v := range wantConn {
		if string(conn.Data[k]) != v || v == "" {
			t.Errorf("connection Secret %s = %q, want %q", k, conn.Data[k], v)
		}
	}
}

// The Percona operator's error state fails the target with the operator's own message.
func TestPerconaErrorStateFailsTheTarget(t *testing.T) {
	restCfg, c := perconaAPI(t)
	ns := perconaNamespace(t, c, "percona-error")
	startOperator(t, ns, operatorOptions{log: captured(t, "run_point_select_t4.txt"), restConfig: restCfg})
	startKubeletOn(t, c, ns, succeedAll(t))
	now := metav1.Now().UTC().Format(time.RFC3339)
	fakePercona(t, c, ns, perconaengine.PerconaXtraDBClusterKind, func(u *unstructured.Unstructured) map[string]any {
		return map[string]any{"state": "error", "message": []any{"pxc: Back-off pulling image \"percona/percona-xtradb-cluster:9.9\""},
			"conditions": []any{map[string]any{"type": "error", "status": "True", "lastTransitionTime": now,
				"message": "pxc: Back-off pulling image \"percona/percona-xtradb-cluster:9.9\""}}}
	})
	fakePercona(t, c, ns, perconaengine.PerconaServerMySQLKind, func(u *unstructured.Unstructured) map[string]any {
		return map[string]any{"state": "error", "conditions": []any{map[string]any{"type": "ready", "status": "False",
			"reason": "MySQLNotReady", "lastTransitionTime": now, "message": "mysql: 0/1 pods ready: CrashLoopBackOff"}}}
	})
	run := perconaRun(ns, "broken",
		v1.Target{Name: "pxc99", Engine: v1.EnginePerconaXtraDBCluster, Image: "percona/percona-xtradb-cluster:9.9"},
		v1.Target{Name: "ps", Engine: v1.EnginePerconaServer},
	)
	if err := c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitForOn(t, c, ns, run.Name, 30*time.Second, "the run to fail", finished)
	if got.Status.Phase != v1.RunFailed {
		t.Fatalf("phase %s, want Failed", got.Status.Phase)
	}
	for i, want := range []string{
		`in state error: pxc: Back-off pulling image "percona/percona-xtradb-cluster:9.9"`,
		"in state error: mysql: 0/1 pods ready: CrashLoopBackOff",
	} {
		if ts := got.Status.Targets[i]; ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, want) {
			t.Errorf("target %s: %s %q, want Failed with %q", ts.Name, ts.Phase, ts.Message, want)
		}
	}
}

// A percona-xtradb-cluster target (5.7, through HAProxy) through a full ladder, kept afterwards
// (cleanup Never) so its resource can be read: declarative user and database, HAProxy.
func TestPerconaXtraDBClusterThroughAFullLadder(t *testing.T) {
	restCfg, c := perconaAPI(t)
	ns := perconaNamespace(t, c, "percona-pxc-ladder")
	startOperator(t, ns, operatorOptions{log: captured(t, "run_point_select_t4.txt"), restConfig: restCfg})
	startKubeletOn(t, c, ns, succeedAll(t))
	fakePercona(t, c, ns, perconaengine.PerconaXtraDBClusterKind, func(u *unstructured.Unstructured) map[string]any {
		return map[string]any{"state": "ready", "host": u.GetName() + "-haproxy." + ns, "observedGeneration": u.GetGeneration()}
	})
	run := perconaRun(ns, "pxc", v1.Target{Name: "pxc57", Engine: v1.EnginePerconaXtraDBCluster,
		Image: "percona/percona-xtradb-cluster:5.7.44-31.65", Percona: &v1.PerconaOptions{Proxy: v1.PerconaProxyHAProxy}})
	run.Spec.Cleanup = v1.CleanupNever
	if err := c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitForOn(t, c, ns, run.Name, 60*time.Second, "the run to finish", finished)
	if got.Status.Phase != v1.RunSucceeded || len(got.Status.Targets[0].Steps) != 3 {
		t.Fatalf("phase %s, targets %+v; want Succeeded with 3 steps", got.Status.Phase, got.Status.Targets)
	}
	name := perconaengine.ResourceName(run, "pxc57")
	if got.Status.Targets[0].Endpoint != "" && !strings.HasPrefix(got.Status.Targets[0].Endpoint, name+"-haproxy."+ns) {
		t.Errorf("endpoint %q, want the HAProxy service", got.Status.Targets[0].Endpoint)
	}
	u := getPercona(t, c, perconaengine.PerconaXtraDBClusterKind, ns, name)
	if img := nested[string](t, u, "spec", "pxc", "image"); img != "percona/percona-xtradb-cluster:5.7.44-31.65" {
		t.Errorf("pxc.image %q", img)
	}
	if !nested[bool](t, u, "spec", "haproxy", "enabled") || nested[bool](t, u, "spec", "proxysql", "enabled") {
		t.Errorf("want HAProxy and no ProxySQL: %v / %v", u.Object["spec"].(map[string]any)["haproxy"], u.Object["spec"].(map[string]any)["proxysql"])
	}
	users := nested[[]any](t, u, "spec", "users")
	if s := fmt.Sprint(users); len(users) != 1 || !strings.Contains(s, "dbs:[sbtest]") || !strings.Contains(s, "name:sbtest") ||
		!strings.Contains(s, perconaengine.PasswordSecretName(run, "pxc57")) {
		t.Errorf("users %v, want the sbtest user with database sbtest and the generated password", users)
	}
	if got := nested[string](t, u, "spec", "crVersion"); got != perconaengine.DefaultPXCCRVersion {
		t.Errorf("crVersion %q", got)
	}
}

func getRun(t *testing.T, c client.Client, run *v1.BenchmarkRun) *v1.BenchmarkRun {
	t.Helper()
	got := &v1.BenchmarkRun{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(run), got); err != nil {
		t.Fatal(err)
	}
	return got
}

// The engines tell the controller they can be watched only through SetWatched; without a watch
// Ready asks for a bounded recheck.
func TestPerconaReadyPollsOnlyWhenNotWatched(t *testing.T) {
	_, c := perconaAPI(t)
	ns := perconaNamespace(t, c, "percona-poll")
	e := perconaengine.NewServer(c, nil, testenv.Scheme)
	run := perconaRun(ns, "poll", v1.Target{Name: "ps", Engine: v1.EnginePerconaServer})
	for _, watched := range []bool{false, true} {
		e.SetWatched(watched)
		st, err := e.Ready(context.Background(), run, run.Spec.Targets[0])
		if err != nil {
			t.Fatal(err)
		}
		want := perconaengine.DefaultPollInterval
		if watched {
			want = 0
		}
		if st.Ready || st.RecheckAfter != want {
			t.Errorf("watched=%v: %+v, want not ready with RecheckAfter %s", watched, st, want)
		}
	}
}

// An earlier run's PerconaServerMySQL under the name a new run needs, stuck in deletion because
// no Percona operator runs its delete-PVC finalizer: the new run says what it waits for, and after
// the grace removes the Percona finalizer itself, so the name is never blocked for good.
func TestPerconaNameHeldByAStuckDeletion(t *testing.T) {
	restCfg, c := perconaAPI(t)
	ns := perconaNamespace(t, c, "percona-stuck")
	ctx := context.Background()
	target := v1.Target{Name: "ps84", Engine: v1.EnginePerconaServer}
	earlier := perconaRun(ns, "nightly", target)
	earlier.Spec.Storage = &v1.Storage{Size: resource.MustParse("5Gi")}
	stuck, err := perconaengine.PerconaServerMySQL(earlier, target)
	if err != nil {
		t.Fatal(err)
	}
	if len(stuck.GetFinalizers()) == 0 {
		t.Fatal("the builder set no finalizer: nothing to test")
	}
	// It was the earlier run's: that run, gone now, was its controller.
	earlier.UID = "uid-of-the-earlier-nightly"
	stuck.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(earlier, v1.GroupVersion.WithKind("BenchmarkRun"))})
	if err := c.Create(ctx, stuck); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, stuck); err != nil {
		t.Fatal(err)
	}
	startOperator(t, ns, operatorOptions{log: captured(t, "run_point_select_t4.txt"), restConfig: restCfg,
		stuckDeletionGrace: 3 * time.Second})
	startKubeletOn(t, c, ns, func(*batchv1.Job) outcome { return outcome{pending: true} })
	fakePercona(t, c, ns, perconaengine.PerconaServerMySQLKind, func(u *unstructured.Unstructured) map[string]any {
		return map[string]any{"state": "initializing"}
	})
	run := perconaRun(ns, "nightly", target)
	run.Spec.Storage = &v1.Storage{Size: resource.MustParse("5Gi")}
	if err := c.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	waitForOn(t, c, ns, run.Name, 10*time.Second, "the wait for the earlier resource", func(r *v1.BenchmarkRun) bool {
		cond := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing)
		return cond != nil && strings.Contains(cond.Message, "of an earlier run to be deleted")
	})
	// After the grace the earlier resource goes, and the run's own takes its name.
	name := perconaengine.ResourceName(run, "ps84")
	deadline := time.Now().Add(20 * time.Second)
	for {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(perconaengine.PerconaServerMySQLKind)
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
		if err == nil && metav1.IsControlledBy(u, getRun(t, c, run)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run's PerconaServerMySQL never replaced the stuck one (err %v, finalizers %v)", err, u.GetFinalizers())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r := getRun(t, c, run); r.Status.Targets[0].Phase.Finished() {
		t.Errorf("target %s %q: waiting for a stuck deletion must not fail it", r.Status.Targets[0].Phase, r.Status.Targets[0].Message)
	}
}

// A PerconaServerMySQL in deletion under the name a run needs that is not an earlier run's (no
// controller, or another one) keeps its Percona finalizers, whatever the grace: it waits for its
// own Percona operator, and removing them would skip the cleanup its owner asked for (its PVCs).
// The run says what it waits for.
func TestPerconaForeignStuckDeletionKeepsItsFinalizers(t *testing.T) {
	restCfg, c := perconaAPI(t)
	ctx := context.Background()
	target := v1.Target{Name: "ps84", Engine: v1.EnginePerconaServer}
	for i, tc := range []struct {
		name string
		refs []metav1.OwnerReference
	}{
		{"no controller", nil},
		{"a run of another name", []metav1.OwnerReference{{APIVersion: v1.GroupVersion.String(), Kind: "BenchmarkRun",
			Name: "weekly", UID: "uid-of-weekly", Controller: ptr.To(true)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := perconaNamespace(t, c, fmt.Sprintf("percona-foreign-stuck-%d", i))
			withStorage := perconaRun(ns, "nightly", target)
			withStorage.Spec.Storage = &v1.Storage{Size: resource.MustParse("5Gi")}
			theirs, err := perconaengine.PerconaServerMySQL(withStorage, target)
			if err != nil {
				t.Fatal(err)
			}
			finalizers := theirs.GetFinalizers()
			if len(finalizers) == 0 {
				t.Fatal("the builder set no finalizer: nothing to test")
			}
			theirs.SetOwnerReferences(tc.refs)
			if err := c.Create(ctx, theirs); err != nil {
				t.Fatal(err)
			}
			if err := c.Delete(ctx, theirs); err != nil {
				t.Fatal(err)
			}
			const grace = time.Second
			startOperator(t, ns, operatorOptions{restConfig: restCfg, stuckDeletionGrace: grace})
			run := perconaRun(ns, "nightly", target)
			run.Spec.Storage = &v1.Storage{Size: resource.MustParse("5Gi")}
			if err := c.Create(ctx, run); err != nil {
				t.Fatal(err)
			}
			waitForOn(t, c, ns, run.Name, 10*time.Second, "the run to say what it waits for", func(r *v1.BenchmarkRun) bool {
				cond := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing)
				return cond != nil && strings.Contains(cond.Message, "waiting for PerconaServerMySQL "+ns+"/"+theirs.GetName())
			})
			// Well past the grace, with the rechecks it brings: the finalizers are still there.
			for end := time.Now().Add(grace + 2*owned.Recheck); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
				got := getPercona(t, c, perconaengine.PerconaServerMySQLKind, ns, theirs.GetName())
				if fmt.Sprint(got.GetFinalizers()) != fmt.Sprint(finalizers) {
					t.Fatalf("finalizers %v of a resource that is not an earlier run's, want %v untouched", got.GetFinalizers(), finalizers)
				}
			}
			if r := getRun(t, c, run); r.Status.Targets[0].Phase != v1.TargetProvisioning {
				t.Errorf("target %s %q, want it waiting in Provisioning", r.Status.Targets[0].Phase, r.Status.Targets[0].Message)
			}
		})
	}
}

// Deleting a run lets its Percona resource go, Percona operator or not: with none running (as
// here), the delete-PVC finalizer the resource was created with is removed once the grace has
// passed, the run and the resource are gone, and a Warning says that the PVCs may be left.
func TestPerconaResourceReleasedWhenItsRunIsDeleted(t *testing.T) {
	restCfg, c := perconaAPI(t)
	ns := perconaNamespace(t, c, "percona-release")
	ctx := context.Background()
	target := v1.Target{Name: "ps84", Engine: v1.EnginePerconaServer}
	startOperator(t, ns, operatorOptions{restConfig: restCfg, stuckDeletionGrace: 2 * time.Second})
	run := perconaRun(ns, "doomed", target)
	run.Spec.Storage = &v1.Storage{Size: resource.MustParse("5Gi")}
	if err := c.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	name := perconaengine.ResourceName(run, "ps84")
	deadline := time.Now().Add(20 * time.Second)
	for {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(perconaengine.PerconaServerMySQLKind)
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err == nil && len(u.GetFinalizers()) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run never created its PerconaServerMySQL with its delete-PVC finalizer")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := c.Delete(ctx, getRun(t, c, run)); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(perconaengine.PerconaServerMySQLKind)
		rerr := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: run.Name}, &v1.BenchmarkRun{})
		uerr := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
		if apierrors.IsNotFound(rerr) && apierrors.IsNotFound(uerr) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deleted run (%v) or its PerconaServerMySQL (%v, finalizers %v) is still there", rerr, uerr, u.GetFinalizers())
		}
		time.Sleep(200 * time.Millisecond)
	}
	events := &corev1.EventList{}
	if err := c.List(ctx, events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Reason == "ServerFinalizerRemoved" && strings.Contains(e.Message, "percona.com/delete-mysql-pvc") {
			return
		}
	}
	t.Error("no ServerFinalizerRemoved Warning naming the removed finalizer")
}
