package charts

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
	"github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
)

// point is a target's value at one thread count: a cell's median and interval, or a step's value
// (the median of the steps when there are several and no cells).
type point struct {
	threads int32
	value   float64
	// low and high bound the interval when hasCI; confidence is its level, n the repetitions.
	low, high  float64
	hasCI      bool
	confidence float64
	n          int32
	// steps is how many steps value is the median of when it does not come from a cell.
	steps int
	// samples are the comparable steps' values and reps their repetitions, for the interval
	// of a ratio to another line.
	samples []float64
	reps    []int32
}

type series struct {
	// label names the line ("target" or "run/target", with "/workload" in a suite); legend adds
	// the server's version.
	label, legend string
	// target and workload are the source's: a suite's lines are divided by the base target's
	// line of their own workload.
	target, workload string
	// look is its source's, so a target keeps its colour when a relative chart leaves other
	// lines out.
	look   look
	points []point
	// doc is the run the line is from: two lines of one interleaved run pair by round.
	doc *results.Doc
}

// byThreads is a target's points, thread counts ascending. A cell summarizes the repetitions
// only when the run has several (its statistics are then the status's, computed once); without
// one the steps of a thread count are reduced here with the same median.
func byThreads(d *results.Doc, t *results.Target, m Metric) []point {
	cellOf := map[int32]results.Cell{}
	if d.Ladder.Repetitions > 1 {
		for _, c := range t.Cells {
			cellOf[c.Threads] = c
		}
	}
	steps := make([]v1alpha1.StepResult, len(t.Steps))
	for i, s := range t.Steps {
		steps[i] = s.StepResult
	}
	var out []point
	defer func() {
		for i := range out {
			for _, st := range steps {
				if st.Threads == out[i].threads && cells.Comparable(st) {
					out[i].samples = append(out[i].samples, stepMetric(st, m))
					out[i].reps = append(out[i].reps, st.Repetition)
				}
			}
		}
	}()
	for _, c := range cells.Of(steps) {
		// A cell of one repetition (a run still going) has no interval: draw its step.
		if cell, ok := cellOf[c.Threads]; ok && cell.N > 1 {
			ms := cellMetric(cell.CellStats, m)
			out = append(out, point{threads: c.Threads, value: ms.Median, low: ms.CILow, high: ms.CIHigh,
				hasCI: true, confidence: ms.CIConfidence, n: cell.N})
			continue
		}
		samples := stepSamples(c, m)
		out = append(out, point{threads: c.Threads, value: stats.Summarize(samples).Median, steps: len(samples)})
	}
	return out
}

// stepMetric is one step's value of m.
func stepMetric(s v1alpha1.StepResult, m Metric) float64 {
	switch m {
	case TPS:
		return s.TPS
	case P95:
		return s.Latency.P95Ms
	}
	return s.Throughput()
}

func cellMetric(c v1alpha1.CellStats, m Metric) v1alpha1.MetricStats {
	switch m {
	case TPS:
		return c.TPS
	case P95:
		return c.P95Ms
	}
	return c.Throughput()
}

func stepSamples(c cells.Cell, m Metric) []float64 {
	switch m {
	case TPS:
		return c.TPS
	case P95:
		return c.P95Ms
	}
	return c.QPS
}

