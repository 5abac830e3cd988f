package v1alpha1

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults the CRD schema applies; the helpers below fall back to them for objects that did not
// come through the API server (tests, dry runs).
const (
	DefaultStepDuration   = time.Minute
	DefaultStepRetryLimit = 2
	// MaxDefaultWarmupThreads caps the warm-up's thread count when warmupThreads is unset.
	MaxDefaultWarmupThreads = 100
)

// StepDurationOrDefault is how long each step of the ladder runs.
func (l Ladder) StepDurationOrDefault() time.Duration {
	if l.StepDuration == nil || l.StepDuration.Duration <= 0 {
		return DefaultStepDuration
	}
	return l.StepDuration.Duration
}

// WarmupDuration is how long the warm-up runs; 0 means no warm-up.
func (l Ladder) WarmupDuration() time.Duration {
	if l.Warmup == nil || l.Warmup.Duration < 0 {
		return 0
	}
	return l.Warmup.Duration
}

// MaxThreads is the ladder's largest thread count.
func (l Ladder) MaxThreads() int32 {
	var m int32
	for _, t := range l.Threads {
		m = max(m, t)
	}
	return m
}

// WarmupThreadsOrDefault is the warm-up's thread count: warmupThreads, else the ladder's largest
// thread count capped at MaxDefaultWarmupThreads.
func (l Ladder) WarmupThreadsOrDefault() int32 {
	if l.WarmupThreads != nil && *l.WarmupThreads > 0 {
		return *l.WarmupThreads
	}
	return max(1, min(l.MaxThreads(), MaxDefaultWarmupThreads))
}

// PeakConnections is the most client connections the run opens at once against a server: the
// largest of the ladder and the warm-up.
func (l Ladder) PeakConnections() int32 {
	if l.WarmupDuration() > 0 {
		return max(l.MaxThreads(), l.WarmupThreadsOrDefault())
	}
	return l.MaxThreads()
}

// NetworkPolicyEnabled reports whether builtin targets' servers get a NetworkPolicy: unless
// spec.networkPolicy is Disabled (unset means the default, Enabled).
func (s BenchmarkRunSpec) NetworkPolicyEnabled() bool {
	return s.NetworkPolicy != NetworkPolicyDisabled
}

// RetryLimit is how many times a failed step is retried.
func (s BenchmarkRunSpec) RetryLimit() int32 {
	if s.StepRetryLimit == nil {
		return DefaultStepRetryLimit
	}
	return *s.StepRetryLimit
}

// RepetitionsOrDefault is how many times each target measures its ladder.
func (s BenchmarkRunSpec) RepetitionsOrDefault() int {
	if s.Repetitions == nil || *s.Repetitions < 1 {
		return 1
	}
	return int(*s.Repetitions)
}

// Interleaved says whether the run measures its targets in interleaved rounds (spec.order).
func (s BenchmarkRunSpec) Interleaved() bool { return s.Order == OrderInterleaved }

// Parallel says whether the run measures several targets at once, each on its own database node
// (spec.order Parallel).
func (s BenchmarkRunSpec) Parallel() bool { return s.Order == OrderParallel }

// ParallelismOrDefault is how many targets the run measures at once: spec.parallelism (every
// target when unset) for order Parallel, at most the number of targets; 1 for the other orders
// (Interleaved measures one step at a time too).
func (s BenchmarkRunSpec) ParallelismOrDefault() int {
	if !s.Parallel() {
		return 1
	}
	n := len(s.Targets)
	if s.Parallelism != nil {
		n = min(n, int(*s.Parallelism))
	}
	return max(n, 1)
}

// InstancePerRepetition says whether each repetition of a target measures a new server instance.
// Unset is Shared: a run alone gets no default, so a schedule can tell "unset" from a choice.
func (s BenchmarkRunSpec) InstancePerRepetition() bool {
	return s.ServerInstance == ServerInstancePerRepetition && s.RepetitionsOrDefault() > 1
}

