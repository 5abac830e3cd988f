// Package metrics exports benchmark results and outcomes on the manager's metrics endpoint
// (controller-runtime's registry, served at /metrics).
//
// Label cardinality is bounded: the result gauges hold the newest run of each schedule (a new
// run's first step replaces the previous run's series) and each standalone run until it is
// deleted, so at most (schedules + standalone runs present) x targets (<= 16) x thread counts
// (<= 64) series per gauge; a server version changes only when the run does. The counters and
// histograms are labelled by namespace and schedule only (schedule="" for standalone runs), and
// a deleted schedule's series are removed; the queue's decision histogram by its outcome only.
// The start and completion timestamps hold one series per run present (two outcomes at most),
// removed with the run or its schedule, so that a dashboard can mark every retained run.
package metrics

import (
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
)

// Label names.
const (
	LabelNamespace     = "namespace"
	LabelSchedule      = "schedule"
	LabelRun           = "run"
	LabelTarget        = "target"
	LabelServerVersion = "server_version"
	LabelThreads       = "threads"
	// LabelWorkload names a step's workload in a run of several (spec.workloads, spec.preset):
	// their steps at one thread count are different series. Empty (no label, to Prometheus) for
	// a run of one spec.workload.
	LabelWorkload = "workload"
	LabelOutcome  = "outcome"
	LabelVerdict  = "verdict"
)

var resultLabels = []string{LabelNamespace, LabelSchedule, LabelRun, LabelTarget, LabelServerVersion, LabelThreads, LabelWorkload}

var (
	stepTPS = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mysqlbench_step_tps",
		Help: "Transactions (sysbench events) per second of the newest finished ladder step.",
	}, resultLabels)
	stepP95 = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mysqlbench_step_latency_p95_seconds",
		Help: "95th percentile latency of the newest finished ladder step.",
	}, resultLabels)
	runsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mysqlbench_runs_total",
		Help: "BenchmarkRuns finished, by outcome (succeeded, failed).",
	}, []string{LabelNamespace, LabelSchedule, LabelOutcome})
	stepDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "mysqlbench_step_duration_seconds",
		Help: "Wall time of a ladder step's Job, from its start to its finish (the configured step duration plus start-up; a Job started while the step before measured counts its wait for it).",
		// 5 s to ~5.7 h: steps run from seconds to hours.
		Buckets: prometheus.ExponentialBuckets(5, 2, 13),
	}, []string{LabelNamespace, LabelSchedule})
	regressedCells = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mysqlbench_schedule_regressed_cells",
		Help: "Cells (target x thread count) found regressed in a schedule's newest compared run by the comparison that decides: " +
			"its confirmation once Confirmed (0 while confirming and when not confirmed), or the comparison itself with confirmation off.",
	}, []string{LabelNamespace, LabelSchedule})
	regressedTargets = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mysqlbench_schedule_regressed_targets",
		Help: "Targets whose geometric mean over their cells regressed in a schedule's newest compared run, counted as " +
			"mysqlbench_schedule_regressed_cells is: only once a confirmation confirmed it (or with confirmation off).",
	}, []string{LabelNamespace, LabelSchedule})
	shiftedCells = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mysqlbench_schedule_shifted_cells",
		Help: "Cells whose median shifted for the worse across a schedule's retained runs (change points, not acknowledged).",
	}, []string{LabelNamespace, LabelSchedule})
	verdictCells = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mysqlbench_schedule_cells",
		Help: "Cells of a schedule's newest compared run by verdict (Regressed, Improved, NoChange, Inconclusive).",
	}, []string{LabelNamespace, LabelSchedule, LabelVerdict})
	comparedCells = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mysqlbench_schedule_compared_cells",
		Help: "Cells a schedule's newest compared run had in common with its baseline.",
	}, []string{LabelNamespace, LabelSchedule})
	resultsLost = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mysqlbench_results_lost_total",
		Help: "Deleted runs whose rows never reached the results database: their outbox finalizer was given up after " +
			"--results-outbox-timeout.",
	}, []string{LabelNamespace})
	confirmations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mysqlbench_schedule_confirmations_total",
		Help: "Regressions a schedule set out to confirm, by outcome (Confirmed, NotConfirmed, Inconclusive, Skipped, Failed).",
	}, []string{LabelNamespace, LabelSchedule, LabelOutcome})
	// The run timestamps are gauges rather than events so that a dashboard can place an
	// annotation at the time the value carries, however long after the run it is scraped.
	runStart = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mysqlbench_run_start_timestamp_seconds",
		Help: "Unix time in seconds at which a BenchmarkRun started.",
	}, []string{LabelNamespace, LabelSchedule, LabelRun})
	runCompletion = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mysqlbench_run_completion_timestamp_seconds",
		Help: "Unix time in seconds at which a BenchmarkRun finished, by outcome (succeeded, failed).",
	}, []string{LabelNamespace, LabelSchedule, LabelRun, LabelOutcome})
	queueDecision = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "mysqlbench_queue_decision_seconds",
		Help: "Time taken to decide whether a target whose server needs a node of its database pool to itself may start now " +
			"(reading the pool's nodes, runs and servers from the cache), by outcome (admitted, queued).",
		// 50 µs to ~1.6 s: a decision reads the cache only, and grows with the runs it holds.
		Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16),
	}, []string{LabelOutcome})
)

