package engine

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
	"github.com/mysqlbench/mysqlbench-operator/internal/owned"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// crashLoopLimit is how many times a server container may exit before the target fails: a
// server that exits three times in a row (a bad my.cnf, an image that is not a MySQL server)
// will not come up by waiting.
const crashLoopLimit = 3

// Builtin runs each target's server itself: a Secret with generated credentials, a ConfigMap
// with my.cnf, a headless Service and a one-pod StatefulSet.
type Builtin struct {
	// Client is the manager's cached client: the operator's own objects.
	Client client.Client
	// Reader reads from the API server directly. A create that finds its object exists
	// confirms through it: the cache may not have seen the operator's own earlier create, and
	// never holds objects without the operator's labels. Nil reads through Client.
	Reader client.Reader
	Scheme *runtime.Scheme
}

var _ Engine = (*Builtin)(nil)

// Provision creates the target's objects, each controlled by the run. Nothing is updated in
// place: the spec cannot change once the run started, and the credentials must stay as generated
// (the passwords generated for a Secret that exists already are dropped).
func (b *Builtin) Provision(ctx context.Context, run *v1.BenchmarkRun, t v1.Target, peers []specs.Peer) error {
	root, err1 := password()
	user, err2 := password()
	if err1 != nil || err2 != nil {
		return fmt.Errorf("generate passwords: %w", errors.Join(err1, err2))
	}
	objs, err := specs.BuiltinServerObjects(run, t, root, user, peers...)
	if err != nil {
		return &ConfigError{Message: err.Error()}
	}
	for _, obj := range objs {
		// Nobody changes them once created, the operator included: what the server and
		// sysbench read is what the operator wrote, or what it checked.
		switch o := obj.(type) {
		case *corev1.ConfigMap:
			o.Immutable = ptr.To(true)
		case *corev1.Secret:
			o.Immutable = ptr.To(true)
		}
		// Names are derived from the run and target names, so an object may exist that is not
		// the run's: never benchmark another run's server, never hand sysbench a planted Secret.
		_, created, err := owned.Ensure(ctx, b.objects(), run, obj)
		if err != nil {
			return ownership(obj, err)
		}
		if !created {
			if err := b.checkContent(ctx, t, obj); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkContent reads the object under want's name from the API server (the cache holds no
// ConfigMap data) and says whether it holds what the operator writes: the server's ConfigMap
// and its credentials Secret are executed and connected with, and a controller reference naming
// the run can be forged (see content.go). A difference is a *ConfigError that names the object.
func (b *Builtin) checkContent(ctx context.Context, t v1.Target, want client.Object) error {
	reader := b.Reader
	if reader == nil {
		reader = b.Client
	}
	key := client.ObjectKeyFromObject(want)
	switch w := want.(type) {
	case *corev1.ConfigMap:
		got := &corev1.ConfigMap{}
		if err := reader.Get(ctx, key, got); err != nil {
			return fmt.Errorf("get configmap %s: %w", key.Name, err)
		}
		if d := configMapDiffers(got, w); d != "" {
			return notTheOperators("ConfigMap "+key.String(), "the my.cnf of target "+t.Name+"'s server and the SQL it runs as root "+
				"on its first start", d)
		}
	case *corev1.Secret:
		got := &corev1.Secret{}
		if err := reader.Get(ctx, key, got); err != nil {
			return fmt.Errorf("get secret %s: %w", key.Name, err)
		}
		if d := secretDiffers(got, w, []string{sysbench.SecretKeyPassword, specs.SecretKeyRootPassword}, true); d != "" {
			return notTheOperators("Secret "+key.String(), "the credentials of target "+t.Name+"'s server and of its sysbench Jobs", d)
		}
	}
	return nil
}

func (b *Builtin) objects() owned.Objects {
	return owned.Objects{Client: b.Client, Reader: b.Reader, Scheme: b.Scheme}
}

// ownership turns what owned.Ensure says into what the controller acts on: an object of someone
// else under the name fails the target, an earlier run's object on its way out is waited for, an
// object the API server refuses for good fails the target with the server's message.
func ownership(obj client.Object, err error) error {
	if de := owned.AsDeleting(err); de != nil {
		return &WaitError{Message: de.Error(), After: de.After}
	}
	var fe *owned.ForeignError
	switch {
	case errors.As(err, &fe):
		return &ConfigError{Message: fe.Error()}
	case IsPermanentAPIError(err):
		return Rejected(obj, err)
	}
	return err
}

// Ready reads the server pod: Ready, or why not (unschedulable, image pull, crash loop). The pod
// counts only when the run's StatefulSet controls it: a pod planted under the name "<server>-0"
// before the StatefulSet made its own would otherwise pass for the server.
func (b *Builtin) Ready(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) (State, error) {
	name := specs.ServerName(run, t.Name)
	sts := &appsv1.StatefulSet{}
	if err := owned.Get(ctx, b.objects(), run, client.ObjectKey{Namespace: run.Namespace, Name: name}, sts); err != nil {
		if apierrors.IsNotFound(err) {
			return State{Reason: v1.ReasonStarting, Message: "waiting for StatefulSet " + name + " to be created"}, nil
		}
		if err := ownership(sts, err); IsConfigError(err) {
			return State{Failed: true, Reason: v1.ReasonConfig, Message: err.Error()}, nil
		} else if we := AsWait(err); we != nil {
			return State{Reason: v1.ReasonStarting, Message: we.Message, RecheckAfter: we.After}, nil
		}
		return State{}, fmt.Errorf("get statefulset %s: %w", name, err)
	}
	pod := &corev1.Pod{}
	err := b.Client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name + "-0"}, pod)
	if apierrors.IsNotFound(err) {
		return State{Reason: v1.ReasonStarting, Message: "waiting for StatefulSet " + name + " to create its pod"}, nil
	}
	if err != nil {
		return State{}, fmt.Errorf("get server pod: %w", err)
	}
	if !metav1.IsControlledBy(pod, sts) {
		return State{Failed: true, Reason: v1.ReasonConfig, Message: fmt.Sprintf("Pod %s/%s is not the pod of the run's "+
			"StatefulSet %s: delete it, or rename the run or the target so their objects get other names", pod.Namespace, pod.Name, name)}, nil
	}
	return PodState(pod), nil
}

// PodState reads a server pod's conditions and container statuses.
func PodState(pod *corev1.Pod) State {
	s := podState(pod)
	s.Instance = Instance(pod)
	s.NodeName = pod.Spec.NodeName
	if len(pod.Status.ContainerStatuses) > 0 {
		s.ImageDigest = ImageDigest(pod.Status.ContainerStatuses[0].ImageID)
	}
	return s
}

// ImageDigest is the digest of a kubelet's imageID ("docker.io/library/mariadb@sha256:...",
// "docker-pullable://...@sha256:..." or a bare "sha256:..."); "" when it names none. A bare
// sha256 is the image's config digest under some runtimes, not a manifest digest a registry
// serves, so it is not taken.
func ImageDigest(imageID string) string {
	i := strings.LastIndex(imageID, "@")
	if i < 0 {
		return ""
	}
	d := imageID[i+1:]
	if !digestPattern.MatchString(d) {
		return ""
	}
	return d
}

var digestPattern = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)

