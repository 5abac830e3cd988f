package cachetrim_test

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mysqlbench/mysqlbench-operator/internal/cachetrim"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// transforms are the manager's cache transforms (cachetrim.Options) by kind; a kind
// without one is kept whole, as the cache would.
func transforms() map[string]cache.TransformFunc {
	out := map[string]cache.TransformFunc{}
	for obj, by := range cachetrim.Options(ctrlcache.Options{}).ByObject {
		out[fmt.Sprintf("%T", obj)] = by.Transform
	}
	for _, kind := range []string{"*v1.Pod", "*v1.Secret", "*v1.ConfigMap", "*v1.Service", "*v1.NetworkPolicy"} {
		if out[kind] == nil {
			out[kind] = func(in any) (any, error) { return in, nil }
		}
	}
	return out
}

// Per labelled object: labels and annotations of about 1 MiB together (labels are at most 63
// bytes each, so many of them; an annotation may be large).
const (
	labelsPerObject  = 4000
	annotationBytes  = 640 << 10
	objectsPerKind   = 200
	allowedHeapBytes = 4 << 20
)

// fat is a labelled object of kind i%5 with about 1 MiB of labels and annotations, each string
// its own (as the informer decodes it), and some spec to go with it.
func fat(i int) client.Object {
	labels := map[string]string{specs.LabelManagedBy: specs.ManagedBy, specs.LabelRun: "r" + strconv.Itoa(i)}
	value := strings.Repeat("v", 63)
	for j := 0; j < labelsPerObject; j++ {
		prefix := "example.com/"
		if j%2 == 0 {
			prefix = "mysqlbench.io/" // the operator's domain is bounded too
		}
		labels[prefix+"k-"+strconv.Itoa(i)+"-"+strconv.Itoa(j)] = strings.Clone(value)
	}
	meta := metav1.ObjectMeta{Name: "fat-" + strconv.Itoa(i), Namespace: "tenant", Labels: labels,
		Annotations: map[string]string{"example.com/blob": strings.Repeat("a", annotationBytes)},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "u"},
			{APIVersion: "mysqlbench.io/v1alpha1", Kind: "BenchmarkRun", Name: "r", UID: "u2", Controller: ptr.To(true)}}}
	switch i % 5 {
	case 0:
		return &corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{"k": []byte(strings.Repeat("s", 64<<10))}}
	case 1:
		return &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"k": strings.Repeat("c", 64<<10)}}
	case 2:
		return &corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{
			Name: "c", Image: "i", Env: []corev1.EnvVar{{Name: "E", Value: strings.Repeat("e", 64<<10)}}}}}}
	case 3:
		return &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{ExternalIPs: []string{strings.Repeat("1", 64<<10)}}}
	default:
		return &networkingv1.NetworkPolicy{ObjectMeta: meta, Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"x": strings.Repeat("n", 64<<10)}}}}
	}
}

func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Anyone who may create a Pod, Secret, ConfigMap, Service or NetworkPolicy in a watched namespace
// can give it the operator's label, and the manager's cache then holds it. 1,000 such objects of
// about 1 MiB of labels and annotations each, passed through the cache's own transforms and kept
// as the informer keeps them, grow the heap by a few MiB at most: what the cache keeps is bounded
// by what the operator reads, not by what the objects carry.
func TestCacheHeapStaysBoundedByWhatTheOperatorReads(t *testing.T) {
	tr := transforms()
	kept := make([]any, 0, 5*objectsPerKind)
	base := heap()
	var carried int64
	for i := 0; i < 5*objectsPerKind; i++ {
		obj := fat(i)
		carried += int64(len(obj.GetAnnotations()["example.com/blob"])) + int64(len(obj.GetLabels()))*(63+30)
		out, err := tr[fmt.Sprintf("%T", obj)](obj)
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, out)
		if i%50 == 49 {
			if grown := int64(heap()) - int64(base); grown > allowedHeapBytes {
				t.Fatalf("after %d labelled objects the cache keeps %.1f MiB (of the %.0f MiB they carried): want at most %d MiB "+
					"for all 1,000", i+1, float64(grown)/(1<<20), float64(carried)/(1<<20), allowedHeapBytes>>20)
			}
		}
	}
	grown := int64(heap()) - int64(base)
	t.Logf("1,000 labelled objects carrying %.0f MiB of labels and annotations: the cache keeps %.2f MiB (%.0f bytes each)",
		float64(carried)/(1<<20), float64(grown)/(1<<20), float64(grown)/float64(len(kept)))
	if grown > allowedHeapBytes {
		t.Errorf("the cache keeps %.1f MiB, want at most %d MiB", float64(grown)/(1<<20), allowedHeapBytes>>20)
	}
	runtime.KeepAlive(kept)
}

// What the operator reads survives the trimming: a server pod's labels, node, statuses and CPU
// limit, and every object's identity and controller reference.
func TestTransformsKeepWhatTheOperatorReads(t *testing.T) {
	terminated := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "FATAL: x"}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid", ResourceVersion: "7",
			Labels: map[string]string{specs.LabelManagedBy: specs.ManagedBy, specs.LabelRun: "r", specs.LabelTarget: "t",
				specs.LabelComponent: "server", "batch.kubernetes.io/job-name": "j", "controller-revision-hash": "h"},
			Annotations:     map[string]string{"a": "b"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: "j", UID: "ju", Controller: ptr.To(true)}},
			Finalizers:      []string{"f"}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: specs.SysbenchContainer, Image: "img",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"),
				corev1.ResourceMemory: resource.MustParse("1Gi")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodFailed, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: specs.SysbenchContainer, State: terminated, RestartCount: 2,
				Image: "img", ImageID: "docker.io/img@sha256:abc"}}},
	}
	out, err := cachetrim.Pod(pod.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	if got.Name != "p" || got.UID != "uid" || got.ResourceVersion != "7" || len(got.Finalizers) != 1 || got.Annotations != nil {
		t.Errorf("identity %+v", got.ObjectMeta)
	}
	for _, k := range []string{specs.LabelManagedBy, specs.LabelRun, specs.LabelTarget, specs.LabelComponent, "batch.kubernetes.io/job-name"} {
		if got.Labels[k] != pod.Labels[k] {
			t.Errorf("label %s = %q, want %q", k, got.Labels[k], pod.Labels[k])
		}
	}
	if _, ok := got.Labels["controller-revision-hash"]; ok {
		t.Errorf("kept a label the operator does not read")
	}
	if metav1.GetControllerOf(got) == nil || got.Spec.NodeName != "node-1" || got.Status.Phase != corev1.PodFailed ||
		len(got.Status.Conditions) != 1 {
		t.Errorf("lost controller, node, phase or conditions: %+v", got)
	}
	cs := got.Status.ContainerStatuses
	if len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.Message != "FATAL: x" || cs[0].RestartCount != 2 ||
		cs[0].ImageID != "docker.io/img@sha256:abc" {
		t.Errorf("container statuses %+v", cs)
	}
	c := got.Spec.Containers
	if len(c) != 1 || c[0].Name != specs.SysbenchContainer || c[0].Resources.Limits.Cpu().String() != "2" || c[0].Image != "" ||
		len(c[0].Resources.Limits) != 1 {
		t.Errorf("containers %+v, want the name and CPU limit only", c)
	}
}
