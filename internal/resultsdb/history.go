package resultsdb

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// Metric is the number of a cell a history follows.
type Metric string

const (
	// MetricQPS is the throughput: the median QPS, or tpmC for a run of go-tpc (whose cells have no
	// QPS), as the plugin's plot calls both qps.
	MetricQPS Metric = "qps"
	// MetricTpmC is go-tpc's tpmC only.
	MetricTpmC Metric = "tpmC"
	// MetricP95 is the median of the steps' 95th percentile latency, in milliseconds.
	MetricP95 Metric = "p95"
)

// Metrics are the metrics History follows, in the order help texts list them.
var Metrics = []Metric{MetricQPS, MetricTpmC, MetricP95}

// HigherIsBetter says which direction of a change is a regression.
func (m Metric) HigherIsBetter() bool { return m != MetricP95 }

// columns is the metric's median, interval bounds in cells (as SQL expressions over alias c).
func (m Metric) columns() (median, low, high string, err error) {
	switch m {
	case MetricQPS:
		return "COALESCE(c.qps_median, c.tpmc_median)",
			"IF(c.qps_median IS NULL, c.tpmc_ci_low, c.qps_ci_low)",
			"IF(c.qps_median IS NULL, c.tpmc_ci_high, c.qps_ci_high)", nil
	case MetricTpmC:
		return "c.tpmc_median", "c.tpmc_ci_low", "c.tpmc_ci_high", nil
	case MetricP95:
		return "c.p95_ms_median", "c.p95_ms_ci_low", "c.p95_ms_ci_high", nil
	}
	return "", "", "", fmt.Errorf("unknown metric %q: use one of qps, tpmC, p95", string(m))
}

// HistoryQuery selects the cells of History: those of a schedule (Namespace and Schedule), or
// those of a target by name (Target, in Namespace when set, else in every namespace), or both.
type HistoryQuery struct {
	Namespace string
	Schedule  string
	Target    string
	// Workload keeps only the series of this workload (Series.Workload: a named workload of a
	// run of several, or the workload of a run of one; "": all).
	Workload string
	// Threads keeps only these thread counts (none: all).
	Threads []int
	// Metric is what the series hold; "" is MetricQPS.
	Metric Metric
	// Since keeps the runs that started at or after it (zero: all).
	Since time.Time
	// Nights keeps the newest this many points of each series (0: all).
	Nights int
	// Confirmations includes the confirmation runs, whose cells re-measure a night already in
	// the series (and would count it twice).
	Confirmations bool
	// Phases are the run phases to include; none means Succeeded only (a failed run's cells are
	// the steps it got to, not comparable with a whole night's).
	Phases []string
}

// Series is one cell (a target at a thread count) of one schedule and workload over runs,
// oldest first. A target's cells in different schedules or workloads are different series: their
// numbers measure different things.
type Series struct {
	Namespace string `json:"namespace"`
	// Schedule is empty for runs no schedule made.
	Schedule string `json:"schedule,omitempty"`
	// Workload is the cell's workload: its name in a run of several workloads, else the run's
	// one workload (its script, custom script or load type).
	Workload string `json:"workload"`
	Target   string `json:"target"`
	Threads  int    `json:"threads"`
	// Metric is what Median holds; Unit the runs' throughput metric (qps, or tpmC for go-tpc) for
	// MetricQPS, "ms" for MetricP95.
	Metric Metric  `json:"metric"`
	Unit   string  `json:"unit"`
	Points []Point `json:"points"`
}

