package scheduled

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// A pinned baseline may name only Secrets and ConfigMaps the template names too; the schedule's
// own runs (the default baseline) are not checked: they carried the template's references.
func TestBaselineRefusal(t *testing.T) {
	sched := &v1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ns"}}
	sched.Spec.Template.Spec.Targets = []v1.Target{{Name: "db", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "team-db"}}}
	sched.Spec.Template.Spec.Workload.CustomScript = &v1.ConfigMapKeySelector{Name: "team-lua", Key: "bench.lua"}
	baseline := func(secret, script string) *v1.BenchmarkRun {
		r := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "release", Namespace: "ns"}}
		r.Spec.Targets = []v1.Target{{Name: "db", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: secret}}}
		if script != "" {
			r.Spec.Workload.CustomScript = &v1.ConfigMapKeySelector{Name: script, Key: "bench.lua"}
		}
		return r
	}
	for _, tc := range []struct {
		name     string
		baseline *v1.BenchmarkRun
		want     []string // empty: accepted
	}{
		{"the template's own references", baseline("team-db", "team-lua"), nil},
		{"fewer references", baseline("team-db", ""), nil},
		{"another Secret", baseline("prod-db", "team-lua"),
			[]string{"spec.regression.baselineRun release names Secret prod-db (target db's secretRef), which spec.template does not name"}},
		{"another ConfigMap and Secret", baseline("prod-db", "their-lua"),
			[]string{"Secret prod-db (target db's secretRef), ConfigMap their-lua (workload.customScript)", "remove baselineRun"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := baselineRefusal(sched, tc.baseline)
			if len(tc.want) == 0 && got != "" {
				t.Errorf("refused: %s", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("refusal %q lacks %q", got, w)
				}
			}
		})
	}
	// Only the pinned baseline is checked.
	if got := PinnedBaselineRefusal(sched, baseline("prod-db", "")); got != "" {
		t.Errorf("the previous run (no baselineRun) refused: %s", got)
	}
	sched.Spec.Regression.BaselineRun = "release"
	if got := PinnedBaselineRefusal(sched, baseline("prod-db", "")); got == "" {
		t.Error("the pinned baseline naming another Secret was accepted")
	}
}

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
			if got := LeftOut(tc.run, tc.baseline); got != tc.want {
				t.Errorf("LeftOut =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// A scheduled run gets a new server per repetition unless its template says otherwise or the
// combination cannot work.
func TestScheduledServerInstance(t *testing.T) {
	spec := func(reps int32, mode v1.ServerInstanceMode, order v1.RunOrder, engines ...v1.Engine) v1.BenchmarkRunSpec {
		s := v1.BenchmarkRunSpec{Repetitions: ptr.To(reps), ServerInstance: mode, Order: order}
		for i, e := range engines {
			s.Targets = append(s.Targets, v1.Target{Name: fmt.Sprint("t", i), Engine: e})
		}
		return s
	}
	for _, c := range []struct {
		name string
		spec v1.BenchmarkRunSpec
		want v1.ServerInstanceMode
	}{
		{"repetitions on builtin servers", spec(5, "", "", v1.EngineBuiltin, ""), v1.ServerInstancePerRepetition},
		{"the template says Shared", spec(5, v1.ServerInstanceShared, "", v1.EngineBuiltin), v1.ServerInstanceShared},
		{"one repetition: nothing to replace", spec(1, "", "", v1.EngineBuiltin), ""},
		{"interleaved pairs on shared instances", spec(5, "", v1.OrderInterleaved, v1.EngineBuiltin), ""},
		{"an external server cannot be replaced", spec(5, "", "", v1.EngineBuiltin, v1.EngineExternal), ""},
	} {
		if got := ServerInstance(c.spec); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
