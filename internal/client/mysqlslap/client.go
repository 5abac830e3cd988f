// Package mysqlslap is the client mysqlslap (or mariadb-slap): a number of queries per client,
// timed per iteration, on a schema it creates and drops at every step. Its launcher, option
// checks, parser and failure classes are internal/mysqlslap's; this package adapts them to
// internal/client's Client and says what mysqlslap's results look like. It runs the warm-up and
// the ladder steps; the probe is sysbench's, which proves the account and reads the server's
// version the same way for every client.
package mysqlslap

import (
	"fmt"
	"io"
	"time"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	sysbenchclient "github.com/mysqlbench/mysqlbench-operator/internal/client/sysbench"
	"github.com/mysqlbench/mysqlbench-operator/internal/enginefacts"
	"github.com/mysqlbench/mysqlbench-operator/internal/mysqlslap"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// Client is mysqlslap.
type Client struct{}

// probe runs the steps mysqlslap does not (the probe).
var probe = sysbenchclient.Client{}

// Name is mysqlslap.
func (Client) Name() v1.WorkloadClient { return v1.ClientMysqlslap }

// measures says whether mysqlslap runs step (the others are sysbench's).
func (Client) measures(step load.Step) bool {
	return step.Phase == load.PhaseRun || step.Phase == load.PhaseWarmup
}

// Program is mysqlslap for the steps it runs.
func (c Client) Program(step load.Step) string {
	if c.measures(step) {
		return "mysqlslap"
	}
	return probe.Program(step)
}

// Capabilities: QPS only (mysqlslap times whole iterations: no transactions, no per-query
// latency, no per-second series), server snapshots, no prepared data.
func (Client) Capabilities() load.Capabilities {
	return load.Capabilities{
		Metric:          load.QPS,
		ServerSnapshots: true,
		ReportNote: "QPS is mysqlslap's: the queries of one iteration (clients × average queries per client) " +
			"over the average time mysqlslap took to run them, over its iterations. mysqlslap measures no per-query " +
			"latency, so there is no latency table.",
		CommandNote: "($(MYSQLBENCH_*) come from the target's connection Secret; the container's launcher runs " +
			"mariadb-slap or mysqlslap, whichever the image has, with --defaults-extra-file holding the password, " +
			"from a file, and the server snapshots around it.)",
	}
}

// Validate checks what the mysqlslap steps need: an image (Image) and args the operator accepts
// (mysqlslap.ValidateArgs), so a run that cannot measure fails before its servers start.
func (Client) Validate(spec v1.BenchmarkRunSpec, t v1.Target) error {
	if _, err := Image(spec, t); err != nil {
		return err
	}
	return mysqlslap.ValidateArgs(spec.Workload.MysqlslapOrDefault().Args)
}

// Container runs mysqlslap (concurrency = the step's threads) in Image for the warm-up and the
// ladder steps, sysbench for the others. A mysqlslap step runs until its queries are done.
func (c Client) Container(spec v1.BenchmarkRunSpec, t v1.Target, step load.Step, secret, sysbenchImage string) (load.Invocation, string, error) {
	if !c.measures(step) {
		// sysbench's reporter loads a script before any command, for its options; the probe
		// runs none of it (it logs in and reads VERSION()).
		spec.Workload = v1.Workload{Script: "oltp_point_select", Tables: 1, TableSize: 1}
		return probe.Container(spec, t, step, secret, sysbenchImage)
	}
	img, err := Image(spec, t)
	if err != nil {
		return load.Invocation{}, "", err
	}
	inv, err := mysqlslap.Build(spec.Workload, secret, mysqlslap.Step{
		Phase: step.Phase, Concurrency: step.Threads, ServerStats: step.ServerStats})
	return inv, img, err
}

// Parse reads the launcher's output (mysqlslap's report in the sysbench form).
func (c Client) Parse(step load.Step, r io.Reader) (load.Output, error) {
	if !c.measures(step) {
		return probe.Parse(step, r)
	}
	return mysqlslap.ParseOutput(r)
}

// Classify is mysqlslap's failure, which includes a step that measured nothing.
func (c Client) Classify(step load.Step, exitCode int32, out load.Output) *load.Failure {
	if !c.measures(step) {
		return probe.Classify(step, exitCode, out)
	}
	return mysqlslap.Classify(exitCode, out)
}

// Result is the Benchmark report's step result (QPS and the duration only).
func (Client) Result(_ load.Step, out load.Output) v1.StepResult { return out.Final.StepResult() }

// AfterLadder: nothing; mysqlslap drops its own schema at the end of every step.
func (Client) AfterLadder(v1.Workload, bool) (load.Phase, bool) { return "", false }

// SnapshotRepeats is workload.mysqlslap.iterations: the Benchmark report counts one
// iteration's queries, the snapshots span them all.
func (Client) SnapshotRepeats(w v1.Workload) int {
	return int(w.MysqlslapOrDefault().Iterations)
}

// Describe: "mysqlslap, mixed load, 10000 queries x 1 iteration(s) per step (...); clients 1 2 4,
// at most 30s per step".
func (Client) Describe(s v1.BenchmarkRunSpec, threads string) string {
	m := s.Workload.MysqlslapOrDefault()
	what := "mysqlslap, its own SQL"
	if lt := m.LoadTypeOrDefault(); lt != "" {
		what = fmt.Sprintf("mysqlslap, %s load", lt)
	}
	return fmt.Sprintf("%s, %d queries x %d iteration(s) per step (QPS: all clients' queries over the average "+
		"iteration time; no latency); clients %s, at most %s per step", what, m.Queries, m.Iterations,
		threads, s.Ladder.StepDurationOrDefault())
}

// Record names the client and what it ran at each step.
func (c Client) Record(w v1.Workload, into *results.Workload) {
	ms := w.MysqlslapOrDefault()
	into.Client = string(c.Name())
	into.Mysqlslap = &results.MysqlslapWorkload{LoadType: string(ms.LoadTypeOrDefault()), Queries: ms.Queries,
		Iterations: ms.Iterations, Image: ms.Image, Args: ms.Args}
}

// Image is the image of target t's mysqlslap steps: workload.mysqlslap.image, else a builtin
// target's own server image, whose client (mysqlslap or mariadb-slap) matches the server. Other
// engines' images are chosen elsewhere (the Percona Operator) or unknown (external): they need
// workload.mysqlslap.image.
func Image(spec v1.BenchmarkRunSpec, t v1.Target) (string, error) {
	if m := spec.Workload.Mysqlslap; m != nil && m.Image != "" {
		return m.Image, nil
	}
	if enginefacts.Of(t.Engine).ImageIsServer && t.Image != "" {
		return t.Image, nil
	}
	return "", fmt.Errorf("target %s uses engine %s, whose image the operator does not choose: "+
		"set workload.mysqlslap.image to an image with mysqlslap or mariadb-slap, e.g. mysql:8.4", t.Name, t.EngineOrDefault())
}

// StepDeadline leaves every step's deadline to the operator.
func (Client) StepDeadline(v1.Workload, load.Step) (time.Duration, bool) { return 0, false }

// DataBytes leaves the data's size to the server builders' estimate.
func (Client) DataBytes(v1.Workload) (int64, bool) { return 0, false }
