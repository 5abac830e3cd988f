package pool_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/pool"
)

func TestInterleavedFit(t *testing.T) {
	node := func(name, cpu, mem string) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}}
	}
	target := func(cpu, mem string, limitsOnly bool) v1.Target {
		l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
		if limitsOnly {
			return v1.Target{Name: "t", Resources: &corev1.ResourceRequirements{Limits: l}}
		}
		return v1.Target{Name: "t", Resources: &corev1.ResourceRequirements{Requests: l}}
	}
	for _, tc := range []struct {
		name    string
		targets []v1.Target
		nodes   []corev1.Node
		want    string
	}{
		{"no resources asked", []v1.Target{{Name: "a"}, {Name: "b"}}, []corev1.Node{node("n", "1", "1Gi")}, ""},
		{"fits", []v1.Target{target("1", "2Gi", false), target("1", "2Gi", false)}, []corev1.Node{node("n", "2", "4Gi")}, ""},
		{"fits the larger node", []v1.Target{target("1", "2Gi", false), target("1", "2Gi", false)},
			[]corev1.Node{node("small", "1", "2Gi"), node("big", "4", "8Gi")}, ""},
		{"memory too much", []v1.Target{target("1", "3Gi", false), target("1", "2Gi", false)}, []corev1.Node{node("n", "4", "4Gi")},
			"add up to 2 CPU and 5Gi memory, more than any Ready node of the pool can hold (node n: 4 CPU, 4Gi memory allocatable)"},
		{"limits count where requests are unset", []v1.Target{target("3", "1Gi", true), target("2", "1Gi", false)}, []corev1.Node{node("n", "4", "8Gi")},
			"add up to 5 CPU and 2Gi memory"},
	} {
		got := pool.Fit(tc.targets, tc.nodes)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
