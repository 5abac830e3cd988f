package charts

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
)

// name is the measure in a title and in notes, axis on the y axis.
func (m measure) name() string {
	switch v := m.server; {
	case v == nil && m.metric == QPS && m.throughput.Name != "":
		return m.throughput.Name
	case v == nil:
		return metricName(m.metric)
	case v.Counter == "" && v.PerSecond:
		return "server CPU"
	case v.Counter == "":
		return "server CPU per query"
	case v.PerSecond:
		return v.Counter + " per second"
	default:
		return v.Counter + " per query"
	}
}

func (m measure) axis() string {
	switch v := m.server; {
	case v == nil && m.metric == QPS && m.throughput.Axis != "":
		return m.throughput.Axis
	case v == nil:
		return axisName(m.metric)
	case v.Counter == "" && v.PerSecond:
		return "server CPU (cores busy)"
	case v.Counter == "":
		return "server CPU per query (µs)"
	}
	return m.name()
}

// scale is what a server value is multiplied by on the chart: CPU per query is drawn in
// microseconds (tens of them for a point select), not in seconds.
func (m measure) scale() float64 {
	if v := m.server; v != nil && v.Counter == "" && !v.PerSecond {
		return 1e6
	}
	return 1
}

// checkCounter refuses a counter that neither the operator's bounded set nor any step of the runs
// has: a typo would otherwise draw an empty chart of notes.
func checkCounter(docs []*results.Doc, v results.ServerValue) error {
	if v.Counter == "" || results.KnownCounter(v.Counter) {
		return nil
	}
	if serverstats.IsGauge(v.Counter) {
		return fmt.Errorf("%s is a gauge (read once, after the step's threads disconnected), not a counter with a rate per "+
			"query: see it with `kubectl mysqlbench server RUN --counter %s`", v.Counter, v.Counter)
	}
	for _, d := range docs {
		for i := range d.Targets {
			for _, st := range d.Targets[i].Steps {
				s, ok, err := st.DecodedServer()
				if err == nil && ok && slices.ContainsFunc(s.Counters, func(c serverstats.Counter) bool { return c.Name == v.Counter }) {
					return nil // a counter a newer operator reads
				}
			}
		}
	}
	hint := "counter names are case-sensitive, as SHOW GLOBAL STATUS and INNODB_METRICS spell them"
	if s := results.CounterSuggestion(v.Counter); s != "" {
		hint = "did you mean " + CounterPrefix + s + "?"
	}
	return fmt.Errorf("unknown server counter %q (%s): the operator reads %s", v.Counter, hint, counterList())
}

func counterList() string {
	var names []string
	for _, n := range append(slices.Clone(serverstats.StatusNames), serverstats.InnoDBMetricNames...) {
		if !serverstats.IsGauge(n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// Why a step has no server value when it has no server counters at all.
const (
	noServer      = "no server counters stored"
	droppedServer = "server counters left out to fit the ConfigMap"
)

// serverGap is a step of a target without the server value, and why.
type serverGap struct {
	label   string
	threads int32
	rep     int32 // 0 without repetitions
	why     string
	// whole: the target has the value at no thread count.
	whole bool
}

// serverByThreads is a target's points of a server value: at each thread count the median of the
// steps that have it, with the confidence interval of the median when there are several (as a
// cell's, from internal/stats), and the steps without it.
func serverByThreads(src source, v results.ServerValue) ([]point, []serverGap, error) {
	t := src.target
	servers, err := results.ServerStepsOf(t)
	if err != nil {
		return nil, nil, err
	}
	m := measure{server: &v}
	samples := map[int32][]float64{}
	var threads []int32
	var gaps []serverGap
	for i, st := range t.Steps {
		threads = append(threads, st.Threads)
		rep := int32(0)
		if src.doc.Ladder.Repetitions > 1 {
			rep = max(st.Repetition, 1)
		}
		var why string
		switch s := servers[i]; {
		case s == nil && src.doc.ServerDropped(t.Name, st.Threads, max(st.Repetition, 1)):
			why = droppedServer
		case s == nil:
			why = noServer
		default:
			val, ok, reason := v.Of(*s)
			if ok {
				samples[st.Threads] = append(samples[st.Threads], val*m.scale())
				continue
			}
			why = reason
		}
		gaps = append(gaps, serverGap{label: src.label, threads: st.Threads, rep: rep, why: why})
	}
	slices.Sort(threads)
	var out []point
	for _, th := range slices.Compact(threads) {
		xs := samples[th]
		switch len(xs) {
		case 0:
			continue
		case 1:
			out = append(out, point{threads: th, value: xs[0], steps: 1})
		default:
			s := stats.Summarize(xs)
			out = append(out, point{threads: th, value: s.Median, low: s.CILow, high: s.CIHigh, hasCI: true,
				confidence: s.CIConfidence, n: int32(s.N)})
		}
	}
	if len(out) == 0 {
		// Say why the steps with server counters lack the value rather than that the others
		// have none, when there are such steps.
		if slices.ContainsFunc(servers, func(s *serverstats.Step) bool { return s != nil }) {
			gaps = slices.DeleteFunc(gaps, func(g serverGap) bool { return g.why == noServer || g.why == droppedServer })
		}
		for i := range gaps {
			gaps[i].whole = true
		}
	}
	return out, gaps, nil
}

// gapNotes say which targets have no line and which steps no point, grouped by reason:
// "mariadb-psoff not drawn: CPU not measured: ..." and "mariadb: no Innodb_rows_read per query at
// 8 threads (no server counters stored)".
func gapNotes(m measure, gaps []serverGap) []string {
	type key struct{ label, why string }
	var wholeWhy []string            // reasons of whole targets, in order
	wholeBy := map[string][]string{} // reason -> labels
	var partKeys []key
	partBy := map[key][]string{} // -> "8", "8 (repetition 2)"
	for _, g := range gaps {
		if g.whole {
			if !slices.Contains(wholeBy[g.why], g.label) {
				if len(wholeBy[g.why]) == 0 {
					wholeWhy = append(wholeWhy, g.why)
				}
				wholeBy[g.why] = append(wholeBy[g.why], g.label)
			}
			continue
		}
		k := key{g.label, g.why}
		if _, ok := partBy[k]; !ok {
			partKeys = append(partKeys, k)
		}
		at := strconv.Itoa(int(g.threads))
		if g.rep > 0 {
			at += " threads (repetition " + strconv.Itoa(int(g.rep)) + ")"
		}
		if !slices.Contains(partBy[k], at) {
			partBy[k] = append(partBy[k], at)
		}
	}
	var notes []string
	for _, why := range wholeWhy {
		notes = append(notes, fmt.Sprintf("%s not drawn: %s", strings.Join(wholeBy[why], ", "), why))
	}
	for _, k := range partKeys {
		at := strings.Join(partBy[k], ", ")
		if !strings.HasSuffix(at, ")") {
			at += " threads"
		}
		notes = append(notes, fmt.Sprintf("%s: no %s at %s (%s)", k.label, m.name(), at, k.why))
	}
	return notes
}

// runNames names the runs as errors do: "run bench/pk" or "runs bench/a, bench/b".
func runNames(docs []*results.Doc) string {
	names := make([]string, len(docs))
	for i, d := range docs {
		names[i] = runName(d)
	}
	if len(names) == 1 {
		return "run " + names[0]
	}
	return "runs " + strings.Join(names, ", ")
}
