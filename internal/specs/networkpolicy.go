package specs

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// ServerNetworkPolicy fences a target's server pod, the pod with ServerPodLabels (the builtin
// engine creates it while spec.networkPolicy is Enabled): ingress only on TCP MySQLPort and only
// from the run's sysbench pods of that target in the run's namespace, whatever their step
// (probe, prepare, ladder, cleanup); every other ingress to the server is denied. Egress stays open. The operator itself never connects to a server, so it
// needs no rule.
func ServerNetworkPolicy(run *v1.BenchmarkRun, target string) *networkingv1.NetworkPolicy {
	clients := ClientPodLabels(run, target, "")
	delete(clients, LabelStep)
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{
			Name:      ServerName(run, target),
			Namespace: run.Namespace,
			Labels:    TargetLabels(run, target),
		},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: ServerPodLabels(run, target)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				Ports: []networkingv1.NetworkPolicyPort{{
					Protocol: ptr.To(corev1.ProtocolTCP),
					Port:     ptr.To(intstr.FromInt32(MySQLPort)),
				}},
				From: []networkingv1.NetworkPolicyPeer{{
					PodSelector: &metav1.LabelSelector{MatchLabels: clients},
				}},
			}},
		},
	}
}
