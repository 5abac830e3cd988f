// Package nodeinfo says which node a target's server ran on and what that node is: it turns a
// Node into the status's ServerNode, keeps the nodes of a target's successive server instances,
// and says when the targets of one run (or the instances of one target) ran on different nodes,
// so that a reader does not take a difference between nodes for one between servers.
package nodeinfo

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
)

// The labels a node's instance type and zone are read from. Cloud providers set the first;
// older ones only the beta label.
const (
	LabelInstanceType     = "node.kubernetes.io/instance-type"
	LabelInstanceTypeBeta = "beta.kubernetes.io/instance-type"
	LabelZone             = "topology.kubernetes.io/zone"
)

// Of is what the status records of node.
func Of(node *corev1.Node) v1.ServerNode {
	text := func(s string) string { return bounded.Head(s, v1.MaxNodeFactLen) }
	info := node.Status.NodeInfo
	n := v1.ServerNode{
		Name:             node.Name,
		CPUCapacity:      quantity(node.Status.Capacity, corev1.ResourceCPU),
		CPUAllocatable:   quantity(node.Status.Allocatable, corev1.ResourceCPU),
		MemoryCapacity:   quantity(node.Status.Capacity, corev1.ResourceMemory),
		KernelVersion:    text(info.KernelVersion),
		OSImage:          text(info.OSImage),
		Architecture:     text(info.Architecture),
		ContainerRuntime: text(info.ContainerRuntimeVersion),
		KubeletVersion:   text(info.KubeletVersion),
		InstanceType:     node.Labels[LabelInstanceType],
		Zone:             node.Labels[LabelZone],
	}
	if n.InstanceType == "" {
		n.InstanceType = node.Labels[LabelInstanceTypeBeta]
	}
	return n
}

func quantity(l corev1.ResourceList, name corev1.ResourceName) *resource.Quantity {
	q, ok := l[name]
	if !ok {
		return nil
	}
	return &q
}

// Record makes n the node of ts's server, the node of its latest instance. When the instance
// ran on another node than an earlier one, InstanceNodes lists them all (up to
// v1.MaxInstanceNodes), so the status keeps saying that the target's steps span nodes after the
// server returned to its first node.
func Record(ts *v1.TargetStatus, n v1.ServerNode) {
	if prev := ts.Node; prev != nil && prev.Name != n.Name && len(ts.InstanceNodes) == 0 {
		ts.InstanceNodes = []string{prev.Name}
	}
	if len(ts.InstanceNodes) > 0 && !slices.Contains(ts.InstanceNodes, n.Name) && len(ts.InstanceNodes) < v1.MaxInstanceNodes {
		ts.InstanceNodes = append(ts.InstanceNodes, n.Name)
	}
	ts.Node = &n
}

// CPU is a CPU quantity for a reader: "4 CPU", "3.5 CPU"; "" when unknown.
func CPU(q *resource.Quantity) string {
	if q == nil {
		return ""
	}
	return strconv.FormatFloat(float64(q.MilliValue())/1000, 'f', -1, 64) + " CPU"
}

// Memory is a memory quantity for a reader in binary units, one decimal at most: "16 GiB",
// "15.6 GiB", "512 MiB"; "" when unknown.
func Memory(q *resource.Quantity) string {
	if q == nil {
		return ""
	}
	b := float64(q.Value())
	for _, u := range []struct {
		name string
		size float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b >= u.size {
			return strconv.FormatFloat(math.Round(b/u.size*10)/10, 'f', -1, 64) + " " + u.name
		}
	}
	return strconv.FormatFloat(b, 'f', -1, 64) + " B"
}

// Shape is what of a node decides how fast a server on it can be: "4 CPU, 16 GiB, kernel
// 6.1.0-18-amd64, m5.xlarge"; the parts unknown are left out.
func Shape(n v1.ServerNode) string {
	return join(CPU(n.CPUCapacity), Memory(n.MemoryCapacity), prefixed("kernel ", n.KernelVersion), n.InstanceType)
}

// Describe is everything recorded of n after its name, for kubectl mysqlbench describe:
// "8 CPU (7.5 allocatable), 32 GiB, kernel 6.1.0, Debian GNU/Linux 12 (bookworm), amd64,
// containerd://1.7.22, kubelet v1.33.1, m5.2xlarge, zone eu-west-1a".
func Describe(n v1.ServerNode) string {
	cpu := CPU(n.CPUCapacity)
	if a := n.CPUAllocatable; a != nil && cpu != "" && (n.CPUCapacity == nil || a.Cmp(*n.CPUCapacity) != 0) {
		cpu += " (" + strings.TrimSuffix(CPU(a), " CPU") + " allocatable)"
	}
	return join(cpu, Memory(n.MemoryCapacity), prefixed("kernel ", n.KernelVersion), n.OSImage, n.Architecture,
		n.ContainerRuntime, prefixed("kubelet ", n.KubeletVersion), n.InstanceType, prefixed("zone ", n.Zone))
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

func join(parts ...string) string {
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), ", ")
}

