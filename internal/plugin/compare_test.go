package plugin

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
)

func TestCompareShowsTheDeltasAndVerdicts(t *testing.T) {
	needCluster(t)
	// The fixture's runs differ by their repetitions only: no run-to-run allowance.
	out, _, err := kubectlMysqlbench(t, "compare", "base", "cand", "--run-to-run-cv", "0")
	if err != nil {
		t.Fatal(err)
	}
	cand, base := getRun(t, nsBench, "cand"), getRun(t, nsBench, "base")
	res := compare.Compare(cand, base, v1.RegressionPolicy{RunToRunCVPercent: ptr.To(0.0)})
	if !strings.Contains(out, "Verdict: "+compare.Short(res.Summary)+": "+res.Summary.Message) {
		t.Errorf("no verdict line %q", compare.Short(res.Summary))
	}
	if res.Summary.Verdict != v1.VerdictRegressed {
		t.Fatalf("the fixture's verdict is %s, want Regressed", res.Summary.Verdict)
	}
	// The target regressed as a whole (its geometric mean over both thread counts); each cell
	// row carries its test's p, the q adjusted over its target's cells and the repetitions.
	if row := lineStarting(out, "mariadb-psoff", "geomean"); !strings.Contains(row, "-10.6% [") || !strings.Contains(row, "Regressed") {
		t.Errorf("the regressed target's geomean row %q lacks -10.6%% with its interval and Regressed", row)
	}
	if row := lineStarting(out, "mariadb-psoff", "2"); !strings.Contains(row, " n=4+4)") || !strings.Contains(row, "(p") {
		t.Errorf("the cell row %q: want p and n", row)
	}
	if !strings.Contains(out, "Regressed:\n  "+compare.DescribeTarget(res.Summary.Metric, res.Summary.Targets[1])) {
		t.Errorf("the regressed target is not named as the operator names it")
	}
	if n := strings.Count(out, "\nmariadb"); n != len(res.Cells)+len(res.Targets) {
		t.Errorf("%d rows, want one per cell and a geomean row per target (%d)", n, len(res.Cells)+len(res.Targets))
	}

	// -o markdown is comparison.md as the operator renders it.
	md, _, err := kubectlMysqlbench(t, "compare", "base", "cand", "-o", "markdown", "--run-to-run-cv", "0")
	if err != nil {
		t.Fatal(err)
	}
	if md != compare.Markdown(res) {
		t.Errorf("-o markdown differs from compare.Markdown:\n%s\nwant\n%s", md, compare.Markdown(res))
	}

	// --exit-code: 2 for a regression, as mysqlbench-compare.
	_, _, err = kubectlMysqlbench(t, "compare", "base", "cand", "--exit-code", "--run-to-run-cv", "0")
	var code exitCode
	if !errors.As(err, &code) || code != 2 {
		t.Errorf("--exit-code: %v, want exit status 2", err)
	}
}

func TestCompareTargetRestrictsTheCells(t *testing.T) {
	needCluster(t)
	out, _, err := kubectlMysqlbench(t, "compare", "base", "cand", "--target", "mariadb")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "mariadb-psoff") || lineStarting(out, "mariadb", "1") == "" || lineStarting(out, "mariadb", "2") == "" {
		t.Errorf("--target mariadb: want the rows of mariadb only")
	}
	if strings.Contains(out, "Verdict: Regressed") {
		t.Errorf("--target mariadb: the regression of mariadb-psoff counts")
	}
	_, _, err = kubectlMysqlbench(t, "compare", "base", "cand", "--target", "mysql84")
	if err == nil || !strings.Contains(err.Error(), `no target "mysql84"`) || !strings.Contains(err.Error(), "mariadb, mariadb-psoff") {
		t.Errorf("--target mysql84: %v, want the targets listed", err)
	}
}

// Stricter thresholds from the flags change the verdict the same way they change the operator's.
func TestCompareFlagsOverrideThePolicy(t *testing.T) {
	needCluster(t)
	out, _, err := kubectlMysqlbench(t, "compare", "base", "cand", "--qps-drop", "25", "--p95-rise", "40")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "Verdict: Regressed") || !strings.Contains(out, "QPS -25 % or p95 +40 %") {
		t.Errorf("a 20 %% drop under a 25 %% threshold still regressed, or the policy is not shown")
	}
}

