package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	kptr "k8s.io/utils/ptr"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

func TestServerKey(t *testing.T) {
	for _, tc := range []struct {
		target       string
		threads, rep int32
		want         string
	}{
		{"mysql80", 8, 0, "server.mysql80.t0008.json"},
		{"mysql80", 8, 1, "server.mysql80.t0008.json"},
		{"mysql80", 8, 2, "server.mysql80.t0008.r02.json"},
		{"ps-80", 1024, 10, "server.ps-80.t1024.r10.json"},
		{"csv", 1, 1, "server.csv.t0001.json"},
	} {
		got := ServerKey(tc.target, tc.threads, tc.rep)
		if got != tc.want {
			t.Errorf("ServerKey(%q, %d, %d) = %q, want %q", tc.target, tc.threads, tc.rep, got, tc.want)
		}
		if !IsServerKey(got) {
			t.Errorf("%q is not recognised as a server key", got)
		}
		if series := SeriesKey(tc.target, tc.threads, tc.rep); strings.TrimPrefix(series, seriesKeyPrefix) != strings.TrimPrefix(got, serverKeyPrefix) {
			t.Errorf("ServerKey %q and SeriesKey %q differ in more than the prefix", got, series)
		}
	}
	if IsServerKey(KeyServerCSV) {
		t.Errorf("Render's own %s is taken for a step's server counters", KeyServerCSV)
	}
}

// encodeServerCases are steps as serverstats.Delta gives them and what EncodeServer must keep.
func encodeServerCases(t *testing.T) map[string]serverstats.Step {
	st := stepFixture(64, 0)
	return map[string]serverstats.Step{
		"mysql 8.0 with waits":   serverFixture(t, flavourMySQL80, st, true),
		"mariadb without waits":  serverFixture(t, flavourMariaDB, st, false),
		"worst case, 50 waits":   worstServerStep(50),
		"nothing read but error": {Seconds: 300.5, Queries: 0, Errors: []string{"start: connect: error 1045: Access denied for user 'sbtest'@'10.0.0.1' <using password: YES> & more"}},
		"exact beyond 2^53": {Seconds: 1, Queries: 3, Counters: []serverstats.Counter{
			{Source: serverstats.SourceStatus, Name: "Bytes_sent", Delta: math.MaxUint64, PerSecond: float64(math.MaxUint64), PerQuery: float64(math.MaxUint64) / 3},
			{Source: serverstats.SourceStatus, Name: "Questions", Delta: 1<<53 + 1, PerSecond: 1<<53 + 1, PerQuery: (1<<53 + 1) / 3.0},
		}, Gauges: []serverstats.Gauge{{Source: serverstats.SourceInnoDBMetrics, Name: "trx_rseg_history_len", Value: math.MaxUint64 - 1}},
			PerformanceSchema: true, Waits: []serverstats.Wait{{Event: "wait/synch/mutex/innodb/buf_pool_mutex", Count: math.MaxUint64, SumTimerWait: math.MaxUint64 - 7, SecondsPerSecond: 1.8446744073709553e7}}},
		"a counter from a newer operator's source": {Seconds: 2, Queries: 10, Counters: []serverstats.Counter{
			{Source: "cgroup", Name: "cpu_usage_usec", Delta: 10, PerSecond: 5, PerQuery: 1}}},
	}
}

func TestEncodeServerRoundTrip(t *testing.T) {
	for name, s := range encodeServerCases(t) {
		t.Run(name, func(t *testing.T) {
			before, _ := json.Marshal(s)
			enc, err := EncodeServer(s)
			if err != nil {
				t.Fatal(err)
			}
			if after, _ := json.Marshal(s); string(after) != string(before) {
				t.Error("EncodeServer modified its argument")
			}
			if compact, _, _ := embedServer(enc); string(compact) != enc || strings.HasSuffix(enc, "\n") {
				t.Errorf("not the compact form Render embeds:\n%.300s\n%.300s", enc, compact)
			}
			if strings.Contains(enc, `\u003c`) || strings.Contains(enc, `\u0026`) {
				t.Errorf("HTML characters escaped: %.300s", enc)
			}
			got, err := results.DecodeServer(enc)
			if err != nil {
				t.Fatal(err)
			}
			// Counts exact, names, sources and lists as they were; rates rounded.
			if !reflect.DeepEqual(roundedServer(s), got) {
				t.Errorf("decoded %+v,\nwant %+v", got, roundedServer(s))
			}
			for i, c := range got.Counters {
				if c.Delta != s.Counters[i].Delta || !close5(c.PerSecond, s.Counters[i].PerSecond) || !close5(c.PerQuery, s.Counters[i].PerQuery) {
					t.Errorf("counter %s: %+v, from %+v", c.Name, c, s.Counters[i])
				}
			}
			for i, w := range got.Waits {
				if w.Count != s.Waits[i].Count || w.SumTimerWait != s.Waits[i].SumTimerWait || !close5(w.SecondsPerSecond, s.Waits[i].SecondsPerSecond) {
					t.Errorf("wait %s: %+v, from %+v", w.Event, w, s.Waits[i])
				}
			}
			// Stable: what EncodeServer wrote encodes to the same bytes.
			if again, err := EncodeServer(got); err != nil || again != enc {
				t.Errorf("re-encoding changed it (%v):\n%.300s\n%.300s", err, again, enc)
			}
		})
	}
}

