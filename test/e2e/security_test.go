//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
	"github.com/mysqlbench/mysqlbench-operator/test/clustertest"
)

// TestSecurityOnARealCluster runs with the operator installed for one namespace only
// (watchNamespaces) that enforces the restricted Pod Security Standard, as hack/e2e-local.sh
// sets it up in its second phase (E2E_SECURITY=1). It checks that:
//   - a run there succeeds: the server and sysbench pods pass the restricted admission;
//   - while a ladder step runs, the password is in neither the sysbench process's argv nor its
//     environment (/proc on the node) nor the container's spec as containerd holds it (what
//     `crictl inspect` shows);
//   - the server runs as uid 999, root is root@localhost only, and the benchmark user has no
//     more than the privileges sysbench needs on its database;
//   - the run's NetworkPolicy selects its server and admits only its sysbench pods;
//   - a reporter ConfigMap planted under the run's derived name stops the run's target before
//     any sysbench Job exists, and stays as it was;
//   - a run in a namespace the operator does not watch is left alone;
//   - the admission policy refuses a user who may update runs but not read a Secret when they
//     patch someone else's run that names it (a script or image of theirs), and admits their
//     label-only update;
//   - an external target whose Secret lacks its owner's opt-in label fails, no Job created.
func TestSecurityOnARealCluster(t *testing.T) {
	if os.Getenv("E2E_SECURITY") != "1" {
		t.Skip("E2E_SECURITY=1 runs it, with the operator installed for E2E_SECURITY_NAMESPACE only (hack/e2e-local.sh)")
	}
	ctx := context.Background()
	c := newClient(t)
	ns := env("E2E_SECURITY_NAMESPACE", "mysqlbench-e2e-restricted")
	nsObj := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: ns}, nsObj); err != nil {
		t.Fatalf("namespace %s: %v (hack/e2e-local.sh creates it before installing the operator for it)", ns, err)
	}
	if got := nsObj.Labels["pod-security.kubernetes.io/enforce"]; got != "restricted" {
		t.Fatalf("namespace %s enforces Pod Security %q, want restricted", ns, got)
	}
	image := env("E2E_SECURITY_IMAGE", "mariadb:10.11")
	step := 20 * time.Second

	// A run where the operator does not watch: nothing may happen to it.
	unwatched := env("E2E_UNWATCHED_NAMESPACE", "mysqlbench-e2e-unwatched")
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: unwatched}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	ignored := securityRun(unwatched, "ignored", image, step)
	recreate(t, c, ignored)

	// Both quick: nothing is provisioned.
	checkUpdateRechecked(t, c, unwatched)
	checkSecretOptIn(t, c, ns)

	// The attack the issue measured: a reporter ConfigMap planted before the run exists.
	planted := securityRun(ns, "planted", image, step)
	plantedCM := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: specs.ReporterConfigMapName(planted), Namespace: ns},
		Data:       map[string]string{"reporter.lua": `print(#os.getenv("MYSQLBENCH_PASSWORD"))`},
	}
	_ = c.Delete(ctx, plantedCM)
	if err := c.Create(ctx, plantedCM); err != nil {
		t.Fatal(err)
	}
	recreate(t, c, planted)

	run := securityRun(ns, "secure", image, step)
	recreate(t, c, run)

	var checkedProcess, checkedServer bool
	got := &v1.BenchmarkRun{}
	deadline := time.Now().Add(20 * time.Minute)
	for {
		if err := c.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			t.Fatal(err)
		}
		target := run.Spec.Targets[0].Name
		if got.Status.Phase == v1.RunRunning && !checkedServer {
			if ts := targetStatus(got, target); ts != nil && ts.Phase == v1.TargetRunning {
				checkServerAccounts(t, ns, specs.ServerName(got, target)+"-0")
				checkNetworkPolicy(t, c, got, target)
				checkedServer = true
			}
		}
		if !checkedProcess {
			if pod := runningSysbenchPod(t, c, got, specs.LadderStep(0, 1)); pod != nil {
				checkedProcess = checkSysbenchProcess(t, c, got, target, pod)
			}
		}
		if got.Status.Phase == v1.RunSucceeded || got.Status.Phase == v1.RunFailed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run not finished after 20m: %+v", got.Status)
		}
		time.Sleep(time.Second)
	}
	if got.Status.Phase != v1.RunSucceeded {
		t.Errorf("run %s in the restricted namespace: %s, want Succeeded: %+v", run.Name, got.Status.Phase, got.Status.Targets)
	}
	if !checkedProcess {
		t.Error("never saw the sysbench process of the first ladder step running: argv and environment not checked")
	}
	if !checkedServer {
		t.Error("never saw the target running: the server's accounts and the NetworkPolicy not checked")
	}

	// The planted reporter: the target failed naming it, no Job ran, the ConfigMap is as planted.
	p := &v1.BenchmarkRun{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(planted), p); err != nil {
		t.Fatal(err)
	}
	if p.Status.Phase != v1.RunFailed {
		t.Errorf("run %s with a planted reporter ConfigMap: phase %q, want Failed", planted.Name, p.Status.Phase)
	}
	if cond := meta.FindStatusCondition(p.Status.Conditions, v1.ConditionFailed); cond == nil || !strings.Contains(cond.Message, plantedCM.Name) {
		t.Errorf("run %s: Failed condition %+v, want it to name the planted ConfigMap %s", planted.Name, cond, plantedCM.Name)
	}
	jobs := &batchv1.JobList{}
	if err := c.List(ctx, jobs, client.InNamespace(ns), client.MatchingLabels{specs.LabelRun: planted.Name}); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) > 0 {
		t.Errorf("run %s with a planted reporter created %d Jobs, want none", planted.Name, len(jobs.Items))
	}
	left := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(plantedCM), left); err != nil {
		t.Errorf("the planted ConfigMap: %v, want it left alone", err)
	} else if left.Data["reporter.lua"] != plantedCM.Data["reporter.lua"] || len(left.OwnerReferences) > 0 {
		t.Errorf("the planted ConfigMap was changed: %+v", left)
	}

	// The unwatched namespace's run: no status, no children.
	ig := &v1.BenchmarkRun{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(ignored), ig); err != nil {
		t.Fatal(err)
	}
	if ig.Status.Phase != "" || ig.Status.ObservedGeneration != 0 {
		t.Errorf("run %s/%s in a namespace the operator does not watch has status %+v, want none", unwatched, ignored.Name, ig.Status)
	}

	for _, r := range []*v1.BenchmarkRun{got, p} {
		if err := c.Delete(ctx, r); err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
		waitGone(t, c, r)
	}
	_ = c.Delete(ctx, plantedCM)
	_ = c.Delete(ctx, ignored)
}

