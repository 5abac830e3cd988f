package stepjob

import (
	"context"
	"io"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/kubeletstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// LogReader reads a container's log (the kubelet serves it through the API server's pods/log).
type LogReader interface {
	Logs(ctx context.Context, namespace, pod, container string) (io.ReadCloser, error)
}

// ClientsetLogs reads logs through a client-go clientset.
type ClientsetLogs struct{ Clientset kubernetes.Interface }

// Logs streams the container's log.
func (c ClientsetLogs) Logs(ctx context.Context, namespace, pod, container string) (io.ReadCloser, error) {
	return c.Clientset.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container}).Stream(ctx)
}

// CPUSource gives a ladder step its server container's CPU time from the kubelet
// (internal/kubeletstats.Sampler in the manager).
type CPUSource interface {
	// StepCPU is the target's server container CPU between from and to (the step's snapshot
	// times): the usage between the first and the last kubelet sample inside [from, to]. missing
	// says why there is none, in a sentence for the user (fewer than two samples inside, a
	// restart, no permission to read the kubelet's stats, ...). It fills Container, Seconds, From,
	// To, Samples and PerSecond; the caller fills PerQuery.
	StepCPU(ctx context.Context, run *v1.BenchmarkRun, target string, from, to time.Time) (cpu *serverstats.CPU, missing string)
	// ClientCPU is a client container's CPU between from and to (its container's start and end):
	// cores busy on average; missing says why there is none.
	ClientCPU(ctx context.Context, namespace, pod, container string, from, to time.Time) (usage kubeletstats.Usage, missing string)
}

// ClientCPU is how busy the client container of a finished step's pod was while its step
// measured (the last measured seconds of its run, and a second before them, when the container
// ran longer: a step started early waited for the step before it), nil when the operator does
// not sample the kubelets or has no samples of it (logged, not an error: the step stands
// without it). Available is the container's CPU limit, else its node's allocatable CPU.
func (j Jobs) ClientCPU(ctx context.Context, pod *corev1.Pod, measured time.Duration) *v1.ClientCPU {
	if j.CPU == nil || pod == nil {
		return nil
	}
	var from, to time.Time
	var limit float64
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == specs.SysbenchContainer && cs.State.Terminated != nil {
			from, to = cs.State.Terminated.StartedAt.Time, cs.State.Terminated.FinishedAt.Time
		}
	}
	for _, c := range pod.Spec.Containers {
		if q, ok := c.Resources.Limits[corev1.ResourceCPU]; ok && c.Name == specs.SysbenchContainer {
			limit = q.AsApproximateFloat64()
		}
	}
	log := logf.FromContext(ctx)
	if from.IsZero() || to.IsZero() {
		return nil
	}
	if since := to.Add(-measured - time.Second); measured > 0 && since.After(from) {
		from = since
	}
	u, missing := j.CPU.ClientCPU(ctx, pod.Namespace, pod.Name, specs.SysbenchContainer, from, to)
	if missing != "" {
		log.V(1).Info("no client CPU for the step", "pod", pod.Name, "reason", missing)
		return nil
	}
	if limit == 0 {
		node := &corev1.Node{}
		if err := j.Objects.Client.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node); err != nil {
			log.V(1).Info("no client CPU for the step: cannot read its node", "pod", pod.Name, "node", pod.Spec.NodeName, "err", err.Error())
			return nil
		}
		q := node.Status.Allocatable[corev1.ResourceCPU]
		limit = q.AsApproximateFloat64()
	}
	if limit <= 0 {
		return nil
	}
	return &v1.ClientCPU{Cores: round3(u.PerSecond), Available: round3(limit), Saturated: u.PerSecond >= v1.ClientSaturation*limit}
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// CPUOff is a step's serverstats.Step.CPUMissing when the reconciler has no CPUSource.
const CPUOff = "CPU per query is off: the operator runs with --kubelet-cpu-interval=0 " +
	"(Helm: --set serverStats.kubeletCPU=true turns it on, with the permission it needs)"
