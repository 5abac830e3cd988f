// Package charts draws the charts a database engineer publishes from results.json: a metric by
// thread count (absolute or relative to one target) or over time, one line per target, for one
// run or several. The kubectl plugin draws them on demand; the operator stores QPSByThreadsSVG
// next to the results.
package charts

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// Metric is what a chart plots.
type Metric string

const (
	// QPS is the throughput: queries per second (the step's qps.total), or tpmC for go-tpc runs.
	QPS Metric = "qps"
	// TPS is transactions (sysbench events) per second.
	TPS Metric = "tps"
	// P95 is the 95th percentile latency in milliseconds.
	P95 Metric = "p95"

	// The server metrics, from each step's server counters (results.Step.Server), drawn by
	// threads only: they are one number per step, not per second.

	// CPUPerQuery is the server container's CPU time per sysbench query, in microseconds.
	CPUPerQuery Metric = "cpu-per-query"
	// CPUPerSecond is the server container's CPU seconds per second: the cores it kept busy.
	CPUPerSecond Metric = "cpu-per-second"
	// CounterPrefix followed by a counter's name (Counter) is that server counter per query, or
	// per second with Spec.PerSecond: "counter:Innodb_rows_read".
	CounterPrefix = "counter:"
)

// Counter is the metric of a server counter, e.g. Counter("Innodb_rows_read").
func Counter(name string) Metric { return Metric(CounterPrefix + name) }

// Metrics lists the metrics of sysbench's own numbers Draw knows, for flags and their help;
// ServerMetrics lists the server's.
var (
	Metrics       = []Metric{QPS, TPS, P95}
	ServerMetrics = []Metric{CPUPerQuery, CPUPerSecond, Counter("NAME")}
)

// Spec says which chart Draw draws.
type Spec struct {
	// Metric is what to plot; "" means QPS.
	Metric Metric
	// RelativeTo is a target name: each line is then its value divided by that target's value at
	// the same thread count (1.0 = the same), and thread counts the target lacks are left out.
	// With several runs it may be "run/target", as the legend names the lines. "" = absolute.
	RelativeTo string
	// Workload draws only that workload of suites (runs of spec.workloads or spec.preset); ""
	// draws a line per target and workload, a suite's ratios (RelativeTo) each to the same
	// workload of the base target.
	Workload string
	// Timeline draws the per-second series across the ladder instead of one point per thread count.
	Timeline bool
	// PerSecond draws a server counter (CounterPrefix) per second instead of per query.
	PerSecond bool
	// Title replaces the default title, which names the runs and the metric.
	Title string
	// LogLatency draws latency (P95) on a log y axis: a ladder's latencies span decades.
	LogLatency bool
}

// Default size of an encoded chart.
const (
	DefaultWidth  = 20 * vg.Centimeter
	DefaultHeight = 12 * vg.Centimeter
)

// Draw draws one chart of the runs: one line per target that measured at least one step; with
// several runs the legend says "run/target". What the chart leaves out or approximates (targets
// without steps, steps without a per-second series or without the server metric, the confidence
// of the intervals) is said under the x axis.
func Draw(docs []*results.Doc, spec Spec) (*Chart, error) {
	p, _, err := DrawWithNotes(docs, spec)
	return p, err
}

// DrawWithNotes is Draw, and also returns the notes under the chart that say what it leaves out
// (targets without a measured step, targets and steps without the server metric, and why), for
// a command line to print.
func DrawWithNotes(docs []*results.Doc, spec Spec) (*Chart, []string, error) {
	if len(docs) == 0 {
		return nil, nil, errors.New("no runs to draw: pass at least one results.json")
	}
	for i, d := range docs {
		if d == nil {
			return nil, nil, fmt.Errorf("run %d of %d is missing (nil results)", i+1, len(docs))
		}
	}
	m, err := spec.metric()
	if err != nil {
		return nil, nil, err
	}
	if spec.LogLatency && (m.metric != P95 || m.server != nil) {
		return nil, nil, fmt.Errorf("a log scale is for latency (metric %s), not %s: draw %s on a linear axis",
			P95, m.name(), m.name())
	}
	if spec.LogLatency && spec.RelativeTo != "" {
		return nil, nil, errors.New("a log scale is for absolute latency: ratios to a target are drawn on a linear axis " +
			"around 1 (leave out the log scale or the relative target)")
	}
	if spec.Timeline {
		if spec.RelativeTo != "" {
			return nil, nil, fmt.Errorf("a timeline draws absolute values (relative to %q was asked): "+
				"leave RelativeTo empty, or draw by threads", spec.RelativeTo)
		}
		if m.server != nil {
			return nil, nil, fmt.Errorf("%s is one number per step (the server's counters are read at its start and "+
				"end), not a per-second series: draw it by threads (without a timeline)", m.metric)
		}
		return drawTimeline(docs, m.metric, spec.Workload, spec.Title, spec.LogLatency)
	}
	return drawByThreads(docs, m, spec.RelativeTo, spec.Workload, spec.Title, spec.LogLatency)
}

