// Package steplog reads what a finished step's log gives its results: the per-second series,
// encoded to the step's share of the results ConfigMap, and what the server did between the
// step's snapshots. The log holds whatever the step's container printed, and the manager that
// reads it serves every tenant with one memory limit, so it is read as a stream, at most
// MaxBytes of it, and what the parsers keep of it is capped (sysbench's limits.go, serverstats'
// Bound): any log costs a bounded heap, and one past the caps is refused with a reason.
package steplog

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// MaxBytes is the most of a step's log that is read. The reporter prints one interval line of
// about 210 bytes a second, so the longest step (24 h) logs about 18 MiB; a log past MaxBytes
// holds something else, and is not read.
const MaxBytes = 64 << 20

// Options say how to read a step's log.
type Options struct {
	// Parse reads the log: the step's client's parser (client.Client.Parse); nil reads the
	// sysbench reporter's lines.
	Parse func(io.Reader) (load.Output, error)
	// SeriesAbsent says that the client prints no per-second series: a log without one is no
	// reason to say so.
	SeriesAbsent bool
	// Budget is the encoded series' byte budget (report.SeriesBudget).
	Budget int
	// ServerStats says that the step took server snapshots (spec.serverStats).
	ServerStats bool
	// Iterations is how many times the step's final report's queries ran between its server
	// snapshots (client.Client.SnapshotRepeats: mysqlslap's iterations). 0 counts as 1.
	Iterations int
	// TopWaits is how many wait events a step keeps (spec.serverStats.topWaits).
	TopWaits int
}

// Step is what a step's log gives its results.
type Step struct {
	// Series is the per-second series encoded within Options.Budget, "" when there is none.
	Series string
	// NoSeries says why Series is "" for a sysbench step.
	NoSeries string
	// Server is what the server did between Start and End, without the CPU (the kubelet's, taken
	// between the snapshots' times); nil when the step took no snapshots or NoServer says why.
	Server     *serverstats.Step
	Start, End serverstats.Snapshot
	// NoServer says why Server is nil for a step that took server snapshots.
	NoServer string
}

// Read reads a step's log. It fails only when the log cannot be read at all: it is longer than
// MaxBytes, the stream broke, or it is not what the client prints (a malformed reporter line,
// two mysqlslap reports); the error says which, for the user.
func Read(log io.Reader, o Options) (Step, error) {
	parse := o.Parse
	if parse == nil {
		parse = sysbench.ParseOutput
	}
	out, err := parse(bounded.Reader(log, MaxBytes))
	if err != nil {
		if tl := (*bounded.TooLargeError)(nil); errors.As(err, &tl) {
			return Step{}, fmt.Errorf("the log is longer than %s, which no step's reports come near (a 24 h step's take "+
				"about 18 MiB): something else wrote to the step's output (a custom script?), so it is not read", bounded.Size(tl.Limit))
		}
		return Step{}, fmt.Errorf("the log is not the client's output: %w", err)
	}
	var st Step
	switch {
	case len(out.Intervals) > 0:
		if st.Series, err = report.EncodeOutput(out, o.Budget); err != nil {
			st.NoSeries = err.Error()
		}
	case !o.SeriesAbsent:
		st.NoSeries = "the log has no interval reports"
	}
	if o.ServerStats {
		st.server(out, o)
	}
	return st, nil
}

// server fills Server from the log's snapshots, or NoServer with why it cannot.
func (st *Step) server(out load.Output, o Options) {
	start, end, err := serverstats.Pair(out.Server)
	switch {
	case err != nil:
		st.NoServer = err.Error()
		if len(out.ServerErrors) > 0 {
			// Why the snapshots that are missing could not be read, or that there were too many.
			st.NoServer += " (" + strings.Join(out.ServerErrors, "; ") + ")"
		}
		return
	case out.Final == nil:
		st.NoServer = "the log has no final report"
		return
	}
	queries := float64(out.Final.Queries.Total) * float64(max(o.Iterations, 1))
	step, err := serverstats.Delta(start, end, queries, o.TopWaits)
	if err != nil {
		st.NoServer = err.Error()
		return
	}
	st.Server, st.Start, st.End = &step, start, end
}
