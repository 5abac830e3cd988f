package sysbench

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/testmariadb"
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
	w, c, secret, _ := benchServer(b, "")
	rounds := envInt("MYSQLBENCH_BENCH_ROUNDS", 5)
	seconds := envInt("MYSQLBENCH_BENCH_SECONDS", 5)
	step, err := Build(w, testSecret, load.Step{Phase: load.PhaseRun, Threads: 8, Duration: time.Duration(seconds) * time.Second})
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
func benchServer(b *testing.B, grants string, options ...string) (v1alpha1.Workload, *container, map[string]string, *testmariadb.Server) {
	tools := lookTools(b)
	db := testmariadb.Start(b, tools, options...)
	password := randomPassword(b)
	db.MustSQL(b, "CREATE DATABASE sbtest; CREATE USER sbtest@'%' IDENTIFIED BY '"+password+"';"+
		"GRANT ALL ON sbtest.* TO sbtest@'%';"+grants)
	secret := dbSecret(db, password)
	c := newContainer(b, nil)
	w := v1alpha1.Workload{Script: "oltp_point_select", Tables: 4, TableSize: 10000}
	prepare, err := Build(w, testSecret, load.Step{Phase: load.PhasePrepare})
	if err != nil {
		b.Fatal(err)
	}
	if r := c.run(b, prepare, secret); r.exitCode != 0 {
		b.Fatalf("prepare failed:\n%s", r.log)
	}
	return w, c, secret, db
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
// measured QPS: the same oltp_point_select step (read-only) with the snapshots on and off,
// against MariaDB with performance_schema ON and the synch wait instruments (the largest
// snapshots) and the operator's grants. The reporter takes the snapshots in init() and done(),
// outside sysbench's measured window, so the ratio on/off should be 1 within the noise; the
// benchmark is built to make that noise small enough to resolve 1 %:
//
//   - the server and sysbench are pinned with taskset (util-linux) when it is installed and at
//     least 2 CPUs are allowed, by default both to one CPU and the harness to the others (see
//     pinBench; MYSQLBENCH_BENCH_PIN); otherwise they run unpinned and the output says why;
//   - few client threads (default 1);
//   - runs in ABBA blocks (on, off, off, on, then off, on, on, off), which cancel a linear drift
//     of the host's speed within a block and any first-or-last effect across blocks; one
//     discarded warm-up run of each kind before the first block;
//   - the host's other load is measured: "foreign" CPU is the host's busy time (/proc/stat,
//     steal included) less the server's, the test's and sysbench's own. Before each block the
//     benchmark waits (at most MYSQLBENCH_BENCH_QUIET_WAIT, default 5 s) for a quiet 0.5 s, and
//     a block is clean when no run of it had more than MYSQLBENCH_BENCH_MAX_FOREIGN (default
//     0.1) CPUs of foreign load. Both are
//     decided before and regardless of the snapshots, and the output gives all blocks and the
//     clean ones;
//   - optionally MYSQLBENCH_BENCH_NICE (e.g. -10; default 0, unchanged) renices the server and
//     sysbench, which takes CPU from everything else on the host.
//
// The unit of analysis is the block: its ratio is (on1+on2)/(off1+off2) of the runs' QPS. For
// all blocks and for the clean ones it prints the mean of the blocks' ratios with a 95 %
// Student t interval, the ratio of the mean QPS with a 95 % percentile bootstrap interval
// (blocks resampled 10000 times, fixed seed), the median, min, max and sd, and "ratio ≥ 0.99
// shown" only when the t interval's lower bound is at least 0.99. It also reports what the
// snapshots add to a step's wall time: the reporter's durationMs of both (connecting included)
// as a fraction of a 60 s step, and the measured difference of the steps' wall times on - off.
//
//	go test ./internal/sysbench -run '^$' -bench ServerStatsOverhead -benchtime=1x -timeout 30m
//
// MYSQLBENCH_BENCH_PAIRS (default 60, rounded up to even: 30 blocks) on/off pairs of
// MYSQLBENCH_BENCH_SECONDS (default 4, at most 100) s runs with MYSQLBENCH_BENCH_THREADS
// (default 1) threads: about 9 minutes with the server's start, 11.5 at most with the waits for
// quiet. MYSQLBENCH_BENCH_VERBOSE=1 also prints every run's per-second QPS.
//
// Measured on the 2-vCPU VM (AMD EPYC) with 110 pairs (55 blocks, 15 minutes) of 4 s 1-thread
// runs, both on CPU 0, a quiet wait of at most 10 s, all 55 blocks clean (foreign load ≤ 0.07):
// on/off 1.0067, 95 % t CI [0.9980, 1.0154]; ratio of mean QPS 1.0058, bootstrap CI [0.9983,
// 1.0142]; blocks' median 1.0039, min 0.9298, max 1.1337, sd 0.0323; about 34500 QPS either way;
// ratio ≥ 0.99 shown. The snapshots took 3.1 + 2.9 ms per step (0.0099 % of a 60 s step); steps
// with them lasted 7.2 ms longer (CI [6.7, 7.6]). With sysbench and the server on separate
// vCPUs the blocks' sd was 0.07 to 0.12 (about 8000 QPS), too much to resolve 1 % in minutes.
func BenchmarkServerStatsOverhead(b *testing.B) {
	blocks := (envInt("MYSQLBENCH_BENCH_PAIRS", 60) + 1) / 2
	seconds := min(envInt("MYSQLBENCH_BENCH_SECONDS", 4), 100) // container.run allows 2 minutes
	threads := envInt("MYSQLBENCH_BENCH_THREADS", 1)
	maxForeign := 0.1
	if v, err := strconv.ParseFloat(os.Getenv("MYSQLBENCH_BENCH_MAX_FOREIGN"), 64); err == nil && v > 0 {
		maxForeign = v
	}
	nice, _ := strconv.Atoi(os.Getenv("MYSQLBENCH_BENCH_NICE"))
	w, c, secret, db := benchServer(b, GrantSQL("sbtest", "%", "sbtest"),
		"--performance-schema=ON", "--performance-schema-instrument=wait/synch/%=ON")
	pidFile, err := os.ReadFile(db.PIDFile())
	if err != nil {
		b.Fatal(err)
	}
	serverPID := strings.TrimSpace(string(pidFile))
	pinClient, setup := pinBench(b, serverPID)
	if nice != 0 {
		niceClient, how := niceBench(b, serverPID, nice)
		pinned := pinClient
		pinClient = func(inv load.Invocation) load.Invocation { return niceClient(pinned(inv)) }
		setup += ", " + how
	}
	meter := cpuMeter{serverPID: serverPID}
	// quiet waits at most quietWait for a 0.5 s with at most maxForeign/2 CPUs of foreign load.
	quietWait := time.Duration(envInt("MYSQLBENCH_BENCH_QUIET_WAIT", 5)) * time.Second
	quiet := func() time.Duration {
		t0 := time.Now()
		for time.Since(t0) < quietWait {
			a := meter.sample(b)
			time.Sleep(500 * time.Millisecond)
			if meter.sample(b).foreignSince(a) <= maxForeign/2 {
				break
			}
		}
		return time.Since(t0)
	}

	type runResult struct {
		qps, wallMs    float64
		foreign        float64 // CPUs of foreign load over the run
		startMs, endMs float64 // the snapshots' durationMs
	}
	runStep := func(serverStats bool, secs int) runResult {
		step := load.Step{Phase: load.PhaseRun, Threads: int32(threads), Duration: time.Duration(secs) * time.Second, ServerStats: serverStats}
		inv, err := Build(w, testSecret, step)
		if err != nil {
			b.Fatal(err)
		}
		before := meter.sample(b)
		r := c.run(b, pinClient(inv), secret)
		after := meter.sample(b)
		res := runResult{wallMs: after.wall.Sub(before.wall).Seconds() * 1000, foreign: after.foreignSince(before)}
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
		if serverStats {
			if out.Server[0].At != "start" || out.Server[1].At != "end" || len(out.Server[1].Waits) == 0 {
				b.Fatalf("snapshots %q, %q with %d waits: want start, end with the waits",
					out.Server[0].At, out.Server[1].At, len(out.Server[1].Waits))
			}
			res.startMs, res.endMs = out.Server[0].DurationMs, out.Server[1].DurationMs
		}
		res.qps = out.Final.QPS.Total
		if os.Getenv("MYSQLBENCH_BENCH_VERBOSE") == "1" {
			perSecond := make([]string, len(out.Intervals))
			for i, iv := range out.Intervals {
				perSecond[i] = strconv.FormatFloat(iv.QPS, 'f', 0, 64)
			}
			fmt.Printf("  run on=%v: QPS %.0f, per second %s, foreign %.2f CPUs\n", serverStats, res.qps,
				strings.Join(perSecond, " "), res.foreign)
		}
		return res
	}

	type block struct {
		on, off          [2]float64 // QPS
		ratio            float64
		wallDiffMs       float64 // (on walls - off walls)/2
		maxForeign       float64
		snapStart, snapE [2]float64
	}
	for range b.N {
		warmOn, warmOff := runStep(true, seconds), runStep(false, seconds)
		fmt.Printf("warm-up (discarded): QPS on %.0f, off %.0f\n", warmOn.qps, warmOff.qps)
		var all []block
		var waited time.Duration
		for i := range blocks {
			order := []bool{true, false, false, true}
			if i%2 == 1 {
				order = []bool{false, true, true, false}
			}
			waited += quiet()
			var bl block
			var nOn, nOff int
			for _, stats := range order {
				r := runStep(stats, seconds)
				bl.maxForeign = max(bl.maxForeign, r.foreign)
				if stats {
					bl.on[nOn], bl.snapStart[nOn], bl.snapE[nOn] = r.qps, r.startMs, r.endMs
					bl.wallDiffMs += r.wallMs / 2
					nOn++
				} else {
					bl.off[nOff] = r.qps
					bl.wallDiffMs -= r.wallMs / 2
					nOff++
				}
			}
			bl.ratio = (bl.on[0] + bl.on[1]) / (bl.off[0] + bl.off[1])
			all = append(all, bl)
			clean := "clean"
			if bl.maxForeign > maxForeign {
				clean = "NOT clean"
			}
			fmt.Printf("block %2d %s: QPS on %.0f %.0f, off %.0f %.0f, ratio %.4f; foreign load up to %.2f CPUs: %s\n",
				i+1, map[bool]string{false: "ABBA", true: "BAAB"}[i%2 == 1], bl.on[0], bl.on[1], bl.off[0], bl.off[1],
				bl.ratio, bl.maxForeign, clean)
		}
		fmt.Printf("%d pairs of %ds runs, %d-thread oltp_point_select on MariaDB with performance_schema and the synch "+
			"instruments; %s; %.0f s waited for quiet\n", 2*blocks, seconds, threads, setup, waited.Seconds())

		summarize := func(name string, bs []block) (mean, lo float64) {
			if len(bs) < 2 {
				fmt.Printf("%s: %d blocks, too few for an interval\n", name, len(bs))
				return math.NaN(), math.NaN()
			}
			var ratios, on, off []float64
			for _, bl := range bs {
				ratios, on, off = append(ratios, bl.ratio), append(on, bl.on[:]...), append(off, bl.off[:]...)
			}
			mean, sd := meanStddev(ratios)
			half := tQuantile975(len(ratios)-1) * sd / math.Sqrt(float64(len(ratios)))
			onMean, _ := meanStddev(on)
			offMean, _ := meanStddev(off)
			bootLo, bootHi := bootstrapRatioOfMeans(on, off)
			fmt.Printf("%s: on/off QPS ratio %.4f, 95%% CI [%.4f, %.4f] (mean of %d blocks' ratios, Student t); "+
				"ratio of mean QPS %.4f, 95%% CI [%.4f, %.4f] (percentile bootstrap over blocks); blocks' median %.4f, "+
				"min %.4f, max %.4f, sd %.4f; mean QPS on %.0f, off %.0f\n",
				name, mean, mean-half, mean+half, len(ratios), onMean/offMean, bootLo, bootHi, medianOf(ratios),
				slices.Min(ratios), slices.Max(ratios), sd, onMean, offMean)
			verdict := "NOT shown"
			if mean-half >= 0.99 {
				verdict = "shown"
			}
			fmt.Printf("%s: ratio ≥ 0.99 %s: the 95%% CI's lower bound is %.4f\n", name, verdict, mean-half)
			return mean, mean - half
		}
		var clean []block
		for _, bl := range all {
			if bl.maxForeign <= maxForeign {
				clean = append(clean, bl)
			}
		}
		mean, lo := summarize(fmt.Sprintf("all %d blocks", len(all)), all)
		b.ReportMetric(mean, "on/off")
		b.ReportMetric(lo, "ci95-low")
		mean, lo = summarize(fmt.Sprintf("%d clean blocks (foreign load ≤ %.2f CPUs)", len(clean), maxForeign), clean)
		b.ReportMetric(mean, "clean-on/off")
		b.ReportMetric(lo, "clean-ci95-low")

		var snapStart, snapEnd, wallDiff []float64
		for _, bl := range all {
			snapStart, snapEnd = append(snapStart, bl.snapStart[:]...), append(snapEnd, bl.snapE[:]...)
			wallDiff = append(wallDiff, bl.wallDiffMs)
		}
		startMean, _ := meanStddev(snapStart)
		endMean, _ := meanStddev(snapEnd)
		perStep := startMean + endMean
		wallMean, wallSD := meanStddev(wallDiff)
		wallHalf := tQuantile975(max(len(wallDiff)-1, 1)) * wallSD / math.Sqrt(float64(len(wallDiff)))
		b.ReportMetric(perStep, "snapshot-ms/step")
		fmt.Printf("snapshot wall time (reporter's durationMs, connecting included): start %.1f ms (max %.1f), "+
			"end %.1f ms (max %.1f); %.1f ms per step = %.4f%% of a 60 s step; measured step wall time on - off: "+
			"%.1f ms, 95%% CI [%.1f, %.1f] (Student t over blocks)\n",
			startMean, slices.Max(snapStart), endMean, slices.Max(snapEnd), perStep, perStep/600,
			wallMean, wallMean-wallHalf, wallMean+wallHalf)
	}
}

// cpuMeter measures the host's CPU time that is neither the server's, this test's nor its
// children's (sysbench, once waited for).
type cpuMeter struct{ serverPID string }

type cpuSample struct {
	wall                         time.Time
	busy, server, self, children float64 // CPU seconds
}

// clockTicks is USER_HZ, 100 on every Linux the benchmark runs on.
const clockTicks = 100

func (m cpuMeter) sample(b *testing.B) cpuSample {
	b.Helper()
	s := cpuSample{wall: time.Now()}
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		b.Fatal(err)
	}
	// cpu user nice system idle iowait irq softirq steal guest guest_nice (guest is in user)
	line, _, _ := strings.Cut(string(stat), "\n")
	f := strings.Fields(line)
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			b.Fatalf("/proc/stat %q: %v", line, err)
		}
		s.busy += v / clockTicks
	}
	pstat, err := os.ReadFile("/proc/" + m.serverPID + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	// After "(comm)": state is field 3, utime 14, stime 15.
	pf := strings.Fields(string(pstat[bytes.LastIndexByte(pstat, ')')+1:]))
	for _, i := range []int{11, 12} {
		v, err := strconv.ParseFloat(pf[i], 64)
		if err != nil {
			b.Fatalf("/proc/%s/stat: %v", m.serverPID, err)
		}
		s.server += v / clockTicks
	}
	var self, children syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		b.Fatal(err)
	}
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children); err != nil {
		b.Fatal(err)
	}
	s.self = tvSeconds(self.Utime) + tvSeconds(self.Stime)
	s.children = tvSeconds(children.Utime) + tvSeconds(children.Stime)
	return s
}