func securityRun(ns, name, image string, step time.Duration) *v1.BenchmarkRun {
	return &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.BenchmarkRunSpec{
			Targets:        []v1.Target{{Name: targetName(image), Image: image}},
			Workload:       v1.Workload{Script: "oltp_read_write", Tables: 2, TableSize: 5000},
			Ladder:         v1.Ladder{Threads: []int32{2}, StepDuration: &metav1.Duration{Duration: step}},
			SysbenchImage:  os.Getenv("E2E_SYSBENCH_IMAGE"),
			StepRetryLimit: ptr.To[int32](1),
			Cleanup:        v1.CleanupAlways,
		},
	}
}

// recreate deletes a run left by an earlier try, then creates it.
func recreate(t *testing.T, c client.Client, run *v1.BenchmarkRun) {
	t.Helper()
	_ = c.Delete(context.Background(), run)
	waitGone(t, c, run)
	if err := c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
}

func targetStatus(run *v1.BenchmarkRun, name string) *v1.TargetStatus {
	for i := range run.Status.Targets {
		if run.Status.Targets[i].Name == name {
			return &run.Status.Targets[i]
		}
	}
	return nil
}

// runningSysbenchPod is the run's sysbench pod of a ladder step while its container runs.
func runningSysbenchPod(t *testing.T, c client.Client, run *v1.BenchmarkRun, step string) *corev1.Pod {
	t.Helper()
	pods := &corev1.PodList{}
	if err := c.List(context.Background(), pods, client.InNamespace(run.Namespace), client.MatchingLabels{
		specs.LabelRun: specs.LabelValue(run.Name), specs.LabelComponent: specs.ComponentClient, specs.LabelStep: step}); err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		for _, cs := range pods.Items[i].Status.ContainerStatuses {
			if cs.Name == specs.SysbenchContainer && cs.State.Running != nil && cs.ContainerID != "" {
				return &pods.Items[i]
			}
		}
	}
	return nil
}

