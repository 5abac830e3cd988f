package report

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kptr "k8s.io/utils/ptr"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// assertGolden compares got with testdata/<name>, or writes it with -update.
func assertGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it, then review it)", err)
	}
	if got == string(want) {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s differs at line %d:\n got: %.300s\nwant: %.300s\n(run go test -update if the change is intended)", path, i+1, g, w)
		}
	}
}

// t0 anchors every time in the fixtures so the golden files never change by themselves.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) *metav1.Time { return &metav1.Time{Time: t0.Add(d)} }

// stepFixture is a plausible point-select step: QPS grows with threads and latency with it.
func stepFixture(threads int32, start time.Duration) v1alpha1.StepResult {
	qps := round2(15000.25 * float64(threads) / (1 + float64(threads)/32))
	return v1alpha1.StepResult{
		Threads: threads,
		TPS:     qps,
		QPS:     v1alpha1.QPS{Total: qps, Read: qps},
		Latency: v1alpha1.Latency{
			MinMs: 0.041,
			AvgMs: math.Round(float64(threads)*1000/qps*1000) / 1000,
			P95Ms: math.Round(float64(threads)*1500/qps*1000) / 1000,
			MaxMs: 12.5,
		},
		Errors:          int64(threads / 8),
		DurationSeconds: 300.002,
		Attempts:        1,
		StartTime:       at(start),
		FinishTime:      at(start + 305*time.Second),
	}
}

// round2 rounds like the reporter prints rates.
func round2(v float64) float64 { return math.Round(v*100) / 100 }

// fixtureRun is a 2-target x 3-step run; failAfter >= 0 makes the second target fail after that
// many steps.
func fixtureRun(failAfter int) *v1alpha1.BenchmarkRun {
	ladder := []int32{1, 8, 64}
	run := &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "pk-lookup", Namespace: "bench"},
		Spec: v1alpha1.BenchmarkRunSpec{
			Targets: []v1alpha1.Target{
				{Name: "mysql57", Engine: v1alpha1.EngineBuiltin, Image: "mysql:5.7.44", MyCnf: "performance_schema = OFF\n"},
				{Name: "ps80", Engine: v1alpha1.EnginePerconaServer, Image: "percona/percona-server:8.0.36-28"},
			},
			Workload: v1alpha1.Workload{
				Script:    "oltp_point_select",
				Tables:    100,
				TableSize: 1000000,
				ExtraArgs: []string{"--rand-type=uniform"},
			},
			Ladder: v1alpha1.Ladder{
				Threads:      ladder,
				StepDuration: &metav1.Duration{Duration: 300 * time.Second},
				Warmup:       &metav1.Duration{Duration: 300 * time.Second},
			},
		},
		Status: v1alpha1.BenchmarkRunStatus{
			Phase:          v1alpha1.RunSucceeded,
			StartTime:      at(0),
			CompletionTime: at(2 * time.Hour),
		},
	}
	versions := []string{"5.7.44", "8.0.36-28"}
	for ti, tg := range run.Spec.Targets {
		ts := v1alpha1.TargetStatus{
			Name:           tg.Name,
			Phase:          v1alpha1.TargetSucceeded,
			ServerVersion:  versions[ti],
			StartTime:      at(time.Duration(ti) * time.Hour),
			CompletionTime: at(time.Duration(ti)*time.Hour + 30*time.Minute),
		}
		for si, th := range ladder {
			if ti == 1 && failAfter >= 0 && si >= failAfter {
				ts.Phase = v1alpha1.TargetFailed
				ts.Message = fmt.Sprintf("step %d (%d threads): error 1040: Too many connections", si+1, th)
				break
			}
			st := stepFixture(th, time.Duration(ti)*time.Hour+time.Duration(si)*6*time.Minute)
			if ti == 1 {
				st.QPS.Total = round2(st.QPS.Total * 0.9)
				st.TPS, st.QPS.Read = st.QPS.Total, st.QPS.Total
				st.Latency.AvgMs = math.Round(st.Latency.AvgMs/0.9*1000) / 1000
				st.Latency.P95Ms = math.Round(st.Latency.P95Ms/0.9*1000) / 1000
			}
			ts.Steps = append(ts.Steps, st)
		}
		run.Status.Targets = append(run.Status.Targets, ts)
	}
	if failAfter >= 0 {
		run.Status.Phase = v1alpha1.RunFailed
	}
	return run
}

