package charts

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// withServer gives each step of d the server counters server returns for it (nil: none).
func withServer(d *results.Doc, server func(target string, threads, rep int32) *serverstats.Step) *results.Doc {
	for i := range d.Targets {
		t := &d.Targets[i]
		for j := range t.Steps {
			st := &t.Steps[j]
			s := server(t.Name, st.Threads, max(st.Repetition, 1))
			if s == nil {
				continue
			}
			b, err := json.Marshal(s)
			if err != nil {
				panic(err)
			}
			st.Server = b
		}
	}
	return d
}

// serverStep is a step of 1000 queries over 10 s in which the server read rowsRead rows per query
// and used cpu µs of CPU per query; target b's server lacks Innodb_rows_read (as MariaDB) and its
// CPU is not measured.
func serverStep(target string, rowsRead, cpu float64) *serverstats.Step {
	s := &serverstats.Step{Seconds: 10, Queries: 1000, PerformanceSchema: true}
	if target == "b" {
		s.MissingStatus = []string{"Innodb_rows_read"}
		s.Counters = []serverstats.Counter{{Source: serverstats.SourceStatus, Name: "Rows_read",
			Delta: uint64(rowsRead * 1000), PerSecond: rowsRead * 100, PerQuery: rowsRead}}
		s.CPUMissing = "no CPU: the operator may not read the kubelet's stats"
		return s
	}
	s.Counters = []serverstats.Counter{{Source: serverstats.SourceStatus, Name: "Innodb_rows_read",
		Delta: uint64(rowsRead * 1000), PerSecond: rowsRead * 100, PerQuery: rowsRead}}
	s.MissingStatus = []string{"Rows_read"}
	s.CPU = &serverstats.CPU{Container: "mysql", Seconds: cpu * 1e-6 * 1000, PerSecond: cpu * 1e-6 * 100, PerQuery: cpu * 1e-6}
	return s
}

// serverDoc is known() with server counters: a reads as many rows per query as it has threads and
// uses 20 µs of CPU per query per thread, but has none stored at 4 threads; b lacks the counter
// and the CPU.
func serverDoc() *results.Doc {
	d := known()
	d.Targets = d.Targets[:2]
	return withServer(d, func(target string, threads, _ int32) *serverstats.Step {
		if target == "a" && threads == 4 {
			return nil
		}
		return serverStep(target, float64(threads), 20*float64(threads))
	})
}

// serverRepsDoc has 3 repetitions: a's rows read per query are 10, 11 and 13 at each thread
// count, b's 5; b's step at 2 threads of repetition 2 was dropped to fit the ConfigMap.
func serverRepsDoc() *results.Doc {
	d := synth{name: "reps", targets: []string{"a", "b"}, threads: []int32{1, 2}, reps: 3, qps: scaling}.doc()
	d.Dropped = []results.Dropped{{Kind: results.DroppedServer, Target: "b", Threads: []int32{2}, Repetitions: []int32{2}, Bytes: 900}}
	return withServer(d, func(target string, threads, rep int32) *serverstats.Step {
		if target == "b" {
			if threads == 2 && rep == 2 {
				return nil
			}
			s := serverStep("a", 5, 30)
			s.CPU, s.CPUMissing = nil, "the kubelet's samples did not cover the step"
			return s
		}
		return serverStep(target, []float64{10, 11, 13}[rep-1], 40)
	})
}

