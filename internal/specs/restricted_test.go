package specs

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// restrictedViolations checks a pod template against the Pod Security Standard "restricted"
// (https://kubernetes.io/docs/concepts/security/pod-security-standards/, the policy the
// pod-security admission enforces at version latest as of Kubernetes 1.33), which includes
// "baseline". It returns one line per violation, empty when the pod is admitted.
func restrictedViolations(tmpl corev1.PodTemplateSpec) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	pod := tmpl.Spec
	psc := pod.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}

	// Baseline: host namespaces, HostProcess, hostPath volumes, sysctls, SELinux, AppArmor.
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		bad("host namespaces: hostNetwork %v, hostPID %v, hostIPC %v", pod.HostNetwork, pod.HostPID, pod.HostIPC)
	}
	if w := psc.WindowsOptions; w != nil && w.HostProcess != nil && *w.HostProcess {
		bad("pod windowsOptions.hostProcess")
	}
	safeSysctls := []string{"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
		"net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
		"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}
	for _, s := range psc.Sysctls {
		if !slices.Contains(safeSysctls, s.Name) {
			bad("sysctl %s", s.Name)
		}
	}
	checkSELinux := func(where string, o *corev1.SELinuxOptions) {
		if o == nil {
			return
		}
		if !slices.Contains([]string{"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}, o.Type) {
			bad("%s seLinuxOptions.type %q", where, o.Type)
		}
		if o.User != "" || o.Role != "" {
			bad("%s seLinuxOptions user/role set", where)
		}
	}
	checkSELinux("pod", psc.SELinuxOptions)
	checkAppArmor := func(where string, p *corev1.AppArmorProfile) {
		if p != nil && p.Type == corev1.AppArmorProfileTypeUnconfined {
			bad("%s appArmorProfile Unconfined", where)
		}
	}
	checkAppArmor("pod", psc.AppArmorProfile)
	for k, v := range tmpl.Annotations {
		if strings.HasPrefix(k, "container.apparmor.security.beta.kubernetes.io/") && v != "runtime/default" && !strings.HasPrefix(v, "localhost/") {
			bad("annotation %s=%s", k, v)
		}
	}

	// Restricted: volume types.
	for _, v := range pod.Volumes {
		s := v.VolumeSource
		if s.ConfigMap == nil && s.CSI == nil && s.DownwardAPI == nil && s.EmptyDir == nil && s.Ephemeral == nil &&
			s.PersistentVolumeClaim == nil && s.Projected == nil && s.Secret == nil {
			bad("volume %s: type not allowed (hostPath and the other in-tree types are not)", v.Name)
		}
	}

	// Seccomp: RuntimeDefault or Localhost on the pod or on every container; never Unconfined.
	seccompOK := func(p *corev1.SeccompProfile) bool {
		return p != nil && (p.Type == corev1.SeccompProfileTypeRuntimeDefault || p.Type == corev1.SeccompProfileTypeLocalhost)
	}
	if p := psc.SeccompProfile; p != nil && !seccompOK(p) {
		bad("pod seccompProfile %s", p.Type)
	}

	var containers []corev1.Container
	containers = append(containers, pod.InitContainers...)
	containers = append(containers, pod.Containers...)
	for _, e := range pod.EphemeralContainers {
		containers = append(containers, corev1.Container(e.EphemeralContainerCommon))
	}
	if len(containers) == 0 {
		bad("no containers")
	}
	for _, c := range containers {
		where := "container " + c.Name
		sc := c.SecurityContext
		if sc == nil {
			sc = &corev1.SecurityContext{}
		}
		if sc.Privileged != nil && *sc.Privileged {
			bad("%s privileged", where)
		}
		if w := sc.WindowsOptions; w != nil && w.HostProcess != nil && *w.HostProcess {
			bad("%s windowsOptions.hostProcess", where)
		}
		for _, p := range c.Ports {
			if p.HostPort != 0 {
				bad("%s hostPort %d", where, p.HostPort)
			}
		}
		if sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount {
			bad("%s procMount %s", where, *sc.ProcMount)
		}
		checkSELinux(where, sc.SELinuxOptions)
		checkAppArmor(where, sc.AppArmorProfile)
		// allowPrivilegeEscalation must be false, explicitly.
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			bad("%s allowPrivilegeEscalation is not false", where)
		}
		// runAsNonRoot true on the container or the pod, and false on neither.
		if sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot {
			bad("%s runAsNonRoot false", where)
		} else if sc.RunAsNonRoot == nil && (psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot) {
			bad("%s runAsNonRoot unset on container and pod", where)
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			bad("%s runAsUser 0", where)
		}
		if sc.SeccompProfile != nil && !seccompOK(sc.SeccompProfile) {
			bad("%s seccompProfile %s", where, sc.SeccompProfile.Type)
		} else if sc.SeccompProfile == nil && !seccompOK(psc.SeccompProfile) {
			bad("%s seccompProfile unset on container and pod", where)
		}
		// Capabilities: drop ALL, add at most NET_BIND_SERVICE.
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			bad("%s does not drop ALL capabilities", where)
		}
		if sc.Capabilities != nil {
			for _, a := range sc.Capabilities.Add {
				if a != "NET_BIND_SERVICE" {
					bad("%s adds capability %s", where, a)
				}
			}
		}
	}
	if psc.RunAsUser != nil && *psc.RunAsUser == 0 {
		bad("pod runAsUser 0")
	}
	return out
}

