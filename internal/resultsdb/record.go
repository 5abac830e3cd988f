package resultsdb

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// Table is the rows one table holds for a run, in Columns' order.
type Table struct {
	Name    string
	Columns []string
	Rows    [][]any
}

// Record is everything one run stores: its row in runs, then its rows in the other tables.
// Build makes it; Store.Write replaces the run's rows with it.
type Record struct {
	// UID is the run's UID, the key of all its rows.
	UID string
	// Hash identifies the content: a write of a record whose hash the database holds for the run
	// already changes nothing.
	Hash string
	// Tables are runs first, then its children (the order a write inserts them in).
	Tables []Table
}

// Rows counts the record's rows over all tables.
func (r *Record) Rows() int {
	n := 0
	for _, t := range r.Tables {
		n += len(t.Rows)
	}
	return n
}

// Build turns a finished run (its object with status) and its results.json (nil when the run's
// results were never written: its steps then come from the status, without server counters) into
// a Record. It is pure: what the database holds for a run depends on these two only.
func Build(run *v1.BenchmarkRun, doc *results.Doc) (*Record, error) {
	if run.UID == "" {
		return nil, fmt.Errorf("run %s/%s has no UID: only a run read from the API server (or its export) can be stored",
			run.Namespace, run.Name)
	}
	uid := string(run.UID)
	spec, err := json.Marshal(run.Spec)
	if err != nil {
		return nil, fmt.Errorf("encode spec: %w", err)
	}
	docTargets := map[string]*results.Target{}
	if doc != nil {
		for i := range doc.Targets {
			docTargets[doc.Targets[i].Name] = &doc.Targets[i]
		}
	}
	b := builder{uid: uid}
	b.run(run, doc, string(spec))
	for i, ts := range run.Status.Targets {
		dt := docTargets[ts.Name]
		b.target(run, i, ts, dt)
		steps := ts.Steps
		var docSteps []results.Step
		if dt != nil && len(dt.Steps) == len(ts.Steps) {
			docSteps = dt.Steps
		}
		for seq, s := range steps {
			var server *serverstats.Step
			if docSteps != nil {
				st, ok, err := docSteps[seq].DecodedServer()
				if err != nil {
					return nil, fmt.Errorf("target %s step %d: server counters: %w", ts.Name, seq+1, err)
				}
				if ok {
					server = &st
				}
			}
			b.step(ts.Name, seq, s, server)
		}
		for _, c := range cells.Status(steps) {
			b.cell(ts.Name, c)
		}
	}
	if c := run.Status.Comparison; c != nil {
		b.comparison(run, c)
	}
	rec := &Record{UID: uid, Tables: b.tables()}
	h := sha256.New()
	if err := json.NewEncoder(h).Encode(rec.Tables); err != nil {
		return nil, fmt.Errorf("hash the record: %w", err)
	}
	rec.Hash = hex.EncodeToString(h.Sum(nil))
	// The hash and the time of storing are the last columns of runs, outside the hash.
	rec.Tables[0].Columns = append(rec.Tables[0].Columns, "content_hash")
	rec.Tables[0].Rows[0] = append(rec.Tables[0].Rows[0], rec.Hash)
	return rec, nil
}

// Table names, runs first: a write deletes the children in reverse and inserts in this order.
var tableOrder = []string{
	"runs", "targets", "steps", "cells", "step_counters", "step_gauges", "step_waits",
	"comparisons", "comparison_targets", "comparison_cells",
}

