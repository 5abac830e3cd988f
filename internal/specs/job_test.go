package specs

import (
	"reflect"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// runJob builds the Job of ladder step 3 (8 threads) of the representative run.
// Passwords an engine generated for the target's connection Secret: a Job names the Secret's keys
// and never holds their values.
const (
	testPassword     = "Pw4SysbenchUserXYZ123abc"
	testRootPassword = "RootPwQq7Hh2Kk9Zz0Ww5Ee3"
)

func runJob(t *testing.T, run *v1.BenchmarkRun) (*batchv1.Job, load.Invocation) {
	t.Helper()
	step := load.Step{Phase: load.PhaseRun, Threads: 8, Duration: 300 * time.Second}
	inv, err := sysbench.Build(run.Spec.Workload, ConnectionSecretName(run, "mysql57"), step)
	if err != nil {
		t.Fatal(err)
	}
	deadline := StepDeadline(step.Phase, step.Duration)
	return SysbenchJob(run, "mysql57", LadderStep(2, 1), Attempt{Failed: 1}, inv, "ghcr.io/mysqlbench/sysbench:1.0.20", deadline), inv
}

func TestSysbenchJob(t *testing.T) {
	run := newRun()
	job, inv := runJob(t, run)

	if job.Name != JobName(run, "mysql57", "s03", Attempt{Failed: 1}) || job.Namespace != "bench" {
		t.Errorf("Job %s/%s", job.Namespace, job.Name)
	}
	spec := job.Spec
	if spec.BackoffLimit == nil || *spec.BackoffLimit != 0 {
		t.Errorf("backoffLimit %v, want 0: the operator decides about retries", spec.BackoffLimit)
	}
	if spec.ActiveDeadlineSeconds == nil || *spec.ActiveDeadlineSeconds != 600 {
		t.Errorf("activeDeadlineSeconds %v, want 600 (300s step + 5m margin)", spec.ActiveDeadlineSeconds)
	}
	wantLabels := map[string]string{
		"app.kubernetes.io/managed-by": "mysqlbench-operator",
		"app.kubernetes.io/name":       "mysqlbench",
		"app.kubernetes.io/component":  "sysbench",
		"mysqlbench.io/run":            "pk-lookup",
		"mysqlbench.io/target":         "mysql57",
		"mysqlbench.io/step":           "s03",
	}
	if !reflect.DeepEqual(job.Labels, wantLabels) {
		t.Errorf("Job labels %v, want %v", job.Labels, wantLabels)
	}
	if !reflect.DeepEqual(spec.Template.Labels, wantLabels) {
		t.Errorf("pod labels %v, want %v", spec.Template.Labels, wantLabels)
	}
	if spec.Selector != nil || spec.ManualSelector != nil {
		t.Error("the Job must let the API server generate its selector")
	}

	pod := spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q, want Never", pod.RestartPolicy)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("sysbench needs no API token: automountServiceAccountToken must be false")
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Name != SysbenchContainer || c.Image != "ghcr.io/mysqlbench/sysbench:1.0.20" {
		t.Errorf("container %s image %s", c.Name, c.Image)
	}
	if !reflect.DeepEqual(c.Command, inv.Command) || !reflect.DeepEqual(c.Args, inv.Args) || !reflect.DeepEqual(c.Env, inv.Env) {
		t.Error("the container does not run the invocation as built")
	}
	if c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError || c.TerminationMessagePath != "/dev/termination-log" {
		t.Errorf("termination message %q at %q, want FallbackToLogsOnError at /dev/termination-log",
			c.TerminationMessagePolicy, c.TerminationMessagePath)
	}

	t.Run("volumes", func(t *testing.T) {
		want := append([]corev1.VolumeMount{{Name: "reporter", MountPath: "/opt/mysqlbench", ReadOnly: true}}, inv.VolumeMounts...)
		if !reflect.DeepEqual(c.VolumeMounts, want) {
			t.Errorf("mounts %v, want the reporter's and the invocation's %v", c.VolumeMounts, want)
		}
		if len(pod.Volumes) != 1+len(inv.Volumes) || pod.Volumes[0].ConfigMap == nil || pod.Volumes[0].ConfigMap.Name != ReporterConfigMapName(run) ||
			!reflect.DeepEqual(pod.Volumes[1:], inv.Volumes) {
			t.Errorf("volumes %s, want the reporter ConfigMap %s and the invocation's", jsonOf(t, pod.Volumes), ReporterConfigMapName(run))
		}
		// The invocation runs the reporter from where it is mounted.
		if c.Args[0] != "/opt/mysqlbench/"+sysbench.ReporterConfigMapKey {
			t.Errorf("first arg %q is not the mounted reporter", c.Args[0])
		}
		// The password file is readable by sysbench's user through the pod's fsGroup only.
		psc := pod.SecurityContext
		if psc == nil || psc.FSGroup == nil || c.SecurityContext.RunAsGroup == nil || *psc.FSGroup != *c.SecurityContext.RunAsGroup {
			t.Errorf("pod security context %+v: fsGroup must be sysbench's group %v", psc, c.SecurityContext.RunAsGroup)
		}
		var secret *corev1.SecretVolumeSource
		for _, v := range pod.Volumes {
			if v.Secret != nil {
				if secret != nil {
					t.Errorf("two Secret volumes")
				}
				secret = v.Secret
			}
		}
		if secret == nil || secret.SecretName != ConnectionSecretName(run, "mysql57") || len(secret.Items) != 1 ||
			secret.Items[0].Key != sysbench.SecretKeyPassword || secret.DefaultMode == nil || *secret.DefaultMode&0o007 != 0 {
			t.Errorf("Secret volume %+v, want the connection Secret's password key alone, closed to others", secret)
		}
	})

	t.Run("security context", func(t *testing.T) {
		sc := c.SecurityContext
		if sc == nil {
			t.Fatal("no security context")
		}
		if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
			t.Errorf("runAsNonRoot %v runAsUser %v: sysbench must not run as root", sc.RunAsNonRoot, sc.RunAsUser)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Error("allowPrivilegeEscalation must be false")
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Error("readOnlyRootFilesystem must be true")
		}
		if sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
			t.Errorf("capabilities %v, want all dropped", sc.Capabilities)
		}
		if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("seccomp %v, want RuntimeDefault", sc.SeccompProfile)
		}
	})

	t.Run("client resources and placement", func(t *testing.T) {
		if !reflect.DeepEqual(c.Resources, *run.Spec.ClientResources) {
			t.Errorf("resources %v, want %v", c.Resources, *run.Spec.ClientResources)
		}
		var want corev1.PodSpec
		ClientPlacement(run, "mysql57").Apply(&want)
		if !reflect.DeepEqual(pod.NodeSelector, want.NodeSelector) || !reflect.DeepEqual(pod.Tolerations, want.Tolerations) ||
			!reflect.DeepEqual(pod.Affinity, want.Affinity) {
			t.Errorf("placement %s, want %s", jsonOf(t, pod), jsonOf(t, want))
		}
		noRes := run.DeepCopy()
		noRes.Spec.ClientResources = nil
		job, _ := runJob(t, noRes)
		if r := job.Spec.Template.Spec.Containers[0].Resources; !reflect.DeepEqual(r, corev1.ResourceRequirements{}) {
			t.Errorf("resources without clientResources %v, want none", r)
		}
	})

	t.Run("no credentials", func(t *testing.T) {
		js := jsonOf(t, job)
		for _, pw := range []string{testPassword, testRootPassword} {
			if strings.Contains(js, pw) {
				t.Errorf("the Job contains a password")
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Key != sysbench.SecretKeyHost &&
				e.ValueFrom.SecretKeyRef.Key != sysbench.SecretKeyPort && e.ValueFrom.SecretKeyRef.Key != sysbench.SecretKeyUser &&
				e.ValueFrom.SecretKeyRef.Key != sysbench.SecretKeyDatabase {
				t.Errorf("env %s reads the Secret's %s key: only host, port, user and database may be env", e.Name, e.ValueFrom.SecretKeyRef.Key)
			}
		}
	})
}

