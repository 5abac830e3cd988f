package run_test

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// TestBatchReleaseEveryEightSteps (e): a ladder of 10 steps whose step 3 fails once. Nothing is
// stored or deleted until 8 steps are recorded; then the reconcile that creates the next Job
// first stores the 8 series with one update of the results ConfigMap and deletes the 8 ladder
// Jobs with the probe and prepare ones in one deletecollection: the failed Job s03-a0 (same step
// label as the completed s03-a1) and the Jobs of steps not recorded yet survive, a Complete one
// included. At the target's end the rest go with one more update and deletecollection; the failed
// Job stays. "reported with its pod" has the Job controller report each Job with its pod's end
// (the batch comes before the 9th Job); "pipelined" starts each next step early (the batch comes
// before the 10th Job, the 9th's reported Complete just before the batch lists the Jobs).
func TestBatchReleaseEveryEightSteps(t *testing.T) {
	threads := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, pipelined := range []bool{false, true} {
		name := "reported with its pod"
		if pipelined {
			name = "pipelined"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w, run := startLadder(t, "bt", nil, threads...)
			ok, notPrepared := runCaptured(t), captured(t, "run_not_prepared_1146.txt")
			results := "ConfigMap/" + specs.ResultsConfigMapName(run)
			probe := specs.JobName(run, ladderTarget, "probe", specs.Attempt{})
			prepare := specs.JobName(run, ladderTarget, "prepare", specs.Attempt{})
			s3a0, s9, s10 := ladderJob(run, 2, 0), ladderJob(run, 8, 0), ladderJob(run, 9, 0)
			batchAt := s9 // the Job whose creation comes with the first batch
			if pipelined {
				batchAt = s10
			}
			var batch []string // the writes of the reconcile that created batchAt
			check := func(writes []string) {
				t.Helper()
				if slices.Contains(writes, "create Job/"+batchAt) {
					batch = writes
					return
				}
				for _, wr := range writes {
					if batch == nil && (wr == "update "+results || strings.HasPrefix(wr, "deletecollection ")) {
						t.Fatalf("%s with %d steps recorded (before Job %s): %v", wr, len(w.steps(run)), batchAt, writes)
					}
				}
			}

			for i := range threads {
				var failed int32
				if i == 2 {
					// Step 3's first attempt fails: its Job is kept for its log.
					if !w.exists(&batchv1.Job{}, s3a0) {
						check(w.step(run.Name))
					}
					w.setPod(s3a0, w.loadExited(1, notPrepared))
					check(w.step(run.Name))
					w.reportJob(s3a0, false)
					check(w.step(run.Name))
					failed = 1
				}
				job := ladderJob(run, i, failed)
				if !w.exists(&batchv1.Job{}, job) {
					check(w.step(run.Name))
				}
				if !w.exists(&batchv1.Job{}, job) {
					t.Fatalf("no Job %s for step %d", job, i+1)
				}
				w.setPod(job, w.loadRunning)
				if pipelined {
					w.setPod(job, w.loadExited(0, ok))
					if i == 8 {
						// The Job controller reports Job 9 Complete while the reconcile that
						// starts step 10 early runs: after it read Job 9, before it lists the
						// target's Jobs.
						w.onCacheList(func(l client.ObjectList) {
							if _, isJobs := l.(*batchv1.JobList); isJobs {
								w.onCacheList(nil)
								w.reportJob(s9, true)
							}
						})
					}
					check(w.step(run.Name))
					w.onCacheList(nil)
					if i == 8 {
						if batch == nil {
							t.Fatalf("no batch when step 9's sysbench exited with 8 steps recorded (steps %s, Jobs %v)",
								ladderOf(w.steps(run)), w.jobNames())
						}
						if n := len(w.steps(run)); n != 8 {
							t.Fatalf("%d steps recorded in the reconcile that started step 10 early, want 8", n)
						}
					} else {
						w.reportJob(job, true)
					}
				} else {
					w.setPod(job, w.loadExited(0, ok))
					w.reportJob(job, true)
				}
				check(w.step(run.Name))
				if n := len(w.steps(run)); n != i+1 {
					t.Fatalf("%d steps recorded after Job %s completed, want %d", n, job, i+1)
				}
			}

			w.drive(run.Name, succeedAll(t), "the target's end", func(r *v1.BenchmarkRun) bool {
				return targetStatus(r, ladderTarget).Released
			})

			// The first batch.
			if batch == nil {
				t.Fatalf("no batch before Job %s", batchAt)
			}
			want := []string{"update " + results, "deletecollection Job", "create Job/" + batchAt}
			if !slices.Equal(batch, want) {
				t.Errorf("the reconcile that created Job %s wrote %v, want %v", batchAt, batch, want)
			}
			w.mu.Lock()
			collections := slices.Clone(w.collections)
			w.mu.Unlock()
			if len(collections) != 2 {
				t.Fatalf("%d deletecollections, want 2 (the batch and the target's end)", len(collections))
			}
			wantDeleted := []string{prepare, probe}
			for i := range 8 {
				wantDeleted = append(wantDeleted, ladderJob(run, i, map[bool]int32{true: 1}[i == 2]))
			}
			sort.Strings(wantDeleted)
			if got := slices.Sorted(slices.Values(collections[0])); !slices.Equal(got, wantDeleted) {
				t.Errorf("the batch deleted %v, want %v", got, wantDeleted)
			}

			// The target's end: the rest, the failed Job kept.
			if got := slices.Sorted(slices.Values(collections[1])); !slices.Equal(got, []string{s9, s10}) {
				t.Errorf("the target's end deleted %v, want %v", got, []string{s9, s10})
			}
			if got := w.jobNames(); !slices.Equal(got, []string{s3a0}) {
				t.Errorf("Jobs left after the target's end %v, want the failed %s only", got, s3a0)
			}
			final := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
			if steps := targetStatus(final, ladderTarget).Steps; final.Status.Phase != v1.RunSucceeded ||
				ladderOf(steps) != "1/1 2/1 3/2 4/1 5/1 6/1 7/1 8/1 9/1 10/1" {
				t.Errorf("run %s with steps %s, want Succeeded with each step once, step 3 in 2 attempts", final.Status.Phase, ladderOf(steps))
			}
			if n := seriesInResults(t, w, final); n != len(threads) {
				t.Errorf("results.json carries %d per-second series, want %d", n, len(threads))
			}
			updates := 0
			for _, wr := range w.writeLog() {
				if wr == "update "+results {
					updates++
				}
			}
			if updates != 3 {
				t.Errorf("%d updates of the results ConfigMap, want 3 (two batches, then the results)", updates)
			}
			if twice := w.createdTwice(); len(twice) > 0 {
				t.Errorf("created more than once: %v", twice)
			}
		})
	}

	t.Run("the first batch stores 8 series", func(t *testing.T) {
		t.Parallel()
		w, run := startLadder(t, "bs", nil, threads...)
		ok := runCaptured(t)
		for i := range 8 {
			job := ladderJob(run, i, 0)
			w.step(run.Name)
			w.setPod(job, w.loadExited(0, ok))
			w.reportJob(job, true)
			w.step(run.Name)
		}
		cm := &corev1.ConfigMap{}
		if !w.exists(cm, specs.ResultsConfigMapName(run)) {
			t.Fatal("no results ConfigMap")
		}
		if len(cm.Data) != 0 {
			t.Fatalf("results ConfigMap holds %v with 8 steps recorded and no Job after them, want nothing yet", keys(cm.Data))
		}
		w.step(run.Name) // the 9th Job, after the batch
		if !w.exists(cm, specs.ResultsConfigMapName(run)) {
			t.Fatal("no results ConfigMap")
		}
		var want []string
		for _, th := range threads[:8] {
			want = append(want, report.SeriesKey(ladderTarget, th, 1), report.ServerKey(ladderTarget, th, 1))
		}
		slices.Sort(want)
		if got := slices.Sorted(slices.Values(keys(cm.Data))); !slices.Equal(got, want) {
			t.Errorf("results ConfigMap keys %v, want the 8 steps' series and server counters %v", got, want)
		}
		for k, v := range cm.Data {
			if !json.Valid([]byte(v)) || len(v) < 10 {
				t.Errorf("%s is %q", k, v)
			}
		}
		for _, th := range threads[:8] {
			if _, err := results.DecodeServer(cm.Data[report.ServerKey(ladderTarget, th, 1)]); err != nil {
				t.Errorf("server counters of %d threads: %v", th, err)
			}
		}
	})
}

