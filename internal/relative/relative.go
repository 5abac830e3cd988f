// Package relative sets a run's targets against a base target, cell by cell: the ratio of the
// medians of the throughput with its 95 % interval from the repetitions (paired by round when
// the targets were interleaved). report.md's "vs" columns, the relative table of a run of
// several workloads (report.md, kubectl mysqlbench describe) and the heat map draw from here, so
// they show the same numbers.
package relative

import (
	"fmt"
	"slices"
	"strconv"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
)

// Confidence is the level of the ratios' intervals.
const Confidence = 0.95

// Table is every target's throughput over the base target's: a row per workload and thread
// count, a column per other target.
type Table struct {
	Base string
	// Targets are the other targets, in the run's order.
	Targets []string
	Rows    []Row
	// Paired: the intervals are of the rounds' ratios (the targets were interleaved).
	Paired bool
	// Repetitions is the run's; with 1 there are no intervals.
	Repetitions int
}

// Row is one workload ("" in a run of one) at one thread count.
type Row struct {
	Workload string
	Threads  int32
	Cells    []Cell
}

// Cell is one target's ratio to the base at a row; OK is false when either side has no
// comparable value there.
type Cell struct {
	OK    bool
	Ratio float64
	// Low and High bound Ratio at Confidence; both 0 when there is no interval.
	Low, High float64
}

// HasInterval says whether the cell has an interval.
func (c Cell) HasInterval() bool { return c.High > 0 }

// WithinNoise says whether the interval holds 1: the repetitions cannot tell the two apart.
func (c Cell) WithinNoise() bool { return c.HasInterval() && c.Low <= 1 && c.High >= 1 }

// Text is the cell as report.md's "vs" columns write it: "x0.90 [0.87, 0.93]", "within noise"
// after an interval that holds 1, "(no interval)" after a ratio from one repetition, "-" when
// there is no ratio.
func (c Cell) Text() string {
	if !c.OK {
		return "-"
	}
	r := "x" + strconv.FormatFloat(c.Ratio, 'f', 2, 64)
	if !c.HasInterval() {
		return r + " (no interval)"
	}
	s := fmt.Sprintf("%s [%s, %s]", r, strconv.FormatFloat(c.Low, 'f', 2, 64), strconv.FormatFloat(c.High, 'f', 2, 64))
	if c.WithinNoise() {
		s += " within noise"
	}
	return s
}

// BaseOf is the base target of doc: base when it names one of its targets (spec.baseTarget),
// else the first target.
func BaseOf(doc *results.Doc, base string) (string, error) {
	if len(doc.Targets) == 0 {
		return "", fmt.Errorf("run %s has no targets", doc.Run.Name)
	}
	if base == "" {
		return doc.Targets[0].Name, nil
	}
	var names []string
	for _, t := range doc.Targets {
		if t.Name == base {
			return base, nil
		}
		names = append(names, t.Name)
	}
	return "", fmt.Errorf("base target %q: run %s has targets %v", base, doc.Run.Name, names)
}

// Of is doc's throughput relative to base (BaseOf: "" is doc.BaseTarget, else the first
// target), a row per workload (in measuring order) and thread count of the ladder.
func Of(doc *results.Doc, base string) (Table, error) {
	name, err := BaseOf(doc, cmpOr(base, doc.BaseTarget))
	if err != nil {
		return Table{}, err
	}
	t := Table{Base: name, Paired: doc.Ladder.Order == string(v1.OrderInterleaved), Repetitions: doc.Ladder.Repetitions}
	for _, tr := range doc.Targets {
		if tr.Name != name {
			t.Targets = append(t.Targets, tr.Name)
		}
	}
	workloads := []string{""}
	if len(doc.Workloads) > 0 {
		workloads = workloads[:0]
		for _, w := range doc.Workloads {
			workloads = append(workloads, w.Name)
		}
	}
	for _, wl := range workloads {
		one := doc
		if wl != "" {
			one, _ = doc.ForWorkload(wl, nil)
		}
		ref := one.Targets[slices.IndexFunc(one.Targets, func(tr results.Target) bool { return tr.Name == name })]
		for _, th := range one.Ladder.Threads {
			row := Row{Workload: wl, Threads: th}
			base, baseOK := Median(one, ref, th)
			baseOK = baseOK && base != 0 && Comparable(one, ref, th)
			for _, tr := range one.Targets {
				if tr.Name == name {
					continue
				}
				var c Cell
				if v, ok := Median(one, tr, th); ok && baseOK && Comparable(one, tr, th) {
					c = Cell{OK: true, Ratio: v / base}
					if r := CellRatio(one, ref, tr, th); r.Valid() {
						c.Low, c.High = r.Low, r.High
					}
				}
				row.Cells = append(row.Cells, c)
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t, nil
}

// Median is the throughput doc's tables show for tr at threads: the cell's median with
// repetitions, the step's value without; ok is false when there is none.
func Median(doc *results.Doc, tr results.Target, th int32) (float64, bool) {
	if i := slices.IndexFunc(tr.Cells, func(c results.Cell) bool { return c.Threads == th }); i >= 0 {
		return tr.Cells[i].Throughput().Median, true
	}
	if i := slices.IndexFunc(tr.Steps, func(s results.Step) bool { return s.Threads == th }); i >= 0 && doc.Ladder.Repetitions <= 1 {
		return tr.Steps[i].Throughput(), true
	}
	return 0, false
}

// Comparable says whether tr's value at threads can be set against another target's: without
// repetitions a step that ran past its duration is shown as measured but is not comparable (with
// repetitions the cell is the median of the other repetitions).
func Comparable(doc *results.Doc, tr results.Target, th int32) bool {
	if doc.Ladder.Repetitions > 1 {
		return true
	}
	return !slices.ContainsFunc(tr.Steps, func(s results.Step) bool { return s.Threads == th && s.OverDuration })
}

// CellRatio is tr's throughput at threads against ref's, from their repetitions (steps that ran
// past their duration left out), paired by repetition when the targets were interleaved. doc
// holds one workload's steps (results.Doc.ForWorkload of a suite).
func CellRatio(doc *results.Doc, ref, tr results.Target, th int32) stats.CellRatio {
	return CellRatioOf(doc, ref, tr, th, v1.StepResult.Throughput)
}

// CellRatioOf is CellRatio of another number of the steps (value).
func CellRatioOf(doc *results.Doc, ref, tr results.Target, th int32, value func(v1.StepResult) float64) stats.CellRatio {
	samples := func(t results.Target) ([]float64, []int32) {
		var xs []float64
		var reps []int32
		for _, st := range t.Steps {
			if st.Threads == th && !st.OverDuration {
				xs = append(xs, value(st.StepResult))
				reps = append(reps, st.Repetition)
			}
		}
		return xs, reps
	}
	bs, br := samples(ref)
	cs, cr := samples(tr)
	var pairs [][2]int
	if doc.Ladder.Order == string(v1.OrderInterleaved) {
		pairs = [][2]int{}
		for i, rb := range br {
			if j := slices.Index(cr, rb); j >= 0 && rb > 0 {
				pairs = append(pairs, [2]int{i, j})
			}
		}
	}
	return stats.RatioOfCells(bs, cs, pairs, Confidence)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
