package percona

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/object"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// ServerObjects are what a Percona target's server needs from the run, in the order the
// Percona engines create them. The connection Secret is not among them: it is written once the
// Percona operator has published the server's endpoint (ConnectionSecret).
type ServerObjects struct {
	// Users holds the Percona operator's system users' passwords (spec.secretsName).
	Users *corev1.Secret
	// Password holds the benchmark user's password.
	Password *corev1.Secret
	// Server is the PerconaServerMySQL or PerconaXtraDBCluster.
	Server *unstructured.Unstructured
}

// List is the objects in the order they are created.
func (o ServerObjects) List() []object.Object {
	return []object.Object{o.Users, o.Password, o.Server}
}

// Objects builds the objects of target t's server under Percona engine e: systemPasswords has
// a password for each of SystemUsers[e], password is the benchmark user's. It fails when the
// target's myCnf would break the run (specs.CheckMyCnf), or e is not a Percona engine.
func Objects(e v1.Engine, run *v1.BenchmarkRun, t v1.Target, systemPasswords map[string]string, password string, peers ...specs.Peer) (ServerObjects, error) {
	var resource *unstructured.Unstructured
	var err error
	switch e {
	case v1.EnginePerconaServer:
		resource, err = PerconaServerMySQL(run, t, peers...)
	case v1.EnginePerconaXtraDBCluster:
		resource, err = PerconaXtraDBCluster(run, t, peers...)
	default:
		return ServerObjects{}, fmt.Errorf("target %s: engine %s is not a Percona engine", t.Name, e)
	}
	if err != nil {
		return ServerObjects{}, err
	}
	return ServerObjects{
		Users:    UsersSecret(run, t, systemPasswords),
		Password: PasswordSecret(run, t, password),
		Server:   resource,
	}, nil
}
