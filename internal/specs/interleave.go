package specs

import (
	"hash/fnv"
	"math/rand/v2"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// InterleavedSlot is one step of an interleaved run: target Target's step Step (0-based, in the
// target's own measuring order, see BenchmarkRunSpec.LadderPosition).
type InterleavedSlot struct {
	Target string
	Step   int
}

// InterleavedOrder is the measuring order of an interleaved run (spec.order Interleaved): round
// after round (one per repetition), rung after rung in the round's order (each target's own
// ladder order: ascending in odd rounds, descending in even ones), and at each rung every
// target once, in an order drawn at random for that round and rung from the run's UID. So the
// repetitions of one cell of two targets are measured back to back, paired by round, and which
// target goes first changes at random, so neither is favoured by going first (Abedi and Brecht's
// randomized multiple interleaved trials). Deterministic: a restarted operator finds the same
// order, and the status (each target's recorded steps) says where it stands.
func InterleavedOrder(run *v1.BenchmarkRun) []InterleavedSlot {
	targets := run.Spec.Targets
	// A round is every workload's ladder (one rung per workload with one workload).
	perRound := len(run.Spec.Ladder.Threads) * run.Spec.WorkloadCount()
	reps := run.Spec.RepetitionsOrDefault()
	out := make([]InterleavedSlot, 0, len(targets)*perRound*reps)
	for round := range reps {
		for k := range perRound {
			for _, ti := range slotPermutation(string(run.UID), round, k, len(targets)) {
				out = append(out, InterleavedSlot{Target: targets[ti].Name, Step: round*perRound + k})
			}
		}
	}
	return out
}

// slotPermutation is the targets' order at rung k of round, drawn from seed.
func slotPermutation(seed string, round, k, n int) []int {
	h := fnv.New64a()
	_, _ = h.Write([]byte(seed))
	return rand.New(rand.NewPCG(h.Sum64(), uint64(round)<<32|uint64(k))).Perm(n)
}

// NextInterleaved is the step an interleaved run measures next: the first slot of
// InterleavedOrder whose target is measuring (phase Running) and has not recorded that step yet.
// Targets that failed, or have not reached Running, are skipped: a failed target's slots are
// left out, and the caller brings every target to Running before measuring starts. ok is false
// when no measuring target has a step left.
func NextInterleaved(run *v1.BenchmarkRun) (slot InterleavedSlot, ok bool) {
	recorded := map[string]int{}
	measuring := map[string]bool{}
	for _, ts := range run.Status.Targets {
		recorded[ts.Name] = len(ts.Steps)
		measuring[ts.Name] = ts.Phase == v1.TargetRunning
	}
	for _, s := range InterleavedOrder(run) {
		if measuring[s.Target] && s.Step >= recorded[s.Target] {
			return s, true
		}
	}
	return InterleavedSlot{}, false
}
