package charts

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

var outDir = flag.String("charts.out", os.Getenv("CHARTS_PNG_DIR"),
	"also write every chart drawn to this directory, to look at them (default $CHARTS_PNG_DIR)")

// golden decodes one of the report package's example results.json.
func golden(t testing.TB, name string) *results.Doc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "report", "testdata", name, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := results.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

var (
	bigLadder  = []int32{1, 2, 4, 8, 16, 24, 32, 64, 128, 256, 512, 1000}
	bigTargets = []string{"mysql57", "mysql80", "mysql84", "ps57", "ps80", "ps84", "mariadb1011", "mariadb114"}
	t0         = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
)

type synth struct {
	name    string
	targets []string
	threads []int32
	reps    int
	// seconds of per-second series per step; 0 = none stored.
	seconds int
	// qps of target i at threads t, repetition r (from 1).
	qps func(i int, t int32, r int) float64
}

// scaling is a plausible ladder: QPS grows with threads until ~64, then flattens; later targets
// are a little slower, and repetitions vary by about 1 %.
func scaling(i int, t int32, r int) float64 {
	x := float64(t)
	return (1 - 0.05*float64(i)) * 20000 * x / (1 + x/64) * (1 + 0.01*float64(r%3-1))
}

// doc builds a results.json the way the report package does: steps in the order measured (all
// thread counts, then again for each repetition), each with its series, and cells from
// internal/cells when there are repetitions.
func (s synth) doc() *results.Doc {
	d := &results.Doc{
		FormatVersion: results.FormatVersion,
		Run:           results.Run{Name: s.name, Namespace: "bench", Phase: "Succeeded"},
		Workload:      results.Workload{Script: "oltp_read_write", Tables: 10, TableSize: 100000},
		Ladder:        results.Ladder{Threads: s.threads, StepDurationSeconds: 300, Repetitions: s.reps},
	}
	for i, name := range s.targets {
		tg := results.Target{Name: name, Phase: "Succeeded"}
		start := t0.Add(time.Duration(i) * 4 * time.Hour)
		for r := 1; r <= s.reps; r++ {
			for _, th := range s.threads {
				q := s.qps(i, th, r)
				st := results.Step{StepResult: v1alpha1.StepResult{
					Threads: th, Repetition: int32(r), TPS: q / 20,
					QPS:             v1alpha1.QPS{Total: q, Read: q * 0.7, Write: q * 0.2, Other: q * 0.1},
					Latency:         v1alpha1.Latency{MinMs: 0.5, AvgMs: float64(th) / q * 20000, P95Ms: 2 * float64(th) / q * 20000, MaxMs: 100},
					DurationSeconds: 300, Attempts: 1,
					StartTime: &metav1.Time{Time: start}, FinishTime: &metav1.Time{Time: start.Add(305 * time.Second)},
				}}
				if s.seconds > 0 {
					st.Series = seriesJSON(s.seconds, th, q, st.Latency.P95Ms)
				}
				tg.Steps = append(tg.Steps, st)
				start = start.Add(6 * time.Minute)
			}
		}
		if s.reps > 1 {
			var steps []v1alpha1.StepResult
			for _, st := range tg.Steps {
				steps = append(steps, st.StepResult)
			}
			for _, c := range cells.Status(steps) {
				tg.Cells = append(tg.Cells, results.Cell{CellStats: c})
			}
		}
		d.Targets = append(d.Targets, tg)
	}
	return d
}

// seriesJSON is a per-second series around q that dips at second 10.
func seriesJSON(seconds int, threads int32, q, p95 float64) json.RawMessage {
	s := results.Series{BucketSeconds: 1, Intervals: seconds, Threads: threads}
	for i := 1; i <= seconds; i++ {
		f := 1.0
		if i == 10 {
			f = 0.5
		}
		s.Time = append(s.Time, float64(i))
		s.TPS = append(s.TPS, q*f/20)
		s.QPS = append(s.QPS, q*f)
		s.Read = append(s.Read, q*f*0.7)
		s.Write = append(s.Write, q*f*0.2)
		s.Other = append(s.Other, q*f*0.1)
		s.LatencyMs = append(s.LatencyMs, p95/f)
		s.Errors = append(s.Errors, 0)
		s.Reconnects = append(s.Reconnects, 0)
	}
	data, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return data
}

