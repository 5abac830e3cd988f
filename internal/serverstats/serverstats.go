// Package serverstats is what a run step's server snapshots hold (Snapshot: the sysbench reporter
// reads the server's counters before the worker threads connect and after they disconnected, and
// prints each as a "server" line) and what the server did during the step (Delta): the deltas of
// a bounded counter set (StatusNames, InnoDBMetricNames) per second and per sysbench query, the
// gauges' end values, and the top wait events by wait time. It depends on nothing of the
// operator but bounded, so that the sysbench package, which reads the lines, can use it.
//
// Which counters a server has depends on its flavour (measured with the reporter's snapshots
// against MariaDB 10.11.19 and MySQL 9.7.4, both with their default configuration):
//   - MariaDB 10.11 lacks Innodb_rows_read/inserted/updated/deleted and
//     Innodb_redo_log_current_lsn; Rows_read, Handler_read_key and Innodb_lsn_current stand in.
//     Of InnoDBMetricNames it leaves disabled buffer_flush_batch_total_pages, trx_rw_commits,
//     trx_ro_commits, trx_nl_ro_commits, trx_rollbacks and dml_reads/inserts/updates/deletes.
//     performance_schema is OFF unless the server is started with it.
//   - MySQL 9.7 lacks Rows_read and Innodb_lsn_current. It leaves disabled
//     buffer_flush_batch_total_pages, buffer_LRU_batch_flush_total_pages, trx_rw_commits,
//     trx_ro_commits, trx_nl_ro_commits, trx_rollbacks and dml_reads. performance_schema is ON;
//     the synch wait instruments need performance-schema-instrument='wait/synch/%=ON'.
//
// Step.MissingStatus and Step.MissingInnoDBMetrics name what a step's server lacked, so a report
// can say so instead of showing zeros.
package serverstats

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Where a counter comes from (Counter.Source, Gauge.Source).
const (
	// SourceStatus is SHOW GLOBAL STATUS.
	SourceStatus = "status"
	// SourceInnoDBMetrics is information_schema.INNODB_METRICS.
	SourceInnoDBMetrics = "innodbMetrics"
)

// gauges are the names of the bounded set that are levels rather than counts since the server
// started: a step reports their value at the end.
var gauges = map[string]bool{
	"Threads_running":      true,
	"Threads_connected":    true,
	"trx_rseg_history_len": true,
}

// IsGauge reports whether name, of the bounded set, is a gauge: Threads_running,
// Threads_connected and trx_rseg_history_len (the purge backlog). Every other name is a counter.
func IsGauge(name string) bool { return gauges[name] }

// condWaits are left out of the top waits: a condition wait is a thread sleeping until it is
// signalled, mostly a background thread idling (MariaDB's timer thread alone waits a second per
// second on wait/synch/cond/mysys/COND_timer whatever the load), not contention.
const condWaits = "wait/synch/cond/"

// Counter is one counter's change over a step.
type Counter struct {
	// Source is SourceStatus or SourceInnoDBMetrics.
	Source string `json:"source"`
	// Name is the status variable or the InnoDB metric.
	Name string `json:"name"`
	// Delta is the end value minus the start value, exact.
	Delta uint64 `json:"delta"`
	// PerSecond is Delta over Step.Seconds.
	PerSecond float64 `json:"perSecond"`
	// PerQuery is Delta over Step.Queries, 0 when the step had no queries.
	PerQuery float64 `json:"perQuery"`
}

// Gauge is a gauge's value at the end of a step. The end snapshot is taken after the worker
// threads disconnected, so Threads_running and Threads_connected count the snapshot's own
// connection and whatever else is connected, not the step's concurrency (that is the step's
// thread count); trx_rseg_history_len is the purge backlog the step left.
type Gauge struct {
	Source string `json:"source"`
	Name   string `json:"name"`
	Value  uint64 `json:"value"`
}

// Wait is one wait event over a step.
type Wait struct {
	// Event is the performance_schema event name, e.g. wait/synch/mutex/innodb/buf_pool_mutex.
	Event string `json:"event"`
	// Count is how many waits were timed during the step.
	Count uint64 `json:"count"`
	// SumTimerWait is their total wait time in picoseconds, exact.
	SumTimerWait uint64 `json:"sumTimerWait"`
	// SecondsPerSecond is the wait time in seconds per second of the step: how many threads
	// were waiting on the event on average (the seed study's "17 s of wait per second at 512
	// threads" for the doublewrite mutex).
	SecondsPerSecond float64 `json:"secondsPerSecond"`
}

