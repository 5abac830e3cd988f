package resultsdb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
	"github.com/mysqlbench/mysqlbench-operator/internal/resultsdb"
)

// suiteNight is night i of schedule suite: a run of workloads points and rw on two targets at 1
// and 2 threads, 3 repetitions, rw's throughput scaled by rw, compared with the night before.
func suiteNight(tb testing.TB, i int, rw float64) *resultsdb.Record {
	tb.Helper()
	start := t0.AddDate(0, 0, i)
	run := &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("suite-%02d", i), Namespace: "bench", UID: types.UID(uid(900 + i)),
			Labels: map[string]string{v1.LabelSchedule: "suite"}},
		Spec: v1.BenchmarkRunSpec{
			Workloads: []v1.NamedWorkload{{Name: "points", Script: "oltp_point_select", Tables: 4, TableSize: 10000},
				{Name: "rw", Script: "oltp_read_write", Tables: 4, TableSize: 10000}},
			Ladder:      v1.Ladder{Threads: []int32{1, 2}, StepDuration: &metav1.Duration{Duration: 60 * time.Second}},
			Repetitions: ptr.To[int32](3),
		},
		Status: v1.BenchmarkRunStatus{Phase: v1.RunSucceeded, StartTime: ptr.To(metav1.NewTime(start)),
			CompletionTime: ptr.To(metav1.NewTime(start.Add(time.Hour)))},
	}
	for ti, name := range []string{"mariadb-0", "mariadb-1"} {
		run.Spec.Targets = append(run.Spec.Targets, v1.Target{Name: name, Image: "mariadb:11.8"})
		ts := v1.TargetStatus{Name: name, Phase: v1.TargetSucceeded}
		for rep := int32(1); rep <= 3; rep++ {
			for _, w := range []string{"points", "rw"} {
				for _, th := range []int32{1, 2} {
					q := float64(th) * (1000 + float64(10*ti) + float64(rep))
					if w == "points" {
						q *= 10
					} else {
						q *= rw
					}
					ts.Steps = append(ts.Steps, v1.StepResult{Workload: w, Threads: th, Repetition: rep, TPS: q / 20,
						QPS: v1.QPS{Total: q}, Latency: v1.Latency{P95Ms: 2}, DurationSeconds: 60})
				}
			}
		}
		ts.Cells = cells.Status(ts.Steps)
		run.Status.Targets = append(run.Status.Targets, ts)
	}
	if i > 0 {
		run.Status.Comparison = &v1.Comparison{Run: run.Name, Baseline: fmt.Sprintf("suite-%02d", i-1), Verdict: v1.VerdictRegressed,
			Targets: []v1.TargetChange{{Target: "mariadb-0", Workload: "points", Verdict: v1.CellNoChange, QPSRatio: 1},
				{Target: "mariadb-0", Workload: "rw", Verdict: v1.CellRegressed, QPSRatio: rw}},
			Worst: []v1.CellChange{{Target: "mariadb-0", Workload: "rw", Threads: 1, Verdict: v1.CellRegressed, Regressed: true},
				{Target: "mariadb-0", Workload: "rw", Threads: 2, Verdict: v1.CellRegressed, Regressed: true}}}
	}
	rec, err := resultsdb.Build(run, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return rec
}