// checkSysbenchProcess reads the sysbench container as its node's containerd holds it and the
// sysbench process's argv and environment from /proc (the nodes are network namespaces of this
// host, so their processes are this host's), and fails if the target's password is in any of
// them. It returns false when the container ended before it could be read.
func checkSysbenchProcess(t *testing.T, c client.Client, run *v1.BenchmarkRun, target string, pod *corev1.Pod) bool {
	t.Helper()
	secret := &corev1.Secret{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: run.Namespace,
		Name: specs.ConnectionSecretName(run, target)}, secret); err != nil {
		t.Fatal(err)
	}
	password := string(secret.Data["password"])
	if len(password) < 8 {
		t.Fatalf("connection Secret's password is %d characters, want a generated one", len(password))
	}
	var id string
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == specs.SysbenchContainer {
			id = strings.TrimPrefix(cs.ContainerID, "containerd://")
		}
	}
	info, err := ctr(pod.Spec.NodeName, "containers", "info", id)
	if err != nil {
		t.Logf("container %s: %v (ended before it was read?)", id, err)
		return false
	}
	var spec struct {
		Spec struct {
			Process struct {
				Args []string `json:"args"`
				Env  []string `json:"env"`
			} `json:"process"`
		} `json:"Spec"`
	}
	if err := json.Unmarshal([]byte(info), &spec); err != nil {
		t.Fatalf("ctr containers info %s: %v", id, err)
	}
	if len(spec.Spec.Process.Args) == 0 {
		t.Fatalf("ctr containers info %s shows no process args: %.500s", id, info)
	}
	if strings.Contains(info, password) {
		t.Errorf("the password is in container %s's spec as containerd holds it (crictl inspect shows it)", id)
	}
	tasks, err := ctr(pod.Spec.NodeName, "tasks", "ls")
	if err != nil {
		t.Logf("tasks: %v", err)
		return false
	}
	pid := ""
	for _, line := range strings.Split(tasks, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == id && f[2] == "RUNNING" {
			pid = f[1]
		}
	}
	if pid == "" {
		return false
	}
	cmdline, err1 := os.ReadFile("/proc/" + pid + "/cmdline")
	environ, err2 := os.ReadFile("/proc/" + pid + "/environ")
	if err1 != nil || err2 != nil {
		t.Logf("process %s: %v %v (ended before it was read?)", pid, err1, err2)
		return false
	}
	argv := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	t.Logf("sysbench process %s on node %s: argv %q", pid, pod.Spec.NodeName, argv)
	if !strings.HasSuffix(argv[0], "sysbench") {
		t.Errorf("process %s of container %s runs %q, want sysbench itself (the launcher execs it)", pid, id, argv[0])
	}
	if !strings.Contains(string(cmdline), "--config-file=") {
		t.Errorf("sysbench's argv %q has no --config-file: where does its password come from?", argv)
	}
	if bytes.Contains(cmdline, []byte(password)) {
		t.Errorf("the password is in the sysbench process's argv (/proc/%s/cmdline)", pid)
	}
	if bytes.Contains(environ, []byte(password)) {
		t.Errorf("the password is in the sysbench process's environment (/proc/%s/environ)", pid)
	}
	return true
}

