package sysbench

import (
	"fmt"

	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
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
	// maxServerErrors is how many ServerErrors an Output keeps, the last saying that more were
	// left out.
	maxServerErrors = 16
	// maxFatalBytes bounds the error lines an Output keeps (their bytes and a string header
	// each). The first lines say why a step failed (Classify reads them in order): 600 threads
	// refused at once print 1339 error lines, 103 KB (the fixture fail_600_threads), all kept.
	maxFatalBytes = 256 << 10
	// maxFatalLine bounds one kept error line: steps are classified from their termination
	// message, 4 KiB at most, whose lines are never cut; a longer line in a log is.
	maxFatalLine = 4 << 10
	// stringHeader is what a kept string costs besides its bytes.
	stringHeader = 16
)

// AddFatal keeps an error line, cut to 4 KiB, while the kept lines take less than 256 KiB;
// later lines are dropped.
func (o *Output) AddFatal(line string) {
	o.Fatal, o.fatalBytes = addLine(o.Fatal, o.fatalBytes, line)
}

// clearFatal forgets the error lines kept so far.
func (o *Output) clearFatal() { o.Fatal, o.fatalBytes = nil, 0 }

// addLine appends line, cut to maxFatalLine, to lines whose cost is size, unless that would pass
// maxFatalBytes.
func addLine(lines []string, size int, line string) ([]string, int) {
	if len(line) > maxFatalLine {
		line = bounded.Head(line, maxFatalLine)
	}
	cost := len(line) + stringHeader
	if size+cost > maxFatalBytes {
		return lines, size
	}
	return append(lines, line), size + cost
}

// AddServer keeps a server snapshot, bounded (serverstats.Snapshot.Bound), unless MaxServerSnapshots
// are kept already: then a ServerErrors entry says that the output holds more than a step takes.
func (o *Output) AddServer(s ServerSnapshot) {
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

// AddServerError keeps why a server snapshot could not be read, up to maxServerErrors entries.
func (o *Output) AddServerError(msg string) {
	switch {
	case len(o.ServerErrors) < maxServerErrors-1:
		o.ServerErrors = append(o.ServerErrors, bounded.Head(msg, maxFatalLine))
	case len(o.ServerErrors) == maxServerErrors-1:
		o.ServerErrors = append(o.ServerErrors, "further server snapshot errors left out")
	}
}

// series builds Output.Intervals within MaxIntervals points: each report while they fit, then
// (every point full) adjacent points are merged pairwise and reports are added to the last
// point until it holds as many as the others. A point holds its reports' sums until finish.
type series struct {
	points []Interval
	// per is how many reports a full point holds; last how many the last point holds.
	per, last int
	reports   int
}

func (s *series) add(iv Interval) {
	s.reports++
	if n := len(s.points); n > 0 && s.last < s.per {
		p := &s.points[n-1]
		p.Time, p.Threads, p.ThreadsRunning = iv.Time, iv.Threads, iv.ThreadsRunning
		p.TPS += iv.TPS
		p.QPS += iv.QPS
		p.ReadQPS += iv.ReadQPS
		p.WriteQPS += iv.WriteQPS
		p.OtherQPS += iv.OtherQPS
		p.LatencyPctMs += iv.LatencyPctMs
		p.ErrorsPerSec += iv.ErrorsPerSec
		p.ReconnectsPerSec += iv.ReconnectsPerSec
		s.last++
		return
	}
	if s.per == 0 {
		s.per = 1
	}
	if len(s.points) == MaxIntervals {
		// Every point is full: halve them, which frees the second half.
		for i := range MaxIntervals / 2 {
			a, b := s.points[2*i], s.points[2*i+1]
			b.TPS += a.TPS
			b.QPS += a.QPS
			b.ReadQPS += a.ReadQPS
			b.WriteQPS += a.WriteQPS
			b.OtherQPS += a.OtherQPS
			b.LatencyPctMs += a.LatencyPctMs
			b.ErrorsPerSec += a.ErrorsPerSec
			b.ReconnectsPerSec += a.ReconnectsPerSec
			s.points[i] = b
		}
		s.points = s.points[:MaxIntervals/2]
		s.per *= 2
	}
	if len(s.points) == cap(s.points) {
		// Grow by doubling, but never past the cap: append would reserve up to twice it.
		grown := make([]Interval, len(s.points), min(max(2*cap(s.points), 64), MaxIntervals))
		copy(grown, s.points)
		s.points = grown
	}
	s.points = append(s.points, iv)
	s.last = 1
}

// finish turns the sums into means and puts the series into out.
func (s *series) finish(out *Output) {
	if s.reports == 0 {
		return
	}
	for i := range s.points {
		n := float64(s.per)
		if i == len(s.points)-1 {
			n = float64(s.last)
		}
		p := &s.points[i]
		p.TPS /= n
		p.QPS /= n
		p.ReadQPS /= n
		p.WriteQPS /= n
		p.OtherQPS /= n
		p.LatencyPctMs /= n
		p.ErrorsPerSec /= n
		p.ReconnectsPerSec /= n
	}
	out.Intervals, out.IntervalsPerPoint, out.IntervalReports = s.points, s.per, s.reports
}
