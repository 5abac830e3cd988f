//go:build e2e

// Package e2e runs a real BenchmarkRun on whatever cluster the kubeconfig names: kind (public
// images, the default) or the project's local cluster (images from its registry). It needs the
// operator installed (make kind-deploy, or the local cluster's Helm install), nodes labelled and
// tainted as the database and client pools, and kubectl on PATH (or $KUBECTL).
//
//	make test-e2e                         # kind: mysql:8.4, mysql:9.7, mariadb:11.8
//	E2E_IMAGES=mysql:9.7,mariadb:10.11 E2E_SYSBENCH_IMAGE=... make test-e2e
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/test/clustertest"
)

var (
	env       = clustertest.Env
	newClient = clustertest.NewClient
)

// TestBenchmarkRunOnARealCluster runs, for every image of E2E_IMAGES, a target through a
// two-step ladder with a my.cnf override (read back from the server while its ladder runs) and a
// target whose my.cnf the server rejects, which must fail with the server's own first error.
func TestBenchmarkRunOnARealCluster(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	ns := e2eNamespace(ctx, t, c)
	images := strings.Split(env("E2E_IMAGES", "mysql:9.7,mariadb:11.8"), ",")
	step := e2eStep(t, "10s")

	run := &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e", Namespace: ns},
		Spec: v1.BenchmarkRunSpec{
			Workload: v1.Workload{Script: "oltp_point_select", Tables: 2, TableSize: 10000},
			Ladder: v1.Ladder{Threads: []int32{1, 4}, StepDuration: &metav1.Duration{Duration: step},
				Warmup: &metav1.Duration{Duration: 5 * time.Second}},
			SysbenchImage:  os.Getenv("E2E_SYSBENCH_IMAGE"),
			StepRetryLimit: ptr.To[int32](1),
			// Each server goes once its ladder is done: servers are exclusive, so a kept server
			// would hold the database node a small cluster has only one of.
			Cleanup: v1.CleanupAlways,
		},
	}
	// The override is read back inside each server while its ladder runs (it is deleted after):
	// performance_schema explicitly ON (MariaDB defaults it OFF) and a table_open_cache no
	// image defaults to.
	const override, overrideWant = "performance_schema = ON\ntable_open_cache = 1234", "1\t1234"
	wantVersion := map[string]string{} // target -> the version prefix its image tag promises
	wantPS := map[string]string{}
	for _, img := range images {
		name := targetName(img)
		run.Spec.Targets = append(run.Spec.Targets,
			v1.Target{Name: name, Image: img, MyCnf: override},
			v1.Target{Name: name + "-broken", Image: img, MyCnf: "no_such_server_option_mysqlbench = 1"})
		wantVersion[name] = tagVersion(img)
		wantPS[name] = overrideWant
	}
	_ = c.Delete(ctx, run)
	waitGone(t, c, run)
	if err := c.Create(ctx, run); err != nil {
		t.Fatal(err)
	}

	timeout, err := time.ParseDuration(env("E2E_TIMEOUT", "40m"))
	if err != nil {
		t.Fatal(err)
	}
	seenPS := map[string]string{}
	placed := map[string]placement{} // pod name -> where the scheduler put it, seen while it existed
	got := &v1.BenchmarkRun{}
	deadline := time.Now().Add(timeout)
	for {
		if err := c.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			t.Fatal(err)
		}
		recordPlacement(t, c, ns, placed)
		if cur := got.Status.CurrentTarget; got.Status.Phase == v1.RunRunning && wantPS[cur] != "" && seenPS[cur] == "" {
			seenPS[cur] = serverVariable(t, ns, specs.ServerName(got, cur)+"-0", "@@performance_schema, @@table_open_cache")
		}
		if got.Status.Phase == v1.RunSucceeded || got.Status.Phase == v1.RunFailed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run not finished after %s: %+v", timeout, got.Status)
		}
		time.Sleep(2 * time.Second)
	}

	for _, ts := range got.Status.Targets {
		t.Logf("target %s: %s, server %q, %d steps, %s", ts.Name, ts.Phase, ts.ServerVersion, len(ts.Steps), ts.Message)
		if strings.HasSuffix(ts.Name, "-broken") {
			// The server's own words: "[ERROR] ... unknown variable 'no_such_server_option_mysqlbench=1'".
			if ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, "server did not start") ||
				!strings.Contains(ts.Message, "unknown variable 'no_such_server_option_mysqlbench=1'") {
				t.Errorf("target %s: %s %q, want Failed saying the server did not start, with the server's error naming the bad option",
					ts.Name, ts.Phase, ts.Message)
			}
			// Which exit the operator saw first depends on timing (it is exit 1 unless the
			// kubelet restarted the container before the operator read the pod); each exit of a
			// config error says the same.
			if !strings.Contains(ts.FirstServerExit, "no_such_server_option_mysqlbench") {
				t.Errorf("target %s: firstServerExit %q, want the earliest exit seen, with the server's error", ts.Name, ts.FirstServerExit)
			}
			continue
		}
		if ts.Phase != v1.TargetSucceeded || len(ts.Steps) != len(run.Spec.Ladder.Threads) {
			t.Errorf("target %s: %s, %d steps, want Succeeded with %d", ts.Name, ts.Phase, len(ts.Steps), len(run.Spec.Ladder.Threads))
		}
		if want := wantVersion[ts.Name]; !versionMatches(ts.ServerVersion, want) {
			t.Errorf("target %s: the server says VERSION() = %q, want %s.x as its image tag says", ts.Name, ts.ServerVersion, want)
		}
		for _, s := range ts.Steps {
			if s.QPS.Total <= 0 || s.Latency.AvgMs <= 0 || s.Latency.MinMs > s.Latency.AvgMs || s.Latency.AvgMs > s.Latency.MaxMs {
				t.Errorf("target %s, %d threads: %+v", ts.Name, s.Threads, s)
			}
		}
	}
	if cond := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionFailed); cond == nil || !strings.Contains(cond.Message, "-broken") {
		t.Errorf("Failed condition %+v, want it to name a broken target", cond)
	}

	assertPlacement(t, c, placed)
	for target, want := range wantPS {
		if seenPS[target] != want {
			t.Errorf("@@performance_schema, @@table_open_cache on %s's server were %q while its ladder ran, want %q", target, seenPS[target], want)
		}
	}
	report := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: got.Status.ResultsConfigMap}, report); err != nil {
		t.Fatal(err)
	}
	t.Logf("report.md:\n%s", report.Data["report.md"])

	// The results database (the local cluster's MariaDB, in a namespace of its own) holds the
	// run as its status says, failed targets and all, read back by SQL.
	if clustertest.HasResultsDatabase(t, c) {
		stored := clustertest.WaitStored(t, c, got, 2*time.Minute)
		steps, counters := clustertest.CheckStoredRun(t, stored, true)
		t.Logf("results database: run %s stored with %d steps and %d server counter rows", got.UID, steps, counters)
	}

	// Deleting the run leaves nothing behind (the real garbage collector).
	if err := c.Delete(ctx, got, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, c, got)
	assertNoChildren(t, c, ns, got.Name)
}

