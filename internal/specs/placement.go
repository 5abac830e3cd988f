package specs

import (
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// Node pools by default: nodes labelled PoolLabel=<pool> and tainted DedicatedTaint=<pool>:NoSchedule.
const (
	PoolLabel      = "mysqlbench.io/pool"
	DedicatedTaint = "mysqlbench.io/dedicated"
	PoolDatabase   = "database"
	PoolClient     = "client"

	hostnameTopology = "kubernetes.io/hostname"
)

// Placement is where a pod may run.
type Placement struct {
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
	Affinity     *corev1.Affinity
}

// Apply sets the placement on a pod template.
func (p Placement) Apply(spec *corev1.PodSpec) {
	spec.NodeSelector = p.NodeSelector
	spec.Tolerations = p.Tolerations
	spec.Affinity = p.Affinity
}

// Peer is a run of another namespace whose server held a node of the same database pool when a
// server was built: the operator verified that the run exists, controls that server and holds it
// now (the node pool queue's holders), so a pod carrying its labels in its namespace is a
// benchmark pod, not one anybody labelled so.
type Peer struct {
	Namespace, Run string
	// Exclusive: the peer's servers must be alone on their nodes.
	Exclusive bool
}

// DatabasePlacement places a target's server on the database pool and, when exclusive (the
// default), alone: no other benchmark server and no sysbench client shares its node.
//
// Which pods count as benchmark pods is the point. Labels prove nothing: anyone who may create a
// pod can give it the operator's labels, and a required anti-affinity term over every namespace
// (a namespaceSelector {}) would let such a pod, in any namespace, keep servers off every node it
// sits on; no run could then ever be placed. So the terms name only pods that cannot be
// anybody's:
//   - in the run's own namespace, every pod with the operator's labels (whoever can create those
//     there can tamper with the run anyway);
//   - in another namespace, only the servers and clients of the peers, the runs that held a node
//     of the pool when this server was built, by their run label.
//
// A server built later names this one among its peers, and the scheduler checks a required
// anti-affinity both ways (an incoming pod is not placed next to a pod whose own term matches
// it), so of any two servers the newer one's term keeps them apart, restarts included; the node
// pool queue keeps their number within the pool's nodes. A server that is not exclusive names
// only the exclusive peers, and none of its own namespace: it does not mind company, but must
// not join a server that does.
func DatabasePlacement(run *v1.BenchmarkRun, peers ...Peer) Placement {
	pp := run.Spec.Placement.Database
	p := poolDefaults(pp.PoolPlacement, PoolDatabase)
	if pp.IsExclusive() && run.Spec.Interleaved() {
		return interleavedPlacement(run, p, peers)
	}
	if pp.IsExclusive() {
		p.Affinity = withAntiAffinity(p.Affinity, corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{LabelManagedBy: ManagedBy},
				MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: LabelComponent, Operator: metav1.LabelSelectorOpIn,
					Values: []string{ComponentServer, ComponentClient},
				}},
			},
			// No namespaces and no namespaceSelector: the pod's own namespace.
			TopologyKey: hostnameTopology,
		})
	}
	for _, term := range peerTerms(peers, pp.IsExclusive()) {
		p.Affinity = withAntiAffinity(p.Affinity, term)
	}
	return p
}

// peerTerms are the anti-affinity terms against the peers' servers and clients, one per namespace
// (every peer with all, only the exclusive ones without), in a stable order.
func peerTerms(peers []Peer, all bool) []corev1.PodAffinityTerm {
	runs := map[string][]string{}
	for _, peer := range peers {
		if all || peer.Exclusive {
			runs[peer.Namespace] = append(runs[peer.Namespace], LabelValue(peer.Run))
		}
	}
	namespaces := make([]string, 0, len(runs))
	for ns := range runs {
		namespaces = append(namespaces, ns)
	}
	sort.Strings(namespaces)
	terms := make([]corev1.PodAffinityTerm, 0, len(namespaces))
	for _, ns := range namespaces {
		names := runs[ns]
		sort.Strings(names)
		terms = append(terms, corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{LabelManagedBy: ManagedBy},
				MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: LabelComponent, Operator: metav1.LabelSelectorOpIn, Values: []string{ComponentServer, ComponentClient}},
					{Key: LabelRun, Operator: metav1.LabelSelectorOpIn, Values: slices.Compact(names)},
				},
			},
			Namespaces:  []string{ns},
			TopologyKey: hostnameTopology,
		})
	}
	return terms
}