// TestBatchKeepsTheAttemptsThatFailed (e): a step whose first attempt's sysbench exited 0 without
// a usable result (no final report, an error line after it, an unreadable one) has a Job the Job
// controller reports Complete, though the attempt failed and the status holds the retry's result.
// Only Jobs whose result the status holds are released: the batch reads the step's series from
// the retry's log only (the failed attempt's log is never read into the results) and keeps the
// failed attempt's Job for its log.
func TestBatchKeepsTheAttemptsThatFailed(t *testing.T) {
	for _, tc := range []struct{ name, message string }{
		{"no final report", "sysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta2)\n"},
		{"an error line after the final report", "{\"type\":\"final\",\"version\":1,\"command\":\"run\",\"threads\":1}\n" +
			"FATAL: mysql_stmt_execute() returned error 1213 (Deadlock found when trying to get lock; try restarting transaction)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, run := startLadder(t, "bk", nil, 1, 2)
			s1a0, s1a1 := ladderJob(run, 0, 0), ladderJob(run, 0, 1)
			// The failed attempt's log differs from every other pod's.
			w.setPodLog(s1a0+"-x", captured(t, "run_read_write_t2.txt"))
			w.step(run.Name)
			w.setPod(s1a0, w.loadExited(0, tc.message))
			w.reportJob(s1a0, true)
			w.step(run.Name)
			if ts := targetStatus(w.run(run.Name), ladderTarget); ts.FailedAttempts != 1 {
				t.Fatalf("failed attempts %d after Job %s, want 1", ts.FailedAttempts, s1a0)
			}
			final := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
			if steps := targetStatus(final, ladderTarget).Steps; final.Status.Phase != v1.RunSucceeded || ladderOf(steps) != "1/2 2/1" {
				t.Fatalf("run %s with steps %s, want Succeeded with 1/2 2/1", final.Status.Phase, ladderOf(steps))
			}
			if n := w.podLogReads(s1a0 + "-x"); n != 0 {
				t.Errorf("the log of %s, whose result the status does not hold, was read %d times for step 1's series "+
					"(the series key of step 1 gets whichever of %s and %s the Job list has last)", s1a0, n, s1a0, s1a1)
			}
			if n := w.podLogReads(s1a1 + "-x"); n != 1 {
				t.Errorf("the log of %s, the recorded attempt, was read %d times, want once", s1a1, n)
			}
			if !w.exists(&batchv1.Job{}, s1a0) {
				t.Errorf("Job %s, whose attempt failed, was deleted with the released Jobs; Jobs left %v", s1a0, w.jobNames())
			}
		})
	}
}

