package metrics

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

func TestRecordComparison(t *testing.T) {
	ns := "comparison"
	tests := []struct {
		schedule                string
		c                       v1.Comparison
		wantRegressed, wantComp float64
	}{
		{"nightly", v1.Comparison{Verdict: v1.VerdictRegressed, RegressedCells: 3, InconclusiveCells: 5, NoChangeCells: 16, ComparedCells: 24}, 3, 24},
		// A newer comparison replaces the values, it does not add to them.
		{"nightly", v1.Comparison{Verdict: v1.VerdictNoRegression, NoChangeCells: 20, ComparedCells: 20}, 0, 20},
		{"weekly", v1.Comparison{Verdict: v1.VerdictNoBaseline}, 0, 0},
	}
	for _, tt := range tests {
		RecordComparison(ns, tt.schedule, tt.c)
		// What the comparison found, confirmed or not, is by verdict; the regressed gauges are
		// RecordRegressions' alone.
		if got := testutil.ToFloat64(verdictCells.WithLabelValues(ns, tt.schedule, "Regressed")); got != tt.wantRegressed {
			t.Errorf("%s Regressed cells = %v, want %v", tt.schedule, got, tt.wantRegressed)
		}
		if got := testutil.ToFloat64(regressedCells.WithLabelValues(ns, tt.schedule)); got != 0 {
			t.Errorf("%s: mysqlbench_schedule_regressed_cells = %v from a comparison that no confirmation decided, want 0", tt.schedule, got)
		}
		if got := testutil.ToFloat64(comparedCells.WithLabelValues(ns, tt.schedule)); got != tt.wantComp {
			t.Errorf("%s compared = %v, want %v", tt.schedule, got, tt.wantComp)
		}
	}
	if got := testutil.ToFloat64(verdictCells.WithLabelValues(ns, "nightly", "NoChange")); got != 20 {
		t.Errorf("nightly NoChange cells = %v, want 20 (the newest comparison: all 20 unchanged)", got)
	}
	RecordComparison(ns, "inc", v1.Comparison{Verdict: v1.VerdictInconclusive, InconclusiveCells: 4, ComparedCells: 4})
	for verdict, want := range map[string]float64{"Regressed": 0, "Improved": 0, "NoChange": 0, "Inconclusive": 4} {
		if got := testutil.ToFloat64(verdictCells.WithLabelValues(ns, "inc", verdict)); got != want {
			t.Errorf("inc %s cells = %v, want %v", verdict, got, want)
		}
	}
	RecordRegressions(ns, "nightly", 0, 0)
	RecordRegressions(ns, "weekly", 0, 0)
	RecordRegressions(ns, "inc", 1, 3)
	if c, tg := testutil.ToFloat64(regressedCells.WithLabelValues(ns, "inc")), testutil.ToFloat64(regressedTargets.WithLabelValues(ns, "inc")); c != 3 || tg != 1 {
		t.Errorf("inc regressed cells %v, targets %v; want 3 and 1", c, tg)
	}
	RecordHistory(ns, "inc", v1.History{RegressedCells: 2})
	if got := testutil.ToFloat64(shiftedCells.WithLabelValues(ns, "inc")); got != 2 {
		t.Errorf("inc shifted cells = %v, want 2", got)
	}
	ForgetSchedule(ns, "inc")
	for _, name := range []string{"mysqlbench_schedule_regressed_cells", "mysqlbench_schedule_regressed_targets", "mysqlbench_schedule_compared_cells"} {
		if n := len(series(t, ns, name)); n != 2 {
			t.Errorf("%s: %d series, want 2 (nightly, weekly)", name, n)
		}
	}
}

