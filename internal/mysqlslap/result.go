package mysqlslap

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// maxSnapshotError bounds one snapshot error, as the sysbench reporter does.
const maxSnapshotError = 300

// errorLine is one of mysqlslap's own lines: "mysqlslap: ..." or "mariadb-slap: ..." (its
// program name, as the launcher runs it). Its warnings and notes are not errors.
var errorLine = regexp.MustCompile(`^(?:\S*/)?(?:mysqlslap|mariadb-slap)(?:\.exe)?: (.*)$`)

// notAnError are mysqlslap lines that do not mean the step failed: MySQL's "[Warning] Using a
// password on the command line..." (never with the option file), and MariaDB 11's "Deprecated
// program name" when it runs as mysqlslap.
var notAnError = regexp.MustCompile(`^\[(Warning|Note)\]|^Deprecated program name`)

// clientNoise are the lines of a snapshot client's stderr that are not its error: MariaDB's client
// echoes the failed query between dashed lines (--print-query-on-error, on by default), MySQL's
// prints warnings.
var clientNoise = regexp.MustCompile(`^\s*$|^-+$|^(SELECT|SHOW) |\[(Warning|Note)\]`)

// ParseOutput reads a mysqlslap container's log or its termination message (Build's launcher
// writes mysqlslap's error lines and its Benchmark report there) into the sysbench form, so the
// controller's pipeline (Classify, Final.StepResult, the server counters) works unchanged:
//
//   - Final is the Benchmark report: Command "run", Threads = mysqlslap's clients,
//     DurationSeconds = its average seconds to run all queries (over --iterations; mysqlslap
//     prints milliseconds), Queries.Total = the queries of one iteration (clients x average
//     queries per client), QPS.Total = Queries.Total / DurationSeconds. That is the definition
//     of mysqlslap's QPS in this product: all clients' queries over the average wall time one
//     iteration took to run them, mysqlslap's own table setup not included. TPS, the
//     read/write split and latency are 0 (mysqlslap measures none of them); Sysbench is "". A
//     report of 0.000 seconds gives DurationSeconds 0 and QPS 0, which Classify refuses.
//   - Fatal are mysqlslap's error lines ("mysqlslap: ...", "mariadb-slap: ...", but its
//     warnings) and the launcher's "FATAL: ..." lines. mysqlslap exits 0 after a failed query
//     (measured with both flavours), so these lines, not the exit code, say that a step failed.
//   - Server are the launcher's server snapshots (Step.ServerStats), decoded as the sysbench
//     reporter's server lines would be (counts exact as uint64, never through a float);
//     ServerErrors say why one could not be read (an unterminated snapshot, a bad clock line).
//
// A log with more than one Benchmark report is an error: Build runs one engine at one
// concurrency per step. Whatever the log holds, what is kept is bounded (sysbench's limits.go,
// serverstats' Bound): error lines, snapshots and their errors are capped, a snapshot keeps only
// the bounded set's counters, and extra reports are only counted.
func ParseOutput(r io.Reader) (load.Output, error) {
	p := parser{}
	if err := sysbench.EachLine(r, "mysqlslap", p.addLine); err != nil {
		return p.out, err
	}
	p.endSnapshot(false)
	return p.out, p.finish()
}

// report is a Benchmark block as printed.
type report struct {
	avgMs, clients, perClient int64
}

type parser struct {
	out load.Output
	// report is the first Benchmark block, the only one read; reports counts them all.
	report  report
	reports int
	inBlock bool
	snap    *snapshot
}

// snapshot is a server snapshot being read.
type snapshot struct {
	s       serverstats.Snapshot
	line    int
	clocks  map[string]float64
	section string
	// failed are the sections with an error line; their rows (none, normally) are dropped.
	failed map[string]bool
	// status and innodb hold only the bounded set's counters; waits at most one more than
	// serverstats.MaxWaits (Bound then drops them).
	status map[string]uint64
	innodb map[string]uint64
	waits  []serverstats.WaitTotal
	read   map[string]bool
}

// sections are the launcher's snapshot sections; clocks its clock names. Others are not the
// launcher's, and are ignored rather than kept.
var (
	sections = map[string]bool{"variables": true, "status": true, serverstats.SourceInnoDBMetrics: true, "waits": true}
	clocks   = map[string]bool{"begin": true, "status": true, "done": true}
)

