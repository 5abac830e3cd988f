package server

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
)

// crashLoopLimit is how many times a server container may exit before the target fails: a
// server that exits three times in a row (a bad my.cnf, an image that is not a MySQL server)
// will not come up by waiting.
const crashLoopLimit = 3

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
	var exit *Exit
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
func exits(cs corev1.ContainerStatus) (first, last *Exit) {
	exit := func(t *corev1.ContainerStateTerminated, ordinal int32) *Exit {
		return &Exit{Ordinal: max(ordinal, 1), ExitCode: t.ExitCode, Output: serverOutput(t.Message)}
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
