// Package gotpc is the client go-tpc (TPC-C), run by the operator's launcher in the go-tpc image:
// the warehouses are loaded once per target (prepare), every ladder step is a go-tpc run of the
// step's threads and duration, and go-tpc's consistency check runs after the ladder. go-tpc's
// arguments, parsers, failure classes and the launcher's record are internal/gotpc's, which the
// launcher binary links without the operator; this package adapts them to internal/client's
// Client and says what a TPC-C run's results look like. The probe is sysbench's, which proves
// the account and reads the server's version the same way for every client.
package gotpc

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	sysbenchclient "github.com/mysqlbench/mysqlbench-operator/internal/client/sysbench"
	"github.com/mysqlbench/mysqlbench-operator/internal/enginefacts"
	"github.com/mysqlbench/mysqlbench-operator/internal/gotpc"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// Client is go-tpc.
type Client struct{}

// probe runs the steps go-tpc does not (the probe).
var probe = sysbenchclient.Client{}

// tpmC is TPC-C's throughput: new-order transactions per minute.
var tpmC = load.Metric{
	Name: "tpmC", Unit: "new-order transactions/min", Axis: "new-order transactions per minute", Key: "tpmC",
	Gauge: "mysqlbench_step_tpmc",
	GaugeHelp: "TPC-C new-order transactions per minute of the newest finished go-tpc ladder step " +
		"(workload.client go-tpc).",
}

// Name is go-tpc.
func (Client) Name() v1.WorkloadClient { return v1.ClientGoTPC }

// measures says whether go-tpc runs step (the probe is sysbench's).
func (Client) measures(step load.Step) bool { return step.Phase != load.PhaseProbe }

// Program is go-tpc for the steps it runs.
func (g Client) Program(step load.Step) string {
	if g.measures(step) {
		return "go-tpc"
	}
	return probe.Program(step)
}

// Capabilities: tpmC, transactions per second (all five types), the new-order transaction's
// p95 latency, prepared data, steps of a fixed duration. No per-second series in the status (the
// log holds go-tpc's interval reports) and no server snapshots.
func (Client) Capabilities() load.Capabilities {
	return load.Capabilities{
		PreparesData:   true,
		Metric:         tpmC,
		Transactions:   true,
		Percentiles:    []int{load.Percentile},
		LatencyHeading: "New-order p95 latency (ms) by threads",
		NoSeries:       "go-tpc records no per-second series",
		FixedDuration:  true,
		ReportNote: "tpmC is go-tpc's: new-order transactions per minute over the step, run with no keying or " +
			"thinking time, so efficiency is far above 100 % and the figures compare servers, not audited TPC-C " +
			"results. TPS counts the successful transactions of all five types; latency is the new-order " +
			"transaction's.",
		CommandNote: "($(MYSQLBENCH_*) come from the target's connection Secret; the image's launcher runs go-tpc " +
			"with them and the password, read from a file, and writes the result for the operator.)",
	}
}

// Validate checks what the go-tpc steps need: settings go-tpc accepts, and for a server the
// operator runs, storage that holds the warehouses.
func (g Client) Validate(spec v1.BenchmarkRunSpec, t v1.Target) error {
	if spec.Workload.TPCC == nil {
		return errors.New("workload.client go-tpc needs workload.tpcc with its warehouses")
	}
	c := spec.Workload.TPCCOrDefault()
	step := gotpc.Step{Phase: gotpc.PhasePrepare, Warehouses: c.Warehouses, Threads: c.LoadThreads}
	if enginefacts.Of(t.Engine).CreatesServer && !spec.Workload.SkipPrepare {
		step.StorageBytes = EmptyDirDataBytes
		if spec.Storage != nil {
			step.StorageBytes = spec.Storage.Size.Value()
		}
	}
	if err := step.Validate(); err != nil {
		return fmt.Errorf("workload.tpcc: %w", err)
	}
	for _, d := range []time.Duration{spec.Ladder.StepDurationOrDefault(), spec.Ladder.WarmupDuration()} {
		if d%time.Second != 0 {
			return fmt.Errorf("go-tpc runs for whole seconds: ladder durations of %s are not, e.g. use %s", d, d.Round(time.Second))
		}
	}
	return nil
}

// EmptyDirDataBytes is the room for a client's data on a builtin server without spec.storage:
// the data emptyDir's ceiling (64GiB, builtin.DataEmptyDirLimit) less the 2GiB of the server's own
// files.
const EmptyDirDataBytes int64 = 62 << 30

