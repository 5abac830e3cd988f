package report

import (
	"math"
	"strings"
	"testing"

	kptr "k8s.io/utils/ptr"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
)

// suiteRun is the fixture's two targets measuring a read and a write workload, twice: the
// write's steps at two thirds of the read's QPS and half again its latency.
func suiteRun() *v1alpha1.BenchmarkRun {
	run := fixtureRun(-1)
	run.Spec.Workload = v1alpha1.Workload{}
	run.Spec.Workloads = []v1alpha1.NamedWorkload{
		{Name: "rw", Script: "oltp_read_write", Tables: 4, TableSize: 10000},
		{Name: "points", Script: "oltp_point_select", Tables: 4, TableSize: 10000},
	}
	run.Spec.Repetitions = kptr.To[int32](2)
	for ti := range run.Status.Targets {
		ts := &run.Status.Targets[ti]
		single := ts.Steps
		ts.Steps = nil
		for i := range run.Spec.StepCount() {
			_, rung, rep := run.Spec.StepPosition(i)
			st := single[rung]
			st.Workload = run.Spec.WorkloadAt(i).Name
			st.Repetition = rep
			f := 1.0 - 0.01*float64(rep-1)
			if st.Workload == "rw" {
				f *= 2.0 / 3
			}
			st.QPS.Total = round2(st.QPS.Total * f)
			st.TPS, st.QPS.Read = st.QPS.Total, st.QPS.Total
			st.Latency.P95Ms = math.Round(st.Latency.P95Ms/f*1000) / 1000
			ts.Steps = append(ts.Steps, st)
		}
		ts.Cells = cells.Status(ts.Steps)
	}
	return run
}

func TestSuiteGolden(t *testing.T) {
	run := suiteRun()
	data, err := Render(run, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{KeyReportMD, KeyResultsCSV, KeyResultsJSON} {
		assertGolden(t, "suite/"+k, data[k])
	}
	md := data[KeyReportMD]
	// Reads first, whatever the spec's order; each workload its own tables.
	if i, j := strings.Index(md, "## QPS by threads: points"), strings.Index(md, "## QPS by threads: rw"); i < 0 || j < i {
		t.Errorf("report.md has no table per workload with the read first:\n%s", md)
	}
	if !strings.Contains(md, "- points (reads): ") || !strings.Contains(md, "its data is prepared again before it where it follows another workload (written by rw)") {
		t.Errorf("report.md does not say the order and why the data was prepared again:\n%s", md)
	}
	header, _, _ := strings.Cut(data[KeyResultsCSV], "\n")
	if !strings.HasSuffix(header, ",workload") {
		t.Errorf("results.csv header %q does not end with the workload column", header)
	}
	if n := strings.Count(data[KeyResultsCSV], ",points\n"); n != len(run.Status.Targets)*run.Spec.StepCount()/2 {
		t.Errorf("results.csv has %d rows of workload points", n)
	}
}
