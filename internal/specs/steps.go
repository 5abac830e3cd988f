package specs

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/mysqlslap"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
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

// Step is one sysbench Job of a target: its name (JobName's step and the step label) and what
// sysbench does in it.
type Step struct {
	Name     string
	Sysbench sysbench.Step
}

// ProbeStep proves the benchmark account and reads the server's version.
func ProbeStep() Step {
	return Step{Name: StepProbe, Sysbench: sysbench.Step{Phase: sysbench.PhaseProbe}}
}

// PrepareStep creates and fills the sbtest tables.
func PrepareStep() Step {
	return Step{Name: StepPrepare, Sysbench: sysbench.Step{Phase: sysbench.PhasePrepare}}
}

// WarmupStep is the warm-up of a run whose ladder has one (PhaseAfterPrepare says so).
func WarmupStep(run *v1.BenchmarkRun) Step {
	return Step{Name: StepWarmup, Sysbench: sysbench.Step{Phase: sysbench.PhaseWarmup,
		Threads: run.Spec.Ladder.WarmupThreadsOrDefault(), Duration: run.Spec.Ladder.WarmupDuration()}}
}

// LadderStepAt is step i (0-based, in measuring order: a rung of one repetition, see
// LadderPosition) of a target's ladder.
func LadderStepAt(run *v1.BenchmarkRun, i int) Step {
	rung, rep := run.Spec.LadderPosition(i)
	return Step{Name: LadderStep(rung, rep), Sysbench: sysbench.Step{Phase: sysbench.PhaseRun,
		Threads: run.Spec.Ladder.Threads[rung], Duration: run.Spec.Ladder.StepDurationOrDefault(),
		ServerStats: run.Spec.ServerStatsEnabled()}}
}

// CleanupStep drops the sbtest tables.
func CleanupStep() Step {
	return Step{Name: StepCleanup, Sysbench: sysbench.Step{Phase: sysbench.PhaseCleanup}}
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
		if !run.Spec.Workload.Prepares() {
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

// DropsTables says whether the sbtest tables are dropped after the ladder (CleanupStep): only on
// a server the user keeps (external), and only when the operator created them. Servers the
// operator runs are deleted with their data, or kept as they are for inspection; mysqlslap drops
// its own schema at the end of every step.
func DropsTables(run *v1.BenchmarkRun, t v1.Target) bool {
	return t.EngineOrDefault() == v1.EngineExternal && run.Spec.Workload.Prepares()
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
		if DropsTables(run, t) {
			return []Step{CleanupStep()}
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

// StepJob is the Job of one attempt of a target's step: sysbench's command line for the step,
// connecting through the Secret secret, in image. It fails when the workload cannot be turned
// into a command line, with a message for the user.
//
// With workload.client mysqlslap, the warm-up and the ladder steps run mysqlslap (concurrency =
// the step's threads) in MysqlslapImage instead; the probe stays sysbench's. A mysqlslap step
// runs until its queries are done, and its Job's deadline is the step duration plus
// DeadlineMargin, as for sysbench.
func StepJob(run *v1.BenchmarkRun, t v1.Target, s Step, attempt Attempt, secret, image string) (*batchv1.Job, error) {
	deadline := StepDeadline(s.Sysbench.Phase, s.Sysbench.Duration)
	if UsesMysqlslap(run, s) {
		img, err := MysqlslapImage(run.Spec, t)
		if err != nil {
			return nil, err
		}
		inv, err := mysqlslap.Build(run.Spec.Workload, secret, mysqlslap.Step{
			Phase: s.Sysbench.Phase, Concurrency: s.Sysbench.Threads, ServerStats: s.Sysbench.ServerStats})
		if err != nil {
			return nil, fmt.Errorf("cannot build the mysqlslap command for %s: %w", s.Name, err)
		}
		return SysbenchJob(run, t.Name, s.Name, attempt, inv, img, deadline), nil
	}
	w := run.Spec.Workload
	if w.ClientOrDefault() == v1.ClientMysqlslap {
		// The probe of a mysqlslap run: sysbench's reporter loads a script before any command,
		// for its options; the probe runs none of it (it logs in and reads VERSION()).
		w = v1.Workload{Script: "oltp_point_select", Tables: 1, TableSize: 1}
	}
	inv, err := sysbench.Build(w, secret, s.Sysbench)
	if err != nil {
		return nil, fmt.Errorf("cannot build the sysbench command for %s: %w", s.Name, err)
	}
	return SysbenchJob(run, t.Name, s.Name, attempt, inv, image, deadline), nil
}

// UsesMysqlslap says whether step s of run runs mysqlslap: the warm-up and the ladder steps of a
// workload whose client is mysqlslap. The probe is always sysbench's.
func UsesMysqlslap(run *v1.BenchmarkRun, s Step) bool {
	return run.Spec.Workload.ClientOrDefault() == v1.ClientMysqlslap &&
		(s.Sysbench.Phase == sysbench.PhaseRun || s.Sysbench.Phase == sysbench.PhaseWarmup)
}

// MysqlslapImage is the image of target t's mysqlslap steps: workload.mysqlslap.image, else a
// builtin target's own server image, whose client (mysqlslap or mariadb-slap) matches the
// server. Other engines' images are chosen elsewhere (the Percona Operator) or unknown
// (external): they need workload.mysqlslap.image.
func MysqlslapImage(spec v1.BenchmarkRunSpec, t v1.Target) (string, error) {
	if m := spec.Workload.Mysqlslap; m != nil && m.Image != "" {
		return m.Image, nil
	}
	if t.EngineOrDefault() == v1.EngineBuiltin && t.Image != "" {
		return t.Image, nil
	}
	return "", fmt.Errorf("target %s uses engine %s, whose image the operator does not choose: "+
		"set workload.mysqlslap.image to an image with mysqlslap or mariadb-slap, e.g. mysql:8.4", t.Name, t.EngineOrDefault())
}

// ReplacementDue says whether step i of a target (in measuring order, see LadderPosition) must
// wait for a new server instance, and which repetition that instance is for: with
// spec.serverInstance PerRepetition, the first step of each repetition after the first, unless
// the instance for it was made already (last, the target's latest replacement; nil before any).
func ReplacementDue(run *v1.BenchmarkRun, i int, last *v1.ServerReplacement) (int32, bool) {
	if !run.Spec.InstancePerRepetition() || run.Spec.Interleaved() || i <= 0 || i >= run.Spec.StepCount() {
		return 0, false
	}
	_, rep := run.Spec.LadderPosition(i)
	current := int32(1)
	if last != nil {
		current = last.Repetition
	}
	return rep, rep > current
}
