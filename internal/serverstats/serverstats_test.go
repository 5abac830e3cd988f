package serverstats

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// snap builds a snapshot with the status and metrics given; the rest of the bounded set is
// missing.
func snap(at string, unixTime float64, status, metrics map[string]uint64, ps bool, waits ...WaitTotal) Snapshot {
	return Snapshot{Version: 1, At: at, UnixTime: unixTime, Status: status,
		InnoDBMetrics: metrics, PerformanceSchema: ps, Waits: waits}
}

func counter(st Step, source, name string) Counter {
	for _, c := range st.Counters {
		if c.Source == source && c.Name == name {
			return c
		}
	}
	return Counter{}
}

// without returns the bounded set's names but the given ones, in order.
func without(names []string, gone ...string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(gone, n) })
}

func TestDeltaCounters(t *testing.T) {
	const big = uint64(1) << 63 // beyond a float64's exact integers
	tests := []struct {
		name      string
		start     map[string]uint64
		end       map[string]uint64
		queries   float64
		want      map[string]Counter // by name, status source
		wantGauge map[string]uint64
		missing   []string
	}{{
		name:    "deltas per second and per query",
		start:   map[string]uint64{"Questions": 1000, "Com_select": 10, "Threads_running": 1},
		end:     map[string]uint64{"Questions": 21000, "Com_select": 20010, "Threads_running": 9},
		queries: 20000,
		want: map[string]Counter{
			"Questions":  {Delta: 20000, PerSecond: 10000, PerQuery: 1},
			"Com_select": {Delta: 20000, PerSecond: 10000, PerQuery: 1},
		},
		wantGauge: map[string]uint64{"Threads_running": 9},
		missing:   without(StatusNames, "Questions", "Com_select", "Threads_running"),
	}, {
		name:    "exact near 2^63 and across it",
		start:   map[string]uint64{"Bytes_sent": big - 3, "Bytes_received": math.MaxUint64 - 1000},
		end:     map[string]uint64{"Bytes_sent": big + 5, "Bytes_received": math.MaxUint64},
		queries: 4,
		want: map[string]Counter{
			"Bytes_sent":     {Delta: 8, PerSecond: 4, PerQuery: 2},
			"Bytes_received": {Delta: 1000, PerSecond: 500, PerQuery: 250},
		},
		missing: without(StatusNames, "Bytes_sent", "Bytes_received"),
	}, {
		name:    "a delta only a uint64 holds exactly",
		start:   map[string]uint64{"Innodb_os_log_written": 0},
		end:     map[string]uint64{"Innodb_os_log_written": big + 1},
		queries: 0,
		want: map[string]Counter{
			"Innodb_os_log_written": {Delta: big + 1, PerSecond: float64(big+1) / 2},
		},
		missing: without(StatusNames, "Innodb_os_log_written"),
	}, {
		name:    "a gauge may go down",
		start:   map[string]uint64{"Threads_connected": 50, "Threads_running": 40},
		end:     map[string]uint64{"Threads_connected": 1, "Threads_running": 1},
		queries: 10,
		want:    map[string]Counter{},
		wantGauge: map[string]uint64{
			"Threads_connected": 1, "Threads_running": 1,
		},
		missing: without(StatusNames, "Threads_connected", "Threads_running"),
	}, {
		name:    "a counter only one snapshot has is missing; names outside the set are ignored",
		start:   map[string]uint64{"Questions": 1, "Innodb_rows_read": 5, "Uptime": 10},
		end:     map[string]uint64{"Questions": 3, "Rows_read": 9, "Uptime": 12},
		queries: 2,
		want:    map[string]Counter{"Questions": {Delta: 2, PerSecond: 1, PerQuery: 1}},
		missing: without(StatusNames, "Questions"),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := Delta(snap(AtStart, 100, tc.start, nil, false),
				snap(AtEnd, 102, tc.end, nil, false), tc.queries, 5)
			if err != nil {
				t.Fatal(err)
			}
			if st.Seconds != 2 || st.Queries != tc.queries {
				t.Errorf("seconds %v, queries %v", st.Seconds, st.Queries)
			}
			got := map[string]Counter{}
			for _, c := range st.Counters {
				if c.Source != SourceStatus {
					t.Errorf("counter %+v from %s, want status", c, c.Source)
				}
				name := c.Name
				c.Source, c.Name = "", ""
				got[name] = c
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("counters\n%+v\nwant\n%+v", got, tc.want)
			}
			gauges := map[string]uint64{}
			for _, g := range st.Gauges {
				gauges[g.Name] = g.Value
			}
			if len(gauges) != len(tc.wantGauge) || (len(gauges) > 0 && !reflect.DeepEqual(gauges, tc.wantGauge)) {
				t.Errorf("gauges %v, want %v", gauges, tc.wantGauge)
			}
			if !slices.Equal(st.MissingStatus, tc.missing) {
				t.Errorf("missing %v\nwant %v", st.MissingStatus, tc.missing)
			}
			if st.MissingInnoDBMetrics != nil {
				t.Errorf("metrics were not read, yet missing %v", st.MissingInnoDBMetrics)
			}
		})
	}
}

