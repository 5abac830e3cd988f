// Package builtin is the engine that runs each target's server itself, from the target's image
// (the official mysql and mariadb images, percona/percona-server): its objects' builders, its
// pod lookup and its Describer. Its driver, which talks to the API server, is package
// builtin/driver, so that what links the describers (the kubectl plugin) does not link
// controller-runtime's client.
package builtin

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/server"
	"github.com/mysqlbench/mysqlbench-operator/internal/enginefacts"
	"github.com/mysqlbench/mysqlbench-operator/internal/object"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// Describer is what the builtin engine's servers are, without reading or writing the cluster:
// the plan, the export bundle, the plugin and the node-pool queue ask it.
type Describer struct{}

// Facts of the builtin engine.
func (Describer) Facts() enginefacts.Facts { return enginefacts.Of(v1.EngineBuiltin) }

// ConnectionSecret is the Secret Provision generates.
func (Describer) ConnectionSecret(run *v1.BenchmarkRun, t v1.Target) string {
	return specs.ConnectionSecretName(run, t.Name)
}

// PlannedObjects are the server's objects (Objects), with password as the root and the
// benchmark user's password.
func (Describer) PlannedObjects(run *v1.BenchmarkRun, t v1.Target, password string) ([]object.Object, error) {
	return Objects(run, t, password, password)
}

// ServerConfig is the server's my.cnf: the files of its include directory (the ConfigMap's
// OperatorCnfKey and UserCnfKey) in the order the server reads them.
func (Describer) ServerConfig(run *v1.BenchmarkRun, t v1.Target) (string, string, error) {
	cm, err := ConfigMap(run, t)
	if err != nil {
		return "", "", err
	}
	var b strings.Builder
	b.WriteString("# The files of the server's include directory, in the order the server reads them (later settings win).\n")
	for _, k := range []string{OperatorCnfKey, UserCnfKey} {
		if text, ok := cm.Data[k]; ok {
			fmt.Fprintf(&b, "\n# ---- %s ----\n%s", k, text)
		}
	}
	return b.String(), "the operator's settings, then the target's myCnf", nil
}

// ServerList is the kind of object whose presence holds a node of the database pool: the
// servers' StatefulSets, listed from the manager's cache with the operator's labels.
func (Describer) ServerList() object.List { return &appsv1.StatefulSetList{} }

// Holdings are the servers in list (a ServerList filled by the caller) that are a run's: a
// server StatefulSet not being deleted, controlled by a run in runs (by UID) that is not being
// deleted, and named as that run names the server of the target it is labelled with. Labels
// prove nothing (anyone who may create StatefulSets can give one the operator's labels), so
// anything else is left out: one someone else made, one naming a run that is gone.
func (Describer) Holdings(list object.List, runs map[types.NamespacedName]*v1.BenchmarkRun) []server.Holding {
	stss, ok := list.(*appsv1.StatefulSetList)
	if !ok {
		return nil
	}
	var out []server.Holding
	for i := range stss.Items {
		sts := &stss.Items[i]
		if sts.Spec.Template.Labels[specs.LabelComponent] != specs.ComponentServer || !sts.DeletionTimestamp.IsZero() {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(sts)
		if ref == nil || ref.Kind != "BenchmarkRun" {
			continue
		}
		run := runs[types.NamespacedName{Namespace: sts.Namespace, Name: ref.Name}]
		if run == nil || run.UID != ref.UID || !run.DeletionTimestamp.IsZero() {
			continue
		}
		target := sts.Labels[specs.LabelTarget]
		if specs.ServerName(run, target) != sts.Name {
			continue
		}
		out = append(out, server.Holding{Run: run, Target: target, NodeSelector: sts.Spec.Template.Spec.NodeSelector,
			Object: "StatefulSet " + sts.Name})
	}
	return out
}

// PodName is the name of target's server pod: the StatefulSet's one pod.
func PodName(run *v1.BenchmarkRun, target string) string {
	return specs.ServerName(run, target) + "-0"
}
