package resultsdb

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// HistoryOf is History over records (Build's, of runs kept in files) instead of the database:
// the same selection, series and points, so that a history can be read from exported runs
// without a results database. A schedule needs no namespace here: the records are the ones the
// caller picked, and series of namespaces stay apart.
func HistoryOf(records []*Record, q HistoryQuery) ([]Series, error) {
	metric := cmp.Or(q.Metric, MetricQPS)
	if _, _, _, err := metric.columns(); err != nil {
		return nil, err
	}
	if q.Schedule == "" && q.Target == "" {
		return nil, fmt.Errorf("select a schedule or a target")
	}
	phases := q.Phases
	if len(phases) == 0 {
		phases = []string{"Succeeded"}
	}
	type row struct {
		night                          time.Time
		uid                            string
		ns, schedule, workload, target string
		cellWorkload, unit             string
		threads                        int
		p                              Point
	}
	// The runs some record confirms (namespace/name): a regression is confirmed only when its
	// confirmation run is among the records too, as in the database.
	confirmed := map[string]bool{}
	for _, rec := range records {
		if run, ok := rec.table("runs").only(); ok && run.str("confirmation_of") != "" {
			confirmed[run.str("namespace")+"/"+run.str("confirmation_of")] = true
		}
	}
	var rows []row
	for _, rec := range records {
		run, ok := rec.table("runs").only()
		if !ok {
			continue
		}
		night := cmp.Or(run.time("start_time"), run.time("completion_time"))
		switch {
		case q.Namespace != "" && run.str("namespace") != q.Namespace,
			q.Schedule != "" && run.str("schedule") != q.Schedule,
			!q.Confirmations && run.str("confirmation_of") != "",
			!slices.Contains(phases, run.str("phase")),
			!q.Since.IsZero() && night.Before(q.Since.UTC()):
			continue
		}
		versions, digests := map[string]string{}, map[string]string{}
		for _, t := range rec.table("targets").rows() {
			versions[t.str("name")], digests[t.str("name")] = t.str("server_version"), t.str("image_digest")
		}
		verdict, regressed := "", ""
		if c, ok := rec.table("comparisons").only(); ok {
			verdict, regressed = c.str("verdict"), c.str("regressed_reason")
		}
		targetVerdicts := map[[2]string]string{}
		for _, t := range rec.table("comparison_targets").rows() {
			targetVerdicts[[2]string{t.str("target"), t.str("workload")}] = t.str("verdict")
		}
		for _, c := range rec.table("cells").rows() {
			target, threads := c.str("target"), int(c.num("threads"))
			workload := cmp.Or(c.str("workload"), run.str("workload"))
			if (q.Target != "" && target != q.Target) || (len(q.Threads) > 0 && !slices.Contains(q.Threads, threads)) ||
				(q.Workload != "" && workload != q.Workload) {
				continue
			}
			median, low, high := c.metric(metric)
			if median == nil {
				continue
			}
			p := Point{Run: run.str("name"), UID: run.str("uid"), Start: night, Phase: run.str("phase"),
				ConfirmationOf: run.str("confirmation_of"), ServerVersion: versions[target], ImageDigest: digests[target],
				N: int(c.num("n")), Median: *median, Verdict: verdict, TargetVerdict: targetVerdicts[[2]string{target, c.str("workload")}], RegressedReason: regressed,
				Confirmed: regressed == v1.ReasonRegressed && confirmed[run.str("namespace")+"/"+run.str("name")]}
			if low != nil && high != nil && p.N > 1 {
				p.CILow, p.CIHigh = low, high
			}
			rows = append(rows, row{night: night, uid: p.UID, ns: run.str("namespace"), schedule: run.str("schedule"),
				workload: workload, cellWorkload: c.str("workload"), target: target, unit: run.str("metric"), threads: threads, p: p})
		}
	}
	// The database's order: oldest night first, then run, target, workload and threads.
	slices.SortStableFunc(rows, func(a, b row) int {
		return cmp.Or(a.night.Compare(b.night), cmp.Compare(a.uid, b.uid), cmp.Compare(a.target, b.target),
			cmp.Compare(a.cellWorkload, b.cellWorkload), cmp.Compare(a.threads, b.threads))
	})
	type key struct {
		ns, schedule, workload, target string
		threads                        int
	}
	index := map[key]int{}
	var out []Series
	for _, r := range rows {
		k := key{r.ns, r.schedule, r.workload, r.target, r.threads}
		i, ok := index[k]
		if !ok {
			unit := r.unit
			if metric == MetricP95 {
				unit = "ms"
			}
			i = len(out)
			index[k] = i
			out = append(out, Series{Namespace: r.ns, Schedule: r.schedule, Workload: r.workload, Target: r.target,
				Threads: r.threads, Metric: metric, Unit: unit})
		}
		out[i].Points = append(out[i].Points, r.p)
	}
	return finishSeries(out, q.Nights), nil
}