func tvSeconds(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }

// foreignSince is the foreign load between a and s, in CPUs (CPU seconds per second).
func (s cpuSample) foreignSince(a cpuSample) float64 {
	foreign := (s.busy - a.busy) - (s.server - a.server) - (s.self - a.self) - (s.children - a.children)
	return max(foreign, 0) / s.wall.Sub(a.wall).Seconds()
}

// niceBench renices every thread of the server (the threads it starts later inherit it) and
// returns what runs a sysbench step under nice, with a description.
func niceBench(b *testing.B, serverPID string, nice int) (func(load.Invocation) load.Invocation, string) {
	b.Helper()
	tasks, err := os.ReadDir("/proc/" + serverPID + "/task")
	if err != nil {
		b.Fatal(err)
	}
	args := []string{"-n", strconv.Itoa(nice), "-p"}
	for _, t := range tasks {
		args = append(args, t.Name())
	}
	if out, err := exec.Command("renice", args...).CombinedOutput(); err != nil {
		b.Fatalf("renice the server: %v: %s", err, out)
	}
	return func(inv load.Invocation) load.Invocation {
		inv.Command = append([]string{"nice", "-n", strconv.Itoa(nice)}, inv.Command...)
		return inv
	}, fmt.Sprintf("server and sysbench at nice %d", nice)
}

