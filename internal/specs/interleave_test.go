package specs

import (
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

func interleavedRun(uid string, targets, threads int, reps int32) *v1.BenchmarkRun {
	r := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r", UID: types.UID("uid-" + uid)}}
	for i := range targets {
		r.Spec.Targets = append(r.Spec.Targets, v1.Target{Name: fmt.Sprint("t", i)})
	}
	for i := range threads {
		r.Spec.Ladder.Threads = append(r.Spec.Ladder.Threads, int32(1<<i))
	}
	r.Spec.Repetitions = &reps
	r.Spec.Order = v1.OrderInterleaved
	return r
}

func TestInterleavedOrder(t *testing.T) {
	run := interleavedRun("a", 3, 4, 5)
	order := InterleavedOrder(run)
	if len(order) != 3*4*5 {
		t.Fatalf("%d slots, want 60", len(order))
	}
	// Every target measures each of its steps exactly once, in its own order.
	next := map[string]int{}
	for _, s := range order {
		if s.Step != next[s.Target] {
			t.Fatalf("target %s measures step %d after %d steps", s.Target, s.Step, next[s.Target])
		}
		next[s.Target]++
	}
	// At each rung of each round every target measures once, back to back, and all of them
	// measure the same thread count there.
	firsts := map[string]int{}
	for g := 0; g < len(order); g += 3 {
		group := order[g : g+3]
		var names []string
		for _, s := range group {
			names = append(names, s.Target)
			if s.Step != group[0].Step {
				t.Fatalf("slots %d-%d mix steps: %+v", g, g+2, group)
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"t0", "t1", "t2"}) {
			t.Fatalf("slots %d-%d: %v, want each target once", g, g+2, names)
		}
		firsts[group[0].Target]++
	}
	// Which target goes first is drawn at random: over 20 rungs each is first sometimes.
	for _, n := range []string{"t0", "t1", "t2"} {
		if firsts[n] == 0 {
			t.Errorf("target %s never goes first in 20 rungs (%v): the order is not randomized", n, firsts)
		}
	}
	// Deterministic for a run, different for another.
	if !slices.Equal(order, InterleavedOrder(interleavedRun("a", 3, 4, 5))) {
		t.Error("the same run gives another order")
	}
	if slices.Equal(order, InterleavedOrder(interleavedRun("b", 3, 4, 5))) {
		t.Error("another run's UID gives the same order")
	}
}

func TestNextInterleaved(t *testing.T) {
	run := interleavedRun("a", 2, 2, 2)
	order := InterleavedOrder(run)
	status := func(phases []v1.TargetPhase, steps []int) {
		run.Status.Targets = nil
		for i, p := range phases {
			ts := v1.TargetStatus{Name: fmt.Sprint("t", i), Phase: p}
			for range steps[i] {
				ts.Steps = append(ts.Steps, v1.StepResult{})
			}
			run.Status.Targets = append(run.Status.Targets, ts)
		}
	}
	for _, tc := range []struct {
		name   string
		phases []v1.TargetPhase
		steps  []int
		want   InterleavedSlot
		ok     bool
	}{
		{"nothing measured", []v1.TargetPhase{v1.TargetRunning, v1.TargetRunning}, []int{0, 0}, order[0], true},
		{"the first slot recorded", []v1.TargetPhase{v1.TargetRunning, v1.TargetRunning}, firstRecorded(order), order[1], true},
		{"a target not measuring yet is skipped", []v1.TargetPhase{v1.TargetWarmingUp, v1.TargetRunning}, []int{0, 0},
			firstOf(order, "t1", 0), true},
		{"a failed target's slots are left out", []v1.TargetPhase{v1.TargetFailed, v1.TargetRunning}, []int{1, 3}, firstOf(order, "t1", 3), true},
		{"all measured", []v1.TargetPhase{v1.TargetRunning, v1.TargetRunning}, []int{4, 4}, InterleavedSlot{}, false},
	} {
		status(tc.phases, tc.steps)
		got, ok := NextInterleaved(run)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: NextInterleaved = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// firstRecorded is the steps recorded when only order[0] was measured.
func firstRecorded(order []InterleavedSlot) []int {
	steps := []int{0, 0}
	steps[int(order[0].Target[1]-'0')] = 1
	return steps
}

func firstOf(order []InterleavedSlot, target string, step int) InterleavedSlot {
	for _, s := range order {
		if s.Target == target && s.Step == step {
			return s
		}
	}
	return InterleavedSlot{}
}
