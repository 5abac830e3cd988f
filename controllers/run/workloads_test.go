package run_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// A run of two workloads, a write listed before a read, with two repetitions: on each target
// the read is measured first in every round, the rounds interleave the workloads, the data is
// prepared once at the start and once again before the second round's read (the write of the
// first round changed it), every step records its workload, and the results name them.
func TestFakeRunOfTwoWorkloads(t *testing.T) {
	w := newFakeWorld(t)
	r := fakeRun("wl", 1, 2)
	r.Spec.Workload = v1.Workload{}
	r.Spec.Workloads = []v1.NamedWorkload{
		{Name: "upd", Client: v1.ClientSysbench, Script: "oltp_update_non_index", Tables: 1, TableSize: 100},
		{Name: "pts", Client: v1.ClientSysbench, Script: "oltp_point_select", Tables: 1, TableSize: 100},
	}
	r.Spec.Repetitions = ptr.To[int32](2)
	run := w.create(r).(*v1.BenchmarkRun)
	succeed := succeedAll(t)
	got := w.drive(run.Name, func(job *batchv1.Job) outcome {
		if phase, ok := specs.PhaseOfLabel(job.Labels[specs.LabelStep]); ok {
			// A prepare before a later step ends like the first one.
			job = job.DeepCopy()
			job.Labels[specs.LabelStep] = string(phase)
		}
		return succeed(job)
	}, "the run to finish", finished)

	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("phase %s, want Succeeded; status %+v", got.Status.Phase, got.Status)
	}
	creates, _, _ := w.counters()
	for _, tg := range run.Spec.Targets {
		ts := targetStatus(got, tg.Name)
		var order []string
		for _, s := range ts.Steps {
			order = append(order, fmt.Sprintf("%s/%d/%d", s.Workload, s.Threads, s.RepetitionOrDefault()))
		}
		want := []string{"pts/1/1", "pts/2/1", "upd/1/1", "upd/2/1", "pts/2/2", "pts/1/2", "upd/2/2", "upd/1/2"}
		if !slices.Equal(order, want) {
			t.Errorf("target %s measured %v, want %v", tg.Name, order, want)
		}
		if ts.PreparedFor != 5 {
			t.Errorf("target %s: preparedFor %d, want 5 (the second round's first step)", tg.Name, ts.PreparedFor)
		}
		// Cells per workload and thread count, workloads in measuring order.
		var cells []string
		for _, c := range ts.Cells {
			cells = append(cells, fmt.Sprintf("%s/%d n=%d", c.Workload, c.Threads, c.N))
		}
		if want := []string{"pts/1 n=2", "pts/2 n=2", "upd/1 n=2", "upd/2 n=2"}; !slices.Equal(cells, want) {
			t.Errorf("target %s cells %v, want %v", tg.Name, cells, want)
		}
		for _, job := range []string{"prepare-a0", "prepare-5-a0", "warmup-5-a0", "pts-s01-a0", "upd-r2s02-a0"} {
			name := "Job/" + specs.JobName(run, tg.Name, strings.TrimSuffix(job, "-a0"), specs.Attempt{})
			want := 1
			if strings.HasPrefix(job, "warmup") {
				want = 0 // the run has no warm-up
			}
			if creates[name] != want {
				t.Errorf("%s created %d times, want %d", name, creates[name], want)
			}
		}
	}
	if again := withReason(w.allEvents(), "DataPreparedAgain"); len(again) != 2 ||
		!strings.Contains(again[0], "before workload pts (step 5/8 (pts, 2 threads, repetition 2/2)): written by upd") {
		t.Errorf("DataPreparedAgain Events %v, want one per target naming the workload, the step and why", again)
	}
	cm := &corev1.ConfigMap{}
	if !w.exists(cm, specs.ResultsConfigMapName(run)) {
		t.Fatal("no results ConfigMap")
	}
	var doc struct {
		Targets []struct {
			Steps []struct {
				Workload string `json:"workload"`
			} `json:"steps"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(cm.Data["results.json"]), &doc); err != nil {
		t.Fatal(err)
	}
	for _, tr := range doc.Targets {
		for _, s := range tr.Steps {
			if s.Workload != "pts" && s.Workload != "upd" {
				t.Errorf("results.json step without its workload: %+v", s)
			}
		}
	}
}