var columns = map[string][]string{
	"runs": {"uid", "namespace", "name", "schedule", "confirmation_of", "phase", "client", "workload", "metric",
		"tables_count", "table_size", "repetitions", "step_seconds", "warmup_seconds", "run_order", "server_instance",
		"start_time", "completion_time", "spec"},
	"targets": {"run_uid", "name", "position", "engine", "image", "image_digest", "server_version", "my_cnf", "phase",
		"message", "node", "start_time", "completion_time", "node_cpu_capacity", "node_memory_bytes", "node_kernel",
		"node_os_image", "node_architecture", "node_runtime", "node_instance_type", "node_zone", "server_restarts"},
	"steps": {"run_uid", "target", "seq", "repetition", "threads", "instance", "attempts", "tps", "qps", "qps_read",
		"qps_write", "qps_other", "latency_min_ms", "latency_avg_ms", "latency_p95_ms", "latency_max_ms", "errors",
		"reconnects", "duration_seconds", "over_duration", "tpmc", "start_time", "finish_time", "server_seconds",
		"server_queries", "performance_schema", "server_cpu_seconds", "server_cpu_per_second", "client_cpu_cores",
		"client_cpu_saturated", "workload"},
	"cells": {"run_uid", "target", "workload", "threads", "n", "noisy", "qps_median", "qps_ci_low", "qps_ci_high", "qps_cv",
		"qps_min", "qps_max", "tpmc_median", "tpmc_ci_low", "tpmc_ci_high", "tpmc_cv", "tpmc_min", "tpmc_max",
		"tps_median", "tps_cv", "p95_ms_median", "p95_ms_ci_low", "p95_ms_ci_high", "p95_ms_cv", "ci_confidence"},
	"step_counters": {"run_uid", "target", "seq", "source", "name", "delta", "per_second", "per_query"},
	"step_gauges":   {"run_uid", "target", "seq", "source", "name", "value"},
	"step_waits":    {"run_uid", "target", "seq", "event", "count", "sum_timer_wait", "seconds_per_second"},
	"comparisons": {"run_uid", "baseline", "verdict", "metric", "compared_cells", "regressed_cells", "improved_cells",
		"no_change_cells", "inconclusive_cells", "acknowledged_cells", "needed_repetitions", "qps_drop_percent",
		"p95_rise_percent", "alpha", "tests", "message", "regressed_status", "regressed_reason"},
	"comparison_targets": {"run_uid", "target", "workload", "cells", "verdict", "qps_ratio", "qps_low", "qps_high", "qps_p",
		"qps_q", "qps_verdict", "p95_ratio", "p95_low", "p95_high", "p95_p", "p95_q", "p95_verdict", "confidence"},
	"comparison_cells": {"run_uid", "target", "workload", "threads", "verdict", "acknowledged", "regressed", "baseline_qps", "qps",
		"qps_change_percent", "qps_p", "qps_q", "baseline_p95_ms", "p95_ms", "p95_change_percent"},
}

type builder struct {
	uid  string
	rows map[string][][]any
}

func (b *builder) add(table string, row ...any) {
	if len(row) != len(columns[table]) {
		panic(fmt.Sprintf("resultsdb: table %s: %d values for %d columns", table, len(row), len(columns[table])))
	}
	if b.rows == nil {
		b.rows = map[string][][]any{}
	}
	for i, v := range row {
		if s, ok := v.(string); ok {
			l, ok := limits[table][columns[table][i]]
			if !ok {
				panic(fmt.Sprintf("resultsdb: table %s: column %s holds a string but the migrations declare no string type for it",
					table, columns[table][i]))
			}
			row[i] = fit(s, l)
		}
	}
	b.rows[table] = append(b.rows[table], row)
}

func (b *builder) tables() []Table {
	out := make([]Table, 0, len(tableOrder))
	for _, name := range tableOrder {
		out = append(out, Table{Name: name, Columns: append([]string(nil), columns[name]...), Rows: b.rows[name]})
	}
	return out
}

func (b *builder) run(run *v1.BenchmarkRun, doc *results.Doc, spec string) {
	w := run.Spec.Workload
	if run.Spec.Suite() {
		// One client for every workload (the API's rule): the first one's names it.
		w = run.Spec.OrderedWorkloads()[0].Workload
	}
	c := loadclient.For(w)
	labels := c.RunLabels(w, doc)
	tables, tableSize := any(nil), any(nil)
	if labels.Tables != nil {
		tables = *labels.Tables
	}
	if labels.TableSize != nil {
		tableSize = *labels.TableSize
	}
	if run.Spec.Suite() {
		labels.Workload, tables, tableSize = suiteLabels(run.Spec, tables, tableSize)
	}
	metric := c.Capabilities().Metric.Key
	step, warmup := 0.0, 0.0
	if d := run.Spec.Ladder.StepDuration; d != nil {
		step = d.Seconds()
	}
	if d := run.Spec.Ladder.Warmup; d != nil {
		warmup = d.Seconds()
	}
	if doc != nil {
		step, warmup = doc.Ladder.StepDurationSeconds, doc.Ladder.WarmupSeconds
	}
	order := string(run.Spec.Order)
	if order == "" {
		order = string(v1.OrderSequential)
	}
	instance := "Shared"
	if run.Spec.InstancePerRepetition() {
		instance = string(v1.ServerInstancePerRepetition)
	}
	// confirmation_of is the run re-measured (LabelConfirms); LabelConfirmationOf names the schedule.
	b.add("runs", b.uid, run.Namespace, run.Name, null(scheduleOf(run)), null(run.Labels[v1.LabelConfirms]),
		string(run.Status.Phase), string(w.ClientOrDefault()), labels.Workload, metric, tables, tableSize, run.Spec.RepetitionsOrDefault(),
		step, warmup, order, instance, when(run.Status.StartTime), when(run.Status.CompletionTime), spec)
}