// drawByThreads draws the lines of threadLines and returns, besides the chart, the notes that
// say what it leaves out.
func drawByThreads(docs []*results.Doc, m measure, relativeTo, workload, title string, logY bool) (*Chart, []string, error) {
	throughput, _, err := runsThroughput(docs)
	if err != nil {
		return nil, nil, err
	}
	m.throughput = throughput
	lines, notes, leftOut, relativeTo, err := workloadLines(docs, m, relativeTo, workload)
	if err != nil {
		return nil, nil, err
	}
	what := m.name() + " by threads"
	if workload != "" {
		what = m.name() + " of " + workload + " by threads"
	}
	yLabel := m.axis()
	if relativeTo != "" {
		what = m.name() + " relative to " + relativeTo
		if workload != "" {
			what = m.name() + " of " + workload + " relative to " + relativeTo
		}
		yLabel = fmt.Sprintf("%s / %s of %s (1 = same)", m.name(), m.name(), relativeTo)
		if len(yLabel) > maxYLabel {
			// gonum squeezes the data area to the height of a longer label; the title names
			// the metric.
			yLabel = fmt.Sprintf("ratio to %s (1 = same)", relativeTo)
		}
	}
	if title == "" {
		title = defaultTitle(docs, what)
	}
	if logY {
		// A log axis has no 0: such points (a broken step) are said, not drawn.
		var dropped []string
		for i, ln := range lines {
			lines[i].points = slices.DeleteFunc(slices.Clone(ln.points), func(pt point) bool {
				if pt.value > 0 {
					return false
				}
				dropped = append(dropped, fmt.Sprintf("%s at %d threads", ln.label, pt.threads))
				return true
			})
		}
		if len(dropped) > 0 {
			leftOut = append(leftOut, fmt.Sprintf("not drawn on the log scale (%s of 0): %s", m.name(), strings.Join(dropped, ", ")))
		}
	}
	p := newPlot(title, "threads (log2 scale)", append(notes, leftOut...), yLabel, true)
	if relativeTo != "" {
		p.add(&refLine{y: 1}) // under the lines: the baseline's own line hides it where they meet
	}

	minY, maxY := math.Inf(1), 0.0
	var allBars []*intervalBars
	for _, ln := range lines {
		if len(ln.points) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(ln.points))
		var bars intervalBars
		for j, pt := range ln.points {
			xys[j] = plotter.XY{X: float64(pt.threads), Y: pt.value}
			minY, maxY = math.Min(minY, pt.value), math.Max(maxY, pt.value)
			if pt.hasCI {
				bars.x = append(bars.x, float64(pt.threads))
				bars.low = append(bars.low, pt.low)
				bars.high = append(bars.high, pt.high)
				maxY = math.Max(maxY, pt.high)
				if pt.low > 0 || !logY {
					minY = math.Min(minY, pt.low)
				}
			}
		}
		l, s, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, nil, fmt.Errorf("chart %s: %w", ln.label, err)
		}
		l.LineStyle = lineStyle(ln.look, vg.Points(1.5))
		s.GlyphStyle = glyphStyle(ln.look)
		if len(bars.x) > 0 {
			bars.style = lineStyle(ln.look, vg.Points(1))
			bars.style.Dashes = nil
			bars.capWidth = vg.Points(5)
			p.add(&bars)
			allBars = append(allBars, &bars)
		}
		p.add(l, s)
		p.Legend.Add(ln.legend, l, s)
	}
	threadAxis(p, docs, lines)
	switch {
	case logY:
		yLog(p, minY, maxY)
		for _, b := range allBars {
			b.floor = p.Y.Min
		}
	case relativeTo != "":
		yRatios(p, minY, maxY)
	default:
		yFromZero(p, maxY, headroom)
	}
	return p, leftOut, nil
}

// relativeConfidence is the level of a relative chart's bars.
const relativeConfidence = 0.95

// summaryNotes say what the points are: medians of repetitions and how sure their intervals are.
func summaryNotes(lines []series, ratios bool) []string {
	var (
		nMin, nMax           int32 = math.MaxInt32, 0
		confMin, confMax           = math.Inf(1), math.Inf(-1)
		fromCells, fromSteps bool
		single               bool
	)
	for _, ln := range lines {
		for _, pt := range ln.points {
			switch {
			case pt.n > 0:
				fromCells = true
				nMin, nMax = min(nMin, pt.n), max(nMax, pt.n)
				confMin, confMax = math.Min(confMin, pt.confidence), math.Max(confMax, pt.confidence)
			case pt.steps > 1:
				fromSteps = true
			default:
				single = true
			}
		}
	}
	var notes []string
	if fromCells {
		reps := strconv.Itoa(int(nMax)) + " repetitions"
		if nMin != nMax {
			reps = fmt.Sprintf("%d-%d repetitions", nMin, nMax)
		}
		if ratios {
			notes = append(notes, "ratios of the medians of "+reps+"; bars: 95 % interval of each ratio from the repetitions "+
				"of both lines (paired by round for targets of one interleaved run); a bar across 1 is within noise")
		} else {
			points := "points"
			if fromSteps || single {
				points = "points with bars"
			}
			notes = append(notes, fmt.Sprintf("%s: median of %s; bars: %s confidence interval of the median",
				points, reps, percentRange(confMin, confMax)))
		}
	}
	if fromSteps {
		notes = append(notes, "where a thread count has several steps and no summary, the point is their median")
	}
	return notes
}

func percentRange(lo, hi float64) string {
	pct := func(f float64) string { return strconv.FormatFloat(math.Round(f*1000)/10, 'f', -1, 64) }
	if pct(lo) == pct(hi) {
		return pct(lo) + " %"
	}
	return pct(lo) + "-" + pct(hi) + " %"
}

