package specs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/enginefacts"
)

// DefaultSysbenchImage is the project's Debian bookworm sysbench 1.0.20 image (images/sysbench).
const DefaultSysbenchImage = "ghcr.io/mysqlbench/sysbench:1.0.20"

// The step names of a target's one-Job phases: JobName's step and the step label.
const (
	StepProbe   = "probe"
	StepPrepare = "prepare"
	StepWarmup  = "warmup"
	StepCleanup = "cleanup"
)

// Step is one step Job of a target: its name (JobName's step and the step label), the load its
// client runs in it, and the name of the workload it runs ("" for the run's one spec.workload).
type Step struct {
	Name     string
	Load     load.Step
	Workload string
}

// ForWorkload is run as if w were its one spec.workload: what the clients read when they build,
// parse and check the Jobs of w's steps.
func ForWorkload(run *v1.BenchmarkRun, w v1.RunWorkload) *v1.BenchmarkRun {
	out := *run
	out.Spec = run.Spec.WithWorkload(w.Workload)
	return &out
}

// ForStep is ForWorkload of the step's workload; run itself when it has one spec.workload.
func ForStep(run *v1.BenchmarkRun, s Step) *v1.BenchmarkRun {
	if !run.Spec.Suite() {
		return run
	}
	return ForWorkload(run, StepWorkload(run, s))
}

// StepWorkload is the workload step s runs: the suite's workload of its name, with the
// after-ladder Job's tables (afterLadderWorkload) for the after-ladder phases; the run's first
// workload for a step that names none.
func StepWorkload(run *v1.BenchmarkRun, s Step) v1.RunWorkload {
	switch s.Load.Phase {
	case load.PhaseCleanup, load.PhaseCheck:
		return afterLadderWorkload(run)
	}
	for _, w := range run.Spec.OrderedWorkloads() {
		if w.Name == s.Workload {
			return w
		}
	}
	return run.Spec.WorkloadAt(0)
}

// ProbeStep proves the benchmark account and reads the server's version.
func ProbeStep() Step {
	return Step{Name: StepProbe, Load: load.Step{Phase: load.PhaseProbe}}
}

// ProbeStepOf is ProbeStep with the run's first workload, whose client probes (every workload
// of a run has the same client).
func ProbeStepOf(run *v1.BenchmarkRun) Step {
	s := ProbeStep()
	s.Workload = run.Spec.WorkloadAt(0).Name
	return s
}

// PrepareStep creates and fills the sbtest tables of a run of one workload.
func PrepareStep() Step {
	return Step{Name: StepPrepare, Load: load.Step{Phase: load.PhasePrepare}}
}

// PrepareStepAt loads the data of the workload of step i (0-based, in measuring order) before
// that step: "prepare" at the start (and after a server restart that lost the data), and
// "prepare-<i+1>" where the run prepares the data again for step i (FreshDataBefore), so that
// every such prepare has Jobs of its own.
func PrepareStepAt(run *v1.BenchmarkRun, i int) Step {
	return Step{Name: nameAt(run, StepPrepare, i), Load: load.Step{Phase: load.PhasePrepare}, Workload: run.Spec.WorkloadAt(i).Name}
}

// WarmupStep is the warm-up of a run whose ladder has one (PhaseAfterPrepare says so).
func WarmupStep(run *v1.BenchmarkRun) Step { return WarmupStepAt(run, 0) }

// WarmupStepAt is the warm-up before step i, with its workload: after every prepare, so that
// data prepared again for a later workload is measured as warm as the first workload's.
func WarmupStepAt(run *v1.BenchmarkRun, i int) Step {
	return Step{Name: nameAt(run, StepWarmup, i), Load: load.Step{Phase: load.PhaseWarmup,
		Threads: run.Spec.Ladder.WarmupThreadsOrDefault(), Duration: run.Spec.Ladder.WarmupDuration()},
		Workload: run.Spec.WorkloadAt(i).Name}
}

// nameAt names the prepare or warm-up step before step i: the phase's own name, with the step's
// number where the data is prepared again for it.
func nameAt(run *v1.BenchmarkRun, phase string, i int) string {
	if fresh, _ := run.Spec.FreshDataBefore(i); fresh {
		return fmt.Sprintf("%s-%d", phase, i+1)
	}
	return phase
}

