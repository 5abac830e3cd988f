package results_test

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/internal/results"
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