// Step is what the server did during one step.
type Step struct {
	// Seconds is the time between the two snapshots (their UnixTime), which PerSecond and
	// SecondsPerSecond are over. It is a little longer than what sysbench measured: it also holds
	// the worker threads connecting and preparing their statements, and the final report.
	Seconds float64 `json:"seconds"`
	// Queries is the step's total sysbench queries, which PerQuery is over.
	Queries float64 `json:"queries"`
	// Counters are the counters of the bounded set that both snapshots have, in the bounded
	// set's order (status first, then InnoDB metrics).
	Counters []Counter `json:"counters,omitempty"`
	// Gauges are the gauges of the bounded set at the end snapshot.
	Gauges []Gauge `json:"gauges,omitempty"`
	// PerformanceSchema is whether performance_schema was ON at both snapshots. When false
	// there are no waits, and a report should say "performance_schema is OFF".
	PerformanceSchema bool `json:"performanceSchema"`
	// Waits are the top wait events by wait time during the step, condition waits left out
	// (see condWaits), longest first; ties by count, then by name. Events that did not wait
	// during the step are left out too.
	Waits []Wait `json:"waits,omitempty"`
	// WaitsLeftOut say which wait events' totals went backwards during the step, left out of
	// Waits. performance_schema sums the table waits (wait/io/table/..., wait/lock/table/...)
	// over the tables it tracks and forgets a table's when it drops or evicts it, so those
	// totals can shrink while the server runs (measured on MariaDB 10.11 right after prepare);
	// a TRUNCATE of the summary table resets every event.
	WaitsLeftOut []string `json:"waitsLeftOut,omitempty"`
	// MissingStatus are names of StatusNames absent from a snapshot whose
	// status was read: the server's flavour or version lacks them.
	MissingStatus []string `json:"missingStatus,omitempty"`
	// MissingInnoDBMetrics are names of InnoDBMetricNames absent from a snapshot
	// whose metrics were read: the server lacks them or has them disabled.
	MissingInnoDBMetrics []string `json:"missingInnoDBMetrics,omitempty"`
	// Errors are the snapshots' own errors ("start: innodbMetrics: ... PROCESS privilege ..."):
	// why a section is missing.
	Errors []string `json:"errors,omitempty"`
	// CPU is the server container's CPU time during the step, from the kubelet (the
	// container's cgroup), when the operator could read it; CPUMissing says why not.
	CPU *CPU `json:"cpu,omitempty"`
	// CPUMissing says why CPU is absent, e.g. that the operator may not read the kubelet's
	// stats, or that the step was shorter than two of the kubelet's samples.
	CPUMissing string `json:"cpuMissing,omitempty"`
}

// CPU is a server container's CPU time over a step, from the kubelet's stats of the container
// (its cgroup's cumulative CPU usage, read by the kubelet with a timestamp). The operator polls
// every few seconds, not at the snapshots, so the usage is taken at the samples inside the
// snapshots' interval and, where a sample lies beyond an end, interpolated linearly to the
// snapshot's time (From, To are then the snapshots' times): PerSecond is CPU seconds per second
// between From and To, and PerQuery is PerSecond over the step's queries per second
// (Step.Queries / Step.Seconds), which is the CPU per query exactly when From and To are the
// snapshots' times.
type CPU struct {
	// Container is the server container the kubelet reported on, e.g. "mysql".
	Container string `json:"container"`
	// Seconds is the CPU time between the samples From and To.
	Seconds float64 `json:"seconds"`
	// From and To are the interval the CPU is over, in seconds since the epoch: the snapshots'
	// times where samples beyond them allowed interpolating, else the first and last sample's.
	From float64 `json:"from"`
	To   float64 `json:"to"`
	// Samples is how many kubelet samples fell inside the step (at least two).
	Samples int `json:"samples"`
	// PerSecond is Seconds / (To - From): cores busy on average.
	PerSecond float64 `json:"perSecond"`
	// PerQuery is CPU seconds per query: PerSecond / (Step.Queries / Step.Seconds); 0 when the
	// step had no queries.
	PerQuery float64 `json:"perQuery"`
}

// Pair picks a step's start and end snapshot from the reporter's server lines
// (load.Output.Server). It is an error unless there is exactly one of each, start first.
func Pair(snapshots []Snapshot) (start, end Snapshot, err error) {
	var starts, ends int
	for i, s := range snapshots {
		switch s.At {
		case AtStart:
			starts++
			start = s
			if ends > 0 {
				return start, end, fmt.Errorf("server snapshot %d is a start after an end", i+1)
			}
		case AtEnd:
			ends++
			end = s
		}
	}
	if starts != 1 || ends != 1 {
		return start, end, fmt.Errorf("%d start and %d end server snapshots, want one of each", starts, ends)
	}
	return start, end, nil
}

