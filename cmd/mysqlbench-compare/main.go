// Command mysqlbench-compare compares any two BenchmarkRuns, old (the baseline) then new, as the
// schedule compares a run with its baseline: per target the geometric mean of the cells' ratios
// with an interval, per cell a Mann-Whitney U test over the repetitions, every p-value adjusted
// together (Benjamini-Hochberg) so a run with no real change is called regressed with at most
// alpha probability, the percentages as the minimum effect, and an allowance for how much two
// runs differ beyond their repetitions (-run-to-run-cv). It reads what kubectl mysqlbench's
// --from reads: a BenchmarkRun as kubectl prints it (also runs recorded by older versions: it
// recomputes from their steps), a results.json (kubectl mysqlbench export -o json) or a bundle
// (export --bundle: its directory or .tar.gz), and writes comparison.md:
//
//	kubectl get bmr release-1 -o yaml > base.yaml
//	kubectl get bmr candidate -o yaml > run.yaml
//	mysqlbench-compare -alpha 0.05 -qps-drop 5 -p95-rise 10 base.yaml run.yaml
//
// A run of one repetition per cell is refused: no interval can be formed from it.
//
// The exit status is 0 for NoRegression, 1 for an error, 2 for Regressed and 3 for Inconclusive
// or no common cells, so scripts can gate on it.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
	"github.com/mysqlbench/mysqlbench-operator/internal/exported"
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
	runToRun := fs.Float64("run-to-run-cv", v1.DefaultRunToRunCVPercent, "how much, in percent (CV), a target's level moves between two runs "+
		"beyond its repetitions' spread (another night, another server instance); 0 when both runs shared everything but the repetitions")
	fs.Usage = func() {
		_, _ = fmt.Fprintln(stderr, "usage: mysqlbench-compare [flags] OLD NEW  (the baseline first, as benchstat; each a BenchmarkRun as kubectl get -o yaml/json "+
			"prints it, a results.json, or a bundle directory or .tar.gz, as kubectl mysqlbench --from reads them)")
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
		set, err := exported.Load([]string{path})
		if err != nil {
			_, _ = fmt.Fprintln(stderr, err)
			return 1
		}
		r, err := set.Only()
		if err != nil {
			_, _ = fmt.Fprintln(stderr, err)
			return 1
		}
		runs[i] = r.ObjectOrResults()
		if n := maxRepetitions(runs[i]); n < 2 {
			_, _ = fmt.Fprintf(stderr, "%s: run %s has at most %d repetition per cell: no interval can be formed from one "+
				"measurement, so no comparison can say whether a difference is noise; measure both runs with spec.repetitions 3 or more\n",
				path, runs[i].Name, n)
			return 1
		}
	}
	policy := v1.RegressionPolicy{Alpha: alpha, QPSDropPercent: qpsDrop, P95RisePercent: p95Rise}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "run-to-run-cv" {
			// Set: the comparison says it came from the user, not the default.
			policy.RunToRunCVPercent = runToRun
		}
	})
	res := compare.Compare(runs[1], runs[0], policy)
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

// maxRepetitions is the most repetitions any measured cell of run has.
func maxRepetitions(run *v1.BenchmarkRun) int {
	most := 0
	for _, t := range run.Status.Targets {
		// A cell is a thread count of one workload: a suite's workloads are not repetitions.
		type cell struct {
			workload string
			threads  int32
		}
		per := map[cell]int{}
		for _, s := range t.Steps {
			if s.Throughput() > 0 {
				k := cell{s.Workload, s.Threads}
				per[k]++
				most = max(most, per[k])
			}
		}
	}
	return most
}
