package charts

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
)

// threadLines is one series per measured target, divided by the baseline when relativeTo names
// one (returned as its label), the notes that say what the points are, and those that say what
// is left out. A server metric's line has the thread counts whose steps have the value; a target
// without it at any thread count has no line.
func threadLines(docs []*results.Doc, m measure, relativeTo string) (lines []series, notes, leftOut []string, rel string, err error) {
	return workloadLines(docs, m, relativeTo, "")
}

// workloadLines is threadLines of one workload of the suites (workload), or of every workload
// of them, a line each ("").
func workloadLines(docs []*results.Doc, m measure, relativeTo, workload string) (lines []series, notes, leftOut []string, rel string, err error) {
	srcs, unmeasured, err := workloadSources(docs, workload)
	if err != nil {
		return nil, nil, nil, "", err
	}
	if len(srcs) == 0 {
		return nil, nil, nil, "", nothingMeasured(docs)
	}
	if m.server != nil {
		if err := checkCounter(docs, *m.server); err != nil {
			return nil, nil, nil, "", err
		}
	}
	var gaps []serverGap
	lks := looks(srcs, false)
	for i, s := range srcs {
		ln := series{label: s.label, legend: legendName(s), look: lks[i], doc: s.doc, target: s.target.Name, workload: s.workload}
		if m.server == nil {
			ln.points = byThreads(s.doc, s.target, m.metric)
		} else {
			var g []serverGap
			if ln.points, g, err = serverByThreads(s, *m.server); err != nil {
				return nil, nil, nil, "", err
			}
			gaps = append(gaps, g...)
		}
		if len(ln.points) > 0 {
			lines = append(lines, ln)
		}
	}
	leftOut = gapNotes(m, gaps)
	if len(lines) == 0 {
		return nil, nil, nil, "", fmt.Errorf("no target of %s has %s: %s", runNames(docs), m.name(), strings.Join(leftOut, "; "))
	}

	if relativeTo != "" && slices.ContainsFunc(srcs, func(s source) bool { return s.workload != "" }) && workload == "" {
		var err error
		if lines, leftOut, err = relativePerWorkload(lines, leftOut, srcs, relativeTo); err != nil {
			return nil, nil, nil, "", err
		}
	} else if relativeTo != "" {
		base, err := baseline(srcs, unmeasured, relativeTo)
		if err != nil {
			return nil, nil, nil, "", err
		}
		i := slices.IndexFunc(lines, func(ln series) bool { return ln.label == srcs[base].label })
		if i < 0 {
			var why []string
			for _, n := range leftOut {
				if strings.Contains(n, srcs[base].label) {
					why = append(why, n)
				}
			}
			return nil, nil, nil, "", fmt.Errorf("relative to %s: it has no %s at any thread count (%s): choose another target",
				srcs[base].label, m.name(), strings.Join(why, "; "))
		}
		var apart []string
		lines, apart = relative(lines, lines[i])
		if len(lines) == 0 {
			return nil, nil, nil, "", fmt.Errorf("relative to %s: its %s is 0 at every thread count, nothing to divide by: choose another target",
				srcs[base].label, m.name())
		}
		if len(apart) > 0 {
			leftOut = append(leftOut, fmt.Sprintf("not drawn (no thread count in common with %s): %s",
				srcs[base].label, strings.Join(apart, ", ")))
		}
		relativeTo = srcs[base].label
	}
	notes = summaryNotes(lines, relativeTo != "")
	if len(unmeasured) > 0 {
		leftOut = append(leftOut, "not drawn (no measured step): "+strings.Join(unmeasured, ", "))
	}
	return lines, notes, leftOut, relativeTo, nil
}

