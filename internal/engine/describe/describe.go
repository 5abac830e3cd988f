// Package describe is every engine's Describer by the engine's name: what a target's servers
// are and would be, without reading or writing the cluster. It is internal/engine's describing
// half on its own, for what needs no driver: the plan (kubectl mysqlbench create --dry-run), the
// export bundle and the kubectl plugin. It links no driver, and so not controller-runtime's
// client either, whose import registers every built-in API group of client-go (see package
// object); internal/engine, the operator's registry, builds on it.
package describe

import (
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/builtin"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/external"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/percona"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/server"
	"github.com/mysqlbench/mysqlbench-operator/internal/enginefacts"
	"github.com/mysqlbench/mysqlbench-operator/internal/object"
)

// Describer is what an engine's servers are and would be, without reading or writing the
// cluster.
type Describer interface {
	// Facts are what the operator knows of the engine's servers without asking the cluster.
	Facts() enginefacts.Facts
	// ConnectionSecret names the Secret in the run's namespace with the keys sysbench Jobs
	// connect with (host, port, user, password and optionally database).
	ConnectionSecret(run *v1.BenchmarkRun, t v1.Target) string
	// PlannedObjects are the objects Provision creates for target t, with password in place of
	// every password it would generate (the plan of kubectl mysqlbench create --dry-run); none
	// for a server the operator does not create.
	PlannedObjects(run *v1.BenchmarkRun, t v1.Target, password string) ([]object.Object, error)
	// ServerConfig is the my.cnf the engine gives target t's server, as one commented text,
	// and what it is; "" and why not when the engine configures no server.
	ServerConfig(run *v1.BenchmarkRun, t v1.Target) (cnf, what string, err error)
	// ServerList is an empty list of the objects whose presence holds a node of a database pool,
	// for the caller to fill with the operator's labels (Holdings); nil when the engine has
	// none to list (its targets hold a node by their status alone, or none at all).
	ServerList() object.List
	// Holdings are the servers among list (a filled ServerList) that belong to a run in runs,
	// by the checks only the engine can make (which run controls the object, whether it
	// carries the name the run gives that target's server). Whether the run holds it still is
	// the queue's to judge from the run's status.
	Holdings(list object.List, runs map[types.NamespacedName]*v1.BenchmarkRun) []server.Holding
}

// describers is every engine's description, by the name targets give it (targets[].engine, the
// API's enum). internal/engine pairs each with its driver; a new engine is a line in each.
var describers = map[v1.Engine]Describer{
	v1.EngineBuiltin:              builtin.Describer{},
	v1.EngineExternal:             external.Describer{},
	v1.EnginePerconaServer:        percona.Server,
	v1.EnginePerconaXtraDBCluster: percona.XtraDBCluster,
}

// All returns every engine's description; nothing they do reaches a cluster.
func All() map[v1.Engine]Describer {
	out := make(map[v1.Engine]Describer, len(describers))
	for name, d := range describers {
		out[name] = d
	}
	return out
}