// A suite's cells are stored per workload (they would collide on target and threads alone) and
// read back as one series per workload, each with its own target verdict; a run of one
// spec.workload stores an empty workload and reads as before.
func TestSuiteStoredPerWorkload(t *testing.T) {
	srv, cfg := database(t)
	s := open(t, cfg, resultsdb.OpenOptions{})
	ctx := context.Background()
	recs := []*resultsdb.Record{suiteNight(t, 0, 1), suiteNight(t, 1, 0.8)}
	write(t, s, recs...)
	write(t, s, build(t, 1, shape{targets: 1, threads: 2, reps: 2}, 1))

	if got := srv.MustSQL(t, "SELECT COUNT(*) FROM history.cells WHERE run_uid = '"+uid(901)+"'"); got != "8" {
		t.Errorf("cells of a suite night: %s, want 2 targets x 2 workloads x 2 threads", got)
	}
	if got := srv.MustSQL(t, "SELECT workload FROM history.runs WHERE uid = '"+uid(901)+"'"); got != "workloads:points,rw" {
		t.Errorf("runs.workload %q", got)
	}
	if got := srv.MustSQL(t, "SELECT DISTINCT workload FROM history.cells WHERE run_uid = '"+uid(1)+"'"); got != "" {
		t.Errorf("a run of one workload stored cells of workload %q, want empty", got)
	}
	if got := srv.MustSQL(t, "SELECT CONCAT(workload, ':', COUNT(*)) FROM history.steps WHERE run_uid = '"+uid(901)+"' GROUP BY workload ORDER BY 1"); got != "points:12\nrw:12" {
		t.Errorf("steps by workload: %q", got)
	}

	series, err := s.History(ctx, resultsdb.HistoryQuery{Namespace: "bench", Schedule: "suite", Target: "mariadb-0"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, se := range series {
		names = append(names, fmt.Sprintf("%s@%d:%d", se.Workload, se.Threads, len(se.Points)))
	}
	if fmt.Sprint(names) != "[points@1:2 points@2:2 rw@1:2 rw@2:2]" {
		t.Fatalf("series %v", names)
	}
	for _, se := range series {
		last := se.Points[1]
		want := map[string]string{"points": "NoChange", "rw": "Regressed"}[se.Workload]
		if last.TargetVerdict != want {
			t.Errorf("%s@%d: target verdict %q, want %q (the verdict of its own workload)", se.Workload, se.Threads, last.TargetVerdict, want)
		}
		ratio := last.Median / se.Points[0].Median
		if wantRatio := map[string]float64{"points": 1, "rw": 0.8}[se.Workload]; ratio < wantRatio-0.001 || ratio > wantRatio+0.001 {
			t.Errorf("%s@%d: night 1 / night 0 = %.4f, want %.1f", se.Workload, se.Threads, ratio, wantRatio)
		}
	}
	rw, err := s.History(ctx, resultsdb.HistoryQuery{Namespace: "bench", Schedule: "suite", Workload: "rw"})
	if err != nil || len(rw) != 4 {
		t.Fatalf("--workload rw: %d series (%v), want 2 targets x 2 threads", len(rw), err)
	}
	for _, se := range rw {
		if se.Workload != "rw" {
			t.Errorf("--workload rw returned %s", se.Workload)
		}
	}
	// The exported records answer alike.
	offline, err := resultsdb.HistoryOf(recs, resultsdb.HistoryQuery{Namespace: "bench", Schedule: "suite", Workload: "rw"})
	if a, b := mustJSON(t, offline), mustJSON(t, rw); err != nil || a != b {
		t.Errorf("HistoryOf:\n%s\nHistory:\n%s (%v)", a, b, err)
	}
	// A run of one workload: its series is the run's workload, as before.
	one, err := s.History(ctx, resultsdb.HistoryQuery{Namespace: "bench", Schedule: "nightly"})
	if err != nil || len(one) != 2 || one[0].Workload != "oltp_read_write" {
		t.Errorf("one workload: %+v %v", one, err)
	}
}

// Rows stored before the migration keep their keys: their workload is empty.
func TestMigrationAddsWorkloads(t *testing.T) {
	srv, cfg := database(t)
	open(t, cfg, resultsdb.OpenOptions{UpTo: 2})
	// As the second schema's writer stored a run: cells keyed by target and threads.
	srv.MustSQL(t, fmt.Sprintf(`USE history;
INSERT INTO runs (uid, namespace, name, schedule, phase, client, workload, metric, repetitions, step_seconds,
  warmup_seconds, run_order, server_instance, start_time, spec, content_hash, stored_at)
VALUES ('%[1]s', 'bench', 'nightly-old', 'nightly', 'Succeeded', 'sysbench', 'oltp_read_write', 'qps', 1, 60, 0,
  'Sequential', 'Shared', '2026-10-01 22:00:00', '{}', 'old', NOW(6));
INSERT INTO cells (run_uid, target, threads, n, noisy, qps_median, tps_median, tps_cv, p95_ms_median, p95_ms_ci_low,
  p95_ms_ci_high, p95_ms_cv, ci_confidence) VALUES
  ('%[1]s', 'a', 1, 1, FALSE, 1000, 50, 0, 2, 2, 2, 0, 0), ('%[1]s', 'a', 2, 1, FALSE, 1000, 50, 0, 2, 2, 2, 0, 0),
  ('%[1]s', 'b', 1, 1, FALSE, 1000, 50, 0, 2, 2, 2, 0, 0), ('%[1]s', 'b', 2, 1, FALSE, 1000, 50, 0, 2, 2, 2, 0, 0);`, uid(77)))
	s := open(t, cfg, resultsdb.OpenOptions{})
	if v, _ := s.Version(context.Background()); v != 3 {
		t.Fatalf("version %d, want 3", v)
	}
	if got := srv.MustSQL(t, "SELECT CONCAT(COUNT(*), ':', MAX(workload)) FROM history.cells"); got != "4:" {
		t.Errorf("cells after the migration: %q, want 4 with an empty workload", got)
	}
	write(t, s, suiteNight(t, 0, 1))
	if got := srv.MustSQL(t, "SELECT COUNT(*) FROM history.cells"); got != "12" {
		t.Errorf("cells after a suite's write: %s, want 4 + 8", got)
	}
}

func mustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