// ctr runs containerd's ctr on a node of the local cluster (test/localcluster/cluster.sh ctr).
func ctr(node string, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	cmd := exec.Command(env("CLUSTER_SH", "test/localcluster/cluster.sh"), append([]string{"ctr", node}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("cluster.sh ctr %s %v: %w: %s", node, args, err, errOut.String())
	}
	return out.String(), nil
}

// checkServerAccounts reads, inside the server pod, who the server runs as and which accounts
// and grants it has.
func checkServerAccounts(t *testing.T, ns, pod string) {
	t.Helper()
	if uid := podExec(t, ns, pod, "id -u"); uid != "999" {
		t.Errorf("server pod %s runs as uid %q, want 999", pod, uid)
	}
	if hosts := serverVariable(t, ns, pod, "GROUP_CONCAT(host ORDER BY host) FROM mysql.user WHERE user = 'root'"); hosts != "localhost" {
		t.Errorf("root's hosts on %s: %q, want localhost only", pod, hosts)
	}
	grants := serverSQL(t, ns, pod, "SHOW GRANTS FOR 'sbtest'@'%'")
	t.Logf("grants of sbtest@%%:\n%s", grants)
	// Beyond its database the account has exactly what the server snapshots read with
	// (sysbench.ServerStatsGrants): the global PROCESS and SELECT on performance_schema; and
	// sysbench.Privileges on mysqlslap's own schema (sysbench.MysqlslapSchema).
	seen := map[string]string{}
	for _, line := range strings.Split(grants, "\n") {
		on, to := strings.Index(line, " ON "), strings.Index(line, " TO ")
		if !strings.HasPrefix(line, "GRANT ") || on < 0 || to < on {
			t.Errorf("sbtest@%% has a grant this test cannot read: %s", line)
			continue
		}
		privileges, object := line[len("GRANT "):on], line[on+len(" ON "):to]
		seen[object] = privileges
		switch object {
		case "*.*":
			if privileges != "USAGE" && privileges != "PROCESS" {
				t.Errorf("sbtest@%% has global privileges beyond PROCESS: %s", line)
			}
		case "`performance_schema`.*":
			if privileges != "SELECT" {
				t.Errorf("sbtest@%% may do more than read performance_schema: %s", line)
			}
		case "`sbtest`.*":
		case "`" + sysbench.MysqlslapSchema + "`.*":
			// mysqlslap's own schema, which it drops and re-creates at every step: what
			// sysbench gets on its database, no more.
			if privileges != strings.Join(sysbench.Privileges, ", ") {
				t.Errorf("sbtest@%% has other privileges on mysqlslap's schema than %v: %s", sysbench.Privileges, line)
			}
		default:
			t.Errorf("sbtest@%% has privileges beyond its database, mysqlslap's schema and the server's counters: %s", line)
		}
		for _, too := range []string{"ALL PRIVILEGES", "GRANT OPTION", "SUPER", "FILE", "SHUTDOWN"} {
			if strings.Contains(line, too) {
				t.Errorf("sbtest@%% has %s: %s", too, line)
			}
		}
	}
	if _, ok := seen["`sbtest`.*"]; !ok {
		t.Errorf("sbtest@%% has no grant on its database sbtest: %s", grants)
	}
	if _, ok := seen["`"+sysbench.MysqlslapSchema+"`.*"]; !ok {
		t.Errorf("sbtest@%% has no grant on mysqlslap's schema %s, which workload.client mysqlslap needs: %s", sysbench.MysqlslapSchema, grants)
	}
	if seen["*.*"] != "PROCESS" || seen["`performance_schema`.*"] != "SELECT" {
		t.Errorf("sbtest@%% lacks PROCESS or SELECT on performance_schema, which the server snapshots read with: %s", grants)
	}
}

// serverSQL runs statements as root@localhost inside the server pod (socket, the root password
// from the pod's environment) and returns the rows, tab-separated.
func serverSQL(t *testing.T, ns, pod, sql string) string {
	t.Helper()
	return podExec(t, ns, pod, `client=$(command -v mariadb || command -v mysql); `+
		`MYSQL_PWD="$MYSQL_ROOT_PASSWORD" exec "$client" -uroot -N -B -e "`+sql+`"`)
}

// podExec runs a shell command in the server container.
func podExec(t *testing.T, ns, pod, script string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(env("KUBECTL", "kubectl"), "exec", "-n", ns, pod, "-c", "mysql", "--", "sh", "-c", script)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Errorf("kubectl exec %s %q: %v: %s", pod, script, err, errOut.String())
	}
	return strings.TrimSpace(out.String())
}