// known is a run with round numbers: a 100/200/300 QPS, b 50/100/400 and no step at 4 threads,
// c never measured.
func known() *results.Doc {
	d := synth{name: "known", targets: []string{"a", "b"}, threads: []int32{1, 2, 4}, reps: 1,
		qps: func(i int, t int32, _ int) float64 {
			return [][]float64{{100, 200, 300}, {50, 100, 400}}[i][map[int32]int{1: 0, 2: 1, 4: 2}[t]]
		}}.doc()
	d.Targets = append(d.Targets, results.Target{Name: "c", Phase: "Failed", Message: "error 2003: Can't connect"})
	return d
}

// extremes is what a by-threads chart of docs must cover: thread counts of the ladders, and y
// from 0 to the largest value or CIHigh drawn (recomputed here from the documents).
func extremes(t *testing.T, docs []*results.Doc, m Metric) (xmin, xmax, ymax float64, labels []string) {
	t.Helper()
	var threads []int32
	for _, d := range docs {
		threads = append(threads, d.Ladder.Threads...)
		for _, tg := range d.Targets {
			if d.Ladder.Repetitions > 1 && len(tg.Cells) > 0 {
				for _, c := range tg.Cells {
					ymax = math.Max(ymax, cellMetric(c.CellStats, m).CIHigh)
				}
				continue
			}
			for _, s := range tg.Steps {
				ymax = math.Max(ymax, stepValue(s, m))
			}
		}
	}
	slices.Sort(threads)
	threads = slices.Compact(threads)
	for _, th := range threads {
		labels = append(labels, strconv.Itoa(int(th)))
	}
	return float64(threads[0]), float64(threads[len(threads)-1]), ymax, labels
}

func TestDrawByThreads(t *testing.T) {
	big := synth{name: "nightly", targets: bigTargets, threads: bigLadder, reps: 5, qps: scaling}.doc()
	cases := []struct {
		name  string
		docs  []*results.Doc
		spec  Spec
		lines int
		// caption must appear under the x axis.
		caption []string
	}{
		{"two targets qps", []*results.Doc{golden(t, "two_targets")}, Spec{}, 2, nil},
		{"two targets tps", []*results.Doc{golden(t, "two_targets")}, Spec{Metric: TPS}, 2, nil},
		{"two targets p95", []*results.Doc{golden(t, "two_targets")}, Spec{Metric: P95}, 2, nil},
		{"repetitions qps", []*results.Doc{golden(t, "repetitions")}, Spec{Metric: QPS}, 2,
			[]string{"median of 3 repetitions", "75 % confidence interval"}},
		{"repetitions p95", []*results.Doc{golden(t, "repetitions")}, Spec{Metric: P95}, 2,
			[]string{"75 % confidence interval"}},
		{"failed after one step", []*results.Doc{golden(t, "failed_after_one_step")}, Spec{}, 2, nil},
		{"known numbers, one target unmeasured", []*results.Doc{known()}, Spec{}, 2,
			[]string{"not drawn (no measured step): c"}},
		{"8 targets x 12 thread counts x 5 repetitions", []*results.Doc{big}, Spec{}, 8,
			[]string{"median of 5 repetitions", "93.8 % confidence interval"}},
		// Four lines in two colours: one per target, the runs told apart by dashes.
		{"two runs", []*results.Doc{golden(t, "two_targets"), renamed(golden(t, "repetitions"), "pk-lookup-2")}, Spec{}, 2,
			[]string{"points with bars: median of 3 repetitions"}},
		{"relative", []*results.Doc{golden(t, "repetitions")}, Spec{RelativeTo: "mysql57"}, 2,
			[]string{"ratios of the medians of 3 repetitions"}},
		{"relative p95 with title", []*results.Doc{golden(t, "two_targets")}, Spec{Metric: P95, RelativeTo: "ps80", Title: "PS 8.0 vs 5.7"}, 2, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Draw(tc.docs, tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			xmin, xmax, ymax, labels := extremes(t, tc.docs, tc.spec.metricOrQPS())
			if !(p.X.Min < xmin && p.X.Max > xmax) || p.X.Min < xmin/2 || p.X.Max > xmax*2 {
				t.Errorf("x axis %v..%v, want a little beyond the ladder's %v..%v", p.X.Min, p.X.Max, xmin, xmax)
			}
			if got := tickLabels(p.X); !slices.Equal(got, labels) {
				t.Errorf("x tick labels %q, want the thread counts %q", got, labels)
			}
			if _, ok := p.X.Scale.(plot.LogScale); !ok {
				t.Errorf("x scale %T, want log", p.X.Scale)
			}
			if tc.spec.RelativeTo == "" && p.Y.Min != 0 {
				t.Errorf("y axis starts at %v, want 0", p.Y.Min)
			}
			if tc.spec.RelativeTo == "" && (p.Y.Max < ymax*1.05 || p.Y.Max > ymax*1.2) {
				t.Errorf("y axis ends at %v, want 5-20 %% above the largest value or CIHigh %v", p.Y.Max, ymax)
			}
			if tc.spec.Title != "" && p.Title.Text != tc.spec.Title {
				t.Errorf("title %q, want %q", p.Title.Text, tc.spec.Title)
			}
			texts := checkEncoded(t, p, tc.lines, 20)
			for _, l := range labels {
				if !slices.Contains(texts, l) {
					t.Errorf("svg lacks the tick label %q (texts %q)", l, texts)
				}
			}
			checkCaption(t, texts, tc.caption)
		})
	}
}

