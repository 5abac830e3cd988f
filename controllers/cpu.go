package controllers

import (
	"context"
	"time"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// StepCPUSource gives a ladder step its server container's CPU time from the kubelet
// (internal/kubeletstats.Sampler in the manager).
type StepCPUSource interface {
	// StepCPU is the target's server container CPU between from and to (the step's snapshot
	// times): the usage between the first and the last kubelet sample inside [from, to]. missing
	// says why there is none, in a sentence for the user (fewer than two samples inside, a
	// restart, no permission to read the kubelet's stats, ...). It fills Container, Seconds, From,
	// To, Samples and PerSecond; the caller fills PerQuery.
	StepCPU(ctx context.Context, run *v1.BenchmarkRun, target string, from, to time.Time) (cpu *serverstats.CPU, missing string)
}

// CPUOff is a step's serverstats.Step.CPUMissing when the reconciler has no StepCPUSource.
const CPUOff = "CPU per query is off: the operator runs with --kubelet-cpu-interval=0 " +
	"(Helm: --set serverStats.kubeletCPU=true turns it on, with the permission it needs)"