func TestSysbenchJobCustomScript(t *testing.T) {
	run := newRun()
	run.Spec.Workload.Script = ""
	run.Spec.Workload.CustomScript = &v1.ConfigMapKeySelector{Name: "my-scripts", Key: "pk_lookup.lua"}
	job, inv := runJob(t, run)
	pod := job.Spec.Template.Spec
	var script *corev1.Volume
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == "script" {
			script = &pod.Volumes[i]
		}
	}
	if script == nil || script.ConfigMap == nil {
		t.Fatalf("no script volume: %s", jsonOf(t, pod.Volumes))
	}
	if script.ConfigMap.Name != "my-scripts" {
		t.Errorf("script volume reads ConfigMap %q, want my-scripts", script.ConfigMap.Name)
	}
	wantItems := []corev1.KeyToPath{{Key: "pk_lookup.lua", Path: "pk_lookup.lua"}}
	if !reflect.DeepEqual(script.ConfigMap.Items, wantItems) {
		t.Errorf("items %v, want only the selected key %v", script.ConfigMap.Items, wantItems)
	}
	wantMounts := append(append([]corev1.VolumeMount{{Name: "reporter", MountPath: "/opt/mysqlbench", ReadOnly: true}},
		inv.VolumeMounts...), corev1.VolumeMount{Name: "script", MountPath: "/opt/mysqlbench/script", ReadOnly: true})
	if got := pod.Containers[0].VolumeMounts; !reflect.DeepEqual(got, wantMounts) {
		t.Errorf("mounts %v, want %v", got, wantMounts)
	}
	// The invocation points the reporter at the mounted file.
	var scriptEnv string
	for _, e := range inv.Env {
		if e.Name == sysbench.EnvScript {
			scriptEnv = e.Value
		}
	}
	if scriptEnv != "/opt/mysqlbench/script/pk_lookup.lua" {
		t.Errorf("%s = %q, want the mounted script", sysbench.EnvScript, scriptEnv)
	}
	// The user's selector is not aliased into the Job.
	script.ConfigMap.Name = "changed"
	if run.Spec.Workload.CustomScript.Name != "my-scripts" {
		t.Error("the Job's volume shares the run's ConfigMap reference")
	}
}

