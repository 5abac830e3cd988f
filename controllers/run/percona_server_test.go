package run_test

import (
	"context"
	"fmt"
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
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	perconaengine "github.com/mysqlbench/mysqlbench-operator/internal/engine/percona"
	perconadriver "github.com/mysqlbench/mysqlbench-operator/internal/engine/percona/driver"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

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
	e := perconadriver.NewServer(c, nil, testenv.Scheme)
	run := perconaRun(ns, "poll", v1.Target{Name: "ps", Engine: v1.EnginePerconaServer})
	for _, watched := range []bool{false, true} {
		e.SetWatched(watched)
		st, err := e.Ready(context.Background(), run, run.Spec.Targets[0])
		if err != nil {
			t.Fatal(err)
		}
		want := perconadriver.DefaultPollInterval
		if watched {
			want = 0
		}
		if st.Ready || st.RecheckAfter != want {
			t.Errorf("watched=%v: %+v, want not ready with RecheckAfter %s", watched, st, want)
		}
	}
}
