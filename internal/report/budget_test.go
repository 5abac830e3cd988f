package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// worstCaseRun must assume the longest run name the API server accepts: the CRD's own rule.
func TestWorstRunNameLenIsTheCRDLimit(t *testing.T) {
	crd, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "mysqlbench.io_benchmarkruns.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rule := fmt.Sprintf("rule: size(self.metadata.name) <= %d\n", worstRunNameLen)
	if !strings.Contains(string(crd), rule) {
		t.Errorf("the BenchmarkRun CRD has no %q: worstRunNameLen (%d) is not its name limit", strings.TrimSpace(rule), worstRunNameLen)
	}
}

// Server counters never take the whole of a step's share: the Percona-sized run (192 steps,
// whose worst-case server counters do not fit a ConfigMap at all) keeps series of half the share
// it would have without them, up to seriesFloor; a small run's worst case fits whole.
func TestSeriesBudgetKeepsRoomForTheSeries(t *testing.T) {
	run := perconaRun()
	with := SeriesBudget(run.Spec)
	run.Spec.ServerStats = &v1alpha1.ServerStats{Enabled: ptr(false)}
	without := SeriesBudget(run.Spec)
	if want := min(without/2, seriesFloor); with < want || with >= without {
		t.Errorf("Percona-sized run: %d bytes per series with server counters, %d without; want at least %d and less than without",
			with, without, want)
	}
	small := fixtureRun(-1)
	if got, reserved := SeriesBudget(small.Spec), seriesShare(small.Spec, true); got != reserved {
		t.Errorf("a small run gets %d bytes per series, want the share %d left by its worst-case server counters", got, reserved)
	}
}

// The budget reserves the nodes of the servers the operator runs, as report.md and results.json
// show them at their widest: every target on its own node, the instances on ten more.
func TestWorstCaseRunHasItsNodes(t *testing.T) {
	run := fixtureRun(-1)
	run.Spec.Targets[1].Engine = v1alpha1.EngineExternal
	doc := buildDoc(worstCaseRun(run.Spec))
	if n := doc.Targets[0].Node; n == nil || len(n.Name) != worstNodeNameLen || len(doc.Targets[0].InstanceNodes) != worstInstanceNodes {
		t.Fatalf("builtin target: node %+v, instance nodes %q; want a node name of %d characters and %d instance nodes",
			n, doc.Targets[0].InstanceNodes, worstNodeNameLen, worstInstanceNodes)
	}
	if doc.Targets[1].Node != nil || doc.Targets[1].InstanceNodes != nil {
		t.Errorf("external target: node %+v, want none reserved", doc.Targets[1].Node)
	}
	md := renderMarkdown(&doc, make([][]*serverstats.Step, len(doc.Targets)), false)
	if !strings.Contains(md, "## Nodes") || !strings.Contains(md, "server instances ran on 10 different nodes") {
		t.Errorf("the worst case's report.md does not show its nodes:\n%.3000s", md)
	}
}
