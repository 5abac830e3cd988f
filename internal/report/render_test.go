package report

import (
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// decodeResults reads results.json back the way a tool would.
type decodedResults struct {
	FormatVersion int `json:"formatVersion"`
	Run           struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"run"`
	Targets []struct {
		Name    string `json:"name"`
		Phase   string `json:"phase"`
		Message string `json:"message"`
		Steps   []struct {
			v1alpha1.StepResult
			Series *results.Series `json:"series"`
			Server json.RawMessage `json:"server"`
		} `json:"steps"`
	} `json:"targets"`
	Dropped []results.Dropped `json:"dropped"`
	Notes   []string          `json:"notes"`
}

func decodeResultsJSON(t testing.TB, s string) decodedResults {
	t.Helper()
	var d decodedResults
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		t.Fatalf("results.json does not parse: %v", err)
	}
	return d
}

// assertCSVMatchesStatus parses results.csv with encoding/csv and checks every status number is
// in it, in order.
func assertCSVMatchesStatus(t *testing.T, csvText string, run *v1alpha1.BenchmarkRun) {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
	if err != nil {
		t.Fatalf("results.csv does not parse: %v", err)
	}
	if !slices.Equal(rows[0], csvHeader()) {
		t.Fatalf("header = %v", rows[0])
	}
	rows = rows[1:]
	i := 0
	for _, ts := range run.Status.Targets {
		for _, st := range ts.Steps {
			if i >= len(rows) {
				t.Fatalf("results.csv has %d rows, status has more steps", len(rows))
			}
			r := rows[i]
			i++
			qps, _ := strconv.ParseFloat(r[4], 64)
			p95, _ := strconv.ParseFloat(r[10], 64)
			if r[0] != ts.Name || r[1] != ts.ServerVersion || r[2] != strconv.Itoa(int(st.Threads)) ||
				qps != st.QPS.Total || p95 != st.Latency.P95Ms {
				t.Errorf("row %d = %v, want %s %s %d threads qps %v p95 %v", i, r, ts.Name, ts.ServerVersion, st.Threads, st.QPS.Total, st.Latency.P95Ms)
			}
			if st.StartTime != nil && r[16] != st.StartTime.UTC().Format("2006-01-02T15:04:05Z07:00") {
				t.Errorf("row %d start_time = %q", i, r[16])
			}
		}
	}
	if i != len(rows) {
		t.Errorf("results.csv has %d rows, status %d steps", len(rows), i)
	}
}

func TestRenderGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		// mustContain are report.md lines the case is about.
		mustContain []string
	}{
		{
			name: "two_targets",
			run:  fixtureRun(-1),
			mustContain: []string{
				"# BenchmarkRun pk-lookup (namespace bench)",
				"Workload: sysbench `oltp_point_select`, 100 tables x 1,000,000 rows, options `--rand-type=uniform`, 300 s per step, warm-up 300 s at 64 threads.",
				"| Threads | mysql57 (5.7.44) | ps80 (8.0.36-28) | vs mysql57 |",
				"|---:|---:|---:|---:|",
				"![QPS by threads, log2 thread axis](charts/qps-by-threads.png)",
				"| 1 | 14,546 | 13,091 | x0.90 (no interval) |",
				"- ps80: Succeeded, server 8.0.36-28",
				"## Server counters and waits",
				"### mysql57 (5.7.44)",
				"| Threads | `Innodb_rows_read` | `Innodb_buffer_pool_reads` | `Innodb_data_fsyncs` | `Innodb_os_log_written` bytes | `Created_tmp_disk_tables` | `Threads_running` at end |",
				"| 8 | 1 | 0.000025 | 0.0000105 | 0.00533 | 0 | 1 |",
				"performance_schema is OFF on mysql57: no waits recorded (set performance_schema = ON in myCnf, or targets[].synchWaits).",
				"- Counters this server lacks or has disabled: status `Rows_read`, `Innodb_redo_log_current_lsn`, `Innodb_lsn_current`.",
				"| 64 | `sxlock/innodb/btr_search_latch` 1.77 | `mutex/innodb/trx_sys_mutex` 0.666 | `io/file/innodb/innodb_data_file` 0.64 | `mutex/innodb/buf_pool_mutex` 0.397 | `rwlock/innodb/hash_table_locks` 0.136 |",
			},
		},
		{
			name: "failed_after_one_step",
			run:  fixtureRun(1),
			mustContain: []string{
				"| 1 | 14,546 | 13,091 | x0.90 (no interval) |",
				"| 8 | 96,002 | — | — |",
				"| 64 | 320,005 | — | — |",
				"| 8 | 0.125 | — |",
				"- ps80: Failed, server 8.0.36-28: step 2 (8 threads): error 1040: Too many connections",
				"| 1 | `io/file/innodb/innodb_data_file` 0.01 | `mutex/innodb/trx_sys_mutex` 0.0041 | `mutex/innodb/buf_pool_mutex` 0.00305 | `sxlock/innodb/btr_search_latch` 0.0024 | `io/file/innodb/innodb_log_file` 0.001 |",
			},
		},
		{
			name: "repetitions",
			run:  repeatedRun(),
			mustContain: []string{
				"| 1 | 14,546 | 13,091 | x0.90 [0.87, 0.93] |",
				"| 64 | 320,005 | 288,005 ~ | x0.90 [0.75, 1.01] within noise |",
				"## Statistics per cell",
				"| mysql57 | 1 | 3 | 75 % | 14,546 [14,255, 14,691] | 1.5 % | 14,255-14,691 | 14,546 [14,255, 14,691] | 1.5 % | 14,255-14,691 | 0.103 [0.102, 0.105] | 1.5 % | 0.102-0.105 | |",
				"| 64 | `sxlock/innodb/btr_search_latch` 1.77 | `mutex/innodb/trx_sys_mutex` 0.666 | `io/file/innodb/innodb_data_file` 0.64 | `mutex/innodb/buf_pool_mutex` 0.397 | `rwlock/innodb/hash_table_locks` 0.136 |",
			},
		},
		{
			name: "over_duration",
			run:  overDurationRun(fixtureRun(-1), 0),
			mustContain: []string{
				"| 1 | 14,546 | 13,091 | x0.90 (no interval) |",
				// Not comparable: the step ran long and is the only one.
				"| 64 | 320,005 | 259,204 † | — |",
				"| 64 | 0.300 | 0.370 † |",
				"† ran past its step: sysbench measured the steps below for longer than the step's 300 s plus the tolerance " +
					"of 3 s (the larger of 1 s and 1 % of the step; sysbench ends every step after the events in flight, " +
					"a fraction of a second late on normal steps). An event outlasted the step, so their rates are counts over a longer " +
					"time than the other steps' and end with that event running alone: they are not comparable. A marked cell " +
					"shows the step's own value. They are left out of the statistics, the chart and any comparison with a baseline.",
				"- ps80 at 64 threads: measured 333.334 s, QPS 259,204, p95 0.370 ms",
			},
		},
		{
			name: "over_duration_repetitions",
			run:  overDurationRun(repeatedRun(), 3),
			mustContain: []string{
				// The flagged repetition 3 (QPS 261796.37) is not a sample: the median is that of
				// repetitions 1 and 2 (288004.80 and 259204.32), n is 2.
				"| 64 | 320,005 | 273,605 ~ † | x0.86 [0.47, 1.56] within noise |",
				"- ps80 at 64 threads (repetition 3): measured 333.334 s, QPS 261,796, p95 0.367 ms",
				"| ps80 | 64 | 2 | 50 % | 273,605 [259,204, 288,005] | 7.4 % | 259,204-288,005 | 273,605 [259,204, 288,005] | 7.4 % | 259,204-288,005 | 0.352 [0.333, 0.370] | 7.4 % | 0.333-0.370 | noisy |",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stored := storedServer(t, tc.run, storedSeries(t, tc.run, 5, 1<<20))
			stored["unrelated"] = "ignored"
			data, err := Render(tc.run, stored)
			if err != nil {
				t.Fatal(err)
			}
			if keys := slices.Sorted(maps.Keys(data)); !slices.Equal(keys, []string{KeyQPSChart, KeyReportMD, KeyResultsCSV, KeyResultsJSON, KeyServerCSV}) {
				t.Fatalf("keys = %v, want only the results keys and the chart (series and server keys consumed)", keys)
			}
			assertChart(t, data[KeyQPSChart], tc.run)
			for _, k := range []string{KeyReportMD, KeyResultsCSV, KeyResultsJSON, KeyServerCSV} {
				assertGolden(t, tc.name+"/"+k, data[k])
			}
			assertServerCSV(t, data[KeyServerCSV], tc.run, stored)
			md := strings.Split(data[KeyReportMD], "\n")
			for _, line := range tc.mustContain {
				if !slices.Contains(md, line) {
					t.Errorf("report.md lacks the line %q", line)
				}
			}
			assertCSVMatchesStatus(t, data[KeyResultsCSV], tc.run)

			d := decodeResultsJSON(t, data[KeyResultsJSON])
			if d.FormatVersion != 1 || d.Run.Name != "pk-lookup" || d.Run.Namespace != "bench" || len(d.Targets) != 2 {
				t.Fatalf("results.json head = %+v", d)
			}
			for ti, tr := range d.Targets {
				status := tc.run.Status.Targets[ti]
				if tr.Name != status.Name || tr.Message != status.Message || len(tr.Steps) != len(status.Steps) {
					t.Errorf("target %d = %s %q with %d steps, want %s %q with %d", ti, tr.Name, tr.Message, len(tr.Steps), status.Name, status.Message, len(status.Steps))
				}
				for si, st := range tr.Steps {
					want, _ := results.DecodeSeries(stored[SeriesKey(tr.Name, st.Threads, st.RepetitionOrDefault())])
					if st.Series == nil || !slices.Equal(st.Series.TPS, want.TPS) {
						t.Errorf("%s step %d: series %+v, want the stored one", tr.Name, si, st.Series)
					}
					if st.QPS != status.Steps[si].QPS || st.Latency != status.Steps[si].Latency {
						t.Errorf("%s step %d: numbers %+v differ from status", tr.Name, si, st.StepResult)
					}
					if want := stored[ServerKey(tr.Name, st.Threads, st.RepetitionOrDefault())]; string(st.Server) != want {
						t.Errorf("%s step %d: server counters %.200s, want the stored %.200s", tr.Name, si, st.Server, want)
					}
				}
			}
			if len(d.Dropped) != 0 || len(d.Notes) != 0 {
				t.Errorf("dropped %v notes %v, want none", d.Dropped, d.Notes)
			}
		})
	}
}

func TestRenderNotesUnusableSeries(t *testing.T) {
	run := fixtureRun(1)
	stored := storedSeries(t, run, 5, 1<<20)
	stored[SeriesKey("mysql57", 8, 1)] = `{"bucketSeconds":1,"intervals":1,"threads":8,"t":[1],"tps":[]}` // columns of unequal length
	stored[SeriesKey("mysql57", 64, 1)] = `{"bucketSeconds":1,"intervals":1,`                             // cut short
	stored[SeriesKey("ps80", 64, 1)] = stored[SeriesKey("ps80", 1, 1)]                                    // a step with no result in status
	data, err := Render(run, stored)
	if err != nil {
		t.Fatal(err)
	}
	d := decodeResultsJSON(t, data[KeyResultsJSON])
	if d.Targets[0].Steps[0].Series == nil || d.Targets[0].Steps[1].Series != nil || d.Targets[0].Steps[2].Series != nil {
		t.Error("a malformed series was kept, or a good one lost")
	}
	wantNotes := []struct{ key, why string }{
		{"series.mysql57.t0008.json", `column "tps" has 0 points, "t" has 1`},
		{"series.mysql57.t0064.json", "unexpected end of JSON input"},
		{"series.ps80.t0064.json", "matches no step result in status"},
	}
	if len(d.Notes) != len(wantNotes) {
		t.Fatalf("notes = %q, want one per unusable series", d.Notes)
	}
	for i, w := range wantNotes {
		if !strings.Contains(d.Notes[i], w.key) {
			t.Errorf("note %q does not name %s", d.Notes[i], w.key)
		}
		if !strings.Contains(d.Notes[i], w.why) {
			t.Errorf("note %q does not say %q", d.Notes[i], w.why)
		}
		if !strings.Contains(data[KeyReportMD], w.key) {
			t.Errorf("report.md does not mention %s", w.key)
		}
	}
}

// Render never reads its own earlier output: results keys already in stored, readable or not, are
// replaced by what the series keys and status give, and the result is the same as without them.
func TestRenderIgnoresEarlierResults(t *testing.T) {
	run := fixtureRun(-1)
	stored := storedServer(t, run, storedSeries(t, run, 5, 1<<20))
	want, err := Render(run, stored)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Render(run, stored)
	if err != nil || !maps.Equal(again, want) {
		t.Fatalf("rendering the same input twice gave different data (err %v)", err)
	}

	for name, earlier := range map[string]map[string]string{
		"earlier render": want,
		"garbage":        {KeyResultsJSON: `{"formatVersion":1,`, KeyResultsCSV: "x", KeyReportMD: "# old", KeyServerCSV: "y"},
	} {
		withEarlier := maps.Clone(stored)
		maps.Copy(withEarlier, earlier)
		got, err := Render(run, withEarlier)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s: results keys in stored changed the output:\n%.400s\n%.400s", name, got[KeyResultsJSON], want[KeyResultsJSON])
		}
	}

	// The rendered data alone (series keys consumed) holds no series to take.
	d := decodeResultsJSON(t, mustRender(t, run, want)[KeyResultsJSON])
	for _, tr := range d.Targets {
		for _, st := range tr.Steps {
			if st.Series != nil || st.Server != nil {
				t.Fatalf("%s at %d threads: a series or server counters taken from an earlier results.json", tr.Name, st.Threads)
			}
		}
	}
	if len(d.Notes) != 0 || len(d.Dropped) != 0 {
		t.Errorf("notes %q dropped %v, want none", d.Notes, d.Dropped)
	}
}

func mustRender(t *testing.T, run *v1alpha1.BenchmarkRun, stored map[string]string) map[string]string {
	t.Helper()
	data, err := Render(run, stored)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The series in results.json are the stored ones: byte for byte when EncodeSeries wrote them,
// compacted otherwise, and they decode to the same values.
func TestRenderEmbedsStoredSeries(t *testing.T) {
	run := fixtureRun(1)
	stored := storedSeries(t, run, 50, 1<<20)
	canonical := stored[SeriesKey("mysql57", 1, 1)]
	spaced := strings.ReplaceAll(stored[SeriesKey("mysql57", 8, 1)], ",", ", ")
	stored[SeriesKey("mysql57", 8, 1)] = spaced
	data := mustRender(t, run, stored)

	var raw struct {
		Targets []struct {
			Steps []struct {
				Series json.RawMessage `json:"series"`
			} `json:"steps"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(data[KeyResultsJSON]), &raw); err != nil {
		t.Fatal(err)
	}
	if got := string(raw.Targets[0].Steps[0].Series); got != canonical {
		t.Errorf("embedded series differs from the stored one:\n%.200s\n%.200s", got, canonical)
	}
	got := string(raw.Targets[0].Steps[1].Series)
	if strings.Contains(got, " ") {
		t.Errorf("a stored series with spaces was embedded as it was: %.200s", got)
	}
	a, errA := results.DecodeSeries(got)
	b, errB := results.DecodeSeries(spaced)
	if errA != nil || errB != nil || !slices.Equal(a.TPS, b.TPS) || !slices.Equal(a.Time, b.Time) {
		t.Errorf("the compacted series does not decode to the stored values (%v, %v)", errA, errB)
	}
}

// hugeSpec is the largest run the API allows: 16 targets x 64 steps, 24 h each.
func hugeRun() *v1alpha1.BenchmarkRun {
	run := fixtureRun(-1)
	run.Spec.Targets = nil
	run.Status.Targets = nil
	var ladder []int32
	for i := range int32(64) {
		ladder = append(ladder, 1+i*156)
	}
	run.Spec.Ladder.Threads = ladder
	for ti := range 16 {
		name := fmt.Sprintf("target-%02d-%s", ti, strings.Repeat("x", 30))
		run.Spec.Targets = append(run.Spec.Targets, v1alpha1.Target{Name: name, Image: "mysql:8.0.36"})
		ts := v1alpha1.TargetStatus{Name: name, Phase: v1alpha1.TargetSucceeded, ServerVersion: "8.0.36-28.1"}
		for si, th := range ladder {
			st := stepFixture(th, 0)
			st.QPS.Total += float64(si) + 0.37 // distinct, realistic-width numbers
			ts.Steps = append(ts.Steps, st)
		}
		run.Status.Targets = append(run.Status.Targets, ts)
	}
	return run
}

// storeEach encodes one 86400 s series per budget and stores it for every step of the targets
// given that budget (encoding 1024 distinct day-long series would only slow the test: Render sees
// their bytes, not their origin).
func storeEach(t *testing.T, run *v1alpha1.BenchmarkRun, budgetOf func(target int) int) map[string]string {
	t.Helper()
	iv := intervalsFixture(86400, 1)
	cache := map[int]string{}
	stored := map[string]string{}
	for ti, ts := range run.Status.Targets {
		b := budgetOf(ti)
		if _, ok := cache[b]; !ok {
			s, err := EncodeSeries(iv, b)
			if err != nil {
				t.Fatal(err)
			}
			cache[b] = s
		}
		for _, st := range ts.Steps {
			stored[SeriesKey(ts.Name, st.Threads, st.RepetitionOrDefault())] = cache[b]
		}
	}
	return stored
}

func TestRenderHugeRunAtSeriesBudgetKeepsEverything(t *testing.T) {
	run := hugeRun()
	budget := SeriesBudget(run.Spec)
	data, err := Render(run, storeEach(t, run, func(int) int { return budget }))
	if err != nil {
		t.Fatal(err)
	}
	if n := dataSize(data); n > MaxConfigMapBytes {
		t.Fatalf("%d bytes, over %d", n, MaxConfigMapBytes)
	}
	d := decodeResultsJSON(t, data[KeyResultsJSON])
	if len(d.Dropped) != 0 {
		t.Errorf("dropped %v at the budget SeriesBudget gave (%d bytes per step)", d.Dropped, budget)
	}
	for _, tr := range d.Targets {
		for _, st := range tr.Steps {
			if st.Series == nil || st.Series.Intervals != 86400 {
				t.Fatalf("%s at %d threads: series %+v, want one of 86400 intervals", tr.Name, st.Threads, st.Series)
			}
		}
	}
	assertCSVMatchesStatus(t, data[KeyResultsCSV], run)
	s := d.Targets[0].Steps[0].Series
	t.Logf("16 x 64 steps: %d bytes per series (%d s buckets, points dropped: %v), %d bytes in all",
		budget, s.BucketSeconds, s.PointsDropped, dataSize(data))
}

// Series stored at a larger budget than SeriesBudget (e.g. by an older controller) must be
// dropped, largest first, and the drops reported; the numbers stay.
func TestRenderHugeRunDropsLargestSeriesFirst(t *testing.T) {
	run := hugeRun()
	budget := SeriesBudget(run.Spec)
	large := func(ti int) bool { return ti%2 == 0 }
	stored := storeEach(t, run, func(ti int) int {
		if large(ti) {
			return 4 * budget
		}
		return 2 * budget
	})
	data, err := Render(run, stored)
	if err != nil {
		t.Fatal(err)
	}
	if n := dataSize(data); n > MaxConfigMapBytes {
		t.Fatalf("%d bytes, over %d", n, MaxConfigMapBytes)
	}
	assertCSVMatchesStatus(t, data[KeyResultsCSV], run)

	d := decodeResultsJSON(t, data[KeyResultsJSON])
	if len(d.Dropped) == 0 {
		t.Fatal("nothing reported as dropped")
	}
	dropped := map[string]map[int32]bool{}
	for _, dr := range d.Dropped {
		dropped[dr.Target] = map[int32]bool{}
		for _, th := range dr.Threads {
			dropped[dr.Target][th] = true
		}
	}
	keptLarge, droppedSmall := false, false
	for ti, tr := range d.Targets {
		for si, st := range tr.Steps {
			if want := run.Status.Targets[ti].Steps[si]; st.QPS != want.QPS || st.Latency != want.Latency || st.Threads != want.Threads {
				t.Fatalf("%s step %d: numbers %+v, want status %+v", tr.Name, si, st.StepResult, want)
			}
			gone := dropped[tr.Name][st.Threads]
			if gone == (st.Series != nil) {
				t.Fatalf("%s at %d threads: reported dropped %v but series present %v", tr.Name, st.Threads, gone, st.Series != nil)
			}
			if large(ti) && !gone {
				keptLarge = true
			}
			if !large(ti) && gone {
				droppedSmall = true
			}
		}
	}
	if keptLarge && droppedSmall {
		t.Error("a smaller series was dropped while a larger one was kept")
	}
	md := data[KeyReportMD]
	notes := md[strings.Index(md, "## Notes"):]
	for _, dr := range d.Dropped {
		line := fmt.Sprintf("  - %s at %s threads", dr.Target, joinThreads(dr.Threads))
		if len(dr.Threads) == 64 {
			line = fmt.Sprintf("  - %s at all 64 steps", dr.Target)
		}
		if !strings.Contains(notes, line+"\n") {
			t.Errorf("report.md notes lack %q", line)
		}
	}
}

// assertChart checks that svg is a well-formed SVG document whose legend names every target that
// measured a step.
func assertChart(t *testing.T, svg string, run *v1alpha1.BenchmarkRun) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	var root string
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", KeyQPSChart, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
		case xml.CharData:
			text.Write(tok)
		}
	}
	if root != "svg" {
		t.Fatalf("%s has root element %q, want svg", KeyQPSChart, root)
	}
	for _, ts := range run.Status.Targets {
		if len(ts.Steps) > 0 && !strings.Contains(text.String(), ts.Name) {
			t.Errorf("%s does not name target %s", KeyQPSChart, ts.Name)
		}
	}
}

