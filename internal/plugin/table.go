package plugin

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// metric is one number of a step and of a cell, as the tables show it.
type metric struct {
	title string
	step  func(v1.StepResult) float64
	cell  func(v1.CellStats) v1.MetricStats
	// decimals is how many decimals a value of that size gets.
	decimals func(float64) int
}

var (
	qpsMetric = metric{
		title:    "QPS",
		step:     func(s v1.StepResult) float64 { return s.Throughput() },
		cell:     func(c v1.CellStats) v1.MetricStats { return c.Throughput() },
		decimals: throughputDecimals,
	}
	p95Metric = metric{
		title:    "p95 latency (ms)",
		step:     func(s v1.StepResult) float64 { return s.Latency.P95Ms },
		cell:     func(c v1.CellStats) v1.MetricStats { return c.P95Ms },
		decimals: func(float64) int { return 3 },
	}
)

// throughputMetric is the run's throughput as the tables show it: QPS, or the client's own
// metric (go-tpc's tpmC).
func throughputMetric(run *v1.BenchmarkRun) metric {
	m := qpsMetric
	m.title = loadclient.For(primaryWorkload(run)).Capabilities().Metric.Name
	return m
}

// primaryWorkload is the workload whose client names the run's metrics: the run's one workload,
// or a suite's first (every workload of a run uses one client).
func primaryWorkload(run *v1.BenchmarkRun) v1.Workload {
	return run.Spec.OrderedWorkloads()[0].Workload
}

// workloadNames are the names of a suite's workloads in measuring order; one "" for a run of
// one spec.workload, whose steps carry no workload.
func workloadNames(run *v1.BenchmarkRun) []string {
	var out []string
	for _, w := range run.Spec.OrderedWorkloads() {
		out = append(out, w.Name)
	}
	return out
}

// throughputDecimals: whole queries per second once there are many of them (a fraction of 12345
// QPS is noise), a decimal or two for slow workloads.
func throughputDecimals(v float64) int {
	switch v = math.Abs(v); {
	case v >= 1000:
		return 0
	case v >= 10:
		return 1
	default:
		return 2
	}
}

// noisyMark follows a noisy cell's median, as in report.md.
const noisyMark = " ~"

// overMark follows a cell with a step that ran past its duration (StepResult.OverDuration), as
// in report.md.
const overMark = " †"

// tableNotes collects what the legend under the tables must explain.
type tableNotes struct {
	// confidence of the intervals shown, by repetitions.
	confidence map[int32]float64
	noisy      bool
	partial    bool
	// over names the steps that ran past their duration, once each, in the order seen.
	over []string
}

// markOver adds overMark to text when ts has a step of workload at th that ran past its
// duration, and notes those steps for the legend.
func (n *tableNotes) markOver(ts *v1.TargetStatus, workload string, th int32, text string) string {
	marked := false
	for _, s := range ts.Steps {
		if s.Workload != workload || s.Threads != th || !s.OverDuration {
			continue
		}
		marked = true
		what := fmt.Sprintf("%s at %d threads", ts.Name, th)
		if workload != "" {
			what = fmt.Sprintf("%s %s at %d threads", ts.Name, workload, th)
		}
		if s.Repetition > 0 {
			what += fmt.Sprintf(" (repetition %d)", s.Repetition)
		}
		what += fmt.Sprintf(": %.3f s", s.DurationSeconds)
		if !slices.Contains(n.over, what) {
			n.over = append(n.over, what)
		}
	}
	if marked {
		return text + overMark
	}
	return text
}