// Outcomes of a queue decision.
const (
	QueueAdmitted = "admitted"
	QueueQueued   = "queued"
)

// throughput are the gauges of the steps' primary figure, one per client metric (its
// load.Metric.Gauge: QPS for the clients that count queries, tpmC for go-tpc's), by gauge name:
// every registered client's from the start, so that /metrics lists them before any run; a
// client registered later (a test's) gets its own when its first step is recorded.
var (
	throughputMu sync.Mutex
	throughput   = map[string]*prometheus.GaugeVec{}
)

// throughputGauge is the gauge of metric m, registered with controller-runtime's registry the
// first time it is asked for.
func throughputGauge(m load.Metric) *prometheus.GaugeVec {
	throughputMu.Lock()
	defer throughputMu.Unlock()
	if g, ok := throughput[m.Gauge]; ok {
		return g
	}
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: m.Gauge, Help: m.GaugeHelp}, resultLabels)
	ctrlmetrics.Registry.MustRegister(g)
	throughput[m.Gauge] = g
	return g
}

// stepGauges are the result gauges of a step, all with resultLabels: what a newer run of a
// schedule, a deleted run and a deleted schedule remove together.
func stepGauges() []*prometheus.GaugeVec {
	throughputMu.Lock()
	defer throughputMu.Unlock()
	gauges := []*prometheus.GaugeVec{stepTPS, stepP95}
	for _, name := range slices.Sorted(maps.Keys(throughput)) {
		gauges = append(gauges, throughput[name])
	}
	return gauges
}

// runGauges are the per-run timestamps: kept for every run present, not only a schedule's newest.
var runGauges = []*prometheus.GaugeVec{runStart, runCompletion}

func init() {
	for _, c := range client.All() {
		throughputGauge(c.Capabilities().Metric)
	}
	ctrlmetrics.Registry.MustRegister(stepTPS, stepP95, runsTotal, stepDuration, regressedCells, regressedTargets, comparedCells, verdictCells, shiftedCells,
		confirmations, queueDecision, runStart, runCompletion, resultsLost)
}

var (
	mu sync.Mutex
	// shown is the run whose result series a schedule currently exports.
	shown = map[[2]string]string{}
)

// Schedule is the schedule a run belongs to, "" for a standalone run.
func Schedule(run *v1.BenchmarkRun) string { return run.Labels[v1.LabelSchedule] }

