package charts

import (
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
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

// dashes and glyphs vary with a period coprime to the palette's, so that lines that share a
// colour (beyond twelve) still differ, and lines of neighbouring colours differ twice.
var dashes = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(2), vg.Points(2)},
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

// lineStyle is line i's stroke; dashed is false for the dense timeline, where dashes of a jagged
// line only blur it, so there only lines past the palette's twelve are dashed.
func lineStyle(i int, width vg.Length, dashed bool) draw.LineStyle {
	d := dashes[i%len(dashes)]
	if !dashed {
		d = dashes[(i/len(palette))%len(dashes)]
	}
	return draw.LineStyle{Color: lineColor(i), Width: width, Dashes: d}
}

func glyphStyle(i int) draw.GlyphStyle {
	return draw.GlyphStyle{Color: lineColor(i), Radius: vg.Points(3), Shape: glyphs[i%len(glyphs)]}
}

// newPlot is a plot in the charts' fonts with the axis titles, the notes under the x axis and the
// legend corner given.
func newPlot(title, xLabel string, notes []string, yLabel string, legendTop, legendLeft bool) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 12)
	p.Title.Padding = vg.Points(6)
	setCaption(p, xLabel, notes)
	p.Y.Label.Text = yLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 10)
		a.Tick.Label.Font = font.From(sans, 9)
	}
	p.X.Label.Padding = vg.Points(2)
	p.Legend.TextStyle.Font = font.From(sans, 9)
	p.Legend.Top, p.Legend.Left = legendTop, legendLeft
	p.Legend.XOffs = vg.Points(-8)
	if legendLeft {
		p.Legend.XOffs = vg.Points(8)
	}
	p.Legend.YOffs = vg.Points(6)
	if legendTop {
		p.Legend.YOffs = vg.Points(-4)
	}
	p.Legend.ThumbnailWidth = vg.Points(24)
	return p
}

// yFromZero sets the y axis to [0, max], max covering every value drawn.
func yFromZero(p *plot.Plot, max float64) {
	p.Y.Min = 0
	p.Y.Max = max
	if !(max > 0) || math.IsInf(max, 0) {
		p.Y.Max = 1
	}
	p.Y.Tick.Marker = siTicks{}
}

// siTicks are gonum's default ticks, labelled "150k" rather than "150000" from 10,000 up.
type siTicks struct{}

func (siTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
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
}

func (b *intervalBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	var path vg.Path
	for i, x := range b.x {
		px, lo, hi := trX(x), trY(b.low[i]), trY(b.high[i])
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
