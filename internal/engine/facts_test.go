package engine

import (
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// Every engine states its facts, and each engine's Facts are its own (the Percona flavours
// differ in their server container).
func TestFacts(t *testing.T) {
	all := All(nil, nil, nil)
	cases := map[v1.Engine]struct {
		creates, foreign, own bool
		container             string
	}{
		v1.EngineBuiltin:              {creates: true, own: true, container: specs.ServerContainer},
		v1.EngineExternal:             {},
		v1.EnginePerconaServer:        {creates: true, foreign: true, container: "mysql"},
		v1.EnginePerconaXtraDBCluster: {creates: true, foreign: true, container: "pxc"},
	}
	if len(all) != len(cases) {
		t.Fatalf("%d engines, %d with expected facts", len(all), len(cases))
	}
	for e, want := range cases {
		f := all[e].Facts()
		if f != FactsOf(e) {
			t.Errorf("%s: Facts() %+v, FactsOf %+v", e, f, FactsOf(e))
		}
		if f.CreatesServer != want.creates || f.HoldsNode != want.creates || f.ForeignPods != want.foreign ||
			f.OwnPod != want.own || f.ImageIsServer != want.own || f.ServerContainer != want.container {
			t.Errorf("%s: facts %+v", e, f)
		}
	}
	if FactsOf("") != FactsOf(v1.EngineBuiltin) {
		t.Error("an unset engine is not builtin's")
	}
}

// PlannedObjects: what Provision would create, none for a server the operator does not create.
func TestPlannedObjects(t *testing.T) {
	run := &v1.BenchmarkRun{}
	run.Name, run.Namespace = "r", "ns"
	run.Spec.Workload = v1.Workload{Script: "oltp_point_select"}
	run.Spec.Ladder.Threads = []int32{1}
	for e, eng := range All(nil, nil, nil) {
		objs, err := eng.PlannedObjects(run, v1.Target{Name: "t", Engine: e, Image: "mariadb:11"}, "pw")
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		if (len(objs) > 0) != eng.Facts().CreatesServer {
			t.Errorf("%s: %d planned objects, creates its server: %v", e, len(objs), eng.Facts().CreatesServer)
		}
	}
}
