// Package enginefacts holds what the operator knows of each engine's servers without asking the
// cluster. It is a leaf (it imports only the API), outside internal/engine, so that the layers
// below the engines (the builders in specs, the clients, the report) read an engine's facts
// without importing anything above them.
package enginefacts

import (
	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// Facts are what the operator knows of an engine's servers without asking the cluster. The
// queue, the placement, the CPU sampler, the plan and the plugin read them instead of naming
// engines, so that a new engine states its facts here once.
type Facts struct {
	// CreatesServer: the operator creates the server, with passwords it generated (a Secret of
	// them lost during the run ends the target: the server was set up with them). False: the
	// server is the user's, reached through the user's Secret, and outlives the run, so what a
	// client prepared there is dropped after the ladder.
	CreatesServer bool
	// HoldsNode: the server's pod holds a node of the run's database pool, so the target
	// queues for one and later servers keep away from it.
	HoldsNode bool
	// ServerContainer is the name of the server's container in its pod, "" when its pod is not
	// in the cluster.
	ServerContainer string
	// ForeignPods: the server's pods are another operator's, placed by it from its resource's
	// spec; they carry the run and target labels (percona.serverPod) but not the operator's
	// managed-by label, so the manager's cache does not hold them.
	ForeignPods bool
	// ImageIsServer: target.image is the server's own image, whose client tools (mysqlslap,
	// mariadb-slap) match the server.
	ImageIsServer bool
	// OwnPod: the server is the operator's own StatefulSet pod, whose events the operator reads
	// when it does not start, which can share a node with another target's step by step (an
	// interleaved run), which the operator can replace by a new instance per repetition, and
	// whose node the status records (targets[].node, from the pod's binding). Other engines'
	// nodes are not recorded: Percona's pods are its operator's to place, an external server's
	// are not the operator's to read.
	OwnPod bool
	// UserLocks: the server is a single MySQL-family server, whose user-level locks
	// (GET_LOCK) every connection of the run shares, so a step started early can wait on one
	// for the step before it (load.Step.ServerLock). Not for servers behind a router or a
	// proxy, which may send two connections to two servers, nor for Galera nodes
	// (Percona XtraDB Cluster), which refuse GET_LOCK; nor for external servers, which may be
	// either.
	UserLocks bool
}

// byEngine are the engines' facts by name.
var byEngine = map[v1.Engine]Facts{
	v1.EngineBuiltin: {CreatesServer: true, HoldsNode: true, ServerContainer: "mysql",
		ImageIsServer: true, OwnPod: true, UserLocks: true},
	v1.EngineExternal:             {},
	v1.EnginePerconaServer:        {CreatesServer: true, HoldsNode: true, ServerContainer: "mysql", ForeignPods: true},
	v1.EnginePerconaXtraDBCluster: {CreatesServer: true, HoldsNode: true, ServerContainer: "pxc", ForeignPods: true},
}

// Of are the facts of engine e (the API default, builtin, when e is ""); an engine the
// operator does not have has none.
func Of(e v1.Engine) Facts {
	if e == "" {
		e = v1.EngineBuiltin
	}
	return byEngine[e]
}