// PinnedImage is image pinned to digest: the tag kept for the reader, the digest deciding what
// is pulled ("mariadb:10.11@sha256:..."). An image already pinned, or an unknown digest, is
// returned as it is.
func PinnedImage(image, digest string) string {
	if digest == "" || strings.Contains(image, "@") {
		return image
	}
	return image + "@" + digest
}

// Instance identifies one run of a pod's server: the pod's UID (a deleted pod's replacement has
// another) and its first container's restart count.
func Instance(pod *corev1.Pod) string {
	restarts := int32(0)
	if len(pod.Status.ContainerStatuses) > 0 {
		restarts = pod.Status.ContainerStatuses[0].RestartCount
	}
	return fmt.Sprintf("%s/%d", pod.UID, restarts)
}

func podState(pod *corev1.Pod) State {
	if pod.DeletionTimestamp != nil {
		// Its server is shutting down: a probe now would prove an instance about to be gone.
		return State{Reason: v1.ReasonStarting, Message: "server pod " + pod.Name + " is being deleted; its StatefulSet starts a new one"}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return State{Reason: v1.ReasonUnschedulable, Message: "pod " + pod.Name + " cannot be scheduled: " + c.Message}
		}
	}
	ready := false
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	var exit *ServerExit
	for _, cs := range pod.Status.ContainerStatuses {
		first, last := exits(cs)
		if ready {
			exit = first
			continue
		}
		if last != nil && last.Ordinal > crashLoopLimit {
			msg := fmt.Sprintf("server container exited %s; ", times(last.Ordinal))
			if first.Ordinal == last.Ordinal || first.Output == last.Output {
				msg += "the last time with code " + fmt.Sprint(last.ExitCode) + ": " + last.Output
			} else {
				msg += fmt.Sprintf("exit %d (code %d): %s; the last one (code %d): %s",
					first.Ordinal, first.ExitCode, first.Output, last.ExitCode, last.Output)
			}
			return State{Failed: true, Reason: v1.ReasonCrashing, Message: msg, Exit: first}
		}
		if w := cs.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImagePull", "ImagePullBackOff", "InvalidImageName":
				// A registry's "not found" or "denied" does not heal by waiting, and the spec
				// cannot change: fail now instead of holding the node until the timeout.
				hopeless := w.Reason == "InvalidImageName" || PullCannotHeal(w.Message)
				return State{Reason: v1.ReasonImagePull, Failed: hopeless,
					Message: fmt.Sprintf("cannot pull image %s: %s", cs.Image, w.Message)}
			case "CreateContainerConfigError", "CreateContainerError":
				return State{Reason: v1.ReasonConfig, Message: w.Reason + ": " + w.Message}
			}
		}
		if first != nil {
			return State{Reason: v1.ReasonCrashing, Exit: first, Message: fmt.Sprintf(
				"server container exited %s, the last time with code %d: %s", times(last.Ordinal), last.ExitCode, last.Output)}
		}
	}
	if ready {
		return State{Ready: true, Exit: exit}
	}
	return State{Reason: v1.ReasonStarting, Message: "server pod " + pod.Name + " is starting (" + string(pod.Status.Phase) + ")"}
}

