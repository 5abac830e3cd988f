// Package external is the engine of a server the operator does not run: the user's, reached
// through the user's Secret, which the operator reads but never changes or deletes.
package external

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/server"
	"github.com/mysqlbench/mysqlbench-operator/internal/enginefacts"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// What the external engine asks of the API server: it reads the user's Secret, past the cache
// (the controller's markers grant the rest).
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// Engine benchmarks a server the operator does not run. Its connection Secret belongs to the
// user, so it is read directly from the API server (the operator's cache only holds its own
// objects) and never changed or deleted.
type Engine struct {
	Describer
	Reader client.Reader
}

// New is the external engine reading through a manager's API reader; it writes nothing, so it
// takes no client or scheme.
func New(_ client.Client, reader client.Reader, _ *runtime.Scheme) *Engine {
	return &Engine{Reader: reader}
}

// Provision has nothing to create.
func (e *Engine) Provision(context.Context, *v1.BenchmarkRun, v1.Target, []specs.Peer) error {
	return nil
}

// Ready checks that the user's Secret exists and has the keys sysbench needs; whether the server
// accepts the account is proven by the controller's probe.
func (e *Engine) Ready(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) (server.State, error) {
	name := e.ConnectionSecret(run, t)
	s := &corev1.Secret{}
	err := e.Reader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return server.State{Reason: v1.ReasonSecret, Message: fmt.Sprintf(
			"Secret %s/%s named by target %s does not exist: create it with the keys host, port, user and password",
			run.Namespace, name, t.Name)}, nil
	}
	if err != nil {
		return server.State{}, fmt.Errorf("get secret %s: %w", name, err)
	}
	var missing []string
	for _, k := range []string{sysbench.SecretKeyHost, sysbench.SecretKeyPort, sysbench.SecretKeyUser, sysbench.SecretKeyPassword} {
		if len(s.Data[k]) == 0 && s.StringData[k] == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return server.State{Failed: true, Reason: v1.ReasonSecret, Message: fmt.Sprintf(
			"Secret %s/%s of target %s lacks the keys %s: add them (host, port, user, password; database is optional)",
			run.Namespace, name, t.Name, strings.Join(missing, ", "))}, nil
	}
	return server.State{Ready: true}, nil
}

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

// Teardown leaves the user's server alone.
func (e *Engine) Teardown(context.Context, *v1.BenchmarkRun, v1.Target) error { return nil }

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
func (Describer) PlannedObjects(*v1.BenchmarkRun, v1.Target, string) ([]client.Object, error) {
	return nil, nil
}

// ServerConfig: none, the server's configuration is its owner's.
func (Describer) ServerConfig(*v1.BenchmarkRun, v1.Target) (string, string, error) {
	return "", "its server is not the operator's (engine " + string(v1.EngineExternal) + "): its configuration is its owner's", nil
}

// ServerList is nil: the server holds no node of the run's pools.
func (Describer) ServerList() client.ObjectList { return nil }

// Holdings are none (ServerList).
func (Describer) Holdings(client.ObjectList, map[client.ObjectKey]*v1.BenchmarkRun) []server.Holding {
	return nil
}
