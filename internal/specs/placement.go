package specs

import (
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

// DatabasePlacement places a target's server: on the database pool and, when exclusive (the
// default), alone: no other benchmark server and no sysbench client of any run, in any namespace,
// may share its node.
func DatabasePlacement(run *v1.BenchmarkRun) Placement {
	pp := run.Spec.Placement.Database
	p := poolDefaults(pp.PoolPlacement, PoolDatabase)
	if pp.IsExclusive() && run.Spec.Interleaved() {
		return interleavedPlacement(run, p)
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
			NamespaceSelector: &metav1.LabelSelector{},
			TopologyKey:       hostnameTopology,
		})
	}
	return p
}

// interleavedPlacement places the servers of an interleaved run together and otherwise alone:
// on one node (a required affinity to the run's other servers; the first server, which matches
// its own term, may go anywhere in the pool), with no benchmark server or client of any other
// run. Other runs are told apart by the run label in the run's namespace and by the namespace
// elsewhere, since another namespace may have a run of the same name.
func interleavedPlacement(run *v1.BenchmarkRun, p Placement) Placement {
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
	p.Affinity = withAntiAffinity(p.Affinity, corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{
			MatchLabels:      map[string]string{LabelManagedBy: ManagedBy},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: LabelComponent, Operator: metav1.LabelSelectorOpIn, Values: servers}},
		},
		NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{run.Namespace},
		}}},
		TopologyKey: hostnameTopology,
	})
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

// ClientPlacement places a sysbench pod: on the client pool and, when the database pool is
// exclusive, never on a node running one of the run's servers.
func ClientPlacement(run *v1.BenchmarkRun) Placement {
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