func (p *parser) addLine(line string, lineNo int) error {
	switch {
	case strings.HasPrefix(line, markBegin):
		p.inBlock = false
		p.endSnapshot(false)
		at := strings.TrimPrefix(line, markBegin)
		p.snap = &snapshot{s: serverstats.Snapshot{Version: sysbench.FormatVersion, At: at}, line: lineNo,
			clocks: map[string]float64{}, failed: map[string]bool{}, read: map[string]bool{}}
		return nil
	case p.snap != nil:
		p.snapshotLine(line, lineNo)
		return nil
	}

	trimmed := strings.TrimSpace(line)
	if line == "Benchmark" {
		p.reports++
		// Only the first block is read: more than one fails the parse (finish).
		p.inBlock = p.reports == 1
		if p.inBlock {
			p.report = report{avgMs: -1, clients: -1, perClient: -1}
		}
		return nil
	}
	if p.inBlock && strings.HasPrefix(line, "\t") {
		return p.reportLine(trimmed)
	}
	p.inBlock = false
	switch {
	case strings.HasPrefix(trimmed, "FATAL:"):
		p.out.AddFatal(trimmed)
	default:
		if m := errorLine.FindStringSubmatch(trimmed); m != nil && !notAnError.MatchString(m[1]) {
			p.out.AddFatal(trimmed)
		}
	}
	return nil
}

// reportLine reads one line of a Benchmark block. mysqlslap prints the seconds as
// "%ld.%03ld seconds", so they are read as whole milliseconds.
func (p *parser) reportLine(line string) error {
	r := &p.report
	key, value, ok := strings.Cut(line, ": ")
	if !ok {
		return nil // "Running for engine innodb", a label: not needed
	}
	var err error
	switch key {
	case "Average number of seconds to run all queries":
		r.avgMs, err = milliseconds(value)
	case "Number of clients running queries":
		r.clients, err = strconv.ParseInt(value, 10, 32)
	case "Average number of queries per client":
		r.perClient, err = strconv.ParseInt(value, 10, 64)
	default:
		return nil
	}
	if err != nil {
		return fmt.Errorf("mysqlslap report %q: %w", bounded.Head(line, 200), err)
	}
	return nil
}

// milliseconds reads mysqlslap's "S.mmm seconds".
func milliseconds(v string) (int64, error) {
	v = strings.TrimSuffix(v, " seconds")
	whole, frac, ok := strings.Cut(v, ".")
	if !ok || len(frac) != 3 {
		return 0, fmt.Errorf("want seconds with three decimals")
	}
	s, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, err
	}
	ms, err := strconv.ParseInt(frac, 10, 64)
	if err != nil || s < 0 || ms < 0 {
		return 0, fmt.Errorf("want seconds with three decimals")
	}
	return s*1000 + ms, nil
}

// finish turns the Benchmark report into Final.
func (p *parser) finish() error {
	switch p.reports {
	case 0:
		return nil
	case 1:
	default:
		return fmt.Errorf("mysqlslap printed %d Benchmark reports, want one (one engine at one concurrency per step)", p.reports)
	}
	r := p.report
	if r.avgMs < 0 || r.clients < 0 || r.perClient < 0 {
		// A report cut off (the log tail): no result.
		return nil
	}
	queries := r.clients * r.perClient
	f := &load.Final{
		Version:         sysbench.FormatVersion,
		Command:         "run",
		Threads:         int32(r.clients),
		DurationSeconds: float64(r.avgMs) / 1000,
		Queries:         load.Counts{Total: queries},
	}
	if r.avgMs > 0 {
		f.QPS.Total = float64(queries) / f.DurationSeconds
	}
	p.out.Final = f
	return nil
}

// snapshotLine reads one line inside a snapshot.
func (p *parser) snapshotLine(line string, lineNo int) {
	s := p.snap
	switch {
	case strings.HasPrefix(line, markEnd):
		if at := strings.TrimPrefix(line, markEnd); at != s.s.At {
			p.out.AddServerError(fmt.Sprintf("line %d: snapshot %q ends as %q", lineNo, bounded.Head(s.s.At, 40), bounded.Head(at, 40)))
			p.snap = nil
			return
		}
		p.endSnapshot(true)
	case strings.HasPrefix(line, markClock):
		name, value, _ := strings.Cut(strings.TrimPrefix(line, markClock), " ")
		if !clocks[name] {
			return
		}
		t, err := unixTime(value)
		if err != nil {
			p.out.AddServerError(fmt.Sprintf("line %d: clock %s: %v", lineNo, name, err))
			return
		}
		s.clocks[name] = t
	case strings.HasPrefix(line, markSection):
		s.section = strings.TrimPrefix(line, markSection)
		if sections[s.section] {
			s.read[s.section] = true
		}
	case strings.HasPrefix(line, markError):
		section, msg, _ := strings.Cut(strings.TrimPrefix(line, markError), ": ")
		if clientNoise.MatchString(msg) {
			return
		}
		if sections[section] {
			s.failed[section] = true
		}
		s.s.AddError(bounded.Head(section+": "+msg, maxSnapshotError))
	default:
		s.row(line)
	}
}

