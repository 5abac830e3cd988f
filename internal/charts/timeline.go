package charts

import (
	"fmt"
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

// trace is one step on a target's timeline, in seconds since the target's first step started.
type trace struct {
	threads    int32
	start, end float64
	xys        plotter.XYs
	// flat: the step has no per-second series, so xys is its summary value over its duration.
	flat bool
	// bucket is how many seconds each point averages.
	bucket int
}

// timeline is a target's steps in the order they ran. endToEnd says the steps lacked start
// times and were laid one after the other.
func timeline(t *results.Target, m Metric, stepSeconds float64) (traces []trace, endToEnd bool, err error) {
	steps := slices.Clone(t.Steps)
	endToEnd = slices.ContainsFunc(steps, func(s results.Step) bool { return s.StartTime == nil })
	if !endToEnd {
		slices.SortStableFunc(steps, func(a, b results.Step) int { return a.StartTime.Compare(b.StartTime.Time) })
	}
	var cursor float64
	for _, s := range steps {
		tr := trace{threads: s.Threads, start: cursor}
		if !endToEnd {
			tr.start = s.StartTime.Sub(steps[0].StartTime.Time).Seconds()
		}
		ser, ok, err := s.DecodedSeries()
		if err != nil {
			return nil, false, fmt.Errorf("target %s, %d threads: %w", t.Name, s.Threads, err)
		}
		if ok && !ser.PointsDropped && len(ser.Time) > 0 {
			tr.bucket = max(ser.BucketSeconds, 1)
			col := seriesColumn(ser, m)
			for i, x := range ser.Time {
				tr.xys = append(tr.xys, plotter.XY{X: tr.start + x, Y: col[i]})
			}
			if len(tr.xys) == 1 {
				// One point averages its whole bucket: draw it over the bucket, not as a dot.
				x0 := math.Max(tr.start, tr.xys[0].X-float64(tr.bucket))
				tr.xys = append(plotter.XYs{{X: x0, Y: tr.xys[0].Y}}, tr.xys...)
			}
			tr.end = math.Max(tr.start+duration(s, stepSeconds), tr.xys[len(tr.xys)-1].X)
		} else {
			tr.flat = true
			tr.end = tr.start + duration(s, stepSeconds)
			v := stepValue(s, m)
			tr.xys = plotter.XYs{{X: tr.start, Y: v}, {X: tr.end, Y: v}}
		}
		cursor = tr.end
		traces = append(traces, tr)
	}
	return traces, endToEnd, nil
}

// duration is how long a step measured: as sysbench reported it, else from its Job's times,
// else the ladder's step duration.
func duration(s results.Step, stepSeconds float64) float64 {
	if s.DurationSeconds > 0 {
		return s.DurationSeconds
	}
	if s.StartTime != nil && s.FinishTime != nil {
		if d := s.FinishTime.Sub(s.StartTime.Time).Seconds(); d > 0 {
			return d
		}
	}
	return stepSeconds
}

func seriesColumn(s results.Series, m Metric) []float64 {
	switch m {
	case TPS:
		return s.TPS
	case P95:
		return s.LatencyMs
	}
	return s.QPS
}

// stepValue is a step's own value of m; its throughput is tpmC for a go-tpc step.
func stepValue(s results.Step, m Metric) float64 {
	switch m {
	case TPS:
		return s.TPS
	case P95:
		return s.Latency.P95Ms
	}
	return s.Throughput()
}

func drawTimeline(docs []*results.Doc, metric Metric, title string, logY bool) (*Chart, []string, error) {
	tpmC, err := throughputIsTpmC(docs)
	if err != nil {
		return nil, nil, err
	}
	m := measure{metric: metric, tpmC: tpmC}
	srcs, unmeasured := sources(docs)
	if len(srcs) == 0 {
		return nil, nil, nothingMeasured(docs)
	}
	all := make([][]trace, len(srcs))
	var (
		flat, bucket int
		endToEnd     []string
	)
	for i, s := range srcs {
		traces, e2e, err := timeline(s.target, metric, s.doc.Ladder.StepDurationSeconds)
		if err != nil {
			return nil, nil, fmt.Errorf("chart of run %s: %w", runName(s.doc), err)
		}
		all[i] = traces
		if e2e {
			endToEnd = append(endToEnd, s.label)
		}
		for _, tr := range traces {
			if tr.flat {
				flat++
			}
			bucket = max(bucket, tr.bucket)
		}
	}
	marks := stepMarks(all)
	zeros := 0
	if logY {
		// A log axis has no 0 (a second without a completed query): such points are left out.
		for _, traces := range all {
			for j := range traces {
				n := len(traces[j].xys)
				traces[j].xys = slices.DeleteFunc(slices.Clone(traces[j].xys), func(xy plotter.XY) bool { return !(xy.Y > 0) })
				zeros += n - len(traces[j].xys)
			}
		}
	}

	var notes []string
	switch {
	case flat > 0 && tpmC:
		notes = append(notes, fmt.Sprintf("thick flat lines: each step's own %s (go-tpc records no per-second series): "+
			"%d %s", m.name(), flat, plural(flat, "step")))
	case flat > 0:
		notes = append(notes, fmt.Sprintf("thick flat lines: a step's own %s where its per-second series is missing "+
			"(dropped to fit the ConfigMap, or never stored): %d %s", m.name(), flat, plural(flat, "step")))
	}
	if bucket > 1 {
		notes = append(notes, fmt.Sprintf("some series were downsampled: a point averages up to %d seconds", bucket))
	}
	if len(endToEnd) > 0 {
		notes = append(notes, "steps without start times laid end to end: "+strings.Join(endToEnd, ", "))
	}
	if len(marks) > 0 {
		notes = append(notes, "numbers at the top: the threads of each step")
	}
	var leftOut []string
	if zeros > 0 {
		leftOut = append(leftOut, fmt.Sprintf("not drawn on the log scale: %d %s of %s 0", zeros, plural(zeros, "point"), m.name()))
	}
	if len(unmeasured) > 0 {
		leftOut = append(leftOut, "not drawn (no measured step): "+strings.Join(unmeasured, ", "))
	}
	notes = append(notes, leftOut...)
	if title == "" {
		title = defaultTitle(docs, m.name()+" over time")
	}
	// The step marks are the vertical lines.
	p := newPlot(title, "seconds since the target's first step started", notes, m.axis(), false)

	if len(marks) > 0 {
		p.add(&stepLabels{marks: marks}) // first, so that the lines are drawn over the marks
	}
	lks := looks(srcs, true)
	maxX, minY, maxY := 0.0, math.Inf(1), 0.0
	for i, traces := range all {
		// The legend's line is thicker than the data's 1 pt, to show its colour and dashes.
		thumb := &plotter.Line{LineStyle: lineStyle(lks[i], vg.Points(2))}
		for _, tr := range traces {
			if len(tr.xys) == 0 {
				continue
			}
			l, err := plotter.NewLine(tr.xys)
			if err != nil {
				return nil, nil, fmt.Errorf("chart %s, %d threads: %w", srcs[i].label, tr.threads, err)
			}
			l.LineStyle = lineStyle(lks[i], vg.Points(1))
			if tr.flat {
				l.Width = vg.Points(3)
			}
			p.add(l)
			maxX = math.Max(maxX, tr.end)
			for _, xy := range tr.xys {
				minY, maxY = math.Min(minY, xy.Y), math.Max(maxY, xy.Y)
			}
		}
		if !slices.ContainsFunc(traces, func(tr trace) bool { return !tr.flat }) {
			thumb.Width = vg.Points(3) // only thick flat lines
		}
		p.Legend.Add(legendName(srcs[i]), thumb)
	}
	p.X.Min, p.X.Max = 0, maxX
	if !(maxX > 0) {
		p.X.Max = 1
	}
	if logY {
		yLog(p, minY, maxY)
	} else {
		// More room than by threads: the step marks' labels sit at the top.
		yFromZero(p, maxY, timelineHeadroom)
	}
	return p, leftOut, nil
}

const timelineHeadroom = 1.12

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

type stepMark struct {
	x       float64
	threads int32
}

// stepMarks are where the first target's steps start, when every target ran the same sequence
// of thread counts, so that one set of marks describes them all; nil otherwise.
func stepMarks(all [][]trace) []stepMark {
	seq := func(ts []trace) []int32 {
		out := make([]int32, len(ts))
		for i, t := range ts {
			out[i] = t.threads
		}
		return out
	}
	first := seq(all[0])
	for _, ts := range all[1:] {
		if !slices.Equal(seq(ts), first) {
			return nil
		}
	}
	marks := make([]stepMark, len(all[0]))
	for i, t := range all[0] {
		marks[i] = stepMark{x: t.start, threads: t.threads}
	}
	return marks
}

// stepLabels draws a light vertical line where each step starts and its thread count at the
// top, skipping labels that would overlap the previous one.
type stepLabels struct {
	marks []stepMark
}

var (
	markLine  = draw.LineStyle{Color: color.Gray{Y: 0xc8}, Width: vg.Points(0.5)}
	markLabel = text.Style{
		Color:   color.Gray{Y: 0x60},
		Font:    font.From(sans, 8),
		XAlign:  draw.XLeft,
		YAlign:  draw.YTop,
		Handler: plot.DefaultTextHandler,
	}
)

func (s *stepLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	lastEnd := vg.Length(math.Inf(-1))
	for _, m := range s.marks {
		x := trX(m.x)
		c.StrokeLine2(markLine, x, c.Min.Y, x, c.Max.Y)
		label := strconv.Itoa(int(m.threads))
		if x+vg.Points(2) < lastEnd+vg.Points(3) {
			continue
		}
		c.FillText(markLabel, vg.Point{X: x + vg.Points(2), Y: c.Max.Y}, label)
		lastEnd = x + vg.Points(2) + markLabel.Width(label)
	}
}
