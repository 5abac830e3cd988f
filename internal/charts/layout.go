package charts

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// margin is the blank around the whole chart, so that nothing touches (or is cut by) its edge.
const margin = 6 * vg.Millimeter / 3

// legendInset is the room between the legend's box and the data area's edges; legendPad the
// room inside the box around the entries.
const (
	legendInset = 4
	legendPad   = 3
	// legendClear is how far data must stay from the legend's box: a line's width and a glyph.
	legendClear = 4
)

var (
	legendFill   = color.NRGBA{0xff, 0xff, 0xff, 0xf0}
	legendBorder = draw.LineStyle{Color: color.Gray{Y: 0xb0}, Width: vg.Points(0.5)}
)

// Chart is a drawn chart: gonum's plot, and what it draws in the data area, which the legend
// must not cover.
type Chart struct {
	*plot.Plot
	data []plot.Plotter
}

// add adds plotters to the chart.
func (p *Chart) add(ps ...plot.Plotter) {
	p.Add(ps...)
	p.data = append(p.data, ps...)
}

// legendLayout is where a chart's legend goes: a box inside the data area that no data crosses,
// or, when every corner has data, a column right of it.
type legendLayout struct {
	box     vg.Rectangle
	outside bool
	// ownTitle: the title is drawn on the whole chart, not by gonum on the plot's part of it.
	ownTitle bool
}

// drawOn draws p on c: inside a margin, the legend where it covers no data, a thread axis told
// how long it is so that it labels as many thread counts as fit.
func drawOn(p *Chart, c vg.CanvasSizer) {
	dc := draw.Crop(draw.New(c), margin, -margin, margin, -margin)
	legend := p.Legend
	p.Legend = plot.NewLegend() // drawn below, boxed, where it covers nothing
	defer func() { p.Legend = legend }()

	lay, plotC := placeLegend(p, &legend, dc)
	if lay.ownTitle {
		title := p.Title.Text
		descent := p.Title.TextStyle.FontExtents().Descent
		dc.FillText(p.Title.TextStyle, vg.Point{X: dc.Center().X, Y: dc.Max.Y + descent}, title)
		p.Title.Text = ""
		defer func() { p.Title.Text = title }()
	}
	p.Draw(plotC)
	if lay.box == (vg.Rectangle{}) {
		return
	}
	plotC.SetColor(legendFill)
	plotC.Fill(lay.box.Path())
	plotC.SetLineStyle(legendBorder)
	plotC.Stroke(lay.box.Path())
	inner := draw.Canvas{Canvas: plotC.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: lay.box.Min.X + legendPad, Y: lay.box.Min.Y + legendPad},
		Max: vg.Point{X: lay.box.Max.X - legendPad, Y: lay.box.Max.Y - legendPad},
	}}
	l := legend
	l.Top, l.Left, l.XOffs, l.YOffs = true, true, 0, 0
	l.Draw(inner)
}

// placeLegend finds the legend's box: the first corner of the data area (top left, top right,
// bottom right, bottom left) that no line, glyph, bar or mark crosses; else a column right of the
// data area, which the returned canvas for the plot then leaves out. No box for no entries.
func placeLegend(p *Chart, legend *plot.Legend, dc draw.Canvas) (legendLayout, draw.Canvas) {
	setThreadAxis(p, dc)
	size := legendSize(legend, dc)
	if size.X == 0 {
		return legendLayout{}, dc
	}
	data := p.DataCanvas(dc)
	segs := dataSegments(p, data)
	for _, box := range candidateBoxes(data.Rectangle, size) {
		if fits(box, data.Rectangle) && !crossed(box, segs) {
			return legendLayout{box: box}, dc
		}
	}
	if size.X > dc.Size().X*maxSideLegend {
		// Too wide to stand beside the data: under the chart, centred.
		plotC := draw.Crop(dc, 0, 0, size.Y+legendInset, 0)
		setThreadAxis(p, plotC)
		x := (dc.Min.X + dc.Max.X - size.X) / 2
		box := vg.Rectangle{Min: vg.Point{X: x, Y: dc.Min.Y}, Max: vg.Point{X: x + size.X, Y: dc.Min.Y + size.Y}}
		return legendLayout{box: box, outside: true}, plotC
	}
	// The title stays centred on the whole chart, above the data and the legend: centred on the
	// narrower plot it could run off the chart's left edge.
	var titleHeight vg.Length
	if p.Title.Text != "" {
		titleHeight = p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	}
	plotC := draw.Crop(dc, 0, -(size.X + legendInset), 0, -titleHeight)
	setThreadAxis(p, plotC)
	data = p.DataCanvas(plotC)
	box := vg.Rectangle{
		Min: vg.Point{X: dc.Max.X - size.X, Y: data.Max.Y - size.Y},
		Max: vg.Point{X: dc.Max.X, Y: data.Max.Y},
	}
	return legendLayout{box: box, outside: true, ownTitle: titleHeight > 0}, plotC
}