// pinBench pins the server and returns what pins a sysbench step (prefixing taskset to its
// command; the launcher's exec keeps the affinity), with a description. MYSQLBENCH_BENCH_PIN:
//
//   - same (the default): the server and sysbench on the first allowed CPU, this test process
//     (the harness) on the others, where the host's other load also goes. On the 2-vCPU VM this
//     was built on, it gave 4 times the QPS of split and a far steadier one: a ping-pong between
//     two vCPUs pays a wake-up through the hypervisor per query;
//   - split: the server on the first half of the CPUs, sysbench on the other half;
//   - 0: nothing pinned.
//
// Without taskset or with fewer than 2 CPUs nothing is pinned and the description says why.
func pinBench(b *testing.B, serverPID string) (func(load.Invocation) load.Invocation, string) {
	b.Helper()
	unpinned := func(why string) (func(load.Invocation) load.Invocation, string) {
		return func(inv load.Invocation) load.Invocation { return inv }, "unpinned (" + why + ")"
	}
	mode := os.Getenv("MYSQLBENCH_BENCH_PIN")
	switch mode {
	case "0":
		return unpinned("MYSQLBENCH_BENCH_PIN=0")
	case "", "same", "split":
	default:
		b.Fatalf("MYSQLBENCH_BENCH_PIN=%q: want same, split or 0", mode)
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		return unpinned("no taskset: install util-linux")
	}
	cpus, err := allowedCPUs()
	if err != nil {
		return unpinned(err.Error())
	}
	if len(cpus) < 2 {
		return unpinned(fmt.Sprintf("%d CPU allowed", len(cpus)))
	}
	var server, client, harness string
	if mode == "split" {
		server, client = cpuList(cpus[:len(cpus)/2]), cpuList(cpus[len(cpus)/2:])
	} else {
		server, client, harness = cpuList(cpus[:1]), cpuList(cpus[:1]), cpuList(cpus[1:])
	}
	// -a: every thread of the process; the threads it starts later inherit the affinity.
	if out, err := exec.Command(taskset, "-a", "-p", "-c", server, serverPID).CombinedOutput(); err != nil {
		return unpinned(fmt.Sprintf("taskset on the server: %v: %s", err, out))
	}
	desc := fmt.Sprintf("server pinned to CPU %s and sysbench to CPU %s of %d", server, client, len(cpus))
	if harness != "" {
		self := strconv.Itoa(os.Getpid())
		if out, err := exec.Command(taskset, "-a", "-p", "-c", harness, self).CombinedOutput(); err != nil {
			b.Fatalf("taskset on the test process: %v: %s", err, out)
		}
		desc += ", the test process to CPU " + harness
	}
	pin := func(inv load.Invocation) load.Invocation {
		inv.Command = append([]string{taskset, "-c", client}, inv.Command...)
		return inv
	}
	return pin, desc
}