// DefaultTopWaits is how many wait events a step keeps when spec.serverStats.topWaits is unset.
const DefaultTopWaits = 10

// ServerStatsEnabled says whether ladder steps record the server's counters and waits.
func (s BenchmarkRunSpec) ServerStatsEnabled() bool {
	return s.ServerStats == nil || s.ServerStats.Enabled == nil || *s.ServerStats.Enabled
}

// TopWaitsOrDefault is how many wait events each step keeps.
func (s BenchmarkRunSpec) TopWaitsOrDefault() int {
	if s.ServerStats == nil || s.ServerStats.TopWaits < 1 {
		return DefaultTopWaits
	}
	return int(s.ServerStats.TopWaits)
}

// StepCount is how many steps each target measures: every rung of every workload once per
// repetition.
func (s BenchmarkRunSpec) StepCount() int {
	return len(s.Ladder.Threads) * s.WorkloadCount() * s.RepetitionsOrDefault()
}

// LadderPosition is the i-th step (0-based, in measuring order) of a target: its rung (0-based
// index into ladder.threads) and repetition (1-based); StepPosition adds its workload.
func (s BenchmarkRunSpec) LadderPosition(i int) (rung int, repetition int32) {
	_, rung, repetition = s.StepPosition(i)
	return rung, repetition
}

// StepPosition is the i-th step (0-based, in measuring order) of a target: its workload (index
// into OrderedWorkloads), rung (0-based index into ladder.threads) and repetition (1-based).
// The steps are run as rounds, one per repetition; each round measures every workload's ladder
// in the workloads' order, so the repetitions of the workloads interleave instead of one
// workload's rounds all coming before the next one's. A ladder is ascending in odd rounds and
// descending in even ones (1 2 4 8, 8 4 2 1, 1 2 4 8, ...), so every rung's repetitions have
// the same mean position in time over each pair of rounds and a linear drift during the
// target's time shifts every rung alike instead of favouring the first rungs.
func (s BenchmarkRunSpec) StepPosition(i int) (workload, rung int, repetition int32) {
	n := len(s.Ladder.Threads)
	if n == 0 {
		return 0, 0, 1
	}
	perRound := n * s.WorkloadCount()
	round, inRound := i/perRound, i%perRound
	workload, pos := inRound/n, inRound%n
	if round%2 == 1 {
		pos = n - 1 - pos
	}
	return workload, pos, int32(round + 1)
}

// Suite says whether the run measures several named workloads (spec.workloads or spec.preset)
// rather than the one spec.workload.
func (s BenchmarkRunSpec) Suite() bool { return len(s.Workloads) > 0 || s.Preset != nil }

// WorkloadCount is how many workloads each target measures.
func (s BenchmarkRunSpec) WorkloadCount() int {
	switch {
	case s.Preset != nil:
		return len(presetScripts(s.Preset.Name))
	case len(s.Workloads) > 0:
		return len(s.Workloads)
	}
	return 1
}

// OrderedWorkloads are the workloads each target measures, in the order every round measures
// them: spec.workload alone (with no name), or spec.preset's suite in its published order, or
// spec.workloads with the workloads that read only first and those that write after them, each
// group in the order given. A read measured after a write would read data the write changed
// (rows deleted or added, secondary index values rewritten, InnoDB's undo history and page
// splits left behind), so its result would depend on the order; the published suites run their
// reads first for the same reason.
func (s BenchmarkRunSpec) OrderedWorkloads() []RunWorkload {
	switch {
	case s.Preset != nil:
		var out []RunWorkload
		for _, ps := range presetScripts(s.Preset.Name) {
			out = append(out, RunWorkload{Name: ps.name, Workload: Workload{
				Client: ClientSysbench, Script: ps.script, Tables: s.Preset.Tables, TableSize: s.Preset.TableSize,
				ExtraArgs: slices.Clone(s.Preset.ExtraArgs),
			}})
		}
		return out
	case len(s.Workloads) > 0:
		out := make([]RunWorkload, 0, len(s.Workloads))
		for _, writes := range []bool{false, true} {
			for _, n := range s.Workloads {
				if w := n.Spec(); w.Writes() == writes {
					out = append(out, RunWorkload{Name: n.Name, Workload: w})
				}
			}
		}
		return out
	}
	return []RunWorkload{{Workload: s.Workload}}
}

