package results

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// ServerValue names one number of a step's server counters (Step.Server) that a chart or a table
// shows by thread count: a counter's rate or the server container's CPU.
type ServerValue struct {
	// Counter is the name of a counter of serverstats.Step.Counters; "" means the server
	// container's CPU (serverstats.Step.CPU).
	Counter string
	// PerSecond takes the rate per second of the snapshots' interval (for the CPU: CPU seconds
	// per second, the cores busy on average) instead of per sysbench query.
	PerSecond bool
}

// Of returns v's value in the step s, or says why s has none, in words for the user: the server
// lacks the counter, a snapshot could not read it, the CPU was not measured (and why), or the
// step had no queries to divide by.
func (v ServerValue) Of(s serverstats.Step) (float64, bool, string) {
	if v.Counter == "" {
		switch {
		case s.CPU == nil && s.CPUMissing != "":
			return 0, false, "CPU not measured: " + s.CPUMissing
		case s.CPU == nil:
			return 0, false, "CPU not measured (no CPU recorded with the step's server counters)"
		case v.PerSecond:
			return s.CPU.PerSecond, true, ""
		case !(s.Queries > 0):
			return 0, false, "the step had no queries to divide the CPU by"
		}
		return s.CPU.PerQuery, true, ""
	}
	i := slices.IndexFunc(s.Counters, func(c serverstats.Counter) bool { return c.Name == v.Counter })
	switch {
	case i >= 0 && v.PerSecond:
		return s.Counters[i].PerSecond, true, ""
	case i >= 0 && s.Queries > 0:
		return s.Counters[i].PerQuery, true, ""
	case i >= 0:
		return 0, false, "the step had no queries to divide " + v.Counter + " by"
	case slices.Contains(s.MissingStatus, v.Counter) || slices.Contains(s.MissingInnoDBMetrics, v.Counter):
		return 0, false, LacksCounter(v.Counter)
	case slices.ContainsFunc(s.Gauges, func(g serverstats.Gauge) bool { return g.Name == v.Counter }):
		return 0, false, v.Counter + " is a gauge (its value at the end of the step), not a counter"
	case len(s.Errors) > 0:
		return 0, false, v.Counter + " not read: " + s.Errors[0]
	}
	return 0, false, "no " + v.Counter + " recorded"
}

// LacksCounter says that a server lacks a counter (or has it disabled), naming the counter that
// stands in for it on other servers when there is one.
func LacksCounter(name string) string {
	msg := "the server lacks " + name + " or has it disabled"
	if alt := CounterStandIns(name); len(alt) > 0 {
		msg += " (other servers count it as " + strings.Join(alt, " or ") + ")"
	}
	return msg
}

// standIns are the counters servers of different flavours count the same thing under (see
// serverstats): rows read, and the redo bytes written.
var standIns = [][]string{
	{"Innodb_rows_read", "Rows_read"},
	{"Innodb_os_log_written", "Innodb_redo_log_current_lsn", "Innodb_lsn_current"},
}

// CounterStandIns are the other names of what the counter name counts on servers that lack it:
// Rows_read for Innodb_rows_read (MariaDB), the redo log position for Innodb_os_log_written.
func CounterStandIns(name string) []string {
	for _, set := range standIns {
		if slices.Contains(set, name) {
			return slices.DeleteFunc(slices.Clone(set), func(n string) bool { return n == name })
		}
	}
	return nil
}

// KnownCounter says whether name is a counter of the bounded set the operator reads
// (serverstats.StatusNames and InnoDBMetricNames, gauges left out).
func KnownCounter(name string) bool {
	return !serverstats.IsGauge(name) &&
		(slices.Contains(serverstats.StatusNames, name) || slices.Contains(serverstats.InnoDBMetricNames, name))
}

// CounterSuggestion is the known counter name spelt like name but for case, or "".
func CounterSuggestion(name string) string {
	for _, set := range [][]string{serverstats.StatusNames, serverstats.InnoDBMetricNames} {
		for _, n := range set {
			if strings.EqualFold(n, name) {
				return n
			}
		}
	}
	return ""
}

// ServerStepsOf are a target's steps with their decoded server counters, nil where results.json
// has none for the step.
func ServerStepsOf(t *Target) ([]*serverstats.Step, error) {
	out := make([]*serverstats.Step, len(t.Steps))
	for i, st := range t.Steps {
		s, ok, err := st.DecodedServer()
		if err != nil {
			return nil, fmt.Errorf("target %s, %d threads: %w", t.Name, st.Threads, err)
		}
		if ok {
			out[i] = &s
		}
	}
	return out, nil
}

// ServerDropped says whether the doc left target's server counters at threads (repetition rep,
// 1 without repetitions) out to fit the ConfigMap.
func (d *Doc) ServerDropped(target string, threads, rep int32) bool {
	for _, dr := range d.Dropped {
		if dr.Kind != DroppedServer || dr.Target != target {
			continue
		}
		for i, th := range dr.Threads {
			r := int32(1)
			if i < len(dr.Repetitions) {
				r = dr.Repetitions[i]
			}
			if th == threads && max(r, 1) == max(rep, 1) {
				return true
			}
		}
	}
	return false
}