// Delta computes a step from its start and end snapshots; queries is the step's total sysbench
// queries (load.Final.Queries.Total) and topN how many wait events to keep (all when
// topN <= 0). A counter that went backwards means the server restarted or someone ran FLUSH
// STATUS (or innodb_monitor_reset) during the step: that is an error naming each, since no delta
// of the step can be trusted then. Wait events that went backwards are only left out
// (Step.WaitsLeftOut).
func Delta(start, end Snapshot, queries float64, topN int) (Step, error) {
	if start.At != AtStart || end.At != AtEnd {
		return Step{}, fmt.Errorf("server snapshots at %q and %q, want %q and %q",
			start.At, end.At, AtStart, AtEnd)
	}
	seconds := end.UnixTime - start.UnixTime
	if !(seconds > 0) {
		return Step{}, fmt.Errorf("the end server snapshot (unix time %.6f) is not after the start (%.6f)",
			end.UnixTime, start.UnixTime)
	}
	if math.IsNaN(queries) || math.IsInf(queries, 0) || queries < 0 {
		queries = 0
	}
	st := Step{
		Seconds:           seconds,
		Queries:           queries,
		PerformanceSchema: start.PerformanceSchema && end.PerformanceSchema,
	}
	for _, e := range start.Errors {
		st.Errors = append(st.Errors, "start: "+e)
	}
	for _, e := range end.Errors {
		st.Errors = append(st.Errors, "end: "+e)
	}

	var backwards []string
	section := func(source string, names []string, a, b map[string]uint64) []string {
		if a == nil || b == nil {
			return nil // not read; the snapshot's errors say why
		}
		var missing []string
		for _, name := range names {
			va, okA := a[name]
			vb, okB := b[name]
			switch {
			case !okA || !okB:
				missing = append(missing, name)
			case IsGauge(name):
				st.Gauges = append(st.Gauges, Gauge{Source: source, Name: name, Value: vb})
			case vb < va:
				backwards = append(backwards, fmt.Sprintf("%s %s from %d to %d", source, name, va, vb))
			default:
				d := vb - va
				c := Counter{Source: source, Name: name, Delta: d, PerSecond: float64(d) / seconds}
				if queries > 0 {
					c.PerQuery = float64(d) / queries
				}
				st.Counters = append(st.Counters, c)
			}
		}
		return missing
	}
	st.MissingStatus = section(SourceStatus, StatusNames, start.Status, end.Status)
	st.MissingInnoDBMetrics = section(SourceInnoDBMetrics, InnoDBMetricNames, start.InnoDBMetrics, end.InnoDBMetrics)

	if st.PerformanceSchema && start.Waits != nil && end.Waits != nil {
		waits, back := waitDeltas(start.Waits, end.Waits, seconds)
		if topN > 0 && len(waits) > topN {
			waits = waits[:topN]
		}
		st.Waits, st.WaitsLeftOut = waits, back
	}

	if len(backwards) > 0 {
		return Step{}, fmt.Errorf("server counters went backwards during the step (the server restarted, "+
			"or FLUSH STATUS ran): %s", strings.Join(backwards, "; "))
	}
	return st, nil
}

// waitDeltas returns every event's wait during the step, condition waits and events that did not
// wait left out, longest first, and what it says about the events whose totals went backwards.
func waitDeltas(start, end []WaitTotal, seconds float64) ([]Wait, []string) {
	before := make(map[string]WaitTotal, len(start))
	for _, w := range start {
		before[w.Event] = w
	}
	var out []Wait
	var backwards []string
	for _, w := range end {
		b := before[w.Event]
		delete(before, w.Event)
		if w.Count < b.Count || w.SumTimerWait < b.SumTimerWait {
			backwards = append(backwards, fmt.Sprintf("%s went from %d waits, %d ps to %d waits, %d ps",
				w.Event, b.Count, b.SumTimerWait, w.Count, w.SumTimerWait))
			continue
		}
		d := Wait{Event: w.Event, Count: w.Count - b.Count, SumTimerWait: w.SumTimerWait - b.SumTimerWait}
		if strings.HasPrefix(d.Event, condWaits) || (d.Count == 0 && d.SumTimerWait == 0) {
			continue
		}
		d.SecondsPerSecond = float64(d.SumTimerWait) / 1e12 / seconds
		out = append(out, d)
	}
	// The end snapshot lists every event that ever waited; one missing there was reset.
	for _, b := range before {
		backwards = append(backwards, fmt.Sprintf("%s went from %d waits to none", b.Event, b.Count))
	}
	slices.Sort(backwards)
	slices.SortFunc(out, func(a, b Wait) int {
		return cmp.Or(cmp.Compare(b.SumTimerWait, a.SumTimerWait), cmp.Compare(b.Count, a.Count),
			strings.Compare(a.Event, b.Event))
	})
	return out, backwards
}
