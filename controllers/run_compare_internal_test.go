package controllers

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// The comparison's message names the steps it left out for running past their duration, in the
// run and in the baseline, and no more than maxLeftOut of them.
func TestLeftOutNamesTheStepsPastTheirDuration(t *testing.T) {
	runOf := func(name string, over ...int32) *v1.BenchmarkRun {
		r := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name}}
		ts := v1.TargetStatus{Name: "db"}
		for _, th := range []int32{1, 2, 4, 8, 16, 32, 64} {
			s := v1.StepResult{Threads: th, QPS: v1.QPS{Total: 100}, DurationSeconds: 60.01}
			for _, o := range over {
				if o == th {
					s.OverDuration, s.DurationSeconds = true, 75.5
				}
			}
			ts.Steps = append(ts.Steps, s)
		}
		r.Status.Targets = []v1.TargetStatus{ts}
		return r
	}
	for _, tc := range []struct {
		name          string
		run, baseline *v1.BenchmarkRun
		want          string
	}{
		{"none", runOf("new"), runOf("old"), ""},
		{"no baseline", runOf("new", 8), nil, "1 step(s) left out, as they ran past their duration: db@8 of this run (75.500 s)"},
		{"both", runOf("new", 8), runOf("old", 2), "2 step(s) left out, as they ran past their duration: " +
			"db@8 of this run (75.500 s), db@2 of baseline old (75.500 s)"},
		{"many", runOf("new", 1, 2, 4, 8), runOf("old", 16, 32, 64), fmt.Sprintf("7 step(s) left out, as they ran past their "+
			"duration: db@1 of this run (75.500 s), db@2 of this run (75.500 s), db@4 of this run (75.500 s), db@8 of this "+
			"run (75.500 s), db@16 of baseline old (75.500 s) and %d more", 7-maxLeftOut)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := leftOut(tc.run, tc.baseline); got != tc.want {
				t.Errorf("leftOut =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
