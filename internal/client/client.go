// Package client is the seam between the operator and the load generators its step Jobs run
// (workload.client): what a step's container runs, how its output reads, why a step failed, and
// what the client measures. The controller, the builders, the report and the plugin ask the
// Client of a workload (For) instead of branching on its name, so a new client is its own
// package plus one entry in the registry (clients) and the API's enum.
//
// The clients' own code stays in their packages (internal/sysbench, internal/mysqlslap): they
// are large (launchers, parsers, classifiers with their real-binary tests), and this package
// only adapts each to the interface. The shapes every client fills (Invocation, Output, Final,
// Failure) stay in internal/sysbench, where the results, the series and the server counters
// already read them; they are named here by alias so that a client needs nothing else.
package client

import (
	"io"
	"slices"
	"time"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// Phase is what one step's container does for a target.
type Phase = sysbench.Phase

// The phases of a target's step Jobs. A client runs the ones its Capabilities and AfterLadder
// ask for; the probe is run for every target.
const (
	PhaseProbe   = sysbench.PhaseProbe
	PhasePrepare = sysbench.PhasePrepare
	PhaseWarmup  = sysbench.PhaseWarmup
	PhaseRun     = sysbench.PhaseRun
	PhaseCleanup = sysbench.PhaseCleanup
	// PhaseCheck is a post-run check of the data the ladder left (a client whose AfterLadder
	// asks for it, e.g. a TPC-C consistency check).
	PhaseCheck Phase = "check"
)

// Step is one step's work: its phase, threads and duration (ladder steps and the warm-up), and
// whether a ladder step snapshots the server.
type Step = sysbench.Step

// Invocation is what a step's container runs: command, args, env, and the volumes they need.
type Invocation = sysbench.Invocation

// Output is what a step's container printed, parsed: its final report, per-second series,
// error lines and server snapshots.
type Output = sysbench.Output

// Final is a step's final report.
type Final = sysbench.Final

// Failure is why a step failed, for the user, with whether another attempt could succeed.
type Failure = sysbench.Failure

// Metric names a client's primary measurement, as reports and charts label it.
type Metric struct {
	// Name is the short label: "QPS", "tpmC".
	Name string
	// Unit is what one of it counts: "queries/s".
	Unit string
}

// Capabilities are what a client does and measures: the controller plans a target's phases from
// them, the report and the plugin show only what the client reports.
type Capabilities struct {
	// PreparesData says that the ladder runs on tables a prepare step loads (unless
	// workload.skipPrepare) and that a restarted server may have lost; false: every step makes
	// its own, and a restarted server needs nothing prepared again.
	PreparesData bool
	// Metric is the client's primary measurement.
	Metric Metric
	// Transactions says that steps report transactions per second.
	Transactions bool
	// Percentiles are the latency percentiles steps report (v1alpha1.Latency); none: the client
	// measures no per-query latency.
	Percentiles []int
	// Series says that a ladder step's log holds a per-second series.
	Series bool
	// ServerSnapshots says that a ladder step can snapshot the server's counters before and
	// after its load (spec.serverStats).
	ServerSnapshots bool
	// FixedDuration says that a ladder step runs for ladder.stepDuration, so one that measured
	// for longer is flagged (sysbench.OverDuration); false: it runs until its work is done.
	FixedDuration bool
	// ReportNote, when set, is a sentence report.md adds under the metric's table: how the
	// client's metric is defined when it is not sysbench's, what it does not measure.
	ReportNote string
	// CommandNote says, under the plugin's printed command lines, where their $(VAR)s and the
	// password come from.
	CommandNote string
}

// Reports says whether steps report latency percentile p.
func (c Capabilities) Reports(p int) bool { return slices.Contains(c.Percentiles, p) }

// Client is one load generator.
type Client interface {
	// Name is the client's workload.client value.
	Name() v1.WorkloadClient
	// Program is the program step's container runs, for messages ("sysbench", "mysqlslap").
	Program(step Step) string
	// Capabilities are what the client does and measures.
	Capabilities() Capabilities
	// Validate checks what the client needs of spec for target t (an image, options it
	// accepts), before anything is provisioned for the target; the error says what to change.
	Validate(spec v1.BenchmarkRunSpec, t v1.Target) error
	// Container is what step's container runs for target t and the image it runs in. secret
	// names the connection Secret (sysbench.SecretKey* keys); sysbenchImage is the run's sysbench
	// image, for the steps a client leaves to sysbench (the probe). The error is for the user.
	Container(spec v1.BenchmarkRunSpec, t v1.Target, step Step, secret, sysbenchImage string) (Invocation, string, error)
	// Parse reads step's log or termination message. It fails when the output is not the
	// client's (a malformed report), never because the step failed: Classify says that.
	Parse(step Step, r io.Reader) (Output, error)
	// Classify is why a finished step failed, from its exit code and parsed output; nil when
	// it succeeded and measured something.
	Classify(step Step, exitCode int32, out Output) *Failure
	// Result is a successful ladder step's result (Classify passed it); the controller adds
	// the step's threads, repetition, attempts and times.
	Result(step Step, out Output) v1.StepResult
	// AfterLadder is the phase of the one Job a target runs after its ladder, before it
	// succeeds (a cleanup, a check), and whether there is one. keepsData says that the server
	// outlives the run (engine external): what the client prepared there must be dropped.
	AfterLadder(w v1.Workload, keepsData bool) (Phase, bool)
	// SnapshotRepeats is how many times a ladder step's final report's queries ran between its
	// server snapshots (a client that repeats its measured work and reports one round): the
	// server counters are divided by that many queries. 1 for most clients.
	SnapshotRepeats(w v1.Workload) int
	// Describe is the plugin's one-line summary of what every step runs; threads lists the
	// ladder's thread counts ("1 2 4 8").
	Describe(spec v1.BenchmarkRunSpec, threads string) string
	// Record writes what results.json says about the client's workload.
	Record(w v1.Workload, into *results.Workload)
	// StepDeadline is the active deadline of step's Job when the client sets it (a check that
	// reads every warehouse); false: the operator's default for the phase.
	StepDeadline(w v1.Workload, step Step) (time.Duration, bool)
	// DataBytes is what the client's prepare loads onto the server's data volume, when the
	// client knows it; false: the workload's sbtest rows (the server builders' estimate).
	DataBytes(w v1.Workload) (int64, bool)
}

// clients are the operator's clients by name. A new client adds itself here.
var clients = map[v1.WorkloadClient]Client{
	v1.ClientSysbench:  Sysbench{},
	v1.ClientMysqlslap: Mysqlslap{},
	v1.ClientGoTPC:     GoTPC{},
}

// For is the client of workload w (sysbench when workload.client is unset). The API admits only
// the clients registered here; a name it does not know (an object the API server stored under
// an older enum) gets sysbench, as before the field existed.
func For(w v1.Workload) Client {
	if c, ok := clients[w.ClientOrDefault()]; ok {
		return c
	}
	return clients[v1.ClientSysbench]
}

// Named is the client a results document names ("" is sysbench: results written before the
// field existed), and whether the operator knows it; one it does not know (a document of a newer
// operator) gets sysbench, so that what reads it shows what sysbench would.
func Named(name string) (Client, bool) {
	if name == "" {
		return clients[v1.ClientSysbench], true
	}
	if c, ok := clients[v1.WorkloadClient(name)]; ok {
		return c, true
	}
	return clients[v1.ClientSysbench], false
}

// Prepares says whether a target of workload w runs a prepare step: its client runs on prepared
// data, and workload.skipPrepare does not say that the data is there already.
func Prepares(w v1.Workload) bool {
	return For(w).Capabilities().PreparesData && !w.SkipPrepare
}

// connectionLost are the MySQL client errors a server restart causes: such a step waits for the
// server's status to catch up before its failure counts.
var connectionLost = map[int]bool{2002: true, 2003: true, 2006: true, 2013: true}

// ConnectionLost says whether f is a lost or refused connection, which a server restart causes.
func ConnectionLost(f *Failure) bool {
	return f != nil && connectionLost[f.Code]
}