// intervalsFixture is n per-second reports with a repeating, irregular pattern, rounded like the
// reporter prints them, so averages are checkable and encodings are not trivially compressible.
func intervalsFixture(n int, threads int32) []load.Interval {
	iv := make([]load.Interval, n)
	for i := range iv {
		tps := 10000 + float64((i*7919)%1000) + float64(i%7)/4
		iv[i] = load.Interval{
			Time:             float64(i + 1),
			Threads:          threads,
			ThreadsRunning:   threads,
			TPS:              tps,
			QPS:              tps * 2,
			ReadQPS:          tps * 1.5,
			WriteQPS:         tps * 0.25,
			OtherQPS:         tps * 0.25,
			LatencyPctMs:     0.5 + float64((i*31)%17)/100,
			ErrorsPerSec:     float64(i%3) / 100,
			ReconnectsPerSec: float64(i % 2),
		}
	}
	return iv
}

// storedSeries encodes a series for every finished step of run, as the controller stores them.
func storedSeries(t testing.TB, run *v1alpha1.BenchmarkRun, n, budget int) map[string]string {
	t.Helper()
	stored := map[string]string{}
	for _, ts := range run.Status.Targets {
		for _, st := range ts.Steps {
			s, err := EncodeSeries(intervalsFixture(n, st.Threads), budget)
			if err != nil {
				t.Fatal(err)
			}
			stored[SeriesKey(ts.Name, st.Threads, st.RepetitionOrDefault())] = s
		}
	}
	return stored
}

// repeatedRun is fixtureRun(-1) measured with 3 repetitions in rounds (ascending, descending,
// ascending): each repetition's numbers move by a fixed pattern, and ps80 at 64 threads moves by
// 10 % so it is noisy.
func repeatedRun() *v1alpha1.BenchmarkRun {
	run := fixtureRun(-1)
	run.Spec.Repetitions = kptr.To[int32](3)
	factors := []float64{1, 0.98, 1.01}
	for ti := range run.Status.Targets {
		ts := &run.Status.Targets[ti]
		single := ts.Steps
		ts.Steps = nil
		for i := range run.Spec.StepCount() {
			rung, rep := run.Spec.LadderPosition(i)
			st := single[rung]
			f := factors[rep-1]
			if ti == 1 && st.Threads == 64 && rep == 2 {
				f = 0.9
			}
			st.Repetition = rep
			st.QPS.Total = round2(st.QPS.Total * f)
			st.TPS, st.QPS.Read = st.QPS.Total, st.QPS.Total
			st.Latency.P95Ms = math.Round(st.Latency.P95Ms/f*1000) / 1000
			st.StartTime = at(time.Duration(ti)*time.Hour + time.Duration(i)*6*time.Minute)
			st.FinishTime = at(time.Duration(ti)*time.Hour + time.Duration(i)*6*time.Minute + 305*time.Second)
			ts.Steps = append(ts.Steps, st)
		}
	}
	return run
}

// Server flavours of serverFixture, as serverstats documents them.
const (
	flavourMySQL57  = "mysql57" // no Rows_read, no redo LSN counter
	flavourMySQL80  = "mysql80" // no Rows_read, no Innodb_lsn_current
	flavourMariaDB  = "mariadb" // no Innodb_rows_*, no Innodb_redo_log_current_lsn, 9 metrics disabled
	fixtureTopWaits = v1alpha1.DefaultTopWaits
)

// fixtureWaitEvents are real event names, each with a wait time that grows differently with the
// thread count, so the top waits change along the ladder. The condition wait is left out by Delta.
var fixtureWaitEvents = []struct {
	event string
	// seconds of wait per second at threads t: a*t + b*t*t/1000
	a, b float64
}{
	{"wait/synch/sxlock/innodb/btr_search_latch", 0.002, 0.4},
	{"wait/synch/mutex/innodb/trx_sys_mutex", 0.004, 0.1},
	{"wait/synch/mutex/innodb/buf_pool_mutex", 0.003, 0.05},
	{"wait/io/file/innodb/innodb_data_file", 0.01, 0},
	{"wait/synch/rwlock/sql/LOCK_grant", 0.0005, 0.02},
	{"wait/synch/mutex/sql/THD::LOCK_thd_data", 0.0008, 0.01},
	{"wait/synch/rwlock/innodb/hash_table_locks", 0.0002, 0.03},
	{"wait/io/file/innodb/innodb_log_file", 0.001, 0},
	{"wait/synch/mutex/innodb/log_sys_mutex", 0.0001, 0.002},
	{"wait/synch/mutex/innodb/fil_system_mutex", 0.0003, 0.001},
	{"wait/synch/mutex/sql/LOCK_table_cache", 0.0001, 0.0005},
	{"wait/synch/mutex/mysys/THR_LOCK_open", 0.00001, 0},
	{"wait/synch/cond/sql/COND_thr_lock", 1, 1},
}