// roundedServer is s with rates rounded as EncodeServer documents.
func roundedServer(s serverstats.Step) serverstats.Step {
	b, _ := json.Marshal(s)
	var r serverstats.Step
	_ = json.Unmarshal(b, &r)
	r.Seconds = math.Round(s.Seconds*1e6) / 1e6
	for i := range r.Counters {
		r.Counters[i].Delta = s.Counters[i].Delta // through float-free JSON already, but be explicit
		r.Counters[i].PerSecond = roundSig(s.Counters[i].PerSecond, sigDigits, serverRateDecimals)
		r.Counters[i].PerQuery = roundSig(s.Counters[i].PerQuery, sigDigits, serverRateDecimals)
	}
	for i := range r.Waits {
		r.Waits[i].SecondsPerSecond = roundSig(s.Waits[i].SecondsPerSecond, sigDigits, serverRateDecimals)
	}
	return r
}

// close5 says whether got is want to five significant digits (and tiny rates to 12 decimals).
func close5(got, want float64) bool {
	return math.Abs(got-want) <= math.Max(math.Abs(want)*5e-5, 5e-13)
}

func TestEncodeServerRates(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0.000012345678, "0.000012346"}, // a rare event per query keeps its digits
		{1234567.891, "1234600"},
		{2.0000000001, "2"},
		{1e-13, "0"},
		{math.NaN(), "0"},
		{math.Inf(1), "0"},
	} {
		enc, err := EncodeServer(serverstats.Step{Seconds: 1, Counters: []serverstats.Counter{{Source: "status", Name: "x", PerQuery: tc.in}}})
		if err != nil {
			t.Fatal(err)
		}
		if want := `"perQuery":` + tc.want + `}`; !strings.Contains(enc, want) {
			t.Errorf("%v encoded as %s, want %s", tc.in, enc, want)
		}
	}
	enc, err := EncodeServer(serverstats.Step{Seconds: 300.12345678, Queries: math.NaN()})
	if err != nil || !strings.HasPrefix(enc, `{"seconds":300.123457,"queries":0,`) {
		t.Errorf("seconds and queries encoded as %s (%v)", enc, err)
	}
}

func TestEncodeServerRefuses(t *testing.T) {
	for name, s := range map[string]serverstats.Step{
		"no time":         {Seconds: 0, Queries: 5},
		"below a µs":      {Seconds: 1e-7},
		"nameless":        {Seconds: 1, Counters: []serverstats.Counter{{Source: "status"}}},
		"nameless gauge":  {Seconds: 1, Gauges: []serverstats.Gauge{{Source: "status"}}},
		"nameless event":  {Seconds: 1, Waits: []serverstats.Wait{{Count: 1}}},
		"negative rate":   {Seconds: 1, Counters: []serverstats.Counter{{Name: "x", PerSecond: -1}}},
		"negative waited": {Seconds: 1, Waits: []serverstats.Wait{{Event: "e", SecondsPerSecond: -2}}},
	} {
		if enc, err := EncodeServer(s); err == nil {
			t.Errorf("%s: encoded %s, want an error", name, enc)
		}
	}
}