// Point is a cell of one run.
type Point struct {
	Run   string    `json:"run"`
	UID   string    `json:"uid"`
	Start time.Time `json:"start"`
	Phase string    `json:"phase"`
	// ConfirmationOf is the run this one confirmed (only with HistoryQuery.Confirmations).
	ConfirmationOf string `json:"confirmationOf,omitempty"`
	ServerVersion  string `json:"serverVersion,omitempty"`
	ImageDigest    string `json:"imageDigest,omitempty"`
	// N is how many repetitions the cell has; CILow and CIHigh bound its median when it has an
	// interval (several repetitions).
	N      int      `json:"n"`
	Median float64  `json:"median"`
	CILow  *float64 `json:"ciLow,omitempty"`
	CIHigh *float64 `json:"ciHigh,omitempty"`
	// Verdict is the run's comparison with its baseline, TargetVerdict the target's in it; both
	// empty when the run was not compared.
	Verdict       string `json:"verdict,omitempty"`
	TargetVerdict string `json:"targetVerdict,omitempty"`
	// RegressedReason is the reason of the run's Regressed condition when it was stored: whether
	// a Regressed verdict was confirmed (Regressed), not confirmed, awaits confirmation, or
	// alarms unconfirmed. Empty when the run had no such condition.
	RegressedReason string `json:"regressedReason,omitempty"`
	// Confirmed says that a confirmation run of this run is stored and the run's Regressed
	// condition says Regressed: the regression was found again (without a confirmation run the
	// same reason means confirmation was off).
	Confirmed bool `json:"confirmed,omitempty"`
}

// History reads the series q selects, ordered by namespace, schedule, workload, target and
// threads. It returns no series (and no error) when nothing matches; Schedules says what there is.
func (s *Store) History(ctx context.Context, q HistoryQuery) ([]Series, error) {
	query, args, err := historySQL(q)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read the history from %s: %w", Describe(s.cfg), err)
	}
	defer func() { _ = rows.Close() }()
	metric := cmp.Or(q.Metric, MetricQPS)
	type key struct {
		ns, schedule, workload, target string
		threads                        int
	}
	index := map[key]int{}
	var out []Series
	for rows.Next() {
		var (
			p                                       Point
			ns, workload, target, unit              string
			schedule, confirmation, version, digest sql.NullString
			verdict, targetVerdict, regressed       sql.NullString
			confirmations                           int
			low, high                               sql.NullFloat64
			threads                                 int
		)
		if err := rows.Scan(&p.UID, &p.Run, &ns, &schedule, &confirmation, &p.Phase, &workload, &unit, &p.Start,
			&target, &version, &digest, &threads, &p.N, &p.Median, &low, &high, &verdict, &targetVerdict, &regressed, &confirmations); err != nil {
			return nil, fmt.Errorf("read the history from %s: %w", Describe(s.cfg), err)
		}
		p.ConfirmationOf, p.ServerVersion, p.ImageDigest = confirmation.String, version.String, digest.String
		p.Verdict, p.TargetVerdict, p.RegressedReason = verdict.String, targetVerdict.String, regressed.String
		p.Confirmed = p.RegressedReason == v1.ReasonRegressed && confirmations > 0
		if low.Valid && high.Valid && p.N > 1 {
			p.CILow, p.CIHigh = &low.Float64, &high.Float64
		}
		k := key{ns, schedule.String, workload, target, threads}
		i, ok := index[k]
		if !ok {
			if metric == MetricP95 {
				unit = "ms"
			}
			i = len(out)
			index[k] = i
			out = append(out, Series{Namespace: ns, Schedule: schedule.String, Workload: workload, Target: target,
				Threads: threads, Metric: metric, Unit: unit})
		}
		out[i].Points = append(out[i].Points, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the history from %s: %w", Describe(s.cfg), err)
	}
	return finishSeries(out, q.Nights), nil
}

