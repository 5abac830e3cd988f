package nodeinfo

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

func q(s string) *resource.Quantity {
	v := resource.MustParse(s)
	return &v
}

func node(name string, labels map[string]string, capacity, allocatable corev1.ResourceList, info corev1.NodeSystemInfo) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: allocatable, NodeInfo: info}}
}

func TestOf(t *testing.T) {
	info := corev1.NodeSystemInfo{KernelVersion: "6.1.0-18-amd64", OSImage: "Debian GNU/Linux 12 (bookworm)", Architecture: "amd64",
		ContainerRuntimeVersion: "containerd://1.7.22", KubeletVersion: "v1.33.1", MachineID: "not recorded"}
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"),
		corev1.ResourcePods: resource.MustParse("110")}
	allocatable := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("7500m"), corev1.ResourceMemory: resource.MustParse("31Gi")}
	for _, tc := range []struct {
		name string
		node *corev1.Node
		want v1.ServerNode
	}{
		{
			name: "a cloud node",
			node: node("db-1", map[string]string{LabelInstanceType: "m5.2xlarge", LabelInstanceTypeBeta: "m4.old", LabelZone: "eu-west-1a",
				"kubernetes.io/hostname": "db-1"}, capacity, allocatable, info),
			want: v1.ServerNode{Name: "db-1", CPUCapacity: q("8"), CPUAllocatable: q("7500m"), MemoryCapacity: q("32Gi"),
				KernelVersion: "6.1.0-18-amd64", OSImage: "Debian GNU/Linux 12 (bookworm)", Architecture: "amd64",
				ContainerRuntime: "containerd://1.7.22", KubeletVersion: "v1.33.1", InstanceType: "m5.2xlarge", Zone: "eu-west-1a"},
		},
		{
			name: "only the beta instance type label",
			node: node("db-2", map[string]string{LabelInstanceTypeBeta: "n1-standard-4"}, capacity, nil, corev1.NodeSystemInfo{}),
			want: v1.ServerNode{Name: "db-2", CPUCapacity: q("8"), MemoryCapacity: q("32Gi"), InstanceType: "n1-standard-4"},
		},
		{
			name: "nothing reported yet",
			node: node("bare", nil, nil, nil, corev1.NodeSystemInfo{}),
			want: v1.ServerNode{Name: "bare"},
		},
		{
			name: "free text cut to its bound",
			node: node("long", nil, nil, nil, corev1.NodeSystemInfo{OSImage: strings.Repeat("x", 1000)}),
			want: v1.ServerNode{Name: "long", OSImage: strings.Repeat("x", v1.MaxNodeFactLen-3) + "..."},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Of(tc.node)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Of:\n got %+v\nwant %+v", got, tc.want)
			}
			if len(got.OSImage) > v1.MaxNodeFactLen {
				t.Errorf("osImage of %d bytes, above %d", len(got.OSImage), v1.MaxNodeFactLen)
			}
		})
	}
}