// LadderStepAt is step i (0-based, in measuring order: a rung of one workload in one
// repetition, see StepPosition) of a target's ladder. Its name is LadderStep's, after the
// workload's name in a suite.
func LadderStepAt(run *v1.BenchmarkRun, i int) Step {
	_, rung, rep := run.Spec.StepPosition(i)
	w := run.Spec.WorkloadAt(i)
	name := LadderStep(rung, rep)
	if w.Name != "" {
		name = w.Name + "-" + name
	}
	return Step{Name: name, Load: load.Step{Phase: load.PhaseRun,
		Threads: run.Spec.Ladder.Threads[rung], Duration: run.Spec.Ladder.StepDurationOrDefault(),
		ServerStats: run.Spec.ServerStatsEnabled()}, Workload: w.Name}
}

// ServerLockSlack is how much longer than a ladder step a step started early may wait for the
// server lock the step before holds: as long as that step's Job may run past its duration
// (DeadlineMargin: a --warmup-time in extraArgs, a step that overran, a slow custom init, the end
// snapshot). Longer means the step before hangs, and the waiting step fails (and is retried once
// the step before has ended) instead of measuring beside it.
const ServerLockSlack = DeadlineMargin

// MinServerLockStep is the shortest ladder step that holds a server lock. A shorter one starts
// the next step's Job once its load has ended, as before: a step started early is deleted when
// the step before it fails, which the operator learns a second or two after the failure, and
// must not have finished measuring by then.
const MinServerLockStep = 5 * time.Second

// TargetLadderStep is ladder step i of target t (LadderStepAt) with the server lock it holds
// while it loads (load.Step.ServerLock), where the operator may create a step's Job while the
// step before still measures (the next Job's pod then starts meanwhile, and the step waits for
// the lock instead): not in an interleaved run, whose next step is usually another target's;
// only on a server whose user-level locks every connection of the run shares
// (enginefacts.UserLocks), with a client that takes the lock (WaitsForServerLock), for steps of
// at least MinServerLockStep. Every ladder
// step of such a target holds it, so that whichever step comes next can wait on it.
func TargetLadderStep(run *v1.BenchmarkRun, t v1.Target, i int) Step {
	s := LadderStepAt(run, i)
	if run.Spec.Interleaved() || s.Load.Duration < MinServerLockStep || !enginefacts.Of(t.Engine).UserLocks ||
		!client.For(run.Spec.WorkloadAt(i).Workload).Capabilities().WaitsForServerLock {
		return s
	}
	s.Load.ServerLock = ServerLockName(run, t.Name)
	s.Load.ServerLockWait = s.Load.Duration + ServerLockSlack
	return s
}

// ServerLockName is the name of target's server lock: one per run and target, as a server is
// (a schedule's runs and confirmations never share one), within MySQL's 64 characters.
func ServerLockName(run *v1.BenchmarkRun, target string) string {
	sum := sha256.Sum256([]byte(string(run.UID) + "/" + run.Namespace + "/" + run.Name + "/" + target))
	return "mysqlbench:" + hex.EncodeToString(sum[:12])
}

// CleanupStep drops the sbtest tables.
func CleanupStep() Step {
	return Step{Name: StepCleanup, Load: load.Step{Phase: load.PhaseCleanup}}
}

// CleanupStepOf is CleanupStep with the workload of the run's after-ladder Job.
func CleanupStepOf(run *v1.BenchmarkRun) Step {
	s := CleanupStep()
	s.Workload = afterLadderWorkload(run).Name
	return s
}

// afterLadderWorkload is the workload the Job after the ladder runs with: the last step's (its
// data is what the server holds), with the most tables any workload of that client prepared,
// so that a cleanup drops every table the run created.
func afterLadderWorkload(run *v1.BenchmarkRun) v1.RunWorkload {
	w := run.Spec.WorkloadAt(run.Spec.StepCount() - 1)
	for _, o := range run.Spec.OrderedWorkloads() {
		if o.Prepares() && o.ClientOrDefault() == w.ClientOrDefault() && o.Tables > w.Tables {
			w.Tables = o.Tables
		}
	}
	return w
}