// WithWorkload is the spec as if w were its one spec.workload: what a client reads of a run
// when it builds, parses or checks one workload's steps.
func (s BenchmarkRunSpec) WithWorkload(w Workload) BenchmarkRunSpec {
	s.Workload = w
	return s
}

// CustomScript is the custom script of the run's workloads (one for all of them), nil when
// none has one.
func (s BenchmarkRunSpec) CustomScript() *ConfigMapKeySelector {
	for _, w := range s.OrderedWorkloads() {
		if w.CustomScript != nil {
			return w.CustomScript
		}
	}
	return nil
}

// WorkloadAt is the workload of step i (0-based, in measuring order) of a target.
func (s BenchmarkRunSpec) WorkloadAt(i int) RunWorkload {
	ws := s.OrderedWorkloads()
	w, _, _ := s.StepPosition(min(i, max(s.StepCount()-1, 0)))
	return ws[min(w, len(ws)-1)]
}

type presetScript struct {
	name   string
	script OLTPScript
}

// presetScripts are the workloads of a preset, in its order.
func presetScripts(name PresetName) []presetScript {
	if name != PresetSysbenchOLTPMicro {
		return nil
	}
	return []presetScript{
		{"point-select", "oltp_point_select"},
		{"random-points", "select_random_points"},
		{"random-ranges", "select_random_ranges"},
		{"read-only", "oltp_read_only"},
		{"read-write", "oltp_read_write"},
		{"write-only", "oltp_write_only"},
		{"update-index", "oltp_update_index"},
		{"update-non-index", "oltp_update_non_index"},
		{"insert", "oltp_insert"},
		{"delete", "oltp_delete"},
	}
}

// readOnlyScripts are the stock scripts that change no row.
var readOnlyScripts = []OLTPScript{"oltp_point_select", "oltp_read_only", "select_random_points", "select_random_ranges"}

// Writes says whether the workload may change the data a later workload reads: every stock
// sysbench script but the four read-only ones, a custom script (the operator cannot tell what it
// does), and go-tpc's TPC-C. mysqlslap never does: it creates, fills and drops a schema of its
// own at every step.
func (w Workload) Writes() bool {
	switch w.ClientOrDefault() {
	case ClientMysqlslap:
		return false
	case ClientSysbench:
		return w.CustomScript != nil || !slices.Contains(readOnlyScripts, w.Script)
	}
	return true
}

// prepareOptions are the sysbench options of the stock scripts (oltp_common.lua in 1.0.20) that
// change what prepare creates; every other option only changes what a run does.
var prepareOptions = []string{"auto_inc", "create_secondary", "secondary", "create_table_options", "mysql_storage_engine"}

// DataShape identifies the data the workload's prepare loads: workloads of one shape can measure
// one prepared data set. "" for a workload that prepares nothing (mysqlslap, skipPrepare).
// For the stock sysbench scripts every script's prepare is oltp_common's, so the shape is the
// tables, their size and the options that change the tables; a custom script prepares what it
// likes, so its shape is the script and all of its options.
func (w Workload) DataShape() string {
	if !w.Prepares() {
		return ""
	}
	if w.ClientOrDefault() == ClientGoTPC {
		return fmt.Sprintf("go-tpc warehouses=%d", w.TPCCOrDefault().Warehouses)
	}
	shape := fmt.Sprintf("sysbench tables=%d tableSize=%d", max(w.Tables, 1), cmp.Or(w.TableSize, 10000))
	if w.CustomScript != nil {
		return shape + " script=" + w.CustomScript.Name + "/" + w.CustomScript.Key + " " + strings.Join(w.ExtraArgs, " ")
	}
	for _, a := range w.ExtraArgs {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if slices.Contains(prepareOptions, strings.ReplaceAll(name, "-", "_")) {
			shape += " " + a
		}
	}
	return shape
}

