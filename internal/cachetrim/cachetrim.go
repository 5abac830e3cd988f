// Package cachetrim is what the manager's cache keeps: which objects (Options) and what of
// each (the transforms).
//
// The cache holds every object in the watched namespaces that carries the operator's
// managed-by label, and anyone who may create a Pod, Secret, ConfigMap, Service or
// NetworkPolicy there can set that label. So what the cache keeps of each object is bounded by
// what the operator reads, not by what the object holds: the transforms keep a fixed set of
// fields, and of the metadata only the labels the operator selects and reads by, the controller
// reference and a few finalizers. An object the operator wrote itself carries nothing else it
// needs; a tenant's labelled object costs the manager about a kilobyte whatever it carries.
package cachetrim

import (
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// Options restricts the manager's cache to the objects the operator created (by label), so
// its memory does not grow with the cluster's Pods, Secrets and ConfigMaps. Objects the user
// owns (an external target's Secret) are read directly from the API server.
//
// The cache trims what the controller never reads: managedFields everywhere, the spec of pods
// (only their status is read), the pod template of Jobs (only their status and deadline are
// read), of StatefulSets all but the pod template's labels and node selector (the queue reads
// those), the data of ConfigMaps (the results are read and written through the API server,
// and the reporter is checked there), and the data and annotations of Secrets: anyone who may
// create Secrets in a watched namespace can label them as the operator's, and a Secret holds up
// to 1 MiB (its annotations another 256 KiB, kubectl apply's copy of the data among them), so
// the cache keeps their metadata only, and the code that reads a Secret's content (the engines'
// content checks, the external target's Secret, the redaction of failures) reads it from the
// API server. Beyond that every cached object keeps only the metadata the operator reads
// (the transforms here): anyone who may create a labelled object must not be able to grow the manager's
// memory with its labels, annotations or spec. Never Update a cached object of these kinds: the
// trimmed fields would be written back.
func Options(opts cache.Options) cache.Options {
	ours := labels.SelectorFromSet(labels.Set{specs.LabelManagedBy: specs.ManagedBy})
	opts.DefaultTransform = cache.TransformStripManagedFields()
	opts.ByObject = map[client.Object]cache.ByObject{
		&corev1.Pod{}:         {Label: ours, Transform: Pod},
		&corev1.Secret{}:      {Label: ours, Transform: Secret},
		&corev1.ConfigMap{}:   {Label: ours, Transform: ConfigMap},
		&corev1.Service{}:     {Label: ours, Transform: Service},
		&batchv1.Job{}:        {Label: ours, Transform: Job},
		&appsv1.StatefulSet{}: {Label: ours, Transform: StatefulSet},
		// Only the operator's own: without the filter the informer would hold every policy
		// of the watched namespaces.
		&networkingv1.NetworkPolicy{}: {Label: ours, Transform: NetworkPolicy},
	}
	return opts
}

// readLabels are the label keys the operator reads or selects by on the objects it caches (its
// own, and those Kubernetes sets on the pods of its Jobs).
var readLabels = map[string]bool{
	specs.LabelRun: true, specs.LabelTarget: true, specs.LabelStep: true, specs.LabelComponent: true,
	specs.LabelManagedBy: true, specs.LabelName: true, specs.PoolLabel: true,
	v1.LabelSchedule: true, v1.LabelConfirmationOf: true, v1.LabelConfirms: true,
	"batch.kubernetes.io/job-name": true,
}

// maxOtherLabels bounds the other labels of the operator's domain kept besides readLabels (a
// label a newer operator reads; at most this many, by name).
const maxOtherLabels = 8

// maxFinalizers bounds the finalizers kept: the operator only names them in a message.
const maxFinalizers = 8

// keptLabels are the labels of in that the cache keeps: readLabels, and up to maxOtherLabels other
// mysqlbench.io/ labels.
func keptLabels(in map[string]string) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := map[string]string{}
	var other []string
	for k, v := range in {
		switch {
		case readLabels[k]:
			out[k] = v
		case strings.HasPrefix(k, v1.GroupVersion.Group+"/"):
			other = append(other, k)
		}
	}
	if len(other) > maxOtherLabels {
		sort.Strings(other)
		other = other[:maxOtherLabels]
	}
	for _, k := range other {
		out[k] = in[k]
	}
	return out
}