// assertServerCSV parses server.csv with encoding/csv and checks that its rows are exactly the
// stored server counters of the steps status holds, in order.
func assertServerCSV(t *testing.T, text string, run *v1alpha1.BenchmarkRun, stored map[string]string) {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatalf("%s does not parse: %v", KeyServerCSV, err)
	}
	if !slices.Equal(rows[0], serverCSVHeader) {
		t.Fatalf("header = %v", rows[0])
	}
	rows = rows[1:]
	next := func() []string {
		t.Helper()
		if len(rows) == 0 {
			t.Fatalf("%s has fewer rows than the stored server counters", KeyServerCSV)
		}
		r := rows[0]
		rows = rows[1:]
		return r
	}
	float := func(s string) float64 {
		t.Helper()
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return v
	}
	for _, ts := range run.Status.Targets {
		for _, st := range ts.Steps {
			raw, ok := stored[ServerKey(ts.Name, st.Threads, st.RepetitionOrDefault())]
			if !ok {
				continue
			}
			s, err := results.DecodeServer(raw)
			if err != nil {
				t.Fatal(err)
			}
			head := []string{run.Name, ts.Name, strconv.Itoa(int(st.Threads)), strconv.Itoa(int(st.RepetitionOrDefault()))}
			check := func(r []string, kind, source, name string, delta uint64) {
				t.Helper()
				if !slices.Equal(r[:4], head) || r[4] != kind || r[5] != source || r[6] != name || r[7] != strconv.FormatUint(delta, 10) {
					t.Fatalf("row %v, want %v %s %s %s delta %d", r, head, kind, source, name, delta)
				}
			}
			for _, c := range s.Counters {
				r := next()
				check(r, "counter", c.Source, c.Name, c.Delta)
				if float(r[8]) != c.PerSecond || float(r[9]) != c.PerQuery {
					t.Errorf("row %v: rates, want %v %v", r, c.PerSecond, c.PerQuery)
				}
			}
			for _, g := range s.Gauges {
				r := next()
				check(r, "gauge", g.Source, g.Name, g.Value)
				if r[8] != "" || r[9] != "" {
					t.Errorf("gauge row %v has rates", r)
				}
			}
			for _, w := range s.Waits {
				r := next()
				check(r, "wait", "performanceSchema", w.Event, w.Count)
				if float(r[8]) != w.SecondsPerSecond || r[9] != "" {
					t.Errorf("wait row %v, want %v seconds per second", r, w.SecondsPerSecond)
				}
			}
		}
	}
	if len(rows) != 0 {
		t.Errorf("%s has %d rows more than the stored server counters: %v", KeyServerCSV, len(rows), rows[0])
	}
}

func TestServerCSVLeftOutWithoutServerCounters(t *testing.T) {
	run := fixtureRun(-1)
	data := mustRender(t, run, storedSeries(t, run, 5, 1<<20))
	if v, ok := data[KeyServerCSV]; ok {
		t.Errorf("%s present without server counters: %q", KeyServerCSV, v)
	}
	if strings.Contains(data[KeyReportMD], "## Server counters") {
		t.Error("report.md has a server section without server counters")
	}
	// One step with server counters is enough for both.
	stored := map[string]string{}
	s, err := EncodeServer(serverFixture(t, flavourMySQL80, run.Status.Targets[1].Steps[1], true))
	if err != nil {
		t.Fatal(err)
	}
	stored[ServerKey("ps80", 8, 1)] = s
	data = mustRender(t, run, stored)
	assertServerCSV(t, data[KeyServerCSV], run, stored)
	md := data[KeyReportMD]
	if !strings.Contains(md, "### mysql57 (5.7.44)\n\nNo server counters recorded.\n") || !strings.Contains(md, "\n| 8 | `io/file/innodb/innodb_data_file` ") {
		t.Errorf("report.md server section:\n%s", md[strings.Index(md, "## Server counters"):])
	}
}