// PullCannotHeal says whether a kubelet's image pull error is one that retrying cannot fix: the
// registry answered that the image or tag does not exist or that access is denied, or the
// reference is malformed. Network errors (timeouts, refused connections, DNS, rate limits) may
// heal and are waited out.
func PullCannotHeal(message string) bool {
	m := strings.ToLower(message)
	for _, s := range []string{"not found", "manifest unknown", "name unknown", "repository does not exist",
		"invalid reference format", "pull access denied", "401 unauthorized", "403 forbidden", "denied:",
		"no match for platform"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

func times(n int32) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// exits returns the earliest and the latest exit of a container that its status shows (nil when
// it never exited). The kubelet keeps two: the current state (terminated, or waiting before a
// restart after the last termination) and the last termination before it. RestartCount counts
// the instances started after the first, so:
//   - running or terminated: the last termination before it is exit RestartCount,
//     a terminated current state exit RestartCount+1;
//   - waiting (back-off before the next restart): the last termination is exit RestartCount+1.
func exits(cs corev1.ContainerStatus) (first, last *ServerExit) {
	exit := func(t *corev1.ContainerStateTerminated, ordinal int32) *ServerExit {
		return &ServerExit{Ordinal: max(ordinal, 1), ExitCode: t.ExitCode, Output: serverOutput(t.Message)}
	}
	if t := cs.LastTerminationState.Terminated; t != nil {
		ordinal := cs.RestartCount
		if cs.State.Waiting != nil {
			ordinal++
		}
		first = exit(t, ordinal)
		last = first
	}
	if t := cs.State.Terminated; t != nil {
		last = exit(t, cs.RestartCount+1)
		if first == nil || first.Ordinal >= last.Ordinal {
			first = last
		}
	}
	return first, last
}

var _ Replacer = (*Builtin)(nil)

// Replace deletes the server pod of the given instance; the run's StatefulSet creates a new
// one. The UID precondition makes a late repeat a no-op: it never deletes the new pod.
func (b *Builtin) Replace(ctx context.Context, run *v1.BenchmarkRun, t v1.Target, instance string) error {
	name := specs.ServerName(run, t.Name) + "-0"
	// From the cache (pods are watched, not read one by one): a stale copy is harmless, the
	// UID precondition below decides.
	pod := &corev1.Pod{}
	err := b.Client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, pod)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get server pod %s: %w", name, err)
	}
	if Instance(pod) != instance || pod.DeletionTimestamp != nil {
		return nil
	}
	uid := pod.UID
	err = b.Client.Delete(ctx, pod, client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete server pod %s: %w", name, err)
	}
	return nil
}

