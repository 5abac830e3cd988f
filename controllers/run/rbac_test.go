package run_test

// Least privilege: the manager's RBAC is what its code calls, no more and no less. Every manager
// the tests start (startOperator) sends its requests through managerCalls; when the suite ends,
// checkManagerRBAC compares what was called with the roles the chart and kustomize bind:
//
//   - every call must be granted: a call in a namespace by the manager role
//     (config/rbac/role.yaml, generated from the +kubebuilder:rbac markers; bound per watched
//     namespace when the operator is installed with watchNamespaces), a call across namespaces or
//     on a cluster-scoped resource by the cluster-scoped role (manager_cluster_role.yaml, always
//     bound by a ClusterRoleBinding). The suite's managers cache only their test's namespaces,
//     as a manager with --watch-namespaces does;
//   - every granted verb must have been called, unless notCalledInEnvtest below says why envtest
//     cannot call it and which test proves the code needs it. This half runs only when the whole
//     suite ran and passed (no -run, -skip or -short).
//
// The tests' own clients (k8s, the fake kubelet) are not recorded. The leader election Role and
// the metrics auth role are checked in test/helm, where the manager runs as its ServiceAccount.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/apicalls"
	perconaengine "github.com/mysqlbench/mysqlbench-operator/internal/engine/percona"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/stepjob"
)

// managerCalls records the API calls of every manager the tests start.
var managerCalls = apicalls.NewRecorder()

const (
	managerRoleFile        = "role.yaml"
	managerClusterRoleFile = "manager_cluster_role.yaml"
)

// notCalled is a grant of a role file that no request of the suite can use.
type notCalled struct {
	file  string
	grant apicalls.Grant
	why   string
}

// notCalledInEnvtest are the grants the suite cannot see used, each with why and with the test
// that proves the code needs it. Keep it short: anything else the manager needs must be called
// by a test.
var notCalledInEnvtest = []notCalled{{
	file:  managerRoleFile,
	grant: apicalls.Grant{Group: "", Resource: "pods/log", Verb: "get"},
	why: "a pod's log comes from its kubelet, which envtest lacks: the suite plays it with fakeLogs. " +
		"cmd/main.go wires stepjob.ClientsetLogs, and TestPodLogsAreReadThroughPodsLog proves it makes exactly this call",
}, {
	file:  managerRoleFile,
	grant: apicalls.Grant{Group: "mysqlbench.io", Resource: "benchmarkruns/finalizers", Verb: "update"},
	why: "no request uses it: the OwnerReferencesPermissionEnforcement admission plugin (on in OpenShift, off in envtest) " +
		"requires it to create an object whose owner reference to a run sets blockOwnerDeletion, as " +
		"controllerutil.SetControllerReference does for every Job, StatefulSet, Service, Secret and ConfigMap of a run; " +
		"test/helm TestWatchNamespacesInstall runs the manager as its ServiceAccount with that plugin on",
}, {
	file:  managerRoleFile,
	grant: apicalls.Grant{Group: "mysqlbench.io", Resource: "benchmarkschedules/finalizers", Verb: "update"},
	why: "as benchmarkruns/finalizers, for the runs a schedule creates (owned by the schedule, blockOwnerDeletion set); " +
		"test/helm TestWatchNamespacesInstall has the manager create a scheduled run with that plugin on",
}}

// checkManagerRBAC compares the recorded calls with the roles; code is m.Run's.
func checkManagerRBAC(code int) error {
	dir := filepath.Join("..", "..", "config", "rbac")
	nsRules, err := apicalls.Rules(filepath.Join(dir, managerRoleFile))
	if err != nil {
		return err
	}
	clusterRules, err := apicalls.Rules(filepath.Join(dir, managerClusterRoleFile))
	if err != nil {
		return err
	}
	calls := managerCalls.Calls()
	var problems []string
	var nsCalls, clusterCalls []apicalls.Call
	for _, c := range calls {
		if c.Namespaced {
			nsCalls = append(nsCalls, c)
			if !apicalls.Allows(nsRules, c) {
				problems = append(problems, fmt.Sprintf("the manager called %s, which %s does not grant", c, managerRoleFile))
			}
			continue
		}
		clusterCalls = append(clusterCalls, c)
		if !apicalls.Allows(clusterRules, c) {
			problems = append(problems, fmt.Sprintf("the manager called %s, which %s does not grant "+
				"(with watchNamespaces, %s is bound only in those namespaces)", c, managerClusterRoleFile, managerRoleFile))
		}
	}
	for _, d := range managerCalls.Denials() {
		problems = append(problems, fmt.Sprintf("the API server refused %s %s: %s", d.Method, d.Path, strings.TrimSpace(d.Message)))
	}

	if code == 0 && fullSuite() {
		for _, u := range []struct {
			file   string
			unused []apicalls.Grant
		}{
			{managerRoleFile, apicalls.Unused(nsRules, nsCalls)},
			{managerClusterRoleFile, apicalls.Unused(clusterRules, clusterCalls)},
		} {
			for _, g := range u.unused {
				if slices.ContainsFunc(notCalledInEnvtest, func(a notCalled) bool { return a.file == u.file && a.grant == g }) {
					continue
				}
				if percona.skip != "" && strings.HasSuffix(g.Group, ".percona.com") {
					continue // the Percona tests were skipped
				}
				problems = append(problems, fmt.Sprintf("%s grants %s, which no manager of the suite called: "+
					"remove it from the markers (make manifests helm-crds), or add a test that calls it", u.file, g))
			}
		}
		for _, a := range notCalledInEnvtest {
			if !slices.Contains(apicalls.Grants(rulesOf(a.file, nsRules, clusterRules)), a.grant) {
				problems = append(problems, fmt.Sprintf("notCalledInEnvtest lists %s, which %s no longer grants: drop the entry", a.grant, a.file))
			}
		}
	}
	if len(problems) == 0 {
		fmt.Fprintf(os.Stderr, "RBAC: the %d distinct calls of the suite's managers are granted by config/rbac; unused grants checked: %v\n",
			len(calls), code == 0 && fullSuite())
		return nil
	}
	var b strings.Builder
	b.WriteString("\n")
	for _, p := range problems {
		b.WriteString("  " + p + "\n")
	}
	b.WriteString("calls recorded:\n")
	for _, c := range calls {
		b.WriteString("  " + c.String() + "\n")
	}
	return errors.New(b.String())
}