// threadAxis makes x a log2 axis over the ladders' thread counts, ticked at each of them.
func threadAxis(p *Chart, docs []*results.Doc, lines []series) {
	var threads []int32
	for _, d := range docs {
		threads = append(threads, d.Ladder.Threads...)
	}
	for _, ln := range lines {
		for _, pt := range ln.points {
			threads = append(threads, pt.threads)
		}
	}
	threads = slices.DeleteFunc(threads, func(t int32) bool { return t < 1 })
	slices.Sort(threads)
	threads = slices.Compact(threads)

	if len(threads) == 0 {
		threads = []int32{1}
	}
	p.X.Scale = plot.LogScale{}
	lo, hi := float64(threads[0]), float64(threads[len(threads)-1])
	if lo == hi {
		lo, hi = lo/2, hi*2
	}
	// A little room past the smallest and largest thread counts, so that their glyphs and error
	// bar caps are not cut by the axes.
	pad := math.Pow(hi/lo, xPadding)
	p.X.Min, p.X.Max = lo/pad, hi*pad
	p.X.Tick.Marker = &threadTicker{threads: threads, label: p.X.Tick.Label}
}

// maxYLabel is the longest y axis title (in characters) that fits the height of a chart of the
// default aspect ratio at 10 cm high.
const maxYLabel = 44

// xPadding is the room on each side of the thread axis, as a fraction of its length.
const xPadding = 0.03

// threadTicker ticks every thread count of the ladders and labels those that fit side by side
// (always the smallest and the largest): a ladder such as 512, 768, 1000 is too dense for a
// narrow chart. Encode tells it the data area's width before drawing.
type threadTicker struct {
	threads []int32
	label   text.Style
	axis    vg.Length // the x axis's length; 0 = an estimate for DefaultWidth
}

// labelSpace is the least blank between two thread labels: about a space at 9 pt.
const labelSpace = 2.5

func (t *threadTicker) Ticks(min, max float64) []plot.Tick {
	axis := t.axis
	if axis <= 0 {
		axis = DefaultWidth - 60 // the y axis and the paddings take about 60 pt
	}
	at := func(v float64) vg.Length { return vg.Length(math.Log(v/min) / math.Log(max/min) * float64(axis)) }
	fits := func(a, b plot.Tick, label string) bool {
		return at(b.Value)-at(a.Value) >= (t.label.Width(a.Label)+t.label.Width(label))/2+labelSpace
	}

	ticks := make([]plot.Tick, len(t.threads))
	last := -1
	for i, th := range t.threads {
		ticks[i].Value = float64(th)
		label := strconv.Itoa(int(th))
		if last >= 0 && !fits(ticks[last], ticks[i], label) {
			if i < len(t.threads)-1 || last == 0 {
				continue
			}
			ticks[last].Label = "" // the largest thread count replaces its neighbour
		}
		ticks[i].Label = label
		last = i
	}
	return ticks
}

// runsThroughput is the throughput metric of the runs' clients (tpmC for go-tpc's, QPS for the
// clients that count queries) and, when set, why their steps have no per-second series
// (load.Capabilities.NoSeries); runs of clients that measure different metrics cannot share an
// axis.
func runsThroughput(docs []*results.Doc) (load.Metric, string, error) {
	type group struct {
		caps          load.Capabilities
		runs, clients []string
	}
	var groups []*group
	for _, d := range docs {
		c, _ := client.Named(d.Workload.Client)
		caps := c.Capabilities()
		i := slices.IndexFunc(groups, func(g *group) bool { return g.caps.Metric.Name == caps.Metric.Name })
		if i < 0 {
			groups = append(groups, &group{caps: caps})
			i = len(groups) - 1
		}
		g := groups[i]
		g.runs = append(g.runs, d.Run.Name)
		if !slices.Contains(g.clients, string(c.Name())) {
			g.clients = append(g.clients, string(c.Name()))
		}
	}
	switch len(groups) {
	case 0:
		return load.Metric{}, "", nil
	case 1:
		return groups[0].caps.Metric, groups[0].caps.NoSeries, nil
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = fmt.Sprintf("runs %s measured %s (%s)", strings.Join(g.runs, ", "), g.caps.Metric.Name,
			strings.Join(g.clients, ", "))
	}
	return load.Metric{}, "", fmt.Errorf("%s: draw them in separate charts", strings.Join(parts, " and "))
}