func (s Spec) metricOrQPS() Metric {
	if s.Metric == "" {
		return QPS
	}
	return s.Metric
}

func renamed(d *results.Doc, name string) *results.Doc {
	d.Run.Name = name
	return d
}

func tickLabels(a plot.Axis) []string {
	var out []string
	for _, tk := range a.Tick.Marker.Ticks(a.Min, a.Max) {
		if tk.Label != "" {
			out = append(out, tk.Label)
		}
	}
	return out
}

// TestThreadLabels checks that a dense ladder keeps a tick per thread count but labels only those
// that fit, always the smallest and the largest, and all of them when the chart is wide enough.
func TestThreadLabels(t *testing.T) {
	d := synth{name: "dense", targets: []string{"a"}, threads: []int32{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 768, 1000},
		reps: 1, qps: scaling}.doc()
	cases := []struct {
		width vg.Length
		want  []string
	}{
		{6 * vg.Centimeter, []string{"1", "4", "16", "64", "1000"}},
		{10 * vg.Centimeter, []string{"1", "2", "4", "8", "16", "32", "64", "128", "256", "1000"}},
		{DefaultWidth, []string{"1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "1000"}},
		{40 * vg.Centimeter, []string{"1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "768", "1000"}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.width), func(t *testing.T) {
			p, err := Draw([]*results.Doc{d}, Spec{})
			if err != nil {
				t.Fatal(err)
			}
			var svg bytes.Buffer
			// A height that leaves the data area room: the default aspect ratio's 3.6 cm at 6 cm
			// wide does not, and the legend would have to leave the data area.
			if err := Encode(p, "svg", Size{Width: tc.width, Height: 10 * vg.Centimeter}, &svg); err != nil {
				t.Fatal(err)
			}
			ticks := p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max)
			if len(ticks) != 12 {
				t.Errorf("%d ticks, want one per thread count", len(ticks))
			}
			if got := tickLabels(p.X); !slices.Equal(got, tc.want) {
				t.Errorf("labels %q, want %q", got, tc.want)
			}
			texts, _, err := parseSVG(svg.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range tc.want {
				if !slices.Contains(texts, l) {
					t.Errorf("svg lacks %q", l)
				}
			}
		})
	}
}

// TestThreadLines checks the numbers drawn, from documents with known ones.
func TestThreadLines(t *testing.T) {
	twoRuns := []*results.Doc{golden(t, "two_targets"), renamed(golden(t, "repetitions"), "pk-lookup-2")}
	// pt is a point as drawn: low and high are 0 without an interval.
	type pt struct {
		threads        int32
		value, low, hi float64
	}
	cases := []struct {
		name       string
		docs       []*results.Doc
		spec       Spec
		want       map[string][]pt
		relativeTo string
	}{
		{"single steps", []*results.Doc{known()}, Spec{}, map[string][]pt{
			"a": {{1, 100, 0, 0}, {2, 200, 0, 0}, {4, 300, 0, 0}},
			"b": {{1, 50, 0, 0}, {2, 100, 0, 0}, {4, 400, 0, 0}},
		}, ""},
		{"relative: baseline is 1.0", []*results.Doc{known()}, Spec{RelativeTo: "a"}, map[string][]pt{
			"a": {{1, 1, 0, 0}, {2, 1, 0, 0}, {4, 1, 0, 0}},
			"b": {{1, 0.5, 0, 0}, {2, 0.5, 0, 0}, {4, 400.0 / 300, 0, 0}},
		}, "a"},
		{"relative skips thread counts the baseline lacks", []*results.Doc{golden(t, "failed_after_one_step")}, Spec{RelativeTo: "ps80"}, map[string][]pt{
			"mysql57": {{1, 14545.7 / 13091.13, 0, 0}},
			"ps80":    {{1, 1, 0, 0}},
		}, "ps80"},
		{"cells: median and interval", []*results.Doc{golden(t, "repetitions")}, Spec{Metric: P95}, map[string][]pt{
			"mysql57": {{1, 0.103, 0.102, 0.105}, {8, 0.125, 0.124, 0.128}, {64, 0.3, 0.297, 0.306}},
			"ps80":    {{1, 0.114, 0.113, 0.116}, {8, 0.139, 0.138, 0.142}, {64, 0.333, 0.33, 0.37}},
		}, ""},
		{"cells of one repetition: the step, no interval", []*results.Doc{oneRepCells(golden(t, "repetitions"))}, Spec{}, map[string][]pt{
			"mysql57": {{1, 14545.7, 0, 0}, {8, 96001.6, 0, 0}, {64, 320005.33, 0, 0}},
			"ps80":    {{1, 13091.13, 12829.31, 13222.04}, {8, 86401.44, 84673.41, 87265.45}, {64, 288004.8, 259204.32, 290884.85}},
		}, ""},
		{"several steps, no cells: their median", []*results.Doc{withoutCells(golden(t, "repetitions"))}, Spec{Metric: TPS}, map[string][]pt{
			"mysql57": {{1, 14545.7, 0, 0}, {8, 96001.6, 0, 0}, {64, 320005.33, 0, 0}},
			"ps80":    {{1, 13091.13, 0, 0}, {8, 86401.44, 0, 0}, {64, 288004.8, 0, 0}},
		}, ""},
		{"two runs: relative to run/target, ratios of medians without intervals", twoRuns, Spec{RelativeTo: "pk-lookup/ps80"}, map[string][]pt{
			"pk-lookup/mysql57":   {{1, 14545.7 / 13091.13, 0, 0}, {8, 96001.6 / 86401.44, 0, 0}, {64, 320005.33 / 288004.8, 0, 0}},
			"pk-lookup/ps80":      {{1, 1, 0, 0}, {8, 1, 0, 0}, {64, 1, 0, 0}},
			"pk-lookup-2/mysql57": {{1, 14545.7 / 13091.13, 0, 0}, {8, 96001.6 / 86401.44, 0, 0}, {64, 320005.33 / 288004.8, 0, 0}},
			"pk-lookup-2/ps80":    {{1, 1, 0, 0}, {8, 1, 0, 0}, {64, 1, 0, 0}},
		}, "pk-lookup/ps80"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.spec.metric()
			if err != nil {
				t.Fatal(err)
			}
			lines, _, _, rel, err := threadLines(tc.docs, m, tc.spec.RelativeTo)
			if err != nil {
				t.Fatal(err)
			}
			if rel != tc.relativeTo {
				t.Errorf("relative to %q, want %q", rel, tc.relativeTo)
			}
			got := map[string][]pt{}
			for _, ln := range lines {
				for _, p := range ln.points {
					if p.hasCI != (p.low != 0 || p.high != 0) {
						t.Errorf("%s at %d threads: hasCI %v with interval %v..%v", ln.label, p.threads, p.hasCI, p.low, p.high)
					}
					got[ln.label] = append(got[ln.label], pt{p.threads, round(p.value), round(p.low), round(p.high)})
				}
			}
			for label, w := range tc.want {
				for i := range w {
					w[i].value = round(w[i].value)
				}
				if !slices.Equal(got[label], w) {
					t.Errorf("%s: got %v, want %v", label, got[label], w)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("lines %v, want %d", got, len(tc.want))
			}
		})
	}
}

func round(x float64) float64 { return math.Round(x*1e9) / 1e9 }

// oneRepCells makes the first target's cells look like those of a run still in its first
// repetition.
func oneRepCells(d *results.Doc) *results.Doc {
	for i := range d.Targets[0].Cells {
		d.Targets[0].Cells[i].N = 1
	}
	return d
}

func withoutCells(d *results.Doc) *results.Doc {
	for i := range d.Targets {
		d.Targets[i].Cells = nil
	}
	return d
}

func TestDrawTimeline(t *testing.T) {
	// Drop the series of ps80's second step and the points of its third, as the report does when
	// results.json would not fit.
	dropped := golden(t, "two_targets")
	dropped.Targets[1].Steps[1].Series = nil
	dropped.Targets[1].Steps[2].Series = json.RawMessage(`{"bucketSeconds":0,"intervals":300,"threads":64,"pointsDropped":true}`)

	long := synth{name: "long", targets: bigTargets[:3], threads: bigLadder[:6], reps: 2, seconds: 300, qps: scaling}.doc()

	cases := []struct {
		name       string
		docs       []*results.Doc
		spec       Spec
		xmax, ymax float64
		lines      int
		// minInk is the pixels of each line's colour in the PNG; the golden series have only 5
		// points per 300-second step, so their lines are short.
		minInk  int
		caption []string
	}{
		// Steps start at 0, 360 and 720 s; the last measured 300.002 s.
		{"two targets qps", []*results.Doc{golden(t, "two_targets")}, Spec{Timeline: true}, 720 + 300.002, 21839, 2, 4,
			[]string{"numbers at the top"}},
		{"two targets p95", []*results.Doc{golden(t, "two_targets")}, Spec{Timeline: true, Metric: P95}, 720 + 300.002, 0.64, 2, 4, nil},
		{"repetitions tps", []*results.Doc{golden(t, "repetitions")}, Spec{Timeline: true, Metric: TPS}, 8*360 + 300.002, 10919, 2, 4, nil},
		{"failed after one step", []*results.Doc{golden(t, "failed_after_one_step")}, Spec{Timeline: true}, 720 + 300.002, 21839, 2, 4, nil},
		{"series dropped: flat step values", []*results.Doc{dropped}, Spec{Timeline: true}, 720 + 300.002, 288004.8, 2, 4,
			[]string{"thick flat lines", "2 steps"}},
		{"3 targets, 300 s steps", []*results.Doc{long}, Spec{Timeline: true}, 11*360 + 300, scaling(0, 24, 2), 3, 200, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Draw(tc.docs, tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if p.X.Min != 0 || math.Abs(p.X.Max-tc.xmax) > 1e-9 {
				t.Errorf("x axis %v..%v, want 0..%v", p.X.Min, p.X.Max, tc.xmax)
			}
			if p.Y.Min != 0 || math.Abs(p.Y.Max-tc.ymax*timelineHeadroom) > 1e-9 {
				t.Errorf("y axis %v..%v, want 0..%v (the largest value and room for the step marks)", p.Y.Min, p.Y.Max, tc.ymax*timelineHeadroom)
			}
			texts := checkEncoded(t, p, tc.lines, tc.minInk)
			checkCaption(t, texts, tc.caption)
		})
	}
}

// TestTimelineTraces checks where the steps land and that no per-second value is invented.
func TestTimelineTraces(t *testing.T) {
	d := golden(t, "two_targets")
	d.Targets[0].Steps[1].Series = nil
	traces, endToEnd, err := timeline(&d.Targets[0], QPS, d.Ladder.StepDurationSeconds)
	if err != nil {
		t.Fatal(err)
	}
	if endToEnd {
		t.Error("steps with start times laid end to end")
	}
	type step struct {
		threads    int32
		start, end float64
		flat       bool
		bucket     int
		xys        [][2]float64
	}
	want := []step{
		{threads: 1, start: 0, end: 300.002, bucket: 1, xys: perSecond(0, []float64{20000, 21839, 21677, 21516, 21354})},
		{threads: 8, start: 360, end: 660.002, flat: true, xys: [][2]float64{{360, 96001.6}, {660.002, 96001.6}}},
		{threads: 64, start: 720, end: 1020.002, bucket: 1, xys: perSecond(720, []float64{20000, 21839, 21677, 21516, 21354})},
	}
	if len(traces) != len(want) {
		t.Fatalf("%d traces, want %d", len(traces), len(want))
	}
	for i, w := range want {
		g := traces[i]
		if g.threads != w.threads || g.start != w.start || math.Abs(g.end-w.end) > 1e-9 || g.flat != w.flat || g.bucket != w.bucket {
			t.Errorf("step %d: got %+v, want %+v", i, g, w)
		}
		var pts [][2]float64
		for _, xy := range g.xys {
			pts = append(pts, [2]float64{xy.X, xy.Y})
		}
		if !slices.Equal(pts, w.xys) {
			t.Errorf("step %d: points %v, want %v", i, pts, w.xys)
		}
	}

	// A step whose Job started while the step before measured (the server lock) starts where
	// that one ended, not at its Job's start.
	early := golden(t, "two_targets")
	early.Targets[0].Steps[1].StartTime = &metav1.Time{Time: early.Targets[0].Steps[0].StartTime.Add(290 * time.Second)}
	traces, _, err = timeline(&early.Targets[0], QPS, early.Ladder.StepDurationSeconds)
	if err != nil {
		t.Fatal(err)
	}
	if traces[1].start != traces[0].end || traces[2].start != 720 {
		t.Errorf("a step started early: starts %v %v %v, want the second at the first's end %v, the third at 720",
			traces[0].start, traces[1].start, traces[2].start, traces[0].end)
	}

	// Without start times the steps are laid end to end.
	for i := range d.Targets[0].Steps {
		d.Targets[0].Steps[i].StartTime = nil
	}
	traces, endToEnd, err = timeline(&d.Targets[0], QPS, d.Ladder.StepDurationSeconds)
	if err != nil {
		t.Fatal(err)
	}
	if !endToEnd || traces[1].start != traces[0].end || traces[2].start != traces[1].end {
		t.Errorf("without start times: end to end %v, starts %v %v %v", endToEnd, traces[0].start, traces[1].start, traces[2].start)
	}
}

// perSecond is a series' points from its step's start.
func perSecond(offset float64, qps []float64) [][2]float64 {
	var out [][2]float64
	for i, q := range qps {
		out = append(out, [2]float64{offset + float64(i+1), q})
	}
	return out
}

func TestDrawErrors(t *testing.T) {
	empty := golden(t, "two_targets")
	for i := range empty.Targets {
		empty.Targets[i].Steps = nil
	}
	cases := []struct {
		name string
		docs []*results.Doc
		spec Spec
		want []string
	}{
		{"no runs", nil, Spec{}, []string{"no runs to draw"}},
		{"nil run", []*results.Doc{nil}, Spec{}, []string{"run 1 of 1 is missing"}},
		{"unknown metric", []*results.Doc{known()}, Spec{Metric: "p99"}, []string{`unknown metric "p99"`, "qps, tps, p95"}},
		{"nothing measured", []*results.Doc{empty}, Spec{}, []string{"run bench/pk-lookup has no measured steps yet", "wait until a step finishes"}},
		{"nothing measured, timeline", []*results.Doc{empty}, Spec{Timeline: true}, []string{"no measured steps yet"}},
		{"nothing measured in any run", []*results.Doc{empty, empty}, Spec{}, []string{"none of the runs bench/pk-lookup, bench/pk-lookup has a measured step yet"}},
		{"unknown baseline", []*results.Doc{known()}, Spec{RelativeTo: "mysql80"}, []string{`relative to "mysql80": no such target`, "choose one of a, b"}},
		{"unmeasured baseline", []*results.Doc{known()}, Spec{RelativeTo: "c"}, []string{"c has no measured steps", "choose one of a, b"}},
		{"ambiguous baseline", []*results.Doc{golden(t, "two_targets"), renamed(golden(t, "two_targets"), "again")}, Spec{RelativeTo: "ps80"},
			[]string{"several runs have that target", "pk-lookup/ps80, again/ps80"}},
		{"relative timeline", []*results.Doc{known()}, Spec{Timeline: true, RelativeTo: "a"}, []string{"a timeline draws absolute values"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Draw(tc.docs, tc.spec)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