// suiteLabels are a run of several workloads' runs.workload, tables_count and table_size:
// "preset:<name>" or "workloads:<names in measuring order>", and the tables and their size when
// every workload has the same (else NULL: each cell's workload says which it measured).
func suiteLabels(spec v1.BenchmarkRunSpec, tables, tableSize any) (string, any, any) {
	ws := spec.OrderedWorkloads()
	names := make([]string, len(ws))
	for i, w := range ws {
		names[i] = w.Name
		if w.Tables != ws[0].Tables || w.TableSize != ws[0].TableSize {
			tables, tableSize = nil, nil
		}
	}
	if spec.Preset != nil {
		return "preset:" + string(spec.Preset.Name), tables, tableSize
	}
	return "workloads:" + strings.Join(names, ","), tables, tableSize
}

// scheduleOf is the schedule a run belongs to: its controlling BenchmarkSchedule, else the
// schedule label (a confirmation run carries its schedule's too).
func scheduleOf(run *v1.BenchmarkRun) string {
	if o := metav1.GetControllerOf(run); o != nil && o.Kind == "BenchmarkSchedule" && o.APIVersion == v1.GroupVersion.String() {
		return o.Name
	}
	return run.Labels[v1.LabelSchedule]
}

func (b *builder) target(run *v1.BenchmarkRun, position int, ts v1.TargetStatus, dt *results.Target) {
	engine, image, mycnf := "", "", ""
	for _, t := range run.Spec.Targets {
		if t.Name == ts.Name {
			engine, image = string(t.EngineOrDefault()), t.Image
		}
	}
	if dt != nil {
		if dt.Image != "" {
			image = dt.Image
		}
		mycnf = dt.MyCnf
	}
	var node, kernel, osImage, arch, runtime, itype, zone any
	var cpu, mem any
	if n := ts.Node; n != nil {
		node, kernel, osImage, arch = null(n.Name), null(n.KernelVersion), null(n.OSImage), null(n.Architecture)
		runtime, itype, zone = null(n.ContainerRuntime), null(n.InstanceType), null(n.Zone)
		if n.CPUCapacity != nil {
			cpu = n.CPUCapacity.AsApproximateFloat64()
		}
		if n.MemoryCapacity != nil {
			mem = n.MemoryCapacity.Value()
		}
	}
	b.add("targets", b.uid, ts.Name, position, engine, null(image), null(ts.ServerImageDigest), null(ts.ServerVersion),
		null(mycnf), string(ts.Phase), null(ts.Message), node, when(ts.StartTime), when(ts.CompletionTime),
		cpu, mem, kernel, osImage, arch, runtime, itype, zone, ts.ServerRestarts)
}

func (b *builder) step(target string, seq int, s v1.StepResult, server *serverstats.Step) {
	rep := s.Repetition
	if rep == 0 {
		rep = 1
	}
	var tpmc, clientCores, clientSaturated any
	if s.TPCC != nil {
		tpmc = s.TPCC.TpmC
	}
	if s.ClientCPU != nil {
		clientCores, clientSaturated = s.ClientCPU.Cores, s.ClientCPU.Saturated
	}
	var srvSeconds, srvQueries, pfs, cpuSeconds, cpuPerSecond any
	if server != nil {
		srvSeconds, srvQueries, pfs = server.Seconds, server.Queries, server.PerformanceSchema
		if server.CPU != nil {
			cpuSeconds, cpuPerSecond = server.CPU.Seconds, server.CPU.PerSecond
		}
	}
	b.add("steps", b.uid, target, seq, rep, s.Threads, nullInt(s.Instance), nullInt(s.Attempts), s.TPS, s.QPS.Total,
		s.QPS.Read, s.QPS.Write, s.QPS.Other, s.Latency.MinMs, s.Latency.AvgMs, s.Latency.P95Ms, s.Latency.MaxMs,
		s.Errors, s.Reconnects, s.DurationSeconds, s.OverDuration, tpmc, when(s.StartTime), when(s.FinishTime),
		srvSeconds, srvQueries, pfs, cpuSeconds, cpuPerSecond, clientCores, clientSaturated, s.Workload)
	if server == nil {
		return
	}
	for _, c := range server.Counters {
		b.add("step_counters", b.uid, target, seq, c.Source, c.Name, c.Delta, c.PerSecond, c.PerQuery)
	}
	for _, g := range server.Gauges {
		b.add("step_gauges", b.uid, target, seq, g.Source, g.Name, g.Value)
	}
	for _, w := range server.Waits {
		b.add("step_waits", b.uid, target, seq, w.Event, w.Count, w.SumTimerWait, w.SecondsPerSecond)
	}
}

