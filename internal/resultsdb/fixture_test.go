package resultsdb_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

var t0 = time.Date(2026, 11, 2, 22, 0, 0, 0, time.UTC)

// shape is a fixture run's size: targets x threads x repetitions steps, each with the server's
// counters (the whole bounded set), gauges and waits when server is true.
type shape struct {
	targets, threads, reps int
	server                 bool
}

// steps is how many steps a run of this shape measures.
func (s shape) steps() int { return s.targets * s.threads * s.reps }

// fixture is a finished scheduled run and its results.json, as the operator holds them: uid
// keys it, qps scales its throughput.
func fixture(tb testing.TB, uid string, sh shape, qps float64) (*v1.BenchmarkRun, *results.Doc) {
	tb.Helper()
	start := t0
	run := &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly-" + uid[:8], Namespace: "bench", UID: types.UID(uid),
			Labels: map[string]string{v1.LabelSchedule: "nightly"}},
		Spec: v1.BenchmarkRunSpec{
			Workload:    v1.Workload{Script: "oltp_read_write", Tables: 4, TableSize: 10000},
			Ladder:      v1.Ladder{StepDuration: &metav1.Duration{Duration: 60 * time.Second}},
			Repetitions: ptr.To(int32(sh.reps)),
		},
		Status: v1.BenchmarkRunStatus{Phase: v1.RunSucceeded, StartTime: ptr.To(metav1.NewTime(start)),
			CompletionTime: ptr.To(metav1.NewTime(start.Add(3 * time.Hour)))},
	}
	doc := &results.Doc{FormatVersion: results.FormatVersion,
		Workload: results.Workload{Client: "sysbench", Script: "oltp_read_write", Tables: 4, TableSize: 10000},
		Ladder:   results.Ladder{StepDurationSeconds: 60, Repetitions: sh.reps}}
	for th := 0; th < sh.threads; th++ {
		run.Spec.Ladder.Threads = append(run.Spec.Ladder.Threads, int32(1)<<th)
	}
	for ti := 0; ti < sh.targets; ti++ {
		name := fmt.Sprintf("mariadb-%d", ti)
		run.Spec.Targets = append(run.Spec.Targets, v1.Target{Name: name, Image: "mariadb:11.8"})
		ts := v1.TargetStatus{Name: name, Phase: v1.TargetSucceeded, ServerVersion: "11.8.3-MariaDB-deb13",
			ServerImageDigest: "sha256:" + fmt.Sprintf("%064d", ti), Node: &v1.ServerNode{Name: "db-0", KernelVersion: "6.1.0"}}
		dt := results.Target{Name: name, Image: "mariadb:11.8", MyCnf: "[mysqld]\ninnodb_buffer_pool_size = 1G\n"}
		for rep := 1; rep <= sh.reps; rep++ {
			for _, th := range run.Spec.Ladder.Threads {
				q := qps * float64(th) * (1000 + float64(ti*10) + float64(rep))
				s := v1.StepResult{Threads: th, Repetition: int32(rep), TPS: q / 20, QPS: v1.QPS{Total: q, Read: q * 0.7, Write: q * 0.2, Other: q * 0.1},
					Latency: v1.Latency{MinMs: 0.2, AvgMs: 1, P95Ms: 2 + float64(rep)/10, MaxMs: 30}, DurationSeconds: 60,
					Instance: 1, Attempts: 1, StartTime: ptr.To(metav1.NewTime(start)), FinishTime: ptr.To(metav1.NewTime(start.Add(time.Minute)))}
				start = start.Add(time.Minute)
				ts.Steps = append(ts.Steps, s)
				ds := results.Step{StepResult: s}
				if sh.server {
					ds.Server = serverStep(tb, s)
				}
				dt.Steps = append(dt.Steps, ds)
			}
		}
		if sh.reps > 1 {
			ts.Cells = cells.Status(ts.Steps)
		}
		run.Status.Targets = append(run.Status.Targets, ts)
		doc.Targets = append(doc.Targets, dt)
	}
	return run, doc
}

// serverStep is a step's server counters: every counter of the bounded set, a few gauges, ten
// waits, the container's CPU.
func serverStep(tb testing.TB, s v1.StepResult) json.RawMessage {
	st := serverstats.Step{Seconds: 60.4, Queries: s.QPS.Total * 60, PerformanceSchema: true,
		CPU: &serverstats.CPU{Container: "mysqld", Seconds: 90, From: 0, To: 60, Samples: 30, PerSecond: 1.5}}
	for i, n := range serverstats.StatusNames {
		st.Counters = append(st.Counters, serverstats.Counter{Source: serverstats.SourceStatus, Name: n,
			Delta: uint64(1000 * (i + 1)), PerSecond: float64(1000*(i+1)) / 60.4, PerQuery: float64(1000*(i+1)) / st.Queries})
	}
	for i, n := range serverstats.InnoDBMetricNames {
		st.Counters = append(st.Counters, serverstats.Counter{Source: serverstats.SourceInnoDBMetrics, Name: n,
			Delta: uint64(10 * (i + 1)), PerSecond: float64(10*(i+1)) / 60.4, PerQuery: float64(10*(i+1)) / st.Queries})
	}
	st.Gauges = []serverstats.Gauge{{Source: serverstats.SourceStatus, Name: "Threads_running", Value: uint64(s.Threads)},
		{Source: serverstats.SourceStatus, Name: "Threads_connected", Value: uint64(s.Threads + 1)}}
	for i := range 10 {
		st.Waits = append(st.Waits, serverstats.Wait{Event: fmt.Sprintf("wait/synch/mutex/innodb/fixture_%d", i),
			Count: uint64(100 * (i + 1)), SumTimerWait: uint64(1e9 * (i + 1)), SecondsPerSecond: 0.001 * float64(i+1)})
	}
	raw, err := json.Marshal(st)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// uid is a fixture UID numbered n.
func uid(n int) string { return fmt.Sprintf("%08d-0000-4000-8000-000000000000", n) }
