// Package server is what the engine seam and every engine share: the state an engine reports of
// a target's server, the errors it returns to the controller, how a pod's state reads, and the
// checks of objects found under the names a run needs. It sits below the engines, which import
// it, and package engine names its types by alias, so that callers see one seam and no engine
// imports the registry that lists it.
package server

import (
	"fmt"
	"time"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
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
	Exit *Exit
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

// Exit is one exit of a server container.
type Exit struct {
	// Ordinal counts the container's exits: 1 is its first.
	Ordinal int32
	// ExitCode is the container's exit code.
	ExitCode int32
	// Output is what explains the exit: the server's error lines from its log tail.
	Output string
}

// String describes the exit for a status message.
func (e Exit) String() string {
	return fmt.Sprintf("exit %d (code %d): %s", e.Ordinal, e.ExitCode, e.Output)
}

// Holding is one of an engine's servers found among listed objects: the run and target it
// serves and the node selector of its pods, which names the database pool it holds a node of.
// Whether the run still holds it (its target's status) is the node-pool queue's to judge.
type Holding struct {
	Run    *v1.BenchmarkRun
	Target string
	// NodeSelector is the server pods' node selector.
	NodeSelector map[string]string
	// Object names the server for the queue's messages ("StatefulSet nightly-mariadb").
	Object string
}