// measure is what a chart draws: one of Metrics, or a server value (server not nil).
type measure struct {
	metric Metric
	server *results.ServerValue
	// throughput is the runs' clients' metric, which Metric QPS draws (tpmC for go-tpc's runs);
	// zero when no run says (the chart's own QPS names).
	throughput load.Metric
}

func (s Spec) metric() (measure, error) {
	if s.PerSecond && !strings.HasPrefix(string(s.Metric), CounterPrefix) {
		switch s.Metric {
		case CPUPerQuery, CPUPerSecond:
			return measure{}, fmt.Errorf("%s names its rate: draw %s for the CPU per second (cores busy), without "+
				"per second", s.Metric, CPUPerSecond)
		}
		return measure{}, fmt.Errorf("per second applies to server counters (%sNAME), not to %s", CounterPrefix,
			cmp.Or(s.Metric, QPS))
	}
	switch s.Metric {
	case "":
		return measure{metric: QPS}, nil
	case QPS, TPS, P95:
		return measure{metric: s.Metric}, nil
	case CPUPerQuery:
		return measure{metric: s.Metric, server: &results.ServerValue{}}, nil
	case CPUPerSecond:
		return measure{metric: s.Metric, server: &results.ServerValue{PerSecond: true}}, nil
	}
	if name, ok := strings.CutPrefix(string(s.Metric), CounterPrefix); ok {
		if name == "" {
			return measure{}, fmt.Errorf("metric %q names no counter: use %sNAME, e.g. %sInnodb_rows_read",
				s.Metric, CounterPrefix, CounterPrefix)
		}
		return measure{metric: s.Metric, server: &results.ServerValue{Counter: name, PerSecond: s.PerSecond}}, nil
	}
	return measure{}, fmt.Errorf("unknown metric %q: use one of %s", s.Metric, metricList())
}

func metricList() string {
	var names []string
	for _, m := range Metrics {
		names = append(names, string(m))
	}
	for _, m := range ServerMetrics {
		names = append(names, string(m))
	}
	return strings.Join(names, ", ") + " (a server counter, e.g. " + CounterPrefix + "Innodb_rows_read)"
}

// Size is an encoded chart's size: 0, 0 means DefaultWidth x DefaultHeight, one zero side keeps
// their aspect ratio. DPI is a PNG's pixels per inch (0 = DefaultDPI); an SVG has no pixels.
type Size struct {
	Width, Height vg.Length
	DPI           int
}

// DefaultDPI is a PNG's resolution unless Size says otherwise. Not a screen's 96: the legend
// and tick labels are 9 pt, and Liberation Sans (like Arial) kerns the pair "11" so that only
// 0.05 em of blank is left between the two 1s; gonum's rasteriser (no hinting) then draws the
// two stems less than a pixel apart and anti-aliasing joins them: "mariadb118" reads as
// "mariadb1 8" with a blot. At 200 dpi the gap is 1.3 pixels and every glyph stands apart (see
// TestLegendGlyphsStandApart); a viewer scales the larger image down smoothly.
const DefaultDPI = 200

