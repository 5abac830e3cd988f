package specs

import (
	"maps"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

func TestServerNetworkPolicy(t *testing.T) {
	run := newRun()
	np := ServerNetworkPolicy(run, "mysql57")

	if np.Name != ServerName(run, "mysql57") || np.Namespace != "bench" {
		t.Errorf("NetworkPolicy %s/%s, want bench/%s", np.Namespace, np.Name, ServerName(run, "mysql57"))
	}
	if !reflect.DeepEqual(np.Labels, TargetLabels(run, "mysql57")) {
		t.Errorf("labels %v, want the target's", np.Labels)
	}
	if !reflect.DeepEqual(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
		t.Errorf("policy types %v, want Ingress only (egress stays open)", np.Spec.PolicyTypes)
	}
	if len(np.Spec.Ingress) != 1 {
		t.Fatalf("%d ingress rules, want 1", len(np.Spec.Ingress))
	}
	rule := np.Spec.Ingress[0]
	tcp := corev1.ProtocolTCP
	port := intstr.FromInt32(3306)
	if want := []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}}; !reflect.DeepEqual(rule.Ports, want) {
		t.Errorf("ports %s, want TCP 3306 only", jsonOf(t, rule.Ports))
	}
	if len(rule.From) != 1 || rule.From[0].PodSelector == nil || rule.From[0].NamespaceSelector != nil || rule.From[0].IPBlock != nil {
		t.Fatalf("from %s, want one pod selector in the run's namespace", jsonOf(t, rule.From))
	}

	// What the policy selects, and whom it admits, among the pods of a namespace with two runs.
	other := newRun()
	other.Name = "other-run"
	job := func(r *v1.BenchmarkRun, target, step string) map[string]string {
		l := ClientPodLabels(r, target, step)
		name := JobName(r, target, step, Attempt{})
		// What the Job controller adds.
		maps.Copy(l, map[string]string{"batch.kubernetes.io/job-name": name, "job-name": name,
			"batch.kubernetes.io/controller-uid": "0c3f", "controller-uid": "0c3f"})
		return l
	}
	server := func(r *v1.BenchmarkRun, target string) map[string]string {
		l := ServerPodLabels(r, target)
		// What the StatefulSet controller adds.
		maps.Copy(l, map[string]string{"controller-revision-hash": ServerName(r, target) + "-5d8f", "apps.kubernetes.io/pod-index": "0",
			"statefulset.kubernetes.io/pod-name": ServerName(r, target) + "-0"})
		return l
	}
	tests := []struct {
		name               string
		pod                map[string]string
		selected, admitted bool
	}{
		{"the target's server", server(run, "mysql57"), true, false},
		{"another target's server", server(run, "ps80"), false, false},
		{"the same target name in another run", server(other, "mysql57"), false, false},
		{"the target's probe", job(run, "mysql57", "probe"), false, true},
		{"the target's prepare", job(run, "mysql57", "prepare"), false, true},
		{"the target's warm-up", job(run, "mysql57", "warmup"), false, true},
		{"the target's ladder step", job(run, "mysql57", LadderStep(10, 1)), false, true},
		{"the target's cleanup", job(run, "mysql57", "cleanup"), false, true},
		{"another target's sysbench", job(run, "ps80", LadderStep(0, 1)), false, false},
		{"another run's sysbench for a target of the same name", job(other, "mysql57", LadderStep(0, 1)), false, false},
		{"a pod that only claims to be sysbench", map[string]string{LabelComponent: ComponentClient, LabelTarget: "mysql57"}, false, false},
		{"an unrelated pod", map[string]string{"app": "debug"}, false, false},
	}
	selects, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	admits, err := metav1.LabelSelectorAsSelector(rule.From[0].PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := selects.Matches(labels.Set(tc.pod)); got != tc.selected {
				t.Errorf("policy selects %v: %v, want %v", tc.pod, got, tc.selected)
			}
			if got := admits.Matches(labels.Set(tc.pod)); got != tc.admitted {
				t.Errorf("policy admits %v: %v, want %v", tc.pod, got, tc.admitted)
			}
		})
	}
}

// A run name longer than a label value: the selectors use the shortened value the pods carry.
func TestServerNetworkPolicyLongRunName(t *testing.T) {
	run := newRun()
	run.Name = strings.Repeat("a-very-long-run-name-", 5)
	np := ServerNetworkPolicy(run, "mysql57")
	selects, _ := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	admits, _ := metav1.LabelSelectorAsSelector(np.Spec.Ingress[0].From[0].PodSelector)
	if !selects.Matches(labels.Set(ServerPodLabels(run, "mysql57"))) {
		t.Errorf("the policy does not select the server pod of a run named %q", run.Name)
	}
	if !admits.Matches(labels.Set(ClientPodLabels(run, "mysql57", LadderStep(0, 1)))) {
		t.Errorf("the policy does not admit the sysbench pods of a run named %q", run.Name)
	}
	if len(np.Name) > 63 {
		t.Errorf("name %q is longer than 63 characters", np.Name)
	}
}