func (b *builder) cell(target string, c v1.CellStats) {
	noisy := c.QPS.CV > cells.MaxCV || c.P95Ms.CV > cells.MaxCV
	qps := []any{nil, nil, nil, nil, nil, nil}
	tpmc := []any{nil, nil, nil, nil, nil, nil}
	if c.TpmC != nil {
		tpmc = metricValues(*c.TpmC)
		noisy = c.TpmC.CV > cells.MaxCV || c.P95Ms.CV > cells.MaxCV
	} else {
		qps = metricValues(c.QPS)
	}
	row := []any{b.uid, target, c.Workload, c.Threads, c.N, noisy}
	row = append(row, qps...)
	row = append(row, tpmc...)
	row = append(row, c.TPS.Median, c.TPS.CV, c.P95Ms.Median, c.P95Ms.CILow, c.P95Ms.CIHigh, c.P95Ms.CV,
		c.Throughput().CIConfidence)
	b.add("cells", row...)
}

func metricValues(m v1.MetricStats) []any {
	return []any{m.Median, m.CILow, m.CIHigh, m.CV, m.Min, m.Max}
}

func (b *builder) comparison(run *v1.BenchmarkRun, c *v1.Comparison) {
	metric := c.Metric
	if metric == "" {
		metric = "qps"
	}
	var regStatus, regReason any
	if cond := meta.FindStatusCondition(run.Status.Conditions, v1.ConditionRegressed); cond != nil {
		regStatus, regReason = string(cond.Status), cond.Reason
	}
	b.add("comparisons", b.uid, null(c.Baseline), string(c.Verdict), metric, c.ComparedCells, c.RegressedCells,
		c.ImprovedCells, c.NoChangeCells, c.InconclusiveCells, c.AcknowledgedCells, c.NeededRepetitions,
		c.QPSDropPercent, c.P95RisePercent, c.Alpha, c.Tests, null(c.Message), regStatus, regReason)
	for _, t := range c.Targets {
		b.add("comparison_targets", b.uid, t.Target, t.Workload, t.Cells, string(t.Verdict), t.QPSRatio, nullFloat(t.QPSLow),
			nullFloat(t.QPSHigh), nullFloat(t.QPSP), nullFloat(t.QPSQ), null(string(t.QPSVerdict)), nullFloat(t.P95Ratio),
			nullFloat(t.P95Low), nullFloat(t.P95High), nullFloat(t.P95P), nullFloat(t.P95Q), null(string(t.P95Verdict)),
			nullFloat(t.Confidence))
	}
	for _, w := range c.Worst {
		b.add("comparison_cells", b.uid, w.Target, w.Workload, w.Threads, string(w.Verdict), w.Acknowledged, w.Regressed,
			w.BaselineQPS, w.QPS, w.QPSChangePercent, nullFloat(w.QPSP), nullFloat(w.QPSQ), nullFloat(w.BaselineP95Ms),
			nullFloat(w.P95Ms), nullFloat(w.P95ChangePercent))
	}
}

// null is s, or SQL NULL when empty.
func null(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullInt(n int32) any {
	if n == 0 {
		return nil
	}
	return n
}

func nullFloat(f float64) any {
	if f == 0 {
		return nil
	}
	return f
}

// when is an API time as a UTC time.Time, or NULL.
func when(t *metav1.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return t.UTC().Truncate(time.Microsecond)
}