// Encode writes p as "png" or "svg" (fonts named, not embedded) at the given size. Like gonum's
// Draw, it adjusts p while drawing: do not encode one chart from two goroutines.
func Encode(p *Chart, format string, sz Size, w io.Writer) error {
	if p == nil || p.Plot == nil {
		return errors.New("encode chart: no chart (nil plot)")
	}
	width, height, err := size(sz.Width, sz.Height)
	if err != nil {
		return err
	}
	switch strings.ToLower(format) {
	case "png":
		dpi := sz.DPI
		switch {
		case dpi == 0:
			dpi = DefaultDPI
		case dpi < 0 || dpi > maxDPI:
			return fmt.Errorf("%d dpi: give a resolution from 1 to %d (96 for a screen, 300 for print)", sz.DPI, maxDPI)
		}
		px := func(l vg.Length) float64 { return float64(l/vg.Inch) * float64(dpi) }
		if px(width) > maxPNGSide || px(height) > maxPNGSide {
			return fmt.Errorf("chart size %.0f x %.0f pt at %d dpi is %.0f x %.0f pixels: a png is at most %d pixels "+
				"a side: choose a smaller size or resolution, or svg", width.Points(), height.Points(), dpi,
				px(width), px(height), maxPNGSide)
		}
		c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(dpi))}
		drawOn(p, c)
		if _, err := c.WriteTo(w); err != nil {
			return fmt.Errorf("encode chart as png: %w", err)
		}
		return nil
	case "svg":
		c := vgsvg.New(width, height)
		drawOn(p, c)
		var buf bytes.Buffer
		if _, err := c.WriteTo(&buf); err != nil {
			return fmt.Errorf("encode chart as svg: %w", err)
		}
		if _, err := w.Write(withFontFallback(buf.Bytes())); err != nil {
			return fmt.Errorf("encode chart as svg: %w", err)
		}
		return nil
	}
	return fmt.Errorf("unsupported chart format %q: use png or svg", format)
}

// maxPNGSide keeps a typo in a size from allocating gigabytes; maxDPI is print's and then some.
const (
	maxPNGSide = 9600
	maxDPI     = 1200
)

func size(w, h vg.Length) (vg.Length, vg.Length, error) {
	switch {
	case w < 0 || h < 0:
		return 0, 0, fmt.Errorf("chart size %.0f x %.0f pt: width and height must not be negative", w.Points(), h.Points())
	case w == 0 && h == 0:
		return DefaultWidth, DefaultHeight, nil
	case w == 0:
		return h * DefaultWidth / DefaultHeight, h, nil
	case h == 0:
		return w, w * DefaultHeight / DefaultWidth, nil
	}
	return w, h, nil
}

// withFontFallback lets a viewer without the Liberation fonts (which the SVG names but does not
// embed, to stay small) use their metric-compatible equivalents rather than its default serif.
func withFontFallback(svg []byte) []byte {
	return bytes.ReplaceAll(svg, []byte("font-family:"+sansFamily+";"),
		[]byte("font-family:'"+sansFamily+"',Arial,Helvetica,sans-serif;"))
}

