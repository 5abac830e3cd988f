package specs

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

const (
	// SysbenchContainer is the name of the container of every sysbench Job.
	SysbenchContainer = "sysbench"
	// sysbenchUID runs sysbench as the project image's non-root user; other sysbench images
	// need nothing from their own users (the reporter is mounted, results go to stdout and the
	// termination message).
	sysbenchUID = 10001

	reporterVolume = "reporter"
	scriptVolume   = "script"
)

// DeadlineMargin is added to a run step's duration for its Job's activeDeadlineSeconds: pod
// start, connecting all threads and the final report. Prepare and cleanup get PrepareDeadline.
const (
	DeadlineMargin  = 5 * time.Minute
	PrepareDeadline = 6 * time.Hour
)

// ReporterConfigMap holds the Lua reporter every sysbench Job of a run mounts.
func ReporterConfigMap(run *v1.BenchmarkRun) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      ReporterConfigMapName(run),
			Namespace: run.Namespace,
			Labels:    RunLabels(run),
		},
		Data: map[string]string{sysbench.ReporterConfigMapKey: sysbench.ReporterScript()},
	}
}

// SysbenchJob is the Job of one attempt of one step: it runs inv in image on the client pool,
// never retries by itself (the operator decides about retries, with the classified reason), and
// is killed after deadline. The pod meets the restricted Pod Security Standard and reads the
// password only as a file (inv's volumes).
func SysbenchJob(run *v1.BenchmarkRun, target, step string, attempt Attempt, inv load.Invocation,
	image string, deadline time.Duration) *batchv1.Job {
	labels := ClientPodLabels(run, target, step)
	container := corev1.Container{
		Name:    SysbenchContainer,
		Image:   image,
		Command: inv.Command,
		Args:    inv.Args,
		Env:     inv.Env,
		VolumeMounts: append([]corev1.VolumeMount{{
			Name: reporterVolume, MountPath: sysbench.ReporterMountPath, ReadOnly: true,
		}}, inv.VolumeMounts...),
		// On success the reporter writes the final result here; a failed step writes nothing and
		// the kubelet keeps the log tail with sysbench's FATAL lines instead.
		TerminationMessagePath:   sysbench.TerminationMessagePath,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			RunAsUser:                ptr.To[int64](sysbenchUID),
			RunAsGroup:               ptr.To[int64](sysbenchUID),
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}
	if run.Spec.ClientResources != nil {
		container.Resources = *run.Spec.ClientResources
	}
	volumes := append([]corev1.Volume{{
		Name: reporterVolume,
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: ReporterConfigMapName(run)},
		}},
	}}, inv.Volumes...)
	if cs := run.Spec.Workload.CustomScript; cs != nil {
		volumes = append(volumes, corev1.Volume{
			Name: scriptVolume,
			VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: cs.Name},
				Items:                []corev1.KeyToPath{{Key: cs.Key, Path: cs.Key}},
			}},
		})
		container.VolumeMounts = append(container.VolumeMounts, corev1.VolumeMount{
			Name: scriptVolume, MountPath: sysbench.CustomScriptMountPath, ReadOnly: true,
		})
	}
	pod := corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyNever,
		Containers:                    []corev1.Container{container},
		Volumes:                       volumes,
		TerminationGracePeriodSeconds: ptr.To[int64](10),
		AutomountServiceAccountToken:  ptr.To(false),
		EnableServiceLinks:            ptr.To(false),
		// The kubelet makes the password file (mode 0440) group-owned by fsGroup, which is
		// sysbench's own group: nobody else in the container may read it.
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			RunAsUser:      ptr.To[int64](sysbenchUID),
			RunAsGroup:     ptr.To[int64](sysbenchUID),
			FSGroup:        ptr.To[int64](sysbenchUID),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}
	ClientPlacement(run, target).Apply(&pod)

	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:      JobName(run, target, step, attempt),
			Namespace: run.Namespace,
			Labels:    labels,
		},
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To[int32](0),
			ActiveDeadlineSeconds: ptr.To(int64(deadline / time.Second)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       pod,
			},
		},
	}
}

// StepDeadline is the activeDeadlineSeconds of a sysbench Job.
func StepDeadline(phase load.Phase, duration time.Duration) time.Duration {
	switch phase {
	case load.PhaseRun, load.PhaseWarmup:
		return duration + DeadlineMargin
	case load.PhaseProbe:
		return 2 * time.Minute
	default:
		return PrepareDeadline
	}
}
