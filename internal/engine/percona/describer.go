package percona

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/server"
	"github.com/mysqlbench/mysqlbench-operator/internal/enginefacts"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// Describer is what a Percona engine's servers are, without reading or writing the cluster:
// the plan, the export bundle and the plugin ask it.
type Describer struct {
	flavor flavor
}

// The describers of the two flavours.
var (
	// Server describes the percona-server engine (PerconaServerMySQL).
	Server = Describer{flavor: psFlavor}
	// XtraDBCluster describes the percona-xtradb-cluster engine (PerconaXtraDBCluster).
	XtraDBCluster = Describer{flavor: pxcFlavor}
)

// Facts of the flavour's engine.
func (d Describer) Facts() enginefacts.Facts { return enginefacts.Of(d.flavor.engine) }

// ConnectionSecret is the Secret Provision writes once the endpoint is known.
func (d Describer) ConnectionSecret(run *v1.BenchmarkRun, t v1.Target) string {
	return specs.ConnectionSecretName(run, t.Name)
}

// PlannedObjects are the Percona resource and its Secrets (Objects), with password for every
// system user and the benchmark user.
func (d Describer) PlannedObjects(run *v1.BenchmarkRun, t v1.Target, password string) ([]client.Object, error) {
	pw := map[string]string{}
	for _, u := range SystemUsers[d.flavor.engine] {
		pw[u] = password
	}
	objs, err := Objects(d.flavor.engine, run, t, pw, password)
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
func (d Describer) ServerList() client.ObjectList { return nil }

// Holdings are none (ServerList).
func (d Describer) Holdings(client.ObjectList, map[client.ObjectKey]*v1.BenchmarkRun) []server.Holding {
	return nil
}
