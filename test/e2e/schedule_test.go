//go:build e2e

package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/test/clustertest"
)

// TestScheduleOnARealCluster lets a BenchmarkSchedule fire every minute until its second run has
// been compared with its first: the runs are created by the schedule, measured on the cluster,
// compared cell by cell, and the verdict lands in the schedule's status, the run's status, the
// manager's metrics (the dashboard's schedule panels) and the results database. Deleting the
// schedule deletes its runs. E2E_SCHEDULE_IMAGE (default mariadb:11.8), E2E_STEP (5s).
func TestScheduleOnARealCluster(t *testing.T) {
	if os.Getenv("E2E_SECURITY") == "1" || os.Getenv("E2E_SCHEDULE") == "0" {
		t.Skip("runs in the cluster-wide phase of the e2e suite")
	}
	ctx := context.Background()
	c := newClient(t)
	ns := e2eNamespace(ctx, t, c)
	step := e2eStep(t, "5s")
	image := env("E2E_SCHEDULE_IMAGE", "mariadb:11.8")
	threads := []int32{1, 2}
	sched := &v1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-nightly", Namespace: ns},
		Spec: v1.BenchmarkScheduleSpec{
			Schedule:                   "* * * * *",
			ConcurrencyPolicy:          v1.ConcurrencyForbid,
			SuccessfulRunsHistoryLimit: ptr.To[int32](3),
			FailedRunsHistoryLimit:     ptr.To[int32](1),
			// One repetition gives Inconclusive cells: what is checked is that the comparison
			// happens and is reported, not its verdict; no confirmation runs.
			Regression: v1.RegressionPolicy{Confirm: v1.ConfirmPolicy{Enabled: ptr.To(false)}},
			Template: v1.BenchmarkRunTemplate{Spec: v1.BenchmarkRunSpec{
				Targets:        []v1.Target{{Name: targetName(image), Image: image}},
				Workload:       v1.Workload{Script: "oltp_point_select", Tables: 1, TableSize: 10000},
				Ladder:         v1.Ladder{Threads: threads, StepDuration: &metav1.Duration{Duration: step.Round(time.Second)}},
				SysbenchImage:  os.Getenv("E2E_SYSBENCH_IMAGE"),
				StepRetryLimit: ptr.To[int32](1),
				Cleanup:        v1.CleanupAlways,
			}},
		},
	}
	_ = c.Delete(ctx, sched, client.PropagationPolicy(metav1.DeletePropagationForeground))
	waitScheduleGone(t, c, sched)
	if err := c.Create(ctx, sched); err != nil {
		t.Fatal(err)
	}

	got := &v1.BenchmarkSchedule{}
	deadline := time.Now().Add(15 * time.Minute)
	for {
		if err := c.Get(ctx, client.ObjectKeyFromObject(sched), got); err != nil {
			t.Fatal(err)
		}
		// The first run has nothing to be compared with (NoBaseline); the second has.
		if cmp := got.Status.LastComparison; cmp != nil && cmp.Baseline != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no run compared after 15m: %+v", got.Status)
		}
		time.Sleep(5 * time.Second)
	}
	// No more runs: the rest of the suite needs the database node.
	got.Spec.Suspend = ptr.To(true)
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	cmp := got.Status.LastComparison
	t.Logf("schedule %s: verdict %q, last run %s (%s), comparison %+v", got.Name, got.Status.Verdict, got.Status.LastRun, got.Status.LastRunPhase, *cmp)
	if want := int32(len(threads)); cmp.ComparedCells != want {
		t.Errorf("compared cells %d, want %d (one target x %d thread counts)", cmp.ComparedCells, want, len(threads))
	}
	if got.Status.Verdict == "" || cmp.Verdict == "" {
		t.Errorf("comparison without a verdict: status %q, comparison %q", got.Status.Verdict, cmp.Verdict)
	}

	runs := &v1.BenchmarkRunList{}
	if err := c.List(ctx, runs, client.InNamespace(ns), client.MatchingLabels{v1.LabelSchedule: sched.Name}); err != nil {
		t.Fatal(err)
	}
	var compared *v1.BenchmarkRun
	for i := range runs.Items {
		r := &runs.Items[i]
		if r.Name == cmp.Run {
			compared = r
		}
	}
	if compared == nil || len(runs.Items) < 2 {
		t.Fatalf("runs of the schedule: %d, none named %s", len(runs.Items), cmp.Run)
	}
	if compared.Status.Phase != v1.RunSucceeded || compared.Status.Comparison == nil || compared.Status.Comparison.Baseline != cmp.Baseline {
		t.Errorf("compared run %s: %s, comparison %+v, want Succeeded and compared with %s", compared.Name, compared.Status.Phase, compared.Status.Comparison, cmp.Baseline)
	}

	// The comparison is in the results database with the run it belongs to.
	if clustertest.HasResultsDatabase(t, c) {
		stored := clustertest.WaitStored(t, c, compared, 2*time.Minute)
		rows := clustertest.MustResultsSQL(t, "SELECT r.schedule, c.baseline, c.compared_cells FROM comparisons c JOIN runs r ON r.uid = c.run_uid WHERE c.run_uid = '"+string(stored.UID)+"'")
		if want := strings.Join([]string{sched.Name, cmp.Baseline, "2"}, "\t"); rows != want {
			t.Errorf("results database: comparison of %s is %q, want %q", stored.Name, rows, want)
		}
	}

	// Deleting the schedule deletes its runs (they are owned by it).
	if err := c.Delete(ctx, got, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	waitScheduleGone(t, c, got)
	for i := range runs.Items {
		waitGone(t, c, &runs.Items[i])
	}
}

func waitScheduleGone(t *testing.T, c client.Client, s *v1.BenchmarkSchedule) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		err := c.Get(context.Background(), client.ObjectKeyFromObject(s), &v1.BenchmarkSchedule{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("schedule %s still exists after 5m", s.Name)
		}
		time.Sleep(2 * time.Second)
	}
}
