package builtin

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/mysqlbench/mysqlbench-operator/internal/podsecurity"
)

// The server's pod meets the restricted Pod Security Standard, with and without spec.storage.
func TestServerMeetsRestrictedPodSecurity(t *testing.T) {
	run := newRun()
	noStorage := run.DeepCopy()
	noStorage.Spec.Storage = nil
	for name, tmpl := range map[string]corev1.PodTemplateSpec{
		"server with storage": StatefulSet(run, run.Spec.Targets[0]).Spec.Template,
		"server on emptyDir":  StatefulSet(noStorage, noStorage.Spec.Targets[0]).Spec.Template,
	} {
		if v := podsecurity.RestrictedViolations(tmpl); len(v) > 0 {
			t.Errorf("%s violates the restricted Pod Security Standard:\n  %s", name, strings.Join(v, "\n  "))
		}
	}
}

// The checker itself finds each kind of violation, so a passing pod means something.
func TestRestrictedViolations(t *testing.T) {
	run := newRun()
	base := StatefulSet(run, run.Spec.Targets[0]).Spec.Template
	if v := podsecurity.RestrictedViolations(base); len(v) > 0 {
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
			v := podsecurity.RestrictedViolations(*p)
			if !strings.Contains(strings.Join(v, "\n"), tc.want) {
				t.Errorf("violations %q, want one saying %q", v, tc.want)
			}
		})
	}
}
