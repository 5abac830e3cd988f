// Package engine is the seam between the BenchmarkRun controller and whoever runs a target's
// database server: the operator itself (builtin), an existing server (external), or the Percona
// operators. The controller drives every engine the same way: Provision until Ready, connect
// through ConnectionSecret, Teardown when the target is done.
package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// State is what an engine observed of a target's server.
type State struct {
	// Ready: the server accepts connections (the controller then proves the benchmark account
	// with a probe before it prepares data).
	Ready bool
	// Failed: the server will not become ready without the user changing something; Message
	// says what.
	Failed bool
	// Reason is a CamelCase reason (Reason* constants) when not ready, Message the details
	// (e.g. the scheduler's message).
	Reason  string
	Message string
	// RecheckAfter asks the controller to look again this soon while not ready: for servers
	// whose changes do not wake the controller (kinds it could not watch). 0: events wake it.
	RecheckAfter time.Duration
	// Exit is the earliest exit of the server container that the pod's status still shows, if
	// any. The controller keeps the first one it sees: a restart often fails on what the first
	// attempt left behind (a half-initialized data directory), so the last exit can hide the
	// cause.
	Exit *ServerExit
	// Instance identifies the running server instance, "" when the engine cannot tell
	// instances apart (a server it does not run). When it changes between two reads, the
	// server restarted (or was replaced) in between.
	Instance string
	// ImageDigest is the digest of the image the server container runs ("sha256:..."), as the
	// kubelet reports it; "" when unknown (a server the engine does not run, a pod not started).
	ImageDigest string
	// NodeName is the node the server's pod is bound to; "" when the engine does not know the
	// pod (an external server, or a Percona one whose pods its own operator runs) or it is not
	// scheduled yet.
	NodeName string
}

// ServerExit is one exit of a server container.
type ServerExit struct {
	// Ordinal counts the container's exits: 1 is its first.
	Ordinal int32
	// ExitCode is the container's exit code.
	ExitCode int32
	// Output is what explains the exit: the server's error lines from its log tail.
	Output string
}

// String describes the exit for a status message.
func (e ServerExit) String() string {
	return fmt.Sprintf("exit %d (code %d): %s", e.Ordinal, e.ExitCode, e.Output)
}

// Replacer is an engine that can replace a target's running server with a new instance of the
// same spec: a new process on fresh memory, its data prepared again or kept as its storage says.
type Replacer interface {
	// Replace deletes the server instance identified by instance (State.Instance), for its
	// owner to start a new one that the controller then provisions like the first. An instance
	// that is gone already, or not that one (a repeat after the replacement began), is left
	// alone, so a repeated call never replaces the new one.
	Replace(ctx context.Context, run *v1.BenchmarkRun, t v1.Target, instance string) error
}

// Engine runs the servers of one kind of target.
type Engine interface {
	// Provision creates what the target's server needs. It is called on every reconcile while
	// the server is not ready, so it must be idempotent. A *ConfigError means the spec cannot
	// work as written. peers are the runs of other namespaces whose servers hold nodes of the
	// run's database pool now: a server created now keeps away from their pods
	// (specs.DatabasePlacement).
	Provision(ctx context.Context, run *v1.BenchmarkRun, t v1.Target, peers []specs.Peer) error
	// Ready reports whether the server accepts connections, or why not.
	Ready(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) (State, error)
	// ConnectionSecret names the Secret in the run's namespace with the keys sysbench Jobs
	// connect with (host, port, user, password and optionally database).
	ConnectionSecret(run *v1.BenchmarkRun, t v1.Target) string
	// Teardown deletes the target's server and its data. Idempotent.
	Teardown(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) error
	// Facts are what the operator knows of the engine's servers without asking the cluster.
	Facts() Facts
	// PlannedObjects are the objects Provision creates for target t, with password in place of
	// every password it would generate (the plan of kubectl mysqlbench create --dry-run); none
	// for a server the operator does not create.
	PlannedObjects(run *v1.BenchmarkRun, t v1.Target, password string) ([]client.Object, error)
}