// allowedCPUs are the CPUs this process may run on (Cpus_allowed_list), which its children
// inherit.
func allowedCPUs() ([]int, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil, err
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		list, ok := strings.CutPrefix(line, "Cpus_allowed_list:")
		if !ok {
			continue
		}
		var cpus []int
		for r := range strings.SplitSeq(strings.TrimSpace(list), ",") {
			first, last, isRange := strings.Cut(r, "-")
			lo, err := strconv.Atoi(first)
			if err != nil {
				return nil, fmt.Errorf("Cpus_allowed_list %q: %w", list, err)
			}
			hi := lo
			if isRange {
				if hi, err = strconv.Atoi(last); err != nil {
					return nil, fmt.Errorf("Cpus_allowed_list %q: %w", list, err)
				}
			}
			for cpu := lo; cpu <= hi; cpu++ {
				cpus = append(cpus, cpu)
			}
		}
		return cpus, nil
	}
	return nil, errors.New("no Cpus_allowed_list in /proc/self/status")
}

func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

func medianOf(xs []float64) float64 {
	sorted := slices.Sorted(slices.Values(xs))
	return (sorted[(len(sorted)-1)/2] + sorted[len(sorted)/2]) / 2
}

// t975 are Student's t distribution's 0.975 quantiles for 1..30 degrees of freedom.
var t975 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
	2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// tQuantile975 is Student's t 0.975 quantile for df degrees of freedom: the table up to 30, then
