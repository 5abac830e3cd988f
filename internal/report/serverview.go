package report

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// ServerQuery is what a ServerTable holds.
type ServerQuery struct {
	// Counters are the counters and gauges to show; empty: every one a step has, in the bounded
	// set's order.
	Counters []string
	// PerSecond divides the counters and the CPU by the time between the step's two snapshots
	// instead of by its queries.
	PerSecond bool
}

// ServerTable is what a target's server did at each thread count: its counters, gauges and CPU,
// and its top waits, each the median over the thread count's steps. It is built once, by
// NewServerTable, and rendered as report.md's Markdown tables (markdown_server.go) and as the
// kubectl plugin's terminal tables, csv and json.
type ServerTable struct {
	Name          string `json:"name"`
	ServerVersion string `json:"serverVersion,omitempty"`
	// Threads are the thread counts measured, the columns of Values.
	Threads []int32 `json:"threads"`
	// Rows are the counters, the gauges and the server container's CPU.
	Rows []ServerRow `json:"rows"`
	// PerformanceSchema: whether it was ON at any step; without it there are no waits.
	PerformanceSchema bool `json:"performanceSchema"`
	// Waits are the top wait events of each thread count, in seconds of wait per second.
	Waits []ServerRow `json:"waits,omitempty"`

	// recorded counts, per thread count, the steps with server counters, and psOn those with
	// performance_schema ON.
	recorded, psOn []int
}

// Kinds of a ServerRow.
const (
	RowCounter = "counter"
	RowGauge   = "gauge"
	RowCPU     = "cpu"
	RowWait    = "wait"
)

// ServerRow is one counter, gauge, CPU or wait event at each thread count.
type ServerRow struct {
	// Kind is counter, gauge, cpu or wait.
	Kind string `json:"kind"`
	// Source is status, innodbMetrics, kubelet (the CPU) or performanceSchema (waits).
	Source string `json:"source"`
	Name   string `json:"name"`
	// Unit says what Values are: "per query", "per second", "at end", "CPU seconds per query",
	// "CPU seconds per second", "seconds of wait per second".
	Unit string `json:"unit"`
	// Values, one per thread count: the median of its steps' values; null where none has one.
	Values []*float64 `json:"values"`
	// N is how many steps each value is the median of.
	N []int `json:"n"`
}

// topWaitsShown is how many wait events of each thread count the tables show, as the seed study's
// "Top 5 performance_schema synch waits".
const topWaitsShown = 5

