package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

func TestSeriesBudget(t *testing.T) {
	small := fixtureRun(-1).Spec
	huge := hugeRun().Spec
	bs, bh := SeriesBudget(small), SeriesBudget(huge)
	if bs < 100_000 {
		t.Errorf("2 x 3 steps: budget %d, want most of the ConfigMap shared by 6 steps", bs)
	}
	if bh < minSeriesBudget || bh >= bs {
		t.Errorf("16 x 64 steps: budget %d, want between %d and the small run's %d", bh, minSeriesBudget, bs)
	}
	// Six steps of series at the budget plus the summaries must fit.
	if 6*(bs+seriesOverhead) > MaxConfigMapBytes {
		t.Errorf("budget %d x 6 steps exceeds the ConfigMap", bs)
	}
}

// The Percona-sized run: 6 targets x 32 steps of 300 one-second reports each.
func BenchmarkRenderPercona(b *testing.B) {
	run := perconaRun()
	stored := storedSeries(b, run, 300, SeriesBudget(run.Spec))
	benchmarkRender(b, run, stored)
}

// The Percona-sized run with server counters (MySQL 8.0, 10 waits) at every step: more than
// the ConfigMap holds, so Render drops some.
func BenchmarkRenderPerconaServer(b *testing.B) {
	run := perconaRun()
	stored := storedServer(b, run, storedSeries(b, run, 300, SeriesBudget(run.Spec)))
	benchmarkRender(b, run, stored)
}

func benchmarkRender(b *testing.B, run *v1alpha1.BenchmarkRun, stored map[string]string) {
	b.ReportAllocs()
	for b.Loop() {
		data, err := Render(run, stored)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(dataSize(data)), "bytes")
	}
}

func perconaRun() *v1alpha1.BenchmarkRun {
	run := fixtureRun(-1)
	var ladder []int32
	for i := range 32 {
		ladder = append(ladder, int32(1+i*32))
	}
	run.Spec.Ladder.Threads = ladder
	run.Spec.Targets, run.Status.Targets = nil, nil
	for ti := range 6 {
		name := fmt.Sprintf("mysql-%d", ti)
		run.Spec.Targets = append(run.Spec.Targets, v1alpha1.Target{Name: name, Image: "mysql:5.7.44"})
		ts := v1alpha1.TargetStatus{Name: name, Phase: v1alpha1.TargetSucceeded, ServerVersion: "5.7.44"}
		for _, th := range ladder {
			ts.Steps = append(ts.Steps, stepFixture(th, 0))
		}
		run.Status.Targets = append(run.Status.Targets, ts)
	}
	return run
}

// hugeRepeatedRun is the largest run with repetitions the API allows: 512 steps, here 16 targets
// x 16 thread counts x 2 repetitions (or fewer thread counts with more repetitions).
func hugeRepeatedRun(reps int32) *v1alpha1.BenchmarkRun {
	run := hugeRun()
	run.Spec.Repetitions = &reps
	run.Spec.Ladder.Threads = run.Spec.Ladder.Threads[:32/reps]
	for ti := range run.Status.Targets {
		ts := &run.Status.Targets[ti]
		single := ts.Steps
		ts.Steps = nil
		for i := range run.Spec.StepCount() {
			rung, rep := run.Spec.LadderPosition(i)
			st := single[rung]
			st.Repetition = rep
			st.QPS.Total += float64(rep) * 13.37
			st.Latency.P95Ms += float64(rep) * 0.011
			ts.Steps = append(ts.Steps, st)
		}
	}
	return run
}