// A scheduled run is compared under its schedule's spec.regression, as the operator compares it.
func TestComparePolicyIsTheSchedules(t *testing.T) {
	sched := &v1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ns", UID: "sched-uid"},
		Spec:       v1.BenchmarkScheduleSpec{Regression: v1.RegressionPolicy{QPSDropPercent: ptr.To(25.0)}},
	}
	owned := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "nightly-202611230200", Namespace: "ns",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sched, v1.GroupVersion.WithKind("BenchmarkSchedule"))}}}
	orphan := owned.DeepCopy()
	orphan.OwnerReferences[0].UID = "another-schedule-of-that-name"
	e := &env{client: crClient{fake.NewClientBuilder().WithScheme(Scheme).WithObjects(sched).Build()}}
	for _, c := range []struct {
		run    *v1.BenchmarkRun
		qps    float64
		source string
	}{
		{owned, 25, "schedule nightly's spec.regression"},
		{orphan, v1.DefaultQPSDropPercent, "the operator's defaults (schedule nightly is gone)"},
		{&v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "adhoc", Namespace: "ns"}}, v1.DefaultQPSDropPercent, "the operator's defaults"},
	} {
		policy, source, err := e.policy(context.Background(), c.run)
		if err != nil || policy.QPSDropPercentOrDefault() != c.qps || source != c.source {
			t.Errorf("%s: policy %+v from %q (%v), want QPS drop %v from %q", c.run.Name, policy, source, err, c.qps, c.source)
		}
	}
}

// tpccCompareRun is a go-tpc run of one target at 4 and 16 clients, 7 repetitions each: tpmC
// per cell times a small spread whose median is 1, new-order p95 held still.
func tpccCompareRun(name string, tpmC map[int32]float64) *v1.BenchmarkRun {
	spread := []float64{1, 0.99, 1.01, 0.985, 1.015, 0.98, 1.02}
	r := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	r.Spec.Workload = v1.Workload{Client: v1.ClientGoTPC, TPCC: &v1.TPCCWorkload{Warehouses: 20}}
	ts := v1.TargetStatus{Name: "mysql84"}
	for _, threads := range []int32{4, 16} {
		for k, f := range spread {
			tpm := tpmC[threads] * f
			ts.Steps = append(ts.Steps, v1.StepResult{
				Threads: threads, Repetition: int32(k + 1), TPS: tpm * 2.2 / 60,
				Latency: v1.Latency{P95Ms: 14 + float64(threads)},
				TPCC:    &v1.TPCCResult{TpmC: tpm, TpmTotal: tpm * 2.2},
			})
		}
	}
	r.Status.Targets = []v1.TargetStatus{ts}
	return r
}

// The terminal comparison of go-tpc runs names tpmC, the metric compare judged, in its policy
// line, its columns and the regressed cell.
func TestWriteComparisonTPCC(t *testing.T) {
	base := tpccCompareRun("tpcc-1", map[int32]float64{4: 21500, 16: 48200})
	cand := tpccCompareRun("tpcc-2", map[int32]float64{4: 21400, 16: 38600}) // -20 % at 16 clients
	res := compare.Compare(cand, base, v1.RegressionPolicy{RunToRunCVPercent: ptr.To(0.0)})
	if res.Summary.Metric != "tpmC" || res.Summary.Verdict != v1.VerdictRegressed {
		t.Fatalf("the fixture's comparison: metric %q, verdict %s; want tpmC, Regressed", res.Summary.Metric, res.Summary.Verdict)
	}
	var b strings.Builder
	if err := writeComparison(&b, res, "defaults", nil); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"regressed at tpmC -5 % or p95 +10 % (medians)",
		"OLD TPMC",
		"NEW TPMC",
		"Regressed:\n  " + compare.DescribeTarget(res.Summary.Metric, res.Summary.Targets[0]),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "QPS") {
		t.Errorf("a go-tpc comparison mentions QPS:\n%s", out)
	}
	if row := lineStarting(out, "mysql84", "16"); !strings.Contains(row, "48200") || !strings.Contains(row, "38600") || !strings.Contains(row, "-19.") {
		t.Errorf("the 16-client row %q lacks the medians 48200 and 38600 and their change", row)
	}
}
