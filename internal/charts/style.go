package charts

import (
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// sans is the charts' typeface; sansFamily is the family name the SVG writer gives it.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

const sansFamily = "Liberation Sans"

// palette tells twelve lines apart by colour (matplotlib's tab10, its grey and olive replaced
// by colours that stay distinct from the grey grid marks and from each other).
var palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, // blue
	{0xff, 0x7f, 0x0e, 0xff}, // orange
	{0x2c, 0xa0, 0x2c, 0xff}, // green
	{0xd6, 0x27, 0x28, 0xff}, // red
	{0x94, 0x67, 0xbd, 0xff}, // purple
	{0x8c, 0x56, 0x4b, 0xff}, // brown
	{0xe3, 0x77, 0xc2, 0xff}, // pink
	{0x17, 0xbe, 0xcf, 0xff}, // cyan
	{0x00, 0x00, 0x00, 0xff}, // black
	{0x9a, 0x8c, 0x00, 0xff}, // olive
	{0x1a, 0x2f, 0x6b, 0xff}, // navy
	{0x6b, 0xd0, 0x6b, 0xff}, // light green
}

// dashes tell runs apart when several are overlaid (one pattern per run); with one run they
// vary with a period coprime to the palette's, so that lines of neighbouring colours differ twice.
var dashes = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(2), vg.Points(2)},
	{vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)},
}

var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{},
	draw.BoxGlyph{},
	draw.PyramidGlyph{},
	draw.RingGlyph{},
	draw.SquareGlyph{},
	draw.TriangleGlyph{},
	draw.CrossGlyph{},
}

func lineColor(i int) color.RGBA { return palette[i%len(palette)] }

// look is how a line is told apart: its colour (and glyph) and its dash pattern.
type look struct {
	color, dash int
}

// looks gives each source its look. With one run every target has its own colour; with several,
// a target keeps one colour (and glyph) across the runs and each run has one dash pattern, so a
// reader sees both at once. dense lines (the timeline, where dashes of a jagged line only blur
// it) are dashed only past the palette's twelve colours when there is one run.
func looks(srcs []source, dense bool) []look {
	runs := map[*results.Doc]int{}
	var targets []string
	for _, s := range srcs {
		if _, ok := runs[s.doc]; !ok {
			runs[s.doc] = len(runs)
		}
		if !slices.Contains(targets, s.target.Name) {
			targets = append(targets, s.target.Name)
		}
	}
	var workloads []string
	for _, s := range srcs {
		if s.workload != "" && !slices.Contains(workloads, s.workload) {
			workloads = append(workloads, s.workload)
		}
	}
	out := make([]look, len(srcs))
	for i, s := range srcs {
		switch {
		case len(workloads) > 1:
			// A colour per target, a dash per workload (and run): a suite's lines read as its
			// targets' families.
			out[i] = look{color: slices.Index(targets, s.target.Name), dash: runs[s.doc]*len(workloads) + slices.Index(workloads, s.workload)}
		case len(runs) > 1:
			out[i] = look{color: slices.Index(targets, s.target.Name), dash: runs[s.doc]}
		case dense:
			out[i] = look{color: i, dash: i / len(palette)}
		default:
			out[i] = look{color: i, dash: i}
		}
	}
	return out
}

func lineStyle(lk look, width vg.Length) draw.LineStyle {
	return draw.LineStyle{Color: lineColor(lk.color), Width: width, Dashes: dashes[lk.dash%len(dashes)]}
}

func glyphStyle(lk look) draw.GlyphStyle {
	return draw.GlyphStyle{Color: lineColor(lk.color), Radius: vg.Points(3), Shape: glyphs[lk.color%len(glyphs)]}
}

// newPlot is a plot in the charts' fonts with the axis titles, the notes under the x axis and
// light grid lines under the data (grid: which of vertical and horizontal). The legend is placed
// when the chart is encoded (see placeLegend).
func newPlot(title, xLabel string, notes []string, yLabel string, vertical bool) *Chart {
	p := &Chart{Plot: plot.New()}
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 12)
	p.Title.Padding = vg.Points(6)
	setCaption(p.Plot, xLabel, notes)
	p.Y.Label.Text = yLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 10)
		a.Tick.Label.Font = font.From(sans, 9)
	}
	p.X.Label.Padding = vg.Points(2)
	p.Legend.TextStyle.Font = font.From(sans, 9)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.ThumbnailWidth = vg.Points(24)
	p.Legend.Padding = vg.Points(1.5)
	grid := plotter.NewGrid()
	grid.Horizontal = gridLine
	grid.Vertical = gridLine
	if !vertical {
		grid.Vertical.Color = nil
	}
	p.Add(grid)
	return p
}

