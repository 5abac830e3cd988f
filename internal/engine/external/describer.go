// Package external is the engine of a server the operator does not run: the user's, reached
// through the user's Secret, which the operator reads but never changes or deletes. Its driver,
// which reads that Secret, is package external/driver, so that what links the describers (the
// kubectl plugin) does not link controller-runtime's client.
package external

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/server"
	"github.com/mysqlbench/mysqlbench-operator/internal/enginefacts"
	"github.com/mysqlbench/mysqlbench-operator/internal/object"
)

// ConsentMissing says why the runs may not connect with the user's Secret s, which target names:
// its owner has not opted in with the label v1.LabelAllowBenchmark. "" when they may. Only the
// Secret's metadata is needed.
func ConsentMissing(s metav1.Object, target string) string {
	value, labelled := s.GetLabels()[v1.LabelAllowBenchmark]
	if value == v1.AllowBenchmark {
		return ""
	}
	has := "does not carry the label " + v1.LabelAllowBenchmark
	if labelled {
		has = fmt.Sprintf("carries the label %s=%q, not %q", v1.LabelAllowBenchmark, value, v1.AllowBenchmark)
	}
	return fmt.Sprintf("Secret %s/%s named by target %s %s, by which its owner lets BenchmarkRuns connect with it "+
		"(the run's pods would mount its password): the operator does not use it. If the Secret's owner agrees, they run "+
		"`kubectl label secret %s -n %s %s=%s`",
		s.GetNamespace(), s.GetName(), target, has, s.GetName(), s.GetNamespace(), v1.LabelAllowBenchmark, v1.AllowBenchmark)
}

// Describer is what the external engine's servers are: nothing the operator creates.
type Describer struct{}

// Facts of the external engine.
func (Describer) Facts() enginefacts.Facts { return enginefacts.Of(v1.EngineExternal) }

// ConnectionSecret is the user's Secret.
func (Describer) ConnectionSecret(_ *v1.BenchmarkRun, t v1.Target) string {
	if t.SecretRef == nil {
		return ""
	}
	return t.SecretRef.Name
}

// PlannedObjects: none, the server is the user's.
func (Describer) PlannedObjects(*v1.BenchmarkRun, v1.Target, string) ([]object.Object, error) {
	return nil, nil
}

// ServerConfig: none, the server's configuration is its owner's.
func (Describer) ServerConfig(*v1.BenchmarkRun, v1.Target) (string, string, error) {
	return "", "its server is not the operator's (engine " + string(v1.EngineExternal) + "): its configuration is its owner's", nil
}

// ServerList is nil: the server holds no node of the run's pools.
func (Describer) ServerList() object.List { return nil }

// Holdings are none (ServerList).
func (Describer) Holdings(object.List, map[types.NamespacedName]*v1.BenchmarkRun) []server.Holding {
	return nil
}