// WorkloadOfLabel is the workload of the step a Job's step label names: the suite's workload
// whose name the label starts with, else the run's first (the one spec.workload, and the
// phases every workload shares).
func WorkloadOfLabel(run *v1.BenchmarkRun, label string) v1.RunWorkload {
	if run.Spec.Suite() {
		for _, w := range run.Spec.OrderedWorkloads() {
			if rest, ok := strings.CutPrefix(label, w.Name+"-"); ok && ladderLabel.MatchString(rest) {
				return w
			}
		}
	}
	return run.Spec.WorkloadAt(0)
}

// ladderLabel matches LadderStep's names.
var ladderLabel = regexp.MustCompile(`^(r[0-9]+)?s[0-9]+$`)

// PhaseOfLabel is the phase a one-Job step's label names ("prepare", "prepare-13", "warmup-13",
// "probe", ...), and false for a ladder step's label.
func PhaseOfLabel(label string) (load.Phase, bool) {
	name, n, numbered := strings.Cut(label, "-")
	if numbered && (n == "" || strings.Trim(n, "0123456789") != "") {
		return "", false
	}
	switch phase := load.Phase(name); phase {
	case load.PhaseProbe, load.PhasePrepare, load.PhaseCleanup, load.PhaseWarmup, load.PhaseCheck:
		return phase, true
	}
	return "", false
}

// Prepares says whether any workload of the run loads data before its steps.
func Prepares(run *v1.BenchmarkRun) bool {
	for _, w := range run.Spec.OrderedWorkloads() {
		if client.Prepares(w.Workload) {
			return true
		}
	}
	return false
}

// NextPhase is the phase a target enters when phase has done its work: Provisioning ends with
// the probe, then come Preparing (unless workload.skipPrepare, or the client is mysqlslap, which
// makes its own table), WarmingUp (when the ladder has a
// warm-up), Running (every step of every repetition), CleaningUp (which drops the tables only
// when DropsTables says so) and Succeeded.
func NextPhase(run *v1.BenchmarkRun, phase v1.TargetPhase) v1.TargetPhase {
	switch phase {
	case v1.TargetPending, "":
		return v1.TargetProvisioning
	case v1.TargetProvisioning:
		if !client.Prepares(run.Spec.WorkloadAt(0).Workload) {
			return NextPhase(run, v1.TargetPreparing)
		}
		return v1.TargetPreparing
	case v1.TargetPreparing:
		if run.Spec.Ladder.WarmupDuration() > 0 {
			return v1.TargetWarmingUp
		}
		return v1.TargetRunning
	case v1.TargetWarmingUp:
		return v1.TargetRunning
	case v1.TargetRunning:
		return v1.TargetCleaningUp
	case v1.TargetCleaningUp:
		return v1.TargetSucceeded
	}
	return phase
}

// DropsTables says whether the client's tables are dropped after the ladder (by the Job of
// AfterLadderStep: sysbench's cleanup, go-tpc's check or cleanup): only on a server the user
// keeps (external), and only when the operator loaded them (a prepare step). Servers the
// operator runs are deleted with their data, or kept as they are for inspection; mysqlslap
// drops its own schema at the end of every step.
func DropsTables(run *v1.BenchmarkRun, t v1.Target) bool {
	return !enginefacts.Of(t.Engine).CreatesServer && Prepares(run)
}

// AfterLadderStep is the one Job target t runs after its ladder (in CleaningUp), if its client
// asks for one (client.AfterLadder): the cleanup of a server the user keeps, a check.
func AfterLadderStep(run *v1.BenchmarkRun, t v1.Target) (Step, bool) {
	w := afterLadderWorkload(run)
	phase, ok := client.For(w.Workload).AfterLadder(w.Workload, !enginefacts.Of(t.Engine).CreatesServer)
	if !ok {
		return Step{}, false
	}
	return Step{Name: string(phase), Load: load.Step{Phase: phase}, Workload: w.Name}, true
}

