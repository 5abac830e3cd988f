package client

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/enginefacts"
	"github.com/mysqlbench/mysqlbench-operator/internal/gotpc"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// GoTPC is TPC-C through go-tpc (internal/gotpc), run by the operator's launcher in the go-tpc
// image: the warehouses are loaded once per target (prepare), every ladder step is a go-tpc run
// of the step's threads and duration, and go-tpc's consistency check runs after the ladder. The
// probe is sysbench's, which proves the account and reads the server's version the same way for
// every client.
type GoTPC struct{}

// Name is go-tpc.
func (GoTPC) Name() v1.WorkloadClient { return v1.ClientGoTPC }

// measures says whether go-tpc runs step (the probe is sysbench's).
func (GoTPC) measures(step Step) bool { return step.Phase != PhaseProbe }

// Program is go-tpc for the steps it runs.
func (g GoTPC) Program(step Step) string {
	if g.measures(step) {
		return "go-tpc"
	}
	return Sysbench{}.Program(step)
}

// Capabilities: tpmC, transactions per second (all five types), the new-order transaction's
// p95 latency, prepared data, steps of a fixed duration. No per-second series in the status (the
// log holds go-tpc's interval reports) and no server snapshots.
func (GoTPC) Capabilities() Capabilities {
	return Capabilities{
		PreparesData:  true,
		Metric:        Metric{Name: "tpmC", Unit: "new-order transactions/min"},
		Transactions:  true,
		Percentiles:   []int{95},
		FixedDuration: true,
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
func (g GoTPC) Validate(spec v1.BenchmarkRunSpec, t v1.Target) error {
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
func (GoTPC) tpccStep(spec v1.BenchmarkRunSpec, t v1.Target, step Step) (gotpc.Step, error) {
	c := spec.Workload.TPCCOrDefault()
	s := gotpc.Step{Warehouses: c.Warehouses, Threads: step.Threads, Duration: step.Duration,
		IgnoreError: *c.IgnoreErrors}
	switch step.Phase {
	case PhasePrepare:
		s.Phase, s.Threads = gotpc.PhasePrepare, c.LoadThreads
	case PhaseWarmup:
		s.Phase = gotpc.PhaseWarmup
	case PhaseRun:
		s.Phase = gotpc.PhaseRun
	case PhaseCheck:
		s.Phase, s.Threads = gotpc.PhaseCheck, 0
		// On a server the user keeps, the check's Job also drops the tables it loaded.
		s.CleanupAfterCheck = keepsData(t) && !spec.Workload.SkipPrepare
	case PhaseCleanup:
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
func (g GoTPC) Container(spec v1.BenchmarkRunSpec, t v1.Target, step Step, secret, sysbenchImage string) (Invocation, string, error) {
	if !g.measures(step) {
		spec.Workload = v1.Workload{Script: "oltp_point_select", Tables: 1, TableSize: 1}
		return Sysbench{}.Container(spec, t, step, secret, sysbenchImage)
	}
	s, err := g.tpccStep(spec, t, step)
	if err != nil {
		return Invocation{}, "", err
	}
	args, err := gotpc.LauncherArgs(s)
	if err != nil {
		return Invocation{}, "", err
	}
	env := append(sysbench.ConnectionEnv(secret),
		corev1.EnvVar{Name: sysbench.EnvResultFile, Value: sysbench.TerminationMessagePath})
	return Invocation{
		Command:      []string{gotpc.LauncherPath},
		Args:         args,
		Env:          env,
		Volumes:      sysbench.CredentialVolumes(secret),
		VolumeMounts: sysbench.CredentialMounts(),
	}, spec.Workload.TPCCOrDefault().Image, nil
}

// StepDeadline is workload.tpcc.checkTimeout for the check; the defaults otherwise.
func (g GoTPC) StepDeadline(w v1.Workload, step Step) (time.Duration, bool) {
	if step.Phase == PhaseCheck {
		return w.TPCCOrDefault().CheckTimeout.Duration, true
	}
	return 0, false
}

// Parse reads the launcher's record (the termination message, or the last record of a log).
// Output.Final is set for a step whose go-tpc ran to its end; Output.Detail is the record.
func (g GoTPC) Parse(step Step, r io.Reader) (Output, error) {
	if !g.measures(step) {
		return Sysbench{}.Parse(step, r)
	}
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return Output{}, fmt.Errorf("read go-tpc output: %w", err)
	}
	rec, ok, err := gotpc.FindRecord(string(b))
	if err != nil {
		return Output{}, err
	}
	if !ok {
		// The kubelet fills the termination message with the log's tail when the launcher
		// wrote nothing (it died): that is the step's failure, for Classify.
		return Output{Fatal: tailLines(string(b), 5)}, nil
	}
	out := Output{Detail: rec}
	if rec.Failure != nil || rec.ExitCode != 0 {
		return out, nil
	}
	f := &Final{Version: sysbench.FormatVersion, Command: string(rec.Phase), Threads: rec.Threads,
		DurationSeconds: math.Round(rec.Seconds)}
	if res := rec.Result; res != nil {
		no := res.Summary[gotpc.NewOrder]
		f.DurationSeconds = no.Takes
		f.TPS = res.TpmTotal / 60
		f.Errors = res.Errors()
		f.Percentile = sysbench.Percentile
		f.LatencyMs = sysbench.LatencyMs{Avg: no.AvgMs, Pct: no.P95Ms, Max: no.MaxMs}
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
func (g GoTPC) Classify(step Step, exitCode int32, out Output) *Failure {
	if !g.measures(step) {
		return Sysbench{}.Classify(step, exitCode, out)
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
		return &Failure{Reason: reason}
	}
	if f := rec.Failure; f != nil {
		return &Failure{Code: failureCode(f.Reason), Reason: "go-tpc " + string(rec.Phase) + ": " + f.Message,
			Deterministic: !f.Retryable}
	}
	if rec.ExitCode != 0 || exitCode != 0 {
		return &Failure{Reason: fmt.Sprintf("go-tpc %s exited with code %d: %s", rec.Phase, max(rec.ExitCode, int(exitCode)), rec.Tail)}
	}
	if (step.Phase == PhaseRun || step.Phase == PhaseWarmup) && (rec.Result == nil || rec.Result.TpmC <= 0) {
		return &Failure{Reason: "go-tpc run measured no new-order transaction"}
	}
	if step.Phase == PhaseCheck && rec.Check == nil {
		return &Failure{Reason: "go-tpc check reported no condition"}
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
func (GoTPC) Result(_ Step, out Output) v1.StepResult {
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
func (GoTPC) AfterLadder(w v1.Workload, keepsData bool) (Phase, bool) {
	if *w.TPCCOrDefault().Check {
		return PhaseCheck, true
	}
	return PhaseCleanup, keepsData && !w.SkipPrepare
}

// SnapshotRepeats is 1 (no snapshots are taken).
func (GoTPC) SnapshotRepeats(v1.Workload) int { return 1 }

// DataBytes is what the warehouses take on the server's data volume.
func (GoTPC) DataBytes(w v1.Workload) (int64, bool) {
	return int64(w.TPCCOrDefault().Warehouses)*gotpc.BytesPerWarehouse + gotpc.FixedBytes, true
}

// Describe: "go-tpc TPC-C, 10 warehouses (check after the ladder); clients 1 2 4 8, 60s per step".
func (GoTPC) Describe(s v1.BenchmarkRunSpec, threads string) string {
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
func (g GoTPC) Record(w v1.Workload, into *results.Workload) {
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