// maxSideLegend is the widest a legend beside the data may be, as a fraction of the chart.
const maxSideLegend = 0.3

// setThreadAxis tells a thread axis the data area's width on c.
func setThreadAxis(p *Chart, c draw.Canvas) {
	fitStepLabels(p, c)
	if t, ok := p.X.Tick.Marker.(*threadTicker); ok {
		t.axis = 0 // DataCanvas asks for the ticks too: let it have the estimate's
		t.axis = p.DataCanvas(c).Size().X
	}
}

// legendSize is the legend's box with its padding; zero without entries.
func legendSize(l *plot.Legend, c draw.Canvas) vg.Point {
	r := l.Rectangle(c)
	s := r.Size()
	if s.X <= 0 || s.Y <= 0 {
		return vg.Point{}
	}
	return vg.Point{X: s.X + 2*legendPad, Y: s.Y + 2*legendPad}
}

// candidateBoxes are the legend's places inside area, best first: the corners (top left, top
// right, bottom right, bottom left), then down the left and the right edges (between the lines of
// a chart of ratios, say).
func candidateBoxes(area vg.Rectangle, size vg.Point) []vg.Rectangle {
	left := area.Min.X + legendInset
	right := area.Max.X - legendInset - size.X
	top := area.Max.Y - legendInset - size.Y
	bottom := area.Min.Y + legendInset
	box := func(x, y vg.Length) vg.Rectangle {
		return vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + size.X, Y: y + size.Y}}
	}
	out := []vg.Rectangle{box(left, top), box(right, top), box(right, bottom), box(left, bottom)}
	const steps = 8
	for i := 1; i < steps; i++ {
		y := top - (top-bottom)*vg.Length(i)/steps
		out = append(out, box(left, y), box(right, y))
	}
	return out
}

func fits(b, area vg.Rectangle) bool {
	return b.Min.X >= area.Min.X && b.Max.X <= area.Max.X && b.Min.Y >= area.Min.Y && b.Max.Y <= area.Max.Y
}

type segment struct{ a, b vg.Point }

// dataSegments is what the plotters draw in the data area c, as segments in c's coordinates: a
// point is a segment of length 0.
func dataSegments(p *Chart, c draw.Canvas) []segment {
	trX, trY := p.Transforms(&c)
	at := func(x, y float64) vg.Point { return vg.Point{X: trX(x), Y: trY(y)} }
	var out []segment
	polyline := func(xys plotter.XYs) {
		for i := range xys {
			j := max(i-1, 0)
			out = append(out, segment{at(xys[j].X, xys[j].Y), at(xys[i].X, xys[i].Y)})
		}
	}
	for _, pl := range p.data {
		switch v := pl.(type) {
		case *plotter.Line:
			polyline(v.XYs)
		case *plotter.Scatter:
			polyline(v.XYs)
		case *intervalBars:
			for i, x := range v.x {
				out = append(out, segment{at(x, math.Max(v.low[i], v.floor)), at(x, v.high[i])})
			}
		case *refLine:
			y := trY(v.y)
			out = append(out, segment{vg.Point{X: c.Min.X, Y: y}, vg.Point{X: c.Max.X, Y: y}})
		case *stepLabels:
			// Their thread counts at the top of the area.
			top := c.Max.Y - vg.Length(max(v.rows, 1))*labelRowHeight()
			out = append(out, segment{vg.Point{X: c.Min.X, Y: top}, vg.Point{X: c.Max.X, Y: top}})
		}
	}
	return out
}

// crossed says whether any segment comes within legendClear of box.
func crossed(box vg.Rectangle, segs []segment) bool {
	b := vg.Rectangle{
		Min: vg.Point{X: box.Min.X - legendClear, Y: box.Min.Y - legendClear},
		Max: vg.Point{X: box.Max.X + legendClear, Y: box.Max.Y + legendClear},
	}
	for _, s := range segs {
		if clips(s, b) {
			return true
		}
	}
	return false
}

// clips says whether segment s has a point inside r (Liang-Barsky).
func clips(s segment, r vg.Rectangle) bool {
	dx, dy := float64(s.b.X-s.a.X), float64(s.b.Y-s.a.Y)
	t0, t1 := 0.0, 1.0
	for _, e := range []struct{ p, q float64 }{
		{-dx, float64(s.a.X - r.Min.X)},
		{dx, float64(r.Max.X - s.a.X)},
		{-dy, float64(s.a.Y - r.Min.Y)},
		{dy, float64(r.Max.Y - s.a.Y)},
	} {
		if e.p == 0 {
			if e.q < 0 {
				return false
			}
			continue
		}
		t := e.q / e.p
		if e.p < 0 {
			t0 = math.Max(t0, t)
		} else {
			t1 = math.Min(t1, t)
		}
		if t0 > t1 {
			return false
		}
	}
	return true
}
