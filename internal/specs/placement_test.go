package specs

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

func defaultToleration(pool string) []corev1.Toleration {
	return []corev1.Toleration{{
		Key: "mysqlbench.io/dedicated", Operator: corev1.TolerationOpEqual, Value: pool, Effect: corev1.TaintEffectNoSchedule,
	}}
}

// databaseTerm is the required anti-affinity every exclusive server carries.
var databaseTerm = corev1.PodAffinityTerm{
	LabelSelector: &metav1.LabelSelector{
		MatchLabels: map[string]string{"app.kubernetes.io/managed-by": "mysqlbench-operator"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: "app.kubernetes.io/component", Operator: metav1.LabelSelectorOpIn, Values: []string{"server", "sysbench"},
		}},
	},
	NamespaceSelector: &metav1.LabelSelector{}, // all namespaces
	TopologyKey:       "kubernetes.io/hostname",
}

func clientTerm(run *v1.BenchmarkRun) corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
			"app.kubernetes.io/managed-by": "mysqlbench-operator",
			"mysqlbench.io/run":            run.Name,
			"app.kubernetes.io/component":  "server",
		}},
		TopologyKey: "kubernetes.io/hostname",
	}
}

func userAffinity() *corev1.Affinity {
	return &corev1.Affinity{
		NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: "node.kubernetes.io/instance-type", Operator: corev1.NodeSelectorOpIn, Values: []string{"m6i.4xlarge"},
			}}}},
		}},
		PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "noisy"}},
			TopologyKey:   "kubernetes.io/hostname",
		}}},
	}
}

func TestDatabasePlacement(t *testing.T) {
	run := newRun()
	withUserTerm := userAffinity()
	withUserTerm.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(
		withUserTerm.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, databaseTerm)
	tests := []struct {
		name      string
		placement v1.DatabasePlacement
		want      Placement
	}{
		{
			name: "defaults",
			want: Placement{
				NodeSelector: map[string]string{"mysqlbench.io/pool": "database"},
				Tolerations:  defaultToleration("database"),
				Affinity:     &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{databaseTerm}}},
			},
		},
		{
			name:      "exclusive explicitly true",
			placement: v1.DatabasePlacement{Exclusive: ptr.To(true)},
			want: Placement{
				NodeSelector: map[string]string{"mysqlbench.io/pool": "database"},
				Tolerations:  defaultToleration("database"),
				Affinity:     &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{databaseTerm}}},
			},
		},
		{
			name:      "not exclusive: no anti-affinity",
			placement: v1.DatabasePlacement{Exclusive: ptr.To(false)},
			want: Placement{
				NodeSelector: map[string]string{"mysqlbench.io/pool": "database"},
				Tolerations:  defaultToleration("database"),
			},
		},
		{
			name: "user selector and tolerations replace the defaults",
			placement: v1.DatabasePlacement{PoolPlacement: v1.PoolPlacement{
				NodeSelector: map[string]string{"disk": "nvme"},
				Tolerations:  []corev1.Toleration{{Key: "db", Operator: corev1.TolerationOpExists}},
			}, Exclusive: ptr.To(false)},
			want: Placement{
				NodeSelector: map[string]string{"disk": "nvme"},
				Tolerations:  []corev1.Toleration{{Key: "db", Operator: corev1.TolerationOpExists}},
			},
		},
		{
			name: "explicit empty selector and tolerations mean none",
			placement: v1.DatabasePlacement{PoolPlacement: v1.PoolPlacement{
				NodeSelector: map[string]string{},
				Tolerations:  []corev1.Toleration{},
			}, Exclusive: ptr.To(false)},
			want: Placement{NodeSelector: map[string]string{}, Tolerations: []corev1.Toleration{}},
		},
		{
			name:      "user affinity kept, operator's term appended",
			placement: v1.DatabasePlacement{PoolPlacement: v1.PoolPlacement{Affinity: userAffinity()}},
			want: Placement{
				NodeSelector: map[string]string{"mysqlbench.io/pool": "database"},
				Tolerations:  defaultToleration("database"),
				Affinity:     withUserTerm,
			},
		},
		{
			name:      "user affinity alone when not exclusive",
			placement: v1.DatabasePlacement{PoolPlacement: v1.PoolPlacement{Affinity: userAffinity()}, Exclusive: ptr.To(false)},
			want: Placement{
				NodeSelector: map[string]string{"mysqlbench.io/pool": "database"},
				Tolerations:  defaultToleration("database"),
				Affinity:     userAffinity(),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := run.DeepCopy()
			run.Spec.Placement.Database = tc.placement
			before := run.DeepCopy()
			got := DatabasePlacement(run)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("DatabasePlacement =\n%s\nwant\n%s", jsonOf(t, got), jsonOf(t, tc.want))
			}
			if got.NodeSelector == nil || got.Tolerations == nil {
				t.Error("an empty selector or toleration list must stay non-nil (empty), not unset")
			}
			if !reflect.DeepEqual(run, before) {
				t.Errorf("DatabasePlacement changed the run:\n%s", jsonOf(t, run.Spec.Placement))
			}
			// Twice in a row gives the same: the operator's term is not appended to the user's object.
			if again := DatabasePlacement(run); !reflect.DeepEqual(again, got) {
				t.Errorf("second DatabasePlacement differs:\n%s", jsonOf(t, again))
			}
		})
	}
}