// checkNetworkPolicy finds the run's NetworkPolicy for the target: controlled by the run,
// selecting the server pod, admitting only the run's sysbench pods on the MySQL port.
func checkNetworkPolicy(t *testing.T, c client.Client, run *v1.BenchmarkRun, target string) {
	t.Helper()
	list := &networkingv1.NetworkPolicyList{}
	if err := c.List(context.Background(), list, client.InNamespace(run.Namespace)); err != nil {
		t.Fatal(err)
	}
	server := &corev1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: run.Namespace, Name: specs.ServerName(run, target) + "-0"}, server); err != nil {
		t.Fatal(err)
	}
	for _, np := range list.Items {
		if !metav1.IsControlledBy(&np, run) {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil || !sel.Matches(labels.Set(server.Labels)) {
			continue
		}
		if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) != 1 || np.Spec.Ingress[0].From[0].PodSelector == nil {
			t.Errorf("NetworkPolicy %s ingress %+v, want one rule from the run's sysbench pods", np.Name, np.Spec.Ingress)
			return
		}
		from, _ := metav1.LabelSelectorAsSelector(np.Spec.Ingress[0].From[0].PodSelector)
		sysbench := map[string]string{specs.LabelRun: specs.LabelValue(run.Name), specs.LabelComponent: specs.ComponentClient,
			specs.LabelTarget: target, specs.LabelManagedBy: specs.ManagedBy, specs.LabelName: "mysqlbench"}
		if !from.Matches(labels.Set(sysbench)) || from.Matches(labels.Set{specs.LabelComponent: specs.ComponentClient}) {
			t.Errorf("NetworkPolicy %s admits %s, want exactly the run's sysbench pods", np.Name, from)
		}
		return
	}
	t.Errorf("no NetworkPolicy of run %s selects its server pod %s", run.Name, server.Name)
}

