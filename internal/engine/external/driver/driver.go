// Package driver is the external engine's driver: it reads the user's Secret that package
// external describes. It is a package of its own because it reads through controller-runtime's
// client, which the describers must not link (the kubectl plugin links them; see package object).
package driver

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/external"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/server"
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
	external.Describer
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

// Teardown leaves the user's server alone.
func (e *Engine) Teardown(context.Context, *v1.BenchmarkRun, v1.Target) error { return nil }
