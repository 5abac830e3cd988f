package run_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	runctrl "github.com/mysqlbench/mysqlbench-operator/controllers/run"
	"github.com/mysqlbench/mysqlbench-operator/internal/admission"
	"github.com/mysqlbench/mysqlbench-operator/internal/cachetrim"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	opmetrics "github.com/mysqlbench/mysqlbench-operator/internal/metrics"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// BenchmarkScale measures the operator at scale: it creates MYSQLBENCH_SCALE_RUNS BenchmarkRuns
// (default 200; MYSQLBENCH_SCALE_TARGETS builtin targets each, default 2; a 4-rung ladder, no
// warm-up) in one namespace, drives every one to Succeeded with a bulk fake kubelet, and reports
// the manager's API requests (counted on its own transport, so the kubelet's and the test's
// traffic is excluded), its reconciles (controller-runtime's reconcile_total metric) and the
// test process' heap, which holds the manager and also the fake kubelet and the test client.
//
// A "step" is one sysbench Job: per target the probe, the prepare and each ladder rung.
// MYSQLBENCH_SCALE_STRIP_MANAGED_FIELDS=1 measures the cache with managedFields stripped.
//
// Without MYSQLBENCH_SCALE_NODES the runs' servers share nodes (placement.database.exclusive:
// false), so nothing queues: every run is under way at once. With MYSQLBENCH_SCALE_NODES=N the
// benchmark creates N Ready nodes in a database pool of their own and the runs use it with
// exclusive placement (the default): every odd-numbered run is order Parallel (its targets take
// a node each at once, when the pool gives them), the others sequential, so at most N servers
// are up at once and the rest of the runs queue. It then also reports the pool queue's
// decisions (mysqlbench_queue_decision_seconds: how many per second of the scenario, their mean
// and p99) and checks that the pool was never over-committed: the fake kubelet counts the
// server StatefulSets that exist, in the order the API server recorded their creations and
// deletions, and fails the benchmark if more than N ever existed at once (the runs' active
// targets, sampled every second, are checked too).
//
//	KUBEBUILDER_ASSETS=... MYSQLBENCH_SCALE_RUNS=200 go test ./controllers -run '^$' -bench Scale -benchtime=1x -timeout 30m
//	KUBEBUILDER_ASSETS=... MYSQLBENCH_SCALE_RUNS=1000 MYSQLBENCH_SCALE_NODES=100 go test ./controllers -run '^$' -bench '^BenchmarkScale$' -benchtime=1x -timeout 90m
func BenchmarkScale(b *testing.B) {
	o := scaleOptions{
		runs:    envInt(b, "MYSQLBENCH_SCALE_RUNS", 200),
		targets: envInt(b, "MYSQLBENCH_SCALE_TARGETS", 2),
		nodes:   envInt(b, "MYSQLBENCH_SCALE_NODES", 0),
		threads: []int32{1, 2, 4, 8},
	}
	timeout := 10
	if o.nodes > 0 {
		timeout = 60 // the runs take turns
	}
	o.timeout = time.Duration(envInt(b, "MYSQLBENCH_SCALE_TIMEOUT_MINUTES", timeout)) * time.Minute
	if o.targets < 1 || o.targets > 2 || o.runs < 1 || o.nodes < 0 {
		b.Fatalf("MYSQLBENCH_SCALE_RUNS must be >= 1, MYSQLBENCH_SCALE_TARGETS 1 or 2 and MYSQLBENCH_SCALE_NODES >= 0")
	}
	var res scaleResult
	for i := 0; i < b.N; i++ {
		res = runScale(b, o)
	}
	b.ReportMetric(res.perStep(res.writes()), "writes/step")
	b.ReportMetric(res.perStep(float64(res.reconciles)), "reconciles/step")
	b.ReportMetric(mib(res.peakHeapInuse), "peak-heap-MiB")
	b.ReportMetric(mib(res.peakHeapInuse-res.baseHeapInuse)/float64(o.runs), "MiB/run")
	b.ReportMetric(res.elapsed.Seconds(), "s/scenario")
	if o.nodes > 0 {
		all := res.decisions.all()
		b.ReportMetric(float64(all.count)/res.elapsed.Seconds(), "decisions/s")
		b.ReportMetric(1000*all.mean(), "decision-mean-ms")
		b.ReportMetric(1000*all.quantile(0.99), "decision-p99-ms")
		b.ReportMetric(float64(res.peakServers), "peak-servers")
	}
}