// The chart is drawn from the numbers: when the numbers alone nearly fill the ConfigMap the
// chart is left out, and said to be, rather than failing the results.
func TestRenderLeavesTheChartOutBeforeAnyNumber(t *testing.T) {
	run := hugeRun()
	size := func(k int, chart bool) int {
		for i := range run.Status.Targets {
			run.Status.Targets[i].Message = strings.Repeat("m", k)
		}
		data, err := encodeData(ptr(buildDoc(run)), chart)
		if err != nil {
			t.Fatal(err)
		}
		return dataSize(data)
	}
	// The shortest messages with which the numbers and the chart no longer fit.
	k := sort.Search(MaxConfigMapBytes, func(k int) bool { return size(k, true) > MaxConfigMapBytes })
	if k == 0 || k == MaxConfigMapBytes || size(k, false) > MaxConfigMapBytes {
		t.Fatalf("no message length puts the numbers alone under the limit and the chart over it (k=%d)", k)
	}
	size(k, true) // leaves the messages at length k
	data, err := Render(run, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := data[KeyQPSChart]; ok {
		t.Errorf("the chart is kept although it does not fit")
	}
	if !strings.Contains(data[KeyReportMD], "The chart "+KeyQPSChart+" is left out") || strings.Contains(data[KeyReportMD], "]("+BundleQPSChart+")") {
		t.Errorf("report.md does not say the chart was left out")
	}
	if dataSize(data) > MaxConfigMapBytes {
		t.Errorf("%d bytes, over the %d limit", dataSize(data), MaxConfigMapBytes)
	}
	d := decodeResultsJSON(t, data[KeyResultsJSON])
	for i, tr := range d.Targets {
		if len(tr.Steps) != len(run.Status.Targets[i].Steps) {
			t.Errorf("target %s lost steps: %d of %d", tr.Name, len(tr.Steps), len(run.Status.Targets[i].Steps))
		}
	}
}

func TestRenderFailsWhenNumbersAloneDoNotFit(t *testing.T) {
	run := hugeRun()
	for i := range run.Status.Targets {
		run.Status.Targets[i].Message = strings.Repeat("a long failure message ", 3000)
	}
	if _, err := Render(run, nil); err == nil || !strings.Contains(err.Error(), "even without per-second series") {
		t.Errorf("err = %v, want a report that the numbers alone are too big", err)
	}
}
