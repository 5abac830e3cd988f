// Package engine is the seam between the operator and whoever runs a target's database server:
// the operator itself (builtin), an existing server (external), or the Percona operators. Each
// engine is a package of its own under internal/engine, whole: its object builders, its pod
// lookup, its RBAC markers. This package holds what callers see of them: the interfaces, the
// vocabulary (named here by alias from package server, which the engines share without
// importing this registry of them), and the registry by engine name.
//
// An engine has two halves. Its Describer says, without I/O, what it would create and which
// node it would hold: the plan (kubectl mysqlbench create --dry-run), the export bundle and the
// plugin ask only that. Its Driver provisions, reads and removes servers: the controller's half.
// The controller drives every engine the same way: Provision until Ready, connect through
// ConnectionSecret, Teardown when the target is done.
package engine

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/describe"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/external"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/server"
	"github.com/mysqlbench/mysqlbench-operator/internal/enginefacts"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// Describer is what an engine's servers are and would be, without reading or writing the
// cluster (package describe, which holds the describers apart from the drivers).
type Describer = describe.Describer

// Driver provisions, reads and removes an engine's servers.
type Driver interface {
	// Provision creates what the target's server needs. It is called on every reconcile while
	// the server is not ready, so it must be idempotent. A *ConfigError means the spec cannot
	// work as written. peers are the runs of other namespaces whose servers hold nodes of the
	// run's database pool now: a server created now keeps away from their pods
	// (specs.DatabasePlacement).
	Provision(ctx context.Context, run *v1.BenchmarkRun, t v1.Target, peers []specs.Peer) error
	// Ready reports whether the server accepts connections, or why not.
	Ready(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) (State, error)
	// Teardown deletes the target's server and its data. Idempotent.
	Teardown(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) error
}

// Engine runs the servers of one kind of target: its description and its driver.
type Engine interface {
	Describer
	Driver
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

// The vocabulary every engine shares, from package server.
type (
	// State is what an engine observed of a target's server.
	State = server.State
	// ServerExit is one exit of a server container.
	ServerExit = server.Exit
	// ConfigError is a spec that cannot work as written; retrying does not help.
	ConfigError = server.ConfigError
	// WaitError says that Provision cannot go on yet for a reason the user should see.
	WaitError = server.WaitError
	// Holding is one of an engine's servers found among listed objects (Describer.Holdings).
	Holding = server.Holding
	// Facts are what the operator knows of an engine's servers without asking the cluster
	// (package enginefacts, which the layers below the engines read too).
	Facts = enginefacts.Facts
)

// FactsOf are the facts of engine e (the API default, builtin, when e is "").
func FactsOf(e v1.Engine) Facts { return enginefacts.Of(e) }

// IsConfigError says whether err is (or wraps) a *ConfigError.
func IsConfigError(err error) bool { return server.IsConfigError(err) }

// AsWait returns the *WaitError err is or wraps, or nil.
func AsWait(err error) *WaitError { return server.AsWait(err) }

// IsPermanentAPIError says whether the API server refused a request in a way that repeating it
// cannot change (server.IsPermanentAPIError).
func IsPermanentAPIError(err error) bool { return server.IsPermanentAPIError(err) }

// Rejected is the ConfigError of an object the API server refused for good (server.Rejected).
func Rejected(obj client.Object, err error) *ConfigError { return server.Rejected(obj, err) }

// PodState reads a pod's conditions and container statuses (server.PodState): a server's, or a
// step Job's.
func PodState(pod *corev1.Pod) State { return server.PodState(pod) }

// ImageDigest is the digest of a kubelet's imageID, "" when it names none (server.ImageDigest).
func ImageDigest(imageID string) string { return server.ImageDigest(imageID) }

// PinnedImage is image pinned to digest (server.PinnedImage).
func PinnedImage(image, digest string) string { return server.PinnedImage(image, digest) }

// ConsentMissing says why runs may not connect with the user's Secret s, which target names
// (external.ConsentMissing); "" when they may.
func ConsentMissing(s metav1.Object, target string) string { return external.ConsentMissing(s, target) }
