package sysbench

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// plainQPS reads the "queries: N (X per sec.)" line of plain sysbench's text summary. Only this
// benchmark reads the text, to compare with a run that does not go through the reporter.
var plainQPS = regexp.MustCompile(`(?m)^\s+queries:\s+\d+\s+\((\d+(?:\.\d+)?) per sec\.\)`)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkReporterOverhead measures what the reporter costs: the same 8-thread
// oltp_point_select step through the reporter (Build's exact invocation) and through plain
// sysbench (the same argv with the stock script in the reporter's place), interleaved, and
// reports the QPS ratio reporter/plain with its spread. Run it with
//
//	go test ./internal/sysbench -run '^$' -bench ReporterOverhead -benchtime=1x
//
// MYSQLBENCH_BENCH_ROUNDS (default 5) pairs of MYSQLBENCH_BENCH_SECONDS (default 5) s steps.
func BenchmarkReporterOverhead(b *testing.B) {
	w, c, secret := benchServer(b, "")
	rounds := envInt("MYSQLBENCH_BENCH_ROUNDS", 5)
	seconds := envInt("MYSQLBENCH_BENCH_SECONDS", 5)
	step, err := Build(w, testSecret, Step{Phase: PhaseRun, Threads: 8, Duration: time.Duration(seconds) * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	plain := step
	plain.Args = slices.Clone(step.Args)
	plain.Args[slices.Index(plain.Args, ReporterPath)] = string(w.Script)

	viaReporter := func() float64 {
		r := c.run(b, step, secret)
		out, err := ParseOutput(bytes.NewReader(r.log))
		if err != nil {
			b.Fatal(err)
		}
		if f := Classify(r.exitCode, out); f != nil {
			b.Fatalf("reporter run failed: %s\n%s", f.Reason, r.log)
		}
		return out.Final.QPS.Total
	}
	viaPlain := func() float64 {
		r := c.run(b, plain, secret)
		m := plainQPS.FindSubmatch(r.log)
		if r.exitCode != 0 || m == nil {
			b.Fatalf("plain run failed (exit %d):\n%s", r.exitCode, r.log)
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		return v
	}

	for range b.N {
		var ratios, rep, pln []float64
		for i := range rounds {
			// Alternate which goes first so a drift over time (caches, the host's other load)
			// does not favour one side.
			var q, p float64
			if i%2 == 0 {
				q, p = viaReporter(), viaPlain()
			} else {
				p, q = viaPlain(), viaReporter()
			}
			rep, pln, ratios = append(rep, q), append(pln, p), append(ratios, q/p)
		}
		mean, sd := meanStddev(ratios)
		b.ReportMetric(mean, "reporter/plain")
		b.ReportMetric(slices.Min(ratios), "min-ratio")
		b.ReportMetric(slices.Max(ratios), "max-ratio")
		b.ReportMetric(sd, "stddev-ratio")
		repMean, _ := meanStddev(rep)
		plnMean, _ := meanStddev(pln)
		fmt.Printf("reporter/plain QPS ratio %.3f ± %.3f (min %.3f, max %.3f) over %d interleaved pairs of %ds 8-thread "+
			"oltp_point_select; mean QPS reporter %.0f, plain %.0f\n",
			mean, sd, slices.Min(ratios), slices.Max(ratios), rounds, seconds, repMean, plnMean)
	}
}

// benchServer starts the benchmarks' MariaDB with options, creates the sbtest account (grants
// runs after its GRANT ALL on sbtest) and prepares the benchmarks' oltp_point_select tables.
func benchServer(b *testing.B, grants string, options ...string) (v1alpha1.Workload, *container, map[string]string) {
	tools := lookTools(b)
	db := startMariaDB(b, tools, options...)
	password := randomPassword(b)
	db.mustSQL(b, "CREATE DATABASE sbtest; CREATE USER sbtest@'%' IDENTIFIED BY '"+password+"';"+
		"GRANT ALL ON sbtest.* TO sbtest@'%';"+grants)
	secret := db.secret(password)
	c := newContainer(b, nil)
	w := v1alpha1.Workload{Script: "oltp_point_select", Tables: 4, TableSize: 10000}
	prepare, err := Build(w, testSecret, Step{Phase: PhasePrepare})
	if err != nil {
		b.Fatal(err)
	}
	if r := c.run(b, prepare, secret); r.exitCode != 0 {
		b.Fatalf("prepare failed:\n%s", r.log)
	}
	return w, c, secret
}

func meanStddev(xs []float64) (float64, float64) {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	if len(xs) < 2 {
		return mean, 0
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// BenchmarkServerStatsOverhead measures what the server snapshots (Step.ServerStats) cost the
// measured QPS: the same 8-thread oltp_point_select step with the snapshots on and off,
// interleaved, against MariaDB with performance_schema ON and the synch wait instruments (the
// largest snapshots) and the operator's grants, and reports the QPS ratio on/off. Run it with
//
//	go test ./internal/sysbench -run '^$' -bench ServerStatsOverhead -benchtime=1x
//
// MYSQLBENCH_BENCH_ROUNDS (default 10) pairs of MYSQLBENCH_BENCH_SECONDS (default 5) s steps.
func BenchmarkServerStatsOverhead(b *testing.B) {
	w, c, secret := benchServer(b, GrantSQL("sbtest", "%", "sbtest"),
		"--performance-schema=ON", "--performance-schema-instrument=wait/synch/%=ON")
	rounds := envInt("MYSQLBENCH_BENCH_ROUNDS", 10)
	seconds := envInt("MYSQLBENCH_BENCH_SECONDS", 5)
	qps := func(serverStats bool) float64 {
		step := Step{Phase: PhaseRun, Threads: 8, Duration: time.Duration(seconds) * time.Second, ServerStats: serverStats}
		inv, err := Build(w, testSecret, step)
		if err != nil {
			b.Fatal(err)
		}
		r := c.run(b, inv, secret)
		out, err := ParseOutput(bytes.NewReader(r.log))
		if err != nil {
			b.Fatal(err)
		}
		if f := Classify(r.exitCode, out); f != nil {
			b.Fatalf("run failed: %s\n%s", f.Reason, r.log)
		}
		if got := len(out.Server); (got == 2) != serverStats {
			b.Fatalf("%d server snapshots with ServerStats %v", got, serverStats)
		}
		return out.Final.QPS.Total
	}

	for range b.N {
		var ratios, on, off []float64
		for i := range rounds {
			// Alternate which goes first so a drift over time does not favour one side.
			var q, p float64
			if i%2 == 0 {
				q, p = qps(true), qps(false)
			} else {
				p, q = qps(false), qps(true)
			}
			on, off, ratios = append(on, q), append(off, p), append(ratios, q/p)
		}
		mean, sd := meanStddev(ratios)
		sorted := slices.Sorted(slices.Values(ratios))
		median := (sorted[(len(sorted)-1)/2] + sorted[len(sorted)/2]) / 2
		b.ReportMetric(mean, "on/off")
		b.ReportMetric(median, "median-ratio")
		b.ReportMetric(sd, "stddev-ratio")
		onMean, _ := meanStddev(on)
		offMean, _ := meanStddev(off)
		fmt.Printf("server snapshots on/off QPS ratio: mean %.3f ± %.3f, median %.3f (min %.3f, max %.3f) over %d interleaved "+
			"pairs of %ds 8-thread oltp_point_select on MariaDB with performance_schema and the synch instruments; "+
			"mean QPS on %.0f, off %.0f\n",
			mean, sd, median, slices.Min(ratios), slices.Max(ratios), rounds, seconds, onMean, offMean)
	}
}
