package resultsdb_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/resultsdb"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

func rowsOf(rec *resultsdb.Record) map[string]int {
	out := map[string]int{}
	for _, t := range rec.Tables {
		out[t.Name] = len(t.Rows)
		for _, r := range t.Rows {
			if len(r) != len(t.Columns) {
				panic(t.Name + ": a row does not match the columns")
			}
		}
	}
	return out
}

func TestBuildRowsPerTable(t *testing.T) {
	counters := len(serverstats.StatusNames) + len(serverstats.InnoDBMetricNames)
	for _, tc := range []struct {
		name    string
		shape   shape
		noDoc   bool
		compare bool
		want    map[string]int
	}{
		{name: "one repetition, no server counters", shape: shape{targets: 2, threads: 3, reps: 1},
			want: map[string]int{"runs": 1, "targets": 2, "steps": 6, "cells": 6}},
		{name: "repetitions and server counters", shape: shape{targets: 2, threads: 2, reps: 3, server: true},
			want: map[string]int{"runs": 1, "targets": 2, "steps": 12, "cells": 4, "step_counters": 12 * counters,
				"step_gauges": 24, "step_waits": 120}},
		{name: "results never written: the status only", shape: shape{targets: 1, threads: 2, reps: 2, server: true}, noDoc: true,
			want: map[string]int{"runs": 1, "targets": 1, "steps": 4, "cells": 2}},
		{name: "a compared run", shape: shape{targets: 2, threads: 1, reps: 1}, compare: true,
			want: map[string]int{"runs": 1, "targets": 2, "steps": 2, "cells": 2, "comparisons": 1,
				"comparison_targets": 2, "comparison_cells": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, doc := fixture(t, uid(1), tc.shape, 1)
			if tc.noDoc {
				doc = nil
			}
			if tc.compare {
				run.Status.Comparison = &v1.Comparison{Run: run.Name, Baseline: "nightly-prev", Verdict: v1.VerdictRegressed,
					ComparedCells: 2, RegressedCells: 1, NoChangeCells: 1, QPSDropPercent: 5, P95RisePercent: 10, Alpha: 0.05,
					Worst:   []v1.CellChange{{Target: "mariadb-0", Threads: 1, Verdict: v1.CellRegressed, Regressed: true, BaselineQPS: 1100, QPS: 1000, QPSChangePercent: -9.1}},
					Targets: []v1.TargetChange{{Target: "mariadb-0", Cells: 1, Verdict: v1.CellRegressed, QPSRatio: 0.91}, {Target: "mariadb-1", Cells: 1, Verdict: v1.CellNoChange, QPSRatio: 1}}}
			}
			rec, err := resultsdb.Build(run, doc)
			if err != nil {
				t.Fatal(err)
			}
			got := rowsOf(rec)
			for table, n := range got {
				if n != tc.want[table] {
					t.Errorf("%s: %d rows, want %d", table, n, tc.want[table])
				}
			}
		})
	}
}

func TestBuildHashFollowsContent(t *testing.T) {
	run, doc := fixture(t, uid(1), shape{targets: 1, threads: 2, reps: 2, server: true}, 1)
	a, err := resultsdb.Build(run, doc)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := resultsdb.Build(run.DeepCopy(), doc)
	if again.Hash != a.Hash {
		t.Fatal("the same run hashed differently twice")
	}
	run.Status.Comparison = &v1.Comparison{Run: run.Name, Verdict: v1.VerdictRegressed}
	meta.SetStatusCondition(&run.Status.Conditions, metav1.Condition{Type: v1.ConditionRegressed, Status: metav1.ConditionUnknown, Reason: v1.ReasonAwaitingConfirmation})
	b, _ := resultsdb.Build(run, doc)
	meta.SetStatusCondition(&run.Status.Conditions, metav1.Condition{Type: v1.ConditionRegressed, Status: metav1.ConditionTrue, Reason: v1.ReasonRegressed})
	c, _ := resultsdb.Build(run, doc)
	if a.Hash == b.Hash || b.Hash == c.Hash {
		t.Fatalf("a new comparison or a settled confirmation kept the hash: %s %s %s", a.Hash, b.Hash, c.Hash)
	}
}

func TestBuildRefusesARunWithoutUID(t *testing.T) {
	run, doc := fixture(t, uid(1), shape{targets: 1, threads: 1, reps: 1}, 1)
	run.UID = ""
	if _, err := resultsdb.Build(run, doc); err == nil {
		t.Fatal("a run without a UID was built into a record")
	}
}

func TestBuildGoTPCStoresTpmC(t *testing.T) {
	run, _ := fixture(t, uid(1), shape{targets: 1, threads: 1, reps: 2}, 1)
	run.Spec.Workload = v1.Workload{Client: v1.ClientGoTPC, TPCC: &v1.TPCCWorkload{Warehouses: 4}}
	for i := range run.Status.Targets[0].Steps {
		run.Status.Targets[0].Steps[i].TPCC = &v1.TPCCResult{TpmC: 900 + float64(i)}
	}
	rec, err := resultsdb.Build(run, nil)
	if err != nil {
		t.Fatal(err)
	}
	col := func(table, name string) any {
		for _, tb := range rec.Tables {
			if tb.Name != table {
				continue
			}
			for i, c := range tb.Columns {
				if c == name {
					return tb.Rows[0][i]
				}
			}
		}
		t.Fatalf("no %s.%s", table, name)
		return nil
	}
	if m := col("runs", "metric"); m != "tpmC" {
		t.Errorf("metric %v, want tpmC", m)
	}
	if w := col("runs", "workload"); w != "tpcc:4-warehouses" {
		t.Errorf("workload %v", w)
	}
	if q := col("cells", "qps_median"); q != nil {
		t.Errorf("a go-tpc cell has a QPS median %v, want NULL", q)
	}
	if m := col("cells", "tpmc_median"); m != 900.5 {
		t.Errorf("tpmC median %v, want 900.5", m)
	}
}
