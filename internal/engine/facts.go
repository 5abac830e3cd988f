package engine

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/enginefacts"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// Facts are what the operator knows of an engine's servers without asking the cluster
// (package enginefacts, a leaf that the builders and the clients import too).
type Facts = enginefacts.Facts

// FactsOf are the facts of engine e (the API default, builtin, when e is "").
func FactsOf(e v1.Engine) Facts { return enginefacts.Of(e) }

// Facts of the builtin engine.
func (b *Builtin) Facts() Facts { return FactsOf(v1.EngineBuiltin) }

// Facts of the external engine.
func (e *External) Facts() Facts { return FactsOf(v1.EngineExternal) }

// Facts of the flavour's engine.
func (p *Percona) Facts() Facts { return FactsOf(p.flavor.engine) }

// PlannedObjects are the builtin server's objects (specs.BuiltinServerObjects), with password as
// the root and the benchmark user's password.
func (b *Builtin) PlannedObjects(run *v1.BenchmarkRun, t v1.Target, password string) ([]client.Object, error) {
	return specs.BuiltinServerObjects(run, t, password, password)
}

// PlannedObjects are the Percona resource and its Secrets (specs.PerconaObjects), with password
// for every system user and the benchmark user.
func (p *Percona) PlannedObjects(run *v1.BenchmarkRun, t v1.Target, password string) ([]client.Object, error) {
	pw := map[string]string{}
	for _, u := range specs.PerconaSystemUsers[p.flavor.engine] {
		pw[u] = password
	}
	server, err := specs.PerconaObjects(p.flavor.engine, run, t, pw, password)
	if err != nil {
		return nil, err
	}
	return server.List(), nil
}

// PlannedObjects: none, the server is the user's.
func (e *External) PlannedObjects(*v1.BenchmarkRun, v1.Target, string) ([]client.Object, error) {
	return nil, nil
}