// the Cornish-Fisher expansion around the normal quantile (within 0.001 there).
func tQuantile975(df int) float64 {
	if df >= 1 && df <= len(t975) {
		return t975[df-1]
	}
	const z = 1.959964
	v := float64(df)
	return z + (z*z*z+z)/(4*v) + (5*math.Pow(z, 5)+16*z*z*z+3*z)/(96*v*v) +
		(3*math.Pow(z, 7)+19*math.Pow(z, 5)+17*z*z*z-15*z)/(384*v*v*v)
}

// bootstrapRatioOfMeans is a 95 % percentile bootstrap interval of sum(on)/sum(off), resampling
// whole blocks (block i holds on[2i:2i+2] and off[2i:2i+2]) 10000 times with a fixed seed.
func bootstrapRatioOfMeans(on, off []float64) (float64, float64) {
	n := len(on) / 2
	rng := rand.New(rand.NewPCG(18, 18))
	boot := make([]float64, 10000)
	for k := range boot {
		var sOn, sOff float64
		for range n {
			i := rng.IntN(n)
			sOn += on[2*i] + on[2*i+1]
			sOff += off[2*i] + off[2*i+1]
		}
		boot[k] = sOn / sOff
	}
	slices.Sort(boot)
	return boot[len(boot)*25/1000], boot[len(boot)*975/1000-1]
}
