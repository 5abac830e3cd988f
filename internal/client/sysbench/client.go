// Package sysbench is the client sysbench 1.0 with the operator's Lua reporter: a stock or custom
// script on sbtest tables that a prepare step loads. Its command line, reporter, parser and
// failure classes are internal/sysbench's, which is also the connection contract every client's
// container shares (the connection Secret's keys, the password file, the probe); this package
// adapts them to internal/client's Client and says what sysbench's results look like.
package sysbench

import (
	"fmt"
	"io"
	"time"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// Client is sysbench.
type Client struct{}

// Name is sysbench.
func (Client) Name() v1.WorkloadClient { return v1.ClientSysbench }

// Program is sysbench.
func (Client) Program(load.Step) string { return "sysbench" }

// Capabilities: QPS, TPS and p95 latency, a per-second series, server snapshots, prepared
// tables, steps of a fixed duration.
func (Client) Capabilities() load.Capabilities {
	return load.Capabilities{
		PreparesData:    true,
		Metric:          load.QPS,
		Transactions:    true,
		Percentiles:     []int{load.Percentile},
		Series:          true,
		ServerSnapshots: true,
		FixedDuration:   true,
		// The reporter takes the lock in init(), before sysbench starts its clock.
		WaitsForServerLock: true,
		CommandNote: "($(MYSQLBENCH_*) come from the target's connection Secret; the container's launcher adds " +
			"--config-file with the password, from a file, and --mysql-db.)",
	}
}

// Validate has nothing to check before provisioning: Container checks the workload, and the
// API's rules the rest.
func (Client) Validate(v1.BenchmarkRunSpec, v1.Target) error { return nil }

// Container is sysbench's command line for step, in the run's sysbench image.
func (Client) Container(spec v1.BenchmarkRunSpec, _ v1.Target, step load.Step, secret, sysbenchImage string) (load.Invocation, string, error) {
	inv, err := sysbench.Build(spec.Workload, secret, step)
	return inv, sysbenchImage, err
}

// Parse reads the reporter's lines.
func (Client) Parse(_ load.Step, r io.Reader) (load.Output, error) { return sysbench.ParseOutput(r) }

// Classify is sysbench's failure, and for a ladder step one that measured no query.
func (Client) Classify(step load.Step, exitCode int32, out load.Output) *load.Failure {
	if f := sysbench.Classify(exitCode, out); f != nil || step.Phase != load.PhaseRun {
		return f
	}
	return sysbench.MeasuredNothing(*out.Final, step.Duration)
}

// Result is the final report's step result.
func (Client) Result(_ load.Step, out load.Output) v1.StepResult { return out.Final.StepResult() }

// AfterLadder drops the sbtest tables on a server the user keeps, when the operator created
// them. Servers the operator runs are deleted with their data, or kept as they are for
// inspection.
func (Client) AfterLadder(w v1.Workload, keepsData bool) (load.Phase, bool) {
	return load.PhaseCleanup, keepsData && !w.SkipPrepare
}

// SnapshotRepeats is 1: the final report counts every query of the step.
func (Client) SnapshotRepeats(v1.Workload) int { return 1 }

// Describe: "oltp_point_select, 4 tables x 10000 rows; threads 1 2 4 8, 30s per step".
func (Client) Describe(s v1.BenchmarkRunSpec, threads string) string {
	script := string(s.Workload.Script)
	if cs := s.Workload.CustomScript; cs != nil {
		script = fmt.Sprintf("custom script (ConfigMap %s, key %s)", cs.Name, cs.Key)
	}
	return fmt.Sprintf("%s, %d tables x %d rows; threads %s, %s per step", script, s.Workload.Tables, s.Workload.TableSize,
		threads, s.Ladder.StepDurationOrDefault())
}

// Record leaves the client out of results.json: a document without one is sysbench's, as
// documents written before the field existed are.
func (Client) Record(v1.Workload, *results.Workload) {}

// StepDeadline leaves every step's deadline to the operator.
func (Client) StepDeadline(v1.Workload, load.Step) (time.Duration, bool) { return 0, false }

// DataBytes leaves the data's size to the server builders' estimate.
func (Client) DataBytes(v1.Workload) (int64, bool) { return 0, false }
