package run_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// interleavedPool creates a Ready node of its own database pool with the given allocatable
// resources, and returns the pool's name.
func interleavedPool(t *testing.T, cpu, memory string) string {
	t.Helper()
	ctx := context.Background()
	pool := fmt.Sprintf("interleaved-%d", time.Now().UnixNano())
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: pool, Labels: map[string]string{specs.PoolLabel: pool}}}
	if err := k8s.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), node) })
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	if err := k8s.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	return pool
}

func interleavedRun(ns, name, pool string) *v1.BenchmarkRun {
	run := baseRun(ns, name, 1, 2)
	run.Spec.Order = v1.OrderInterleaved
	run.Spec.Repetitions = ptr.To[int32](3)
	run.Spec.Placement.Database.NodeSelector = map[string]string{specs.PoolLabel: pool}
	return run
}

// An interleaved run brings both targets' servers up first, then measures every cell in the
// randomized interleaved order, one step at a time, each target's repetitions paired by round.
func TestInterleavedRunMeasuresTargetsInRandomizedRounds(t *testing.T) {
	ns := newNamespace(t)
	pool := interleavedPool(t, "4", "8Gi")
	startOperator(t, ns, operatorOptions{})
	k := startKubelet(t, ns, succeedAll(t))
	run := interleavedRun(ns, "rmit", pool)
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "rmit", 90*time.Second, "the run to end", finished)
	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("run %s: %+v", got.Status.Phase, got.Status)
	}
	for _, ts := range got.Status.Targets {
		if len(ts.Steps) != 6 {
			t.Fatalf("target %s: %d steps, want 6 (2 thread counts x 3 repetitions)", ts.Name, len(ts.Steps))
		}
	}

	// The Jobs ran in the order the run's UID draws, every target's bring-up first.
	var want []string
	for _, s := range specs.InterleavedOrder(got) {
		want = append(want, specs.JobName(got, s.Target, specs.LadderStepAt(got, s.Step).Name, specs.Attempt{}))
	}
	var ladder []string
	firstLadder, lastBringUp := -1, -1
	for i, name := range k.finished() {
		if slices.Contains(want, name) {
			ladder = append(ladder, name)
			if firstLadder < 0 {
				firstLadder = i
			}
			continue
		}
		for _, step := range []string{specs.StepProbe, specs.StepPrepare, specs.StepWarmup} {
			if strings.Contains(name, "-"+step+"-") {
				lastBringUp = i
			}
		}
	}
	if !slices.Equal(ladder, want) {
		t.Errorf("ladder Jobs ran in the order\n%v\nwant the interleaved order\n%v", ladder, want)
	}
	if lastBringUp > firstLadder {
		t.Errorf("a bring-up Job (probe, prepare or warm-up) ran after the first ladder step: %v", k.finished())
	}
	// Each rung of each round: both targets, one after the other, the same thread count.
	for i := 0; i+1 < len(want); i += 2 {
		a, b := specs.InterleavedOrder(got)[i], specs.InterleavedOrder(got)[i+1]
		if a.Step != b.Step || a.Target == b.Target {
			t.Errorf("slots %d and %d: %+v, %+v, want both targets at the same step", i, i+1, a, b)
		}
	}
}

// The servers of an interleaved run must fit one node of the pool together: a run whose
// targets need more than any node has fails before any server exists, saying what to change.
func TestInterleavedRunThatCannotFitFailsAtOnce(t *testing.T) {
	ns := newNamespace(t)
	pool := interleavedPool(t, "2", "4Gi")
	startOperator(t, ns, operatorOptions{})
	startKubelet(t, ns, succeedAll(t))
	run := interleavedRun(ns, "toobig", pool)
	for i := range run.Spec.Targets {
		run.Spec.Targets[i].Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}}
	}
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "toobig", 30*time.Second, "the run to fail", finished)
	for _, ts := range got.Status.Targets {
		if ts.Phase != v1.TargetFailed || !strings.Contains(ts.Message, "add up to 3 CPU and 2Gi memory, more than any Ready node of the pool can hold") ||
			!strings.Contains(ts.Message, "use order Sequential") {
			t.Errorf("target %s %s: %q", ts.Name, ts.Phase, ts.Message)
		}
	}
	sts := &appsv1.StatefulSetList{}
	if err := k8s.List(context.Background(), sts, client.InNamespace(ns)); err != nil || len(sts.Items) != 0 {
		t.Errorf("%d StatefulSets (%v): nothing may be provisioned for a run that cannot fit", len(sts.Items), err)
	}
}