// trimMeta keeps of an object's metadata its identity, its kept labels, its controller
// reference (owned.Check and Owns read only that) and its first finalizers.
func trimMeta(m *metav1.ObjectMeta) {
	m.ManagedFields = nil
	m.Annotations = nil
	m.Labels = keptLabels(m.Labels)
	var refs []metav1.OwnerReference
	for _, r := range m.OwnerReferences {
		if r.Controller != nil && *r.Controller {
			refs = []metav1.OwnerReference{r}
			break
		}
	}
	m.OwnerReferences = refs
	if len(m.Finalizers) > maxFinalizers {
		m.Finalizers = m.Finalizers[:maxFinalizers:maxFinalizers]
	}
}

// Pod keeps what the operator reads of a pod: its node, the CPU limits of its containers
// (a step's client CPU), and its phase, conditions and container statuses (the server's state,
// a step's exit code and termination message, the image digest, restarts).
func Pod(in any) (any, error) {
	pod, ok := in.(*corev1.Pod)
	if !ok {
		return in, nil
	}
	trimMeta(&pod.ObjectMeta)
	var containers []corev1.Container
	for _, c := range pod.Spec.Containers {
		kept := corev1.Container{Name: c.Name}
		if q, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
			kept.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: q}
		}
		containers = append(containers, kept)
	}
	pod.Spec = corev1.PodSpec{NodeName: pod.Spec.NodeName, Containers: containers}
	statuses := make([]corev1.ContainerStatus, 0, len(pod.Status.ContainerStatuses))
	for _, cs := range pod.Status.ContainerStatuses {
		statuses = append(statuses, corev1.ContainerStatus{Name: cs.Name, State: cs.State, LastTerminationState: cs.LastTerminationState,
			Ready: cs.Ready, RestartCount: cs.RestartCount, Image: cs.Image, ImageID: cs.ImageID, Started: cs.Started})
	}
	pod.Status = corev1.PodStatus{Phase: pod.Status.Phase, Conditions: pod.Status.Conditions, ContainerStatuses: statuses,
		Reason: pod.Status.Reason, Message: pod.Status.Message}
	return pod, nil
}

// StatefulSet keeps of a server's StatefulSet what the queue and the engines read: its
// metadata, spec without volume claims, status, and its pod template's kept labels and node
// selector.
func StatefulSet(in any) (any, error) {
	if sts, ok := in.(*appsv1.StatefulSet); ok {
		trimMeta(&sts.ObjectMeta)
		tmpl := sts.Spec.Template
		sts.Spec.Template = corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: keptLabels(tmpl.Labels)},
			Spec:       corev1.PodSpec{NodeSelector: tmpl.Spec.NodeSelector},
		}
		sts.Spec.VolumeClaimTemplates = nil
	}
	return in, nil
}

// Secret keeps a Secret's metadata: the code that reads a Secret's content (the engines'
// checks, an external target's Secret, the redaction of failures) reads it from the API server.
func Secret(in any) (any, error) {
	if s, ok := in.(*corev1.Secret); ok {
		trimMeta(&s.ObjectMeta)
		s.Data, s.StringData = nil, nil
	}
	return in, nil
}

// ConfigMap keeps a ConfigMap's metadata: the results and the reporter are read and written
// through the API server.
func ConfigMap(in any) (any, error) {
	if cm, ok := in.(*corev1.ConfigMap); ok {
		trimMeta(&cm.ObjectMeta)
		cm.Data, cm.BinaryData = nil, nil
	}
	return in, nil
}

// Job keeps a Job's metadata, spec without its pod template, and status.
func Job(in any) (any, error) {
	if job, ok := in.(*batchv1.Job); ok {
		trimMeta(&job.ObjectMeta)
		job.Spec.Template = corev1.PodTemplateSpec{}
	}
	return in, nil
}

// Service and NetworkPolicy keep the metadata: the operator only checks that the
// objects exist and are the run's.
func Service(in any) (any, error) {
	if svc, ok := in.(*corev1.Service); ok {
		trimMeta(&svc.ObjectMeta)
		svc.Spec, svc.Status = corev1.ServiceSpec{}, corev1.ServiceStatus{}
	}
	return in, nil
}

func NetworkPolicy(in any) (any, error) {
	if np, ok := in.(*networkingv1.NetworkPolicy); ok {
		trimMeta(&np.ObjectMeta)
		np.Spec = networkingv1.NetworkPolicySpec{}
	}
	return in, nil
}
