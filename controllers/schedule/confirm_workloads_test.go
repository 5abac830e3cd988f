package schedule

import (
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
)

// suiteTestRun is a finished run of spec.preset whose targets measured every workload at
// threads, rw's QPS times rwFactor(target), five times with a ±0.4 % spread.
func suiteTestRun(name string, targets []v1.Target, threads []int32, rwFactor func(target string) float64) *v1.BenchmarkRun {
	r := &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns",
			Annotations: map[string]string{v1.AnnotationScheduledTime: "2026-11-22T01:00:00Z"}},
		Spec: v1.BenchmarkRunSpec{Targets: targets, Preset: &v1.Preset{Name: v1.PresetSysbenchOLTPMicro, Tables: 2, TableSize: 1000},
			Ladder: v1.Ladder{Threads: threads}, Repetitions: ptr.To[int32](5)},
	}
	for _, t := range targets {
		ts := v1.TargetStatus{Name: t.Name, Phase: v1.TargetSucceeded}
		for k, f := range []float64{1, 1.002, 0.998, 1.004, 0.996} {
			for wi, w := range r.Spec.OrderedWorkloads() {
				for _, th := range threads {
					q := 1000 * float64(wi+1) * f
					if w.Name == "read-write" {
						q *= rwFactor(t.Name)
					}
					ts.Steps = append(ts.Steps, v1.StepResult{Workload: w.Name, Threads: th, Repetition: int32(k + 1), TPS: q,
						QPS: v1.QPS{Total: q}, Latency: v1.Latency{P95Ms: 1 / f}, DurationSeconds: 10})
				}
			}
		}
		r.Status.Targets = append(r.Status.Targets, ts)
	}
	return r
}

// A suite's regression of one workload is confirmed by a run of that workload only, its cells
// named with the workload, and the confirmation pairs that workload's cells with each other.
func TestConfirmationOfASuiteMeasuresTheFlaggedWorkloads(t *testing.T) {
	sched := &v1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ns"},
		Spec: v1.BenchmarkScheduleSpec{Regression: v1.RegressionPolicy{RunToRunCVPercent: new(float64)}}}
	threads := []int32{1, 8}
	slowA := func(target string) float64 {
		if target == "a" {
			return 0.8
		}
		return 1
	}
	baseline := suiteTestRun("nightly-202611210100", targetsNamed("a", "b"), threads, func(string) float64 { return 1 })
	run := suiteTestRun("nightly-202611220100", targetsNamed("a", "b"), threads, slowA)
	res := compare.CompareWith(run, baseline, sched.Spec.Regression, compare.Options{})
	if res.Summary.Verdict != v1.VerdictRegressed {
		t.Fatalf("comparison %+v", res.Summary)
	}
	conf, cells, err := confirmationRun(sched, run, baseline, res, time.Now(), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/read-write@1", "a/read-write@8"}; !reflect.DeepEqual(cells, want) {
		t.Errorf("cells %v, want %v", cells, want)
	}
	if conf.Spec.Preset != nil || len(conf.Spec.Workloads) != 1 || conf.Spec.Workloads[0].Name != "read-write" ||
		conf.Spec.Workloads[0].Script != "oltp_read_write" || conf.Spec.Workloads[0].Tables != 2 {
		t.Errorf("workloads %+v, preset %+v: want read-write alone", conf.Spec.Workloads, conf.Spec.Preset)
	}
	// 2 sides x 1 workload x 2 thread counts: the run's 5 repetitions and more fit.
	if *conf.Spec.Repetitions < 5 {
		t.Errorf("repetitions %d", *conf.Spec.Repetitions)
	}
	rec := &v1.Confirmation{Run: run.Name, Baseline: baseline.Name, Cells: cells}
	for _, tc := range []struct {
		name   string
		factor func(string) float64
		want   v1.ConfirmationState
		words  []string
	}{
		{"found again", func(target string) float64 { return map[string]float64{"a-base": 1, "a": 0.8}[target] },
			v1.ConfirmationConfirmed, []string{"a/read-write at 8 threads: QPS -20.0%", "2 cell(s) (a/read-write@1, a/read-write@8)"}},
		{"both sides alike", func(string) float64 { return 1 }, v1.ConfirmationNotConfirmed, []string{"not confirmed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			finished := suiteTestRun(conf.Name, conf.Spec.Targets, conf.Spec.Ladder.Threads, tc.factor)
			// The confirmation measured read-write only.
			for i := range finished.Status.Targets {
				var steps []v1.StepResult
				for _, s := range finished.Status.Targets[i].Steps {
					if s.Workload == "read-write" {
						steps = append(steps, s)
					}
				}
				finished.Status.Targets[i].Steps = steps
			}
			done := conf.DeepCopy()
			done.Status = finished.Status
			state, msg := concludeConfirmation(rec, done, confirmationResult(done, sched.Spec.Regression))
			if state != tc.want {
				t.Errorf("state %s, want %s: %s", state, tc.want, msg)
			}
			for _, w := range tc.words {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
}

// The budget of a suite's confirmation counts its workloads.
func TestFirstConfirmationRepetitionsCountWorkloads(t *testing.T) {
	run := &v1.BenchmarkRun{Spec: v1.BenchmarkRunSpec{Repetitions: ptr.To[int32](3)}}
	run.Name = "r"
	policy := v1.RegressionPolicy{Confirm: v1.ConfirmPolicy{Repetitions: ptr.To[int32](10)}}
	if reps, err := firstConfirmationRepetitions(policy, run, 4, 10, 4); err != nil || reps != 3 {
		t.Errorf("4 x 10 x 4 steps a round: %d, %v; want 3", reps, err)
	}
	if _, err := firstConfirmationRepetitions(policy, run, 4, 16, 4); err == nil || !strings.Contains(err.Error(), "x 16 workloads x 4 thread counts") {
		t.Errorf("4 x 16 x 4 steps a round: %v", err)
	}
}