// podTemplates are every pod template the operator creates: the server of a builtin target with
// and without spec.storage, and the sysbench Jobs of every phase, with a stock and a custom script.
func podTemplates(t *testing.T) map[string]corev1.PodTemplateSpec {
	t.Helper()
	out := map[string]corev1.PodTemplateSpec{}
	run := newRun()
	out["server with storage"] = ServerStatefulSet(run, run.Spec.Targets[0]).Spec.Template
	noStorage := run.DeepCopy()
	noStorage.Spec.Storage = nil
	out["server on emptyDir"] = ServerStatefulSet(noStorage, noStorage.Spec.Targets[0]).Spec.Template
	custom := run.DeepCopy()
	custom.Spec.Workload.Script = ""
	custom.Spec.Workload.CustomScript = &v1.ConfigMapKeySelector{Name: "s", Key: "s.lua"}
	for _, r := range []*v1.BenchmarkRun{run, custom} {
		for _, step := range []load.Step{
			{Phase: load.PhaseProbe}, {Phase: load.PhasePrepare}, {Phase: load.PhaseCleanup},
			{Phase: load.PhaseWarmup, Threads: 4, Duration: time.Minute}, {Phase: load.PhaseRun, Threads: 8, Duration: time.Minute},
		} {
			inv, err := sysbench.Build(r.Spec.Workload, ConnectionSecretName(r, "mysql57"), step)
			if err != nil {
				t.Fatal(err)
			}
			job := SysbenchJob(r, "mysql57", string(step.Phase), Attempt{}, inv, "sysbench:1.0.20", StepDeadline(step.Phase, step.Duration))
			out[fmt.Sprintf("sysbench %s (script %q)", step.Phase, r.Spec.Workload.Script)] = job.Spec.Template
		}
	}
	return out
}

func TestPodsMeetRestrictedPodSecurity(t *testing.T) {
	for name, tmpl := range podTemplates(t) {
		if v := restrictedViolations(tmpl); len(v) > 0 {
			t.Errorf("%s violates the restricted Pod Security Standard:\n  %s", name, strings.Join(v, "\n  "))
		}
	}
}

// The checker itself finds each kind of violation, so a passing pod means something.
func TestRestrictedViolations(t *testing.T) {
	run := newRun()
	base := ServerStatefulSet(run, run.Spec.Targets[0]).Spec.Template
	if v := restrictedViolations(base); len(v) > 0 {
		t.Fatalf("base pod: %v", v)
	}
	container := func(p *corev1.PodTemplateSpec) *corev1.SecurityContext { return p.Spec.Containers[0].SecurityContext }
	tests := []struct {
		name   string
		mutate func(p *corev1.PodTemplateSpec)
		want   string
	}{
		{"host network", func(p *corev1.PodTemplateSpec) { p.Spec.HostNetwork = true }, "host namespaces"},
		{"host PID", func(p *corev1.PodTemplateSpec) { p.Spec.HostPID = true }, "host namespaces"},
		{"privileged", func(p *corev1.PodTemplateSpec) { container(p).Privileged = ptr.To(true) }, "privileged"},
		{"host port", func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Ports[0].HostPort = 3306 }, "hostPort"},
		{"hostPath volume", func(p *corev1.PodTemplateSpec) {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		}, "volume h"},
		{"unsafe sysctl", func(p *corev1.PodTemplateSpec) {
			p.Spec.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "kernel.msgmax", Value: "1"}}
		}, "sysctl kernel.msgmax"},
		{"privilege escalation unset", func(p *corev1.PodTemplateSpec) { container(p).AllowPrivilegeEscalation = nil }, "allowPrivilegeEscalation"},
		{"runAsNonRoot unset", func(p *corev1.PodTemplateSpec) { p.Spec.SecurityContext.RunAsNonRoot = nil }, "runAsNonRoot unset"},
		{"runAsNonRoot false on the container", func(p *corev1.PodTemplateSpec) { container(p).RunAsNonRoot = ptr.To(false) }, "runAsNonRoot false"},
		{"root uid", func(p *corev1.PodTemplateSpec) { p.Spec.SecurityContext.RunAsUser = ptr.To[int64](0) }, "runAsUser 0"},
		{"no seccomp", func(p *corev1.PodTemplateSpec) { p.Spec.SecurityContext.SeccompProfile = nil }, "seccompProfile unset"},
		{"unconfined seccomp", func(p *corev1.PodTemplateSpec) {
			container(p).SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		}, "seccompProfile Unconfined"},
		{"capabilities kept", func(p *corev1.PodTemplateSpec) { container(p).Capabilities = nil }, "drop ALL"},
		{"capability added", func(p *corev1.PodTemplateSpec) { container(p).Capabilities.Add = []corev1.Capability{"SYS_NICE"} }, "adds capability SYS_NICE"},
		{"unconfined AppArmor", func(p *corev1.PodTemplateSpec) {
			p.Annotations = map[string]string{"container.apparmor.security.beta.kubernetes.io/mysql": "unconfined"}
		}, "annotation"},
		{"SELinux type", func(p *corev1.PodTemplateSpec) {
			p.Spec.SecurityContext.SELinuxOptions = &corev1.SELinuxOptions{Type: "spc_t"}
		}, "seLinuxOptions.type"},
		{"init container without a security context", func(p *corev1.PodTemplateSpec) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init"}}
		}, "container init allowPrivilegeEscalation"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := base.DeepCopy()
			tc.mutate(p)
			v := restrictedViolations(*p)
			if !strings.Contains(strings.Join(v, "\n"), tc.want) {
				t.Errorf("violations %q, want one saying %q", v, tc.want)
			}
		})
	}
}