// interleavedPlacement places the servers of an interleaved run together and otherwise alone:
// on one node (a required affinity to the run's other servers; the first server, which matches
// its own term, may go anywhere in the pool), with no benchmark server or client of any other
// run: those of the run's namespace by their run label, those of other namespaces as the peers'
// (see DatabasePlacement for why not every namespace's).
func interleavedPlacement(run *v1.BenchmarkRun, p Placement, peers []Peer) Placement {
	servers := []string{ComponentServer, ComponentClient}
	p.Affinity = withAntiAffinity(p.Affinity, corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{LabelManagedBy: ManagedBy},
			MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: LabelComponent, Operator: metav1.LabelSelectorOpIn, Values: servers},
				{Key: LabelRun, Operator: metav1.LabelSelectorOpNotIn, Values: []string{LabelValue(run.Name)}},
			},
		},
		Namespaces:  []string{run.Namespace},
		TopologyKey: hostnameTopology,
	})
	for _, term := range peerTerms(peers, true) {
		p.Affinity = withAntiAffinity(p.Affinity, term)
	}
	if p.Affinity.PodAffinity == nil {
		p.Affinity.PodAffinity = &corev1.PodAffinity{}
	}
	p.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(
		p.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
				LabelManagedBy: ManagedBy, LabelRun: LabelValue(run.Name), LabelComponent: ComponentServer,
			}},
			TopologyKey: hostnameTopology,
		})
	return p
}

// ClientPlacement places a client pod of target: on the client pool and, when the database pool
// is exclusive, never on a node running one of the run's servers. With order Parallel the
// targets' clients run at the same time: they prefer client nodes that no other target of the
// run uses, so that with as many client nodes as targets no client competes with another for a
// node's CPU (with fewer, they share, as the pool allows).
func ClientPlacement(run *v1.BenchmarkRun, target string) Placement {
	p := poolDefaults(run.Spec.Placement.Client, PoolClient)
	if run.Spec.Placement.Database.IsExclusive() {
		p.Affinity = withAntiAffinity(p.Affinity, corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
				LabelManagedBy: ManagedBy,
				LabelRun:       LabelValue(run.Name),
				LabelComponent: ComponentServer,
			}},
			TopologyKey: hostnameTopology,
		})
	}
	if run.Spec.Parallel() {
		if p.Affinity == nil {
			p.Affinity = &corev1.Affinity{}
		}
		if p.Affinity.PodAntiAffinity == nil {
			p.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{}
		}
		p.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(
			p.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, corev1.WeightedPodAffinityTerm{
				Weight: 100,
				PodAffinityTerm: corev1.PodAffinityTerm{
					LabelSelector: &metav1.LabelSelector{
						MatchLabels: map[string]string{LabelManagedBy: ManagedBy, LabelRun: LabelValue(run.Name),
							LabelComponent: ComponentClient},
						MatchExpressions: []metav1.LabelSelectorRequirement{
							{Key: LabelTarget, Operator: metav1.LabelSelectorOpNotIn, Values: []string{target}},
						},
					},
					TopologyKey: hostnameTopology,
				},
			})
	}
	return p
}

// poolDefaults fills what the user left unset (nil, not empty) with the pool's defaults.
func poolDefaults(pp v1.PoolPlacement, pool string) Placement {
	p := Placement{NodeSelector: pp.NodeSelector, Tolerations: pp.Tolerations}
	if p.NodeSelector == nil {
		p.NodeSelector = map[string]string{PoolLabel: pool}
	}
	if p.Tolerations == nil {
		p.Tolerations = []corev1.Toleration{{
			Key: DedicatedTaint, Operator: corev1.TolerationOpEqual, Value: pool, Effect: corev1.TaintEffectNoSchedule,
		}}
	}
	if pp.Affinity != nil {
		p.Affinity = pp.Affinity.DeepCopy()
	}
	return p
}

// withAntiAffinity adds a required pod anti-affinity term to the user's affinity (a copy).
func withAntiAffinity(a *corev1.Affinity, term corev1.PodAffinityTerm) *corev1.Affinity {
	if a == nil {
		a = &corev1.Affinity{}
	}
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(
		a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term)
	return a
}
