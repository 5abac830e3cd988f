package resultsdb_test

// The chart's history dashboard (charts/mysqlbench-operator/files/grafana) reads the results
// database with raw SQL: every query of its panels, annotations and variables runs here against
// a real MariaDB filled by Write, with Grafana's macros and the variables replaced as Grafana
// replaces them, so that a renamed column breaks this test instead of emptying a panel.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/resultsdb"
)

const historyDashboard = "../../charts/mysqlbench-operator/files/grafana/mysqlbench-history-dashboard.json"

// datasourceRef is how every query names its data source: the dashboard's variable, never a
// data source's uid (which differs in every Grafana).
var datasourceRef = map[string]any{"type": "mysql", "uid": "${datasource}"}

// sqlQuery is one rawSql of the dashboard and what Grafana expects of its result.
type sqlQuery struct {
	where  string
	format string // time_series, table, annotation or variable
	sql    string
}

// dashboardQueries walks the dashboard's JSON for every rawSql (panels' targets, annotations) and
// the variables' queries, and checks each one's data source on the way.
func dashboardQueries(t *testing.T) ([]sqlQuery, map[string]any) {
	t.Helper()
	data, err := os.ReadFile(historyDashboard)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", historyDashboard, err)
	}
	checkDS := func(where string, v any) {
		ds, _ := v.(map[string]any)
		if fmt.Sprint(ds) != fmt.Sprint(datasourceRef) {
			t.Errorf("%s: datasource %v, want %v", where, v, datasourceRef)
		}
	}
	var qs []sqlQuery
	var panels func(list []any)
	panels = func(list []any) {
		for _, p := range list {
			p := p.(map[string]any)
			title := fmt.Sprint(p["title"])
			if p["type"] != "row" {
				checkDS("panel "+title, p["datasource"])
			}
			targets, _ := p["targets"].([]any)
			for _, tg := range targets {
				tg := tg.(map[string]any)
				where := fmt.Sprintf("panel %q query %v", title, tg["refId"])
				checkDS(where, tg["datasource"])
				qs = append(qs, sqlQuery{where, fmt.Sprint(tg["format"]), fmt.Sprint(tg["rawSql"])})
			}
			if sub, ok := p["panels"].([]any); ok {
				panels(sub)
			}
		}
	}
	panels(d["panels"].([]any))
	for _, a := range d["annotations"].(map[string]any)["list"].([]any) {
		a := a.(map[string]any)
		where := fmt.Sprintf("annotation %q", a["name"])
		checkDS(where, a["datasource"])
		tg := a["target"].(map[string]any)
		checkDS(where+" target", tg["datasource"])
		qs = append(qs, sqlQuery{where, "annotation", fmt.Sprint(tg["rawSql"])})
	}
	for _, v := range d["templating"].(map[string]any)["list"].([]any) {
		v := v.(map[string]any)
		if v["type"] == "datasource" {
			if v["query"] != "mysql" {
				t.Errorf("variable %v: a data source variable of type %v, want mysql", v["name"], v["query"])
			}
			continue
		}
		where := fmt.Sprintf("variable %q", v["name"])
		checkDS(where, v["datasource"])
		qs = append(qs, sqlQuery{where, "variable", fmt.Sprint(v["query"])})
	}
	return qs, d
}

// grafanaMacro is a macro of Grafana's MySQL data source, as the dashboard may use them.
var grafanaMacro = regexp.MustCompile(`\$__\w+(\([^)]*\))?`)

// interpolate replaces the macros (over a time range that holds the fixture's nights) and the
// variables as Grafana's MySQL data source does: a single value as it is (the SQL quotes it),
// a multi-value variable as a list of quoted values.
func interpolate(t *testing.T, sql string, vars map[string][]string, multi map[string]bool) string {
	t.Helper()
	sql = grafanaMacro.ReplaceAllStringFunc(sql, func(m string) string {
		name, arg, _ := strings.Cut(m, "(")
		arg = strings.TrimSuffix(arg, ")")
		switch name {
		case "$__timeFilter":
			return arg + " BETWEEN '2026-10-01 00:00:00' AND '2027-01-01 00:00:00'"
		}
		t.Errorf("macro %s: the test does not know it (add it to interpolate)", m)
		return m
	})
	for name, values := range vars {
		v := values[0]
		if multi[name] {
			quoted := make([]string, len(values))
			for i, x := range values {
				quoted[i] = "'" + x + "'"
			}
			v = strings.Join(quoted, ",")
		}
		sql = strings.ReplaceAll(sql, "${"+name+"}", v)
		sql = strings.ReplaceAll(sql, "$"+name, v)
	}
	if strings.Contains(sql, "$") {
		t.Errorf("left uninterpolated: %s", sql)
	}
	return sql
}