// serverFixture is what a server of the flavour did during a point-select step: snapshots with
// plausible counters for the step's queries, turned into a step by serverstats.Delta as the
// controller does.
func serverFixture(t testing.TB, flavour string, st v1alpha1.StepResult, perfSchema bool) serverstats.Step {
	t.Helper()
	th := float64(st.Threads)
	seconds := st.DurationSeconds + 0.4
	queries := math.Round(st.QPS.Total * st.DurationSeconds)
	q := uint64(queries)
	delta := map[string]uint64{
		"Questions": q, "Queries": q + 4, "Com_select": q,
		"Innodb_rows_read": q, "Rows_read": q + 3, "Handler_read_key": q,
		"Innodb_buffer_pool_reads": q / 40000, "Innodb_buffer_pool_read_requests": 3 * q,
		"Innodb_buffer_pool_pages_flushed": uint64(120 * th),
		"Innodb_data_fsyncs":               301, "Innodb_data_reads": q / 40000, "Innodb_data_writes": 602,
		"Innodb_os_log_written": 153600, "Innodb_redo_log_current_lsn": 153600, "Innodb_lsn_current": 153600,
		"Created_tmp_tables": 2, "Select_scan": 2, "Handler_read_rnd_next": 1034,
		"Bytes_received": 61 * q, "Bytes_sent": 203 * q,
		"lock_row_lock_time": 0, "log_write_requests": 300, "log_writes": 300, "os_log_bytes_written": 153600,
		"os_data_fsyncs": 301, "innodb_dblwr_writes": 40, "innodb_dblwr_pages_written": uint64(120 * th),
		"trx_nl_ro_commits": q, "dml_reads": q,
	}
	// The end snapshot comes after the worker threads disconnected: its own connection is running.
	gauges := map[string]uint64{"Threads_running": 1, "Threads_connected": 2, "trx_rseg_history_len": 12}
	lacks := map[string][]string{
		flavourMySQL57: {"Rows_read", "Innodb_redo_log_current_lsn", "Innodb_lsn_current"},
		flavourMySQL80: {"Rows_read", "Innodb_lsn_current"},
		flavourMariaDB: {"Innodb_rows_read", "Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted",
			"Innodb_redo_log_current_lsn", "buffer_flush_batch_total_pages", "trx_rw_commits", "trx_ro_commits",
			"trx_nl_ro_commits", "trx_rollbacks", "dml_reads", "dml_inserts", "dml_updates", "dml_deletes"},
	}[flavour]
	section := func(names []string) (start, end map[string]uint64) {
		start, end = map[string]uint64{}, map[string]uint64{}
		for i, n := range names {
			if slices.Contains(lacks, n) {
				continue
			}
			base := uint64(1_000_000_000 + 7919*i)
			if v, ok := gauges[n]; ok {
				start[n], end[n] = 1, v
				continue
			}
			start[n], end[n] = base, base+delta[n]
		}
		return start, end
	}
	s0, s1 := section(serverstats.StatusNames)
	m0, m1 := section(serverstats.InnoDBMetricNames)
	var w0, w1 []serverstats.WaitTotal
	if perfSchema {
		for i, e := range fixtureWaitEvents {
			perSecond := e.a*th + e.b*th*th/1000
			count := uint64(perSecond*seconds*1000) + 1
			base := uint64(5_000_000 + i)
			w0 = append(w0, serverstats.WaitTotal{Event: e.event, Count: base, SumTimerWait: base * 1000})
			w1 = append(w1, serverstats.WaitTotal{Event: e.event, Count: base + count,
				SumTimerWait: base*1000 + uint64(perSecond*seconds*1e12)})
		}
	}
	unix := float64(t0.Unix())
	start := serverstats.Snapshot{Version: 1, At: serverstats.AtStart, UnixTime: unix, Status: s0, InnoDBMetrics: m0,
		PerformanceSchema: perfSchema, Waits: w0}
	end := serverstats.Snapshot{Version: 1, At: serverstats.AtEnd, UnixTime: unix + seconds, Status: s1, InnoDBMetrics: m1,
		PerformanceSchema: perfSchema, Waits: w1}
	out, err := serverstats.Delta(start, end, queries, fixtureTopWaits)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fixtureFlavour is the server flavour and performance_schema setting of fixtureRun's targets:
// mysql57 runs with performance_schema = OFF (its myCnf), ps80 with it on; other targets are
// MySQL 8.0 with it on.
func fixtureFlavour(target string) (string, bool) {
	if target == "mysql57" {
		return flavourMySQL57, false
	}
	return flavourMySQL80, true
}

// storedServer encodes server counters for every finished step of run, as the controller stores
// them, into stored.
func storedServer(t testing.TB, run *v1alpha1.BenchmarkRun, stored map[string]string) map[string]string {
	t.Helper()
	for _, ts := range run.Status.Targets {
		flavour, ps := fixtureFlavour(ts.Name)
		for _, st := range ts.Steps {
			s, err := EncodeServer(serverFixture(t, flavour, st, ps))
			if err != nil {
				t.Fatal(err)
			}
			stored[ServerKey(ts.Name, st.Threads, st.RepetitionOrDefault())] = s
		}
	}
	return stored
}
