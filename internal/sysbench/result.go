package sysbench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// FormatVersion is the version of the reporter's JSON lines this package reads.
const FormatVersion = 1

// Record types of the reporter's JSON lines.
const (
	recordInterval = "interval"
	recordFinal    = "final"
	recordServer   = "server"
	// recordServerBegin opens a server snapshot: every error line until its server line is the
	// snapshot's (sysbench runs nothing else then).
	recordServerBegin = "serverBegin"
)

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

// Final is the reporter's final line: the result of a run, or for prepare and cleanup the proof
// that the command completed (Command says which; only Threads, Tables and DurationSeconds are
// set then).
type Final struct {
	Version  int    `json:"version"`
	Command  string `json:"command"`
	Sysbench string `json:"sysbench,omitempty"`
	Threads  int32  `json:"threads"`
	// Tables is set for prepare and cleanup; for probe it is how many of the tables
	// sbtest1..sbtestN exist (N = the workload's tables).
	Tables     int32 `json:"tables,omitempty"`
	Percentile int32 `json:"percentile,omitempty"`
	// DurationSeconds is how long sysbench measured (for prepare and cleanup: whole seconds).
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
// Latency.P95Ms is only filled when the run measured the 95th percentile, as Build's runs do.
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

// Output is what a sysbench container printed, as far as the operator cares, within the caps
// of limits.go whatever the output holds.
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
	// Fatal are sysbench's error lines: every "FATAL: ..." line, and the errors sysbench prints
	// without that prefix ("invalid option: ...", "Unknown command: ...", "... does not
	// implement ..."). Everything else is human text and ignored. The error lines a server
	// snapshot caused (sysbench's MySQL driver prints every failed query) are not among them:
	// they never mean the step failed, and the snapshot's Errors say what went wrong. Those are
	// the lines between a snapshot's serverBegin and server line, and any before the start
	// snapshot's server line (the start of a log tail may have cut its serverBegin line off).
	Fatal []string
	// Server are the run's server snapshots (Step.ServerStats), in the order printed: normally
	// one at serverstats.AtStart and one at serverstats.AtEnd (serverstats.Pair picks them).
	Server []ServerSnapshot
	// ServerErrors say why a server line could not be read ("line 12: ..."). Snapshots are
	// extra information: a bad one neither fails ParseOutput nor the step.
	ServerErrors []string

	// Detail is what a client other than sysbench read beyond Final (its own result type), for
	// its own step result; nil for sysbench.
	Detail any

	// fatalBytes is what Fatal's lines cost (AddFatal); serverLeftOut counts the snapshots past
	// MaxServerSnapshots.
	fatalBytes, serverLeftOut int
}

// maxLine bounds one line of output; a FATAL line quoting a multi-kilobyte query must not abort
// parsing (longer lines are cut).
const maxLine = 1 << 20

// ParseOutput reads a sysbench container's output: a Pod log, its stdout, or a termination
// message that the kubelet filled from the log tail (FallbackToLogsOnError). JSON lines of the
// reporter become Intervals and Final; error lines are kept in Fatal; other text is ignored. A
// malformed reporter line is an error, since it means the contract is broken.
func ParseOutput(r io.Reader) (Output, error) {
	var p parser
	err := EachLine(r, "sysbench", p.addLine)
	if err == nil {
		p.endSnapshot(true)
	}
	p.series.finish(&p.out)
	return p.out, err
}