func TestClientPlacement(t *testing.T) {
	run := newRun()
	withUserTerm := userAffinity()
	withUserTerm.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(
		withUserTerm.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, clientTerm(run))
	tests := []struct {
		name      string
		exclusive *bool
		client    v1.PoolPlacement
		want      Placement
	}{
		{
			name: "defaults: client pool, away from this run's servers",
			want: Placement{
				NodeSelector: map[string]string{"mysqlbench.io/pool": "client"},
				Tolerations:  defaultToleration("client"),
				Affinity:     &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{clientTerm(run)}}},
			},
		},
		{
			name:      "database not exclusive: client may share the server's node",
			exclusive: ptr.To(false),
			want: Placement{
				NodeSelector: map[string]string{"mysqlbench.io/pool": "client"},
				Tolerations:  defaultToleration("client"),
			},
		},
		{
			name:      "same host study: explicit empty selector and tolerations",
			exclusive: ptr.To(false),
			client:    v1.PoolPlacement{NodeSelector: map[string]string{}, Tolerations: []corev1.Toleration{}},
			want:      Placement{NodeSelector: map[string]string{}, Tolerations: []corev1.Toleration{}},
		},
		{
			name:   "user overrides and affinity",
			client: v1.PoolPlacement{NodeSelector: map[string]string{"role": "loadgen"}, Affinity: userAffinity()},
			want: Placement{
				NodeSelector: map[string]string{"role": "loadgen"},
				Tolerations:  defaultToleration("client"),
				Affinity:     withUserTerm,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := run.DeepCopy()
			run.Spec.Placement.Database.Exclusive = tc.exclusive
			run.Spec.Placement.Client = tc.client
			before := run.DeepCopy()
			got := ClientPlacement(run)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ClientPlacement =\n%s\nwant\n%s", jsonOf(t, got), jsonOf(t, tc.want))
			}
			if !reflect.DeepEqual(run, before) {
				t.Errorf("ClientPlacement changed the run:\n%s", jsonOf(t, run.Spec.Placement))
			}
		})
	}
}

