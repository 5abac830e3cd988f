package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
	"github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/relative"
	"github.com/mysqlbench/mysqlbench-operator/internal/report/format"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// missingCell marks a step a target has no result for (it failed earlier, or has not got there).
const missingCell = "—"

// renderMarkdown writes report.md: the run's headline output, shaped like Percona's published
// tables of QPS by threads with one column per server, so results can be pasted next to theirs.
// writeSuite writes a suite's workloads, in the order each round measured them and with where
// the data was prepared again, then each workload's sections.
func writeSuite(b *strings.Builder, doc *results.Doc, servers [][]*serverstats.Step, chart bool) {
	c, _ := client.Named(doc.Workload.Client)
	b.WriteString("Workloads, in the order each round measured them (those that only read first):\n\n")
	for _, w := range doc.Workloads {
		one, _ := doc.ForWorkload(w.Name, servers)
		kind := "reads"
		if w.Writes {
			kind = "writes"
		}
		fmt.Fprintf(b, "- %s (%s): %s", format.MDText(w.Name), kind, c.WorkloadLine(one))
		if w.FreshData != "" {
			fmt.Fprintf(b, "; its data is prepared again before it where it follows another workload (%s)", format.MDText(w.FreshData))
		}
		b.WriteString(".\n")
	}
	writeRelativeTable(b, doc)
	for _, w := range doc.Workloads {
		one, oneServers := doc.ForWorkload(w.Name, servers)
		writeWorkloadSections(b, one, oneServers, chart, w.Name)
	}
}

// writeRelativeTable writes a suite's throughput relative to the base target in one table: a
// row per workload and thread count, a column per other target (the "vs" columns of the
// workloads' sections, side by side, so the workloads read at a glance).
func writeRelativeTable(b *strings.Builder, doc *results.Doc) {
	if len(doc.Targets) < 2 {
		return
	}
	t, err := relative.Of(doc, "")
	if err != nil {
		return
	}
	c, _ := client.Named(doc.Workload.Client)
	fmt.Fprintf(b, "\n## %s relative to %s\n\n| Workload | Threads |", c.Capabilities().Metric.Name, format.MDText(t.Base))
	for _, name := range t.Targets {
		b.WriteString(" " + format.MDText(name) + " |")
	}
	b.WriteString("\n|---|---:|" + strings.Repeat("---:|", len(t.Targets)) + "\n")
	for _, r := range t.Rows {
		fmt.Fprintf(b, "| %s | %d |", format.MDText(r.Workload), r.Threads)
		for _, c := range r.Cells {
			b.WriteString(" " + c.Text() + " |")
		}
		b.WriteString("\n")
	}
	how := "from the repetitions of each side (a t interval of their logarithms)"
	if t.Paired {
		how = "paired by round: the targets were interleaved, so each round's ratio cancels what the round shared"
	}
	fmt.Fprintf(b, "\nEach target's median over %s's at the same workload and thread count, with its 95 %% interval, %s; "+
		"\"within noise\" when the interval holds 1. A run of one repetition has no interval. "+
		"`kubectl mysqlbench plot %s --heatmap --output-file heatmap.png` draws this table.\n", format.MDText(t.Base), how,
		format.MDText(doc.Run.Name))
}

// writeWorkloadSections writes the tables of one workload's steps: the metric and latency by
// threads, the client's section, steps past their duration, the cells' statistics and the
// server's counters. suffix names the workload in the headings of a suite ("" otherwise).
func writeWorkloadSections(b *strings.Builder, doc *results.Doc, servers [][]*serverstats.Step, chart bool, suffix string) {
	c, _ := client.Named(doc.Workload.Client)
	caps := c.Capabilities()
	of := ""
	if suffix != "" {
		of = ": " + format.MDText(suffix)
	}
	threads := tableThreads(doc)
	fmt.Fprintf(b, "\n## %s by threads%s\n\n", caps.Metric.Name, of)
	writeTable(b, doc, threads, qpsOf, true)
	if chart && suffix == "" {
		writeChartLink(b, caps.Metric.Name)
	}
	if caps.ReportNote != "" {
		b.WriteString("\n" + caps.ReportNote + "\n")
	}
	writeNodeSpread(b, doc)
	if caps.Reports(load.Percentile) {
		heading := caps.LatencyHeading
		if heading == "" {
			heading = "p95 latency (ms) by threads"
		}
		b.WriteString("\n## " + heading + of + "\n\n")
		writeTable(b, doc, threads, p95Of, false)
	}
	b.WriteString(c.ReportSection(doc))
	writeOverDuration(b, doc, caps.Metric.Name)
	if doc.Ladder.Repetitions > 1 {
		writeCellStats(b, doc, caps.Metric.Name)
	}
	writeServerSection(b, doc, servers)
}