func TestRenderNotesUnusableServer(t *testing.T) {
	run := fixtureRun(1)
	stored := storedServer(t, run, map[string]string{})
	good := stored[ServerKey("mysql57", 1, 1)]
	stored[ServerKey("mysql57", 8, 1)] = `{"seconds":0,"queries":5,"performanceSchema":false}` // no time
	stored[ServerKey("mysql57", 64, 1)] = `{"seconds":300,"counters":[`                        // cut short
	stored[ServerKey("ps80", 64, 1)] = good                                                    // a step with no result in status
	stored[ServerKey("ps80", 8, 2)] = good                                                     // a repetition the run does not have
	stored[KeyServerCSV] = "an earlier render's server.csv"                                    // not a step's
	data := mustRender(t, run, stored)
	d := decodeResultsJSON(t, data[KeyResultsJSON])
	if d.Targets[0].Steps[0].Server == nil || d.Targets[0].Steps[1].Server != nil || d.Targets[0].Steps[2].Server != nil {
		t.Error("malformed server counters were kept, or good ones lost")
	}
	wantNotes := []struct{ key, why string }{
		{"server.mysql57.t0008.json", "could not be read and are left out: decode server counters: seconds 0"},
		{"server.mysql57.t0064.json", "could not be read and are left out: decode server counters: unexpected end of JSON input"},
		{"server.ps80.t0008.r02.json", "The server counters key server.ps80.t0008.r02.json matches no step result in status"},
		{"server.ps80.t0064.json", "The server counters key server.ps80.t0064.json matches no step result in status"},
	}
	if len(d.Notes) != len(wantNotes) {
		t.Fatalf("notes = %q, want one per unusable server key", d.Notes)
	}
	for i, w := range wantNotes {
		if !strings.Contains(d.Notes[i], w.key) || !strings.Contains(d.Notes[i], w.why) {
			t.Errorf("note %q, want it to name %s and say %q", d.Notes[i], w.key, w.why)
		}
		if !strings.Contains(data[KeyReportMD], w.key) {
			t.Errorf("report.md does not mention %s", w.key)
		}
	}
	if strings.Contains(data[KeyServerCSV], "earlier render") {
		t.Errorf("%s in stored was kept", KeyServerCSV)
	}
}

// The server counters in results.json are the stored bytes, and DecodedServer reads them back.
func TestRenderAttachesServer(t *testing.T) {
	run := repeatedRun()
	stored := storedServer(t, run, map[string]string{})
	data := mustRender(t, run, stored)
	doc, err := results.Decode([]byte(data[KeyResultsJSON]))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tr := range doc.Targets {
		for _, st := range tr.Steps {
			key := ServerKey(tr.Name, st.Threads, st.RepetitionOrDefault())
			if string(st.Server) != stored[key] {
				t.Errorf("%s: embedded %.100s, want the stored %.100s", key, st.Server, stored[key])
			}
			s, ok, err := st.DecodedServer()
			want, _ := results.DecodeServer(stored[key])
			if !ok || err != nil || !reflect.DeepEqual(s, want) {
				t.Errorf("%s: DecodedServer = %v %v", key, ok, err)
			}
			n++
		}
	}
	if n != 18 {
		t.Errorf("%d steps, want 18", n)
	}
}

// withServer stores series at SeriesBudget and server counters for every step of run: realistic
// ones of MySQL 8.0 with 10 waits for even targets, of a MariaDB without performance_schema
// (smaller) for odd ones.
func withServer(t *testing.T, run *v1alpha1.BenchmarkRun) (map[string]string, func(target int) bool) {
	budget := SeriesBudget(run.Spec)
	stored := storeEach(t, run, func(int) int { return budget })
	large := func(ti int) bool { return ti%2 == 0 }
	for ti, ts := range run.Status.Targets {
		for _, st := range ts.Steps {
			s := serverFixture(t, flavourMariaDB, st, false)
			if large(ti) {
				s = serverFixture(t, flavourMySQL80, st, true)
			}
			enc, err := EncodeServer(s)
			if err != nil {
				t.Fatal(err)
			}
			stored[ServerKey(ts.Name, st.Threads, 1)] = enc
		}
	}
	return stored, large
}

