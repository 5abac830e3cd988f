// Package load is the vocabulary a load generator's step speaks, shared by the operator and every
// client (internal/client's Client): what a step is (Step, Phase), what its container runs
// (Invocation), what it printed (Output, Final, Interval), why it failed (Failure), what a client
// measures (Capabilities, Metric) and the shapes in which it adds its own results to the run's
// (Columns, Widest).
//
// It sits below internal/client and its client packages: internal/client registers the clients,
// so it imports them, and they and their implementations (internal/sysbench, internal/mysqlslap,
// internal/gotpc) fill these shapes, so they import this package and nothing above it.
package load

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Phase is what one step's container does for a target.
type Phase string

// The phases of a target's step Jobs. A client runs the ones its Capabilities and AfterLadder
// ask for; the probe is run for every target.
const (
	// PhasePrepare loads the data the ladder runs on (sysbench's sbtest tables, TPC-C's
	// warehouses).
	PhasePrepare Phase = "prepare"
	// PhaseWarmup is a run whose result is discarded.
	PhaseWarmup Phase = "warmup"
	// PhaseRun is one step of the ladder.
	PhaseRun Phase = "run"
	// PhaseCleanup drops what the prepare loaded.
	PhaseCleanup Phase = "cleanup"
	// PhaseProbe logs in with the benchmark account and reports the server's VERSION(): the
	// operator's proof that a server is ready for the client.
	PhaseProbe Phase = "probe"
	// PhaseCheck is a post-run check of the data the ladder left (a client whose AfterLadder
	// asks for it, e.g. a TPC-C consistency check).
	PhaseCheck Phase = "check"
)

// Step is one step's work: its phase, threads and duration (ladder steps and the warm-up), and
// whether a ladder step snapshots the server. Threads and Duration are ignored for prepare and
// cleanup.
type Step struct {
	Phase    Phase
	Threads  int32
	Duration time.Duration
	// ServerStats makes a PhaseRun step snapshot the server's counters and waits before and
	// after the run (Output.Server), outside the measured window; other phases ignore it. The
	// benchmark account needs the grants of sysbench.ServerStatsGrants for all of it; without
	// them the snapshots say what they could not read, and the step is unaffected.
	ServerStats bool
	// ScriptSHA256 is the digest (sysbench.Digest) of workload.customScript's content as the
	// operator read it: the step runs the mounted script only when it has this digest. Empty
	// with a custom script, the step refuses to run (the operator always sets it; a printed plan
	// cannot know it).
	ScriptSHA256 string
	// ServerLock, when set, names the server-side lock a PhaseRun step holds while it loads the
	// server, after waiting up to ServerLockWait for whoever holds it: the step before, whose
	// Job the operator created first. It lets the operator start a step's Job while the step
	// before still measures, without two loads on the server at once. Only a client whose
	// Capabilities say WaitsForServerLock honours it; other phases ignore it.
	ServerLock     string
	ServerLockWait time.Duration
}

// Invocation is what a step's container runs. Volumes are the pod volumes its VolumeMounts name
// (the password file and the option file's directory); the pod must also run the container with
// a group in its fsGroup that the password file's mode lets read it (mode 0440, owned by root
// and the fsGroup, as the kubelet sets it).
type Invocation struct {
	Command      []string
	Args         []string
	Env          []corev1.EnvVar
	Volumes      []corev1.Volume
	VolumeMounts []corev1.VolumeMount
}