func TestServerLines(t *testing.T) {
	type pt struct {
		threads        int32
		value, low, hi float64
	}
	cases := []struct {
		name    string
		docs    []*results.Doc
		spec    Spec
		want    map[string][]pt
		notes   []string
		leftOut []string
	}{
		{"counter per query: a target without it is not drawn, a step without it has no point", []*results.Doc{serverDoc()},
			Spec{Metric: Counter("Innodb_rows_read")},
			map[string][]pt{"a": {{1, 1, 0, 0}, {2, 2, 0, 0}}},
			nil,
			[]string{"b not drawn: the server lacks Innodb_rows_read or has it disabled (other servers count it as Rows_read)",
				"a: no Innodb_rows_read per query at 4 threads (no server counters stored)"}},
		{"counter per second", []*results.Doc{serverDoc()}, Spec{Metric: Counter("Rows_read"), PerSecond: true},
			map[string][]pt{"b": {{1, 100, 0, 0}, {2, 200, 0, 0}, {4, 400, 0, 0}}},
			nil,
			[]string{"a not drawn: the server lacks Rows_read or has it disabled (other servers count it as Innodb_rows_read)"}},
		{"cpu per query in microseconds", []*results.Doc{serverDoc()}, Spec{Metric: CPUPerQuery},
			map[string][]pt{"a": {{1, 20, 0, 0}, {2, 40, 0, 0}}},
			nil,
			[]string{"b not drawn: CPU not measured: no CPU: the operator may not read the kubelet's stats",
				"a: no server CPU per query at 4 threads (no server counters stored)"}},
		{"cpu per second: cores busy", []*results.Doc{serverDoc()}, Spec{Metric: CPUPerSecond},
			map[string][]pt{"a": {{1, 0.002, 0, 0}, {2, 0.004, 0, 0}}},
			nil, []string{"b not drawn: CPU not measured"}},
		{"repetitions: the median and the interval of the median", []*results.Doc{serverRepsDoc()}, Spec{Metric: Counter("Innodb_rows_read")},
			map[string][]pt{"a": {{1, 11, 10, 13}, {2, 11, 10, 13}}, "b": {{1, 5, 5, 5}, {2, 5, 5, 5}}},
			[]string{"points: median of 2-3 repetitions; bars: 50-75 % confidence interval of the median"},
			[]string{"b: no Innodb_rows_read per query at 2 threads (repetition 2) (server counters left out to fit the ConfigMap)"}},
		{"repetitions: cpu missing at every step of a target", []*results.Doc{serverRepsDoc()}, Spec{Metric: CPUPerQuery},
			map[string][]pt{"a": {{1, 40, 40, 40}, {2, 40, 40, 40}}},
			nil,
			[]string{"b not drawn: CPU not measured: the kubelet's samples did not cover the step"}},
		{"relative to a target", []*results.Doc{serverRepsDoc()}, Spec{Metric: Counter("Innodb_rows_read"), RelativeTo: "a"},
			map[string][]pt{"a": {{1, 1, 0, 0}, {2, 1, 0, 0}}, "b": {{1, 5.0 / 11, 0, 0}, {2, 5.0 / 11, 0, 0}}},
			[]string{"ratios of the medians of 2-3 repetitions"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.spec.metric()
			if err != nil {
				t.Fatal(err)
			}
			lines, notes, leftOut, _, err := threadLines(tc.docs, m, tc.spec.RelativeTo)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]pt{}
			for _, ln := range lines {
				for _, p := range ln.points {
					got[ln.label] = append(got[ln.label], pt{p.threads, round(p.value), round(p.low), round(p.high)})
				}
			}
			for label, w := range tc.want {
				for i := range w {
					w[i].value, w[i].low, w[i].hi = round(w[i].value), round(w[i].low), round(w[i].hi)
				}
				if !slices.Equal(got[label], w) {
					t.Errorf("%s: got %v, want %v", label, got[label], w)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("lines %v, want %d", got, len(tc.want))
			}
			for _, n := range tc.notes {
				if !slices.ContainsFunc(notes, func(l string) bool { return strings.HasPrefix(l, n) }) {
					t.Errorf("notes %q lack %q", notes, n)
				}
			}
			for _, n := range tc.leftOut {
				if !slices.ContainsFunc(leftOut, func(l string) bool { return strings.HasPrefix(l, n) }) {
					t.Errorf("left-out notes %q lack %q", leftOut, n)
				}
			}

			// Drawn: the lines, the log-2 thread axis from 0, and the notes under the chart.
			p, drawnOut, err := DrawWithNotes(tc.docs, tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(drawnOut, leftOut) {
				t.Errorf("DrawWithNotes left out %q, threadLines %q", drawnOut, leftOut)
			}
			if (tc.spec.RelativeTo == "" && p.Y.Min != 0) || p.X.Min >= 1 || p.X.Max <= float64(tc.docs[0].Ladder.Threads[len(tc.docs[0].Ladder.Threads)-1]) {
				t.Errorf("axes x %v..%v, y from %v", p.X.Min, p.X.Max, p.Y.Min)
			}
			// The first line's colour is target a's, which not every chart draws.
			inked := 0
			if len(got["a"]) > 0 {
				inked = 1
			}
			texts := checkEncoded(t, p, inked, 20)
			checkCaption(t, texts, []string{m.name()})
			for _, n := range leftOut {
				checkCaption(t, texts, strings.Fields(n)[:2])
			}
		})
	}
}

func TestServerMetricErrors(t *testing.T) {
	allLack := withServer(known(), func(target string, threads, _ int32) *serverstats.Step { return serverStep("b", 1, 1) })
	cases := []struct {
		name string
		docs []*results.Doc
		spec Spec
		want []string
	}{
		{"a typo", []*results.Doc{serverDoc()}, Spec{Metric: Counter("Innodb_rows_reed")},
			[]string{`unknown server counter "Innodb_rows_reed"`, "case-sensitive", "Innodb_rows_read, Innodb_rows_inserted"}},
		{"the case", []*results.Doc{serverDoc()}, Spec{Metric: Counter("innodb_rows_read")}, []string{"did you mean counter:Innodb_rows_read?"}},
		{"a gauge", []*results.Doc{serverDoc()}, Spec{Metric: Counter("Threads_running")},
			[]string{"Threads_running is a gauge", "kubectl mysqlbench server RUN --counter Threads_running"}},
		{"no counter", []*results.Doc{serverDoc()}, Spec{Metric: "counter:"}, []string{"names no counter", "counter:Innodb_rows_read"}},
		{"no target has it", []*results.Doc{allLack}, Spec{Metric: Counter("Innodb_rows_read")},
			[]string{"no target of run bench/known has Innodb_rows_read per query", "a, b not drawn: the server lacks Innodb_rows_read"}},
		{"no server counters at all", []*results.Doc{known()}, Spec{Metric: CPUPerQuery},
			[]string{"no target of run bench/known has server CPU per query: a, b not drawn: no server counters stored"}},
		{"relative to a target without it", []*results.Doc{serverDoc()}, Spec{Metric: CPUPerQuery, RelativeTo: "b"},
			[]string{"relative to b: it has no server CPU per query at any thread count", "CPU not measured"}},
		{"timeline", []*results.Doc{serverDoc()}, Spec{Metric: CPUPerQuery, Timeline: true}, []string{"not a per-second series", "by threads"}},
		{"per second of qps", []*results.Doc{serverDoc()}, Spec{PerSecond: true}, []string{"per second applies to server counters", "not to qps"}},
		{"per second of cpu per query", []*results.Doc{serverDoc()}, Spec{Metric: CPUPerQuery, PerSecond: true}, []string{"draw cpu-per-second"}},
		{"unknown metric lists the server ones", []*results.Doc{serverDoc()}, Spec{Metric: "cpu"},
			[]string{"qps, tps, p95, cpu-per-query, cpu-per-second, counter:NAME"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Draw(tc.docs, tc.spec)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// A counter a newer operator reads, outside the bounded set, is drawn when the steps have it.
func TestServerCounterOutsideTheBoundedSet(t *testing.T) {
	d := withServer(known(), func(string, int32, int32) *serverstats.Step {
		return &serverstats.Step{Seconds: 1, Queries: 10, Counters: []serverstats.Counter{{Name: "Innodb_new_thing", Delta: 5, PerQuery: 0.5}}}
	})
	p, leftOut, err := DrawWithNotes([]*results.Doc{d}, Spec{Metric: Counter("Innodb_new_thing")})
	if err != nil || p == nil {
		t.Fatal(err)
	}
	if !slices.Equal(leftOut, []string{"not drawn (no measured step): c"}) {
		t.Errorf("left out %q", leftOut)
	}
}
