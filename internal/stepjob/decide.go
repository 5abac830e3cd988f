package stepjob

import (
	"fmt"
	"strings"
	"time"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
)

// restartSettle is how long a step that lost its connection (client.ConnectionLost: errors 2002,
// 2003, 2006, 2013) waits before it counts as a failed attempt: the server's pod status may not show the restart yet, and
// a restart is not the step's fault.
const restartSettle = 10 * time.Second

// Kind is what the reconciler does about a step's current attempt.
type Kind int

const (
	// Create creates the attempt's Job.
	Create Kind = iota
	// Abandon deletes the unfinished Job and fails the target with failure: another attempt
	// would fail the same way (an image that cannot be pulled).
	Abandon
	// StartNext starts the next ladder step's Job: this one's load has ended, or this one holds
	// the server lock the next one waits for (load.Step.ServerLock).
	StartNext
	// Watch watches an unfinished Job's pod for a start that does not come; with After set,
	// looks again then (the next step may start then).
	Watch
	// Wait looks again after After: the pod's result may still reach the cache, or the
	// server's status may not show the restart that lost the connection yet.
	Wait
	// Record records Output, the step's successful result.
	Record
	// Retry counts a failed attempt (Failure) and retries the step.
	Retry
	// Fail fails the target (Failure): deterministic, or the retries are spent.
	Fail
)

// Action is Decide's answer.
type Action struct {
	Kind  Kind
	After time.Duration
	// Output is what the client printed (Record).
	Output load.Output
	// Failure is why the step failed, not yet redacted (Abandon, Retry, Fail);
	// Deterministic says that another attempt would fail the same way.
	Failure       string
	Deterministic bool
	// CancelNext: this attempt's client failed, so a next step's Job started early must go
	// before it measures anything that could be kept (its server lock is free once this step's
	// client has gone). Not when the client exited with a result and only its Job failed after.
	CancelNext bool
}

// serverLockHeld is how long a step's client container has run before the operator takes it
// that the client holds its server lock, and creates the next step's Job to wait on it: sysbench
// takes the lock in its init, a fraction of a second after it starts. startedAt is truncated to
// whole seconds and read on the node's clock, so this is at least two seconds of the container's
// own time with the clocks a second apart; the next Job's pod then takes the kubelet half a
// second or more to start. Were the current client later still (a throttled CPU), the two steps
// would measure in swapped order, never at once.
const serverLockHeld = 3 * time.Second

// Decide is what to do about a step's current attempt, from what was observed of it (o), the
// workload's client c, the next ladder step when it may start early (next, nil otherwise), and
// the attempts failed so far against the run's retry limit. It does no I/O.
//
// The next step starts as soon as this one's client has exited with a result; when both hold the
// same server lock (load.Step.ServerLock) already once this one's client has run for
// serverLockHeld and so holds the lock: the next pod starts while this step measures, and its
// client waits on the server for the lock. A next step without it (another client's, in a suite)
// waits for this one's end. A failed attempt cancels a next step started early.
func Decide(o Observed, c loadclient.Client, step load.Step, next *load.Step, failedAttempts, retryLimit int32) Action {
	hasNext := next != nil
	if !o.Exists {
		return Action{Kind: Create}
	}
	if !o.Finished {
		if o.Pod != nil && o.PodState.Failed && o.PodState.Reason == v1.ReasonImagePull {
			return Action{Kind: Abandon, Failure: "sysbench " + o.PodState.Message}
		}
		ended := loadEnded(c, step, o.Terminated, o.ExitCode, o.Message)
		switch {
		case hasNext && ended:
			return Action{Kind: StartNext}
		case o.Terminated && !ended:
			// Failed; the Job's Failed condition follows.
			return Action{Kind: Watch, CancelNext: true}
		case hasNext && o.Running && step.ServerLock != "" && next.ServerLock == step.ServerLock &&
			c.Capabilities().WaitsForServerLock:
			if o.RunningFor >= serverLockHeld {
				return Action{Kind: StartNext}
			}
			return Action{Kind: Watch, After: serverLockHeld - o.RunningFor}
		}
		return Action{Kind: Watch}
	}
	if !o.Terminated && o.SinceFinished < podResultGrace {
		// The Job and pod informers are independent: the Job's final condition can reach the
		// cache before the pod update that carries the result. The pod's event brings the next
		// reconcile; past the grace the result is taken as lost (a deleted pod, for example one
		// the deadline killed, never reports).
		return Action{Kind: Wait, After: podResultGrace - o.SinceFinished}
	}
	var failure *load.Failure
	var out load.Output
	switch {
	case o.Terminated:
		parsed, err := c.Parse(step, strings.NewReader(o.Message))
		if err != nil {
			failure = &load.Failure{Reason: fmt.Sprintf("unreadable result: %v", err)}
			break
		}
		failure = c.Classify(step, o.ExitCode, parsed)
		switch {
		case failure != nil:
		case o.Failed:
			failure = &load.Failure{Reason: "Job failed: " + o.Why}
		default:
			out = parsed
		}
	case o.Failed:
		failure = &load.Failure{Reason: "Job failed: " + o.Why}
	default:
		failure = &load.Failure{Reason: "Job " + o.Job.Name + " completed but its pod and result are gone"}
	}
	if failure == nil {
		return Action{Kind: Record, Output: out}
	}
	// A next step started early after this one's client exited with a result measured after
	// this load, whatever the Job's end: it stands. One started while this client still held
	// the server lock may have measured after this one failed.
	cancelNext := !loadEnded(c, step, o.Terminated, o.ExitCode, o.Message)
	if loadclient.ConnectionLost(failure) && o.SinceFinished < restartSettle {
		// The server's pod status may not show the restart yet, and a restart is not the
		// step's fault.
		return Action{Kind: Wait, After: restartSettle - o.SinceFinished, CancelNext: cancelNext}
	}
	a := Action{Failure: failure.Reason, Deterministic: failure.Deterministic, CancelNext: cancelNext}
	switch {
	case failure.Deterministic, failedAttempts >= retryLimit:
		a.Kind = Fail
	default:
		a.Kind = Retry
	}
	return a
}