var gridLine = draw.LineStyle{Color: color.Gray{Y: 0xe4}, Width: vg.Points(0.5)}

// headroom is how far above the largest value the y axis goes, so that the top line and its
// glyphs stand clear of the chart's edge.
const headroom = 1.08

// yFromZero sets the y axis to [0, top], top a little above max, the largest value drawn.
func yFromZero(p *Chart, max, room float64) {
	p.Y.Min = 0
	p.Y.Max = max * room
	if !(max > 0) || math.IsInf(max, 0) {
		p.Y.Max = 1
	}
	p.Y.Tick.Marker = siTicks{}
}

// yRatios sets the y axis of ratios to span lo..hi and 1 with a margin, rather than from 0: a
// difference of 3 % is then visible. The span is at least minRatioSpan, so that equal lines do
// not magnify rounding.
func yRatios(p *Chart, lo, hi float64) {
	lo, hi = math.Min(lo, 1), math.Max(hi, 1)
	span := math.Max(hi-lo, minRatioSpan)
	mid := (lo + hi) / 2
	lo, hi = mid-span/2, mid+span/2
	p.Y.Min = math.Max(0, lo-span*ratioMargin)
	p.Y.Max = hi + span*ratioMargin
	p.Y.Tick.Marker = siTicks{}
}

const (
	minRatioSpan = 0.1
	ratioMargin  = 0.15
)

// yLog sets a log y axis over lo..hi (both positive), with room at both ends.
func yLog(p *Chart, lo, hi float64) {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		lo, hi = 1, 10
	}
	p.Y.Scale = plot.LogScale{}
	p.Y.Min, p.Y.Max = lo/1.25, hi*1.25
	p.Y.Tick.Marker = logTicks{}
}

// logTicks labels 1, 2 and 5 times the powers of ten in the range (gonum's log ticks label only
// the powers, too few for latencies between 2 and 40 ms), each power alone beyond three decades,
// and more within a short range.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	sets := [][]float64{{1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}
	if hi/lo > 1000 {
		sets = [][]float64{{1}}
	}
	// Labels closer than a twelfth of the axis (0.09 next to 0.1) would touch.
	gap := math.Log10(hi/lo) / 12
	for _, steps := range sets {
		var ticks []plot.Tick
		var round []bool // 1, 2 or 5 times a power of ten: labelled first
		for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
			for _, s := range steps {
				v := s * math.Pow(10, e)
				if e < 0 {
					v = s / math.Pow(10, -e) // exact in decimal: 0.7, not 0.7000000000000001
				}
				if v >= lo && v <= hi {
					ticks = append(ticks, plot.Tick{Value: v})
					round = append(round, s == 1 || s == 2 || s == 5)
				}
			}
		}
		labelled := 0
		for _, first := range []bool{true, false} {
			for i := range ticks {
				if round[i] != first || !farFromLabels(ticks, i, gap) {
					continue
				}
				ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'g', -1, 64)
				labelled++
			}
		}
		if labelled >= 3 || (labelled >= 2 && len(steps) > 3) {
			return ticks
		}
	}
	// Less than a decade: round values, unevenly spaced on the log axis but readable.
	return niceTicks(lo, hi)
}

func farFromLabels(ticks []plot.Tick, i int, gap float64) bool {
	for _, tk := range ticks {
		if tk.Label != "" && math.Abs(math.Log10(tk.Value/ticks[i].Value)) < gap {
			return false
		}
	}
	return true
}

// refLine marks y = 1 on a chart of ratios: the baseline's own line.
type refLine struct {
	y float64
}

var refStyle = draw.LineStyle{Color: color.Gray{Y: 0x50}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}

func (r *refLine) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(r.y)
	c.StrokeLine2(refStyle, c.Min.X, y, c.Max.X, y)
}

// siTicks are gonum's default ticks, labelled "150k" rather than "150000" from 10,000 up.
type siTicks struct{}

func (siTicks) Ticks(min, max float64) []plot.Tick {
	ticks := niceTicks(min, max)
	if math.Max(math.Abs(min), math.Abs(max)) < 1e4 {
		return ticks
	}
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = siLabel(ticks[i].Value)
		}
	}
	return ticks
}