// RecordStep exports one finished step of run's target. A step that ran past its duration
// (StepResult.OverDuration) sets no result gauge: its rates are not comparable with the others',
// and a dashboard or alert reading the gauges cannot see the mark the status and report carry. A
// repetition's gauges keep the cell's previous repetition then.
func RecordStep(run *v1.BenchmarkRun, target, serverVersion string, step v1.StepResult) {
	sched := Schedule(run)
	recordStart(run, step.StartTime)
	if sched != "" {
		key := [2]string{run.Namespace, sched}
		mu.Lock()
		current := shown[key]
		switch {
		case current == run.Name:
		case run.Name < current:
			// An older run of the schedule still running (concurrencyPolicy Allow): the gauges
			// show the newest run; a schedule's run names sort by scheduled time.
			mu.Unlock()
			observeDuration(run, sched, step)
			return
		default:
			// A newer run of the schedule: its series replace the previous run's.
			for _, g := range stepGauges() {
				g.DeletePartialMatch(prometheus.Labels{LabelNamespace: run.Namespace, LabelSchedule: sched})
			}
			shown[key] = run.Name
		}
		mu.Unlock()
	}
	if step.OverDuration {
		observeDuration(run, sched, step)
		return
	}
	l := prometheus.Labels{
		LabelNamespace: run.Namespace, LabelSchedule: sched, LabelRun: run.Name, LabelTarget: target,
		LabelServerVersion: serverVersion, LabelThreads: strconv.Itoa(int(step.Threads)), LabelWorkload: step.Workload,
	}
	// The gauge of the client's metric: go-tpc counts no queries, so its throughput is tpmC, and
	// it exports no QPS series of zeros.
	throughputGauge(client.For(run.Spec.OrderedWorkloads()[0].Workload).Capabilities().Metric).With(l).Set(step.Throughput())
	stepTPS.With(l).Set(step.TPS)
	if step.Latency.P95Ms > 0 {
		stepP95.With(l).Set(step.Latency.P95Ms / 1000)
	}
	observeDuration(run, sched, step)
}

func observeDuration(run *v1.BenchmarkRun, sched string, step v1.StepResult) {
	if step.StartTime != nil && step.FinishTime != nil {
		stepDuration.WithLabelValues(run.Namespace, sched).Observe(step.FinishTime.Sub(step.StartTime.Time).Seconds())
	}
}

// RecordTransition exports what a status write of a run recorded, from the status before to the
// one written (after): new step results, a run that started (its outcome counters at 0) and a
// final outcome.
func RecordTransition(before, after *v1.BenchmarkRun) {
	steps := map[string]int{}
	for _, t := range before.Status.Targets {
		steps[t.Name] = len(t.Steps)
	}
	for _, t := range after.Status.Targets {
		for _, s := range t.Steps[min(steps[t.Name], len(t.Steps)):] {
			RecordStep(after, t.Name, t.ServerVersion, s)
		}
	}
	if p := after.Status.Phase; p != before.Status.Phase {
		if p.Finished() {
			RecordOutcome(after, p)
		} else {
			RecordRunStarted(after)
		}
	}
}

// RecordRunStarted makes the run's outcome counters exist, at 0 until a run ends: increase()
// and rate() cannot count the first sample of a series, so a counter that appeared at 1 with
// its first outcome would never show that outcome.
// It also exports the run's start time.
func RecordRunStarted(run *v1.BenchmarkRun) {
	for _, o := range []string{"succeeded", "failed"} {
		runsTotal.WithLabelValues(run.Namespace, Schedule(run), o).Add(0)
	}
	recordStart(run, nil)
}

// recordStart exports the time run started: its status.startTime, or for a run that has none
// (one that failed before starting) its creation, or failing both (an object built in memory,
// never stored) the start of its step, if any.
func recordStart(run *v1.BenchmarkRun, stepStart *metav1.Time) {
	var at time.Time
	switch {
	case run.Status.StartTime != nil:
		at = run.Status.StartTime.Time
	case !run.CreationTimestamp.IsZero():
		at = run.CreationTimestamp.Time
	case stepStart != nil:
		at = stepStart.Time
	default:
		return
	}
	runStart.WithLabelValues(run.Namespace, Schedule(run), run.Name).Set(unixSeconds(at))
}

// unixSeconds keeps milliseconds, the precision at which Grafana places an annotation: a stored
// metav1.Time has whole seconds, but a time taken from the clock does not.
func unixSeconds(t time.Time) float64 { return float64(t.UnixMilli()) / 1e3 }

