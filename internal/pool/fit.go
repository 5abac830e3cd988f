package pool

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// Fit says whether the servers of targets fit together on one of nodes (the Ready nodes of
// their database pool), as order Interleaved keeps them: "" when the sum of their requests (limits
// where a request is unset) fits the allocatable CPU and memory of one, else what does not fit
// and what to do.
func Fit(targets []v1.Target, nodes []corev1.Node) string {
	need := corev1.ResourceList{}
	for _, t := range targets {
		if t.Resources == nil {
			continue
		}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			q, ok := t.Resources.Requests[name]
			if !ok {
				q, ok = t.Resources.Limits[name]
			}
			if ok {
				sum := need[name]
				sum.Add(q)
				need[name] = sum
			}
		}
	}
	var best *corev1.Node
	for i := range nodes {
		n := &nodes[i]
		if fitsIn(need, n.Status.Allocatable) {
			return ""
		}
		if best == nil || n.Status.Allocatable.Memory().Cmp(*best.Status.Allocatable.Memory()) > 0 {
			best = n
		}
	}
	if best == nil {
		return ""
	}
	alloc := best.Status.Allocatable
	return fmt.Sprintf("order Interleaved keeps all %d targets' servers up together on one database node, and their "+
		"resources add up to %s CPU and %s memory, more than any Ready node of the pool can hold (node %s: %s CPU, %s memory "+
		"allocatable): lower the targets' resources, use fewer targets, or use order Sequential",
		len(targets), qty(need, corev1.ResourceCPU), qty(need, corev1.ResourceMemory), best.Name,
		qty(alloc, corev1.ResourceCPU), qty(alloc, corev1.ResourceMemory))
}

func fitsIn(need, alloc corev1.ResourceList) bool {
	for name, q := range need {
		a, ok := alloc[name]
		if ok && q.Cmp(a) > 0 {
			return false
		}
	}
	return true
}

func qty(l corev1.ResourceList, name corev1.ResourceName) string {
	q, ok := l[name]
	if !ok {
		return "0"
	}
	return q.String()
}