func TestDeltaOrderAndMetrics(t *testing.T) {
	all := func(v uint64) map[string]uint64 {
		m := map[string]uint64{}
		for _, n := range StatusNames {
			m[n] = v
		}
		return m
	}
	start := snap(AtStart, 10, all(1), map[string]uint64{"lock_deadlocks": 1, "trx_rseg_history_len": 900, "log_waits": 0}, false)
	end := snap(AtEnd, 11, all(2), map[string]uint64{"lock_deadlocks": 4, "trx_rseg_history_len": 20, "log_waits": 0}, false)
	st, err := Delta(start, end, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range st.Counters {
		names = append(names, c.Source+" "+c.Name)
	}
	var want []string
	for _, n := range StatusNames {
		if !IsGauge(n) {
			want = append(want, SourceStatus+" "+n)
		}
	}
	want = append(want, SourceInnoDBMetrics+" lock_deadlocks", SourceInnoDBMetrics+" log_waits")
	if !slices.Equal(names, want) {
		t.Errorf("counters in order\n%q\nwant\n%q", names, want)
	}
	if c := counter(st, SourceInnoDBMetrics, "lock_deadlocks"); c.Delta != 3 || c.PerSecond != 3 || c.PerQuery != 3 {
		t.Errorf("lock_deadlocks %+v", c)
	}
	wantGauges := []Gauge{
		{SourceStatus, "Threads_running", 2}, {SourceStatus, "Threads_connected", 2},
		{SourceInnoDBMetrics, "trx_rseg_history_len", 20},
	}
	if !slices.Equal(st.Gauges, wantGauges) {
		t.Errorf("gauges %+v, want %+v", st.Gauges, wantGauges)
	}
	if st.MissingStatus != nil {
		t.Errorf("missing status %v", st.MissingStatus)
	}
	if want := without(InnoDBMetricNames, "lock_deadlocks", "trx_rseg_history_len", "log_waits"); !slices.Equal(st.MissingInnoDBMetrics, want) {
		t.Errorf("missing metrics %v, want %v", st.MissingInnoDBMetrics, want)
	}
}

func TestDeltaBackwards(t *testing.T) {
	tests := []struct {
		name        string
		start, end  Snapshot
		wantInError []string
	}{{
		name:        "server restarted",
		start:       snap(AtStart, 1, map[string]uint64{"Questions": 5000, "Com_select": 4000, "Threads_running": 5}, nil, false),
		end:         snap(AtEnd, 2, map[string]uint64{"Questions": 12, "Com_select": 4001, "Threads_running": 1}, nil, false),
		wantInError: []string{"status Questions from 5000 to 12"},
	}, {
		name:        "innodb_monitor_reset",
		start:       snap(AtStart, 1, nil, map[string]uint64{"log_writes": 7}, false),
		end:         snap(AtEnd, 2, nil, map[string]uint64{"log_writes": 0}, false),
		wantInError: []string{"innodbMetrics log_writes from 7 to 0"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := Delta(tc.start, tc.end, 100, 5)
			if err == nil {
				t.Fatalf("no error; step %+v", st)
			}
			for _, w := range tc.wantInError {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "Threads_running") || strings.Contains(err.Error(), "Com_select") {
				t.Errorf("error %q names a gauge or a counter that went forward", err)
			}
		})
	}
}

func TestDeltaWaits(t *testing.T) {
	const ps = uint64(1e12) // a second in picoseconds
	start := []WaitTotal{
		{Event: "wait/synch/mutex/innodb/dblwr_mutex", Count: 100, SumTimerWait: math.MaxUint64 - 40*ps},
		{Event: "wait/synch/mutex/innodb/buf_pool_mutex", Count: 10, SumTimerWait: 5 * ps},
		{Event: "wait/synch/rwlock/innodb/index_tree_rw_lock", Count: 1, SumTimerWait: 1},
		{Event: "wait/io/file/innodb/innodb_log_file", Count: 7, SumTimerWait: 7},
		{Event: "wait/synch/cond/mysys/COND_timer", Count: 1, SumTimerWait: 1},
		{Event: "wait/io/table/sql/handler", Count: 3, SumTimerWait: 3},
	}
	end := []WaitTotal{
		{Event: "wait/synch/mutex/innodb/dblwr_mutex", Count: 300, SumTimerWait: math.MaxUint64 - 6*ps}, // 34 s
		{Event: "wait/synch/mutex/innodb/buf_pool_mutex", Count: 20, SumTimerWait: 9 * ps},              // 4 s, 10 waits
		{Event: "wait/synch/rwlock/innodb/index_tree_rw_lock", Count: 31, SumTimerWait: 4*ps + 1},       // 4 s, 30 waits
		{Event: "wait/io/file/innodb/innodb_log_file", Count: 17, SumTimerWait: 4*ps + 7},               // 4 s, 10 waits
		{Event: "wait/synch/cond/mysys/COND_timer", Count: 3, SumTimerWait: 100 * ps},                   // left out
		{Event: "wait/io/table/sql/handler", Count: 3, SumTimerWait: 3},                                 // did not wait
		{Event: "wait/lock/table/sql/handler", Count: 2, SumTimerWait: ps},                              // new: 1 s
	}
	want := []Wait{
		{Event: "wait/synch/mutex/innodb/dblwr_mutex", Count: 200, SumTimerWait: 34 * ps, SecondsPerSecond: 17},
		{Event: "wait/synch/rwlock/innodb/index_tree_rw_lock", Count: 30, SumTimerWait: 4 * ps, SecondsPerSecond: 2},
		{Event: "wait/io/file/innodb/innodb_log_file", Count: 10, SumTimerWait: 4 * ps, SecondsPerSecond: 2},
		{Event: "wait/synch/mutex/innodb/buf_pool_mutex", Count: 10, SumTimerWait: 4 * ps, SecondsPerSecond: 2},
		{Event: "wait/lock/table/sql/handler", Count: 2, SumTimerWait: ps, SecondsPerSecond: 0.5},
	}
	for _, topN := range []int{0, 1, 3, 5, 10} {
		st, err := Delta(snap(AtStart, 1000, nil, nil, true, start...),
			snap(AtEnd, 1002, nil, nil, true, end...), 1, topN)
		if err != nil {
			t.Fatal(err)
		}
		w := want
		if topN > 0 && topN < len(w) {
			w = w[:topN]
		}
		if !st.PerformanceSchema || !slices.Equal(st.Waits, w) {
			t.Errorf("top %d: performanceSchema %v, waits\n%+v\nwant\n%+v", topN, st.PerformanceSchema, st.Waits, w)
		}
	}
}

func TestDeltaWaitsBackwards(t *testing.T) {
	// What MariaDB 10.11 did right after prepare: the table io waits' count grew and their sum
	// shrank. A TRUNCATE of the summary removes events. Neither spoils the other events.
	start := []WaitTotal{
		{Event: "wait/io/table/sql/handler", Count: 4000, SumTimerWait: 267731837256},
		{Event: "wait/lock/table/sql/handler", Count: 5, SumTimerWait: 50},
		{Event: "wait/synch/mutex/innodb/buf_pool_mutex", Count: 10, SumTimerWait: 100},
	}
	end := []WaitTotal{
		{Event: "wait/io/table/sql/handler", Count: 123373, SumTimerWait: 251025209136},
		{Event: "wait/synch/mutex/innodb/buf_pool_mutex", Count: 20, SumTimerWait: 300},
	}
	st, err := Delta(snap(AtStart, 1, map[string]uint64{"Questions": 1}, nil, true, start...),
		snap(AtEnd, 2, map[string]uint64{"Questions": 2}, nil, true, end...), 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Wait{{Event: "wait/synch/mutex/innodb/buf_pool_mutex", Count: 10, SumTimerWait: 200, SecondsPerSecond: 2e-10}}; !slices.Equal(st.Waits, want) {
		t.Errorf("waits %+v, want %+v", st.Waits, want)
	}
	want := []string{
		"wait/io/table/sql/handler went from 4000 waits, 267731837256 ps to 123373 waits, 251025209136 ps",
		"wait/lock/table/sql/handler went from 5 waits to none",
	}
	if !slices.Equal(st.WaitsLeftOut, want) {
		t.Errorf("left out %q, want %q", st.WaitsLeftOut, want)
	}
	if c := counter(st, SourceStatus, "Questions"); c.Delta != 1 {
		t.Errorf("Questions %+v", c)
	}
}

func TestDeltaPerformanceSchemaOff(t *testing.T) {
	waits := []WaitTotal{{Event: "wait/synch/mutex/x", Count: 1, SumTimerWait: 1}}
	for _, tc := range []struct {
		name           string
		startPS, endPS bool
		startW, endW   []WaitTotal
		wantPS         bool
	}{
		{name: "off", wantPS: false},
		{name: "turned on during the step", endPS: true, endW: waits, wantPS: false},
		{name: "on, waits not readable", startPS: true, endPS: true, wantPS: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := Delta(snap(AtStart, 1, nil, nil, tc.startPS, tc.startW...),
				snap(AtEnd, 2, nil, nil, tc.endPS, tc.endW...), 1, 5)
			if err != nil {
				t.Fatal(err)
			}
			if st.PerformanceSchema != tc.wantPS || st.Waits != nil {
				t.Errorf("performanceSchema %v, waits %+v; want %v and none", st.PerformanceSchema, st.Waits, tc.wantPS)
			}
		})
	}
}

func TestDeltaErrorsAndInvalid(t *testing.T) {
	start := snap(AtStart, 5, nil, nil, false)
	start.Errors = []string{"innodbMetrics: SQL error, errno = 1227"}
	end := snap(AtEnd, 6, nil, nil, false)
	end.Errors = []string{"innodbMetrics: not read, it failed at the start"}
	st, err := Delta(start, end, math.NaN(), 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"start: innodbMetrics: SQL error, errno = 1227", "end: innodbMetrics: not read, it failed at the start"}; !slices.Equal(st.Errors, want) {
		t.Errorf("errors %q, want %q", st.Errors, want)
	}
	if st.Queries != 0 {
		t.Errorf("NaN queries became %v", st.Queries)
	}

	for name, pair := range map[string][2]Snapshot{
		"swapped":        {end, start},
		"same time":      {snap(AtStart, 5, nil, nil, false), snap(AtEnd, 5, nil, nil, false)},
		"end before":     {snap(AtStart, 6, nil, nil, false), snap(AtEnd, 5, nil, nil, false)},
		"two starts":     {start, start},
		"NaN start time": {snap(AtStart, math.NaN(), nil, nil, false), end},
	} {
		if st, err := Delta(pair[0], pair[1], 1, 5); err == nil {
			t.Errorf("%s: no error, step %+v", name, st)
		}
	}
}

func TestPair(t *testing.T) {
	s := snap(AtStart, 1, map[string]uint64{"Questions": 10}, nil, false)
	e := snap(AtEnd, 3, map[string]uint64{"Questions": 30}, nil, false)
	for name, snaps := range map[string][]Snapshot{
		"none":          nil,
		"only start":    {s},
		"end first":     {e, s},
		"two starts":    {s, s, e},
		"two ends":      {s, e, e},
		"unknown at(s)": {s, {At: "middle"}},
	} {
		if _, _, err := Pair(snaps); err == nil {
			t.Errorf("%s: Pair accepted %+v", name, snaps)
		}
	}
	start, end, err := Pair([]Snapshot{s, e})
	if err != nil || start.UnixTime != 1 || end.UnixTime != 3 {
		t.Errorf("Pair = %+v, %+v, %v", start, end, err)
	}
}

func TestGaugesAreInTheBoundedSet(t *testing.T) {
	for name := range gauges {
		if !slices.Contains(StatusNames, name) && !slices.Contains(InnoDBMetricNames, name) {
			t.Errorf("gauge %s is not in the bounded set", name)
		}
	}
}