// QPSByThreadsSVG is the chart the operator stores with the results: QPS by threads of one run
// at the default size, as SVG without embedded fonts (about 32 KB for 8 targets x 12 thread
// counts with repetitions, 6 KB for 2 x 3).
func QPSByThreadsSVG(doc *results.Doc) ([]byte, error) {
	p, err := Draw([]*results.Doc{doc}, Spec{Metric: QPS})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := Encode(p, "svg", Size{}, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// source is one target of one run (of one workload of a suite), and the name the chart gives
// it.
type source struct {
	doc *results.Doc
	// target holds the steps and cells drawn: of workload only, in a suite.
	target   *results.Target
	label    string
	workload string
}

// noSuchWorkload says that run d has no workload named only, and which it has.
func noSuchWorkload(d *results.Doc, only string) error {
	var have []string
	for _, w := range d.Workloads {
		have = append(have, w.Name)
	}
	if len(have) == 0 {
		return fmt.Errorf("workload %s: run %s measured one workload, without a name", only, runName(d))
	}
	return fmt.Errorf("workload %s: run %s has workloads %s", only, runName(d), strings.Join(have, ", "))
}

// workloadSources are sources' targets split by workload: one source per target and workload
// of a suite, labelled "target/workload" (the workload left out when only is set: the chart is
// then of that one workload), so that no line mixes two workloads' cells at one thread count.
// A run of one workload gives its targets whole. only names a workload every suite must have.
func workloadSources(docs []*results.Doc, only string) (measured []source, unmeasured []string, err error) {
	for _, d := range docs {
		names := []string{""}
		if len(d.Workloads) > 0 {
			names = names[:0]
			for _, w := range d.Workloads {
				if only == "" || w.Name == only {
					names = append(names, w.Name)
				}
			}
		}
		if only != "" && len(names) == 0 {
			return nil, nil, noSuchWorkload(d, only)
		}
		for _, wl := range names {
			view := d
			if wl != "" {
				view, _ = d.ForWorkload(wl, nil)
			}
			for i := range view.Targets {
				t := &view.Targets[i]
				label := t.Name
				if wl != "" && only == "" {
					label += "/" + wl
				}
				if len(docs) > 1 {
					label = d.Run.Name + "/" + label
				}
				if len(t.Steps) == 0 {
					unmeasured = append(unmeasured, label)
					continue
				}
				measured = append(measured, source{doc: d, target: t, label: label, workload: wl})
			}
		}
	}
	return measured, unmeasured, nil
}

// sources lists every target of the runs in order, labelled "target" for one run and
// "run/target" for several, and the labels of those that measured nothing.
func sources(docs []*results.Doc) (measured []source, unmeasured []string) {
	for _, d := range docs {
		for i := range d.Targets {
			t := &d.Targets[i]
			label := t.Name
			if len(docs) > 1 {
				label = d.Run.Name + "/" + t.Name
			}
			if len(t.Steps) == 0 {
				unmeasured = append(unmeasured, label)
				continue
			}
			measured = append(measured, source{doc: d, target: t, label: label})
		}
	}
	return measured, unmeasured
}

// legendName is a source's label with its server's version: "mysql80 (8.0.36)".
func legendName(s source) string {
	if v := shortVersion(s.target.ServerVersion); v != "" {
		return s.label + " (" + v + ")"
	}
	return s.label
}

// shortVersion keeps a version's number and first suffix ("8.0.36-28", "10.11.6-MariaDB"), not
// the packaging after it ("-1:10.11.6+maria~ubu2204"), which only widens the legend.
func shortVersion(v string) string {
	parts := strings.SplitN(strings.TrimSpace(v), "-", 3)
	v = parts[0]
	if len(parts) > 1 && parts[1] != "" {
		v += "-" + parts[1]
	}
	if i := strings.IndexAny(v, "+~ "); i > 0 {
		v = v[:i]
	}
	const most = 24
	if len(v) > most {
		v = v[:most]
	}
	return v
}

// nothingMeasured is the error when no target of the runs has a step.
func nothingMeasured(docs []*results.Doc) error {
	if len(docs) == 1 {
		d := docs[0]
		return fmt.Errorf("run %s has no measured steps yet (phase %s): wait until a step finishes",
			runName(d), phaseOr(d.Run.Phase))
	}
	names := make([]string, len(docs))
	for i, d := range docs {
		names[i] = runName(d)
	}
	return fmt.Errorf("none of the runs %s has a measured step yet: wait until a step finishes",
		strings.Join(names, ", "))
}

func runName(d *results.Doc) string {
	if d.Run.Namespace == "" {
		return d.Run.Name
	}
	return d.Run.Namespace + "/" + d.Run.Name
}

func phaseOr(phase string) string {
	if phase == "" {
		return "unknown"
	}
	return phase
}

// defaultTitle names the runs (and their workload when they share one) and what is drawn.
func defaultTitle(docs []*results.Doc, what string) string {
	var names []string
	for _, d := range docs {
		if !slices.Contains(names, d.Run.Name) {
			names = append(names, d.Run.Name)
		}
	}
	runs := strings.Join(names, ", ")
	if len(names) > 3 {
		runs = fmt.Sprintf("%d runs", len(names))
	}
	if w := workload(docs); w != "" {
		runs += " (" + w + ")"
	}
	return runs + ": " + what
}

// workload is the sysbench script the runs share, or "" (also for suites, of several).
func workload(docs []*results.Doc) string {
	name := func(d *results.Doc) string {
		if len(d.Workloads) > 0 {
			// A suite's Workload is its first workload only: the lines name theirs.
			return ""
		}
		if cs := d.Workload.CustomScript; cs != nil {
			return cs.ConfigMap + "/" + cs.Key
		}
		return d.Workload.Script
	}
	w := name(docs[0])
	for _, d := range docs[1:] {
		if name(d) != w {
			return ""
		}
	}
	return w
}

// metricName is the metric in a title, axisName on the y axis.
func metricName(m Metric) string {
	switch m {
	case TPS:
		return "TPS"
	case P95:
		return "p95 latency"
	}
	return "QPS"
}

func axisName(m Metric) string {
	switch m {
	case TPS:
		return "transactions per second"
	case P95:
		return "p95 latency (ms)"
	}
	return "queries per second"
}
