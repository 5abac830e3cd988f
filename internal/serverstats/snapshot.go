package serverstats

import (
	"encoding/json"
	"fmt"
)

// Where in a run step the reporter took a snapshot (Snapshot.At).
const (
	// AtStart is taken in sysbench's init(): before the worker threads connect.
	AtStart = "start"
	// AtEnd is taken in sysbench's done(): after the worker threads disconnected and the final
	// report was printed.
	AtEnd = "end"
)

// StatusNames is the bounded set of SHOW GLOBAL STATUS variables a snapshot reads (the reporter,
// internal/sysbench/reporter.lua, has the same list). See the package documentation for which
// flavour lacks which. Threads_running and Threads_connected are gauges (IsGauge); every other one
// counts since the server started. Rows_read and Handler_read_key stand in for the Innodb_rows_*
// counters MariaDB lacks; Innodb_redo_log_current_lsn (MySQL 8.0.30+) and Innodb_lsn_current
// (MariaDB) are the redo log position, whose delta is the redo bytes written, for servers whose
// Innodb_os_log_written is gone or stays 0.
var StatusNames = []string{
	"Questions", "Queries",
	"Com_select", "Com_insert", "Com_update", "Com_delete",
	"Com_begin", "Com_commit", "Com_rollback",
	"Innodb_rows_read", "Innodb_rows_inserted", "Innodb_rows_updated",
	"Innodb_rows_deleted", "Rows_read",
	"Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_requests",
	"Innodb_buffer_pool_pages_flushed",
	"Innodb_data_fsyncs", "Innodb_data_reads", "Innodb_data_writes",
	"Innodb_os_log_written", "Innodb_redo_log_current_lsn", "Innodb_lsn_current",
	"Innodb_log_waits", "Innodb_row_lock_waits", "Innodb_row_lock_time",
	"Threads_running", "Threads_connected",
	"Created_tmp_disk_tables", "Created_tmp_tables",
	"Select_scan", "Sort_merge_passes", "Handler_read_rnd_next",
	"Handler_read_key",
	"Bytes_received", "Bytes_sent", "Slow_queries",
}

// InnoDBMetricNames are the information_schema.INNODB_METRICS counters a snapshot reads where
// they are enabled (the reporter has the same list). Reading them needs the PROCESS privilege.
// trx_rseg_history_len (the purge backlog) is a gauge; the others are counters.
var InnoDBMetricNames = []string{
	"lock_deadlocks", "lock_timeouts", "lock_row_lock_waits",
	"lock_row_lock_time",
	"buffer_pool_wait_free", "buffer_flush_batch_total_pages",
	"buffer_LRU_batch_flush_total_pages",
	"log_waits", "log_write_requests", "log_writes",
	"os_log_bytes_written", "os_data_fsyncs",
	"innodb_dblwr_writes", "innodb_dblwr_pages_written",
	"trx_rw_commits", "trx_ro_commits", "trx_nl_ro_commits", "trx_rollbacks",
	"dml_reads", "dml_inserts", "dml_updates", "dml_deletes",
	"trx_rseg_history_len",
}

// Snapshot is one "server" line of the sysbench reporter (load.Output.Server): the server's
// counters at the start or the end of a run step, read with the benchmark account. Every count is
// the server's own number, cumulative since it started (or since FLUSH STATUS), and exact: the
// reporter copies the server's digits into the JSON and they are decoded as uint64. A section the
// reporter could not read is nil, and Errors says why.
type Snapshot struct {
	// Version is the reporter's format version (sysbench.FormatVersion).
	Version int `json:"version"`
	// At is AtStart or AtEnd.
	At string `json:"at"`
	// UnixTime is when SHOW GLOBAL STATUS was sent, in seconds since the epoch (microseconds;
	// whole seconds if the reporter could not read a finer clock).
	UnixTime float64 `json:"unixTime"`
	// DurationMs is how long the snapshot took, connecting included.
	DurationMs float64 `json:"durationMs"`
	// Server is the server's version (the version variable), empty when it could not be read.
	Server string `json:"server,omitempty"`
	// Status are the variables of StatusNames that the server has.
	Status map[string]uint64 `json:"status,omitempty"`
	// InnoDBMetrics are the enabled metrics of InnoDBMetricNames.
	InnoDBMetrics map[string]uint64 `json:"innodbMetrics,omitempty"`
	// PerformanceSchema is whether performance_schema was ON. Waits are only read when it is.
	PerformanceSchema bool `json:"performanceSchema"`
	// Waits are every wait event with a count, but idle, from
	// performance_schema.events_waits_summary_global_by_event_name.
	Waits []WaitTotal `json:"waits,omitempty"`
	// Errors say why a section is missing (a privilege, an old server without the table), one
	// short message each; they never fail the step.
	Errors []string `json:"errors,omitempty"`

	// errorsLeftOut counts the errors AddError did not keep.
	errorsLeftOut int
}

// WaitTotal is one wait event's totals since the server started. In the reporter's line it is
// the array [event, count, sumTimerWait].
type WaitTotal struct {
	// Event is the EVENT_NAME, e.g. wait/synch/mutex/innodb/buf_pool_mutex.
	Event string
	// Count is COUNT_STAR: how many waits were timed.
	Count uint64
	// SumTimerWait is SUM_TIMER_WAIT: their total wait time in picoseconds.
	SumTimerWait uint64
}

// UnmarshalJSON reads [event, count, sumTimerWait]. The counts must be integers that fit in a
// uint64; they are never read through a float64.
func (w *WaitTotal) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("wait: %w", err)
	}
	if len(raw) != 3 {
		return fmt.Errorf("wait: %d elements, want [event, count, sumTimerWait]", len(raw))
	}
	var v WaitTotal
	if err := json.Unmarshal(raw[0], &v.Event); err != nil {
		return fmt.Errorf("wait event: %w", err)
	}
	if err := json.Unmarshal(raw[1], &v.Count); err != nil {
		return fmt.Errorf("wait %s count: %w", v.Event, err)
	}
	if err := json.Unmarshal(raw[2], &v.SumTimerWait); err != nil {
		return fmt.Errorf("wait %s sumTimerWait: %w", v.Event, err)
	}
	*w = v
	return nil
}

// MarshalJSON writes the reporter's form, [event, count, sumTimerWait].
func (w WaitTotal) MarshalJSON() ([]byte, error) {
	return json.Marshal([]any{w.Event, w.Count, w.SumTimerWait})
}