// RecordOutcome counts a run that reached phase (Succeeded or Failed) and exports when it did:
// status.completionTime, or now for a run without one.
func RecordOutcome(run *v1.BenchmarkRun, phase v1.RunPhase) {
	outcome := "succeeded"
	if phase == v1.RunFailed {
		outcome = "failed"
	}
	RecordRunStarted(run) // a run that started before the manager did
	runsTotal.WithLabelValues(run.Namespace, Schedule(run), outcome).Inc()
	at := now()
	if run.Status.CompletionTime != nil {
		at = run.Status.CompletionTime.Time
	}
	runCompletion.WithLabelValues(run.Namespace, Schedule(run), run.Name, outcome).Set(unixSeconds(at))
}

// now is time.Now, replaced by tests.
var now = time.Now

// RecordComparison exports a schedule's newest comparison, cell by cell: what it found, confirmed
// or not (RecordRegressions exports what alarms).
func RecordComparison(namespace, schedule string, c v1.Comparison) {
	comparedCells.WithLabelValues(namespace, schedule).Set(float64(c.ComparedCells))
	for verdict, n := range map[v1.CellVerdict]int32{
		v1.CellRegressed: c.RegressedCells, v1.CellImproved: c.ImprovedCells,
		v1.CellNoChange: c.NoChangeCells, v1.CellInconclusive: c.InconclusiveCells,
	} {
		verdictCells.WithLabelValues(namespace, schedule, string(verdict)).Set(float64(n))
	}
}

// RecordRegressions exports the regressed targets and cells of a schedule's newest compared run
// that alarm: those of a confirmed regression (or of the comparison itself when it is not
// confirmed before alarming), 0 otherwise. Alerting on them pages only for what a confirmation
// found again.
func RecordRegressions(namespace, schedule string, targets, cells int32) {
	regressedTargets.WithLabelValues(namespace, schedule).Set(float64(targets))
	regressedCells.WithLabelValues(namespace, schedule).Set(float64(cells))
}

// RecordConfirmation counts a confirmation that ended with outcome (its final state).
func RecordConfirmation(namespace, schedule string, outcome v1.ConfirmationState) {
	confirmations.WithLabelValues(namespace, schedule, string(outcome)).Inc()
}

// RecordResultsLost counts a deleted run of namespace whose rows the results database never took.
func RecordResultsLost(namespace string) {
	resultsLost.WithLabelValues(namespace).Inc()
}

// ObserveQueueDecision records how long one decision of a pool's queue took and its outcome
// (QueueAdmitted, QueueQueued).
func ObserveQueueDecision(outcome string, took time.Duration) {
	queueDecision.WithLabelValues(outcome).Observe(took.Seconds())
}

// RecordHistory exports a schedule's change-point analysis.
func RecordHistory(namespace, schedule string, h v1.History) {
	shiftedCells.WithLabelValues(namespace, schedule).Set(float64(h.RegressedCells))
}

// ForgetRun removes the result series and timestamps of a deleted run.
func ForgetRun(namespace, name string) {
	for _, g := range append(runGauges, stepGauges()...) {
		g.DeletePartialMatch(prometheus.Labels{LabelNamespace: namespace, LabelRun: name})
	}
}

// ForgetSchedule removes every series of a deleted schedule.
func ForgetSchedule(namespace, name string) {
	l := prometheus.Labels{LabelNamespace: namespace, LabelSchedule: name}
	gauges := []*prometheus.GaugeVec{regressedCells, regressedTargets, comparedCells, verdictCells, shiftedCells}
	gauges = append(append(gauges, stepGauges()...), runGauges...)
	for _, g := range gauges {
		g.DeletePartialMatch(l)
	}
	runsTotal.DeletePartialMatch(l)
	confirmations.DeletePartialMatch(l)
	stepDuration.DeletePartialMatch(l)
	mu.Lock()
	delete(shown, [2]string{namespace, name})
	mu.Unlock()
}
