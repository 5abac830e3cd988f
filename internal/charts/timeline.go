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
			// A step whose Job started while the one before still measured (the server lock)
			// waited for it: a target's steps never measure at once.
			tr.start = math.Max(s.StartTime.Sub(steps[0].StartTime.Time).Seconds(), cursor)
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

// stepValue is a step's own value of m; its throughput is its client's metric (StepResult.Throughput).
func stepValue(s results.Step, m Metric) float64 {
	switch m {
	case TPS:
		return s.TPS
	case P95:
		return s.Latency.P95Ms
	}
	return s.Throughput()
}

// drawTimeline draws each target's steps in the order they ran; a suite's target is one line
// through its workloads, unless only names the one workload to draw (its steps where they ran,
// the other workloads' time left blank).
func drawTimeline(docs []*results.Doc, metric Metric, only, title string, logY bool) (*Chart, []string, error) {
	var suiteNote string
	if only != "" {
		views := make([]*results.Doc, len(docs))
		for i, d := range docs {
			if !slices.ContainsFunc(d.Workloads, func(w results.NamedWorkload) bool { return w.Name == only }) {
				return nil, nil, noSuchWorkload(d, only)
			}
			views[i], _ = d.ForWorkload(only, nil)
		}
		docs = views
	} else {
		for _, d := range docs {
			if len(d.Workloads) > 0 {
				var names []string
				for _, w := range d.Workloads {
					names = append(names, w.Name)
				}
				suiteNote = fmt.Sprintf("a line runs through the workloads in measuring order (%s); --workload draws one",
					strings.Join(names, ", "))
				break
			}
		}
	}
	throughput, noSeries, err := runsThroughput(docs)
	if err != nil {
		return nil, nil, err
	}
	m := measure{metric: metric, throughput: throughput}
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
	case flat > 0 && noSeries != "":
		notes = append(notes, fmt.Sprintf("thick flat lines: each step's own %s (%s): %d %s", m.name(), noSeries,
			flat, plural(flat, "step")))
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
	if suiteNote != "" {
		notes = append(notes, suiteNote)
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
		if only != "" {
			title += ", workload " + only
		}
	}
	// The x axis's unit follows the ladder's length: its data are seconds.
	var maxX float64
	for _, traces := range all {
		for _, tr := range traces {
			if len(tr.xys) > 0 {
				maxX = math.Max(maxX, tr.end)
			}
		}
	}
	unit, unitName := timeUnit(maxX)
	// The step marks are the vertical lines.
	p := newPlot(title, unitName+" since the target's first step started", notes, m.axis(), false)

	var labels *stepLabels
	if len(marks) > 0 {
		labels = &stepLabels{marks: marks, rows: 1, logY: logY}
		p.add(labels) // first, so that the lines are drawn over the marks
	}
	lks := looks(srcs, true)
	minY, maxY := math.Inf(1), 0.0
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
	p.X.Tick.Marker = timeTicks{unit: unit}
	if labels != nil {
		labels.minY, labels.maxY = minY, maxY
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
// top, in as many rows (up to maxLabelRows) as the labels need not to overlap; a label that
// finds no room in any row is left out rather than drawn over another.
type stepLabels struct {
	marks []stepMark
	// rows is how many label rows the data area keeps free at its top: 1 until the chart is
	// laid out at its size (fitStepLabels).
	rows int
	// maxY and minY are the largest and smallest values drawn, logY whether the axis is a log
	// one: the y axis is raised from them to make room for more rows.
	maxY, minY float64
	logY       bool
	// drawn are the boxes of the labels last drawn (tests check that none overlap).
	drawn []labelBox
}

// labelBox is a drawn thread label and the box its text takes.
type labelBox struct {
	threads int32
	box     vg.Rectangle
}

// maxLabelRows bounds the rows of thread labels: beyond it, the labels would eat the chart.
const maxLabelRows = 3

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

// markGap is the least blank between two labels of a row, and between a mark's line and its
// label.
const markGap = 2

// labelRowHeight is the height of a row of thread labels.
func labelRowHeight() vg.Length { return markLabel.Height("0") + vg.Points(1) }

// placeStepLabels gives each mark (at xs, in points) the row its label goes in (0 the top), or
// -1 when no row of at most maxRows has room; and how many rows it used. width measures a label.
func placeStepLabels(marks []stepMark, xs []vg.Length, width func(string) vg.Length, maxRows int) ([]int, int) {
	rows := make([]int, len(marks))
	ends := make([]vg.Length, 0, maxRows)
	for i, m := range marks {
		label := strconv.Itoa(int(m.threads))
		x := xs[i] + vg.Points(markGap)
		rows[i] = -1
		for r := 0; r < maxRows; r++ {
			if r == len(ends) {
				ends = append(ends, vg.Length(math.Inf(-1)))
			}
			if x >= ends[r]+vg.Points(markGap) {
				rows[i], ends[r] = r, x+width(label)
				break
			}
		}
	}
	used := 0
	for _, r := range rows {
		used = max(used, r+1)
	}
	return rows, used
}

// fitStepLabels lays the thread labels out on the data area of p on c and raises the y axis so
// that the rows they need stay clear of the data.
func fitStepLabels(p *Chart, c draw.Canvas) {
	for _, pl := range p.data {
		s, ok := pl.(*stepLabels)
		if !ok {
			continue
		}
		s.rows = 1
		if s.logY {
			yLog(p, s.minY, s.maxY)
		} else {
			yFromZero(p, s.maxY, timelineHeadroom)
		}
		data := p.DataCanvas(c)
		trX, _ := p.Transforms(&data)
		_, used := placeStepLabels(s.marks, s.xs(trX), markLabel.Width, maxLabelRows)
		if used <= 1 {
			return
		}
		s.rows = used
		// The top rows * rowHeight of the area are the labels'; the data keeps the rest, with the
		// headroom one row has.
		h := data.Size().Y
		free := 1 - float64(vg.Length(used-1)*labelRowHeight()/h)
		if free < 0.5 {
			free = 0.5
		}
		if s.logY {
			lo, hi := math.Log(p.Y.Min), math.Log(p.Y.Max)
			p.Y.Max = math.Exp(lo + (hi-lo)/free)
		} else {
			p.Y.Max /= free
		}
		return
	}
}

func (s *stepLabels) xs(trX func(float64) vg.Length) []vg.Length {
	xs := make([]vg.Length, len(s.marks))
	for i, m := range s.marks {
		xs[i] = trX(m.x)
	}
	return xs
}

func (s *stepLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	xs := s.xs(trX)
	rows, _ := placeStepLabels(s.marks, xs, markLabel.Width, max(s.rows, 1))
	s.drawn = s.drawn[:0]
	for i, m := range s.marks {
		c.StrokeLine2(markLine, xs[i], c.Min.Y, xs[i], c.Max.Y)
		if rows[i] < 0 {
			continue
		}
		y := c.Max.Y - vg.Length(rows[i])*labelRowHeight()
		label := strconv.Itoa(int(m.threads))
		at := vg.Point{X: xs[i] + vg.Points(markGap), Y: y}
		c.FillText(markLabel, at, label)
		s.drawn = append(s.drawn, labelBox{threads: m.threads, box: vg.Rectangle{
			Min: vg.Point{X: at.X, Y: at.Y - markLabel.Height(label)},
			Max: vg.Point{X: at.X + markLabel.Width(label), Y: at.Y},
		}})
	}
}

// timeTicks label the timeline's x axis, in seconds, at round numbers of unit (1: seconds, 60:
// minutes), as its title says.
type timeTicks struct{ unit float64 }

func (t timeTicks) Ticks(lo, hi float64) []plot.Tick {
	lo, hi = lo/t.unit, hi/t.unit
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return plot.DefaultTicks{}.Ticks(lo*t.unit, hi*t.unit)
	}
	// The first step of a clock's round steps (then 1, 2, 5 times powers of ten) that labels
	// at most maxTimeLabels values.
	step := 0.0
	for _, s := range []float64{1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600} {
		if math.Floor(hi/s)-math.Ceil(lo/s)+1 <= maxTimeLabels {
			step = s
			break
		}
	}
	for p := 1000.0; step == 0; p *= 10 {
		for _, f := range []float64{1, 2, 5} {
			if s := f * p; step == 0 && math.Floor(hi/s)-math.Ceil(lo/s)+1 <= maxTimeLabels {
				step = s
			}
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step*2) * step / 2; v <= hi+step*1e-9; v += step / 2 {
		tk := plot.Tick{Value: v * t.unit}
		if r := math.Round(v / step); math.Abs(v/step-r) < 1e-9 {
			tk.Label = strconv.FormatFloat(r*step, 'f', -1, 64)
		}
		ticks = append(ticks, tk)
	}
	return ticks
}

// maxTimeLabels is the most labels the time axis gets: 8 fit side by side on a 6 cm chart.
const maxTimeLabels = 8

// timeUnit is the unit of a timeline lasting seconds: minutes from 10 minutes on, where seconds
// would be four-digit numbers.
func timeUnit(seconds float64) (unit float64, name string) {
	if seconds >= 600 {
		return 60, "minutes"
	}
	return 1, "seconds"
}
