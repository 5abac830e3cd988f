package sysbench

import (
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

func TestWorkloadLine(t *testing.T) {
	for _, tc := range []struct {
		w    results.Workload
		l    results.Ladder
		want string
	}{
		{results.Workload{Script: "oltp_read_write", Tables: 16, TableSize: 1000000, ExtraArgs: []string{"--rand-type=uniform"}},
			results.Ladder{StepDurationSeconds: 300, WarmupSeconds: 60, WarmupThreads: 64},
			"sysbench `oltp_read_write`, 16 tables x 1,000,000 rows, options `--rand-type=uniform`, 300 s per step, warm-up 60 s at 64 threads"},
		{results.Workload{CustomScript: &results.CustomScript{ConfigMap: "lua", Key: "bench.lua"}, Tables: 1, TableSize: 10, SkipPrepare: true},
			results.Ladder{StepDurationSeconds: 1.5},
			"custom sysbench script `bench.lua` from ConfigMap `lua`, 1 tables x 10 rows (prepared beforehand), 1.5s per step, no warm-up"},
	} {
		if got := (Client{}).WorkloadLine(&results.Doc{Workload: tc.w, Ladder: tc.l}); got != tc.want {
			t.Errorf("WorkloadLine = %q\nwant %q", got, tc.want)
		}
	}
}

// The results database takes the tables from results.json when there is one: the run's spec may
// be an export's, results.json what was measured.
func TestRunLabels(t *testing.T) {
	w := v1.Workload{Script: "oltp_point_select", Tables: 4, TableSize: 100}
	l := Client{}.RunLabels(w, &results.Doc{Workload: results.Workload{Tables: 8, TableSize: 200}})
	if l.Workload != "oltp_point_select" || *l.Tables != 8 || *l.TableSize != 200 {
		t.Errorf("labels %q %d %d", l.Workload, *l.Tables, *l.TableSize)
	}
	if l := (Client{}).RunLabels(w, nil); *l.Tables != 4 || *l.TableSize != 100 {
		t.Errorf("without results.json: %d %d", *l.Tables, *l.TableSize)
	}
	if cols := (Client{}).CSVColumns(); cols != nil {
		t.Errorf("sysbench adds columns %v: results.csv's own are its", cols)
	}
}