// NewServerTable builds the table of target t from its steps' server counters (servers, by step
// as results.ServerStepsOf reads them; nil for a step without).
func NewServerTable(t *results.Target, servers []*serverstats.Step, q ServerQuery) ServerTable {
	tv := ServerTable{Name: t.Name, ServerVersion: t.ServerVersion, Threads: []int32{}, Rows: []ServerRow{}}
	var with []serverStep
	for i, st := range t.Steps {
		tv.Threads = append(tv.Threads, st.Threads)
		if i < len(servers) && servers[i] != nil {
			with = append(with, serverStep{st.Threads, servers[i]})
		}
	}
	slices.Sort(tv.Threads)
	tv.Threads = slices.Compact(tv.Threads)
	tv.recorded, tv.psOn = make([]int, len(tv.Threads)), make([]int, len(tv.Threads))
	for _, s := range with {
		i := slices.Index(tv.Threads, s.threads)
		tv.recorded[i]++
		if s.s.PerformanceSchema {
			tv.psOn[i]++
		}
	}
	if len(with) == 0 {
		return tv
	}

	unit := "per query"
	if q.PerSecond {
		unit = "per second"
	}
	// The counter rows: those asked for, else every counter and gauge a step has, in the
	// bounded set's order.
	type named struct{ source, name string }
	var counters, gauges []named
	if len(q.Counters) > 0 {
		for _, n := range q.Counters {
			if serverstats.IsGauge(n) {
				gauges = append(gauges, named{sourceOf(n, with), n})
			} else {
				counters = append(counters, named{sourceOf(n, with), n})
			}
		}
	} else {
		for _, s := range with {
			for _, c := range s.s.Counters {
				if !slices.Contains(counters, named{c.Source, c.Name}) {
					counters = append(counters, named{c.Source, c.Name})
				}
			}
			for _, g := range s.s.Gauges {
				if !slices.Contains(gauges, named{g.Source, g.Name}) {
					gauges = append(gauges, named{g.Source, g.Name})
				}
			}
		}
		order := func(a, b named) int { return cmp.Compare(boundedIndex(a.name), boundedIndex(b.name)) }
		slices.SortStableFunc(counters, order)
		slices.SortStableFunc(gauges, order)
	}
	for _, c := range counters {
		val := results.ServerValue{Counter: c.name, PerSecond: q.PerSecond}
		tv.Rows = append(tv.Rows, medianRow(tv.Threads, with, ServerRow{Kind: RowCounter, Source: c.source, Name: c.name, Unit: unit},
			func(s *serverstats.Step) (float64, bool) { x, ok, _ := val.Of(*s); return x, ok }))
	}
	for _, g := range gauges {
		tv.Rows = append(tv.Rows, medianRow(tv.Threads, with, ServerRow{Kind: RowGauge, Source: g.source, Name: g.name, Unit: "at end"},
			func(s *serverstats.Step) (float64, bool) {
				i := slices.IndexFunc(s.Gauges, func(x serverstats.Gauge) bool { return x.Name == g.name })
				if i < 0 {
					return 0, false
				}
				return float64(s.Gauges[i].Value), true
			}))
	}
	cpu := results.ServerValue{PerSecond: q.PerSecond}
	if slices.ContainsFunc(with, func(s serverStep) bool { return s.s.CPU != nil }) {
		tv.Rows = append(tv.Rows, medianRow(tv.Threads, with, ServerRow{Kind: RowCPU, Source: "kubelet",
			Name: "CPU seconds (" + cpuContainer(with) + " container)", Unit: "CPU seconds " + unit},
			func(s *serverstats.Step) (float64, bool) { x, ok, _ := cpu.Of(*s); return x, ok }))
	}
	tv.PerformanceSchema = slices.ContainsFunc(with, func(s serverStep) bool { return s.s.PerformanceSchema })
	if tv.PerformanceSchema {
		tv.Waits = waitRows(tv.Threads, with)
	}
	return tv
}

// Row is the row of kind and name; false when the table has none.
func (tv ServerTable) Row(kind, name string) (ServerRow, bool) {
	i := slices.IndexFunc(tv.Rows, func(r ServerRow) bool { return r.Kind == kind && r.Name == name })
	if i < 0 {
		return ServerRow{}, false
	}
	return tv.Rows[i], true
}

// CPU is the CPU row; false when no step's CPU was measured.
func (tv ServerTable) CPU() (ServerRow, bool) {
	i := slices.IndexFunc(tv.Rows, func(r ServerRow) bool { return r.Kind == RowCPU })
	if i < 0 {
		return ServerRow{}, false
	}
	return tv.Rows[i], true
}

// TopWaits are the wait events of the i-th thread count with any wait, by their value there
// (largest first, then by name), at most topWaitsShown: that thread count's own top waits, as
// Waits holds every event among the top of any thread count with its value at each.
func (tv ServerTable) TopWaits(i int) []ServerRow {
	var out []ServerRow
	for _, w := range tv.Waits {
		if w.Values[i] != nil && *w.Values[i] > 0 {
			out = append(out, w)
		}
	}
	slices.SortStableFunc(out, func(a, b ServerRow) int {
		return cmp.Or(cmp.Compare(*b.Values[i], *a.Values[i]), strings.Compare(a.Name, b.Name))
	})
	return out[:min(len(out), topWaitsShown)]
}

// HasValue says whether the row has a value at any thread count.
func (r ServerRow) HasValue() bool {
	return slices.ContainsFunc(r.Values, func(v *float64) bool { return v != nil })
}

// boundedIndex orders counter names as the bounded set lists them; others go last.
func boundedIndex(name string) int {
	if i := slices.Index(serverstats.StatusNames, name); i >= 0 {
		return i
	}
	if i := slices.Index(serverstats.InnoDBMetricNames, name); i >= 0 {
		return len(serverstats.StatusNames) + i
	}
	return len(serverstats.StatusNames) + len(serverstats.InnoDBMetricNames)
}

