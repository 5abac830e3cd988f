package charts

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// The charts read the same at a screen's 96 dpi, the default and print's 300: the timeline's
// time axis has round numbers in seconds or minutes, its thread labels never overlap (by the
// labels' measured widths) and every thread count of the ladder is labelled at least once, and
// the thread axis's labels keep apart.
func TestChartsAtEveryResolution(t *testing.T) {
	ladders := map[string][]int32{
		"powers of two": {1, 2, 4, 8, 16, 32, 64, 128, 256},
		"dense":         bigLadder,
	}
	for name, ladder := range ladders {
		d := synth{name: "demo", targets: []string{"mariadb118", "mariadb1011", "mysql97", "mysql97-psoff"},
			threads: ladder, reps: 2, seconds: 60, qps: scaling}.doc()
		for _, dpi := range []int{96, 150, 300} {
			t.Run(fmt.Sprintf("%s/%d dpi", name, dpi), func(t *testing.T) {
				timeline, err := Draw([]*results.Doc{d}, Spec{Timeline: true})
				if err != nil {
					t.Fatal(err)
				}
				img := encodePNG(t, timeline, dpi)
				// 20 cm x 12 cm.
				if w := img.Bounds().Dx(); math.Abs(float64(w)-20/2.54*float64(dpi)) > 1 {
					t.Errorf("%d pixels wide, want 20 cm at %d dpi", w, dpi)
				}
				checkTimeAxis(t, timeline)
				checkStepLabels(t, timeline, ladder)

				byThreads, err := Draw([]*results.Doc{d}, Spec{})
				if err != nil {
					t.Fatal(err)
				}
				encodePNG(t, byThreads, dpi)
				checkThreadAxis(t, byThreads)
			})
		}
	}
}

func encodePNG(t *testing.T, p *Chart, dpi int) image.Image {
	t.Helper()
	var buf bytes.Buffer
	if err := Encode(p, "png", Size{DPI: dpi}, &buf); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// checkTimeAxis: labels are whole numbers of the unit the axis title names, evenly spaced.
func checkTimeAxis(t *testing.T, p *Chart) {
	t.Helper()
	unit := 1.0
	if strings.HasPrefix(p.X.Label.Text, "minutes") {
		unit = 60
	} else if !strings.HasPrefix(p.X.Label.Text, "seconds") {
		t.Errorf("x axis title %q names no unit", p.X.Label.Text)
	}
	if unit == 1 && p.X.Max >= 600 {
		t.Errorf("a %.0f s timeline in seconds: four-digit labels", p.X.Max)
	}
	var values []float64
	for _, tk := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		if tk.Label == "" {
			continue
		}
		v, err := strconv.Atoi(tk.Label)
		if err != nil {
			t.Errorf("time label %q is not a whole number", tk.Label)
			continue
		}
		if math.Abs(float64(v)*unit-tk.Value) > 1e-6 {
			t.Errorf("time label %q at %v s", tk.Label, tk.Value)
		}
		values = append(values, float64(v))
	}
	if len(values) < 4 {
		t.Errorf("time labels %v: fewer than 4", values)
	}
	for i := 2; i < len(values); i++ {
		if math.Abs((values[i]-values[i-1])-(values[1]-values[0])) > 1e-9 {
			t.Errorf("time labels %v are not evenly spaced", values)
		}
	}
}

// checkStepLabels: the thread labels last drawn overlap nowhere, and name every thread count.
func checkStepLabels(t *testing.T, p *Chart, ladder []int32) {
	t.Helper()
	var s *stepLabels
	for _, pl := range p.data {
		if sl, ok := pl.(*stepLabels); ok {
			s = sl
		}
	}
	if s == nil {
		t.Fatal("no thread labels on the timeline")
	}
	var seen []int32
	for i, a := range s.drawn {
		seen = append(seen, a.threads)
		for _, b := range s.drawn[i+1:] {
			if a.box.Min.X < b.box.Max.X && b.box.Min.X < a.box.Max.X && a.box.Min.Y < b.box.Max.Y && b.box.Min.Y < a.box.Max.Y {
				t.Errorf("thread labels %d and %d overlap: %v, %v", a.threads, b.threads, a.box, b.box)
			}
		}
	}
	for _, th := range ladder {
		if !slices.Contains(seen, th) {
			t.Errorf("thread count %d is not labelled (%d rows)", th, s.rows)
		}
	}
}

// checkThreadAxis: labelled thread counts stand apart by their measured widths at the axis's
// drawn length, the smallest and largest among them.
func checkThreadAxis(t *testing.T, p *Chart) {
	t.Helper()
	tt, ok := p.X.Tick.Marker.(*threadTicker)
	if !ok || tt.axis <= 0 {
		t.Fatal("the thread axis was not laid out")
	}
	at := func(v float64) vg.Length {
		return vg.Length(math.Log(v/p.X.Min) / math.Log(p.X.Max/p.X.Min) * float64(tt.axis))
	}
	var labelled []float64
	var labels []string
	for _, tk := range tt.Ticks(p.X.Min, p.X.Max) {
		if tk.Label != "" {
			labelled, labels = append(labelled, tk.Value), append(labels, tk.Label)
		}
	}
	for i := 1; i < len(labelled); i++ {
		gap := at(labelled[i]) - at(labelled[i-1]) - (tt.label.Width(labels[i])+tt.label.Width(labels[i-1]))/2
		if gap < 0 {
			t.Errorf("thread labels %s and %s overlap by %.1f pt", labels[i-1], labels[i], -gap.Points())
		}
	}
	ticks := tt.Ticks(p.X.Min, p.X.Max)
	if len(labels) < 2 || labels[0] != ticks[0].Label || labels[len(labels)-1] != ticks[len(ticks)-1].Label {
		t.Errorf("thread labels %v: the smallest and largest must be labelled", labels)
	}
}

// At the default resolution and above, every glyph of a legend entry is drawn apart from its
// neighbours; at 96 dpi the font's kerned "11" merges (why DefaultDPI is not 96).
func TestLegendGlyphsStandApart(t *testing.T) {
	for _, dpi := range []int{96, DefaultDPI, 300} {
		for _, s := range []string{"mariadb118", "mariadb1011", "mysql97", "ps84"} {
			runs := inkRuns(t, s, dpi)
			// The glyphs of these names touch nowhere in the font's outlines (an "ff" would):
			// one run of inked columns per glyph.
			want := len(s)
			if dpi >= DefaultDPI && runs != want {
				t.Errorf("%q at %d dpi: %d separate glyphs, want %d", s, dpi, runs, want)
			}
			if dpi == 96 && s == "mariadb118" && runs == want {
				t.Logf("%q renders whole at 96 dpi now: DefaultDPI could be 96 again", s)
			}
		}
	}
}

// inkRuns draws s in the legend's font at dpi and counts the runs of columns with ink.
func inkRuns(t *testing.T, s string, dpi int) int {
	t.Helper()
	c := vgimg.NewWith(vgimg.UseWH(3*vg.Inch, 0.5*vg.Inch), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(image.White.C))
	dc := draw.New(c)
	sty := newPlot("", "", nil, "", false).Legend.TextStyle
	dc.FillText(sty, vg.Point{X: vg.Points(4), Y: vg.Points(12)}, s)
	img := c.Image()
	runs, in := 0, false
	for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
		ink := false
		for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
			r, _, _, _ := img.At(x, y).RGBA()
			if r < 0xa000 {
				ink = true
				break
			}
		}
		if ink && !in {
			runs++
		}
		in = ink
	}
	return runs
}