func renderMarkdown(doc *results.Doc, servers [][]*serverstats.Step, chart bool) string {
	var b strings.Builder
	c, _ := client.Named(doc.Workload.Client)
	fmt.Fprintf(&b, "# BenchmarkRun %s (namespace %s)\n\n", format.MDText(doc.Run.Name), format.MDText(doc.Run.Namespace))
	if len(doc.Workloads) > 0 {
		writeSuite(&b, doc, servers, chart)
	} else {
		fmt.Fprintf(&b, "Workload: %s.\n", c.WorkloadLine(doc))
		writeWorkloadSections(&b, doc, servers, chart, "")
	}

	b.WriteString("\n## Targets\n\n")
	for _, tr := range doc.Targets {
		phase := tr.Phase
		if phase == "" {
			phase = "not started"
		}
		version := "server version unknown"
		if tr.ServerVersion != "" {
			version = "server " + format.MDText(tr.ServerVersion)
		}
		fmt.Fprintf(&b, "- %s: %s, %s", format.MDText(tr.Name), phase, version)
		if tr.Message != "" {
			fmt.Fprintf(&b, ": %s", format.MDText(tr.Message))
		}
		b.WriteString("\n")
	}
	writeNodes(&b, doc)

	if len(doc.Dropped) > 0 || len(doc.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, kind := range []struct{ kind, what string }{
			{results.DroppedSeries, fmt.Sprintf("Per-second series left out of %s", KeyResultsJSON)},
			{results.DroppedServer, fmt.Sprintf("Server counters left out of %s, %s and the server tables above", KeyResultsJSON, KeyServerCSV)},
		} {
			ds := slices.DeleteFunc(slices.Clone(doc.Dropped), func(d results.Dropped) bool { return droppedKind(d) != kind.kind })
			if len(ds) == 0 {
				continue
			}
			fmt.Fprintf(&b, "- %s to keep the results under %d bytes (the numbers above and in %s are complete):\n",
				kind.what, MaxConfigMapBytes, KeyResultsCSV)
			for _, d := range ds {
				fmt.Fprintf(&b, "  - %s %s\n", format.MDText(d.Target), droppedSteps(doc, d))
			}
		}
		for _, n := range doc.Notes {
			fmt.Fprintf(&b, "- %s\n", format.MDText(n))
		}
	}
	return b.String()
}

// tableThreads is the rows of the tables: the ladder, plus any thread count status holds that the
// ladder does not (which should not happen), so no number is hidden.
func tableThreads(doc *results.Doc) []int32 {
	threads := slices.Clone(doc.Ladder.Threads)
	for _, tr := range doc.Targets {
		for _, st := range tr.Steps {
			if !slices.Contains(threads, st.Threads) {
				threads = append(threads, st.Threads)
			}
		}
	}
	slices.Sort(threads)
	return threads
}

// metricOf picks a metric from a step and from a cell's statistics.
type metricOf struct {
	step func(v1alpha1.StepResult) float64
	cell func(v1alpha1.CellStats) v1alpha1.MetricStats
}

var (
	// qpsOf is the throughput: QPS, or tpmC for go-tpc (StepResult.Throughput).
	qpsOf = metricOf{func(s v1alpha1.StepResult) float64 { return s.Throughput() }, func(c v1alpha1.CellStats) v1alpha1.MetricStats { return c.Throughput() }}
	p95Of = metricOf{func(s v1alpha1.StepResult) float64 { return s.Latency.P95Ms }, func(c v1alpha1.CellStats) v1alpha1.MetricStats { return c.P95Ms }}
)

// noisyMark follows the median of a noisy cell.
const noisyMark = " ~"

// overMark follows a cell with a step that ran past its duration (StepResult.OverDuration): the
// step's own value with one repetition, else the median of the cell's other repetitions.
const overMark = " †"

// overDurationSteps are the steps of tr at threads that ran past their duration.
func overDurationSteps(tr results.Target, threads int32) []results.Step {
	var out []results.Step
	for _, st := range tr.Steps {
		if st.Threads == threads && st.OverDuration {
			out = append(out, st)
		}
	}
	return out
}

