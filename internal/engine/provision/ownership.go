// Package provision is what the engines' drivers share and their describers do not: turning
// what owned.Ensure says of an object into what the controller acts on. It is apart from package
// server, which the describers share, because it links controller-runtime's client through
// package owned, and the describers are linked by the kubectl plugin, which must not (see
// package object).
package provision

import (
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mysqlbench/mysqlbench-operator/internal/engine/server"
	"github.com/mysqlbench/mysqlbench-operator/internal/owned"
)

// Ownership turns what owned.Ensure says into what the controller acts on: an object of someone
// else under the name fails the target, an earlier run's object on its way out is waited for, an
// object the API server refuses for good fails the target with the server's message.
func Ownership(obj client.Object, err error) error {
	if de := owned.AsDeleting(err); de != nil {
		return &server.WaitError{Message: de.Error(), After: de.After}
	}
	var fe *owned.ForeignError
	switch {
	case errors.As(err, &fe):
		return &server.ConfigError{Message: fe.Error()}
	case server.IsPermanentAPIError(err):
		return server.Rejected(obj, err)
	}
	return err
}