// Fresh data: why a workload may get its data prepared again.
const (
	// FreshDataShape: the workload needs data of another shape than the one on the server.
	FreshDataShape = "its data has another shape"
	// FreshDataWritten: a workload before it wrote to the data.
	FreshDataWritten = "written by"
)

// FreshDataBefore says whether step i (0-based, in measuring order) of a target measures data
// prepared again just before it, and why ("" when not): at a change of workload, when the next
// workload needs data of another shape than the server holds, or when a workload that writes
// (Writes) has run on the data since it was prepared. A write workload deletes, adds or rewrites
// rows and leaves InnoDB's undo history and page splits behind, so any workload measured after
// it on the same data would measure the earlier one's leftovers too, and its result would depend
// on the order of the workloads; preparing the data again removes that dependence. Within one
// workload's own ladder nothing is prepared again, as with a single workload: its later steps
// follow its earlier ones in every run alike. A workload with skipPrepare (or mysqlslap, which
// loads its own data at every step) is never prepared for: its data is the user's.
func (s BenchmarkRunSpec) FreshDataBefore(i int) (bool, string) {
	if !s.Suite() || i <= 0 || i >= s.StepCount() {
		return false, ""
	}
	ws := s.OrderedWorkloads()
	shape := ""
	var writers []string
	prev := -1
	for j := 0; j <= i; j++ {
		wi, _, _ := s.StepPosition(j)
		w := ws[wi]
		if wi != prev && w.DataShape() != "" {
			switch {
			case j == 0:
				// The target's own prepare phase loads the first shape.
				shape = w.DataShape()
			case w.DataShape() != shape:
				if j == i {
					return true, FreshDataShape
				}
				shape, writers = w.DataShape(), nil
			case len(writers) > 0:
				if j == i {
					return true, FreshDataWritten + " " + strings.Join(writers, ", ")
				}
				writers = nil
			}
		}
		if wi != prev && w.Writes() && w.DataShape() == shape && !slices.Contains(writers, w.Name) {
			writers = append(writers, w.Name)
		}
		prev = wi
	}
	return false, ""
}

// RepetitionOrDefault is the step's repetition, 1 when unset (results from before repetitions).
func (r StepResult) RepetitionOrDefault() int32 {
	if r.Repetition < 1 {
		return 1
	}
	return r.Repetition
}

// EngineOrDefault is the target's engine, builtin when unset.
func (t Target) EngineOrDefault() Engine {
	if t.Engine == "" {
		return EngineBuiltin
	}
	return t.Engine
}

// IsExclusive says whether servers must be alone on their nodes (the default).
func (p DatabasePlacement) IsExclusive() bool { return p.Exclusive == nil || *p.Exclusive }

// Finished says whether the target reached a terminal phase.
func (p TargetPhase) Finished() bool { return p == TargetSucceeded || p == TargetFailed }

// ProxyOrDefault is the proxy of a Percona target: none when unset.
func (t Target) ProxyOrDefault() PerconaProxy {
	if t.Percona == nil || t.Percona.Proxy == "" {
		return PerconaProxyNone
	}
	return t.Percona.Proxy
}

// Defaults of a BenchmarkSchedule the CRD schema applies.
const (
	DefaultQPSDropPercent             = 5.0
	DefaultP95RisePercent             = 10.0
	DefaultSuccessfulRunsHistoryLimit = 14
	DefaultFailedRunsHistoryLimit     = 1
)