// BenchmarkScaleLadderWrites measures the API writes one more ladder step costs: the same runs
// (MYSQLBENCH_SCALE_RUNS, default 20, two builtin targets) once with a 4-rung ladder and once with
// a 20-rung one; the difference in the manager's writes, divided by the extra ladder steps, is
// what a step costs beyond the fixed per-target work (server objects, probe, prepare, teardown).
// Issue #16 bounds it at 3 (the Job, the status write recording its result, and a share of the
// batched series write and Job deletion).
//
//	KUBEBUILDER_ASSETS=... go test ./controllers -run '^$' -bench ScaleLadderWrites -benchtime=1x -timeout 30m
func BenchmarkScaleLadderWrites(b *testing.B) {
	short := scaleOptions{
		runs:    envInt(b, "MYSQLBENCH_SCALE_RUNS", 20),
		targets: 2,
		threads: []int32{1, 2, 4, 8},
		timeout: 10 * time.Minute,
	}
	long := short
	long.threads = []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	var perStep float64
	for i := 0; i < b.N; i++ {
		a, c := runScale(b, short), runScale(b, long)
		extra := float64(c.ladderSteps - a.ladderSteps)
		perStep = (c.writes() - a.writes()) / extra
		b.Logf("ladder of %d: %.0f writes; ladder of %d: %.0f writes; %.0f more ladder steps cost %.2f writes each",
			len(short.threads), a.writes(), len(long.threads), c.writes(), extra, perStep)
	}
	b.ReportMetric(perStep, "writes/ladder-step")
}

type scaleOptions struct {
	runs, targets int
	// nodes is the size of the runs' own database pool; 0: no pool of their own, and the
	// runs' servers share nodes.
	nodes   int
	threads []int32
	timeout time.Duration
}

type scaleResult struct {
	o                            scaleOptions
	elapsed                      time.Duration
	requests                     map[requestKey]int
	reconciles                   float64
	reconcilesByResult           map[string]float64
	baseHeapAlloc, baseHeapInuse uint64
	peakHeapAlloc, peakHeapInuse uint64
	liveHeapAlloc                uint64 // after the runs finished, after a GC, manager still running
	vmHWM, vmRSSBase, vmRSSEnd   uint64
	retriedSteps, failedTargets  int
	steps, ladderSteps           int
	cached                       []cachedKind
	// The pool queue (with scaleOptions.nodes): its decisions by outcome, the reconciles' own
	// time for comparison, the most server StatefulSets that existed at once (the fake
	// kubelet's count), the most active targets and queued runs seen in the runs' statuses
	// (sampled every second), and the runs that did not succeed.
	decisions             histograms
	reconcileSeconds      float64
	peakServers           int
	peakActive, peakQueue int
	watchResets           int
	failedRuns            int
}

func (r scaleResult) perStep(v float64) float64 { return v / float64(r.steps) }

func (r scaleResult) writes() float64 {
	n := 0
	for k, c := range r.requests {
		if k.write() {
			n += c
		}
	}
	return float64(n)
}

