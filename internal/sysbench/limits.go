package sysbench

import (
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
)

// series builds Output.Intervals within MaxIntervals points: each report while they fit, then
// (every point full) adjacent points are merged pairwise and reports are added to the last
// point until it holds as many as the others. A point holds its reports' sums until finish.
type series struct {
	points []load.Interval
	// per is how many reports a full point holds; last how many the last point holds.
	per, last int
	reports   int
}

func (s *series) add(iv load.Interval) {
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
	if len(s.points) == load.MaxIntervals {
		// Every point is full: halve them, which frees the second half.
		for i := range load.MaxIntervals / 2 {
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
		s.points = s.points[:load.MaxIntervals/2]
		s.per *= 2
	}
	if len(s.points) == cap(s.points) {
		// Grow by doubling, but never past the cap: append would reserve up to twice it.
		grown := make([]load.Interval, len(s.points), min(max(2*cap(s.points), 64), load.MaxIntervals))
		copy(grown, s.points)
		s.points = grown
	}
	s.points = append(s.points, iv)
	s.last = 1
}

// finish turns the sums into means and puts the series into out.
func (s *series) finish(out *load.Output) {
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