func TestHistoryDashboardQueries(t *testing.T) {
	qs, d := dashboardQueries(t)
	if d["uid"] != "mysqlbench-history" || d["id"] != nil {
		t.Errorf("uid %v id %v: want uid mysqlbench-history and no id", d["uid"], d["id"])
	}
	multi := map[string]bool{}
	var names []string
	for _, v := range d["templating"].(map[string]any)["list"].([]any) {
		v := v.(map[string]any)
		names = append(names, fmt.Sprint(v["name"]))
		multi[fmt.Sprint(v["name"])] = v["multi"] == true
	}
	if want := []string{"datasource", "namespace", "schedule", "target", "workload", "threads"}; !slices.Equal(names, want) {
		t.Errorf("variables %v, want %v", names, want)
	}
	if !multi["target"] {
		t.Errorf("variable target is not multi-valued")
	}

	_, cfg := database(t)
	w := open(t, cfg, resultsdb.OpenOptions{})
	for i := range 5 {
		verdict := v1.VerdictNoRegression
		switch i {
		case 0:
			verdict = v1.VerdictNoBaseline
		case 3:
			verdict = v1.VerdictRegressed
		}
		write(t, w, nightly(t, "nightly", i, 1, verdict, func(r *v1.BenchmarkRun) {
			if i >= 3 {
				r.Status.Targets[0].ServerVersion = "11.8.4-MariaDB-deb13"
			}
		}))
	}
	vars := map[string][]string{"namespace": {"bench"}, "schedule": {"nightly"}, "target": {"mariadb-0", "mariadb-1"},
		"threads": {"1", "2"}, "workload": {""}}
	// Columns of the table panels, by the start of where.
	tables := map[string][]string{
		`panel "Server versions side by side"`:       {"version", "threads", "qps"},
		`panel "Server versions: nights and levels"`: {"target", "version", "threads", "nights", "mean_qps", "min_qps", "max_qps", "mean_p95_ms", "first_night", "last_night"},
		`panel "Verdicts"`:                           {"time", "run", "verdict", "baseline", "regressed_cells", "compared_cells", "message"},
	}
	kinds := map[string]int{}
	ctx := context.Background()
	for _, q := range qs {
		kinds[q.format]++
		sql := interpolate(t, q.sql, vars, multi)
		rows, err := w.DB().QueryContext(ctx, sql)
		if err != nil {
			t.Errorf("%s: %v\n%s", q.where, err, sql)
			continue
		}
		cols, _ := rows.Columns()
		n := 0
		for rows.Next() {
			n++
		}
		if err := rows.Err(); err != nil {
			t.Errorf("%s: %v", q.where, err)
		}
		_ = rows.Close()
		if n == 0 {
			t.Errorf("%s returned no rows:\n%s", q.where, sql)
		}
		var want []string
		switch q.format {
		case "time_series":
			want = []string{"time", "metric", "value"}
		case "annotation":
			want = []string{"time", "text", "tags"}
		case "variable":
			if len(cols) != 1 {
				t.Errorf("%s: columns %v, want one (the values)", q.where, cols)
			}
			continue
		case "table":
			for prefix, c := range tables {
				if strings.HasPrefix(q.where, prefix+" ") {
					want = c
				}
			}
		default:
			t.Errorf("%s: format %q, want time_series or table", q.where, q.format)
		}
		if !slices.Equal(cols, want) {
			t.Errorf("%s: columns %v, want %v", q.where, cols, want)
		}
	}
	for kind, least := range map[string]int{"time_series": 2, "table": 3, "annotation": 2, "variable": 4} {
		if kinds[kind] < least {
			t.Errorf("%d queries of kind %s, want at least %d", kinds[kind], kind, least)
		}
	}

	// The versions panel sets the two versions of mariadb-0 side by side.
	sql := ""
	for _, q := range qs {
		if strings.HasPrefix(q.where, `panel "Server versions side by side"`) {
			sql = interpolate(t, q.sql, vars, multi)
		}
	}
	var versions int
	if err := w.DB().QueryRow("SELECT COUNT(DISTINCT version) FROM (" + sql + ") v WHERE version LIKE 'mariadb-0 %'").Scan(&versions); err != nil || versions != 2 {
		t.Errorf("mariadb-0's versions side by side: %d (%v), want 2", versions, err)
	}
	// The regressions annotation marks the regressed night only.
	for _, q := range qs {
		if q.where != `annotation "Regressions"` {
			continue
		}
		var n int
		var text, tags string
		if err := w.DB().QueryRow("SELECT COUNT(*), MAX(text), MAX(tags) FROM ("+interpolate(t, q.sql, vars, multi)+") a").Scan(&n, &text, &tags); err != nil ||
			n != 1 || text != "nightly-03: Regressed - fixture Regressed" || tags != "mysqlbench,Regressed,nightly" {
			t.Errorf("regressions: %d %q %q (%v)", n, text, tags, err)
		}
	}
}
