package results_test

import (
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
		steps := 0
		for _, tr := range doc.Targets {
			for _, st := range tr.Steps {
				steps++
				if st.Threads <= 0 || st.QPS.Total < 0 {
					t.Errorf("%s: target %s step %+v", name, tr.Name, st.StepResult)
				}
				if s, ok, err := st.DecodedSeries(); err != nil || (ok && s.Threads != st.Threads) {
					t.Errorf("%s: series of %s at %d threads: %+v %v", name, tr.Name, st.Threads, s, err)
				}
			}
		}
		if steps == 0 {
			t.Errorf("%s: no steps decoded", name)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"not json":      {`{"formatVersion":1`, "decode results.json"},
		"newer format":  {`{"formatVersion":2,"targets":[]}`, "formatVersion 2"},
		"no format":     {`{"targets":[]}`, "formatVersion 0"},
		"broken series": {`{"formatVersion":1,"targets":[{"name":"a","steps":[{"threads":4,"series":{"bucketSeconds":1,"intervals":1,"threads":4,"t":[1]}}]}]}`, "target a, 4 threads"},
	} {
		_, err := results.Decode([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", name, err, tc.want)
		}
	}
}
