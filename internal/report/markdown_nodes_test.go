package report

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

func serverNode(name, cpu, memory, kernel, instanceType string) *v1alpha1.ServerNode {
	c, m := resource.MustParse(cpu), resource.MustParse(memory)
	return &v1alpha1.ServerNode{Name: name, CPUCapacity: &c, CPUAllocatable: &c, MemoryCapacity: &m, KernelVersion: kernel,
		Architecture: "amd64", InstanceType: instanceType, OSImage: "Debian GNU/Linux 12 (bookworm)"}
}

// report.md names each target's node and says when the targets it compares, or one target's
// instances, ran on different nodes; results.json carries the nodes as the status holds them.
func TestRenderNodes(t *testing.T) {
	small := serverNode("db-1", "4", "16Gi", "6.1.0-18-amd64", "m5.xlarge")
	big := serverNode("db-2", "8", "32Gi", "6.1.0-18-amd64", "m5.2xlarge")
	twin := serverNode("db-3", "4", "16Gi", "6.1.0-18-amd64", "m5.xlarge")
	for _, tc := range []struct {
		name      string
		nodes     [2]*v1alpha1.ServerNode // of mysql57 and ps80
		instances [2][]string
		want      []string // lines of report.md
		wantNot   []string // substrings report.md must not have
	}{
		{
			name:    "not recorded",
			wantNot: []string{"## Nodes", "different nodes"},
		},
		{
			name:    "one node",
			nodes:   [2]*v1alpha1.ServerNode{small, small},
			want:    []string{"## Nodes", "- mysql57: db-1, 4 CPU, 16 GiB, kernel 6.1.0-18-amd64, m5.xlarge", "- ps80: db-1, 4 CPU, 16 GiB, kernel 6.1.0-18-amd64, m5.xlarge"},
			wantNot: []string{"different nodes"},
		},
		{
			name:  "nodes of different sizes",
			nodes: [2]*v1alpha1.ServerNode{small, big},
			want: []string{
				"Targets ran on different nodes (db-1: 4 CPU 16 GiB m5.xlarge, db-2: 8 CPU 32 GiB m5.2xlarge), which differ in CPU, memory and " +
					"instance type; their differences include the nodes'.",
				"- ps80: db-2, 8 CPU, 32 GiB, kernel 6.1.0-18-amd64, m5.2xlarge",
			},
		},
		{
			name:  "different nodes alike",
			nodes: [2]*v1alpha1.ServerNode{small, twin},
			want: []string{"Targets ran on different nodes (db-1, db-3) of the same shape (4 CPU, 16 GiB, kernel 6.1.0-18-amd64, m5.xlarge); " +
				"their differences may still include the nodes' (hardware, neighbours)."},
		},
		{
			name:    "one server the operator does not run",
			nodes:   [2]*v1alpha1.ServerNode{small, nil},
			want:    []string{"- mysql57: db-1, 4 CPU, 16 GiB, kernel 6.1.0-18-amd64, m5.xlarge", "- ps80: not recorded (the operator does not run this server, or it was never probed)"},
			wantNot: []string{"different nodes"},
		},
		{
			name:      "one target's instances moved",
			nodes:     [2]*v1alpha1.ServerNode{small, small},
			instances: [2][]string{{"db-3", "db-1"}, nil},
			want: []string{
				"Target mysql57's server instances ran on 2 different nodes (db-3, db-1); its repetitions' differences include the nodes'.",
				"- mysql57: db-1, 4 CPU, 16 GiB, kernel 6.1.0-18-amd64, m5.xlarge (the latest of its instances' nodes db-3, db-1)",
			},
			wantNot: []string{"Targets ran on different nodes"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := fixtureRun(-1)
			for i := range run.Status.Targets {
				run.Status.Targets[i].Node, run.Status.Targets[i].InstanceNodes = tc.nodes[i], tc.instances[i]
			}
			data, err := Render(run, map[string]string{})
			if err != nil {
				t.Fatal(err)
			}
			md := data[KeyReportMD]
			lines := strings.Split(md, "\n")
			for _, want := range tc.want {
				if !slices.Contains(lines, want) {
					t.Errorf("report.md lacks the line %q:\n%s", want, md)
				}
			}
			for _, not := range tc.wantNot {
				if strings.Contains(md, not) {
					t.Errorf("report.md has %q:\n%s", not, md)
				}
			}
			doc, err := results.Decode([]byte(data[KeyResultsJSON]))
			if err != nil {
				t.Fatal(err)
			}
			for i, tr := range doc.Targets {
				want := tc.nodes[i]
				if (tr.Node == nil) != (want == nil) || (want != nil && (tr.Node.Name != want.Name || tr.Node.OSImage != want.OSImage ||
					!tr.Node.MemoryCapacity.Equal(*want.MemoryCapacity))) || !slices.Equal(tr.InstanceNodes, tc.instances[i]) {
					t.Errorf("results.json target %s: node %+v instanceNodes %q, want %+v %q", tr.Name, tr.Node, tr.InstanceNodes, want, tc.instances[i])
				}
			}
		})
	}
}
