package plugin

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

func nodeOf(name, cpu, allocatable, memory, instanceType string) *v1.ServerNode {
	c, a, m := resource.MustParse(cpu), resource.MustParse(allocatable), resource.MustParse(memory)
	return &v1.ServerNode{Name: name, CPUCapacity: &c, CPUAllocatable: &a, MemoryCapacity: &m, KernelVersion: "6.1.0-18-amd64",
		OSImage: "Debian GNU/Linux 12 (bookworm)", Architecture: "amd64", ContainerRuntime: "containerd://1.7.22",
		KubeletVersion: "v1.33.1", InstanceType: instanceType, Zone: "eu-west-1a"}
}

// describe shows the node of each target and says when the targets it compares ran on
// different nodes.
func TestDescribeNodes(t *testing.T) {
	small := nodeOf("db-1", "4", "3500m", "16Gi", "m5.xlarge")
	big := nodeOf("db-2", "8", "7500m", "32Gi", "m5.2xlarge")
	twin := nodeOf("db-3", "4", "3500m", "16Gi", "m5.xlarge")
	for _, tc := range []struct {
		name      string
		nodes     []*v1.ServerNode // of mysql, mariadb, external
		instances []string         // mysql's
		want      []string         // lines, spaces squeezed
		wantNot   []string
	}{
		{name: "none recorded", nodes: []*v1.ServerNode{nil, nil, nil}, wantNot: []string{"Nodes:", "different nodes"}},
		{
			name:  "one node",
			nodes: []*v1.ServerNode{small, small, nil},
			want: []string{"Nodes:", "TARGET NODE WHAT",
				"mysql db-1 4 CPU (3.5 allocatable), 16 GiB, kernel 6.1.0-18-amd64, Debian GNU/Linux 12 (bookworm), amd64, containerd://1.7.22, kubelet v1.33.1, m5.xlarge, zone eu-west-1a",
				"external - not recorded (a server the operator does not run, or not probed yet)"},
			wantNot: []string{"different nodes"},
		},
		{
			name:  "nodes of different sizes",
			nodes: []*v1.ServerNode{small, big, nil},
			want: []string{
				"mariadb db-2 8 CPU (7.5 allocatable), 32 GiB, kernel 6.1.0-18-amd64, Debian GNU/Linux 12 (bookworm), amd64, containerd://1.7.22, kubelet v1.33.1, m5.2xlarge, zone eu-west-1a",
				"Targets ran on different nodes (db-1: 4 CPU 16 GiB m5.xlarge, db-2: 8 CPU 32 GiB m5.2xlarge), which differ in CPU, memory and instance type; " +
					"their differences include the nodes'."},
		},
		{
			name:  "different nodes alike",
			nodes: []*v1.ServerNode{small, twin, nil},
			want: []string{"Targets ran on different nodes (db-1, db-3) of the same shape (4 CPU, 16 GiB, kernel 6.1.0-18-amd64, m5.xlarge); " +
				"their differences may still include the nodes' (hardware, neighbours)."},
		},
		{
			name:      "instances on different nodes",
			nodes:     []*v1.ServerNode{small, small, nil},
			instances: []string{"db-3", "db-1"},
			want:      []string{"Target mysql's server instances ran on 2 different nodes (db-3, db-1); its repetitions' differences include the nodes'."},
			wantNot:   []string{"Targets ran on different nodes"},
		},
		{
			name:  "a node that could not be read",
			nodes: []*v1.ServerNode{{Name: "db-gone"}, nil, nil},
			want:  []string{"mysql db-gone the Node could not be read"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "cmp", Namespace: "bench"},
				Spec: v1.BenchmarkRunSpec{
					Targets: []v1.Target{{Name: "mysql", Image: "mysql:8.4"}, {Name: "mariadb", Image: "mariadb:11.8"},
						{Name: "external", Engine: v1.EngineExternal}},
					Workload: v1.Workload{Script: "oltp_point_select", Tables: 1, TableSize: 1000},
					Ladder:   v1.Ladder{Threads: []int32{1}},
				},
				Status: v1.BenchmarkRunStatus{Phase: v1.RunSucceeded},
			}
			for i, t := range run.Spec.Targets {
				run.Status.Targets = append(run.Status.Targets, v1.TargetStatus{Name: t.Name, Phase: v1.TargetSucceeded, Node: tc.nodes[i]})
			}
			run.Status.Targets[0].InstanceNodes = tc.instances
			var b bytes.Buffer
			if err := describe(&b, run, time.Now(), nil); err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, l := range strings.Split(b.String(), "\n") {
				lines = append(lines, strings.Join(strings.Fields(l), " "))
			}
			out := strings.Join(lines, "\n")
			for _, want := range tc.want {
				if !strings.Contains("\n"+out+"\n", "\n"+want+"\n") {
					t.Errorf("describe lacks the line %q:\n%s", want, b.String())
				}
			}
			for _, not := range tc.wantNot {
				if strings.Contains(out, not) {
					t.Errorf("describe has %q:\n%s", not, b.String())
				}
			}
		})
	}
}