// EachLine calls add with every line of a client's output (without its newline, cut to maxLine
// bytes, numbered from 1) until add fails or the output ends; client names the output in a read
// error. mysqlslap's parser reads its container's output the same way.
func EachLine(r io.Reader, client string, add func(line string, lineNo int) error) error {
	br := bufio.NewReaderSize(r, 64*1024)
	lineNo := 0
	for {
		line, err := readLine(br)
		if len(line) > 0 || err == nil {
			lineNo++
			if perr := add(line, lineNo); perr != nil {
				return fmt.Errorf("line %d: %w", lineNo, perr)
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s output: %w", client, err)
		}
	}
}

// parser builds an Output line by line.
type parser struct {
	out    Output
	series series
	// inSnapshot is true between a serverBegin line and the next server line; held are the
	// error lines seen meanwhile (within the same caps as Output.Fatal), heldBytes their cost.
	inSnapshot bool
	held       []string
	heldBytes  int
}

// endSnapshot closes a snapshot's window. Its error lines are dropped when the snapshot printed
// its line, and kept as the step's when it did not (sysbench died during it).
func (p *parser) endSnapshot(keep bool) {
	if keep {
		for _, line := range p.held {
			p.out.AddFatal(line)
		}
	}
	p.inSnapshot, p.held, p.heldBytes = false, nil, 0
}

// readLine returns the next line without its newline, cut to maxLine bytes.
func readLine(br *bufio.Reader) (string, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf) < maxLine {
			buf = append(buf, chunk[:min(len(chunk), maxLine-len(buf))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return strings.TrimRight(string(buf), "\r\n"), err
	}
}

func (p *parser) addLine(line string, lineNo int) error {
	trimmed := strings.TrimSpace(line)
	switch {
	case strings.HasPrefix(trimmed, "{"):
		return p.addRecord([]byte(trimmed), lineNo)
	case strings.HasPrefix(trimmed, "FATAL:"),
		strings.HasPrefix(trimmed, "invalid option"),
		strings.HasPrefix(trimmed, "Unknown command:"),
		strings.Contains(trimmed, "does not implement the"):
		if p.inSnapshot {
			p.held, p.heldBytes = addLine(p.held, p.heldBytes, trimmed)
		} else {
			p.out.AddFatal(trimmed)
		}
	}
	return nil
}

// addRecord decodes one JSON line. Lines whose type this package does not know (another
// wrapper's output) are ignored like any other text: they are not the contract.
func (p *parser) addRecord(line []byte, lineNo int) error {
	o := &p.out
	var head struct {
		Type    string `json:"type"`
		Version int    `json:"version"`
		At      string `json:"at"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		// Not JSON after all (e.g. a Lua table printed by a custom script): human text.
		return nil
	}
	switch head.Type {
	case recordInterval:
		p.endSnapshot(true)
		var iv Interval
		if err := json.Unmarshal(line, &iv); err != nil {
			return fmt.Errorf("reporter interval: %w", err)
		}
		p.series.add(iv)
	case recordFinal:
		p.endSnapshot(true)
		f, err := decodeFinal(line)
		if err != nil {
			return err
		}
		o.Final = f
	case recordServerBegin:
		p.endSnapshot(true)
		p.inSnapshot = true
	case recordServer:
		p.endSnapshot(false)
		if head.At == serverstats.AtStart {
			// Nothing but the snapshot prints an error line before it.
			o.clearFatal()
		}
		s, err := decodeServer(line)
		if err != nil {
			o.AddServerError(fmt.Sprintf("line %d: %v", lineNo, err))
			return nil
		}
		o.AddServer(s)
	}
	return nil
}

func decodeFinal(line []byte) (*Final, error) {
	var f Final
	if err := json.Unmarshal(line, &f); err != nil {
		return nil, fmt.Errorf("reporter final: %w", err)
	}
	if f.Version != FormatVersion {
		return nil, fmt.Errorf("reporter final: format version %d, this operator reads %d "+
			"(the reporter ConfigMap and the operator are out of step)", f.Version, FormatVersion)
	}
	if f.Command == "" {
		return nil, fmt.Errorf("reporter final: no command")
	}
	return &f, nil
}

// ParseTerminationMessage reads a step's final result from its container's termination message
// (the reporter writes its final line there). It is an error when the message holds no final
// report, e.g. when the kubelet filled it from the log tail of a failed container; read that
// with ParseOutput and Classify.
func ParseTerminationMessage(msg string) (*Final, error) {
	out, err := ParseOutput(strings.NewReader(msg))
	if err != nil {
		return nil, fmt.Errorf("termination message: %w", err)
	}
	if out.Final == nil {
		return nil, errors.New("termination message holds no final sysbench report")
	}
	return out.Final, nil
}

// ServerSnapshot is one "server" line of the reporter: the server's counters at the start or the
// end of a run step (Step.ServerStats). The type lives in serverstats, which turns two of them
// into a step's deltas and must not depend on this package.
type ServerSnapshot = serverstats.Snapshot

func decodeServer(line []byte) (ServerSnapshot, error) {
	var s ServerSnapshot
	if err := json.Unmarshal(line, &s); err != nil {
		return ServerSnapshot{}, fmt.Errorf("reporter server snapshot: %w", err)
	}
	if s.Version != FormatVersion {
		return ServerSnapshot{}, fmt.Errorf("reporter server snapshot: format version %d, this operator reads %d",
			s.Version, FormatVersion)
	}
	if s.At != serverstats.AtStart && s.At != serverstats.AtEnd {
		return ServerSnapshot{}, fmt.Errorf("reporter server snapshot: at %q, want %q or %q",
			s.At, serverstats.AtStart, serverstats.AtEnd)
	}
	return s, nil
}
