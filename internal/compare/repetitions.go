package compare

import (
	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// maxRepeatedSteps is the API's limit on targets x workloads x threads x repetitions of a run
// with repetitions (spec.repetitions' CEL rule).
const maxRepeatedSteps = 512

// NextRepetitions is how many repetitions the schedule's next run measures. Without
// policy.MaxRepetitions it is the template's. With it: the newest compared run's repetitions
// (last, nil when there is none), raised after an Inconclusive comparison to what the test needs
// or twice as many, whichever is more; never below the template's, never above MaxRepetitions,
// and lowered (not below the template's) until the run fits the API's step limit.
func NextRepetitions(template v1.BenchmarkRunSpec, policy v1.RegressionPolicy, last *v1.BenchmarkRun) int32 {
	base := int32(template.RepetitionsOrDefault())
	if policy.MaxRepetitions == nil || last == nil {
		return base
	}
	reps := int32(last.Spec.RepetitionsOrDefault())
	if c := last.Status.Comparison; c != nil && c.Verdict == v1.VerdictInconclusive {
		reps = max(c.NeededRepetitions, 2*reps)
	}
	reps = max(base, min(reps, *policy.MaxRepetitions))
	cellsPerRep := int32(len(template.Targets) * template.WorkloadCount() * len(template.Ladder.Threads))
	for reps > base && reps > 1 && cellsPerRep*reps > maxRepeatedSteps {
		reps--
	}
	return reps
}
