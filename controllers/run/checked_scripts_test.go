package run_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// Every step Job carries the digests of the Lua the operator checked (its pod runs nothing
// else), the run records its custom script's digest before its first Job, and a script changed
// during the run stops the run's remaining steps with a message naming the ConfigMap.
func TestStepJobsCarryTheCheckedScriptsDigests(t *testing.T) {
	ns := newNamespace(t)
	const original, changed = "function event() end\n", "function event() os.exit(0) end\n"
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "scripts", Namespace: ns},
		Data: map[string]string{"bench.lua": original}}
	ctx := context.Background()
	if err := k8s.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	startOperator(t, ns, operatorOptions{log: captured(t, "run_point_select_t4.txt")})
	ok := succeedAll(t)
	var mu sync.Mutex
	digests := map[string][2]string{} // step -> reporter, script digest in its Job
	startKubelet(t, ns, func(job *batchv1.Job) outcome {
		env := map[string]string{}
		for _, e := range job.Spec.Template.Spec.Containers[0].Env {
			env[e.Name] = e.Value
		}
		step := job.Labels[specs.LabelStep]
		mu.Lock()
		digests[step] = [2]string{env[sysbench.EnvReporterSHA256], env[sysbench.EnvScriptSHA256]}
		mu.Unlock()
		if step == "prepare" {
			// Someone changes the script while the run prepares: the next step must not run it.
			cm.Data["bench.lua"] = changed
			if err := k8s.Update(ctx, cm); err != nil {
				t.Error(err)
			}
		}
		return ok(job)
	})
	run := baseRun(ns, "pinned", 1)
	run.Spec.Targets = run.Spec.Targets[:1]
	run.Spec.Workload = v1.Workload{CustomScript: &v1.ConfigMapKeySelector{Name: "scripts", Key: "bench.lua"}, Tables: 1, TableSize: 10}
	if err := k8s.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "pinned", time.Minute, "the run to finish", finished)
	if got.Status.CustomScriptSHA256 != sysbench.Digest([]byte(original)) {
		t.Errorf("status.customScriptSHA256 %q, want the original script's %s", got.Status.CustomScriptSHA256, sysbench.Digest([]byte(original)))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, step := range []string{"probe", "prepare"} {
		if d := digests[step]; d[0] != sysbench.ReporterSHA256 || d[1] != sysbench.Digest([]byte(original)) {
			t.Errorf("Job of step %s carries digests %q, want the reporter's and the original script's", step, d)
		}
	}
	if len(digests) != 2 {
		t.Errorf("Jobs of steps %v ran, want only probe and prepare: the changed script must not run", digests)
	}
	ts := got.Status.Targets[0]
	if ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, "ConfigMap "+ns+"/scripts, key bench.lua (workload.customScript) changed during the run") {
		t.Errorf("target %s %q, want it failed naming the changed ConfigMap", ts.Phase, ts.Message)
	}
}
