package plugin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/exported"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// suiteNights writes, into a new directory, the report package's suite golden run (workloads
// points and rw) as n nights of schedule, BenchmarkRun YAML with its status.
func suiteNights(t *testing.T, schedule string, n int) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("..", "report", "testdata", "suite", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		doc, err := results.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		start := metav1.NewTime(time.Date(2026, 11, 1+i, 2, 0, 0, 0, time.UTC))
		doc.Run.Name, doc.Run.StartTime = fmt.Sprintf("%s-%d", schedule, i+1), &start
		run := exported.FromResults(doc)
		run.SetGroupVersionKind(v1.GroupVersion.WithKind("BenchmarkRun"))
		run.UID = types.UID(fmt.Sprintf("suite-uid-%d", i+1))
		run.Labels = map[string]string{v1.LabelSchedule: schedule}
		y, err := yaml.Marshal(run)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, run.Name+".yaml"), y, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// history of a suite has a series per workload; --workload shows one workload's.
func TestHistoryOfASuite(t *testing.T) {
	dir := suiteNights(t, "micro", 3)
	read := func(args ...string) historyView {
		t.Helper()
		out, _, err := pluginAt(t, offlineNow, append([]string{"history", "micro", "--from", dir, "-o", "json"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var view historyView
		if err := json.Unmarshal([]byte(out), &view); err != nil {
			t.Fatal(err)
		}
		return view
	}
	var all []string
	for _, s := range read().Series {
		if len(s.Points) != 3 {
			t.Errorf("series %s %s@%d: %d nights", s.Workload, s.Target, s.Threads, len(s.Points))
		}
		if k := s.Workload + "/" + s.Target; !slices.Contains(all, k) {
			all = append(all, k)
		}
	}
	if want := []string{"points/mysql57", "points/ps80", "rw/mysql57", "rw/ps80"}; !slices.Equal(all, want) {
		t.Errorf("series %v, want %v", all, want)
	}
	view := read("--workload", "rw")
	if len(view.Series) != 6 {
		t.Errorf("--workload rw: %d series, want 2 targets x 3 thread counts", len(view.Series))
	}
	for _, s := range view.Series {
		if s.Workload != "rw" {
			t.Errorf("--workload rw shows %s", s.Workload)
		}
	}
	_, _, err := pluginAt(t, offlineNow, "history", "micro", "--from", dir, "--workload", "insert")
	checkError(t, "--workload insert", err, "no cells of --workload insert", "points, rw")
}