// QPSDropPercentOrDefault is the QPS drop beyond which a cell regressed.
func (p RegressionPolicy) QPSDropPercentOrDefault() float64 {
	if p.QPSDropPercent == nil {
		return DefaultQPSDropPercent
	}
	return *p.QPSDropPercent
}

// DefaultAlpha is the regression test's significance level when spec.regression.alpha is unset.
const DefaultAlpha = 0.05

// AlphaOrDefault is the significance level of the regression test.
func (p RegressionPolicy) AlphaOrDefault() float64 {
	if p.Alpha == nil || *p.Alpha <= 0 {
		return DefaultAlpha
	}
	return *p.Alpha
}

// P95RisePercentOrDefault is the p95 latency rise beyond which a cell regressed.
func (p RegressionPolicy) P95RisePercentOrDefault() float64 {
	if p.P95RisePercent == nil {
		return DefaultP95RisePercent
	}
	return *p.P95RisePercent
}

// DefaultRunToRunCVPercent is the between-run spread of a target's level assumed when neither
// the schedule's history nor the policy says otherwise. Derived from the local cluster's
// measurement (README, "A new server per repetition"): at one thread the QPS of repetitions on
// new server instances varied by CV 9.14 % (MySQL) and 7.05 % (MariaDB), on one instance by
// 3.78 % and 3.54 %; what instances add beyond the repetitions is sqrt(between² - within²),
// 8.3 % and 6.1 %. At 4 threads the shared machine's contention hid it (between below within).
// 6 is the smaller of the two one-thread figures, rounded down: a default a quiet dedicated
// cluster will beat (its history then replaces it), and below which the measured local
// cluster's nights would raise false alarms.
const DefaultRunToRunCVPercent = 6.0

// RunToRunCVPercentOrDefault is the between-run CV, in percent, a comparison allows for when it
// has no measured figure.
func (p RegressionPolicy) RunToRunCVPercentOrDefault() float64 {
	if p.RunToRunCVPercent == nil || *p.RunToRunCVPercent < 0 {
		return DefaultRunToRunCVPercent
	}
	return *p.RunToRunCVPercent
}

// ConcurrencyPolicyOrDefault is Forbid unless the spec says otherwise.
func (s BenchmarkScheduleSpec) ConcurrencyPolicyOrDefault() ConcurrencyPolicy {
	if s.ConcurrencyPolicy == "" {
		return ConcurrencyForbid
	}
	return s.ConcurrencyPolicy
}

// IsSuspended says whether new runs are stopped.
func (s BenchmarkScheduleSpec) IsSuspended() bool { return s.Suspend != nil && *s.Suspend }

// SuccessfulHistory is how many successful runs to keep (at least 1: the next baseline).
func (s BenchmarkScheduleSpec) SuccessfulHistory() int {
	if s.SuccessfulRunsHistoryLimit == nil {
		return DefaultSuccessfulRunsHistoryLimit
	}
	return max(1, int(*s.SuccessfulRunsHistoryLimit))
}

// FailedHistory is how many failed runs to keep.
func (s BenchmarkScheduleSpec) FailedHistory() int {
	if s.FailedRunsHistoryLimit == nil {
		return DefaultFailedRunsHistoryLimit
	}
	return max(0, int(*s.FailedRunsHistoryLimit))
}

// Finished says whether the run is done: Succeeded or Failed.
func (p RunPhase) Finished() bool { return p == RunSucceeded || p == RunFailed }

// ClientOrDefault is the workload's client, sysbench when unset (the API default).
func (w Workload) ClientOrDefault() WorkloadClient {
	if w.Client == "" {
		return ClientSysbench
	}
	return w.Client
}

