package pool

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/builtin"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// The holders and waiters of a pool, from what the reconciler listed: a StatefulSet counts only
// as the server of a run that controls it and whose status says the target holds it; a target
// past Pending holds a node before its StatefulSet shows; a released server's pod holds its node
// until it is gone; runs wait in the order they were created; the run reconciled counts with its
// newest status.
func TestUsers(t *testing.T) {
	at := time.Date(2026, 11, 5, 2, 0, 0, 0, time.UTC)
	run := func(name string, created time.Duration, phase v1.TargetPhase, released bool) v1.BenchmarkRun {
		r := v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid"),
			CreationTimestamp: metav1.NewTime(at.Add(created))},
			Spec: v1.BenchmarkRunSpec{Targets: []v1.Target{{Name: "db"}}}}
		if phase != "" {
			r.Status.Targets = []v1.TargetStatus{{Name: "db", Phase: phase, Released: released}}
		}
		return r
	}
	server := func(r *v1.BenchmarkRun, uid types.UID) appsv1.StatefulSet {
		sts := appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: specs.ServerName(r, "db"),
			Labels:          map[string]string{specs.LabelTarget: "db"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "BenchmarkRun", Name: r.Name, UID: uid, Controller: ptr.To(true)}}}}
		sts.Spec.Template.Labels = map[string]string{specs.LabelComponent: specs.ComponentServer}
		sts.Spec.Template.Spec.NodeSelector = specs.DatabasePlacement(r).NodeSelector
		return sts
	}
	lingering := func(r *v1.BenchmarkRun, node string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: specs.ServerName(r, "db") + "-0",
			Labels:          map[string]string{specs.LabelRun: specs.LabelValue(r.Name), specs.LabelTarget: "db"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "StatefulSet", Name: specs.ServerName(r, "db"), Controller: ptr.To(true)}}},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	// The turns of a run whose targets take turns: its first target that has not finished.
	turns := func(r *v1.BenchmarkRun) []Turn {
		for i := range r.Spec.Targets {
			var ts *v1.TargetStatus
			for j := range r.Status.Targets {
				if r.Status.Targets[j].Name == r.Spec.Targets[i].Name {
					ts = &r.Status.Targets[j]
				}
			}
			if ts == nil || !ts.Phase.Finished() {
				return []Turn{{Target: &r.Spec.Targets[i], Status: ts}}
			}
		}
		return nil
	}

	running := run("running", 0, v1.TargetRunning, false)
	forged := run("forged", time.Second, v1.TargetRunning, false)
	provisioning := run("provisioning", 2*time.Second, v1.TargetProvisioning, false)
	released := run("released", 3*time.Second, v1.TargetSucceeded, true)
	late := run("late", 5*time.Second, "", false)
	early := run("early", 4*time.Second, v1.TargetPending, false)
	shared := run("shared", time.Second, "", false)
	shared.Spec.Placement.Database.Exclusive = ptr.To(false)
	done := run("done", time.Second, v1.TargetSucceeded, true)
	done.Status.Phase = v1.RunSucceeded
	self := run("self", 6*time.Second, "", false) // listed before its first transition

	newest := self.DeepCopy()
	newest.Status.Targets = []v1.TargetStatus{{Name: "db", Phase: v1.TargetProvisioning}}
	runs := []v1.BenchmarkRun{late, running, forged, provisioning, released, early, shared, done, self}
	stss := &appsv1.StatefulSetList{Items: []appsv1.StatefulSet{server(&running, running.UID), server(&forged, "someone-else"),
		server(&released, released.UID)}}
	stss.Items[2].DeletionTimestamp = ptr.To(metav1.NewTime(at)) // its teardown has begun
	// The builtin engine finds its servers among the listed StatefulSets, as the reconciler asks
	// it to (engine.ListHoldings), over the same runs.
	l := Listed{
		Runs:    runs,
		Self:    newest,
		Turns:   turns,
		Servers: builtin.Describer{}.Holdings(stss, Runs(runs, newest)),
		Pods:    []corev1.Pod{lingering(&released, "n1")},
	}
	holders, waiting := Users(Name(specs.DatabasePlacement(&running).NodeSelector), l)

	var why []string
	for _, h := range holders {
		why = append(why, h.Why)
	}
	want := []string{
		"ns/forged (target db, running)",
		"ns/provisioning (target db, provisioning)",
		"ns/released (target db, its released server pod " + specs.ServerName(&released, "db") + "-0 still on node n1)",
		"ns/running (target db, StatefulSet " + specs.ServerName(&running, "db") + ")",
		"ns/self (target db, provisioning)",
	}
	if !slices.Equal(why, want) {
		t.Errorf("holders\n%q\nwant\n%q", why, want)
	}
	var names []string
	for _, w := range waiting {
		names = append(names, w.Run)
	}
	if want := []string{"ns/early", "ns/late"}; !slices.Equal(names, want) {
		t.Errorf("waiting %v, want %v (oldest first; not the finished run, nor the one that needs no node of its own)", names, want)
	}
}

// A run holds a server from the moment a target leaves Pending until the target's end is released.
func TestHeld(t *testing.T) {
	r := &v1.BenchmarkRun{Status: v1.BenchmarkRunStatus{Targets: []v1.TargetStatus{
		{Name: "a", Phase: v1.TargetSucceeded, Released: true},
		{Name: "b", Phase: v1.TargetFailed},
		{Name: "c", Phase: v1.TargetRunning},
		{Name: "d", Phase: v1.TargetPending},
		{Name: "e"},
	}}}
	if got := Held(r); got != 2 {
		t.Errorf("Held = %d, want 2 (b not released, c running)", got)
	}
}

// Kept: the cleanup policy keeps a finished target's server (Never: every one; OnSuccess, the
// default: a failed one's; Always: none).
func TestKept(t *testing.T) {
	for _, tc := range []struct {
		cleanup v1.CleanupPolicy
		phase   v1.TargetPhase
		want    bool
	}{
		{v1.CleanupNever, v1.TargetSucceeded, true},
		{v1.CleanupAlways, v1.TargetFailed, false},
		{"", v1.TargetFailed, true},
		{"", v1.TargetSucceeded, false},
		{v1.CleanupNever, v1.TargetRunning, false},
	} {
		r := &v1.BenchmarkRun{Spec: v1.BenchmarkRunSpec{Cleanup: tc.cleanup},
			Status: v1.BenchmarkRunStatus{Targets: []v1.TargetStatus{{Name: "db", Phase: tc.phase}}}}
		if got := Kept(r, "db"); got != tc.want {
			t.Errorf("cleanup %q, target %s: Kept = %v, want %v", tc.cleanup, tc.phase, got, tc.want)
		}
	}
}
