package specs

import (
	"fmt"

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

// Step is one step Job of a target: its name (JobName's step and the step label) and the load
// its client runs in it.
type Step struct {
	Name string
	Load load.Step
}

// ProbeStep proves the benchmark account and reads the server's version.
func ProbeStep() Step {
	return Step{Name: StepProbe, Load: load.Step{Phase: load.PhaseProbe}}
}

// PrepareStep creates and fills the sbtest tables.
func PrepareStep() Step {
	return Step{Name: StepPrepare, Load: load.Step{Phase: load.PhasePrepare}}
}

// WarmupStep is the warm-up of a run whose ladder has one (PhaseAfterPrepare says so).
func WarmupStep(run *v1.BenchmarkRun) Step {
	return Step{Name: StepWarmup, Load: load.Step{Phase: load.PhaseWarmup,
		Threads: run.Spec.Ladder.WarmupThreadsOrDefault(), Duration: run.Spec.Ladder.WarmupDuration()}}
}

// LadderStepAt is step i (0-based, in measuring order: a rung of one repetition, see
// LadderPosition) of a target's ladder.
func LadderStepAt(run *v1.BenchmarkRun, i int) Step {
	rung, rep := run.Spec.LadderPosition(i)
	return Step{Name: LadderStep(rung, rep), Load: load.Step{Phase: load.PhaseRun,
		Threads: run.Spec.Ladder.Threads[rung], Duration: run.Spec.Ladder.StepDurationOrDefault(),
		ServerStats: run.Spec.ServerStatsEnabled()}}
}

// CleanupStep drops the sbtest tables.
func CleanupStep() Step {
	return Step{Name: StepCleanup, Load: load.Step{Phase: load.PhaseCleanup}}
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
		if !client.Prepares(run.Spec.Workload) {
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
	return !enginefacts.Of(t.Engine).CreatesServer && client.Prepares(run.Spec.Workload)
}

// AfterLadderStep is the one Job target t runs after its ladder (in CleaningUp), if its client
// asks for one (client.AfterLadder): the cleanup of a server the user keeps, a check.
func AfterLadderStep(run *v1.BenchmarkRun, t v1.Target) (Step, bool) {
	phase, ok := client.For(run.Spec.Workload).AfterLadder(run.Spec.Workload, !enginefacts.Of(t.Engine).CreatesServer)
	if !ok {
		return Step{}, false
	}
	return Step{Name: string(phase), Load: load.Step{Phase: phase}}, true
}

// PhaseSteps are the sysbench Jobs phase runs for target t, in order.
func PhaseSteps(run *v1.BenchmarkRun, t v1.Target, phase v1.TargetPhase) []Step {
	switch phase {
	case v1.TargetProvisioning:
		return []Step{ProbeStep()}
	case v1.TargetPreparing:
		return []Step{PrepareStep()}
	case v1.TargetWarmingUp:
		return []Step{WarmupStep(run)}
	case v1.TargetRunning:
		steps := make([]Step, 0, run.Spec.StepCount())
		for i := range run.Spec.StepCount() {
			steps = append(steps, LadderStepAt(run, i))
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
// ladder steps and StepDeadline's for the others.
func StepJob(run *v1.BenchmarkRun, t v1.Target, s Step, attempt Attempt, secret, sysbenchImage string) (*batchv1.Job, error) {
	deadline := StepDeadline(s.Load.Phase, s.Load.Duration)
	c := client.For(run.Spec.Workload)
	if d, ok := c.StepDeadline(run.Spec.Workload, s.Load); ok {
		deadline = d
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