func TestRecord(t *testing.T) {
	n := func(name string) v1.ServerNode { return v1.ServerNode{Name: name, CPUCapacity: q("4")} }
	many := func(k int) []string {
		var out []string
		for i := range k {
			out = append(out, string(rune('a'+i)))
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		instances []string // the nodes of successive instances
		node      string
		nodes     []string
	}{
		{"one instance", []string{"db-1"}, "db-1", nil},
		{"instances on one node", []string{"db-1", "db-1", "db-1"}, "db-1", nil},
		{"moved once", []string{"db-1", "db-2"}, "db-2", []string{"db-1", "db-2"}},
		{"moved and back", []string{"db-1", "db-2", "db-1"}, "db-1", []string{"db-1", "db-2"}},
		{"three nodes", []string{"db-1", "db-1", "db-3", "db-2", "db-3"}, "db-3", []string{"db-1", "db-3", "db-2"}},
		{"more nodes than the list holds", many(v1.MaxInstanceNodes + 3), string(rune('a' + v1.MaxInstanceNodes + 2)), many(v1.MaxInstanceNodes)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := &v1.TargetStatus{}
			for _, name := range tc.instances {
				Record(ts, n(name))
			}
			if ts.Node == nil || ts.Node.Name != tc.node || !ts.Node.CPUCapacity.Equal(resource.MustParse("4")) {
				t.Errorf("node %+v, want %s with its facts", ts.Node, tc.node)
			}
			if !reflect.DeepEqual(ts.InstanceNodes, tc.nodes) {
				t.Errorf("instanceNodes %q, want %q", ts.InstanceNodes, tc.nodes)
			}
		})
	}
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{CPU(q("4")), "4 CPU"},
		{CPU(q("3500m")), "3.5 CPU"},
		{CPU(q("250m")), "0.25 CPU"},
		{CPU(nil), ""},
		{Memory(q("16Gi")), "16 GiB"},
		{Memory(q("16417264Ki")), "15.7 GiB"},
		{Memory(q("512Mi")), "512 MiB"},
		{Memory(q("2Ti")), "2 TiB"},
		{Memory(q("100")), "100 B"},
		{Memory(nil), ""},
		{Shape(v1.ServerNode{Name: "x", CPUCapacity: q("4"), MemoryCapacity: q("16Gi"), KernelVersion: "6.1.0", InstanceType: "m5.xlarge", Zone: "a"}),
			"4 CPU, 16 GiB, kernel 6.1.0, m5.xlarge"},
		{Shape(v1.ServerNode{Name: "x"}), ""},
		{Describe(v1.ServerNode{Name: "x", CPUCapacity: q("8"), CPUAllocatable: q("7500m"), MemoryCapacity: q("32Gi"), KernelVersion: "6.1.0",
			OSImage: "Debian GNU/Linux 12", Architecture: "amd64", ContainerRuntime: "containerd://1.7.22", KubeletVersion: "v1.33.1",
			InstanceType: "m5.2xlarge", Zone: "eu-west-1a"}),
			"8 CPU (7.5 allocatable), 32 GiB, kernel 6.1.0, Debian GNU/Linux 12, amd64, containerd://1.7.22, kubelet v1.33.1, m5.2xlarge, zone eu-west-1a"},
		{Describe(v1.ServerNode{Name: "x", CPUCapacity: q("4"), CPUAllocatable: q("4")}), "4 CPU"},
		{and([]string{"CPU"}), "CPU"},
		{and([]string{"CPU", "memory"}), "CPU and memory"},
		{and([]string{"CPU", "memory", "kernel"}), "CPU, memory and kernel"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestSpread(t *testing.T) {
	small := &v1.ServerNode{Name: "db-1", CPUCapacity: q("4"), MemoryCapacity: q("16Gi"), KernelVersion: "6.1.0", Architecture: "amd64", InstanceType: "m5.xlarge"}
	big := &v1.ServerNode{Name: "db-2", CPUCapacity: q("8"), MemoryCapacity: q("32Gi"), KernelVersion: "6.1.0", Architecture: "amd64", InstanceType: "m5.2xlarge"}
	twin := &v1.ServerNode{Name: "db-3", CPUCapacity: q("4"), MemoryCapacity: q("16Gi"), KernelVersion: "6.1.0", Architecture: "amd64", InstanceType: "m5.xlarge"}
	newKernel := &v1.ServerNode{Name: "db-4", CPUCapacity: q("4"), MemoryCapacity: q("16Gi"), KernelVersion: "6.12.0", Architecture: "amd64", InstanceType: "m5.xlarge"}
	for _, tc := range []struct {
		name       string
		placements []Placement
		want       []string
	}{
		{"nothing recorded", []Placement{{Target: "ext"}, {Target: "pxc"}}, nil},
		{"one target", []Placement{{Target: "mysql", Node: small}}, nil},
		{"all on one node", []Placement{{Target: "mysql", Node: small}, {Target: "mariadb", Node: small}, {Target: "ext"}}, nil},
		{"nodes of different sizes", []Placement{{Target: "mysql", Node: small}, {Target: "mariadb", Node: big}}, []string{
			"Targets ran on different nodes (db-1: 4 CPU 16 GiB m5.xlarge, db-2: 8 CPU 32 GiB m5.2xlarge), which differ in CPU, memory and instance type; " +
				"their differences include the nodes'."}},
		{"nodes differing only in kernel", []Placement{{Target: "mysql", Node: small}, {Target: "mariadb", Node: newKernel}}, []string{
			"Targets ran on different nodes (db-1: 4 CPU 16 GiB kernel 6.1.0, db-4: 4 CPU 16 GiB kernel 6.12.0), which differ in kernel; " +
				"their differences include the nodes'."}},
		{"different nodes alike", []Placement{{Target: "mysql", Node: small}, {Target: "mariadb", Node: twin}, {Target: "percona", Node: small}}, []string{
			"Targets ran on different nodes (db-1, db-3) of the same shape (4 CPU, 16 GiB, kernel 6.1.0, m5.xlarge); their differences may still " +
				"include the nodes' (hardware, neighbours)."}},
		{"a node without facts against one with", []Placement{{Target: "mysql", Node: small}, {Target: "mariadb", Node: &v1.ServerNode{Name: "db-9"}}}, []string{
			"Targets ran on different nodes (db-1: 4 CPU 16 GiB kernel 6.1.0 amd64 m5.xlarge, db-9: not recorded), which differ in " +
				"CPU, memory, kernel, architecture and instance type; their differences include the nodes'."}},
		{"one target's instances moved", []Placement{{Target: "mysql", Node: small, InstanceNodes: []string{"db-3", "db-1"}}, {Target: "mariadb", Node: small}}, []string{
			"Target mysql's server instances ran on 2 different nodes (db-3, db-1); its repetitions' differences include the nodes'."}},
		{"both", []Placement{{Target: "mysql", Node: small, InstanceNodes: []string{"db-1", "db-3"}}, {Target: "mariadb", Node: big}}, []string{
			"Targets ran on different nodes (db-1: 4 CPU 16 GiB m5.xlarge, db-2: 8 CPU 32 GiB m5.2xlarge), which differ in CPU, memory and instance type; " +
				"their differences include the nodes'.",
			"Target mysql's server instances ran on 2 different nodes (db-1, db-3); its repetitions' differences include the nodes'."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Spread(tc.placements); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Spread:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
