package run_test

import (
	"strings"
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/steplog"
)

// A step whose pod log is longer than steplog.MaxBytes (something besides the reporter printed to
// it) keeps its result, from the termination message, but its log is not read: a Warning names
// the step and the cap, the other steps keep their series, and the run succeeds.
func TestAStepLogPastTheCapIsNotRead(t *testing.T) {
	w, run := startLadder(t, "huge", nil, 1, 2)
	line := strings.Repeat("x", 1023) + "\n"
	w.setPodLog(ladderJob(run, 0, 0)+"-x", strings.Repeat(line, steplog.MaxBytes/len(line)+1))
	got := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
	if steps := targetStatus(got, ladderTarget).Steps; got.Status.Phase != v1.RunSucceeded || ladderOf(steps) != "1/1 2/1" {
		t.Fatalf("run %s with steps %s, want Succeeded with both steps", got.Status.Phase, ladderOf(steps))
	}
	warnings := withReason(w.allEvents(), "SeriesUnavailable")
	if len(warnings) != 1 || !strings.Contains(warnings[0], "target mariadb, 1 threads") ||
		!strings.Contains(warnings[0], "the log is longer than 64 MiB") {
		t.Errorf("SeriesUnavailable Events %q, want one naming the step and the cap", warnings)
	}
	if n := seriesInResults(t, w, run); n != 1 {
		t.Errorf("results.json carries %d per-second series, want 1 (the step whose log was read)", n)
	}
}
