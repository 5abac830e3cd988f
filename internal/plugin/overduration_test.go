package plugin

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// overDurationRun is a finished run of two targets at 1 and 8 threads, 60 s steps, whose target
// b ran past the step at 8 threads in repetition 2 (or in its only one).
func overDurationRun(reps int32) *v1.BenchmarkRun {
	run := &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"},
		Spec: v1.BenchmarkRunSpec{
			Targets:  []v1.Target{{Name: "a"}, {Name: "b"}},
			Workload: v1.Workload{Script: "oltp_point_select", Tables: 1, TableSize: 1000},
			Ladder:   v1.Ladder{Threads: []int32{1, 8}, StepDuration: &metav1.Duration{Duration: time.Minute}},
		},
		Status: v1.BenchmarkRunStatus{Phase: v1.RunSucceeded},
	}
	if reps > 1 {
		run.Spec.Repetitions = ptr.To(reps)
	}
	for ti, name := range []string{"a", "b"} {
		ts := v1.TargetStatus{Name: name, Phase: v1.TargetSucceeded}
		for i := range run.Spec.StepCount() {
			rung, rep := run.Spec.LadderPosition(i)
			th := run.Spec.Ladder.Threads[rung]
			qps := 1000*float64(th) + 10*float64(rep) + float64(ti)
			s := v1.StepResult{Threads: th, QPS: v1.QPS{Total: qps}, TPS: qps, Latency: v1.Latency{P95Ms: 1}, DurationSeconds: 60.004}
			if reps > 1 {
				s.Repetition = rep
			}
			if name == "b" && th == 8 && rep == min(reps, 2) {
				s.OverDuration, s.DurationSeconds, s.QPS.Total = true, 78.5, 6000
			}
			ts.Steps = append(ts.Steps, s)
		}
		run.Status.Targets = append(run.Status.Targets, ts)
	}
	return run
}

func TestDescribeMarksAStepPastItsDuration(t *testing.T) {
	for _, tc := range []struct {
		name string
		reps int32
		// row8 is the QPS row at 8 threads; legend a phrase of the legend.
		row8, legend string
	}{
		{name: "one repetition", reps: 1, row8: "8 8010 6000 †",
			legend: "the value is the step's own; left out of the statistics and the comparison): b at 8 threads: 78.500 s."},
		{name: "repetitions", reps: 3, row8: "8 8020 [8010, 8030] 8021 [8011, 8031] n=2 †",
			legend: "the cell is the median of its other repetitions; left out of the statistics and the comparison): " +
				"b at 8 threads (repetition 2): 78.500 s."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := describe(&out, overDurationRun(tc.reps), time.Now(), nil); err != nil {
				t.Fatal(err)
			}
			_, rows := section(t, out.String(), "QPS by threads:")
			if got := strings.Join(fields(rows[1]), " "); got != tc.row8 {
				t.Errorf("QPS row at 8 threads %q, want %q", got, tc.row8)
			}
			if _, p95 := section(t, out.String(), "p95 latency (ms) by threads:"); !strings.HasSuffix(p95[1], "†") || strings.Contains(p95[0], "†") {
				t.Errorf("p95 rows %q: want the mark at 8 threads only", p95)
			}
			want := "† ran past its step: sysbench measured longer than the step's 1m0s plus the tolerance of 1s, as an event " +
				"outlasted the step; its rates are not comparable with the others' (" + tc.legend
			if !strings.Contains(out.String(), want) {
				t.Errorf("describe lacks the legend %q:\n%s", want, out.String())
			}
		})
	}
}
