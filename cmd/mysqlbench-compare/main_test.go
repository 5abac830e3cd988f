package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{base, same}, 0, "**Verdict: no regression**"},
		{[]string{base, slow}, 2, "| mysql80 | 8 | 10,000 ± 0.4% | 8,800 ± 0.4% | -12.0% (p=0.008 q=0.016 n=5+5) |"},
		{[]string{base, slow}, 2, "| **mysql80** | geomean (1) | 10,000 | 8,800 | -12.0% ["},
		{[]string{"-qps-drop", "20", base, slow}, 0, "minimum effect QPS -20%"},
		// One repetition a side: no test can tell a 12 % drop from noise.
		{[]string{once, onceSlow}, 3, "about 4 repetitions per run would decide"},
		{[]string{base}, 1, ""},
		{[]string{base, filepath.Join(dir, "missing.yaml")}, 1, ""},
	} {
		var out, errOut bytes.Buffer
		if code := run(tc.args, &out, &errOut); code != tc.code || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%v: exit %d, want %d; output lacks %q:\n%s%s", tc.args, code, tc.code, tc.want, out.String(), errOut.String())
		}
	}
}
