package run_test

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
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
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
		ps = filepath.Join("..", "..", "..", "shared", "vendor-crds", "percona-server-mysql-operator-v1.2.0", "crd.yaml")
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
		percona.env, percona.cfg, percona.err = testenv.Start(filepath.Join("..", ".."), ps, pxc)
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
