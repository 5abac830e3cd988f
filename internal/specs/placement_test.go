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

// databaseTerm is the required anti-affinity every exclusive server carries: every benchmark pod
// of its own namespace (no namespaces, no namespaceSelector).
var databaseTerm = corev1.PodAffinityTerm{
	LabelSelector: &metav1.LabelSelector{
		MatchLabels: map[string]string{"app.kubernetes.io/managed-by": "mysqlbench-operator"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: "app.kubernetes.io/component", Operator: metav1.LabelSelectorOpIn, Values: []string{"server", "sysbench"},
		}},
	},
	TopologyKey: "kubernetes.io/hostname",
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
			got := ClientPlacement(run, "mysql57")
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ClientPlacement =\n%s\nwant\n%s", jsonOf(t, got), jsonOf(t, tc.want))
			}
			if !reflect.DeepEqual(run, before) {
				t.Errorf("ClientPlacement changed the run:\n%s", jsonOf(t, run.Spec.Placement))
			}
		})
	}
}

// With order Parallel a target's clients prefer nodes without the run's other targets' clients,
// and mind neither their own target's clients nor another run's.
func TestParallelClientsSpread(t *testing.T) {
	run := newRun()
	run.Spec.Order = v1.OrderParallel
	other := newRun()
	other.Name = "other-run"
	p := ClientPlacement(run, "mysql57")
	if n := len(p.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution); n != 1 {
		t.Fatalf("%d required terms, want the one against the run's servers", n)
	}
	preferred := p.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	if len(preferred) != 1 || preferred[0].Weight != 100 || preferred[0].PodAffinityTerm.TopologyKey != "kubernetes.io/hostname" {
		t.Fatalf("preferred terms %s", jsonOf(t, preferred))
	}
	sel, err := metav1.LabelSelectorAsSelector(preferred[0].PodAffinityTerm.LabelSelector)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		avoids bool
	}{
		{"the run's other target's client", ClientPodLabels(run, "ps80", "s01"), true},
		{"its own target's client", ClientPodLabels(run, "mysql57", "s02"), false},
		{"the run's other target's server", ServerPodLabels(run, "ps80"), false},
		{"another run's client", ClientPodLabels(other, "ps80", "s01"), false},
	} {
		if got := sel.Matches(k8slabels.Set(tc.labels)); got != tc.avoids {
			t.Errorf("%s: avoided %v, want %v", tc.name, got, tc.avoids)
		}
	}
	if p := ClientPlacement(newRun(), "mysql57"); len(p.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 0 {
		t.Error("a Sequential run's clients have a preference")
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
	clTerm := ClientPlacement(run, "mysql57").Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
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
	if dbTerm.NamespaceSelector != nil || len(dbTerm.Namespaces) != 0 {
		t.Errorf("server anti-affinity must apply in the run's own namespace only (no namespaceSelector, no namespaces), "+
			"got %v %v", dbTerm.NamespaceSelector, dbTerm.Namespaces)
	}
}

// Across namespaces a server's anti-affinity names only its peers (the runs the operator found
// holding the pool), never a namespace selector: a pod anyone gives the operator's labels in a
// namespace without a peer, or of another run than the peer's there, matches no term, so it
// cannot keep a server off its node. An exclusive server avoids every peer's servers and clients;
// one that is not exclusive only the exclusive peers'.
func TestServerAntiAffinityNamesOnlyPeers(t *testing.T) {
	run := newRun()
	run.Namespace = "team-a"
	peers := []Peer{
		{Namespace: "team-b", Run: "nightly", Exclusive: true},
		{Namespace: "team-b", Run: "adhoc", Exclusive: true},
		{Namespace: "team-c", Run: "shared", Exclusive: false},
	}
	other := func(ns, name string) *v1.BenchmarkRun {
		r := newRun()
		r.Namespace, r.Name = ns, name
		return r
	}
	pods := []struct {
		name      string
		namespace string
		labels    map[string]string
		// what an exclusive and a non-exclusive server avoid
		exclusive, shared bool
	}{
		{"a server of this namespace", "team-a", ServerPodLabels(other("team-a", "x"), "db"), true, false},
		{"a client of this namespace", "team-a", ClientPodLabels(other("team-a", "x"), "db", "s01"), true, false},
		{"a peer's server", "team-b", ServerPodLabels(other("team-b", "nightly"), "db"), true, true},
		{"a peer's client", "team-b", ClientPodLabels(other("team-b", "adhoc"), "db", "s01"), true, true},
		{"a shared peer's server", "team-c", ServerPodLabels(other("team-c", "shared"), "db"), true, false},
		{"a labelled pod of a peer's namespace, another run", "team-b", ServerPodLabels(other("team-b", "forged"), "db"), false, false},
		{"a labelled pod of a namespace without peers", "team-z", ServerPodLabels(other("team-z", "nightly"), "db"), false, false},
		{"a labelled pod named like a peer, elsewhere", "team-z", ServerPodLabels(other("team-z", "nightly"), "db"), false, false},
	}
	for _, exclusive := range []bool{true, false} {
		r := run.DeepCopy()
		r.Spec.Placement.Database.Exclusive = ptr.To(exclusive)
		p := DatabasePlacement(r, peers...)
		var terms []corev1.PodAffinityTerm
		if p.Affinity != nil && p.Affinity.PodAntiAffinity != nil {
			terms = p.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		}
		for _, term := range terms {
			if term.NamespaceSelector != nil {
				t.Errorf("exclusive %v: a term with a namespace selector %v: it would match labelled pods of any namespace", exclusive, term.NamespaceSelector)
			}
		}
		for _, pod := range pods {
			avoided := false
			for _, term := range terms {
				namespaces := term.Namespaces
				if len(namespaces) == 0 {
					namespaces = []string{r.Namespace}
				}
				sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
				if err != nil {
					t.Fatal(err)
				}
				if slices.Contains(namespaces, pod.namespace) && sel.Matches(k8slabels.Set(pod.labels)) {
					avoided = true
				}
			}
			want := pod.shared
			if exclusive {
				want = pod.exclusive
			}
			if avoided != want {
				t.Errorf("exclusive %v: %s in %s avoided %v, want %v", exclusive, pod.name, pod.namespace, avoided, want)
			}
		}
	}
	// Stable: the same peers in another order give the same terms.
	a := DatabasePlacement(run, peers...)
	b := DatabasePlacement(run, peers[2], peers[1], peers[0])
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the terms depend on the peers' order:\n%s\n%s", jsonOf(t, a), jsonOf(t, b))
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
	p := DatabasePlacement(run, Peer{Namespace: "team-b", Run: "aa", Exclusive: true})
	anti := p.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(anti) != 2 {
		t.Fatalf("anti-affinity %+v, want two terms", anti)
	}
	sameNs, otherNs := anti[0], anti[1]
	if sameNs.NamespaceSelector != nil || len(sameNs.Namespaces) != 1 || sameNs.Namespaces[0] != "team-a" ||
		!hasRequirement(sameNs.LabelSelector, LabelRun, metav1.LabelSelectorOpNotIn, "aa") {
		t.Errorf("first term %+v: want the other runs of team-a", sameNs)
	}
	if otherNs.NamespaceSelector != nil || len(otherNs.Namespaces) != 1 || otherNs.Namespaces[0] != "team-b" ||
		!hasRequirement(otherNs.LabelSelector, LabelRun, metav1.LabelSelectorOpIn, "aa") {
		t.Errorf("second term %+v: want the peer of team-b, a run of the same name", otherNs)
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