// SchedulesOf is Schedules over records: the schedules they hold runs of, in namespace ("" for
// all), for a history that found nothing to say what there is.
func SchedulesOf(records []*Record, namespace string) []ScheduleRuns {
	var out []ScheduleRuns
	for _, rec := range records {
		run, ok := rec.table("runs").only()
		if !ok || (namespace != "" && run.str("namespace") != namespace) {
			continue
		}
		night := cmp.Or(run.time("start_time"), run.time("completion_time"))
		i := slices.IndexFunc(out, func(s ScheduleRuns) bool {
			return s.Namespace == run.str("namespace") && s.Schedule == run.str("schedule")
		})
		if i < 0 {
			out = append(out, ScheduleRuns{Namespace: run.str("namespace"), Schedule: run.str("schedule")})
			i = len(out) - 1
		}
		out[i].Runs++
		if night.After(out[i].Newest) {
			out[i].Newest = night
		}
	}
	slices.SortFunc(out, func(a, b ScheduleRuns) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Schedule, b.Schedule))
	})
	return out
}

// recordRow is a row of a record's table, read by column name.
type recordRow struct {
	cols   []string
	values []any
}

type recordTable struct{ t *Table }

func (r *Record) table(name string) recordTable {
	for i := range r.Tables {
		if r.Tables[i].Name == name {
			return recordTable{&r.Tables[i]}
		}
	}
	return recordTable{}
}

func (t recordTable) rows() []recordRow {
	if t.t == nil {
		return nil
	}
	out := make([]recordRow, len(t.t.Rows))
	for i, r := range t.t.Rows {
		out[i] = recordRow{cols: t.t.Columns, values: r}
	}
	return out
}

func (t recordTable) only() (recordRow, bool) {
	rows := t.rows()
	if len(rows) != 1 {
		return recordRow{}, false
	}
	return rows[0], true
}

func (r recordRow) get(col string) any {
	if i := slices.Index(r.cols, col); i >= 0 && i < len(r.values) {
		return r.values[i]
	}
	return nil
}

// str is a text column, "" for NULL.
func (r recordRow) str(col string) string {
	s, _ := r.get(col).(string)
	return s
}

// num is a numeric column as Build writes them (ints of several sizes, floats), 0 for NULL.
func (r recordRow) num(col string) float64 {
	f, _ := number(r.get(col))
	return f
}

func (r recordRow) time(col string) time.Time {
	t, _ := r.get(col).(time.Time)
	return t
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// metric is a cells row's median and interval bounds of m (nil for NULL), as Metric.columns
// selects them in SQL.
func (r recordRow) metric(m Metric) (median, low, high *float64) {
	ptr := func(col string) *float64 {
		if f, ok := number(r.get(col)); ok {
			return &f
		}
		return nil
	}
	switch m {
	case MetricTpmC:
		return ptr("tpmc_median"), ptr("tpmc_ci_low"), ptr("tpmc_ci_high")
	case MetricP95:
		return ptr("p95_ms_median"), ptr("p95_ms_ci_low"), ptr("p95_ms_ci_high")
	}
	if q := ptr("qps_median"); q != nil {
		return q, ptr("qps_ci_low"), ptr("qps_ci_high")
	}
	return ptr("tpmc_median"), ptr("tpmc_ci_low"), ptr("tpmc_ci_high")
}
