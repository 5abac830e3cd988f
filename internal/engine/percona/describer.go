// Package percona is the engine that runs each target's server through a Percona operator
// (percona-server: PerconaServerMySQL; percona-xtradb-cluster: PerconaXtraDBCluster): the
// resources' and Secrets' builders, the status reading and its Describer. Its driver, which
// talks to the API server, is package percona/driver, so that what links the describers (the
// kubectl plugin) does not link controller-runtime's client.
package percona

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/server"
	"github.com/mysqlbench/mysqlbench-operator/internal/enginefacts"
	"github.com/mysqlbench/mysqlbench-operator/internal/object"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// Describer is what a Percona engine's servers are, without reading or writing the cluster:
// the plan, the export bundle and the plugin ask it.
type Describer struct {
	flavor Flavor
}

// The describers of the two flavours.
var (
	// Server describes the percona-server engine (PerconaServerMySQL).
	Server = Describer{flavor: psFlavor}
	// XtraDBCluster describes the percona-xtradb-cluster engine (PerconaXtraDBCluster).
	XtraDBCluster = Describer{flavor: pxcFlavor}
)

// Flavor is what sets the flavour apart: its engine, kind and Percona operator.
func (d Describer) Flavor() Flavor { return d.flavor }

// Facts of the flavour's engine.
func (d Describer) Facts() enginefacts.Facts { return enginefacts.Of(d.flavor.Engine) }

// ConnectionSecret is the Secret Provision writes once the endpoint is known.
func (d Describer) ConnectionSecret(run *v1.BenchmarkRun, t v1.Target) string {
	return specs.ConnectionSecretName(run, t.Name)
}

// PlannedObjects are the Percona resource and its Secrets (Objects), with password for every
// system user and the benchmark user.
func (d Describer) PlannedObjects(run *v1.BenchmarkRun, t v1.Target, password string) ([]object.Object, error) {
	pw := map[string]string{}
	for _, u := range SystemUsers[d.flavor.Engine] {
		pw[u] = password
	}
	objs, err := Objects(d.flavor.Engine, run, t, pw, password)
	if err != nil {
		return nil, err
	}
	return objs.List(), nil
}

// ServerConfig is the configuration the Percona resource gives its server pods (MyCnf).
func (d Describer) ServerConfig(run *v1.BenchmarkRun, t v1.Target) (string, string, error) {
	cnf, err := MyCnf(run, t)
	if err != nil {
		return "", "", err
	}
	return "# The configuration the operator gives the Percona resource's server pods.\n" + cnf,
		"the Percona resource's configuration", nil
}

// ServerList is nil: the Percona resources are read from the API server, never listed from the
// manager's cache, and a run holds a Percona target's node by its status alone.
func (d Describer) ServerList() object.List { return nil }

// Holdings are none (ServerList).
func (d Describer) Holdings(object.List, map[types.NamespacedName]*v1.BenchmarkRun) []server.Holding {
	return nil
}

// Flavor is what differs between the two Percona operators.
type Flavor struct {
	// Engine is the engine name targets give it.
	Engine v1.Engine
	// Kind is the kind of its server resource.
	Kind schema.GroupVersionKind
	// CRD is the name of that kind's CustomResourceDefinition.
	CRD string
	// Operator names the Percona operator, for messages.
	Operator string
	// Docs is where to read how to install it.
	Docs string
}

var (
	psFlavor = Flavor{
		Engine: v1.EnginePerconaServer, Kind: PerconaServerMySQLKind, CRD: "perconaservermysqls.ps.percona.com",
		Operator: "Percona Operator for MySQL (based on Percona Server), v1.2.0 or later",
		Docs:     "https://docs.percona.com/percona-operator-for-mysql/ps/",
	}
	pxcFlavor = Flavor{
		Engine: v1.EnginePerconaXtraDBCluster, Kind: PerconaXtraDBClusterKind, CRD: "perconaxtradbclusters.pxc.percona.com",
		Operator: "Percona Operator for MySQL based on Percona XtraDB Cluster, v1.16.0 or later",
		Docs:     "https://docs.percona.com/percona-operator-for-mysql/pxc/",
	}
)
