package results_test

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// The golden results.json files the report package renders are what Decode reads.
func TestDecodeReportGoldens(t *testing.T) {
	for _, name := range []string{"two_targets", "repetitions", "failed_after_one_step"} {
		data, err := os.ReadFile("../report/testdata/" + name + "/results.json")
		if err != nil {
			t.Fatal(err)
		}
		doc, err := results.Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if doc.Run.Name == "" || len(doc.Targets) == 0 || len(doc.Ladder.Threads) == 0 {
			t.Errorf("%s: decoded %+v", name, doc.Run)
		}
		steps, withServer := 0, 0
		for _, tr := range doc.Targets {
			for _, st := range tr.Steps {
				steps++
				if st.Threads <= 0 || st.QPS.Total < 0 {
					t.Errorf("%s: target %s step %+v", name, tr.Name, st.StepResult)
				}
				if s, ok, err := st.DecodedSeries(); err != nil || (ok && s.Threads != st.Threads) {
					t.Errorf("%s: series of %s at %d threads: %+v %v", name, tr.Name, st.Threads, s, err)
				}
				s, ok, err := st.DecodedServer()
				if err != nil || !ok || s.Seconds <= 0 || len(s.Counters) == 0 {
					t.Errorf("%s: server counters of %s at %d threads: %v %v %+v", name, tr.Name, st.Threads, ok, err, s)
				}
				withServer++
			}
		}
		if steps == 0 || withServer != steps {
			t.Errorf("%s: %d steps decoded, %d with server counters", name, steps, withServer)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"not json":      {`{"formatVersion":1`, "decode results.json"},
		"newer format":  {`{"formatVersion":2,"targets":[]}`, "formatVersion 2"},
		"no format":     {`{"targets":[]}`, "formatVersion 0"},
		"broken series": {`{"formatVersion":1,"targets":[{"name":"a","steps":[{"threads":4,"series":{"bucketSeconds":1,"intervals":1,"threads":4,"t":[1]}}]}]}`, "target a, 4 threads"},
		"server of no time": {`{"formatVersion":1,"targets":[{"name":"a","steps":[{"threads":8,"server":{"seconds":0,"queries":1,"performanceSchema":false}}]}]}`,
			"target a, 8 threads: decode server counters: seconds 0"},
		"server counter as text": {`{"formatVersion":1,"targets":[{"name":"a","steps":[{"threads":8,"server":{"seconds":1,"counters":[{"source":"status","name":"Questions","delta":"5"}]}}]}]}`,
			"target a, 8 threads: decode server counters"},
		"server delta beyond uint64": {`{"formatVersion":1,"targets":[{"name":"a","steps":[{"threads":8,"server":{"seconds":1,"counters":[{"source":"status","name":"Questions","delta":18446744073709551616}]}}]}]}`,
			"target a, 8 threads: decode server counters"},
		"nameless wait": {`{"formatVersion":1,"targets":[{"name":"a","steps":[{"threads":8,"server":{"seconds":1,"performanceSchema":true,"waits":[{"event":"","count":1}]}}]}]}`,
			"a wait without an event name"},
	} {
		_, err := results.Decode([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", name, err, tc.want)
		}
	}
}

func TestDecodedServer(t *testing.T) {
	doc, err := results.Decode([]byte(`{"formatVersion":1,"targets":[{"name":"a","steps":[` +
		`{"threads":1},` +
		`{"threads":8,"server":{"seconds":300.4,"queries":9000,"counters":[{"source":"status","name":"Bytes_sent","delta":18446744073709551615,"perSecond":6.1407e16,"perQuery":2.0497e15}],` +
		`"gauges":[{"source":"status","name":"Threads_running","value":1}],"performanceSchema":true,` +
		`"waits":[{"event":"wait/synch/mutex/innodb/buf_pool_mutex","count":9007199254740993,"sumTimerWait":1,"secondsPerSecond":0.5}],` +
		`"missingStatus":["Rows_read"],"future":"ignored"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := doc.Targets[0].Steps[0].DecodedServer(); ok || err != nil {
		t.Errorf("a step without server counters: ok %v, err %v", ok, err)
	}
	s, ok, err := doc.Targets[0].Steps[1].DecodedServer()
	if !ok || err != nil {
		t.Fatalf("ok %v, err %v", ok, err)
	}
	if s.Counters[0].Delta != math.MaxUint64 || s.Waits[0].Count != 1<<53+1 || s.Gauges[0].Value != 1 ||
		s.Seconds != 300.4 || s.Queries != 9000 || !s.PerformanceSchema || s.MissingStatus[0] != "Rows_read" {
		t.Errorf("decoded %+v", s)
	}
}

func TestServerValueOf(t *testing.T) {
	step := serverstats.Step{
		Seconds: 10, Queries: 1000,
		Counters: []serverstats.Counter{
			{Source: serverstats.SourceStatus, Name: "Innodb_rows_read", Delta: 5000, PerSecond: 500, PerQuery: 5},
		},
		Gauges:        []serverstats.Gauge{{Source: serverstats.SourceStatus, Name: "Threads_running", Value: 2}},
		MissingStatus: []string{"Rows_read", "Innodb_lsn_current"},
		CPU:           &serverstats.CPU{Container: "mysql", Seconds: 4, PerSecond: 0.4, PerQuery: 0.004},
	}
	noQueries := step
	noQueries.Queries = 0
	noCPU := step
	noCPU.CPU, noCPU.CPUMissing = nil, "no CPU: the operator may not read the kubelet's stats"
	oldCPU := step
	oldCPU.CPU = nil
	errs := step
	errs.Errors = []string{"start: innodbMetrics: Access denied; you need the PROCESS privilege"}
	for name, tc := range map[string]struct {
		v     results.ServerValue
		s     serverstats.Step
		want  float64
		ok    bool
		whyIs string
	}{
		"counter per query":             {results.ServerValue{Counter: "Innodb_rows_read"}, step, 5, true, ""},
		"counter per second":            {results.ServerValue{Counter: "Innodb_rows_read", PerSecond: true}, step, 500, true, ""},
		"counter of a step of no query": {results.ServerValue{Counter: "Innodb_rows_read"}, noQueries, 0, false, "no queries to divide Innodb_rows_read by"},
		"per second needs no query":     {results.ServerValue{Counter: "Innodb_rows_read", PerSecond: true}, noQueries, 500, true, ""},
		"a counter the server lacks": {results.ServerValue{Counter: "Rows_read"}, step, 0, false,
			"the server lacks Rows_read or has it disabled (other servers count it as Innodb_rows_read)"},
		"redo stand-ins": {results.ServerValue{Counter: "Innodb_lsn_current"}, step, 0, false,
			"(other servers count it as Innodb_os_log_written or Innodb_redo_log_current_lsn)"},
		"a gauge":                   {results.ServerValue{Counter: "Threads_running"}, step, 0, false, "Threads_running is a gauge"},
		"not read":                  {results.ServerValue{Counter: "lock_deadlocks"}, errs, 0, false, "lock_deadlocks not read: start: innodbMetrics: Access denied"},
		"not recorded":              {results.ServerValue{Counter: "lock_deadlocks"}, step, 0, false, "no lock_deadlocks recorded"},
		"cpu per query":             {results.ServerValue{}, step, 0.004, true, ""},
		"cpu per second":            {results.ServerValue{PerSecond: true}, step, 0.4, true, ""},
		"cpu not measured":          {results.ServerValue{}, noCPU, 0, false, "CPU not measured: no CPU: the operator may not read the kubelet's stats"},
		"cpu before it existed":     {results.ServerValue{}, oldCPU, 0, false, "CPU not measured (no CPU recorded"},
		"cpu of a step of no query": {results.ServerValue{}, func() serverstats.Step { s := noQueries; return s }(), 0, false, "no queries to divide the CPU by"},
	} {
		got, ok, why := tc.v.Of(tc.s)
		if got != tc.want || ok != tc.ok || (tc.whyIs == "") != (why == "") || !strings.Contains(why, tc.whyIs) {
			t.Errorf("%s: %v %v %q, want %v %v %q", name, got, ok, why, tc.want, tc.ok, tc.whyIs)
		}
	}
}

func TestCounterNames(t *testing.T) {
	if !results.KnownCounter("Innodb_rows_read") || !results.KnownCounter("lock_deadlocks") ||
		results.KnownCounter("Threads_running") || results.KnownCounter("innodb_rows_read") {
		t.Error("KnownCounter: the bounded set's counters, gauges left out, case-sensitive")
	}
	if s := results.CounterSuggestion("innodb_ROWS_read"); s != "Innodb_rows_read" {
		t.Errorf("suggestion %q", s)
	}
	if s := results.CounterSuggestion("Innodb_rows_reed"); s != "" {
		t.Errorf("suggestion %q for a typo", s)
	}
}

func TestServerDropped(t *testing.T) {
	d := &results.Doc{Dropped: []results.Dropped{
		{Kind: results.DroppedSeries, Target: "a", Threads: []int32{1}},
		{Kind: results.DroppedServer, Target: "a", Threads: []int32{8, 8}, Repetitions: []int32{1, 3}},
		{Kind: results.DroppedServer, Target: "b", Threads: []int32{4}},
	}}
	for _, tc := range []struct {
		target       string
		threads, rep int32
		want         bool
	}{
		{"a", 1, 1, false}, {"a", 8, 1, true}, {"a", 8, 2, false}, {"a", 8, 3, true}, {"b", 4, 1, true}, {"b", 4, 0, true}, {"c", 4, 1, false},
	} {
		if got := d.ServerDropped(tc.target, tc.threads, tc.rep); got != tc.want {
			t.Errorf("ServerDropped(%s, %d, %d) = %v", tc.target, tc.threads, tc.rep, got)
		}
	}
}