func rulesOf[T any](file string, ns, cluster T) T {
	if file == managerClusterRoleFile {
		return cluster
	}
	return ns
}

// fullSuite says whether every test was selected to run.
func fullSuite() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return !testing.Short()
}

// The reader cmd/main.go wires into the manager asks the API server for exactly one thing, the
// pods/log subresource (which needs the kubelet envtest lacks: the server answers with an error,
// after the request was seen).
func TestPodLogsAreReadThroughPodsLog(t *testing.T) {
	ns := newNamespace(t)
	calls := apicalls.NewRecorder()
	cs, err := kubernetes.NewForConfig(calls.Wrap(cfg))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := stepjob.ClientsetLogs{Clientset: cs}.Logs(context.Background(), ns, "step-pod", specs.SysbenchContainer)
	if err == nil {
		_ = rc.Close()
	}
	want := []apicalls.Call{{Verb: "get", Resource: "pods", Subresource: "log", Namespaced: true}}
	if got := calls.Calls(); !slices.Equal(got, want) {
		t.Errorf("ClientsetLogs called %v, want %v", got, want)
	}
}

// A pod of a deleted step Job that has not started yet is deleted rather than waited for: it has
// not touched the server. (TestDeletedStepJobWaitsForItsPod has the running case.)
func TestPendingPodOfADeletedStepJobIsDeleted(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	ok := succeedAll(t)
	held := make(chan types.UID, 1)
	var heldUID types.UID
	startKubelet(t, ns, func(job *batchv1.Job) outcome {
		if strings.Contains(job.Name, "-s01-") && (heldUID == "" || heldUID == job.UID) {
			if heldUID == "" {
				heldUID = job.UID
				held <- job.UID
			}
			return outcome{pending: true} // the test plays this Job's pod
		}
		return ok(job)
	})
	run := baseRun(ns, "pending", 1, 2)
	run.Spec.Targets = run.Spec.Targets[:1]
	ctx := context.Background()
	if err := k8s.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatal("no Job for step 1")
	}
	job := &batchv1.Job{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: specs.JobName(run, "mariadb", "s01", specs.Attempt{})}, job); err != nil {
		t.Fatal(err)
	}
	// Its pod is created but not scheduled yet; then someone deletes the Job (envtest runs no
	// garbage collector: the pod stays).
	pod := jobPodOf(job)
	pod.Spec.NodeName = ""
	if err := k8s.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx, job, client.PropagationPolicy("Background")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pending pod of the deleted Job is still there (%v)", err)
		}
	}
	got := waitFor(t, ns, "pending", 20*time.Second, "the run to finish", finished)
	if got.Status.Phase != v1.RunSucceeded || len(got.Status.Targets[0].Steps) != 2 {
		t.Fatalf("run %s with %d steps, want Succeeded with 2", got.Status.Phase, len(got.Status.Targets[0].Steps))
	}
}

// TestPerconaNameHeldByAStuckDeletion for the other Percona kind: a PerconaXtraDBCluster of an
// earlier run stuck in deletion loses its Percona finalizer after the grace.
func TestPerconaXtraDBClusterNameHeldByAStuckDeletion(t *testing.T) {
	restCfg, c := perconaAPI(t)
	ns := perconaNamespace(t, c, "percona-pxc-stuck")
	ctx := context.Background()
	target := v1.Target{Name: "pxc", Engine: v1.EnginePerconaXtraDBCluster}
	earlier := perconaRun(ns, "nightly", target)
	stuck, err := perconaengine.PerconaXtraDBCluster(earlier, target)
	if err != nil {
		t.Fatal(err)
	}
	stuck.SetFinalizers([]string{"percona.com/delete-pxc-pvc"})
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
		stuckDeletionGrace: 2 * time.Second})
	startKubeletOn(t, c, ns, func(*batchv1.Job) outcome { return outcome{pending: true} })
	fakePercona(t, c, ns, perconaengine.PerconaXtraDBClusterKind, func(*unstructured.Unstructured) map[string]any {
		return map[string]any{"state": "initializing"}
	})
	run := perconaRun(ns, "nightly", target)
	if err := c.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	waitForOn(t, c, ns, run.Name, 10*time.Second, "the wait for the earlier resource", func(r *v1.BenchmarkRun) bool {
		cond := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing)
		return cond != nil && strings.Contains(cond.Message, "of an earlier run to be deleted")
	})
	name := perconaengine.ResourceName(run, target.Name)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(perconaengine.PerconaXtraDBClusterKind)
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
		if err == nil && u.GetUID() != stuck.GetUID() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run's PerconaXtraDBCluster never replaced the stuck one (err %v, finalizers %v)", err, u.GetFinalizers())
		}
	}
}