// MysqlslapOrDefault is workload.mysqlslap with the API defaults filled in (queries 10000,
// iterations 1); loadType stays as given (the builder picks mixed unless args give --query).
func (w Workload) MysqlslapOrDefault() MysqlslapWorkload {
	var m MysqlslapWorkload
	if w.Mysqlslap != nil {
		m = *w.Mysqlslap.DeepCopy()
	}
	if m.Queries == 0 {
		m.Queries = 10000
	}
	if m.Iterations == 0 {
		m.Iterations = 1
	}
	return m
}

// Prepares says whether the operator loads data before the ladder (a prepare step): the sbtest
// tables with sysbench, TPC-C's warehouses with go-tpc, unless workload.skipPrepare; never with
// mysqlslap, which creates and drops its own schema at every step.
func (w Workload) Prepares() bool {
	c := w.ClientOrDefault()
	return (c == ClientSysbench || c == ClientGoTPC) && !w.SkipPrepare
}

// TPCCOrDefault is workload.tpcc with the defaults filled in: load threads the warehouses (at
// most 16), check and ignoreErrors true, the check's timeout 10 minutes plus 5 per warehouse,
// the image DefaultGoTPCImage.
func (w Workload) TPCCOrDefault() TPCCWorkload {
	var t TPCCWorkload
	if w.TPCC != nil {
		t = *w.TPCC.DeepCopy()
	}
	if t.Warehouses < 1 {
		t.Warehouses = 1
	}
	if t.LoadThreads == 0 {
		t.LoadThreads = min(t.Warehouses, 16)
	}
	if t.Check == nil {
		t.Check = ptrTo(true)
	}
	if t.IgnoreErrors == nil {
		t.IgnoreErrors = ptrTo(true)
	}
	if t.CheckTimeout == nil {
		t.CheckTimeout = &metav1.Duration{Duration: 10*time.Minute + time.Duration(t.Warehouses)*5*time.Minute}
	}
	if t.Image == "" {
		t.Image = DefaultGoTPCImage
	}
	return t
}

func ptrTo[T any](v T) *T { return &v }

// Throughput is a step's primary throughput figure, the one cells, comparisons and charts use:
// tpmC for a go-tpc step, total QPS otherwise.
func (s StepResult) Throughput() float64 {
	if s.TPCC != nil {
		return s.TPCC.TpmC
	}
	return s.QPS.Total
}

// Throughput is the statistics of a cell's primary throughput figure (StepResult.Throughput):
// TpmC when the cell's steps were go-tpc's, QPS otherwise.
func (c CellStats) Throughput() MetricStats {
	if c.TpmC != nil {
		return *c.TpmC
	}
	return c.QPS
}

// SetThroughput puts the statistics m of the primary throughput figure of a target's steps
// (StepResult.Throughput) where Throughput reads them: TpmC when the steps are go-tpc's, whose
// QPS is then zero (go-tpc counts no queries), QPS otherwise.
func (c *CellStats) SetThroughput(m MetricStats, steps []StepResult) {
	if slices.ContainsFunc(steps, func(s StepResult) bool { return s.TPCC != nil }) {
		c.TpmC, c.QPS = &m, MetricStats{}
		return
	}
	c.QPS = m
}

// DefaultMysqlslapLoadType is the SQL mysqlslap generates when loadType is unset and args give no
// --query.
const DefaultMysqlslapLoadType MysqlslapLoadType = "mixed"

// GeneratesSQL says whether mysqlslap generates its SQL (--auto-generate-sql): unless args give
// --query (the user's SQL).
func (m MysqlslapWorkload) GeneratesSQL() bool {
	for _, a := range m.Args {
		if a == "--query" || strings.HasPrefix(a, "--query=") {
			return false
		}
	}
	return true
}

// LoadTypeOrDefault is the SQL mysqlslap generates: loadType, else mixed; "" when args give
// --query.
func (m MysqlslapWorkload) LoadTypeOrDefault() MysqlslapLoadType {
	switch {
	case !m.GeneratesSQL():
		return ""
	case m.LoadType == "":
		return DefaultMysqlslapLoadType
	}
	return m.LoadType
}