// checkUpdateRechecked: a run naming Secret prod-db waits in namespace ns (one the operator does
// not watch, so it stays as created, like a run waiting in the node queue). e2e-sec-bob may get,
// update and patch runs there but may not get prod-db: his patches that put his own Lua script or
// sysbench image next to prod-db are refused by the admission policy, naming the Secret; a label
// is admitted.
func checkUpdateRechecked(t *testing.T, c client.Client, ns string) {
	t.Helper()
	ctx := context.Background()
	const bobName = "e2e-sec-bob"
	for _, o := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "prod-db", Namespace: ns,
			Labels: map[string]string{v1.LabelAllowBenchmark: v1.AllowBenchmark}},
			StringData: map[string]string{"host": "db.invalid", "port": "3306", "user": "u", "password": "not-bobs"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bob-script", Namespace: ns}, Data: map[string]string{"bench.lua": "-- bob's"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "bob-runs", Namespace: ns}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"mysqlbench.io"}, Resources: []string{"benchmarkruns"}, Verbs: []string{"get", "update", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"bob-script"}, Verbs: []string{"get"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bob-runs", Namespace: ns},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: bobName}},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "bob-runs"}},
	} {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	run := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "names-prod-db", Namespace: ns}, Spec: v1.BenchmarkRunSpec{
		Targets:  []v1.Target{{Name: "prod", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "prod-db"}}},
		Workload: v1.Workload{Script: "oltp_point_select"},
		Ladder:   v1.Ladder{Threads: []int32{1}},
	}}
	recreate(t, c, run)
	defer func() { _ = c.Delete(ctx, run) }()
	bob := clustertest.NewClientAs(t, bobName)
	patch := func(edit func(*v1.BenchmarkRun)) error {
		got := &v1.BenchmarkRun{}
		if err := bob.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return err
		}
		base := got.DeepCopy()
		edit(got)
		return bob.Patch(ctx, got, client.MergeFrom(base))
	}
	image := func(r *v1.BenchmarkRun) { r.Spec.SysbenchImage = "registry.example/bob/sysbench:1.0.20" }
	want := "user " + bobName + " may not get every Secret that spec.targets[].secretRef names (prod-db) in namespace " + ns +
		", so may not change the spec of BenchmarkRun " + run.Name
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		// RBAC reaches the API server's caches a moment after its create.
		err = patch(image)
		if (err != nil && strings.Contains(err.Error(), "ValidatingAdmissionPolicy")) || time.Now().After(deadline) {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s setting his sysbench image on a run naming prod-db: %v, want the admission policy's refusal %q", bobName, err, want)
	}
	err = patch(func(r *v1.BenchmarkRun) {
		r.Spec.Workload.Script = ""
		r.Spec.Workload.CustomScript = &v1.ConfigMapKeySelector{Name: "bob-script", Key: "bench.lua"}
	})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s setting his Lua script on a run naming prod-db: %v, want the admission policy's refusal %q", bobName, err, want)
	}
	if err := patch(func(r *v1.BenchmarkRun) { r.Labels = map[string]string{"seen-by": "bob"} }); err != nil {
		t.Errorf("%s labelling the run: %v, want it admitted (nothing that runs changes)", bobName, err)
	}
	got := &v1.BenchmarkRun{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.SysbenchImage != "" || got.Spec.Workload.CustomScript != nil {
		t.Errorf("the run was changed by %s: %+v", bobName, got.Spec)
	}
}

// checkSecretOptIn: an external target whose Secret has no mysqlbench.io/allow-benchmark label
// fails naming the Secret and the label, and no Job of the run is ever created.
func checkSecretOptIn(t *testing.T, c client.Client, ns string) {
	t.Helper()
	ctx := context.Background()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "unconsented-db", Namespace: ns},
		StringData: map[string]string{"host": "db.invalid", "port": "3306", "user": "u", "password": "not-for-runs"}}
	if err := c.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	run := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "unconsented", Namespace: ns}, Spec: v1.BenchmarkRunSpec{
		Targets:  []v1.Target{{Name: "prod", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: secret.Name}}},
		Workload: v1.Workload{Script: "oltp_point_select"},
		Ladder:   v1.Ladder{Threads: []int32{1}},
	}}
	recreate(t, c, run)
	got := &v1.BenchmarkRun{}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			t.Fatal(err)
		}
		if got.Status.Phase == v1.RunFailed || got.Status.Phase == v1.RunSucceeded || time.Now().After(deadline) {
			break
		}
	}
	want := "Secret " + ns + "/" + secret.Name + " named by target prod does not carry the label " + v1.LabelAllowBenchmark
	if ts := targetStatus(got, "prod"); got.Status.Phase != v1.RunFailed || ts == nil || !strings.Contains(ts.Message, want) {
		t.Errorf("run %s whose Secret lacks the opt-in: phase %q, targets %+v; want Failed saying %q", run.Name, got.Status.Phase, got.Status.Targets, want)
	}
	jobs := &batchv1.JobList{}
	if err := c.List(ctx, jobs, client.InNamespace(ns), client.MatchingLabels{specs.LabelRun: run.Name}); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) > 0 {
		t.Errorf("run %s whose Secret lacks the opt-in created %d Jobs, want none", run.Name, len(jobs.Items))
	}
	if err := c.Delete(ctx, run); err != nil && !apierrors.IsNotFound(err) {
		t.Error(err)
	}
	waitGone(t, c, run)
	_ = c.Delete(ctx, secret)
}
