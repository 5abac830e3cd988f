package load

import "slices"

// Metric names a client's primary measurement, as reports, charts, the metrics endpoint and the
// results database label it.
type Metric struct {
	// Name is the short label: "QPS", "tpmC".
	Name string
	// Unit is what one of it counts: "queries/s".
	Unit string
	// Axis is the label of a chart's axis of it: "queries per second".
	Axis string
	// Key is its name in the results database (runs.metric) and the plugin's --metric: "qps".
	Key string
	// Gauge is the metrics endpoint's gauge of a step's value of it, GaugeHelp that gauge's help
	// text. Clients that share a metric share its gauge.
	Gauge, GaugeHelp string
}

// QPS is the metric of the clients that count queries: all queries of a step over its duration.
var QPS = Metric{
	Name: "QPS", Unit: "queries/s", Axis: "queries per second", Key: "qps",
	Gauge: "mysqlbench_step_qps",
	GaugeHelp: "Queries per second of the newest finished ladder step, per schedule (or standalone run), target, " +
		"server version and thread count.",
}

// Capabilities are what a client does and measures: the controller plans a target's phases from
// them, the report and the plugin show only what the client reports.
type Capabilities struct {
	// PreparesData says that the ladder runs on tables a prepare step loads (unless
	// workload.skipPrepare) and that a restarted server may have lost; false: every step makes
	// its own, and a restarted server needs nothing prepared again.
	PreparesData bool
	// Metric is the client's primary measurement.
	Metric Metric
	// Transactions says that steps report transactions per second.
	Transactions bool
	// Percentiles are the latency percentiles steps report (v1alpha1.Latency); none: the client
	// measures no per-query latency.
	Percentiles []int
	// LatencyHeading is report.md's heading of the p95 latency table when the latency is not
	// every query's or transaction's (go-tpc's is the new-order transaction's); empty: "p95
	// latency (ms) by threads".
	LatencyHeading string
	// Series says that a ladder step's log holds a per-second series.
	Series bool
	// NoSeries, when set, says why no step has a per-second series, for the note under a
	// timeline that draws each step's own value flat; empty: a missing series was dropped or
	// never stored.
	NoSeries string
	// ServerSnapshots says that a ladder step can snapshot the server's counters before and
	// after its load (spec.serverStats).
	ServerSnapshots bool
	// FixedDuration says that a ladder step runs for ladder.stepDuration, so one that measured
	// for longer is flagged (sysbench.OverDuration); false: it runs until its work is done.
	FixedDuration bool
	// ReportNote, when set, is a sentence report.md adds under the metric's table: how the
	// client's metric is defined when it is not sysbench's, what it does not measure.
	ReportNote string
	// WaitsForServerLock says that a ladder step takes Step.ServerLock before its load starts
	// (outside its measured window) and holds it until its load has ended, so that the next
	// step's Job can be started while this one still measures.
	WaitsForServerLock bool
	// CommandNote says, under the plugin's printed command lines, where their $(VAR)s and the
	// password come from.
	CommandNote string
}

// Reports says whether steps report latency percentile p.
func (c Capabilities) Reports(p int) bool { return slices.Contains(c.Percentiles, p) }