func runScale(b *testing.B, o scaleOptions) scaleResult {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := scaleResult{o: o}
	res.steps = o.runs * o.targets * (2 + len(o.threads))
	res.ladderSteps = o.runs * o.targets * len(o.threads)

	nsLock.Lock()
	nsSeq++
	ns := fmt.Sprintf("scale-%d-%d", nsSeq, o.runs)
	nsLock.Unlock()
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	var pool string
	if o.nodes > 0 {
		pool = poolNodes(b, "scale", o.nodes)
	}

	// Baseline: the API server is up, the test's client exists, nothing of the operator yet.
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.baseHeapAlloc, res.baseHeapInuse = ms.HeapAlloc, ms.HeapInuse
	res.vmRSSBase = procStatus(b, "VmRSS")
	sampler := startHeapSampler()

	counter := &requestCounter{counts: map[requestKey]int{}}
	before := reconcileTotals(b)
	decisionsBefore := gatherHistograms(b, "mysqlbench_queue_decision_seconds", "", "")
	reconcileTimeBefore := gatherHistograms(b, "controller_runtime_reconcile_time_seconds", "controller", "benchmarkrun")
	mgrCancel, mgrDone, cached := startScaleOperator(b, ns, counter)
	kl := startBulkKubelet(b, ns)

	start := time.Now()
	for i := range o.runs {
		run := baseRun(ns, fmt.Sprintf("r%03d", i), o.threads...)
		run.Spec.Targets = run.Spec.Targets[:o.targets]
		if pool != "" {
			// Exclusive (the default) on a pool of their own: the runs queue for its nodes.
			run.Spec.Placement.Database.NodeSelector = map[string]string{specs.PoolLabel: pool}
			if i%2 == 1 {
				run.Spec.Order = v1.OrderParallel
			}
		} else {
			// Not queued for the envtest database pool's few nodes: the runs measure the
			// operator's cost of many runs at once, not the queue's order.
			run.Spec.Placement.Database.Exclusive = ptr.To(false)
		}
		if err := k8s.Create(ctx, run); err != nil {
			b.Fatal(err)
		}
	}
	runs, seen := waitAllFinished(b, ns, o, cached)
	res.elapsed = time.Since(start)
	res.peakActive, res.peakQueue = seen.active, seen.queued
	// Events are sent asynchronously by the recorder: wait until the manager's writes settle.
	counter.settle(2*time.Second, 30*time.Second)

	for _, run := range runs {
		if run.Status.Phase != v1.RunSucceeded {
			res.failedRuns++
		}
		for _, ts := range run.Status.Targets {
			if ts.Phase != v1.TargetSucceeded {
				res.failedTargets++
			}
			for _, s := range ts.Steps {
				if s.Attempts > 1 {
					res.retriedSteps++
				}
			}
		}
	}
	res.requests = counter.snapshot()
	after := reconcileTotals(b)
	res.decisions = gatherHistograms(b, "mysqlbench_queue_decision_seconds", "", "").minus(decisionsBefore)
	res.reconcileSeconds = gatherHistograms(b, "controller_runtime_reconcile_time_seconds", "controller", "benchmarkrun").
		minus(reconcileTimeBefore).all().sum
	res.reconcilesByResult = map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			res.reconcilesByResult[k] = d
			res.reconciles += d
		}
	}

	res.peakHeapAlloc, res.peakHeapInuse = sampler.stop()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	res.liveHeapAlloc = ms.HeapAlloc
	res.vmHWM = procStatus(b, "VmHWM")
	res.vmRSSEnd = procStatus(b, "VmRSS")
	// Measured after the heap figures: reading every object back would count in the peak.
	res.cached = cacheContents(b, ns)
	kl.stop()
	res.peakServers, res.watchResets = kl.peakServers()
	mgrCancel()
	if err := <-mgrDone; err != nil {
		b.Errorf("manager: %v", err)
	}
	if kl.errors.Load() > 0 {
		b.Logf("fake kubelet: %d transient errors (retried)", kl.errors.Load())
	}

	res.print()
	if res.failedTargets > 0 || res.failedRuns > 0 {
		b.Errorf("%d runs and %d targets did not succeed", res.failedRuns, res.failedTargets)
	}
	if o.nodes > 0 && (res.peakServers > o.nodes || res.peakActive > o.nodes) {
		b.Errorf("the pool of %d nodes was over-committed: %d servers existed at once, %d targets were active at once",
			o.nodes, res.peakServers, res.peakActive)
	}
	return res
}

