package run

import (
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

func TestWithParallelSummary(t *testing.T) {
	run := &v1.BenchmarkRun{
		Spec: v1.BenchmarkRunSpec{Targets: []v1.Target{{Name: "a"}, {Name: "b"}, {Name: "c"}}},
		Status: v1.BenchmarkRunStatus{Targets: []v1.TargetStatus{
			// Status order is not spec order: the summary follows the spec.
			{Name: "b", Phase: v1.TargetPreparing},
			{Name: "a", Phase: v1.TargetRunning, Steps: make([]v1.StepResult, 3)},
			{Name: "c", Phase: v1.TargetSucceeded, Steps: make([]v1.StepResult, 4)},
		}},
	}
	summary := parallelSummary(run)
	const want = "targets in parallel: a Running (3 steps measured), b Preparing, c Succeeded"
	if summary != want {
		t.Fatalf("summary %q, want %q", summary, want)
	}
	for _, tc := range []struct{ name, message, want string }{
		{"a fresh transition's message", "target b: preparing the data", want + " | latest: target b: preparing the data"},
		{"the summary of an earlier reconcile is replaced", "targets in parallel: a Running, b Provisioning | latest: target b: preparing the data",
			want + " | latest: target b: preparing the data"},
		{"an earlier summary without a latest message", "targets in parallel: a Running", want},
		{"no message", "", want},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := withParallelSummary(summary, tc.message); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