// A run too large for every step's server counters keeps every status number and drops server
// counters, largest first, saying which; the series, smaller, go only when no server counters
// are left.
func TestRenderLargeRunDropsLargestServerFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  *v1alpha1.BenchmarkRun
	}{
		{"8 x 16", specWith(8, 16, nil)},
		{"16 x 64", hugeRun()},
	} {
		run := tc.run
		stored, large := withServer(t, run)
		data := mustRender(t, run, stored)
		if n := dataSize(data); n > MaxConfigMapBytes {
			t.Fatalf("%s: %d bytes, over %d", tc.name, n, MaxConfigMapBytes)
		}
		assertCSVMatchesStatus(t, data[KeyResultsCSV], run)
		d := decodeResultsJSON(t, data[KeyResultsJSON])
		dropped := map[string]map[string]map[int32]bool{results.DroppedSeries: {}, results.DroppedServer: {}}
		for _, dr := range d.Dropped {
			dropped[dr.Kind][dr.Target] = map[int32]bool{}
			for _, th := range dr.Threads {
				dropped[dr.Kind][dr.Target][th] = true
			}
		}
		keptLarge, droppedSmall, kept, seriesDropped := false, false, 0, 0
		for ti, tr := range d.Targets {
			for si, st := range tr.Steps {
				if want := run.Status.Targets[ti].Steps[si]; st.QPS != want.QPS || st.Latency != want.Latency || st.Threads != want.Threads {
					t.Fatalf("%s: %s step %d: numbers %+v, want status %+v", tc.name, tr.Name, si, st.StepResult, want)
				}
				if gone := dropped[results.DroppedSeries][tr.Name][st.Threads]; gone == (st.Series != nil) {
					t.Fatalf("%s: %s at %d threads: series reported dropped %v but present %v", tc.name, tr.Name, st.Threads, gone, st.Series != nil)
				} else if gone {
					seriesDropped++
				}
				gone := dropped[results.DroppedServer][tr.Name][st.Threads]
				if gone == (st.Server != nil) {
					t.Fatalf("%s: %s at %d threads: server counters reported dropped %v but present %v", tc.name, tr.Name, st.Threads, gone, st.Server != nil)
				}
				if !gone {
					kept++
				}
				keptLarge = keptLarge || (large(ti) && !gone)
				droppedSmall = droppedSmall || (!large(ti) && gone)
			}
		}
		switch {
		case len(dropped[results.DroppedServer]) == 0:
			t.Fatalf("%s: no server counters dropped", tc.name)
		case kept == 0:
			t.Errorf("%s: no server counters kept", tc.name)
		case seriesDropped > 0 && kept > 0:
			t.Errorf("%s: %d series dropped while server counters, larger, were kept", tc.name, seriesDropped)
		case keptLarge && droppedSmall:
			t.Errorf("%s: smaller server counters were dropped while larger ones were kept", tc.name)
		}
		// server.csv holds exactly the kept ones.
		keptStored := map[string]string{}
		for _, tr := range d.Targets {
			for _, st := range tr.Steps {
				if st.Server != nil {
					keptStored[ServerKey(tr.Name, st.Threads, 1)] = string(st.Server)
				}
			}
		}
		if kept > 0 {
			assertServerCSV(t, data[KeyServerCSV], run, keptStored)
		} else if _, ok := data[KeyServerCSV]; ok {
			t.Errorf("%s: %s present with every server counter dropped", tc.name, KeyServerCSV)
		}

		md := data[KeyReportMD]
		notes := md[strings.Index(md, "## Notes"):]
		if !strings.Contains(notes, "- Server counters left out of results.json, server.csv and the server tables above to keep the results under 900000 bytes") {
			t.Errorf("%s: report.md notes do not say server counters were left out:\n%.500s", tc.name, notes)
		}
		for _, dr := range d.Dropped {
			line := fmt.Sprintf("  - %s at %s threads", dr.Target, joinThreads(dr.Threads))
			if len(dr.Threads) == len(run.Spec.Ladder.Threads) {
				line = fmt.Sprintf("  - %s at all %d steps", dr.Target, len(dr.Threads))
			}
			if !strings.Contains(notes, line+"\n") {
				t.Errorf("%s: report.md notes lack %q", tc.name, line)
			}
		}
		for _, dr := range d.Dropped {
			all := fmt.Sprintf("### %s (8.0.36-28.1)\n\nServer counters left out to fit the ConfigMap (see the notes).\n", dr.Target)
			if kept > 0 && dr.Kind == results.DroppedServer && len(dr.Threads) == len(run.Spec.Ladder.Threads) && !strings.Contains(md, all) {
				t.Errorf("%s: report.md does not say %s's server counters are all left out", tc.name, dr.Target)
			}
		}
		t.Logf("%s steps: kept %d server counters, dropped %d series, %d bytes in all", tc.name, kept, seriesDropped, dataSize(data))
	}
}

// Drops go by size whatever the kind: series larger than the server counters go first.
func TestRenderDropsLargestKindFirst(t *testing.T) {
	run := repeatedRun()
	stored := storedServer(t, run, storedSeries(t, run, 86400, 300_000)) // 18 series of 300 kB
	data := mustRender(t, run, stored)
	d := decodeResultsJSON(t, data[KeyResultsJSON])
	if len(d.Dropped) == 0 {
		t.Fatal("nothing dropped")
	}
	for _, dr := range d.Dropped {
		if dr.Kind != results.DroppedSeries {
			t.Errorf("dropped %+v while 300 kB series remained", dr)
		}
	}
	for _, tr := range d.Targets {
		for _, st := range tr.Steps {
			if st.Server == nil {
				t.Errorf("%s at %d threads: server counters dropped", tr.Name, st.Threads)
			}
		}
	}
	if !strings.Contains(data[KeyReportMD], "- Per-second series left out of results.json") ||
		strings.Contains(data[KeyReportMD], "- Server counters left out") {
		t.Error("report.md notes do not say exactly which kind was left out")
	}
}

