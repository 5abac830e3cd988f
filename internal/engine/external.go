package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// External benchmarks a server the operator does not run. Its connection Secret belongs to the
// user, so it is read directly from the API server (the operator's cache only holds its own
// objects) and never changed or deleted.
type External struct {
	Reader client.Reader
}

var _ Engine = (*External)(nil)

// Provision has nothing to create.
func (e *External) Provision(context.Context, *v1.BenchmarkRun, v1.Target, []specs.Peer) error {
	return nil
}

// Ready checks that the user's Secret exists and has the keys sysbench needs; whether the server
// accepts the account is proven by the controller's probe.
func (e *External) Ready(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) (State, error) {
	name := e.ConnectionSecret(run, t)
	s := &corev1.Secret{}
	err := e.Reader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return State{Reason: v1.ReasonSecret, Message: fmt.Sprintf(
			"Secret %s/%s named by target %s does not exist: create it with the keys host, port, user and password",
			run.Namespace, name, t.Name)}, nil
	}
	if err != nil {
		return State{}, fmt.Errorf("get secret %s: %w", name, err)
	}
	var missing []string
	for _, k := range []string{sysbench.SecretKeyHost, sysbench.SecretKeyPort, sysbench.SecretKeyUser, sysbench.SecretKeyPassword} {
		if len(s.Data[k]) == 0 && s.StringData[k] == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return State{Failed: true, Reason: v1.ReasonSecret, Message: fmt.Sprintf(
			"Secret %s/%s of target %s lacks the keys %s: add them (host, port, user, password; database is optional)",
			run.Namespace, name, t.Name, strings.Join(missing, ", "))}, nil
	}
	return State{Ready: true}, nil
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

// ConnectionSecret is the user's Secret.
func (e *External) ConnectionSecret(_ *v1.BenchmarkRun, t v1.Target) string {
	if t.SecretRef == nil {
		return ""
	}
	return t.SecretRef.Name
}

// Teardown leaves the user's server alone.
func (e *External) Teardown(context.Context, *v1.BenchmarkRun, v1.Target) error { return nil }