func TestRenderHugeRepeatedRunAtSeriesBudgetKeepsEverything(t *testing.T) {
	for _, reps := range []int32{2, 4, 10} {
		run := hugeRepeatedRun(reps)
		budget := SeriesBudget(run.Spec)
		data, err := Render(run, storeEach(t, run, func(int) int { return budget }))
		if err != nil {
			t.Fatal(err)
		}
		if n := dataSize(data); n > MaxConfigMapBytes {
			t.Fatalf("%d repetitions: %d bytes, over %d", reps, n, MaxConfigMapBytes)
		}
		d := decodeResultsJSON(t, data[KeyResultsJSON])
		if len(d.Dropped) != 0 {
			t.Errorf("%d repetitions: dropped %v at the budget SeriesBudget gave (%d bytes per step)", reps, d.Dropped, budget)
		}
		assertCSVMatchesStatus(t, data[KeyResultsCSV], run)
		var raw struct {
			Targets []struct {
				Cells []results.Cell `json:"cells"`
			} `json:"targets"`
		}
		if err := json.Unmarshal([]byte(data[KeyResultsJSON]), &raw); err != nil {
			t.Fatal(err)
		}
		for _, tr := range raw.Targets {
			if len(tr.Cells) != len(run.Spec.Ladder.Threads) || tr.Cells[0].N != reps {
				t.Fatalf("%d repetitions: cells %+v", reps, tr.Cells)
			}
		}
		t.Logf("16 x %d steps x %d repetitions: %d bytes per series, %d bytes in all",
			len(run.Spec.Ladder.Threads), reps, budget, dataSize(data))
	}
}

// Dropped series of a run with repetitions name the repetitions.
func TestRenderRepeatedRunDropsNameRepetitions(t *testing.T) {
	run := repeatedRun()
	stored := storedSeries(t, run, 86400, 300_000) // 18 series of 300 kB: most must go
	data, err := Render(run, stored)
	if err != nil {
		t.Fatal(err)
	}
	d := decodeResultsJSON(t, data[KeyResultsJSON])
	if len(d.Dropped) == 0 {
		t.Fatal("nothing dropped")
	}
	for _, dr := range d.Dropped {
		if len(dr.Repetitions) != len(dr.Threads) {
			t.Errorf("dropped %+v: a repetition for each thread count wanted", dr)
		}
	}
	if !strings.Contains(data[KeyReportMD], " threads (repetitions ") && !strings.Contains(data[KeyReportMD], "at all 9 steps") {
		t.Errorf("report.md notes do not name the repetitions:\n%s", data[KeyReportMD][strings.Index(data[KeyReportMD], "## Notes"):])
	}
	for _, tr := range d.Targets {
		for _, st := range tr.Steps {
			if st.Series == nil {
				continue
			}
			if want := stored[SeriesKey(tr.Name, st.Threads, st.RepetitionOrDefault())]; st.Series.Intervals != 86400 || len(want) == 0 {
				t.Errorf("%s at %d threads: kept series %+v is not the stored one", tr.Name, st.Threads, st.Series)
			}
		}
	}
}

// overDurationRun marks the step of the second target at 64 threads (of repetition rep, 0: the
// only one) as one that ran past its duration: an event of 33 s beyond the step, diluting its
// rates by a tenth.
func overDurationRun(run *v1alpha1.BenchmarkRun, rep int32) *v1alpha1.BenchmarkRun {
	steps := run.Status.Targets[1].Steps
	for i := range steps {
		if st := &steps[i]; st.Threads == 64 && st.Repetition == rep {
			st.OverDuration = true
			st.DurationSeconds = 333.334
			st.QPS.Total = round2(st.QPS.Total * 0.9)
			st.TPS, st.QPS.Read = st.QPS.Total, st.QPS.Total
			st.Latency.P95Ms = math.Round(st.Latency.P95Ms/0.9*1000) / 1000
		}
	}
	return run
}

// The report says what the spread of a cell includes: with a new server per repetition, what
// differs between instances; results.json records the choice.
func TestRenderSaysWhatRepetitionsShared(t *testing.T) {
	for _, c := range []struct {
		mode v1alpha1.ServerInstanceMode
		want bool
	}{{"", false}, {v1alpha1.ServerInstanceShared, false}, {v1alpha1.ServerInstancePerRepetition, true}} {
		run := repeatedRun()
		run.Spec.ServerInstance = c.mode
		data, err := Render(run, nil)
		if err != nil {
			t.Fatal(err)
		}
		says := strings.Contains(data[KeyReportMD], "Each repetition measured a new server instance")
		var doc results.Doc
		if err := json.Unmarshal([]byte(data[KeyResultsJSON]), &doc); err != nil {
			t.Fatal(err)
		}
		recorded := doc.Ladder.ServerInstance == "PerRepetition"
		if says != c.want || recorded != c.want {
			t.Errorf("serverInstance %q: report says a new instance %v, results.json records it %v; want %v", c.mode, says, recorded, c.want)
		}
	}
}
