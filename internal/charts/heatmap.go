package charts

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	relativetable "github.com/mysqlbench/mysqlbench-operator/internal/relative"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// Heatmap draws the relative table of one run (relative.Of): a row per workload and thread
// count, a column per target other than base, each cell coloured by its ratio to base on a
// diverging scale centred on 1.0 (red below, blue above, white at 1; the colour saturates at
// the largest change, at least ±25 %), with the ratio and its interval printed in it, so the
// picture reads in grey print too.
func Heatmap(doc *results.Doc, base, title string) (*Chart, error) {
	if doc == nil {
		return nil, errors.New("no run to draw: pass its results.json")
	}
	t, err := relativetable.Of(doc, base)
	if err != nil {
		return nil, err
	}
	if len(t.Targets) == 0 {
		return nil, fmt.Errorf("run %s has one target: a heat map sets targets against a base target", runName(doc))
	}
	if len(t.Rows) == 0 {
		return nil, fmt.Errorf("run %s has no thread counts to draw", runName(doc))
	}
	throughput, _, err := runsThroughput([]*results.Doc{doc})
	if err != nil {
		return nil, err
	}
	name := measure{metric: QPS, throughput: throughput}.name()
	if title == "" {
		title = defaultTitle([]*results.Doc{doc}, name+" relative to "+t.Base)
	}
	notes := []string{fmt.Sprintf("Each cell: the target's median %s over %s's at the same workload and thread count, with its 95 %% interval "+
		"(paired by round when interleaved); red below 1, blue above, white at 1; \"-\" not measured.", name, t.Base)}
	p := newPlot(title, "target", notes, "workload @ threads", false)
	hm := &heatCells{table: t, span: heatSpan(t)}
	p.add(hm)
	p.X.Min, p.X.Max = -0.5, float64(len(t.Targets))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(t.Rows))-0.5
	var xt, yt []plot.Tick
	for i, name := range t.Targets {
		xt = append(xt, plot.Tick{Value: float64(i), Label: name})
	}
	for i, r := range t.Rows {
		label := strconv.Itoa(int(r.Threads))
		if r.Workload != "" {
			label = r.Workload + " @ " + label
		}
		// The first row at the top, as in the tables.
		yt = append(yt, plot.Tick{Value: float64(len(t.Rows) - 1 - i), Label: label})
	}
	p.X.Tick.Marker = plot.ConstantTicks(xt)
	p.Y.Tick.Marker = plot.ConstantTicks(yt)
	p.X.Tick.Length, p.Y.Tick.Length = 0, 0
	return p, nil
}

// heatSpan is the log ratio at which the colour saturates: the largest change of the table, at
// least ln 1.25 (a table of small changes is not painted as if they were large).
func heatSpan(t relativetable.Table) float64 {
	span := math.Log(1.25)
	for _, r := range t.Rows {
		for _, c := range r.Cells {
			if c.OK && c.Ratio > 0 {
				span = math.Max(span, math.Abs(math.Log(c.Ratio)))
			}
		}
	}
	return span
}

// heatCells draws the table's cells: a filled square each, its ratio and interval in it.
type heatCells struct {
	table relativetable.Table
	span  float64
}

var (
	heatLow   = color.RGBA{R: 0xb2, G: 0x18, B: 0x2b, A: 0xff} // ColorBrewer RdBu's ends
	heatHigh  = color.RGBA{R: 0x21, G: 0x66, B: 0xac, A: 0xff}
	heatNone  = color.RGBA{R: 0xee, G: 0xee, B: 0xee, A: 0xff}
	heatValue = font.From(sans, 10)
	heatCI    = font.From(sans, 7)
)

// heatColor is the colour of a ratio: white at 1, towards red below and blue above, full at
// span (a log ratio).
func heatColor(ratio, span float64) color.RGBA {
	f := math.Max(-1, math.Min(1, math.Log(ratio)/span))
	end := heatHigh
	if f < 0 {
		end, f = heatLow, -f
	}
	mix := func(a uint8) uint8 { return uint8(math.Round(255 + (float64(a)-255)*f)) }
	return color.RGBA{R: mix(end.R), G: mix(end.G), B: mix(end.B), A: 0xff}
}

// textOn is black on a light colour, white on a dark one.
func textOn(c color.RGBA) color.Color {
	if 0.299*float64(c.R)+0.587*float64(c.G)+0.114*float64(c.B) > 140 {
		return color.Black
	}
	return color.White
}

func (h *heatCells) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	rows := len(h.table.Rows)
	for i, r := range h.table.Rows {
		y := float64(rows - 1 - i)
		for j, cell := range r.Cells {
			x := float64(j)
			rect := vg.Rectangle{
				Min: vg.Point{X: trX(x - 0.5), Y: trY(y - 0.5)},
				Max: vg.Point{X: trX(x + 0.5), Y: trY(y + 0.5)},
			}
			fill, value, ci := heatNone, "-", ""
			if cell.OK {
				fill = heatColor(cell.Ratio, h.span)
				value = strconv.FormatFloat(cell.Ratio, 'f', 2, 64)
				if cell.HasInterval() {
					ci = fmt.Sprintf("[%s, %s]", strconv.FormatFloat(cell.Low, 'f', 2, 64), strconv.FormatFloat(cell.High, 'f', 2, 64))
				}
			}
			c.SetColor(fill)
			c.Fill(rect.Path())
			c.SetLineStyle(draw.LineStyle{Color: color.White, Width: vg.Points(1)})
			c.Stroke(rect.Path())
			center := vg.Point{X: (rect.Min.X + rect.Max.X) / 2, Y: (rect.Min.Y + rect.Max.Y) / 2}
			vs := draw.TextStyle{Color: textOn(fill), Font: heatValue, XAlign: draw.XCenter, YAlign: draw.YCenter,
				Handler: plot.DefaultTextHandler}
			if ci == "" {
				c.FillText(vs, center, value)
				continue
			}
			cs := vs
			cs.Font = heatCI
			c.FillText(vs, vg.Point{X: center.X, Y: center.Y + heatCI.Size*0.6}, value)
			c.FillText(cs, vg.Point{X: center.X, Y: center.Y - heatValue.Size*0.6}, ci)
		}
	}
}

// DataRange makes the axes span the cells exactly.
func (h *heatCells) DataRange() (xmin, xmax, ymin, ymax float64) {
	return -0.5, float64(len(h.table.Targets)) - 0.5, -0.5, float64(len(h.table.Rows)) - 0.5
}
