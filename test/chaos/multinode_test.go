//go:build chaos

package chaos

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// TestMultiNodeServerKilledWhileTheOtherMeasures runs two targets in order Parallel on a database
// pool of two nodes (E2E_MULTINODE=1: make test-multinode) and kills target a's server pod while
// both measure: a restarts its server and measures the broken step again; b, on the other node,
// goes on untouched (no server restart, every step measured once, in one attempt), and the run
// Succeeds.
func TestMultiNodeServerKilledWhileTheOtherMeasures(t *testing.T) {
	if os.Getenv("E2E_MULTINODE") != "1" {
		t.Skip("needs a database pool of two nodes: E2E_MULTINODE=1 (make test-multinode)")
	}
	c := newClient(t)
	ns := namespace(t, c, "chaos-multinode")
	run := chaosRun(ns, "parallel")
	run.Spec.Targets = []v1.Target{{Name: "a", Image: env("CHAOS_IMAGE", "mariadb:10.11")}, {Name: "b", Image: env("CHAOS_IMAGE", "mariadb:10.11")}}
	run.Spec.Order = v1.OrderParallel
	run.Spec.Parallelism = ptr.To[int32](2)
	t0 := start(t, c, run)

	// Both targets in their second ladder step, each server on its own node.
	measuring := func(r *v1.BenchmarkRun) bool {
		if r.Status.Phase != v1.RunRunning || len(r.Status.Targets) != 2 {
			return false
		}
		for _, ts := range r.Status.Targets {
			if ts.Phase != v1.TargetRunning || len(ts.Steps) < 1 {
				return false
			}
		}
		return true
	}
	waitUntil(t, c, run, runBound, "both targets to measure", measuring)
	nodes := map[string]string{}
	for _, target := range []string{"a", "b"} {
		p := &corev1.Pod{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: specs.ServerName(run, target) + "-0"}, p); err != nil {
			t.Fatal(err)
		}
		nodes[target] = p.Spec.NodeName
	}
	if nodes["a"] == "" || nodes["a"] == nodes["b"] {
		t.Fatalf("servers on nodes %v: want one node each", nodes)
	}
	killedAt := time.Now()
	kubectl(t, "-n", ns, "delete", "pod", specs.ServerName(run, "a")+"-0", "--force", "--grace-period=0", "--wait=false")
	seen := eventAfter(t, c, run, "ServerRestarted", killedAt, 2*time.Minute)
	got := waitUntil(t, c, run, runBound, "the run to finish", finished)
	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("run %s, want Succeeded: %+v", got.Status.Phase, got.Status.Targets)
	}
	for _, ts := range got.Status.Targets {
		if len(ts.Steps) != len(ladder) {
			t.Errorf("target %s: %d steps measured, want %d", ts.Name, len(ts.Steps), len(ladder))
		}
		switch ts.Name {
		case "a":
			if ts.ServerRestarts != 1 {
				t.Errorf("target a: serverRestarts %d, want 1 (its server was killed)", ts.ServerRestarts)
			}
		case "b":
			if ts.ServerRestarts != 0 {
				t.Errorf("target b: serverRestarts %d, want 0: the other node's server was killed", ts.ServerRestarts)
			}
			for i, s := range ts.Steps {
				if s.Attempts > 1 {
					t.Errorf("target b step %d took %d attempts: the kill on the other node reached it", i+1, s.Attempts)
				}
			}
		}
	}
	var killed []string
	for _, j := range jobsOf(t, c, got) {
		if strings.Contains(j, "-a-") && strings.Contains(j, "-prepare-") {
			killed = append(killed, j)
		}
	}
	if len(killed) < 2 {
		t.Errorf("target a's prepare Jobs %v: want its data prepared again after the restart", killed)
	}
	record(row{name: "server killed on one of two nodes (Parallel)", outcome: string(got.Status.Phase), clear: seen.Sub(killedAt),
		total: time.Since(t0), note: "a restarted and measured again; b on the other node untouched"})
}
