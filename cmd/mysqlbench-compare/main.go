// Command mysqlbench-compare compares any two BenchmarkRuns, old (the baseline) then new, as the
// schedule compares a run with its baseline: per target the geometric mean of the cells' ratios
// with an interval, per cell a Mann-Whitney U test over the repetitions, every p-value adjusted
// together (Benjamini-Hochberg) so a run with no real change is called regressed with at most
// alpha probability, the percentages as the minimum effect. It reads the runs as kubectl prints
// them (also runs recorded by older versions: it recomputes from their steps) and writes
// comparison.md:
//
//	kubectl get bmr release-1 -o yaml > base.yaml
//	kubectl get bmr candidate -o yaml > run.yaml
//	mysqlbench-compare -alpha 0.05 -qps-drop 5 -p95-rise 10 base.yaml run.yaml
//
// The exit status is 0 for NoRegression, 1 for an error, 2 for Regressed and 3 for Inconclusive
// or no common cells, so scripts can gate on it.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mysqlbench-compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	alpha := fs.Float64("alpha", v1.DefaultAlpha, "false-alarm rate of the whole comparison (Benjamini-Hochberg over every target and cell test)")
	qpsDrop := fs.Float64("qps-drop", v1.DefaultQPSDropPercent, "smallest QPS drop that matters, in percent")
	p95Rise := fs.Float64("p95-rise", v1.DefaultP95RisePercent, "smallest p95 latency rise that matters, in percent")
	fs.Usage = func() {
		_, _ = fmt.Fprintln(stderr, "usage: mysqlbench-compare [flags] OLD.yaml NEW.yaml  (the baseline first, as benchstat; BenchmarkRuns as kubectl get -o yaml/json prints them)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return 1
	}
	var runs [2]*v1.BenchmarkRun
	for i, path := range fs.Args() {
		data, err := os.ReadFile(path)
		if err != nil {
			_, _ = fmt.Fprintln(stderr, err)
			return 1
		}
		runs[i] = &v1.BenchmarkRun{}
		if err := yaml.Unmarshal(data, runs[i]); err != nil || runs[i].Kind != "BenchmarkRun" {
			_, _ = fmt.Fprintf(stderr, "%s: not a BenchmarkRun (kind %q): %v\n", path, runs[i].Kind, err)
			return 1
		}
	}
	res := compare.Compare(runs[1], runs[0], v1.RegressionPolicy{Alpha: alpha, QPSDropPercent: qpsDrop, P95RisePercent: p95Rise})
	if _, err := fmt.Fprint(stdout, compare.Markdown(res)); err != nil {
		_, _ = fmt.Fprintln(stderr, err)
		return 1
	}
	switch res.Summary.Verdict {
	case v1.VerdictNoRegression:
		return 0
	case v1.VerdictRegressed:
		return 2
	default:
		return 3
	}
}
