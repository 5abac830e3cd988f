package serverstats

import (
	"fmt"

	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
)

// A snapshot's caps: a server line or a launcher's rows are read from a step's log, which holds
// whatever the step's container printed, so a snapshot keeps only what a step can use, within
// a bounded size.
const (
	// MaxWaits is the most wait events a snapshot holds. The summary table has one row per
	// wait instrument: MariaDB 10.11.19 defines 348 (measured with performance_schema ON), and
	// the MySQL 9.7 capture in internal/sysbench/testdata/server has 139 that waited, so no
	// server comes near it, while a log line of 1 MiB can hold 40000. A snapshot with more has
	// no waits, and an error says why.
	MaxWaits = 4096
	// MaxErrors is the most errors a snapshot holds, the last saying how many more there were.
	MaxErrors = 16
	// maxError bounds one error, as the reporter cuts them, and the strings a snapshot keeps.
	maxError = 300
)

// tracked are the names of the bounded set by source.
var tracked = func() map[string]map[string]bool {
	m := map[string]map[string]bool{SourceStatus: {}, SourceInnoDBMetrics: {}}
	for _, n := range StatusNames {
		m[SourceStatus][n] = true
	}
	for _, n := range InnoDBMetricNames {
		m[SourceInnoDBMetrics][n] = true
	}
	return m
}()

// Tracked says whether name is one of the bounded set's (StatusNames for SourceStatus,
// InnoDBMetricNames for SourceInnoDBMetrics): the only counters a step reads.
func Tracked(source, name string) bool { return tracked[source][name] }

// AddError records why a section is missing, cut to 300 bytes. Past MaxErrors-1 errors they are
// only counted, and Bound says how many were left out.
func (s *Snapshot) AddError(msg string) {
	if len(s.Errors) < MaxErrors-1 {
		s.Errors = append(s.Errors, bounded.Head(msg, maxError))
		return
	}
	s.errorsLeftOut++
}

// Bound keeps of a snapshot what a step can use, within the caps: the bounded set's counters
// (Delta reads no other; anything else is dropped), no waits when there are more than MaxWaits
// (with an error saying so), at most MaxErrors errors, and errors, wait event names and the
// server's version of at most 300 bytes.
func (s *Snapshot) Bound() {
	s.Server = bounded.Head(s.Server, maxError)
	for name := range s.Status {
		if !Tracked(SourceStatus, name) {
			delete(s.Status, name)
		}
	}
	for name := range s.InnoDBMetrics {
		if !Tracked(SourceInnoDBMetrics, name) {
			delete(s.InnoDBMetrics, name)
		}
	}
	errs, left := s.Errors, s.errorsLeftOut
	s.Errors, s.errorsLeftOut = nil, 0
	if len(s.Waits) > MaxWaits {
		s.Waits = nil
		s.AddError(fmt.Sprintf("waits: more than %d wait events, more than a server has: left out", MaxWaits))
	}
	for i := range s.Waits {
		if len(s.Waits[i].Event) > maxError {
			s.Waits[i].Event = bounded.Head(s.Waits[i].Event, maxError)
		}
	}
	for _, e := range errs {
		s.AddError(e)
	}
	if n := s.errorsLeftOut + left; n > 0 {
		s.Errors = append(s.Errors, fmt.Sprintf("%d more errors left out", n))
	}
	s.errorsLeftOut = 0
}
