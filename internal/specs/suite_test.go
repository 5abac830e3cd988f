package specs

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
)

// suiteRun measures a read and a write workload on one data shape, twice, with a warm-up.
func suiteRun() *v1.BenchmarkRun {
	return &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"},
		Spec: v1.BenchmarkRunSpec{
			Workloads: []v1.NamedWorkload{
				{Name: "upd", Script: "oltp_update_index", Tables: 4, ExtraArgs: []string{"--skip-trx=on"}},
				{Name: "pts", Script: "oltp_point_select", Tables: 4},
			},
			Ladder:      v1.Ladder{Threads: []int32{1, 4}, Warmup: &metav1.Duration{Duration: time.Minute}},
			Repetitions: ptr.To[int32](2),
		},
	}
}

func TestSuiteTargetSteps(t *testing.T) {
	run := suiteRun()
	var names []string
	for _, s := range TargetSteps(run, v1.Target{Name: "x", Engine: v1.EngineExternal}) {
		names = append(names, s.Name)
	}
	// Reads first; the second round's read after the first round's write measures data
	// prepared (and warmed up) again; the cleanup drops the tables of the external server.
	want := []string{"probe", "prepare", "warmup",
		"pts-s01", "pts-s02", "upd-s01", "upd-s02",
		"prepare-5", "warmup-5", "pts-r2s02", "pts-r2s01", "upd-r2s02", "upd-r2s01", "cleanup"}
	if !slices.Equal(names, want) {
		t.Errorf("steps\n got %q\nwant %q", names, want)
	}
}

func TestSuiteStepJobsRunTheirWorkload(t *testing.T) {
	run := suiteRun()
	target := v1.Target{Name: "b", Image: "mariadb:11.8"}
	cases := []struct {
		step   Step
		job    string
		script string
		extra  bool
	}{
		{LadderStepAt(run, 0), "r-b-pts-s01-a0", "oltp_point_select", false},
		{LadderStepAt(run, 2), "r-b-upd-s01-a0", "oltp_update_index", true},
		{PrepareStepAt(run, 4), "r-b-prepare-5-a0", "oltp_point_select", false},
		{WarmupStepAt(run, 4), "r-b-warmup-5-a0", "oltp_point_select", false},
	}
	for _, tc := range cases {
		job, err := StepJob(run, target, tc.step, Attempt{}, "r-b-credentials", "img:1")
		if err != nil {
			t.Fatal(err)
		}
		c := job.Spec.Template.Spec.Containers[0]
		script := ""
		for _, e := range c.Env {
			if e.Name == "MYSQLBENCH_SCRIPT" {
				script = e.Value
			}
		}
		if job.Name != tc.job || !strings.Contains(script, tc.script) || slices.Contains(c.Args, "--skip-trx=on") != tc.extra {
			t.Errorf("step %s: job %s script %q args %q; want job %s script %s", tc.step.Name, job.Name, script, c.Args, tc.job, tc.script)
		}
		if got := job.Labels[LabelStep]; got != tc.step.Name {
			t.Errorf("job %s step label %q", job.Name, got)
		}
		phase, one := PhaseOfLabel(tc.step.Name)
		if one != (tc.step.Load.Phase != load.PhaseRun) || (one && phase != tc.step.Load.Phase) {
			t.Errorf("label %s reads as phase %q (%v)", tc.step.Name, phase, one)
		}
		if w := WorkloadOfLabel(run, tc.step.Name); tc.step.Load.Phase == load.PhaseRun && !strings.Contains(string(w.Script), tc.script) {
			t.Errorf("label %s reads as workload %s", tc.step.Name, w.Name)
		}
	}
}

// A workload named like a phase is still a ladder step's.
func TestPhaseOfLabel(t *testing.T) {
	for label, want := range map[string]bool{"prepare": true, "prepare-13": true, "warmup-2": true, "cleanup": true,
		"prepare-s01": false, "prepare-r2s01": false, "s01": false, "pts-s01": false, "prepare-": false} {
		if _, got := PhaseOfLabel(label); got != want {
			t.Errorf("PhaseOfLabel(%q) = %v, want %v", label, got, want)
		}
	}
}