func TestStepDeadline(t *testing.T) {
	tests := []struct {
		phase    load.Phase
		duration time.Duration
		want     time.Duration
	}{
		{load.PhaseRun, 300 * time.Second, 10 * time.Minute},
		{load.PhaseRun, time.Second, 5*time.Minute + time.Second},
		{load.PhaseWarmup, time.Hour, time.Hour + 5*time.Minute},
		{load.PhaseProbe, time.Hour, 2 * time.Minute},
		{load.PhasePrepare, 0, 6 * time.Hour},
		{load.PhaseCleanup, time.Minute, 6 * time.Hour},
	}
	for _, tc := range tests {
		if got := StepDeadline(tc.phase, tc.duration); got != tc.want {
			t.Errorf("StepDeadline(%s, %s) = %s, want %s", tc.phase, tc.duration, got, tc.want)
		}
	}
	// activeDeadlineSeconds is the deadline in whole seconds.
	run := newRun()
	for _, d := range []time.Duration{2 * time.Minute, 6 * time.Hour, 5*time.Minute + time.Second} {
		job := SysbenchJob(run, "mysql57", "probe", Attempt{}, load.Invocation{}, "img", d)
		if got := *job.Spec.ActiveDeadlineSeconds; got != int64(d/time.Second) {
			t.Errorf("deadline %s: activeDeadlineSeconds %d", d, got)
		}
	}
}

func TestReporterConfigMap(t *testing.T) {
	run := newRun()
	cm := ReporterConfigMap(run)
	if cm.Name != ReporterConfigMapName(run) || cm.Namespace != "bench" {
		t.Errorf("ConfigMap %s/%s", cm.Namespace, cm.Name)
	}
	want := map[string]string{"reporter.lua": sysbench.ReporterScript()}
	if !reflect.DeepEqual(cm.Data, want) {
		t.Errorf("data keys %v, want only reporter.lua with sysbench.ReporterScript()", len(cm.Data))
	}
	if sysbench.ReporterScript() == "" {
		t.Error("the embedded reporter is empty")
	}
	if !reflect.DeepEqual(cm.Labels, RunLabels(run)) {
		t.Errorf("labels %v, want the run's", cm.Labels)
	}
	// Every Job of the run mounts this ConfigMap.
	job, _ := runJob(t, run)
	if got := job.Spec.Template.Spec.Volumes[0].ConfigMap.Name; got != cm.Name {
		t.Errorf("the Job mounts %q, the reporter ConfigMap is %q", got, cm.Name)
	}
}

func TestSysbenchJobGolden(t *testing.T) {
	run := newRun()
	run.Spec.Workload.ExtraArgs = []string{"--rand-type=uniform"}
	job, _ := runJob(t, run)
	golden(t, "job-run.yaml", job)

	// The same-host variant: no anti-affinity, any node, and the probe's short deadline.
	run.Spec.Placement.Database.Exclusive = ptr.To(false)
	run.Spec.Placement.Client.NodeSelector = map[string]string{}
	run.Spec.Placement.Client.Tolerations = []corev1.Toleration{}
	inv, err := sysbench.Build(run.Spec.Workload, ConnectionSecretName(run, "mysql57"), load.Step{Phase: load.PhaseProbe})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "job-probe-same-host.yaml",
		SysbenchJob(run, "mysql57", "probe", Attempt{}, inv, "ghcr.io/mysqlbench/sysbench:1.0.20", StepDeadline(load.PhaseProbe, 0)))
}
