// Package client is the seam between the operator and the load generators its step Jobs run
// (workload.client): what a step's container runs, how its output reads, why a step failed,
// what the client measures, and how its results are written. The controller, the builders, the
// report, the charts, the metrics and the results database ask the Client of a workload (For)
// instead of branching on its name, so a new client is its own package plus one entry in the
// registry (clients) and the API's enum.
//
// Each client is whole in its own package (internal/client/sysbench, mysqlslap, gotpc), which
// adapts its implementation (internal/sysbench, internal/mysqlslap, internal/gotpc: builders,
// parsers, classifiers and their real-binary tests) and says what its results look like. The
// shapes every client fills (Step, Invocation, Output, Final, Failure, Capabilities) are
// internal/client/load's, below this package and the clients, so that the clients and their
// implementations need nothing above them.
package client

import (
	"io"
	"time"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/gotpc"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/mysqlslap"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/sysbench"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// Client is one load generator.
type Client interface {
	// Name is the client's workload.client value.
	Name() v1.WorkloadClient
	// Program is the program step's container runs, for messages ("sysbench", "mysqlslap").
	Program(step load.Step) string
	// Capabilities are what the client does and measures.
	Capabilities() load.Capabilities
	// Validate checks what the client needs of spec for target t (an image, options it
	// accepts), before anything is provisioned for the target; the error says what to change.
	Validate(spec v1.BenchmarkRunSpec, t v1.Target) error
	// Container is what step's container runs for target t and the image it runs in. secret
	// names the connection Secret (sysbench.SecretKey* keys); sysbenchImage is the run's sysbench
	// image, for the steps a client leaves to sysbench (the probe). The error is for the user.
	Container(spec v1.BenchmarkRunSpec, t v1.Target, step load.Step, secret, sysbenchImage string) (load.Invocation, string, error)
	// Parse reads step's log or termination message. It fails when the output is not the
	// client's (a malformed report), never because the step failed: Classify says that.
	Parse(step load.Step, r io.Reader) (load.Output, error)
	// Classify is why a finished step failed, from its exit code and parsed output; nil when
	// it succeeded and measured something.
	Classify(step load.Step, exitCode int32, out load.Output) *load.Failure
	// Result is a successful ladder step's result (Classify passed it); the controller adds
	// the step's threads, repetition, attempts and times.
	Result(step load.Step, out load.Output) v1.StepResult
	// AfterLadder is the phase of the one Job a target runs after its ladder, before it
	// succeeds (a cleanup, a check), and whether there is one. keepsData says that the server
	// outlives the run (engine external): what the client prepared there must be dropped.
	AfterLadder(w v1.Workload, keepsData bool) (load.Phase, bool)
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
	StepDeadline(w v1.Workload, step load.Step) (time.Duration, bool)
	// DataBytes is what the client's prepare loads onto the server's data volume, when the
	// client knows it; false: the workload's sbtest rows (the server builders' estimate).
	DataBytes(w v1.Workload) (int64, bool)

	Results
}

// Results is how a client's results are written beyond the figures every step has (its
// Capabilities name its metric, for the tables, charts, gauges and the results database): the
// report, results.csv, the worst case the results' budget assumes, the results database.
type Results interface {
	// WorkloadLine is report.md's one line on what the steps ran, from results.json.
	WorkloadLine(doc *results.Doc) string
	// ReportSection is Markdown report.md adds after the latency table, the client's own
	// figures (go-tpc's transactions per step); "" for none.
	ReportSection(doc *results.Doc) string
	// CSVColumns are the columns the client adds to results.csv.
	CSVColumns() []load.Columns
	// WidestStep fills the client's own fields of step s (StepResult.TPCC) with the widest
	// figures w, for the worst case that sizes the results' budget (report.SeriesBudget).
	WidestStep(w load.Widest, s *v1.StepResult)
	// RunLabels are what the results database's runs row says of workload w (doc: results.json
	// when the run has one).
	RunLabels(w v1.Workload, doc *results.Doc) load.RunLabels
}

// clients are the operator's clients, in the order their results.csv columns were added. A new
// client adds itself at the end.
var clients = []Client{
	sysbench.Client{},
	mysqlslap.Client{},
	gotpc.Client{},
}

// All are the registered clients, in registration order.
func All() []Client { return clients }

// fallback is the client of a workload or document that names no client, or one the operator
// does not know.
var fallback Client = sysbench.Client{}

// byName is the registered client called name, if any.
func byName(name v1.WorkloadClient) (Client, bool) {
	for _, c := range clients {
		if c.Name() == name {
			return c, true
		}
	}
	return nil, false
}

// For is the client of workload w (sysbench when workload.client is unset). The API admits only
// the clients registered here; a name it does not know (an object the API server stored under
// an older enum) gets sysbench, as before the field existed.
func For(w v1.Workload) Client {
	if c, ok := byName(w.ClientOrDefault()); ok {
		return c
	}
	return fallback
}

// Named is the client a results document names ("" is sysbench: results written before the
// field existed), and whether the operator knows it; one it does not know (a document of a newer
// operator) gets sysbench, so that what reads it shows what sysbench would.
func Named(name string) (Client, bool) {
	if name == "" {
		return fallback, true
	}
	if c, ok := byName(v1.WorkloadClient(name)); ok {
		return c, true
	}
	return fallback, false
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
func ConnectionLost(f *load.Failure) bool {
	return f != nil && connectionLost[f.Code]
}