// niceTicks labels 4 to 12 round values (steps of 1, 2 or 5 times a power of ten) with a minor
// tick between each two: gonum's default labels as few as two on a short axis.
func niceTicks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / 6
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	step := pow * 10
	for _, f := range []float64{1, 2, 5} {
		if f*pow >= raw {
			step = f * pow
			break
		}
	}
	prec := max(0, -int(math.Floor(math.Log10(step))))
	var ticks []plot.Tick
	for v := math.Ceil(lo/step*2) * step / 2; v <= hi+step*1e-9; v += step / 2 {
		v = math.Round(v/step*2) * step / 2
		tk := plot.Tick{Value: v}
		if r := math.Round(v / step); math.Abs(v/step-r) < 1e-9 {
			tk.Label = strconv.FormatFloat(v, 'f', prec, 64)
		}
		ticks = append(ticks, tk)
	}
	return ticks
}

func siLabel(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// intervalBars draws vertical bars with caps from low to high at each x, all in one path so an
// SVG holds one element per line rather than three per point.
type intervalBars struct {
	x, low, high []float64
	style        draw.LineStyle
	capWidth     vg.Length
	// floor is the least y drawn: a log axis's minimum, which a low bound of 0 cannot be.
	floor float64
}

func (b *intervalBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	var path vg.Path
	for i, x := range b.x {
		px, lo, hi := trX(x), trY(math.Max(b.low[i], b.floor)), trY(b.high[i])
		path.Move(vg.Point{X: px, Y: lo})
		path.Line(vg.Point{X: px, Y: hi})
		for _, y := range []vg.Length{lo, hi} {
			path.Move(vg.Point{X: px - b.capWidth/2, Y: y})
			path.Line(vg.Point{X: px + b.capWidth/2, Y: y})
		}
	}
	if len(path) == 0 {
		return
	}
	c.SetLineStyle(b.style)
	c.Stroke(path)
}

func (b *intervalBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = plotter.Range(plotter.Values(b.x))
	ymin, _ = plotter.Range(plotter.Values(b.low))
	_, ymax = plotter.Range(plotter.Values(b.high))
	return xmin, xmax, ymin, ymax
}

// captionStyle is the notes under the x axis title: what the marks mean and what is left out.
var captionStyle = text.Style{
	Color:   color.Gray{Y: 0x30},
	Font:    font.From(sans, 9),
	XAlign:  draw.XCenter,
	YAlign:  draw.YBottom,
	Handler: plot.DefaultTextHandler,
}

// captionWidth is what caption lines are wrapped to: a chart at least 12 cm wide shows them
// whole, with a margin.
const captionWidth = 11 * vg.Centimeter

// setCaption puts notes under the x axis title. gonum counts a wide axis label as a glyph that
// must fit above the data (squeezing the data area), so the label only reserves blank lines and a
// plotter draws the notes there, centred on the chart.
func setCaption(p *plot.Plot, axisTitle string, notes []string) {
	p.X.Label.Text = axisTitle
	if len(notes) == 0 {
		return
	}
	lines := wrap(notes, captionStyle, captionWidth)
	p.X.Label.Text += strings.Repeat("\n ", len(lines))
	p.Add(&caption{lines: lines})
}

type caption struct {
	lines []string
}

func (cp *caption) Plot(c draw.Canvas, _ *plot.Plot) {
	center := canvasWidth(c) / 2
	// In the reserved lines of the x label, at the canvas's lower edge. They are at the label's
	// larger size, which leaves room between the axis title and the caption.
	pitch := captionStyle.Height("0\n0") - captionStyle.Height("0")
	for i, l := range cp.lines {
		y := vg.Length(len(cp.lines)-1-i)*pitch + vg.Points(2)
		c.FillText(captionStyle, vg.Point{X: center, Y: y}, l)
	}
}

// canvasWidth is the width of the whole chart c is part of: plot.Draw hands plotters the data
// area as a draw.Canvas wrapped in draw.Canvases, around the canvas Encode made.
func canvasWidth(c draw.Canvas) vg.Length {
	inner := c.Canvas
	for {
		switch v := inner.(type) {
		case draw.Canvas:
			inner = v.Canvas
		case vg.CanvasSizer:
			w, _ := v.Size()
			return w
		default:
			return DefaultWidth
		}
	}
}

// wrap breaks each note into lines no wider than width (a single word may be wider).
func wrap(notes []string, sty text.Style, width vg.Length) []string {
	var out []string
	for _, n := range notes {
		line := ""
		for _, word := range strings.Fields(n) {
			if line != "" && sty.Width(line+" "+word) > width {
				out = append(out, line)
				line = ""
			}
			if line != "" {
				line += " "
			}
			line += word
		}
		out = append(out, line)
	}
	return out
}
