package charts

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// drawnValues is every y a chart's lines and bars draw.
func drawnValues(p *Chart) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, pl := range p.data {
		var ys []float64
		switch v := pl.(type) {
		case *plotter.Line:
			for _, xy := range v.XYs {
				ys = append(ys, xy.Y)
			}
		case *intervalBars:
			ys = append(append(ys, v.low...), v.high...)
		}
		for _, y := range ys {
			lo, hi = math.Min(lo, y), math.Max(hi, y)
		}
	}
	return lo, hi
}

// TestChartLayout checks, from the drawn chart's data model, what makes a chart publishable:
// room above the data, the first and last thread counts' glyphs clear of the axes, a legend that
// no line, glyph or bar crosses (or one outside the data area), ratios on an axis around a marked
// 1.0 that spans them with a margin, and a log axis for latency when asked.
func TestChartLayout(t *testing.T) {
	big := synth{name: "nightly", targets: bigTargets, threads: bigLadder, reps: 5, qps: scaling}.doc()
	twoRuns := []*results.Doc{golden(t, "two_targets"), renamed(golden(t, "repetitions"), "pk-lookup-2")}
	cases := []struct {
		name string
		docs []*results.Doc
		spec Spec
	}{
		{"qps", []*results.Doc{golden(t, "two_targets")}, Spec{}},
		{"8 targets", []*results.Doc{big}, Spec{}},
		{"8 targets p95 log", []*results.Doc{big}, Spec{Metric: P95, LogLatency: true}},
		{"repetitions p95 log", []*results.Doc{golden(t, "repetitions")}, Spec{Metric: P95, LogLatency: true}},
		{"relative", []*results.Doc{golden(t, "repetitions")}, Spec{RelativeTo: "mysql57"}},
		{"relative 8 targets", []*results.Doc{big}, Spec{RelativeTo: "ps80"}},
		{"two runs", twoRuns, Spec{}},
		{"two runs apart", []*results.Doc{
			synth{name: "release-1", targets: bigTargets[:3], threads: bigLadder[:8], reps: 1, qps: scaling}.doc(),
			synth{name: "candidate", targets: bigTargets[:3], threads: bigLadder[:8], reps: 1,
				qps: func(i int, t int32, r int) float64 { return scaling(i, t, r) * 0.85 }}.doc()}, Spec{}},
		{"timeline", []*results.Doc{synth{name: "long", targets: bigTargets[:3], threads: []int32{1, 2, 4, 8, 16, 24},
			reps: 2, seconds: 300, qps: scaling}.doc()}, Spec{Timeline: true}},
		{"timeline p95 log", []*results.Doc{golden(t, "two_targets")}, Spec{Timeline: true, Metric: P95, LogLatency: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Draw(tc.docs, tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			lo, hi := drawnValues(p)
			_, logY := p.Y.Scale.(plot.LogScale)
			if logY != tc.spec.LogLatency {
				t.Errorf("y scale %T, want log %v", p.Y.Scale, tc.spec.LogLatency)
			}
			switch {
			case tc.spec.LogLatency:
				if !(p.Y.Min > 0 && p.Y.Min < lo && p.Y.Max >= hi*1.05) {
					t.Errorf("log y axis %v..%v for values %v..%v: want room at both ends", p.Y.Min, p.Y.Max, lo, hi)
				}
				labels := tickLabels(p.Y)
				if len(labels) < 2 {
					t.Errorf("log y axis labels %q: want two or more", labels)
				}
				for _, l := range labels {
					if len(l) > 6 {
						t.Errorf("log y axis label %q: want a round number", l)
					}
				}
			case tc.spec.RelativeTo != "":
				span := math.Max(hi, 1) - math.Min(lo, 1)
				if !(p.Y.Min < math.Min(lo, 1)-span*0.05 && p.Y.Max > math.Max(hi, 1)+span*0.05) {
					t.Errorf("ratio axis %v..%v for ratios %v..%v: want 1 and the ratios with a margin", p.Y.Min, p.Y.Max, lo, hi)
				}
				if p.Y.Min == 0 && lo > 0.5 {
					t.Errorf("ratio axis from 0 for ratios %v..%v: the differences would be flattened", lo, hi)
				}
				if !slices.ContainsFunc(p.data, func(pl plot.Plotter) bool { r, ok := pl.(*refLine); return ok && r.y == 1 }) {
					t.Error("no line marks 1.0")
				}
			default:
				if p.Y.Min != 0 || p.Y.Max < hi*1.05 {
					t.Errorf("y axis %v..%v for values up to %v: want 0 and 5 %% or more of headroom", p.Y.Min, p.Y.Max, hi)
				}
			}
			checkEncoded(t, p, 1, 4) // and written with -charts.out to look at
			for _, sz := range []Size{{}, {Width: 12 * vg.Centimeter, Height: 9 * vg.Centimeter}, {Width: 30 * vg.Centimeter, Height: 12 * vg.Centimeter}} {
				checkLegendClear(t, p, sz, !tc.spec.Timeline)
			}
		})
	}
}

// checkLegendClear lays p out at sz and checks that no drawn point comes within 1 pt of the
// legend's box (sampled every half point along each line and bar), unless the box is outside the
// data area, and that the glyphs at the thread axis's ends stay inside it.
func checkLegendClear(t *testing.T, p *Chart, sz Size, threads bool) {
	t.Helper()
	w, h, err := size(sz.Width, sz.Height)
	if err != nil {
		t.Fatal(err)
	}
	dc := draw.Crop(draw.New(vgimg.New(w, h)), margin, -margin, margin, -margin)
	lay, plotC := placeLegend(p, &p.Legend, dc)
	data := p.DataCanvas(plotC)
	if lay.box == (vg.Rectangle{}) {
		t.Fatalf("%v: no legend", sz)
	}
	if lay.outside {
		if lay.box.Min.X < data.Max.X && lay.box.Max.Y > data.Min.Y {
			t.Errorf("%v: legend %v said to be outside overlaps the data area %v", sz, lay.box, data.Rectangle)
		}
	} else {
		b := lay.box
		for _, s := range dataSegments(p, data) {
			n := int(math.Hypot(float64(s.b.X-s.a.X), float64(s.b.Y-s.a.Y))/0.5) + 1
			for i := 0; i <= n; i++ {
				f := vg.Length(float64(i) / float64(n))
				x, y := s.a.X+(s.b.X-s.a.X)*f, s.a.Y+(s.b.Y-s.a.Y)*f
				if x > b.Min.X-1 && x < b.Max.X+1 && y > b.Min.Y-1 && y < b.Max.Y+1 {
					t.Fatalf("%v: data at (%.1f, %.1f) under the legend %v", sz, x, y, b)
				}
			}
		}
	}
	if threads {
		trX, _ := p.Transforms(&data)
		for _, pl := range p.data {
			sc, ok := pl.(*plotter.Scatter)
			if !ok {
				continue
			}
			for _, xy := range sc.XYs {
				x := trX(xy.X)
				if x-sc.Radius < data.Min.X || x+sc.Radius > data.Max.X {
					t.Fatalf("%v: the glyph at %v threads is cut by the axis (x %.1f, data area %.1f..%.1f)",
						sz, xy.X, x, data.Min.X, data.Max.X)
				}
			}
		}
	}
}

// TestLooks checks that overlaid runs keep one colour (and glyph) per target and one dash pattern
// per run, and that one run's targets each have their own colour.
func TestLooks(t *testing.T) {
	p, err := Draw([]*results.Doc{golden(t, "two_targets"), renamed(golden(t, "repetitions"), "pk-lookup-2")}, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	var lines []*plotter.Line
	for _, pl := range p.data {
		if l, ok := pl.(*plotter.Line); ok {
			lines = append(lines, l)
		}
	}
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 2 runs x 2 targets", len(lines))
	}
	// In source order: run 1 mysql57, run 1 ps80, run 2 mysql57, run 2 ps80.
	same := func(a, b *plotter.Line) (colour, dash bool) {
		return a.Color == b.Color, slices.Equal(a.Dashes, b.Dashes)
	}
	for _, c := range []struct {
		a, b         int
		colour, dash bool
	}{
		{0, 2, true, false}, // a target across runs: its colour, the run's dashes
		{1, 3, true, false},
		{0, 1, false, true}, // a run's targets: their colours, one dash pattern
		{2, 3, false, true},
		{0, 3, false, false},
	} {
		colour, dash := same(lines[c.a], lines[c.b])
		if colour != c.colour || dash != c.dash {
			t.Errorf("lines %d and %d: same colour %v, same dashes %v; want %v, %v", c.a, c.b, colour, dash, c.colour, c.dash)
		}
	}

	one, err := Draw([]*results.Doc{synth{name: "n", targets: bigTargets, threads: bigLadder, reps: 1, qps: scaling}.doc()}, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	colours := map[any]bool{}
	for _, pl := range one.data {
		if l, ok := pl.(*plotter.Line); ok {
			colours[l.Color] = true
		}
	}
	if len(colours) != len(bigTargets) {
		t.Errorf("one run of %d targets drawn in %d colours", len(bigTargets), len(colours))
	}
}

// TestLegendVersions checks that the legend names each target's server version, short.
func TestLegendVersions(t *testing.T) {
	p, err := Draw([]*results.Doc{golden(t, "two_targets")}, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	texts := checkEncoded(t, p, 2, 20)
	for _, want := range []string{"mysql57 (5.7.44)", "ps80 (8.0.36-28)"} {
		if !slices.Contains(texts, want) {
			t.Errorf("legend lacks %q (texts %q)", want, texts)
		}
	}
	for v, want := range map[string]string{
		"8.0.36-28": "8.0.36-28",
		"10.11.6-MariaDB-1:10.11.6+maria~ubu2204": "10.11.6-MariaDB",
		"5.7.44-log": "5.7.44-log",
		"8.4.0":      "8.4.0",
		"":           "",
	} {
		if got := shortVersion(v); got != want {
			t.Errorf("shortVersion(%q) = %q, want %q", v, got, want)
		}
	}
}

func TestLogLatencyErrors(t *testing.T) {
	doc := golden(t, "two_targets")
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{LogLatency: true}, "a log scale is for latency (metric p95), not QPS"},
		{Spec{LogLatency: true, Metric: CPUPerQuery}, "not server CPU per query"},
		{Spec{LogLatency: true, Metric: P95, RelativeTo: "ps80"}, "ratios to a target are drawn on a linear axis"},
	} {
		_, err := Draw([]*results.Doc{doc}, c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.spec, err, c.want)
		}
	}
}

// TestRatioAxis checks the y range of ratios: 1 and the ratios inside, a margin, and a least
// span so that equal lines do not fill the chart with rounding.
func TestRatioAxis(t *testing.T) {
	for _, c := range []struct{ lo, hi float64 }{{1, 1}, {0.97, 1}, {1, 1.03}, {0.5, 2}, {0.05, 0.2}, {1.4, 1.6}} {
		p := &Chart{Plot: plot.New()}
		yRatios(p, c.lo, c.hi)
		lo, hi := math.Min(c.lo, 1), math.Max(c.hi, 1)
		if p.Y.Min >= lo || p.Y.Max <= hi || p.Y.Min < 0 {
			t.Errorf("ratios %v..%v: axis %v..%v", c.lo, c.hi, p.Y.Min, p.Y.Max)
		}
		if p.Y.Max-p.Y.Min < minRatioSpan {
			t.Errorf("ratios %v..%v: axis %v..%v spans less than %v", c.lo, c.hi, p.Y.Min, p.Y.Max, minRatioSpan)
		}
		if labels := tickLabels(p.Y); len(labels) < 3 {
			t.Errorf("ratios %v..%v: labels %q", c.lo, c.hi, labels)
		}
	}
}