// writeResultsTable writes one row per thread count of the ladder (per workload and thread
// count in a run of several workloads) and one column per target: the step's value, or with
// repetitions the cell's median and the confidence interval of the median from
// status.targets[].cells. A cell not measured yet is "-".
func writeResultsTable(w io.Writer, run *v1.BenchmarkRun, m metric, notes *tableNotes) error {
	tw := printers.GetNewTabWriter(w)
	header := []string{"THREADS"}
	suite := run.Spec.Suite()
	if suite {
		header = []string{"WORKLOAD", "THREADS"}
	}
	for _, t := range run.Spec.Targets {
		col := t.Name
		if ts := targetStatus(run, t.Name); ts != nil && ts.ServerVersion != "" {
			col += " (" + ts.ServerVersion + ")"
		}
		header = append(header, col)
	}
	_, _ = fmt.Fprintln(tw, strings.Join(header, "\t"))
	reps := run.Spec.RepetitionsOrDefault()
	for _, wl := range workloadNames(run) {
		for _, th := range run.Spec.Ladder.Threads {
			row := []string{strconv.Itoa(int(th))}
			if suite {
				row = []string{wl, strconv.Itoa(int(th))}
			}
			for _, t := range run.Spec.Targets {
				row = append(row, cellText(targetStatus(run, t.Name), wl, th, reps, m, notes))
			}
			_, _ = fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
	}
	return tw.Flush()
}

// cellText is one target's value of workload at th threads.
func cellText(ts *v1.TargetStatus, workload string, th int32, reps int, m metric, notes *tableNotes) string {
	if ts == nil {
		return "-"
	}
	if reps <= 1 {
		i := slices.IndexFunc(ts.Steps, func(s v1.StepResult) bool { return s.Workload == workload && s.Threads == th })
		if i < 0 {
			return "-"
		}
		return notes.markOver(ts, workload, th, num(m.step(ts.Steps[i]), m.decimals))
	}
	cs := ts.Cells
	if len(cs) == 0 {
		// A status written before cells existed: the operator's own summary of its steps.
		cs = cells.Status(ts.Steps)
	}
	i := slices.IndexFunc(cs, func(c v1.CellStats) bool { return c.Workload == workload && c.Threads == th })
	if i < 0 {
		// Not measured yet, or no repetition within its duration.
		return notes.markOver(ts, workload, th, "-")
	}
	c := cs[i]
	s := m.cell(c)
	text := fmt.Sprintf("%s [%s, %s]", num(s.Median, m.decimals), num(s.CILow, m.decimals), num(s.CIHigh, m.decimals))
	if notes.confidence == nil {
		notes.confidence = map[int32]float64{}
	}
	notes.confidence[c.N] = s.CIConfidence
	if int(c.N) < reps {
		text += fmt.Sprintf(" n=%d", c.N)
		notes.partial = true
	}
	if noisy(c) {
		text += noisyMark
		notes.noisy = true
	}
	return notes.markOver(ts, workload, th, text)
}

// noisy applies the report's rule to a cell of the status: QPS or p95 latency varying between
// repetitions by more than cells.MaxCV.
func noisy(c v1.CellStats) bool {
	n := int(c.N)
	return stats.Noisy(stats.Summary{N: n, CV: c.Throughput().CV}, cells.MaxCV) || stats.Noisy(stats.Summary{N: n, CV: c.P95Ms.CV}, cells.MaxCV)
}

// writeLegend explains the intervals and marks of the tables above.
func writeLegend(w io.Writer, run *v1.BenchmarkRun, notes *tableNotes) {
	defer writeOverLegend(w, run, notes)
	reps := run.Spec.RepetitionsOrDefault()
	if reps <= 1 {
		_, _ = fmt.Fprintln(w, "One measurement per cell (spec.repetitions 1): no confidence interval.")
		return
	}
	ns := make([]int32, 0, len(notes.confidence))
	for n := range notes.confidence {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	levels := make([]string, 0, len(ns))
	for _, n := range ns {
		levels = append(levels, fmt.Sprintf("%s with %d repetitions", percent(notes.confidence[n]), n))
	}
	_, _ = fmt.Fprintf(w, "Cells: median [low, high] over %d repetitions: the confidence interval of the median", reps)
	if len(levels) > 0 {
		_, _ = fmt.Fprintf(w, ", confidence %s", strings.Join(levels, ", "))
	}
	_, _ = fmt.Fprintln(w, " (with fewer than 6 repetitions no interval reaches 95 %: it is the range, min to max).")
	if notes.partial {
		_, _ = fmt.Fprintln(w, "n=K: only K repetitions of that cell are measured so far, or are within their duration (†).")
	}
	if notes.noisy {
		_, _ = fmt.Fprintf(w, "~ noisy: the cell's QPS or p95 latency varies between repetitions by more than %s (coefficient of variation).\n",
			percent(cells.MaxCV))
	}
}

// writeOverLegend explains overMark and names the steps it marks.
func writeOverLegend(w io.Writer, run *v1.BenchmarkRun, notes *tableNotes) {
	if len(notes.over) == 0 {
		return
	}
	step := run.Spec.Ladder.StepDurationOrDefault()
	what := "the value is the step's own"
	if run.Spec.RepetitionsOrDefault() > 1 {
		what = "the cell is the median of its other repetitions"
	}
	_, _ = fmt.Fprintf(w, "† ran past its step: sysbench measured longer than the step's %s plus the tolerance of %s, as "+
		"an event outlasted the step; its rates are not comparable with the others' (%s; left out of the statistics "+
		"and the comparison): %s.\n", step, sysbench.OverrunTolerance(step), what, strings.Join(notes.over, "; "))
}

func num(v float64, decimals func(float64) int) string {
	return strconv.FormatFloat(v, 'f', decimals(v), 64)
}

// percent writes a ratio as a percentage: 0.875 as "87.5 %", 0.9688 as "96.9 %".
func percent(x float64) string {
	return strconv.FormatFloat(x*100, 'f', 1, 64) + " %"
}

// age is how long ago t was, as kubectl prints it ("5m", "2d3h"); "<unknown>" for a zero time.
func age(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}
