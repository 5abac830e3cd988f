package sysbench

import (
	"fmt"
	"strconv"
	"time"

	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
)

// A ladder step that Classify passes has run to its end; whether it measured something that can
// be compared with other steps is a separate question, answered here from its final report and
// the step's duration (ladder.stepDuration, sysbench --time).

// How far past its duration a step may run before it is flagged. sysbench 1.0.20 stops handing
// out events at --time and then waits for the events in flight, so every step ends a little late.
// Measured against MariaDB 10.11 on loopback (testdata/overrun: oltp_point_select,
// oltp_read_write and oltp_update_index at 1 to 128 threads, 5 s and 10 s steps, 180 steps in
// two rounds on a shared, loaded 2-core host) the overrun was 15 ms in the median, 0.16 s at the
// 90th percentile and at most 0.58 s, except for one step: an oltp_update_index event of 5.0 s at
// 128 threads made its 10 s step measure 13.6 s, which is what this flag is for. The shared
// fixtures' 5 s ladder steps ran 0.7 to 58 ms over. The floor, 1 s, is above all normal
// overruns, and an overrun of a second already dilutes a 10 s step's rates by a tenth. On long
// steps an overrun dilutes the rates (counts over the measured time) by about overrun /
// duration; 1 % of the step keeps that at a fifth of the default regression threshold (5 % QPS)
// and lets a 300 s step at 1000 threads wait 3 s for its last lock.
const (
	overrunFloor = time.Second
	overrunShare = 0.01
)

// OverrunTolerance is how long past stepDuration a step may measure and still be compared with
// the others: the larger of 1 s and 1 % of the step.
func OverrunTolerance(stepDuration time.Duration) time.Duration {
	return max(overrunFloor, time.Duration(float64(stepDuration)*overrunShare))
}

// OverDuration says whether a run step measured for longer than stepDuration plus
// OverrunTolerance: an event outlasted the step (a long query, a script that waits), so its
// rates are counts over a longer time than the other steps', ending with the event running alone.
func OverDuration(f load.Final, stepDuration time.Duration) bool {
	over := time.Duration(f.DurationSeconds*float64(time.Second)) - stepDuration
	return stepDuration > 0 && over > OverrunTolerance(stepDuration)
}

// MeasuredNothing is the Failure of a run step whose final report counts no event or no query:
// its QPS would be 0 and its TPS and latencies those of whatever the script did instead of SQL
// (a custom script's event() that runs no query through sysbench's driver), nothing a benchmark
// can compare. It is Deterministic: the same script does the same again. nil when the step
// measured queries.
func MeasuredNothing(f load.Final, stepDuration time.Duration) *load.Failure {
	if f.Events > 0 && f.Queries.Total > 0 {
		return nil
	}
	ran := fmt.Sprintf("%s and %s in %s s", count(f.Events, "event"), count(f.Queries.Total, "query"),
		strconv.FormatFloat(f.DurationSeconds, 'f', 3, 64))
	if stepDuration > 0 {
		ran += fmt.Sprintf(" (a %s step)", stepDuration)
	}
	what := "the script's event() ran no SQL through sysbench's driver, and QPS counts only that"
	if f.Events == 0 {
		what = "no event of the script completed"
	}
	return &load.Failure{Deterministic: true, Reason: fmt.Sprintf("the step measured nothing: sysbench counted %s: %s. "+
		"A custom script's event() must run its queries with sysbench's SQL driver (con:query(...) or a prepared "+
		"statement), as the stock OLTP scripts do", ran, what)}
}

// count writes n with its noun, plural when n is not 1 ("1 event", "0 queries").
func count(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if noun == "query" {
		return strconv.FormatInt(n, 10) + " queries"
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}
