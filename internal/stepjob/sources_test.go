package stepjob

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/kubeletstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/owned"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// cpuSource plays the kubelet sampler: it records the interval it was asked about.
type cpuSource struct {
	cpu      *serverstats.CPU
	missing  string
	from, to time.Time
}

func (c *cpuSource) StepCPU(_ context.Context, _ *v1.BenchmarkRun, _ string, from, to time.Time) (*serverstats.CPU, string) {
	c.from, c.to = from, to
	if c.cpu == nil {
		return nil, c.missing
	}
	cp := *c.cpu
	return &cp, ""
}

func (c *cpuSource) ClientCPU(_ context.Context, _, _, _ string, from, to time.Time) (kubeletstats.Usage, string) {
	c.from, c.to = from, to
	if c.cpu == nil {
		return kubeletstats.Usage{}, c.missing
	}
	return kubeletstats.Usage{Seconds: c.cpu.Seconds, PerSecond: c.cpu.PerSecond, Samples: c.cpu.Samples}, ""
}

// stepCPU asks for the CPU between the step's snapshots and divides it by the queries per second
// of the same interval; without a sampler, or without samples, it says why.
func TestStepCPU(t *testing.T) {
	start := serverstats.Snapshot{At: serverstats.AtStart, UnixTime: 1700000000.25}
	end := serverstats.Snapshot{At: serverstats.AtEnd, UnixTime: 1700000060.75}
	run := &v1.BenchmarkRun{}
	for _, tc := range []struct {
		name        string
		src         *cpuSource
		wantPerQ    float64
		wantMissing string
	}{
		{"off", nil, 0, CPUOff},
		{"no samples", &cpuSource{missing: "fewer than two kubelet samples inside the step"}, 0, "fewer than two kubelet samples"},
		// 1.5 cores while the server answered 20000 queries in 40 s (500 per second): 3 ms a query.
		{"measured", &cpuSource{cpu: &serverstats.CPU{Container: "mysql", Seconds: 45, From: 1700000010, To: 1700000040,
			Samples: 3, PerSecond: 1.5}}, 0.003, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := Jobs{}
			if tc.src != nil {
				j.CPU = tc.src
			}
			step := serverstats.Step{Seconds: 40, Queries: 20000}
			j.stepCPU(context.Background(), run, "db", start, end, &step)
			if !strings.Contains(step.CPUMissing, tc.wantMissing) || (tc.wantMissing == "") != (step.CPUMissing == "") {
				t.Errorf("CPUMissing %q, want %q", step.CPUMissing, tc.wantMissing)
			}
			if tc.wantPerQ == 0 {
				if step.CPU != nil {
					t.Errorf("CPU %+v, want none", step.CPU)
				}
				return
			}
			if step.CPU == nil || math.Abs(step.CPU.PerQuery-tc.wantPerQ) > 1e-12 {
				t.Errorf("CPU %+v, want %g s per query", step.CPU, tc.wantPerQ)
			}
			if want := time.Unix(1700000000, 250000000); !tc.src.from.Equal(want) || !tc.src.to.Equal(time.Unix(1700000060, 750000000)) {
				t.Errorf("asked for %s..%s, want the snapshots' times %s..", tc.src.from, tc.src.to, want)
			}
		})
	}
}

// A step's client CPU against what the client could use: its CPU limit, else its node's
// allocatable CPU; 90 % of it or more is saturation. Without samples the step has none.
func TestClientCPU(t *testing.T) {
	started := metav1.NewTime(time.Unix(1700000000, 0))
	ended := metav1.NewTime(time.Unix(1700000030, 0))
	pod := func(limit string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "r-db-s01-a0-x", Namespace: "ns"},
			Spec: corev1.PodSpec{NodeName: "client-1", Containers: []corev1.Container{{Name: specs.SysbenchContainer}}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: specs.SysbenchContainer,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: started, FinishedAt: ended}}}}}}
		if limit != "" {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(limit)}
		}
		return p
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "client-1"},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3800m")}}}
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme).WithObjects(node).Build()
	for _, tc := range []struct {
		name  string
		src   *cpuSource
		pod   *corev1.Pod
		want  *v1.ClientCPU
		asked bool
		// measured is the step's own duration; from is where the sampler is asked from
		// (zero: the container's start).
		measured time.Duration
		from     time.Time
	}{
		{"off", nil, pod(""), nil, false, 0, time.Time{}},
		{"no samples", &cpuSource{missing: "1 kubelet sample fell inside"}, pod(""), nil, true, 0, time.Time{}},
		{"its limit, saturated", &cpuSource{cpu: &serverstats.CPU{PerSecond: 1.85}}, pod("2"), &v1.ClientCPU{Cores: 1.85, Available: 2, Saturated: true}, true, 0, time.Time{}},
		{"its node's allocatable CPU", &cpuSource{cpu: &serverstats.CPU{PerSecond: 1.85}}, pod(""), &v1.ClientCPU{Cores: 1.85, Available: 3.8}, true, 0, time.Time{}},
		{"a pod still running", &cpuSource{cpu: &serverstats.CPU{PerSecond: 1}}, &corev1.Pod{}, nil, false, 0, time.Time{}},
		// A step started early ran 30 s, of which it measured the last 10: its wait for the step
		// before, idle, does not dilute its CPU.
		{"a step that waited for the one before", &cpuSource{cpu: &serverstats.CPU{PerSecond: 1.85}}, pod("2"),
			&v1.ClientCPU{Cores: 1.85, Available: 2, Saturated: true}, true, 10 * time.Second, ended.Add(-11 * time.Second)},
		{"a step that measured its whole run", &cpuSource{cpu: &serverstats.CPU{PerSecond: 1.85}}, pod("2"),
			&v1.ClientCPU{Cores: 1.85, Available: 2, Saturated: true}, true, 30 * time.Second, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := Jobs{Objects: owned.Objects{Client: c}}
			if tc.src != nil {
				j.CPU = tc.src
			}
			got := j.ClientCPU(context.Background(), tc.pod, tc.measured)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ClientCPU = %+v, want %+v", got, tc.want)
			}
			if tc.src != nil && tc.asked != !tc.src.from.IsZero() {
				t.Errorf("asked the sampler: %v, want %v", !tc.src.from.IsZero(), tc.asked)
			}
			from := tc.from
			if from.IsZero() {
				from = started.Time
			}
			if tc.asked && (!tc.src.from.Equal(from) || !tc.src.to.Equal(ended.Time)) {
				t.Errorf("asked for %s..%s, want %s..%s", tc.src.from, tc.src.to, from, ended.Time)
			}
		})
	}
}
