package specs

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// BuiltinServerObjects are the objects of a builtin target's server, in the order the builtin
// engine creates them: the connection Secret with the given passwords, the ConfigMap with my.cnf,
// the headless Service, the NetworkPolicy (unless spec.networkPolicy is Disabled; before the
// StatefulSet, so the server is never reachable by more than its run's sysbench pods where the CNI
// enforces NetworkPolicy) and the StatefulSet, whose pod avoids the peers' (DatabasePlacement).
// It fails when the target's myCnf would break the run (CheckMyCnf).
func BuiltinServerObjects(run *v1.BenchmarkRun, t v1.Target, rootPassword, password string, peers ...Peer) ([]client.Object, error) {
	cm, err := ServerConfigMap(run, t)
	if err != nil {
		return nil, err
	}
	objs := []client.Object{ConnectionSecret(run, t.Name, rootPassword, password), cm, ServerService(run, t.Name)}
	if run.Spec.NetworkPolicyEnabled() {
		objs = append(objs, ServerNetworkPolicy(run, t.Name))
	}
	return append(objs, ServerStatefulSet(run, t, peers...)), nil
}

// PerconaServerObjects are what a Percona target's server needs from the run, in the order the
// Percona engines create them. The connection Secret is not among them: it is written once the
// Percona operator has published the server's endpoint (PerconaConnectionSecret).
type PerconaServerObjects struct {
	// Users holds the Percona operator's system users' passwords (spec.secretsName).
	Users *corev1.Secret
	// Password holds the benchmark user's password.
	Password *corev1.Secret
	// Server is the PerconaServerMySQL or PerconaXtraDBCluster.
	Server *unstructured.Unstructured
}

// List is the objects in the order they are created.
func (o PerconaServerObjects) List() []client.Object {
	return []client.Object{o.Users, o.Password, o.Server}
}

// PerconaObjects builds the objects of target t's server under Percona engine e:
// systemPasswords has a password for each of PerconaSystemUsers[e], password is the benchmark
// user's. It fails when the target's myCnf would break the run (CheckMyCnf), or e is not a
// Percona engine.
func PerconaObjects(e v1.Engine, run *v1.BenchmarkRun, t v1.Target, systemPasswords map[string]string, password string, peers ...Peer) (PerconaServerObjects, error) {
	var server *unstructured.Unstructured
	var err error
	switch e {
	case v1.EnginePerconaServer:
		server, err = PerconaServerMySQL(run, t, peers...)
	case v1.EnginePerconaXtraDBCluster:
		server, err = PerconaXtraDBCluster(run, t, peers...)
	default:
		return PerconaServerObjects{}, fmt.Errorf("target %s: engine %s is not a Percona engine", t.Name, e)
	}
	if err != nil {
		return PerconaServerObjects{}, err
	}
	return PerconaServerObjects{
		Users:    PerconaUsersSecret(run, t, systemPasswords),
		Password: PerconaPasswordSecret(run, t, password),
		Server:   server,
	}, nil
}