// sourceOf is where a counter or gauge comes from: as the steps say, else as the bounded set does.
func sourceOf(name string, steps []serverStep) string {
	for _, s := range steps {
		for _, c := range s.s.Counters {
			if c.Name == name {
				return c.Source
			}
		}
		for _, g := range s.s.Gauges {
			if g.Name == name {
				return g.Source
			}
		}
	}
	if slices.Contains(serverstats.InnoDBMetricNames, name) {
		return serverstats.SourceInnoDBMetrics
	}
	return serverstats.SourceStatus
}

func cpuContainer(steps []serverStep) string {
	for _, s := range steps {
		if s.s.CPU != nil && s.s.CPU.Container != "" {
			return s.s.CPU.Container
		}
	}
	return "server container"
}

// medianRow fills row's values: at each thread count the median of the steps' values.
func medianRow(threads []int32, steps []serverStep, row ServerRow, value func(*serverstats.Step) (float64, bool)) ServerRow {
	row.Values = make([]*float64, len(threads))
	row.N = make([]int, len(threads))
	for i, th := range threads {
		var xs []float64
		for _, s := range steps {
			if x, ok := value(s.s); ok && s.threads == th {
				xs = append(xs, x)
			}
		}
		if len(xs) > 0 {
			m := Median(xs)
			row.Values[i], row.N[i] = &m, len(xs)
		}
	}
	return row
}

// waitRows are the wait events among the topWaitsShown of any thread count, by their largest
// value: at each thread count the median over its steps with performance_schema ON (an event a
// step did not list counting as 0), empty where no step listed it.
func waitRows(threads []int32, steps []serverStep) []ServerRow {
	type ranked struct {
		event string
		top   float64
	}
	var events []ranked
	perThreads := make([]map[string]float64, len(threads))
	listed := make([]map[string]int, len(threads))
	for i, th := range threads {
		var on []*serverstats.Step
		for _, s := range steps {
			if s.threads == th && s.s.PerformanceSchema {
				on = append(on, s.s)
			}
		}
		byEvent := map[string][]float64{}
		for _, s := range on {
			for _, w := range s.Waits {
				byEvent[w.Event] = append(byEvent[w.Event], w.SecondsPerSecond)
			}
		}
		perThreads[i], listed[i] = map[string]float64{}, map[string]int{}
		var here []ranked
		for ev, xs := range byEvent {
			listed[i][ev] = len(xs)
			for len(xs) < len(on) {
				xs = append(xs, 0)
			}
			m := Median(xs)
			perThreads[i][ev] = m
			if m > 0 {
				here = append(here, ranked{ev, m})
			}
		}
		slices.SortFunc(here, func(a, b ranked) int { return cmp.Or(cmp.Compare(b.top, a.top), strings.Compare(a.event, b.event)) })
		for _, r := range here[:min(len(here), topWaitsShown)] {
			j := slices.IndexFunc(events, func(x ranked) bool { return x.event == r.event })
			if j < 0 {
				events = append(events, r)
			} else {
				events[j].top = max(events[j].top, r.top)
			}
		}
	}
	slices.SortFunc(events, func(a, b ranked) int { return cmp.Or(cmp.Compare(b.top, a.top), strings.Compare(a.event, b.event)) })
	rows := make([]ServerRow, 0, len(events))
	for _, ev := range events {
		row := ServerRow{Kind: RowWait, Source: "performanceSchema", Name: ev.event, Unit: "seconds of wait per second",
			Values: make([]*float64, len(threads)), N: make([]int, len(threads))}
		for i := range threads {
			if n := listed[i][ev.event]; n > 0 {
				m := perThreads[i][ev.event]
				row.Values[i], row.N[i] = &m, n
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// ShortEvent drops the prefixes every wait event (wait/) and most of the interesting ones
// (synch/) share: wait/synch/mutex/innodb/buf_pool_mutex reads mutex/innodb/buf_pool_mutex.
func ShortEvent(e string) string {
	e = strings.TrimPrefix(e, "wait/")
	return strings.TrimPrefix(e, "synch/")
}

// Median of values, the mean of the two middle ones for an even count; values is not modified.
func Median(values []float64) float64 {
	xs := slices.Sorted(slices.Values(values))
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// Sig3 writes v with three significant digits and no exponent: server rates span from millions
// of bytes to a buffer pool read per hundred thousand queries (0.00001).
func Sig3(v float64) string {
	return strconv.FormatFloat(roundSig(v, 3, 15), 'f', -1, 64)
}
