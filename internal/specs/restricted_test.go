package specs

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/podsecurity"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// podTemplates are the step Jobs' pod templates, of every phase, with a stock and a custom
// script. (The servers' are their engines' to check.)
func podTemplates(t *testing.T) map[string]corev1.PodTemplateSpec {
	t.Helper()
	out := map[string]corev1.PodTemplateSpec{}
	run := newRun()
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
		if v := podsecurity.RestrictedViolations(tmpl); len(v) > 0 {
			t.Errorf("%s violates the restricted Pod Security Standard:\n  %s", name, strings.Join(v, "\n  "))
		}
	}
}
