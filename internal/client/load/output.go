package load

import (
	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// Percentile is the latency percentile every step reports (v1alpha1.Latency has P95Ms).
const Percentile = 95

// Interval is one per-second report of a run: rates over the interval that just ended.
type Interval struct {
	// Time is the seconds since the run started, at the end of the interval.
	Time float64 `json:"time"`
	// Threads is the step's thread count.
	Threads int32 `json:"threads"`
	// ThreadsRunning is how many threads were still running (drops at the end of a run).
	ThreadsRunning int32 `json:"threadsRunning"`
	// TPS is transactions (sysbench events) per second.
	TPS float64 `json:"tps"`
	// QPS is all queries per second; ReadQPS, WriteQPS and OtherQPS split it.
	QPS      float64 `json:"qps"`
	ReadQPS  float64 `json:"readQps"`
	WriteQPS float64 `json:"writeQps"`
	OtherQPS float64 `json:"otherQps"`
	// LatencyPctMs is the interval's latency percentile (Percentile) in milliseconds.
	LatencyPctMs float64 `json:"latencyPctMs"`
	// ErrorsPerSec are ignored errors per second; ReconnectsPerSec reconnects per second.
	ErrorsPerSec     float64 `json:"errorsPerSec"`
	ReconnectsPerSec float64 `json:"reconnectsPerSec"`
}

// Counts are query counts by kind.
type Counts struct {
	Total int64 `json:"total"`
	Read  int64 `json:"read"`
	Write int64 `json:"write"`
	Other int64 `json:"other"`
}

// LatencyMs summarises event latency over a whole run, in milliseconds. Pct is the percentile
// named by Final.Percentile.
type LatencyMs struct {
	Min float64 `json:"min"`
	Avg float64 `json:"avg"`
	Pct float64 `json:"pct"`
	Max float64 `json:"max"`
	Sum float64 `json:"sum"`
}

// Final is a step's final report, in the form of the sysbench reporter's final line: the result
// of a run, or for prepare and cleanup the proof that the command completed (Command says which;
// only Threads, Tables and DurationSeconds are set then).
type Final struct {
	Version  int    `json:"version"`
	Command  string `json:"command"`
	Sysbench string `json:"sysbench,omitempty"`
	Threads  int32  `json:"threads"`
	// Tables is set for prepare and cleanup; for probe it is how many of the tables
	// sbtest1..sbtestN exist (N = the workload's tables).
	Tables     int32 `json:"tables,omitempty"`
	Percentile int32 `json:"percentile,omitempty"`
	// DurationSeconds is how long the client measured (for prepare and cleanup: whole seconds).
	DurationSeconds float64      `json:"durationSeconds"`
	Events          int64        `json:"events,omitempty"`
	TPS             float64      `json:"tps,omitempty"`
	QPS             v1alpha1.QPS `json:"qps"`
	Queries         Counts       `json:"queries"`
	LatencyMs       LatencyMs    `json:"latencyMs"`
	Errors          int64        `json:"errors"`
	Reconnects      int64        `json:"reconnects"`
	// Server is the server's VERSION(), reported by the probe command.
	Server string `json:"server,omitempty"`
}

// StepResult converts a run's final report to the status form, without times and attempts.
// Latency.P95Ms is only filled when the run measured the 95th percentile, as the clients' runs do.
func (f Final) StepResult() v1alpha1.StepResult {
	r := v1alpha1.StepResult{
		Threads: f.Threads,
		TPS:     f.TPS,
		QPS:     f.QPS,
		Latency: v1alpha1.Latency{
			MinMs: f.LatencyMs.Min,
			AvgMs: f.LatencyMs.Avg,
			MaxMs: f.LatencyMs.Max,
		},
		Errors:          f.Errors,
		Reconnects:      f.Reconnects,
		DurationSeconds: f.DurationSeconds,
	}
	if f.Percentile == Percentile {
		r.Latency.P95Ms = f.LatencyMs.Pct
	}
	return r
}

// Output is what a step's container printed, as far as the operator cares, within the caps of
// limits.go whatever the output holds.
type Output struct {
	// Intervals is the per-second series, in order: every report, or for an output with more
	// than MaxIntervals reports, means of IntervalsPerPoint consecutive reports (the last point
	// of fewer) whose Time, Threads and ThreadsRunning are their last report's.
	Intervals []Interval
	// IntervalsPerPoint is how many reports each point of Intervals averages: 1 (0 in an Output
	// not made by a parser) unless the output was downsampled while it was read.
	IntervalsPerPoint int
	// IntervalReports is how many interval reports the output held (len(Intervals) unless it
	// was downsampled; 0 in an Output not made by a parser).
	IntervalReports int
	// Final is the final report; nil when there was none (a failed step).
	Final *Final
	// Fatal are the client's error lines: for sysbench every "FATAL: ..." line, and the errors
	// it prints without that prefix ("invalid option: ...", "Unknown command: ...", "... does
	// not implement ..."). Everything else is human text and ignored. The error lines a server
	// snapshot caused (sysbench's MySQL driver prints every failed query) are not among them:
	// they never mean the step failed, and the snapshot's Errors say what went wrong. Those are
	// the lines between a snapshot's serverBegin and server line, and any before the start
	// snapshot's server line (the start of a log tail may have cut its serverBegin line off).
	Fatal []string
	// Server are the run's server snapshots (Step.ServerStats), in the order printed: normally
	// one at serverstats.AtStart and one at serverstats.AtEnd (serverstats.Pair picks them).
	Server []serverstats.Snapshot
	// ServerErrors say why a server line could not be read ("line 12: ..."). Snapshots are
	// extra information: a bad one neither fails the parser nor the step.
	ServerErrors []string

	// Detail is what a client other than sysbench read beyond Final (its own result type), for
	// its own step result; nil for sysbench.
	Detail any

	// fatalBytes is what Fatal's lines cost (AddFatal); serverLeftOut counts the snapshots past
	// MaxServerSnapshots.
	fatalBytes, serverLeftOut int
}
