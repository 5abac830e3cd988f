package run_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/nodeinfo"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// createNode makes a Node as a cloud kubelet reports it: capacity, allocatable, system info and
// the provider's instance type and zone labels. It is not in any pool: the queue must not count it.
func createNode(t *testing.T, name, cpu, memory, instanceType string) *corev1.Node {
	t.Helper()
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		nodeinfo.LabelInstanceType: instanceType, nodeinfo.LabelZone: "eu-west-1a"}}}
	if err := k8s.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), node) })
	node.Status = corev1.NodeStatus{
		Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)},
		Allocatable: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memory)},
		NodeInfo: corev1.NodeSystemInfo{KernelVersion: "6.1.0-18-amd64", OSImage: "Debian GNU/Linux 12 (bookworm)", Architecture: "amd64",
			ContainerRuntimeVersion: "containerd://1.7.22", KubeletVersion: "v1.33.1"},
	}
	// Allocatable below capacity, as a kubelet reserves some.
	node.Status.Allocatable[corev1.ResourceCPU] = *resource.NewMilliQuantity(node.Status.Capacity.Cpu().MilliValue()-500, resource.DecimalSI)
	if err := k8s.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	return node
}

// Each target's status names the node its server pod ran on, with the Node's capacity, system info
// and labels; when a target's instances (PerRepetition) ran on different nodes, it keeps the
// latest and lists them all; results.json and report.md say the same, report.md with the
// sentences about the targets' different nodes.
func TestServerNodeRecorded(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	small := createNode(t, ns+"-small", "4", "16Gi", "m5.xlarge")
	big := createNode(t, ns+"-big", "8", "32Gi", "m5.2xlarge")
	other := createNode(t, ns+"-other", "4", "16Gi", "m5.xlarge")

	run := baseRun(ns, "nodes", 1)
	run.Spec.Repetitions = ptr.To[int32](2)
	run.Spec.ServerInstance = v1.ServerInstancePerRepetition
	// mariadb's first instance on other, its second on small; mariadb-psoff's both on big.
	var mu sync.Mutex
	pods := map[string]int{}
	startKubeletBinding(t, ns, succeedAll(t), func(pod *corev1.Pod) string {
		mu.Lock()
		defer mu.Unlock()
		pods[pod.Name]++
		switch {
		case pod.Name != specs.ServerName(run, "mariadb")+"-0":
			return big.Name
		case pods[pod.Name] == 1:
			return other.Name
		}
		return small.Name
	})
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "nodes", 60*time.Second, "the run to finish", finished)
	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("run %s: %+v", got.Status.Phase, got.Status.Targets)
	}
	for _, tc := range []struct {
		target    string
		node      *corev1.Node
		cpu       string
		instances []string
	}{
		{"mariadb", small, "4", []string{other.Name, small.Name}},
		{"mariadb-psoff", big, "8", nil},
	} {
		ts := got.Status.Targets[slices.IndexFunc(got.Status.Targets, func(ts v1.TargetStatus) bool { return ts.Name == tc.target })]
		n := ts.Node
		if n == nil {
			t.Errorf("target %s: no node recorded", tc.target)
			continue
		}
		alloc := resource.MustParse(tc.cpu)
		alloc.Sub(resource.MustParse("500m"))
		if n.Name != tc.node.Name || n.CPUCapacity == nil || !n.CPUCapacity.Equal(resource.MustParse(tc.cpu)) ||
			n.CPUAllocatable == nil || !n.CPUAllocatable.Equal(alloc) ||
			n.MemoryCapacity == nil || !n.MemoryCapacity.Equal(tc.node.Status.Capacity[corev1.ResourceMemory]) ||
			n.KernelVersion != "6.1.0-18-amd64" || n.OSImage != "Debian GNU/Linux 12 (bookworm)" || n.Architecture != "amd64" ||
			n.ContainerRuntime != "containerd://1.7.22" || n.KubeletVersion != "v1.33.1" ||
			n.InstanceType != tc.node.Labels[nodeinfo.LabelInstanceType] || n.Zone != "eu-west-1a" {
			t.Errorf("target %s: node %+v, want %s's facts (%s CPU, %s allocatable)", tc.target, n, tc.node.Name, tc.cpu, alloc.String())
		}
		if !slices.Equal(ts.InstanceNodes, tc.instances) {
			t.Errorf("target %s: instanceNodes %q, want %q", tc.target, ts.InstanceNodes, tc.instances)
		}
	}

	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: got.Status.ResultsConfigMap}, cm); err != nil {
		t.Fatal(err)
	}
	doc, err := results.Decode([]byte(cm.Data[report.KeyResultsJSON]))
	if err != nil {
		t.Fatal(err)
	}
	if n := doc.Targets[0].Node; n == nil || n.Name != small.Name || !slices.Equal(doc.Targets[0].InstanceNodes, []string{other.Name, small.Name}) {
		t.Errorf("results.json target %s: node %+v, instanceNodes %q", doc.Targets[0].Name, n, doc.Targets[0].InstanceNodes)
	}
	md := cm.Data[report.KeyReportMD]
	for _, want := range []string{
		"Targets ran on different nodes (" + small.Name + ": 4 CPU 16 GiB m5.xlarge, " + big.Name + ": 8 CPU 32 GiB m5.2xlarge), " +
			"which differ in CPU, memory and instance type; their differences include the nodes'.",
		"Target mariadb's server instances ran on 2 different nodes (" + other.Name + ", " + small.Name + ")",
		"- mariadb-psoff: " + big.Name + ", 8 CPU, 32 GiB, kernel 6.1.0-18-amd64, m5.2xlarge",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
}
