package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
)

// runYAML is a BenchmarkRun as kubectl prints it, with 5 repetitions of one cell.
func runYAML(name string, qps float64) string { return runYAMLN(name, qps, 5) }

// runYAMLN is runYAML with n repetitions (at most 5), as a run recorded before comparisons
// judged targets: no status.comparison, only steps.
func runYAMLN(name string, qps float64, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: mysqlbench.io/v1alpha1\nkind: BenchmarkRun\nmetadata:\n  name: %s\n  namespace: bench\n", name)
	b.WriteString("spec:\n  repetitions: 5\n  targets: [{name: mysql80}]\n  workload: {script: oltp_point_select}\n  ladder: {threads: [8]}\n")
	b.WriteString("status:\n  phase: Succeeded\n  targets:\n  - name: mysql80\n    steps:\n")
	for i, f := range []float64{1, 1.002, 0.998, 1.004, 0.996}[:n] {
		fmt.Fprintf(&b, "    - {threads: 8, repetition: %d, tps: %g, qps: {total: %g, read: 0, write: 0, other: 0}, "+
			"latency: {minMs: 0.1, avgMs: 0.5, p95Ms: 1, maxMs: 3}, errors: 0, reconnects: 0, durationSeconds: 60}\n", i+1, qps*f, qps*f)
	}
	return b.String()
}

func TestCompareTwoRunFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("base.yaml", runYAML("release-1", 10000))
	same := write("same.yaml", runYAML("candidate-a", 10010))
	slow := write("slow.yaml", runYAML("candidate-b", 8800))
	once := write("once.yaml", runYAMLN("release-0", 10000, 1))
	onceSlow := write("once-slow.yaml", runYAMLN("candidate-c", 8800, 1))
	results := write("results.json", resultsJSON(t, runYAML("candidate-d", 8800)))
	quiet := []string{"-run-to-run-cv", "0"}
	for _, tc := range []struct {
		args   []string
		code   int
		want   string
		stderr string
	}{
		{append(quiet, base, same), 0, "**Verdict: no regression**", ""},
		{append(quiet, base, slow), 2, "| mysql80 | 8 | 10,000 ± 0.4% | 8,800 ± 0.4% | -12.0% (p<0.001 n=5+5) |", ""},
		{append(quiet, base, slow), 2, "| **mysql80** | geomean (1) | 10,000 | 8,800 | -12.0% [", ""},
		{append(quiet, "-qps-drop", "20", base, slow), 0, "minimum effect QPS -20%", ""},
		// By default two runs may differ by 6 % beyond their repetitions: a 12 % drop of a lone
		// target is within what another night can do, and the output says what could be seen.
		{[]string{base, slow}, 3, "| mysql80 | 6 % (the default, until the schedule has 5 runs) | no (one per target) | - | 23 % (above the 5 % minimum effect", ""},
		// The same inputs as kubectl mysqlbench --from: a results.json.
		{append(quiet, base, results), 2, "# release-1 vs candidate-d", ""},
		// One repetition a side: refused, saying why.
		{[]string{once, onceSlow}, 1, "", "run release-0 has at most 1 repetition per cell: no interval can be formed"},
		{[]string{base}, 1, "", "usage: mysqlbench-compare"},
		{[]string{base, filepath.Join(dir, "missing.yaml")}, 1, "", "no such file or directory"},
	} {
		var out, errOut bytes.Buffer
		if code := run(tc.args, &out, &errOut); code != tc.code || !strings.Contains(out.String(), tc.want) || !strings.Contains(errOut.String(), tc.stderr) {
			t.Errorf("%v: exit %d, want %d; output lacks %q or stderr %q:\n%s%s", tc.args, code, tc.code, tc.want, tc.stderr, out.String(), errOut.String())
		}
	}
}

// resultsJSON is the results.json the operator writes for the run in runYAML's text.
func resultsJSON(t *testing.T, text string) string {
	t.Helper()
	run := &v1.BenchmarkRun{}
	if err := yaml.Unmarshal([]byte(text), run); err != nil {
		t.Fatal(err)
	}
	data, err := report.Render(run, nil)
	if err != nil {
		t.Fatal(err)
	}
	return data[report.KeyResultsJSON]
}

// A suite's workloads at one thread count are different cells, not repetitions of one.
func TestMaxRepetitionsOfASuite(t *testing.T) {
	run := &v1.BenchmarkRun{}
	ts := v1.TargetStatus{Name: "a"}
	for rep := int32(1); rep <= 3; rep++ {
		for _, w := range []string{"points", "rw", "insert"} {
			ts.Steps = append(ts.Steps, v1.StepResult{Workload: w, Threads: 8, Repetition: rep, QPS: v1.QPS{Total: 1000}})
		}
	}
	run.Status.Targets = []v1.TargetStatus{ts}
	if got := maxRepetitions(run); got != 3 {
		t.Errorf("maxRepetitions = %d, want 3", got)
	}
}