// e2eNamespace creates the suite's namespace (E2E_NAMESPACE) unless it exists, and names it.
func e2eNamespace(ctx context.Context, t *testing.T, c client.Client) string {
	t.Helper()
	ns := env("E2E_NAMESPACE", "mysqlbench-e2e")
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return ns
}

// e2eStep is the ladder step duration E2E_STEP gives, def when unset.
func e2eStep(t *testing.T, def string) time.Duration {
	t.Helper()
	step, err := time.ParseDuration(env("E2E_STEP", def))
	if err != nil {
		t.Fatalf("E2E_STEP: %v", err)
	}
	return step
}

// e2eThreads is the thread ladder the variable name holds ("1,2"), else def.
func e2eThreads(t *testing.T, name, def string) []int32 {
	t.Helper()
	var threads []int32
	for _, s := range strings.Split(env(name, def), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want thread counts such as 1,2", name, os.Getenv(name))
		}
		threads = append(threads, int32(n))
	}
	return threads
}

// targetName turns an image reference into a target name: "mysql:9.7" -> "mysql-9-7",
// "percona/percona-server:8.0" -> "percona-server-8-0".
func targetName(image string) string {
	name := image[strings.LastIndex(image, "/")+1:]
	return strings.NewReplacer(":", "-", ".", "-", "_", "-").Replace(strings.ToLower(name))
}

// tagVersion is the version an image's tag promises ("mysql:9.7" -> "9.7"), or "" for tags that
// are not versions ("latest").
func tagVersion(image string) string {
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return ""
	}
	tag := image[i+1:]
	for _, r := range tag {
		if (r < '0' || r > '9') && r != '.' {
			return ""
		}
	}
	return tag
}

// versionMatches says whether a VERSION() answer ("9.7.4-2", "11.8.6-MariaDB-0+deb13u1") is of the
// version a tag promises ("9.7", "11.8"); any version matches an empty promise.
func versionMatches(got, want string) bool {
	if want == "" {
		return got != ""
	}
	rest, ok := strings.CutPrefix(got, want)
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '-')
}

