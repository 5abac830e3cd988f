package load

import (
	"fmt"

	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// What an Output keeps of a client's output, whatever the output holds. A step's log is read
// after the step, with the manager's memory, and holds whatever the step's container printed (a
// custom script, a client that prints more than it should, a container that misbehaves), so
// every list an Output builds is capped: a log of any content costs a bounded heap.
const (
	// MaxIntervals is how many points of the per-second series an Output keeps: the reports of
	// the longest step (ladder.stepDuration 24 h) at the reporter's one report a second. A real
	// step's series is kept whole, and only report.EncodeSeries, which knows the results
	// ConfigMap's budget, averages it; an output with more interval reports than any step prints
	// is downsampled while it is read (Output.IntervalsPerPoint). 86400 points take 7.6 MB.
	MaxIntervals = 24 * 60 * 60
	// MaxServerSnapshots is how many server snapshots an Output keeps. A step takes two (start
	// and end); more cannot be paired (serverstats.Pair), so the rest are only counted.
	MaxServerSnapshots = 8
	// MaxServerErrors is how many ServerErrors an Output keeps, the last saying that more were
	// left out.
	MaxServerErrors = 16
	// MaxFatalBytes bounds the error lines an Output keeps (their bytes and a string header
	// each). The first lines say why a step failed (the classifiers read them in order): 600 threads
	// refused at once print 1339 error lines, 103 KB (the fixture fail_600_threads), all kept.
	MaxFatalBytes = 256 << 10
	// MaxFatalLine bounds one kept error line: steps are classified from their termination
	// message, 4 KiB at most, whose lines are never cut; a longer line in a log is.
	MaxFatalLine = 4 << 10
	// LineCost is what a kept line costs besides its bytes (a string header).
	LineCost = 16
)

// AddFatal keeps an error line, cut to 4 KiB, while the kept lines take less than 256 KiB;
// later lines are dropped.
func (o *Output) AddFatal(line string) {
	o.Fatal, o.fatalBytes = addLine(o.Fatal, o.fatalBytes, line)
}

// ClearFatal forgets the error lines kept so far (sysbench's parser: the lines before a server
// snapshot are the snapshot's).
func (o *Output) ClearFatal() { o.Fatal, o.fatalBytes = nil, 0 }

// addLine appends line, cut to MaxFatalLine, to lines whose cost is size, unless that would pass
// MaxFatalBytes.
func addLine(lines []string, size int, line string) ([]string, int) {
	if len(line) > MaxFatalLine {
		line = bounded.Head(line, MaxFatalLine)
	}
	cost := len(line) + LineCost
	if size+cost > MaxFatalBytes {
		return lines, size
	}
	return append(lines, line), size + cost
}

// AddServer keeps a server snapshot, bounded (serverstats.Snapshot.Bound), unless MaxServerSnapshots
// are kept already: then a ServerErrors entry says that the output holds more than a step takes.
func (o *Output) AddServer(s serverstats.Snapshot) {
	if len(o.Server) >= MaxServerSnapshots {
		if o.serverLeftOut == 0 {
			o.AddServerError(fmt.Sprintf("more than %d server snapshots (a step takes two, at its start and end): "+
				"the rest are not read", MaxServerSnapshots))
		}
		o.serverLeftOut++
		return
	}
	s.Bound()
	o.Server = append(o.Server, s)
}

// AddServerError keeps why a server snapshot could not be read, up to MaxServerErrors entries.
func (o *Output) AddServerError(msg string) {
	switch {
	case len(o.ServerErrors) < MaxServerErrors-1:
		o.ServerErrors = append(o.ServerErrors, bounded.Head(msg, MaxFatalLine))
	case len(o.ServerErrors) == MaxServerErrors-1:
		o.ServerErrors = append(o.ServerErrors, "further server snapshot errors left out")
	}
}
