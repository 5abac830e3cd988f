package cells

import (
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

func step(threads int32, qps, p95 float64) v1.StepResult {
	return v1.StepResult{Threads: threads, TPS: qps / 10, QPS: v1.QPS{Total: qps}, Latency: v1.Latency{P95Ms: p95}}
}

func TestOfGroupsRepetitionsByThreads(t *testing.T) {
	// Measured as rounds: ascending, then descending.
	steps := []v1.StepResult{step(1, 100, 1), step(4, 400, 2), step(4, 410, 2.2), step(1, 102, 1.1), step(1, 98, 0.9)}
	got := Of(steps)
	if len(got) != 2 || got[0].Threads != 1 || got[1].Threads != 4 {
		t.Fatalf("cells %+v", got)
	}
	if want := []float64{100, 102, 98}; !equal(got[0].QPS, want) {
		t.Errorf("qps at 1 thread %v, want %v in measuring order", got[0].QPS, want)
	}
	if want := []float64{2, 2.2}; !equal(got[1].P95Ms, want) {
		t.Errorf("p95 at 4 threads %v, want %v", got[1].P95Ms, want)
	}
}

func TestOfLeavesOutStepsThatAreNotSamples(t *testing.T) {
	over := step(4, 500, 9)
	over.OverDuration = true
	steps := []v1.StepResult{step(1, 100, 1), over, step(4, 400, 2), step(2, 0, 0), step(4, 420, 2)}
	got := Of(steps)
	if len(got) != 2 || got[0].Threads != 1 || got[1].Threads != 4 {
		t.Fatalf("cells %+v: want 1 and 4 threads, none at 2 (QPS 0)", got)
	}
	if want := []float64{400, 420}; !equal(got[1].QPS, want) {
		t.Errorf("qps at 4 threads %v, want %v: the step past its duration is not a sample", got[1].QPS, want)
	}
	if st := Status(steps); len(st) != 2 || st[1].N != 2 || st[1].QPS.Max != 420 || st[1].P95Ms.Max != 2 {
		t.Errorf("status cells %+v", st)
	}
	if Comparable(over) || Comparable(step(2, 0, 0)) || !Comparable(step(1, 100, 1)) {
		t.Errorf("Comparable: over-duration %v, QPS 0 %v, normal %v", Comparable(over), Comparable(step(2, 0, 0)), Comparable(step(1, 100, 1)))
	}
}

func TestSummarizeAndStatus(t *testing.T) {
	var steps []v1.StepResult
	for _, q := range []float64{100, 101, 99, 102, 98, 100} {
		steps = append(steps, step(8, q, 2))
	}
	steps = append(steps, step(16, 150, 3), step(16, 250, 3)) // noisy
	sums := Summarize(steps)
	if len(sums) != 2 || sums[0].N != 6 || sums[0].QPS.Median != 100 || !sums[0].QPS.CIValid || sums[0].Noisy() {
		t.Errorf("8 threads: %+v", sums[0])
	}
	if !sums[1].Noisy() || sums[1].QPS.CIValid || sums[1].QPS.CILow != 150 || sums[1].QPS.CIHigh != 250 {
		t.Errorf("16 threads: %+v", sums[1])
	}
	st := Status(steps)
	if len(st) != 2 || st[0].N != 6 || st[0].QPS.Median != 100 || st[0].TPS.Median != 10 || st[0].P95Ms.Median != 2 ||
		st[0].QPS.CIConfidence < 0.95 || st[0].QPS.Min != 98 || st[0].QPS.Max != 102 || st[0].QPS.CV <= 0 {
		t.Errorf("status cell %+v", st[0])
	}
	if st[1].QPS.CIConfidence != 0.5 {
		t.Errorf("two repetitions: the range covers the median with 50 %%, got %v", st[1].QPS.CIConfidence)
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// go-tpc's steps: their throughput is tpmC, which the cells hold (as TpmC in the status) instead
// of the QPS they do not have.
func TestTPCCCells(t *testing.T) {
	step := func(threads int32, tpmC float64) v1.StepResult {
		return v1.StepResult{Threads: threads, TPS: tpmC / 60 * 2.2, Latency: v1.Latency{P95Ms: 6},
			TPCC: &v1.TPCCResult{TpmC: tpmC, TpmTotal: tpmC * 2.2}}
	}
	steps := []v1.StepResult{step(1, 20000), step(1, 21000), step(1, 22000), step(4, 50000), step(4, 0)}
	cs := Of(steps)
	if len(cs) != 2 || len(cs[0].QPS) != 3 || cs[0].QPS[1] != 21000 || len(cs[1].QPS) != 1 {
		t.Fatalf("cells %+v: want tpmC as the throughput, the step that measured nothing left out", cs)
	}
	st := Status(steps)
	if st[0].TpmC == nil || st[0].TpmC.Median != 21000 || st[0].QPS != (v1.MetricStats{}) || st[0].Throughput().Median != 21000 {
		t.Errorf("status %+v: want tpmC's median 21000 and no QPS", st[0])
	}
	if Status([]v1.StepResult{{Threads: 1, QPS: v1.QPS{Total: 100}}})[0].TpmC != nil {
		t.Error("a sysbench cell has tpmC")
	}
}
