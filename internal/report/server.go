package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// ServerKey is the ConfigMap data key a step's server counters (EncodeServer) are stored under
// while the run goes on, e.g. "server.mysql80.t0008.json", or "server.mysql80.t0008.r02.json" for
// repetition 2: SeriesKey's form with its own prefix. Render's own "server.csv" does not end in
// ".json", so it is never taken for one.
func ServerKey(target string, threads, rep int32) string {
	if rep <= 1 {
		return fmt.Sprintf("%s%s.t%04d.json", serverKeyPrefix, target, threads)
	}
	return fmt.Sprintf("%s%s.t%04d.r%02d.json", serverKeyPrefix, target, threads, rep)
}

const serverKeyPrefix = "server."

// IsServerKey says whether a stored key is a step's server counters (ServerKey).
func IsServerKey(key string) bool {
	return strings.HasPrefix(key, serverKeyPrefix) && strings.HasSuffix(key, ".json")
}

// serverOverhead is what embedding server counters in a step of results.json adds besides them.
var serverOverhead = len(`,"server":`)

// Precision of the encoded server counters. Counts (deltas, gauges, wait counts and times) are
// exact. Rates keep sigDigits significant digits like the series, but with more decimals: a
// per-query rate of a rare event (a buffer pool read per 100,000 queries) is 0.00001, which the
// series' three decimals would turn into 0. Seconds keep the snapshots' microseconds.
const (
	serverRateDecimals    = 12
	serverSecondsDecimals = 6
)

// EncodeServer turns what the server did during a step into the compact JSON the controller
// stores under ServerKey and Render embeds byte for byte in results.json (key "server" of the
// step). Rates are rounded (see serverRateDecimals), counts are kept exact, s is not modified. It
// fails when the result would not decode (results.DecodeServer): a step of no time, or a nameless
// counter.
func EncodeServer(s serverstats.Step) (string, error) {
	r := s
	r.Seconds = roundDecimals(s.Seconds, serverSecondsDecimals)
	if math.IsNaN(s.Queries) || math.IsInf(s.Queries, 0) || s.Queries < 0 {
		r.Queries = 0
	}
	r.Counters = slices.Clone(s.Counters)
	for i := range r.Counters {
		c := &r.Counters[i]
		c.PerSecond = roundValue(c.PerSecond, serverRateDecimals)
		c.PerQuery = roundValue(c.PerQuery, serverRateDecimals)
	}
	r.Waits = slices.Clone(s.Waits)
	for i := range r.Waits {
		r.Waits[i].SecondsPerSecond = roundValue(r.Waits[i].SecondsPerSecond, serverRateDecimals)
	}
	if err := results.ValidateServer(r); err != nil {
		return "", fmt.Errorf("encode server counters: %w", err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// As results.json: event names and errors are not embedded in HTML.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return "", fmt.Errorf("encode server counters: %w", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// roundDecimals rounds v to d decimals through an exact power of ten (see roundValue); NaN and
// infinities become 0.
func roundDecimals(v float64, d int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	p := math.Pow10(d)
	if r := math.Round(v*p) / p; r != 0 {
		return r
	}
	return 0
}

// embedServer returns stored server counters ready to embed in results.json, and decoded:
// DecodeServer must accept them, and their bytes are kept, compacted, as embedSeries keeps a
// series'.
func embedServer(raw string) (json.RawMessage, serverstats.Step, error) {
	s, err := results.DecodeServer(raw)
	if err != nil {
		return nil, serverstats.Step{}, err
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(raw)); err != nil {
		return nil, serverstats.Step{}, err // not reached: DecodeServer accepted it as JSON
	}
	return b.Bytes(), s, nil
}

// Widths of worstServerStep: the widest numbers a realistic step encodes to.
const (
	// Rounded to sigDigits it prints as 0.0000012346: the widest rate encoding/json prints
	// without an exponent.
	worstServerRate = 0.0000012345678
	// The widest count: a uint64.
	worstServerCount = math.MaxUint64
	// EVENT_NAME is VARCHAR(128), but instrument names are much shorter: 37 characters for
	// wait/synch/mutex/innodb/buf_pool_mutex, well under 80 for the long replication ones.
	worstEventLen = 80
	// The reporter cuts a snapshot error to 300 characters after its section's name.
	worstServerErrorLen = 300
)

// worstServerStep is the largest server counters a realistic step stores with topWaits wait
// events: every counter and gauge of the bounded set with the widest numbers, topWaits long
// event names, two wait events left out, the counters MariaDB lacks as missing (the longer
// lists: MySQL lacks only two status variables), and an error at each snapshot.
func worstServerStep(topWaits int) serverstats.Step {
	s := serverstats.Step{
		Seconds:           worstDuration + 0.123456,
		Queries:           worstCount * 100_000,
		PerformanceSchema: true,
		MissingStatus: []string{"Innodb_rows_read", "Innodb_rows_inserted", "Innodb_rows_updated",
			"Innodb_rows_deleted", "Innodb_redo_log_current_lsn"},
		MissingInnoDBMetrics: []string{"buffer_flush_batch_total_pages", "trx_rw_commits", "trx_ro_commits",
			"trx_nl_ro_commits", "trx_rollbacks", "dml_reads", "dml_inserts", "dml_updates", "dml_deletes"},
		Errors: []string{
			"start: innodbMetrics: " + strings.Repeat("e", worstServerErrorLen),
			"end: innodbMetrics: not read, it failed at the start",
		},
	}
	add := func(source string, names []string) {
		for _, n := range names {
			if serverstats.IsGauge(n) {
				s.Gauges = append(s.Gauges, serverstats.Gauge{Source: source, Name: n, Value: worstServerCount})
				continue
			}
			s.Counters = append(s.Counters, serverstats.Counter{Source: source, Name: n, Delta: worstServerCount,
				PerSecond: worstServerRate, PerQuery: worstServerRate})
		}
	}
	add(serverstats.SourceStatus, serverstats.StatusNames)
	add(serverstats.SourceInnoDBMetrics, serverstats.InnoDBMetricNames)
	event := func(i int) string {
		e := fmt.Sprintf("wait/synch/mutex/innodb/%02d_", i)
		return e + strings.Repeat("x", worstEventLen-len(e))
	}
	for i := range topWaits {
		s.Waits = append(s.Waits, serverstats.Wait{Event: event(i), Count: worstServerCount,
			SumTimerWait: worstServerCount, SecondsPerSecond: worstServerRate})
	}
	for i := range 2 {
		s.WaitsLeftOut = append(s.WaitsLeftOut, fmt.Sprintf("%s went from %d waits, %d ps to %d waits, %d ps",
			event(topWaits+i), uint64(worstServerCount), uint64(worstServerCount), uint64(worstServerCount), uint64(worstServerCount)))
	}
	return s
}