// ConnectionSecret is the Secret Provision generated.
func (b *Builtin) ConnectionSecret(run *v1.BenchmarkRun, t v1.Target) string {
	return specs.ConnectionSecretName(run, t.Name)
}

// Teardown deletes the StatefulSet (its PVC goes with it), Service, ConfigMap, Secret and NetworkPolicy: only
// those this run controls, since another run's objects can carry the same names.
func (b *Builtin) Teardown(ctx context.Context, run *v1.BenchmarkRun, t v1.Target) error {
	name := specs.ServerName(run, t.Name)
	objs := []client.Object{&appsv1.StatefulSet{}, &corev1.Service{}, &corev1.ConfigMap{}, &corev1.Secret{}, &networkingv1.NetworkPolicy{}}
	names := []string{name, name, name, specs.ConnectionSecretName(run, t.Name), name}
	// Read through the API server: the cache may not show an object created moments ago, which
	// would then outlive its run.
	reader := b.Reader
	if reader == nil {
		reader = b.Client
	}
	for i, obj := range objs {
		err := reader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: names[i]}, obj)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("get %T %s: %w", obj, names[i], err)
		}
		if !metav1.IsControlledBy(obj, run) {
			continue
		}
		uid := obj.GetUID()
		err = b.Client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground),
			client.Preconditions{UID: &uid})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %T %s: %w", obj, names[i], err)
		}
	}
	return nil
}

// password returns 24 random alphanumeric characters: no quoting issues in env vars, shells or
// my.cnf, and ~143 bits of entropy.
func password() (string, error) {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b strings.Builder
	for range 24 {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return "", err
		}
		b.WriteByte(alphabet[n.Int64()])
	}
	return b.String(), nil
}

// serverOutput picks what explains a server's exit from its log tail: the lines the server marked
// as errors ("[ERROR] ... unknown variable ..."), which an entrypoint may have buried under
// the output of `mysqld --verbose --help`, else the last lines. An error line loses the timestamp
// and thread id before its "[ERROR]": they differ on every restart, and without them the same
// failure reads the same each time, so repeated exits can be recognised and quoted once.
func serverOutput(tail string) string {
	var errs []string
	seen := map[string]bool{}
	for _, line := range strings.Split(tail, "\n") {
		i := strings.Index(line, "[ERROR]")
		if i < 0 && !strings.Contains(line, "unknown variable") && !strings.Contains(line, "unknown option") {
			continue
		}
		if i >= 0 {
			line = line[i:]
		}
		line = strings.TrimSpace(line)
		if !seen[line] {
			seen[line] = true
			errs = append(errs, line)
		}
	}
	if len(errs) > 0 {
		if len(errs) > 4 {
			errs = errs[:4]
		}
		return lastLines(strings.Join(errs, "\n"), 4)
	}
	return lastLines(tail, 6)
}

// lastLines keeps the end of a log tail for a condition message.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := bounded.Tail(strings.Join(lines, " | "), 603)
	if out == "" {
		return "(none)"
	}
	return out
}