// tpccStep is the go-tpc invocation of step for target t.
func (Client) tpccStep(spec v1.BenchmarkRunSpec, t v1.Target, step load.Step) (gotpc.Step, error) {
	c := spec.Workload.TPCCOrDefault()
	s := gotpc.Step{Warehouses: c.Warehouses, Threads: step.Threads, Duration: step.Duration,
		IgnoreError: *c.IgnoreErrors}
	switch step.Phase {
	case load.PhasePrepare:
		s.Phase, s.Threads = gotpc.PhasePrepare, c.LoadThreads
	case load.PhaseWarmup:
		s.Phase = gotpc.PhaseWarmup
	case load.PhaseRun:
		s.Phase = gotpc.PhaseRun
	case load.PhaseCheck:
		s.Phase, s.Threads = gotpc.PhaseCheck, 0
		// On a server the user keeps, the check's Job also drops the tables it loaded.
		s.CleanupAfterCheck = keepsData(t) && !spec.Workload.SkipPrepare
	case load.PhaseCleanup:
		s.Phase, s.Threads = gotpc.PhaseCleanup, 0
	default:
		return gotpc.Step{}, fmt.Errorf("go-tpc runs no %s step", step.Phase)
	}
	return s, nil
}

// keepsData says that target t's server outlives the run (the operator did not create it).
func keepsData(t v1.Target) bool { return !enginefacts.Of(t.Engine).CreatesServer }

// Container runs the launcher in workload.tpcc.image for go-tpc's steps, sysbench's probe for
// the probe.
func (g Client) Container(spec v1.BenchmarkRunSpec, t v1.Target, step load.Step, secret, sysbenchImage string) (load.Invocation, string, error) {
	if !g.measures(step) {
		spec.Workload = v1.Workload{Script: "oltp_point_select", Tables: 1, TableSize: 1}
		return probe.Container(spec, t, step, secret, sysbenchImage)
	}
	s, err := g.tpccStep(spec, t, step)
	if err != nil {
		return load.Invocation{}, "", err
	}
	args, err := gotpc.LauncherArgs(s)
	if err != nil {
		return load.Invocation{}, "", err
	}
	env := append(sysbench.ConnectionEnv(secret),
		corev1.EnvVar{Name: sysbench.EnvResultFile, Value: sysbench.TerminationMessagePath})
	return load.Invocation{
		Command:      []string{gotpc.LauncherPath},
		Args:         args,
		Env:          env,
		Volumes:      sysbench.CredentialVolumes(secret),
		VolumeMounts: sysbench.CredentialMounts(),
	}, spec.Workload.TPCCOrDefault().Image, nil
}

// StepDeadline is workload.tpcc.checkTimeout for the check; the defaults otherwise.
func (g Client) StepDeadline(w v1.Workload, step load.Step) (time.Duration, bool) {
	if step.Phase == load.PhaseCheck {
		return w.TPCCOrDefault().CheckTimeout.Duration, true
	}
	return 0, false
}

// Parse reads the launcher's record (the termination message, or the last record of a log).
// Output.Final is set for a step whose go-tpc ran to its end; Output.Detail is the record.
func (g Client) Parse(step load.Step, r io.Reader) (load.Output, error) {
	if !g.measures(step) {
		return probe.Parse(step, r)
	}
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return load.Output{}, fmt.Errorf("read go-tpc output: %w", err)
	}
	rec, ok, err := gotpc.FindRecord(string(b))
	if err != nil {
		return load.Output{}, err
	}
	if !ok {
		// The kubelet fills the termination message with the log's tail when the launcher
		// wrote nothing (it died): that is the step's failure, for Classify.
		return load.Output{Fatal: tailLines(string(b), 5)}, nil
	}
	out := load.Output{Detail: rec}
	if rec.Failure != nil || rec.ExitCode != 0 {
		return out, nil
	}
	f := &load.Final{Version: sysbench.FormatVersion, Command: string(rec.Phase), Threads: rec.Threads,
		DurationSeconds: math.Round(rec.Seconds)}
	if res := rec.Result; res != nil {
		no := res.Summary[gotpc.NewOrder]
		f.DurationSeconds = no.Takes
		f.TPS = res.TpmTotal / 60
		f.Errors = res.Errors()
		f.Percentile = load.Percentile
		f.LatencyMs = load.LatencyMs{Avg: no.AvgMs, Pct: no.P95Ms, Max: no.MaxMs}
		for name, s := range res.Summary {
			if !isErr(name) {
				f.Events += s.Count
			}
		}
	}
	out.Final = f
	return out, nil
}

func isErr(name string) bool {
	return strings.HasSuffix(name, gotpc.ErrSuffix)
}

