package report

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kptr "k8s.io/utils/ptr"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
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
func intervalsFixture(n int, threads int32) []sysbench.Interval {
	iv := make([]sysbench.Interval, n)
	for i := range iv {
		tps := 10000 + float64((i*7919)%1000) + float64(i%7)/4
		iv[i] = sysbench.Interval{
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