// ForeignKind is implemented by engines whose servers are objects of another operator's kind
// (the Percona engines). The controller watches that kind when the cluster knows it at setup
// time and tells the engine, so that it polls only when it must.
type ForeignKind interface {
	// ServerKind is the kind of the server objects the engine creates.
	ServerKind() schema.GroupVersionKind
	// SetWatched records whether changes to ServerKind objects wake the controller.
	SetWatched(bool)
}

// DeletionReleaser is implemented by engines whose servers carry a finalizer that only another
// operator runs (the Percona engines' delete-PVC finalizers). The run holds its own finalizer
// while it has such a target, and lets go only once Release says the server is gone: without it,
// a missing or stopped foreign operator would leave the server, and the namespace it is in,
// in deletion for ever.
type DeletionReleaser interface {
	// Release deletes target t's server for its run being deleted and, when the foreign
	// operator has not run the server's finalizers within a grace, removes them itself. It
	// returns a *WaitError while the server is still there, and says in removed which
	// finalizers it removed (the cleanup they stood for did not happen).
	Release(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) (removed []string, err error)
}

// ConfigError is a spec that cannot work as written; retrying does not help.
type ConfigError struct{ Message string }

func (e *ConfigError) Error() string { return e.Message }

// IsPermanentAPIError says whether the API server refused a request in a way that repeating it
// cannot change: the object is invalid (422), malformed (400), too large (413), or forbidden
// (403: RBAC, a ResourceQuota, an admission policy). Such a refusal ends the target with the API
// server's own message instead of being retried forever.
func IsPermanentAPIError(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsForbidden(err) ||
		apierrors.IsRequestEntityTooLargeError(err) || apierrors.IsMethodNotSupported(err)
}

// Rejected is the ConfigError of an object the API server refused for good. It quotes the API
// server's own error, without what callers wrapped around it: the message names the object itself.
func Rejected(obj client.Object, err error) *ConfigError {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		// Typed objects carry no TypeMeta: *v1.StatefulSet says StatefulSet.
		t := fmt.Sprintf("%T", obj)
		kind = t[strings.LastIndex(t, ".")+1:]
	}
	return &ConfigError{Message: fmt.Sprintf("the API server rejected %s %s: %v "+
		"(fix the target's settings, or the namespace's quota or admission policy that refuses it)", kind, obj.GetName(), APIStatus(err))}
}

// APIStatus is the API server's own error inside err (err itself when nothing wraps it).
func APIStatus(err error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if e, ok := status.(error); ok {
			return e
		}
	}
	return err
}

// WaitError says that Provision cannot go on yet for a reason the user should see (an earlier
// run's object under the same name is still being deleted); the controller says Message and tries
// again after After.
type WaitError struct {
	Message string
	After   time.Duration
}

func (e *WaitError) Error() string { return e.Message }

// AsWait returns the *WaitError err is or wraps, or nil.
func AsWait(err error) *WaitError {
	var we *WaitError
	if errors.As(err, &we) {
		return we
	}
	return nil
}

// IsConfigError says whether err is (or wraps) a *ConfigError.
func IsConfigError(err error) bool {
	var ce *ConfigError
	return errors.As(err, &ce)
}

// All returns every engine the operator has, wired to a manager's cached client (the operator's
// own objects), its direct API reader (the user's objects) and scheme.
func All(c client.Client, reader client.Reader, scheme *runtime.Scheme) map[v1.Engine]Engine {
	return map[v1.Engine]Engine{
		v1.EngineBuiltin:              &Builtin{Client: c, Reader: reader, Scheme: scheme},
		v1.EngineExternal:             &External{Reader: reader},
		v1.EnginePerconaServer:        withReader(NewPerconaServer(c, scheme), reader),
		v1.EnginePerconaXtraDBCluster: withReader(NewPerconaXtraDBCluster(c, scheme), reader),
	}
}

func withReader(p *Percona, reader client.Reader) *Percona {
	p.Reader = reader
	return p
}