// Classify is the launcher's verdict: its classified failure, a go-tpc exit without one, a
// launcher that wrote no record, or a run that measured no new-order transaction.
func (g Client) Classify(step load.Step, exitCode int32, out load.Output) *load.Failure {
	if !g.measures(step) {
		return probe.Classify(step, exitCode, out)
	}
	rec, ok := out.Detail.(gotpc.Record)
	if !ok {
		reason := "the go-tpc launcher wrote no result"
		if len(out.Fatal) > 0 {
			reason += ": " + strings.Join(out.Fatal, " | ")
		}
		if exitCode != 0 {
			reason = fmt.Sprintf("%s (exit code %d)", reason, exitCode)
		}
		return &load.Failure{Reason: reason}
	}
	if f := rec.Failure; f != nil {
		return &load.Failure{Code: failureCode(f.Reason), Reason: "go-tpc " + string(rec.Phase) + ": " + f.Message,
			Deterministic: !f.Retryable}
	}
	if rec.ExitCode != 0 || exitCode != 0 {
		return &load.Failure{Reason: fmt.Sprintf("go-tpc %s exited with code %d: %s", rec.Phase, max(rec.ExitCode, int(exitCode)), rec.Tail)}
	}
	if (step.Phase == load.PhaseRun || step.Phase == load.PhaseWarmup) && (rec.Result == nil || rec.Result.TpmC <= 0) {
		return &load.Failure{Reason: "go-tpc run measured no new-order transaction"}
	}
	if step.Phase == load.PhaseCheck && rec.Check == nil {
		return &load.Failure{Reason: "go-tpc check reported no condition"}
	}
	return nil
}

// failureCode maps the launcher's reasons to the MySQL client error codes the controller treats
// as a lost server (ConnectionLost): a step that lost its server waits for the restart to show.
func failureCode(reason string) int {
	switch reason {
	case gotpc.ReasonConnectionLost:
		return 2013
	case gotpc.ReasonConnect:
		return 2003
	}
	return 0
}

// Result is a run's step result: tpmC and the transaction types in StepResult.TPCC, TPS over all
// successful transactions, the new-order transaction's latency, the failed transactions as errors.
func (Client) Result(_ load.Step, out load.Output) v1.StepResult {
	r := out.Final.StepResult()
	rec, ok := out.Detail.(gotpc.Record)
	if !ok || rec.Result == nil {
		return r
	}
	res := rec.Result
	t := &v1.TPCCResult{TpmC: res.TpmC, TpmTotal: res.TpmTotal, Efficiency: res.Efficiency}
	for _, name := range []string{gotpc.NewOrder, gotpc.Payment, gotpc.OrderStatus, gotpc.Delivery, gotpc.StockLevel} {
		s, ran := res.Summary[name]
		e := res.Summary[name+gotpc.ErrSuffix]
		if !ran && e.Count == 0 {
			continue
		}
		t.Transactions = append(t.Transactions, v1.TPCCTransaction{Name: name, Count: s.Count, Errors: e.Count,
			AvgMs: s.AvgMs, P50Ms: s.P50Ms, P95Ms: s.P95Ms, P99Ms: s.P99Ms, MaxMs: s.MaxMs})
	}
	r.TPCC = t
	return r
}

// AfterLadder is go-tpc's consistency check (workload.tpcc.check), which on a server the user
// keeps also drops the tables; without a check, a cleanup on such a server only.
func (Client) AfterLadder(w v1.Workload, keepsData bool) (load.Phase, bool) {
	if *w.TPCCOrDefault().Check {
		return load.PhaseCheck, true
	}
	return load.PhaseCleanup, keepsData && !w.SkipPrepare
}

// SnapshotRepeats is 1 (no snapshots are taken).
func (Client) SnapshotRepeats(v1.Workload) int { return 1 }

// DataBytes is what the warehouses take on the server's data volume.
func (Client) DataBytes(w v1.Workload) (int64, bool) {
	return int64(w.TPCCOrDefault().Warehouses)*gotpc.BytesPerWarehouse + gotpc.FixedBytes, true
}

// Describe: "go-tpc TPC-C, 10 warehouses (check after the ladder); clients 1 2 4 8, 60s per step".
func (Client) Describe(s v1.BenchmarkRunSpec, threads string) string {
	c := s.Workload.TPCCOrDefault()
	check := "no check"
	if *c.Check {
		check = "consistency check after the ladder"
	}
	return fmt.Sprintf("go-tpc %s TPC-C, %d warehouse(s) (%s; tpmC: new-order transactions per minute, no "+
		"keying or thinking time); clients %s, %s per step", gotpc.Version, c.Warehouses, check, threads,
		s.Ladder.StepDurationOrDefault())
}

// Record names the client and its TPC-C settings.
func (g Client) Record(w v1.Workload, into *results.Workload) {
	c := w.TPCCOrDefault()
	into.Client = string(g.Name())
	into.TPCC = &results.TPCCWorkload{Warehouses: c.Warehouses, LoadThreads: c.LoadThreads, Check: *c.Check,
		IgnoreErrors: *c.IgnoreErrors, Image: c.Image, GoTPC: gotpc.Version}
}

func tailLines(s string, n int) []string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}