// PhaseSteps are the sysbench Jobs phase runs for target t, in order.
func PhaseSteps(run *v1.BenchmarkRun, t v1.Target, phase v1.TargetPhase) []Step {
	switch phase {
	case v1.TargetProvisioning:
		return []Step{ProbeStepOf(run)}
	case v1.TargetPreparing:
		return []Step{PrepareStepAt(run, 0)}
	case v1.TargetWarmingUp:
		return []Step{WarmupStep(run)}
	case v1.TargetRunning:
		steps := make([]Step, 0, run.Spec.StepCount())
		for i := range run.Spec.StepCount() {
			if fresh, _ := run.Spec.FreshDataBefore(i); fresh {
				steps = append(steps, PrepareStepAt(run, i))
				if run.Spec.Ladder.WarmupDuration() > 0 {
					steps = append(steps, WarmupStepAt(run, i))
				}
			}
			steps = append(steps, TargetLadderStep(run, t, i))
		}
		return steps
	case v1.TargetCleaningUp:
		if s, ok := AfterLadderStep(run, t); ok {
			return []Step{s}
		}
	}
	return nil
}

// TargetSteps are the sysbench Jobs of a target that goes through its phases without a failure
// or a server restart, in the order they run (each the first attempt of its step).
func TargetSteps(run *v1.BenchmarkRun, t v1.Target) []Step {
	var steps []Step
	for phase := NextPhase(run, v1.TargetPending); !phase.Finished(); phase = NextPhase(run, phase) {
		steps = append(steps, PhaseSteps(run, t, phase)...)
	}
	return steps
}

// SysbenchImage is the image of a run's sysbench Jobs: spec.sysbenchImage, else the operator's
// default.
func SysbenchImage(run *v1.BenchmarkRun, operatorDefault string) string {
	if run.Spec.SysbenchImage != "" {
		return run.Spec.SysbenchImage
	}
	return operatorDefault
}

// StepJob is the Job of one attempt of a target's step: the command line of the workload's
// client (client.For) for the step, connecting through the Secret secret, in the image the client
// chooses (sysbenchImage for sysbench's steps). It fails when the workload cannot be turned into
// a command line, with a message for the user. Its deadline is the client's when it sets one
// (client.StepDeadline), else the step duration plus DeadlineMargin for the warm-up and the
// ladder steps and StepDeadline's for the others, plus the wait for the server lock of a step
// that holds one.
func StepJob(run *v1.BenchmarkRun, t v1.Target, s Step, attempt Attempt, secret, sysbenchImage string) (*batchv1.Job, error) {
	deadline := StepDeadline(s.Load.Phase, s.Load.Duration)
	run = ForStep(run, s)
	c := client.For(run.Spec.Workload)
	if d, ok := c.StepDeadline(run.Spec.Workload, s.Load); ok {
		deadline = d
	}
	if s.Load.ServerLock != "" {
		// The Job may be created while the step before still measures, and wait for it.
		deadline += s.Load.ServerLockWait
	}
	inv, image, err := c.Container(run.Spec, t, s.Load, secret, sysbenchImage)
	if err != nil {
		return nil, fmt.Errorf("cannot build the %s command for %s: %w", c.Program(s.Load), s.Name, err)
	}
	return SysbenchJob(run, t.Name, s.Name, attempt, inv, image, deadline), nil
}

// ReplacementDue says whether step i of a target (in measuring order, see LadderPosition) must
// wait for a new server instance, and which repetition that instance is for: with
// spec.serverInstance PerRepetition, the first step of each repetition after the first, unless
// the instance for it was made already (last, the target's latest replacement; nil before any).
// With order Interleaved a repetition is a round (specs.InterleavedOrder numbers a target's steps
// round by round alike), so each target is replaced at its first step of every round after the
// first: while it is brought up again, the others wait with their servers idle, as at the start.
func ReplacementDue(run *v1.BenchmarkRun, i int, last *v1.ServerReplacement) (int32, bool) {
	if !run.Spec.InstancePerRepetition() || i <= 0 || i >= run.Spec.StepCount() {
		return 0, false
	}
	_, rep := run.Spec.LadderPosition(i)
	current := int32(1)
	if last != nil {
		current = last.Repetition
	}
	return rep, rep > current
}