// specWith is the spec of a run of targets x ladder steps with the server stats given.
func specWith(targets, steps int, stats *v1alpha1.ServerStats) *v1alpha1.BenchmarkRun {
	run := hugeRun()
	run.Spec.Targets, run.Status.Targets = run.Spec.Targets[:targets], run.Status.Targets[:targets]
	run.Spec.Ladder.Threads = run.Spec.Ladder.Threads[:steps]
	for i := range run.Status.Targets {
		run.Status.Targets[i].Steps = run.Status.Targets[i].Steps[:steps]
	}
	run.Spec.ServerStats = stats
	return run
}

func TestSeriesBudgetReservesServerCounters(t *testing.T) {
	off := SeriesBudget(specWith(2, 3, &v1alpha1.ServerStats{Enabled: kptr.To(false)}).Spec)
	def := SeriesBudget(specWith(2, 3, nil).Spec)
	fifty := SeriesBudget(specWith(2, 3, &v1alpha1.ServerStats{TopWaits: 50}).Spec)
	if off <= def || def <= fifty {
		t.Errorf("budgets off %d, default %d, 50 waits %d: want less room for series with more server counters", off, def, fifty)
	}
	block, _ := EncodeServer(worstServerStep(50))
	if off-fifty < len(block) {
		t.Errorf("50 waits reserve %d bytes per step, less than the worst server counters' %d", off-fifty, len(block))
	}
	// The worst case is wider than what the flavours give at the widest step the API allows.
	worst, _ := EncodeServer(worstServerStep(fixtureTopWaits))
	st := stepFixture(100_000, 0)
	st.QPS.Total, st.DurationSeconds = worstRate, worstDuration
	for _, flavour := range []string{flavourMySQL57, flavourMySQL80, flavourMariaDB} {
		if enc, _ := EncodeServer(serverFixture(t, flavour, st, true)); len(enc) > len(worst) {
			t.Errorf("%s: %d bytes of server counters, more than the worst case's %d", flavour, len(enc), len(worst))
		}
	}
}

// A run whose worst-case server counters fit keeps everything at SeriesBudget: series of a day
// and the largest server counters a realistic server gives, for every step.
func TestRenderAtSeriesBudgetKeepsServerCounters(t *testing.T) {
	for _, tc := range []struct {
		targets, steps int
		topWaits       int32
	}{
		{2, 3, 0},
		{3, 8, 0},
		{2, 8, 50},
	} {
		name := fmt.Sprintf("%d x %d, topWaits %d", tc.targets, tc.steps, tc.topWaits)
		var stats *v1alpha1.ServerStats
		if tc.topWaits > 0 {
			stats = &v1alpha1.ServerStats{TopWaits: tc.topWaits}
		}
		run := specWith(tc.targets, tc.steps, stats)
		for i := range run.Status.Targets {
			run.Status.Targets[i].Message = strings.Repeat("m", worstMessageLen)
		}
		budget := SeriesBudget(run.Spec)
		if budget <= minSeriesBudget {
			t.Fatalf("%s: budget %d, want room left for series", name, budget)
		}
		stored := storeEach(t, run, func(int) int { return budget })
		block, err := EncodeServer(worstServerStep(run.Spec.TopWaitsOrDefault()))
		if err != nil {
			t.Fatal(err)
		}
		for _, ts := range run.Status.Targets {
			for _, st := range ts.Steps {
				stored[ServerKey(ts.Name, st.Threads, 1)] = block
			}
		}
		data := mustRender(t, run, stored)
		if n := dataSize(data); n > MaxConfigMapBytes {
			t.Fatalf("%s: %d bytes, over %d", name, n, MaxConfigMapBytes)
		}
		d := decodeResultsJSON(t, data[KeyResultsJSON])
		if len(d.Dropped) != 0 {
			t.Errorf("%s: dropped %v at the budget SeriesBudget gave (%d bytes per series)", name, d.Dropped, budget)
		}
		for _, tr := range d.Targets {
			for _, st := range tr.Steps {
				if st.Series == nil || st.Series.Intervals != 86400 || string(st.Server) != block {
					t.Fatalf("%s: %s at %d threads lost its series or server counters", name, tr.Name, st.Threads)
				}
			}
		}
		t.Logf("%s: %d bytes per series, %d bytes of server counters per step, %d bytes in all",
			name, budget, len(block), dataSize(data))
	}
}