// relativePerWorkload divides each line of a suite by the line of the target relativeTo names
// ("target", or "run/target" with several runs) of the same workload: a ratio of two workloads'
// numbers would compare different benchmarks.
func relativePerWorkload(lines []series, leftOut []string, srcs []source, relativeTo string) ([]series, []string, error) {
	isBase := func(ln series) bool {
		return ln.target == relativeTo || strings.TrimSuffix(ln.label, "/"+ln.workload) == relativeTo
	}
	if !slices.ContainsFunc(srcs, func(s source) bool {
		return s.target.Name == relativeTo || strings.TrimSuffix(s.label, "/"+s.workload) == relativeTo
	}) {
		var names []string
		for _, s := range srcs {
			if n := strings.TrimSuffix(s.label, "/"+s.workload); !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		return nil, nil, fmt.Errorf("relative to %q: no such target: choose one of %s", relativeTo, strings.Join(names, ", "))
	}
	var out []series
	var apart, noBase []string
	for _, wl := range workloadOrder(lines) {
		var group []series
		var base *series
		for _, ln := range lines {
			if ln.workload != wl {
				continue
			}
			group = append(group, ln)
			if isBase(ln) && base == nil {
				base = &group[len(group)-1]
			}
		}
		if base == nil {
			noBase = append(noBase, wl)
			continue
		}
		rel, a := relative(group, *base)
		out, apart = append(out, rel...), append(apart, a...)
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("relative to %s: it has no measured workload to divide by: choose another target", relativeTo)
	}
	if len(noBase) > 0 {
		leftOut = append(leftOut, fmt.Sprintf("not drawn (%s measured none of it): workloads %s", relativeTo, strings.Join(noBase, ", ")))
	}
	if len(apart) > 0 {
		leftOut = append(leftOut, fmt.Sprintf("not drawn (no thread count in common with %s): %s", relativeTo, strings.Join(apart, ", ")))
	}
	return out, leftOut, nil
}

// workloadOrder is the lines' workloads in first-seen order.
func workloadOrder(lines []series) []string {
	var out []string
	for _, ln := range lines {
		if !slices.Contains(out, ln.workload) {
			out = append(out, ln.workload)
		}
	}
	return out
}

// baseline finds the line RelativeTo names: its label, or a target name that only one run has.
func baseline(srcs []source, unmeasured []string, name string) (int, error) {
	labels := make([]string, len(srcs))
	var byTarget []int
	for i, s := range srcs {
		labels[i] = s.label
		if s.label == name {
			return i, nil
		}
		if s.target.Name == name {
			byTarget = append(byTarget, i)
		}
	}
	switch {
	case len(byTarget) == 1:
		return byTarget[0], nil
	case len(byTarget) > 1:
		var which []string
		for _, i := range byTarget {
			which = append(which, labels[i])
		}
		return 0, fmt.Errorf("relative to %q: several runs have that target: name one of %s",
			name, strings.Join(which, ", "))
	}
	for _, u := range unmeasured {
		if u == name || strings.HasSuffix(u, "/"+name) {
			return 0, fmt.Errorf("relative to %q: %s has no measured steps: choose one of %s",
				name, u, strings.Join(labels, ", "))
		}
	}
	return 0, fmt.Errorf("relative to %q: no such target: choose one of %s", name, strings.Join(labels, ", "))
}

// relative divides every line by base at the same thread count, leaving out thread counts base
// lacks (or measured as 0) and the lines that then have no point left. The ratio of two
// intervals is not the interval of the ratio: each ratio's own interval comes from the
// repetitions of both lines (stats.RatioOfCells), paired by round when both are targets of one
// interleaved run.
func relative(lines []series, base series) (out []series, apart []string) {
	baseAt := map[int32]point{}
	for _, pt := range base.points {
		if pt.value != 0 {
			baseAt[pt.threads] = pt
		}
	}
	for _, ln := range lines {
		r := series{label: ln.label, legend: ln.legend, look: ln.look, doc: ln.doc, target: ln.target, workload: ln.workload}
		paired := ln.doc == base.doc && ln.doc != nil && ln.doc.Ladder.Order == string(v1alpha1.OrderInterleaved)
		for _, pt := range ln.points {
			b, ok := baseAt[pt.threads]
			if !ok {
				continue
			}
			rp := point{threads: pt.threads, value: pt.value / b.value, n: pt.n, steps: pt.steps}
			if ln.label != base.label {
				var pairs [][2]int
				if paired {
					pairs = [][2]int{}
					for i, rb := range b.reps {
						if j := slices.Index(pt.reps, rb); j >= 0 && rb > 0 {
							pairs = append(pairs, [2]int{i, j})
						}
					}
				}
				if cr := stats.RatioOfCells(b.samples, pt.samples, pairs, relativeConfidence); cr.Valid() {
					rp.low, rp.high, rp.hasCI, rp.confidence = cr.Low, cr.High, true, cr.Confidence
					rp.n = int32(cr.N)
				}
			}
			r.points = append(r.points, rp)
		}
		if len(r.points) == 0 {
			apart = append(apart, ln.label)
			continue
		}
		out = append(out, r)
	}
	return out, apart
}