type placement struct{ component, node string }

// recordPlacement notes the node of every scheduled pod of the run; servers are deleted once
// their target is done, so their placement is read while they exist.
func recordPlacement(t *testing.T, c client.Client, ns string, placed map[string]placement) {
	t.Helper()
	pods := &corev1.PodList{}
	if err := c.List(context.Background(), pods, client.InNamespace(ns),
		client.MatchingLabels{specs.LabelManagedBy: specs.ManagedBy}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" {
			placed[p.Name] = placement{component: p.Labels[specs.LabelComponent], node: p.Spec.NodeName}
		}
	}
}

// assertPlacement checks where the real scheduler put every pod of the run.
func assertPlacement(t *testing.T, c client.Client, placed map[string]placement) {
	t.Helper()
	nodes := map[string]string{}
	nodeList := &corev1.NodeList{}
	if err := c.List(context.Background(), nodeList); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodeList.Items {
		nodes[n.Name] = n.Labels[specs.PoolLabel]
	}
	var servers, clients int
	for name, p := range placed {
		pool := nodes[p.node]
		switch p.component {
		case specs.ComponentServer:
			servers++
			if pool != specs.PoolDatabase {
				t.Errorf("server pod %s on node %s (pool %q), want the database pool", name, p.node, pool)
			}
		case specs.ComponentClient:
			clients++
			if pool != specs.PoolClient {
				t.Errorf("sysbench pod %s on node %s (pool %q), want the client pool", name, p.node, pool)
			}
		}
	}
	if servers == 0 || clients == 0 {
		t.Errorf("saw %d server and %d sysbench pods scheduled; want both", servers, clients)
	}
	t.Logf("placement: %d server pods on the database pool, %d sysbench pods on the client pool", servers, clients)
}

// serverVariable reads a server variable inside the server pod with its own client and the root
// password from the pod's environment, so the password is never on a command line here.
func serverVariable(t *testing.T, ns, pod, variable string) string {
	t.Helper()
	kubectl := env("KUBECTL", "kubectl")
	script := `client=$(command -v mariadb || command -v mysql); ` +
		`MYSQL_PWD="$MYSQL_ROOT_PASSWORD" exec "$client" -uroot -N -B -e "SELECT ` + variable + `"`
	var out, errOut bytes.Buffer
	cmd := exec.Command(kubectl, "exec", "-n", ns, pod, "-c", "mysql", "--", "sh", "-c", script)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Errorf("kubectl exec %s: %v: %s", pod, err, errOut.String())
		return ""
	}
	return strings.TrimSpace(out.String())
}

// waitSucceeded polls the run until it finished, and fails the test unless it Succeeded within
// timeout.
func waitSucceeded(ctx context.Context, t *testing.T, c client.Client, run *v1.BenchmarkRun, timeout time.Duration) *v1.BenchmarkRun {
	t.Helper()
	got := &v1.BenchmarkRun{}
	deadline := time.Now().Add(timeout)
	for {
		if err := c.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			t.Fatal(err)
		}
		if got.Status.Phase == v1.RunSucceeded || got.Status.Phase == v1.RunFailed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run not finished after %s: %+v", timeout, got.Status)
		}
		time.Sleep(2 * time.Second)
	}
	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("run %s: %s, want Succeeded: %+v", run.Name, got.Status.Phase, got.Status.Targets)
	}
	return got
}

func waitGone(t testing.TB, c client.Client, run *v1.BenchmarkRun) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		err := c.Get(context.Background(), client.ObjectKeyFromObject(run), &v1.BenchmarkRun{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s still exists after 5m", run.Name)
		}
		time.Sleep(2 * time.Second)
	}
}

// assertNoChildren waits for the garbage collector to remove everything labelled with the run.
func assertNoChildren(t *testing.T, c client.Client, ns, run string) {
	t.Helper()
	sel := client.MatchingLabels{specs.LabelRun: run}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var left []string
		for _, l := range []client.ObjectList{&appsv1.StatefulSetList{}, &batchv1.JobList{}, &corev1.PodList{},
			&corev1.ConfigMapList{}, &corev1.SecretList{}, &corev1.ServiceList{}, &corev1.PersistentVolumeClaimList{}} {
			if err := c.List(context.Background(), l, client.InNamespace(ns), sel); err != nil {
				t.Fatal(err)
			}
			items, _ := meta.ExtractList(l)
			for _, o := range items {
				left = append(left, fmt.Sprintf("%T %s", o, o.(client.Object).GetName()))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("left behind after deleting the run: %v", left)
		}
		time.Sleep(2 * time.Second)
	}
}