// writeOverDuration explains overMark and lists the steps it marks, when there are any.
func writeOverDuration(b *strings.Builder, doc *results.Doc, metric string) {
	var lines []string
	for _, tr := range doc.Targets {
		for _, th := range tableThreads(doc) {
			for _, st := range overDurationSteps(tr, th) {
				line := fmt.Sprintf("- %s at %d threads", format.MDText(tr.Name), st.Threads)
				if st.Repetition > 0 {
					line += fmt.Sprintf(" (repetition %d)", st.Repetition)
				}
				lines = append(lines, line+fmt.Sprintf(": measured %.3f s, %s %s, p95 %s ms",
					st.DurationSeconds, metric, format.Readable(st.Throughput()), format.Readable(st.Latency.P95Ms)))
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	step := time.Duration(doc.Ladder.StepDurationSeconds * float64(time.Second))
	fmt.Fprintf(b, "\n%s ran past its step: sysbench measured the steps below for longer than the step's %s plus the "+
		"tolerance of %s (the larger of 1 s and 1 %% of the step; sysbench ends every step after the events in flight, "+
		"a fraction of a second late on normal steps). An event outlasted the step, so their rates are counts over a longer time "+
		"than the other steps' and end with that event running alone: they are not comparable. ",
		strings.TrimSpace(overMark), format.Seconds(doc.Ladder.StepDurationSeconds), format.Seconds(sysbench.OverrunTolerance(step).Seconds()))
	if doc.Ladder.Repetitions > 1 {
		b.WriteString("A marked cell shows the median of its other repetitions (n in the statistics counts them); " +
			"— when it has none. ")
	} else {
		b.WriteString("A marked cell shows the step's own value. ")
	}
	b.WriteString("They are left out of the statistics, the chart and any comparison with a baseline.\n\n")
	b.WriteString(strings.Join(lines, "\n") + "\n")
}

// writeCellStats writes the statistics of every cell over its repetitions, and the legend of the
// tables above, whose cells are then medians.
func writeCellStats(b *strings.Builder, doc *results.Doc, metric string) {
	fmt.Fprintf(b, "\nWith %d repetitions the tables above show each cell's median;%s marks a noisy cell, whose %s or "+
		"p95 latency varies between repetitions by more than %s (coefficient of variation).\n",
		doc.Ladder.Repetitions, noisyMark, metric, percent(cells.MaxCV))
	if doc.Ladder.ServerInstance == string(v1alpha1.ServerInstancePerRepetition) {
		b.WriteString("\nEach repetition measured a new server instance (serverInstance PerRepetition): a new server " +
			"process with a cold buffer pool, its data prepared again and warmed up, so the spread below includes " +
			"what differs between instances, not only the noise within one.\n")
	}
	b.WriteString("\n## Statistics per cell\n\n")
	b.WriteString("Over the repetitions of each cell: n, the median and a confidence interval [low, high] for it with " +
		"the level it achieves (CI level: the probability that an interval chosen this way covers the true median), the " +
		"coefficient of variation (cv) and the range (min-max). Below 6 repetitions the interval is the range, which " +
		"covers the median with probability 1 - 2·(1/2)^n: 75 % for n = 3, 87.5 % for 4, 93.75 % for 5; from 6 on " +
		"it is two order statistics inside the range, chosen to reach at least 95 %. ")
	b.WriteString("The intervals here: " + achievedLevels(doc) + ".\n\n")
	fmt.Fprintf(b, "| Target | Threads | n | CI level | %[1]s median [CI] | %[1]s cv | %[1]s min-max | TPS median [CI] | TPS cv | TPS min-max "+
		"| p95 ms median [CI] | p95 cv | p95 min-max | |\n", metric)
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, tr := range doc.Targets {
		for _, c := range tr.Cells {
			fmt.Fprintf(b, "| %s | %d | %d | %s |", format.MDText(tr.Name), c.Threads, c.N, ciLevel(c.Throughput(), c.N))
			for _, m := range []v1alpha1.MetricStats{c.Throughput(), c.TPS, c.P95Ms} {
				fmt.Fprintf(b, " %s [%s, %s] | %s | %s-%s |", format.Readable(m.Median), format.Readable(m.CILow), format.Readable(m.CIHigh),
					percent(m.CV), format.Readable(m.Min), format.Readable(m.Max))
			}
			if c.Noisy {
				b.WriteString(" noisy |\n")
			} else {
				b.WriteString(" |\n")
			}
		}
	}
}

// achievedLevels lists the confidence levels the cells' intervals reach, with the n that gives
// each, the largest n first: "75 % (n = 3)", or "96.88 % (n = 6), 75 % (n = 3)" when an
// over-duration step left a cell with fewer samples.
func achievedLevels(doc *results.Doc) string {
	levels := map[int32]string{}
	for _, tr := range doc.Targets {
		for _, c := range tr.Cells {
			levels[c.N] = ciLevel(c.Throughput(), c.N)
		}
	}
	ns := slices.Sorted(maps.Keys(levels))
	slices.Reverse(ns)
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprintf("%s (n = %d)", levels[n], n)
	}
	if len(parts) == 0 {
		return "none (no cell has samples)"
	}
	return strings.Join(parts, ", ")
}

// ciLevel is the confidence the interval of m reaches with n samples, as a percentage. Results
// stored before the level was recorded have none: below 6 samples it is the range's coverage,
// from 6 on the statistics guarantee at least 95 %.
func ciLevel(m v1alpha1.MetricStats, n int32) string {
	level := m.CIConfidence
	switch {
	case level > 0:
	case n >= 6:
		return "≥ 95 %"
	case n >= 2:
		level = 1 - math.Pow(0.5, float64(n-1))
	default:
		return missingCell
	}
	return strconv.FormatFloat(math.Round(level*10000)/100, 'f', -1, 64) + " %"
}

// ratio writes v against base as "x0.97": two decimals tell a 3 % difference, which is what
// the repetitions of a step can resolve.
func ratio(v, base float64) string { return "x" + strconv.FormatFloat(v/base, 'f', 2, 64) }

// percent writes a ratio as a percentage with one decimal: 0.0123 as "1.2 %".
func percent(x float64) string { return strconv.FormatFloat(x*100, 'f', 1, 64) + " %" }

// tableCell is what a table shows for target tr at threads: the median with repetitions, the
// step's value without; ok is false when there is nothing to show.
func tableCell(doc *results.Doc, tr results.Target, th int32, value metricOf) (v float64, noisy, ok bool) {
	if i := slices.IndexFunc(tr.Cells, func(c results.Cell) bool { return c.Threads == th }); i >= 0 {
		c := tr.Cells[i]
		return value.cell(c.CellStats).Median, c.Noisy, true
	}
	if i := slices.IndexFunc(tr.Steps, func(s results.Step) bool { return s.Threads == th }); i >= 0 &&
		doc.Ladder.Repetitions <= 1 {
		// One repetition: status holds one step per thread count. (With repetitions a thread
		// count without a cell has no step that is a sample: no median to show.)
		return value.step(tr.Steps[i].StepResult), false, true
	}
	return 0, false, false
}

// writeTable writes one column per target and, with ratios, after each target but the first
// its values over the first target's: the question a comparison table is read for.
func writeTable(b *strings.Builder, doc *results.Doc, threads []int32, value metricOf, ratios bool) {
	ratios = ratios && len(doc.Targets) > 1
	b.WriteString("| Threads |")
	for i, tr := range doc.Targets {
		name := format.MDText(tr.Name)
		if tr.ServerVersion != "" {
			name += " (" + format.MDText(tr.ServerVersion) + ")"
		}
		b.WriteString(" " + name + " |")
		if ratios && i > 0 {
			b.WriteString(" vs " + format.MDText(doc.Targets[0].Name) + " |")
		}
	}
	b.WriteString("\n|---:|")
	for i := range doc.Targets {
		b.WriteString("---:|")
		if ratios && i > 0 {
			b.WriteString("---:|")
		}
	}
	b.WriteString("\n")
	for _, th := range threads {
		fmt.Fprintf(b, "| %d |", th)
		base, _, baseOK := tableCell(doc, doc.Targets[0], th, value)
		baseOK = baseOK && base != 0 && comparable(doc, doc.Targets[0], th)
		for i, tr := range doc.Targets {
			cell := missingCell
			v, noisy, ok := tableCell(doc, tr, th, value)
			if ok {
				cell = format.Readable(v)
				if noisy {
					cell += noisyMark
				}
			}
			if len(overDurationSteps(tr, th)) > 0 {
				cell += overMark
			}
			b.WriteString(" " + cell + " |")
			if ratios && i > 0 {
				if ok && baseOK && comparable(doc, tr, th) {
					b.WriteString(" " + ratioWithInterval(doc, doc.Targets[0], tr, th, value, v, base) + " |")
				} else {
					b.WriteString(" " + missingCell + " |")
				}
			}
		}
		b.WriteString("\n")
	}
	if ratios {
		b.WriteString("\n" + ratioLegend(doc) + "\n")
	}
}

// ratioWithInterval is a "vs" cell: the ratio of the medians (v over base) with its 95 %
// interval from the repetitions, paired by round when the targets were interleaved, and "within
// noise" when the interval holds 1; the ratio alone, saying so, from one repetition.
func ratioWithInterval(doc *results.Doc, ref, tr results.Target, th int32, value metricOf, v, base float64) string {
	r := cellRatio(doc, ref, tr, th, value)
	if !r.Valid() {
		return ratio(v, base) + " (no interval)"
	}
	s := fmt.Sprintf("%s [%s, %s]", ratio(v, base), strconv.FormatFloat(r.Low, 'f', 2, 64), strconv.FormatFloat(r.High, 'f', 2, 64))
	if r.WithinNoise() {
		s += " within noise"
	}
	return s
}

// cellRatio is tr's cell at threads against ref's, from their repetitions (steps that ran past
// their duration left out), paired by repetition when the targets were interleaved.
func cellRatio(doc *results.Doc, ref, tr results.Target, th int32, value metricOf) stats.CellRatio {
	return relative.CellRatioOf(doc, ref, tr, th, value.step)
}

// ratioLegend says what the "vs" columns hold.
func ratioLegend(doc *results.Doc) string {
	how := "from the repetitions of each side (a t interval of their logarithms)"
	if doc.Ladder.Order == string(v1alpha1.OrderInterleaved) {
		how = "paired by round: the targets were interleaved, so each round's ratio cancels what the round shared"
	}
	return "vs " + format.MDText(doc.Targets[0].Name) + ": the ratio of the medians with its 95 % interval, " + how +
		"; \"within noise\" when the interval holds 1 (the repetitions cannot tell the two apart). " +
		"A run of one repetition has no interval."
}

// comparable says whether tr's value at threads can be set against another target's: without
// repetitions a step that ran past its duration is shown as measured but is not comparable (with
// repetitions the cell is the median of the other repetitions).
func comparable(doc *results.Doc, tr results.Target, th int32) bool {
	return doc.Ladder.Repetitions > 1 || len(overDurationSteps(tr, th)) == 0
}

// writeChartLink shows the QPS-by-threads chart as an image where report.md sits next to it (a
// bundle), and says where to get it when report.md is read from the ConfigMap, which cannot link.
func writeChartLink(b *strings.Builder, metric string) {
	fmt.Fprintf(b, "\n![%s by threads, log2 thread axis](%s)\n\n", metric, BundleQPSChart)
	fmt.Fprintf(b, "The image shows where this report sits in a bundle (`kubectl mysqlbench export RUN --bundle DIR` "+
		"writes %s next to it). Read from the results ConfigMap, the same chart is its key %s (SVG), "+
		"and `kubectl mysqlbench plot RUN --output-file chart.png` draws it.\n", BundleQPSChart, KeyQPSChart)
}

// droppedKind is what a Dropped entry left out; an entry without a kind is a series.
func droppedKind(d results.Dropped) string {
	if d.Kind == "" {
		return results.DroppedSeries
	}
	return d.Kind
}

// droppedSteps says which steps of a target lost their series; "all 64 steps" reads better than
// 64 thread counts.
func droppedSteps(doc *results.Doc, d results.Dropped) string {
	for _, tr := range doc.Targets {
		if tr.Name == d.Target && len(tr.Steps) > 1 && len(tr.Steps) == len(d.Threads) {
			return fmt.Sprintf("at all %d steps", len(tr.Steps))
		}
	}
	if len(d.Repetitions) == len(d.Threads) {
		// With repetitions: "at 1 threads (repetitions 1, 2), 8 threads (repetition 3)".
		var parts []string
		for i := 0; i < len(d.Threads); {
			j := i
			var reps []int32
			for ; j < len(d.Threads) && d.Threads[j] == d.Threads[i]; j++ {
				reps = append(reps, d.Repetitions[j])
			}
			word := "repetition"
			if len(reps) > 1 {
				word = "repetitions"
			}
			parts = append(parts, fmt.Sprintf("%d threads (%s %s)", d.Threads[i], word, joinThreads(reps)))
			i = j
		}
		return "at " + strings.Join(parts, ", ")
	}
	return "at " + joinThreads(d.Threads) + " threads"
}

func joinThreads(ts []int32) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = strconv.FormatInt(int64(t), 10)
	}
	return strings.Join(s, ", ")
}