// startScaleOperator runs the manager as cmd/main.go wires it, on its own copy of the rest
// config whose transport counts every request, and with its logs discarded (thousands of
// "created sysbench job" lines would only slow the run down).
func startScaleOperator(b *testing.B, ns string, counter *requestCounter) (context.CancelFunc, chan error, client.Reader) {
	b.Helper()
	mcfg := rest.CopyConfig(cfg)
	mcfg.WrapTransport = counter.wrap
	cacheOpts := cachetrim.Options(cacheFor(ns))
	if os.Getenv("MYSQLBENCH_SCALE_STRIP_MANAGED_FIELDS") == "1" {
		// What-if: the cache without managedFields (the operator never reads them).
		cacheOpts.DefaultTransform = cache.TransformStripManagedFields()
	}
	mgr, err := ctrl.NewManager(mcfg, ctrl.Options{
		Scheme:     testenv.Scheme,
		Logger:     ctrl.Log.WithSink(nil),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      cacheOpts,
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		b.Fatal(err)
	}
	r, err := runctrl.New(runctrl.Dependencies{
		Client:          mgr.GetClient(),
		APIReader:       mgr.GetAPIReader(),
		Scheme:          mgr.GetScheme(),
		Recorder:        mgr.GetEventRecorderFor("mysqlbench-operator"),
		Engines:         engine.All(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetScheme()),
		Logs:            &fakeLogs{log: withServerSnapshots(b, captured(b, "run_point_select_t4.txt"))},
		Clock:           clock.RealClock{},
		AdmissionPolicy: &admission.Check{Reader: mgr.GetAPIReader()},
	}, runctrl.Options{SysbenchImage: "sysbench:test"})
	if err != nil {
		b.Fatal(err)
	}
	if err := r.SetupWithManager(mgr); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return cancel, done, mgr.GetCache()
}

// seenRuns is the most the runs' statuses showed at once: targets active (past Pending and not
// ended: each holds a server), and runs queued for a node.
type seenRuns struct{ active, queued int }

// waitAllFinished polls the runs until every one finished, or fails after the timeout with how
// far they got. It reads the manager's cache without copying (a List of the API server would
// decode every run in this process, whose heap the benchmark reports, and load the API server
// the manager shares).
func waitAllFinished(b *testing.B, ns string, o scaleOptions, cached client.Reader) ([]v1.BenchmarkRun, seenRuns) {
	b.Helper()
	deadline := time.Now().Add(o.timeout)
	var seen seenRuns
	for {
		list := &v1.BenchmarkRunList{}
		if err := cached.List(context.Background(), list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
			b.Fatal(err)
		}
		phases := map[v1.RunPhase]int{}
		done, active, queued := 0, 0, 0
		for i := range list.Items {
			run := &list.Items[i]
			phases[run.Status.Phase]++
			if finished(run) {
				done++
			}
			active += len(activeTargets(run))
			if c := apimeta.FindStatusCondition(run.Status.Conditions, v1.ConditionProgressing); c != nil && c.Reason == v1.ReasonQueued {
				queued++
			}
		}
		seen.active, seen.queued = max(seen.active, active), max(seen.queued, queued)
		if done == o.runs {
			return list.Items, seen // the cache's own objects: read them, never change them
		}
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d runs finished within %s; phases %v", done, o.runs, o.timeout, phases)
		}
		time.Sleep(time.Second)
	}
}