// The client's anti-affinity must select exactly the pods of the run's servers, and the
// database anti-affinity every server and sysbench pod.
func TestAntiAffinitiesSelectTheRightPods(t *testing.T) {
	run := newRun()
	other := newRun()
	other.Name = "other-run"
	matches := func(term corev1.PodAffinityTerm, labels map[string]string) bool {
		t.Helper()
		sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
		if err != nil {
			t.Fatal(err)
		}
		return sel.Matches(k8slabels.Set(labels))
	}
	dbTerm := DatabasePlacement(run).Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
	clTerm := ClientPlacement(run).Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
	pods := []struct {
		name         string
		labels       map[string]string
		dbAvoids     bool
		clientAvoids bool
	}{
		{"this run's server", ServerPodLabels(run, "mysql57"), true, true},
		{"this run's other target's server", ServerPodLabels(run, "ps80"), true, true},
		{"another run's server", ServerPodLabels(other, "mysql57"), true, false},
		{"this run's sysbench", ClientPodLabels(run, "mysql57", "s01"), true, false},
		{"another run's sysbench", ClientPodLabels(other, "mysql57", "s01"), true, false},
		{"unrelated pod", map[string]string{"app": "web"}, false, false},
		{"unmanaged pod claiming the component", map[string]string{LabelComponent: "server"}, false, false},
	}
	for _, p := range pods {
		if got := matches(dbTerm, p.labels); got != p.dbAvoids {
			t.Errorf("server anti-affinity matches %s: %v, want %v", p.name, got, p.dbAvoids)
		}
		if got := matches(clTerm, p.labels); got != p.clientAvoids {
			t.Errorf("client anti-affinity matches %s: %v, want %v", p.name, got, p.clientAvoids)
		}
	}
	if dbTerm.NamespaceSelector == nil || len(dbTerm.NamespaceSelector.MatchLabels)+len(dbTerm.NamespaceSelector.MatchExpressions) != 0 {
		t.Errorf("server anti-affinity must apply in all namespaces (empty namespaceSelector), got %v", dbTerm.NamespaceSelector)
	}
}

func TestPlacementApply(t *testing.T) {
	p := DatabasePlacement(newRun())
	var spec corev1.PodSpec
	p.Apply(&spec)
	if !reflect.DeepEqual(spec.NodeSelector, p.NodeSelector) || !reflect.DeepEqual(spec.Tolerations, p.Tolerations) || spec.Affinity != p.Affinity {
		t.Errorf("Apply did not set the placement: %s", jsonOf(t, spec))
	}
}

// An interleaved run's servers go together on one database node, and nothing of any other run
// (of this namespace, or of a run of the same name in another) shares it.
func TestInterleavedDatabasePlacement(t *testing.T) {
	run := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "aa", Namespace: "team-a"}}
	run.Spec.Order = v1.OrderInterleaved
	p := DatabasePlacement(run)
	anti := p.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(anti) != 2 {
		t.Fatalf("anti-affinity %+v, want two terms", anti)
	}
	sameNs, otherNs := anti[0], anti[1]
	if sameNs.NamespaceSelector != nil || len(sameNs.Namespaces) != 1 || sameNs.Namespaces[0] != "team-a" ||
		!hasRequirement(sameNs.LabelSelector, LabelRun, metav1.LabelSelectorOpNotIn, "aa") {
		t.Errorf("first term %+v: want the other runs of team-a", sameNs)
	}
	if otherNs.NamespaceSelector == nil || !hasRequirement(otherNs.NamespaceSelector, corev1.LabelMetadataName, metav1.LabelSelectorOpNotIn, "team-a") ||
		hasRequirement(otherNs.LabelSelector, LabelRun, metav1.LabelSelectorOpNotIn, "aa") {
		t.Errorf("second term %+v: want every run of every other namespace, whatever its name", otherNs)
	}
	aff := p.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(aff) != 1 || aff[0].LabelSelector.MatchLabels[LabelRun] != "aa" || aff[0].LabelSelector.MatchLabels[LabelComponent] != ComponentServer ||
		aff[0].TopologyKey != hostnameTopology {
		t.Errorf("pod affinity %+v: want the run's own servers on the same node", aff)
	}
	run.Spec.Order = v1.OrderSequential
	if p := DatabasePlacement(run); p.Affinity.PodAffinity != nil || len(p.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Errorf("a sequential run's placement changed: %+v", p.Affinity)
	}
}

func hasRequirement(sel *metav1.LabelSelector, key string, op metav1.LabelSelectorOperator, value string) bool {
	for _, r := range sel.MatchExpressions {
		if r.Key == key && r.Operator == op && slices.Contains(r.Values, value) {
			return true
		}
	}
	return false
}
