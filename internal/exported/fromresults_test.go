package exported

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// A suite's results.json reads back whole: every workload under its name, in measuring order,
// with its steps and cells, and a report of the rebuilt run has the same per-workload tables.
func TestFromResultsOfASuite(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "report", "testdata", "suite", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := results.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	run := FromResults(doc)
	var names []string
	for _, w := range run.Spec.OrderedWorkloads() {
		names = append(names, w.Name+"="+string(w.Script))
	}
	if want := []string{"points=oltp_point_select", "rw=oltp_read_write"}; !slices.Equal(names, want) {
		t.Fatalf("workloads %v, want %v", names, want)
	}
	if run.Spec.Workload.Script != "" || !run.Spec.Suite() {
		t.Errorf("spec.workload %+v beside spec.workloads", run.Spec.Workload)
	}
	for _, ts := range run.Status.Targets {
		var got []string
		for _, c := range cells.Of(ts.Steps) {
			got = append(got, c.Workload)
		}
		if want := []string{"points", "points", "points", "rw", "rw", "rw"}; !slices.Equal(got, want) {
			t.Errorf("%s: cells of workloads %v, want %v", ts.Name, got, want)
		}
	}
	data, err := report.Render(run, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := results.Decode([]byte(data[report.KeyResultsJSON]))
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Workloads) != 2 || again.Workloads[1].Name != "rw" || !again.Workloads[1].Writes {
		t.Errorf("the rebuilt run's results.json workloads %+v", again.Workloads)
	}
}