func TestForgetSchedule(t *testing.T) {
	ns, other := "forget-schedule", "forget-schedule-other"
	timed := step(8, 1000, 50, 2)
	timed.StartTime, timed.FinishTime = &metav1.Time{Time: time.Unix(0, 0)}, &metav1.Time{Time: time.Unix(90, 0)}
	populate := func(namespace, schedule, run string) {
		r := mkRun(namespace, run, schedule)
		RecordStep(r, "mysql80", "8.0.36", timed)
		RecordStep(r, "mysql84", "8.4.0", step(16, 2000, 100, 3))
		RecordOutcome(r, v1.RunSucceeded)
		RecordOutcome(r, v1.RunFailed)
		if schedule != "" {
			RecordComparison(namespace, schedule, v1.Comparison{RegressedCells: 1, ComparedCells: 2})
			RecordRegressions(namespace, schedule, 1, 1)
		}
	}
	populate(ns, "nightly", "nightly-1")
	populate(ns, "weekly", "weekly-1")
	populate(ns, "", "adhoc")
	populate(other, "nightly", "nightly-1")

	families := []string{
		"mysqlbench_step_qps", "mysqlbench_step_tps", "mysqlbench_step_latency_p95_seconds",
		"mysqlbench_runs_total", "mysqlbench_step_duration_seconds",
		"mysqlbench_schedule_regressed_cells", "mysqlbench_schedule_regressed_targets", "mysqlbench_schedule_compared_cells",
	}
	count := func(namespace, schedule, family string) int {
		n := 0
		for _, m := range series(t, namespace, family) {
			if labels(m)[LabelSchedule] == schedule {
				n++
			}
		}
		return n
	}
	for _, f := range families {
		if count(ns, "nightly", f) == 0 {
			t.Fatalf("%s has no nightly series before ForgetSchedule", f)
		}
	}

	ForgetSchedule(ns, "nightly")
	for _, f := range families {
		if n := count(ns, "nightly", f); n != 0 {
			t.Errorf("%s: %d nightly series left after ForgetSchedule", f, n)
		}
		if count(ns, "weekly", f) == 0 {
			t.Errorf("%s: the other schedule's series were removed", f)
		}
		if count(other, "nightly", f) == 0 {
			t.Errorf("%s: the same schedule's series in another namespace were removed", f)
		}
		if strings.HasPrefix(f, "mysqlbench_schedule_") {
			continue // standalone runs have no comparison
		}
		if count(ns, "", f) == 0 {
			t.Errorf("%s: the standalone run's series were removed", f)
		}
	}

	mu.Lock()
	_, remembered := shown[[2]string{ns, "nightly"}]
	_, otherKept := shown[[2]string{ns, "weekly"}]
	mu.Unlock()
	if remembered || !otherKept {
		t.Errorf("shown run remembered for the forgotten schedule: %v, for the other schedule: %v; want false, true", remembered, otherKept)
	}

	// A schedule created again under the same name exports afresh.
	populate(ns, "nightly", "nightly-1")
	if n := count(ns, "nightly", "mysqlbench_step_qps"); n != 2 {
		t.Errorf("%d qps series for the re-created schedule, want 2", n)
	}
	if got := testutil.ToFloat64(runsTotal.WithLabelValues(ns, "nightly", "succeeded")); got != 1 {
		t.Errorf("runs_total for the re-created schedule = %v, want 1 (counted from zero)", got)
	}
}

// A queue decision is counted under its outcome, its time in seconds.
func TestObserveQueueDecision(t *testing.T) {
	hist := func(outcome string) *dto.Histogram {
		mfs, err := ctrlmetrics.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != "mysqlbench_queue_decision_seconds" {
				continue
			}
			for _, m := range mf.GetMetric() {
				if labels(m)[LabelOutcome] == outcome {
					return m.GetHistogram()
				}
			}
		}
		return &dto.Histogram{}
	}
	admitted, queued := hist(QueueAdmitted), hist(QueueQueued)
	ObserveQueueDecision(QueueQueued, 3*time.Millisecond)
	ObserveQueueDecision(QueueQueued, time.Millisecond)
	ObserveQueueDecision(QueueAdmitted, 300*time.Microsecond)
	gotQ, gotA := hist(QueueQueued), hist(QueueAdmitted)
	if n := gotQ.GetSampleCount() - queued.GetSampleCount(); n != 2 {
		t.Errorf("%d queued decisions counted, want 2", n)
	}
	if d := gotQ.GetSampleSum() - queued.GetSampleSum(); math.Abs(d-0.004) > 1e-9 {
		t.Errorf("queued decisions took %v s in all, want 0.004", d)
	}
	if n := gotA.GetSampleCount() - admitted.GetSampleCount(); n != 1 {
		t.Errorf("%d admitted decisions counted, want 1", n)
	}
	// 300 µs counts in the buckets up to 400 µs and above, not in those up to 200 µs and below.
	for _, b := range gotA.GetBucket() {
		before := uint64(0)
		for _, ob := range admitted.GetBucket() {
			if ob.GetUpperBound() == b.GetUpperBound() {
				before = ob.GetCumulativeCount()
			}
		}
		want := uint64(0)
		if b.GetUpperBound() >= 300e-6 {
			want = 1
		}
		if got := b.GetCumulativeCount() - before; got != want {
			t.Errorf("bucket le=%g counted %d more, want %d", b.GetUpperBound(), got, want)
		}
	}
}