// Placement is where one target's server ran: the node of its latest instance (nil when not
// recorded) and, when its instances ran on more than one, their names (TargetStatus.Node and
// InstanceNodes).
type Placement struct {
	Target        string
	Node          *v1.ServerNode
	InstanceNodes []string
}

// Spread says, in sentences for the reader of a run's results, when the run's measurements span
// nodes: targets whose servers ran on different nodes (naming each node's shape, and whether the
// shapes differ in CPU, memory, kernel, architecture or instance type), and targets whose server
// instances did. "" when every recorded server ran on one node, or none was recorded: then the
// targets' differences are the servers' alone, as far as the nodes go.
func Spread(placements []Placement) []string {
	var out []string
	var nodes []v1.ServerNode
	for _, p := range placements {
		if p.Node != nil && !slices.ContainsFunc(nodes, func(n v1.ServerNode) bool { return n.Name == p.Node.Name }) {
			nodes = append(nodes, *p.Node)
		}
	}
	if len(nodes) > 1 {
		if differ := differences(nodes); len(differ) > 0 {
			var each []string
			for _, n := range nodes {
				each = append(each, n.Name+": "+shapeOf(n, differ))
			}
			out = append(out, fmt.Sprintf("Targets ran on different nodes (%s), which differ in %s; their differences include the nodes'.",
				strings.Join(each, ", "), and(differ)))
		} else {
			var names []string
			for _, n := range nodes {
				names = append(names, n.Name)
			}
			same := Shape(nodes[0])
			if same == "" {
				same = "shape not recorded"
			}
			out = append(out, fmt.Sprintf("Targets ran on different nodes (%s) of the same shape (%s); their differences may still "+
				"include the nodes' (hardware, neighbours).", strings.Join(names, ", "), same))
		}
	}
	for _, p := range placements {
		if len(p.InstanceNodes) > 1 {
			out = append(out, fmt.Sprintf("Target %s's server instances ran on %d different nodes (%s); its repetitions' differences "+
				"include the nodes'.", p.Target, len(p.InstanceNodes), strings.Join(p.InstanceNodes, ", ")))
		}
	}
	return out
}

// The aspects of a node that Spread compares, in the order it names them.
const (
	aspectCPU          = "CPU"
	aspectMemory       = "memory"
	aspectKernel       = "kernel"
	aspectArchitecture = "architecture"
	aspectInstanceType = "instance type"
)

var aspects = []struct {
	name string
	of   func(v1.ServerNode) string
}{
	{aspectCPU, func(n v1.ServerNode) string { return CPU(n.CPUCapacity) }},
	{aspectMemory, func(n v1.ServerNode) string { return Memory(n.MemoryCapacity) }},
	{aspectKernel, func(n v1.ServerNode) string { return n.KernelVersion }},
	{aspectArchitecture, func(n v1.ServerNode) string { return n.Architecture }},
	{aspectInstanceType, func(n v1.ServerNode) string { return n.InstanceType }},
}

// differences are the aspects in which nodes are not all alike.
func differences(nodes []v1.ServerNode) []string {
	var out []string
	for _, a := range aspects {
		for _, n := range nodes[1:] {
			if a.of(n) != a.of(nodes[0]) {
				out = append(out, a.name)
				break
			}
		}
	}
	return out
}

// shapeOf is n's CPU and memory, with whichever other aspects differ among the nodes compared:
// "4 CPU 16 GiB", "4 CPU 16 GiB kernel 6.1.0 m5.xlarge"; what n's Node did not report is left out.
func shapeOf(n v1.ServerNode, differ []string) string {
	parts := []string{CPU(n.CPUCapacity), Memory(n.MemoryCapacity)}
	for _, a := range aspects[2:] {
		if slices.Contains(differ, a.name) {
			if v := a.of(n); v != "" && a.name == aspectKernel {
				parts = append(parts, "kernel "+v)
			} else {
				parts = append(parts, v)
			}
		}
	}
	s := strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), " ")
	if s == "" {
		return "not recorded"
	}
	return s
}

// and joins words as a sentence does: "CPU", "CPU and memory", "CPU, memory and kernel".
func and(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