// row adds a row of the current section: the client's --batch output, tab-separated.
func (s *snapshot) row(line string) {
	cols := strings.Split(line, "\t")
	switch s.section {
	case "variables":
		if len(cols) != 2 {
			return
		}
		switch strings.ToLower(cols[0]) {
		case "version":
			s.s.Server = cols[1]
		case "performance_schema":
			s.s.PerformanceSchema = cols[1] == "ON" || cols[1] == "1"
		}
	case "status", "innodbMetrics":
		if len(cols) != 2 {
			s.s.AddError(bounded.Head(s.section+": not a name and a value: "+line, maxSnapshotError))
			return
		}
		if !serverstats.Tracked(s.section, cols[0]) {
			return // the launcher asks for the bounded set only; a step reads no other
		}
		v, ok := counter(cols[1])
		if !ok {
			s.s.AddError(s.section + " " + bounded.Head(cols[0], 80) + ": not a counter: " + bounded.Head(cols[1], 40))
			return
		}
		if s.section == "status" {
			s.status = setCounter(s.status, cols[0], v)
		} else {
			s.innodb = setCounter(s.innodb, cols[0], v)
		}
	case "waits":
		if len(cols) != 3 {
			s.s.AddError(bounded.Head("waits: not an event and two counts: "+line, maxSnapshotError))
			return
		}
		count, okC := counter(cols[1])
		sum, okS := counter(cols[2])
		if !okC || !okS {
			s.s.AddError("waits " + bounded.Head(cols[0], 80) + ": not counters")
			return
		}
		if len(s.waits) > serverstats.MaxWaits {
			return // already too many: Bound drops them all
		}
		s.waits = append(s.waits, serverstats.WaitTotal{Event: bounded.Head(cols[0], maxSnapshotError), Count: count, SumTimerWait: sum})
	}
}

func setCounter(m map[string]uint64, name string, v uint64) map[string]uint64 {
	if m == nil {
		m = map[string]uint64{}
	}
	m[name] = v
	return m
}

// counter reads a count the way the reporter's counter_digits does: digits only, fitting a
// uint64.
func counter(v string) (uint64, bool) {
	if v == "" || strings.TrimLeft(v, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseUint(v, 10, 64)
	return n, err == nil
}

// unixTime reads `date +%s.%N`: seconds, and nanoseconds when date knows %N (a date that does not
// prints something else after the dot, which is dropped: whole seconds).
func unixTime(v string) (float64, error) {
	whole, frac, _ := strings.Cut(v, ".")
	s, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || s <= 0 {
		return 0, fmt.Errorf("not a unix time: %q", bounded.Head(v, 40))
	}
	t := float64(s)
	if len(frac) == 9 && strings.TrimLeft(frac, "0123456789") == "" {
		ns, _ := strconv.ParseInt(frac, 10, 64)
		// Microseconds, as the reporter prints.
		t += float64(ns/1000) / 1e6
	}
	return t, nil
}

// endSnapshot closes the current snapshot: complete when its end line came, else it is dropped
// with a ServerErrors entry (the container died during it, or a log tail cut it).
func (p *parser) endSnapshot(complete bool) {
	s := p.snap
	if s == nil {
		return
	}
	p.snap = nil
	if !complete {
		p.out.AddServerError(fmt.Sprintf("line %d: server snapshot %q has no end line", s.line, bounded.Head(s.s.At, 40)))
		return
	}
	if s.s.At != serverstats.AtStart && s.s.At != serverstats.AtEnd {
		p.out.AddServerError(fmt.Sprintf("line %d: server snapshot at %q, want %q or %q",
			s.line, bounded.Head(s.s.At, 40), serverstats.AtStart, serverstats.AtEnd))
		return
	}
	begin, okB := s.clocks["begin"]
	at, okS := s.clocks["status"]
	if !okS {
		at = begin
	}
	if !okB && !okS {
		p.out.AddServerError(fmt.Sprintf("line %d: server snapshot %q has no time (date is missing in the image?)", s.line, s.s.At))
		return
	}
	s.s.UnixTime = at
	if done, ok := s.clocks["done"]; ok && okB && done >= begin {
		s.s.DurationMs = (done - begin) * 1000
	}
	// A section that was read and failed nowhere is there, even when empty; one with an
	// error is not (its Errors say why).
	if s.read["status"] && !s.failed["status"] {
		s.s.Status = orEmpty(s.status)
	}
	if s.read["innodbMetrics"] && !s.failed["innodbMetrics"] {
		s.s.InnoDBMetrics = orEmpty(s.innodb)
	}
	if s.read["waits"] && !s.failed["waits"] && s.s.PerformanceSchema {
		s.s.Waits = s.waits
		if s.s.Waits == nil {
			s.s.Waits = []serverstats.WaitTotal{}
		}
	}
	p.out.AddServer(s.s)
}

func orEmpty(m map[string]uint64) map[string]uint64 {
	if m == nil {
		return map[string]uint64{}
	}
	return m
}