// historySQL is History's query: one row per cell, oldest run first. A run's time is its start,
// else (a run that never started its first step) its completion.
func historySQL(q HistoryQuery) (string, []any, error) {
	median, low, high, err := cmp.Or(q.Metric, MetricQPS).columns()
	if err != nil {
		return "", nil, err
	}
	if q.Schedule == "" && q.Target == "" {
		return "", nil, errors.New("select a schedule or a target")
	}
	if q.Schedule != "" && q.Namespace == "" {
		return "", nil, fmt.Errorf("schedule %s: name its namespace too (schedules are namespaced)", q.Schedule)
	}
	var where []string
	var args []any
	add := func(cond string, a ...any) {
		where = append(where, cond)
		args = append(args, a...)
	}
	if q.Namespace != "" {
		add("r.namespace = ?", q.Namespace)
	}
	if q.Schedule != "" {
		add("r.schedule = ?", q.Schedule)
	}
	if q.Target != "" {
		add("c.target = ?", q.Target)
	}
	if q.Workload != "" {
		add(seriesWorkload+" = ?", q.Workload)
	}
	if len(q.Threads) > 0 {
		in := make([]string, len(q.Threads))
		for i, t := range q.Threads {
			in[i] = "?"
			args = append(args, t)
		}
		where = append(where, "c.threads IN ("+strings.Join(in, ", ")+")")
	}
	if !q.Since.IsZero() {
		add("COALESCE(r.start_time, r.completion_time) >= ?", q.Since.UTC())
	}
	if !q.Confirmations {
		where = append(where, "r.confirmation_of IS NULL")
	}
	phases := q.Phases
	if len(phases) == 0 {
		phases = []string{"Succeeded"}
	}
	in := make([]string, len(phases))
	for i, p := range phases {
		in[i] = "?"
		args = append(args, p)
	}
	where = append(where, "r.phase IN ("+strings.Join(in, ", ")+")", median+" IS NOT NULL")
	query := `SELECT r.uid, r.name, r.namespace, r.schedule, r.confirmation_of, r.phase, ` + seriesWorkload + `, r.metric,
  COALESCE(r.start_time, r.completion_time, r.stored_at) AS night,
  c.target, t.server_version, t.image_digest, c.threads, c.n, ` + median + `, ` + low + `, ` + high + `,
  cmp.verdict, ct.verdict, cmp.regressed_reason,
  (SELECT COUNT(*) FROM runs cr WHERE cr.namespace = r.namespace AND cr.confirmation_of = r.name) AS confirmations
FROM runs r
JOIN cells c ON c.run_uid = r.uid
LEFT JOIN targets t ON t.run_uid = c.run_uid AND t.name = c.target
LEFT JOIN comparisons cmp ON cmp.run_uid = r.uid
LEFT JOIN comparison_targets ct ON ct.run_uid = c.run_uid AND ct.target = c.target AND ct.workload = c.workload
WHERE ` + strings.Join(where, "\n  AND ") + `
ORDER BY night, r.uid, c.target, c.workload, c.threads`
	return query, args, nil
}

// seriesWorkload is Series.Workload in SQL: the cell's workload name, else the run's workload.
const seriesWorkload = "IF(c.workload = '', r.workload, c.workload)"

// ScheduleRuns is a schedule of a namespace and how many runs the database holds of it.
type ScheduleRuns struct {
	Namespace string
	// Schedule is empty for the runs no schedule made.
	Schedule string
	Runs     int
	Newest   time.Time
}

// Schedules lists the schedules the database holds runs of, in namespace ("" for all), so that
// a query that found nothing can say what there is.
func (s *Store) Schedules(ctx context.Context, namespace string) ([]ScheduleRuns, error) {
	query := `SELECT namespace, COALESCE(schedule, ''), COUNT(*), MAX(COALESCE(start_time, completion_time, stored_at))
FROM runs`
	var args []any
	if namespace != "" {
		query += " WHERE namespace = ?"
		args = append(args, namespace)
	}
	query += " GROUP BY namespace, COALESCE(schedule, '') ORDER BY 1, 2"
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list the schedules in %s: %w", Describe(s.cfg), err)
	}
	defer func() { _ = rows.Close() }()
	var out []ScheduleRuns
	for rows.Next() {
		var r ScheduleRuns
		if err := rows.Scan(&r.Namespace, &r.Schedule, &r.Runs, &r.Newest); err != nil {
			return nil, fmt.Errorf("list the schedules in %s: %w", Describe(s.cfg), err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Describe names the store's server and database without the password.
func (s *Store) Describe() string { return Describe(s.cfg) }

// finishSeries orders series by namespace, schedule, workload, target and threads, and keeps the
// newest nights points of each (all when nights is 0): the database's query and the exported
// records answer alike.
func finishSeries(out []Series, nights int) []Series {
	slices.SortFunc(out, func(a, b Series) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Schedule, b.Schedule),
			cmp.Compare(a.Workload, b.Workload), cmp.Compare(a.Target, b.Target), cmp.Compare(a.Threads, b.Threads))
	})
	if nights > 0 {
		for i := range out {
			if n := len(out[i].Points); n > nights {
				out[i].Points = out[i].Points[n-nights:]
			}
		}
	}
	return out
}
