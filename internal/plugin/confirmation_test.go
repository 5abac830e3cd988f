package plugin

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// describe shows the confirmation of a run's regression (from its schedule's status), and on a
// confirmation run what it confirms.
func TestDescribeShowsTheConfirmation(t *testing.T) {
	run := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "n-202611220100", Labels: map[string]string{v1.LabelSchedule: "n"}}}
	conf := &v1.Confirmation{Run: run.Name, Baseline: "n-202611210100", State: v1.ConfirmationNotConfirmed,
		ConfirmationRun: "n-c2611220100", Order: v1.OrderInterleaved, Cells: []string{"mysql@8", "mysql@16"},
		Result:  &v1.Comparison{Verdict: v1.VerdictNoRegression, ComparedCells: 2},
		Message: "regression against n-202611210100 not confirmed: ..."}
	var out bytes.Buffer
	if err := describe(&out, run, time.Now(), conf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Confirmation: NotConfirmed", "run n-202611220100 against baseline n-202611210100, re-measured by n-c2611220100 (Interleaved)",
		"cells: mysql@8, mysql@16", "result: OK 0/2", "not confirmed: ..."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("describe lacks %q:\n%s", want, out.String())
		}
	}

	confRun := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "n-c2611220100",
		Labels:      map[string]string{v1.LabelConfirmationOf: "n", v1.LabelConfirms: run.Name},
		Annotations: map[string]string{v1.AnnotationConfirmationBaseline: "n-202611210100"}}}
	out.Reset()
	if err := describe(&out, confRun, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	if want := "Confirms: the regression of n-202611220100 against n-202611210100"; !strings.Contains(out.String(), want) {
		t.Errorf("describe lacks %q:\n%s", want, out.String())
	}
}
