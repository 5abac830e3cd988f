package metrics

import (
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
)

// goTPCRun is mkRun of go-tpc, whose throughput gauge is tpmC.
func goTPCRun(namespace, name, schedule string) *v1.BenchmarkRun {
	r := mkRun(namespace, name, schedule)
	r.Spec.Workload.Client = v1.ClientGoTPC
	return r
}

// stepQPS is the throughput gauge of the clients that count queries.
var stepQPS = throughputGauge(load.QPS)

// A go-tpc step's throughput is its tpmC gauge; it exports no QPS of zero.
func TestRecordStepTPCC(t *testing.T) {
	ns := "rs-tpcc"
	run := goTPCRun(ns, "tpcc-1", "")
	s := step(4, 0, 800, 6)
	s.TPCC = &v1.TPCCResult{TpmC: 22316.6}
	RecordStep(run, "mariadb118", "11.8.3-MariaDB", s)
	if ms := series(t, ns, "mysqlbench_step_tpmc"); len(ms) != 1 || ms[0].GetGauge().GetValue() != 22316.6 {
		t.Fatalf("tpmC series = %v, want one with 22316.6", ms)
	}
	if ms := series(t, ns, "mysqlbench_step_qps"); len(ms) != 0 {
		t.Errorf("qps series = %v, want none for go-tpc", ms)
	}
	if ms := series(t, ns, "mysqlbench_step_tps"); len(ms) != 1 || ms[0].GetGauge().GetValue() != 800 {
		t.Errorf("tps series = %v, want 800", ms)
	}
}

// A go-tpc run's tpmC series go with the run and with its schedule, like its QPS would: a
// deleted run or schedule must not leave its tpmC on the dashboard.
func TestForgetTPCC(t *testing.T) {
	ns := "forget-tpcc"
	tpccStep := func(threads int32, tpmC float64) v1.StepResult {
		s := step(threads, 0, 40*float64(threads), 12)
		s.TPCC = &v1.TPCCResult{TpmC: tpmC}
		return s
	}
	standalone := goTPCRun(ns, "tpcc-adhoc", "")
	nightly := goTPCRun(ns, "tpcc-nightly-1", "tpcc-nightly")
	for i, th := range []int32{4, 16} {
		RecordStep(standalone, "mysql84", "8.4.3", tpccStep(th, 21000+float64(i)*18000))
		RecordStep(nightly, "mysql84", "8.4.3", tpccStep(th, 24000+float64(i)*19000))
	}
	if n := len(series(t, ns, "mysqlbench_step_tpmc")); n != 4 {
		t.Fatalf("%d tpmC series, want 4 (2 runs x 2 thread counts)", n)
	}

	ForgetRun(ns, standalone.Name)
	for _, m := range series(t, ns, "mysqlbench_step_tpmc") {
		for _, l := range m.GetLabel() {
			if l.GetName() == LabelRun && l.GetValue() != nightly.Name {
				t.Errorf("series of run %s left after ForgetRun(%s)", l.GetValue(), standalone.Name)
			}
		}
	}
	if n := len(series(t, ns, "mysqlbench_step_tpmc")); n != 2 {
		t.Errorf("%d tpmC series after forgetting the standalone run, want the schedule's 2", n)
	}

	// The schedule's next run replaces its series; forgetting the schedule removes them.
	next := goTPCRun(ns, "tpcc-nightly-2", "tpcc-nightly")
	RecordStep(next, "mysql84", "8.4.3", tpccStep(4, 22500))
	if ms := series(t, ns, "mysqlbench_step_tpmc"); len(ms) != 1 || ms[0].GetGauge().GetValue() != 22500 {
		t.Errorf("tpmC series after the schedule's next run = %v, want its one step (22500)", ms)
	}
	ForgetSchedule(ns, "tpcc-nightly")
	if ms := series(t, ns, "mysqlbench_step_tpmc"); len(ms) != 0 {
		t.Errorf("tpmC series left after ForgetSchedule: %v", ms)
	}
}