func (r scaleResult) print() {
	o := r.o
	var sb strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&sb, format+"\n", args...) }
	w("")
	w("BenchmarkScale: %d runs x %d builtin targets x (probe + prepare + %d ladder rungs), no warm-up: %d steps (%d ladder steps); all finished in %s",
		o.runs, o.targets, len(o.threads), r.steps, r.ladderSteps, r.elapsed.Round(time.Second))
	w("  a step is one sysbench Job; retried steps %d, failed targets %d", r.retriedSteps, r.failedTargets)
	w("")
	w("  manager API requests (its own transport; the fake kubelet and the test are not counted)")
	w("  %-8s %-28s %8s %8s %10s %10s %10s", "verb", "resource", "count", "failed", "/run", "/step", "/ladder")
	keys := make([]requestKey, 0, len(r.requests))
	for k := range r.requests {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].write() != keys[j].write() {
			return keys[i].write()
		}
		if keys[i].verb != keys[j].verb {
			return keys[i].verb < keys[j].verb
		}
		return keys[i].resource < keys[j].resource
	})
	type agg struct{ count, failed int }
	rows := map[[2]string]*agg{}
	var order [][2]string
	for _, k := range keys {
		id := [2]string{k.verb, k.resource}
		a, ok := rows[id]
		if !ok {
			a = &agg{}
			rows[id] = a
			order = append(order, id)
		}
		a.count += r.requests[k]
		if k.failed {
			a.failed += r.requests[k]
		}
	}
	var writes, failedWrites, reads int
	for _, id := range order {
		a := rows[id]
		w("  %-8s %-28s %8d %8d %10.2f %10.2f %10.2f", id[0], id[1], a.count, a.failed,
			float64(a.count)/float64(o.runs), float64(a.count)/float64(r.steps), float64(a.count)/float64(r.ladderSteps))
		if isWriteVerb(id[0]) {
			writes += a.count
			failedWrites += a.failed
		} else {
			reads += a.count
		}
	}
	w("  %-8s %-28s %8d %8d %10.2f %10.2f %10.2f", "WRITES", "(all)", writes, failedWrites,
		float64(writes)/float64(o.runs), float64(writes)/float64(r.steps), float64(writes)/float64(r.ladderSteps))
	w("  %-8s %-28s %8d %8s %10.2f %10.2f %10.2f", "READS", "(get/list/watch)", reads, "",
		float64(reads)/float64(o.runs), float64(reads)/float64(r.steps), float64(reads)/float64(r.ladderSteps))
	w("")
	results := make([]string, 0, len(r.reconcilesByResult))
	for k, v := range r.reconcilesByResult {
		results = append(results, fmt.Sprintf("%s=%.0f", k, v))
	}
	sort.Strings(results)
	w("  reconciles %.0f (%s): %.2f/run, %.2f/step, %.2f/ladder step", r.reconciles, strings.Join(results, " "),
		r.reconciles/float64(o.runs), r.reconciles/float64(r.steps), r.reconciles/float64(r.ladderSteps))
	w("")
	w("  memory of the test process (manager + fake kubelet + test client; etcd and kube-apiserver are other processes)")
	w("    heap baseline (after GC, before the manager)  HeapAlloc %7.1f MiB  HeapInuse %7.1f MiB", mib(r.baseHeapAlloc), mib(r.baseHeapInuse))
	w("    heap peak (sampled every 100 ms)               HeapAlloc %7.1f MiB  HeapInuse %7.1f MiB", mib(r.peakHeapAlloc), mib(r.peakHeapInuse))
	w("    peak - baseline                                HeapAlloc %7.1f MiB  HeapInuse %7.1f MiB  = %.3f MiB/run (HeapInuse)",
		mib(r.peakHeapAlloc-r.baseHeapAlloc), mib(r.peakHeapInuse-r.baseHeapInuse), mib(r.peakHeapInuse-r.baseHeapInuse)/float64(o.runs))
	w("    live heap at the end (after GC, manager up)    HeapAlloc %7.1f MiB  = %.3f MiB/run above baseline",
		mib(r.liveHeapAlloc), (mib(r.liveHeapAlloc)-mib(r.baseHeapAlloc))/float64(o.runs))
	w("    process VmHWM %.1f MiB, VmRSS %.1f MiB before the manager, %.1f MiB at the end",
		mib(r.vmHWM), mib(r.vmRSSBase), mib(r.vmRSSEnd))
	if o.nodes > 0 {
		all := r.decisions.all()
		w("")
		w("  pool queue: %d Ready nodes; every odd-numbered run order Parallel, the others sequential", o.nodes)
		w("    decisions %d in %s: %.1f/s (admitted %d, queued %d); mean %.3f ms, p50 %.3f ms, p99 %.3f ms (histogram buckets, interpolated)",
			all.count, r.elapsed.Round(time.Second), float64(all.count)/r.elapsed.Seconds(),
			r.decisions[opmetrics.QueueAdmitted].count, r.decisions[opmetrics.QueueQueued].count,
			1000*all.mean(), 1000*all.quantile(0.5), 1000*all.quantile(0.99))
		w("    the decisions took %.1f s of the reconciles' %.1f s (%.0f%%)", all.sum, r.reconcileSeconds,
			100*all.sum/max(r.reconcileSeconds, 1e-9))
		w("    at most %d server StatefulSets existed at once (fake kubelet, in the API server's order; %d watch restarts that reset the count);",
			r.peakServers, r.watchResets)
		w("    at most %d targets active and %d runs queued at once (run statuses sampled every second); runs not succeeded %d",
			r.peakActive, r.peakQueue, r.failedRuns)
	}
	w("")
	w("  what the manager's cache holds at the end (the same objects read back as JSON; decoded Go objects take roughly 2-3x)")
	w("  %-14s %8s %12s %14s %10s", "kind", "objects", "JSON MiB", "managedFields", "KiB/run")
	for _, c := range r.cached {
		w("  %-14s %8d %12.2f %13.0f%% %10.1f", c.kind, c.objects, mib(c.bytes),
			100*float64(c.managedFields)/float64(max(c.bytes, 1)), float64(c.bytes)/1024/float64(o.runs))
	}
	// Printed, not logged: the testing package cuts a benchmark's log to 10 lines without -v.
	fmt.Print(sb.String())
}