// TestBatchWritesPerLadderStep (e): over a 10-step ladder run with the pipeline, the API writes
// the ladder costs, the Job creations, the status writes that record the steps, and the batched
// series writes and deletecollections (at 8 steps and at the target's end), are at most 3 per step
// (issue #16), with exactly one status write per step. Each step's pod goes pending, running,
// exited, with a reconcile after each change, as its events would bring. "next pod after the
// report": the Job controller reports the current Job before the next step's pod appears; "next
// pod first": it creates and starts the next step's pod first, as in a cluster, where reporting
// the Job takes about two seconds.
func TestBatchWritesPerLadderStep(t *testing.T) {
	threads := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, nextPodFirst := range []bool{false, true} {
		name := "next pod after the report"
		if nextPodFirst {
			name = "next pod first"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w, run := startLadder(t, "bw", nil, threads...)
			ok := runCaptured(t)
			results := "ConfigMap/" + specs.ResultsConfigMapName(run)
			start := len(w.writeLog())
			w.takeEvents()
			w.step(run.Name)
			startPod := func(job string) {
				w.setPod(job, loadPending)
				w.step(run.Name)
				w.setPod(job, w.loadRunning)
				w.step(run.Name)
			}
			for i := range threads {
				job := ladderJob(run, i, 0)
				if i == 0 || !nextPodFirst {
					startPod(job)
				}
				w.setPod(job, w.loadExited(0, ok))
				w.step(run.Name)
				if i+1 < len(threads) {
					if !w.exists(&batchv1.Job{}, ladderJob(run, i+1, 0)) {
						t.Fatalf("Job %s not created early", ladderJob(run, i+1, 0))
					}
					if nextPodFirst {
						startPod(ladderJob(run, i+1, 0))
					}
				}
				w.reportJob(job, true)
				w.step(run.Name)
				if n := len(w.steps(run)); n != i+1 {
					t.Fatalf("%d steps recorded after Job %s completed, want %d", n, job, i+1)
				}
			}
			ladder := w.writeLog()[start:]
			events := w.takeEvents()
			mid := len(w.writeLog())
			w.drive(run.Name, succeedAll(t), "the target's end", func(r *v1.BenchmarkRun) bool { return targetStatus(r, ladderTarget).Released })
			var batches []string
			for _, wr := range w.writeLog()[mid:] {
				if wr == "update "+results || strings.HasPrefix(wr, "deletecollection ") {
					batches = append(batches, wr)
				}
			}
			tally := map[string]int{}
			for _, wr := range append(slices.Clone(ladder), batches...) {
				verb, what, _ := strings.Cut(wr, " ")
				if i := strings.LastIndex(what, "/"); i >= 0 && verb != "patch" {
					what = what[:i]
				}
				tally[verb+" "+what]++
			}
			total := len(ladder) + len(batches) + len(events)
			perStep := float64(total) / float64(len(threads))
			t.Logf("%d ladder steps: %d writes (%v), %d Events: %.2f writes per step", len(threads), total, tally, len(events), perStep)
			if perStep > 3 {
				t.Errorf("%.2f API writes per ladder step, want at most 3: %v, Events %v", perStep, tally, events)
			}
			if n := tally["patch status BenchmarkRun/"+run.Name]; n != len(threads) {
				t.Errorf("%d status writes over the ladder, want %d (one recording each step): %v", n, len(threads), ladder)
			}
			if tally["create Job"] != len(threads) || tally["update ConfigMap"] != 2 || tally["deletecollection Job"] != 2 || len(events) > 0 {
				t.Errorf("writes %v and Events %v, want %d Job creations, 2 results updates and 2 deletecollections, no Event",
					tally, events, len(threads))
			}
		})
	}
}