// Interleaved with serverInstance PerRepetition (what a schedule's confirmation runs use): every
// round measures both targets on new server instances. Each target is replaced at its first step
// of a round, brought up again (probe, prepare, warm-up) while the other waits, and the ladder
// keeps the interleaved order; each step records the instance of its round.
func TestInterleavedRunWithANewInstancePerRound(t *testing.T) {
	ns := newNamespace(t)
	pool := interleavedPool(t, "4", "8Gi")
	startOperator(t, ns, operatorOptions{})
	k := startKubelet(t, ns, succeedAll(t))
	run := interleavedRun(ns, "fresh-rounds", pool)
	run.Spec.ServerInstance = v1.ServerInstancePerRepetition
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The pods each target's server had, by UID, as the run goes.
	uids := map[string]map[string]bool{}
	got := &v1.BenchmarkRun{}
	for deadline := time.Now().Add(120 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		for _, tg := range run.Spec.Targets {
			pod := &corev1.Pod{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: specs.ServerName(run, tg.Name) + "-0"}, pod); err == nil {
				if uids[tg.Name] == nil {
					uids[tg.Name] = map[string]bool{}
				}
				uids[tg.Name][string(pod.UID)] = true
			}
		}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			t.Fatal(err)
		}
		if finished(got) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not finish: %+v", got.Status)
		}
	}
	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("run %s: %+v", got.Status.Phase, got.Status)
	}
	for _, ts := range got.Status.Targets {
		if len(ts.Steps) != 6 {
			t.Fatalf("target %s: %d steps, want 6 (2 thread counts x 3 rounds)", ts.Name, len(ts.Steps))
		}
		for i, s := range ts.Steps {
			if s.Instance != s.Repetition {
				t.Errorf("target %s step %d (round %d) measured instance %d, want %d", ts.Name, i+1, s.Repetition, s.Instance, s.Repetition)
			}
		}
		if ts.ServerRestarts != 0 || ts.Instances != 3 || ts.LastReplacement == nil || ts.LastReplacement.Repetition != 3 {
			t.Errorf("target %s: serverRestarts %d, instances %d, lastReplacement %+v: want 0, 3, round 3",
				ts.Name, ts.ServerRestarts, ts.Instances, ts.LastReplacement)
		}
		if n := len(uids[ts.Name]); n != 3 {
			t.Errorf("target %s's server had %d pods, want 3 (one per round)", ts.Name, n)
		}
	}

	// The ladder kept the interleaved order, and each new instance was brought up after the
	// previous round's steps of every target and before its target's first step of the round.
	// A Job of round r > 1 is its instance's (Attempt.Replaced r).
	rungs := len(got.Spec.Ladder.Threads)
	jobOf := func(s specs.InterleavedSlot) string {
		var a specs.Attempt
		if round := int32(s.Step/rungs + 1); round > 1 {
			a.Replaced = round
		}
		return specs.JobName(got, s.Target, specs.LadderStepAt(got, s.Step).Name, a)
	}
	var want []string
	for _, s := range specs.InterleavedOrder(got) {
		want = append(want, jobOf(s))
	}
	done := k.finished()
	var ladder []string
	for _, name := range done {
		if slices.Contains(want, name) {
			ladder = append(ladder, name)
		}
	}
	if !slices.Equal(ladder, want) {
		t.Errorf("ladder Jobs ran in the order\n%v\nwant the interleaved order\n%v", ladder, want)
	}
	for round := int32(2); round <= 3; round++ {
		for _, tg := range got.Spec.Targets {
			probe := slices.Index(done, specs.JobName(got, tg.Name, specs.StepProbe, specs.Attempt{Replaced: round}))
			if probe < 0 {
				t.Errorf("target %s: no probe of round %d's instance in %v", tg.Name, round, done)
				continue
			}
			first, lastBefore := -1, -1
			for _, s := range specs.InterleavedOrder(got) {
				i := slices.Index(done, jobOf(s))
				if int32(s.Step/rungs+1) == round-1 {
					lastBefore = max(lastBefore, i)
				}
				if s.Target == tg.Name && s.Step == int(round-1)*rungs {
					first = i
				}
			}
			if probe < lastBefore || probe > first {
				t.Errorf("target %s: round %d's instance probed at %d, want after round %d's last step (%d) and before its own first step (%d)",
					tg.Name, round, probe, round-1, lastBefore, first)
			}
		}
	}
}
