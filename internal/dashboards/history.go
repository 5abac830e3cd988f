package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/barchart"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

var mysqlDS = dsRef(mysqlPluginID)

// The SQL below reads the results database's schema (internal/resultsdb/migrations);
// internal/resultsdb's dashboard test runs every query against it.

// nights is the filter of a cell's nights: the schedule's successful runs in the time range,
// confirmation runs left out, and the cells of the picked targets and thread counts.
const nights = `WHERE $__timeFilter(r.start_time)
  AND r.namespace = '$namespace' AND r.schedule = '$schedule'
  AND c.target IN ($target) AND c.workload IN ($workload) AND c.threads IN ($threads)
  AND r.phase = 'Succeeded' AND r.confirmation_of IS NULL`

// ofWorkload names a cell's workload after its target in a run of several (" rw"), nothing in
// a run of one: a suite's cells of one target and thread count are different series.
const ofWorkload = `IF(c.workload = '', '', CONCAT(' ', c.workload))`

const runCells = `FROM runs r
JOIN cells c ON c.run_uid = r.uid
`

// ciHalf is one half of a cell's interval of the median over nights: the series "<cell> CI low"
// (or high) of value, of cells with repetitions only.
func ciHalf(half, value string) string {
	return `SELECT r.start_time AS time,
  CONCAT(c.target, ` + ofWorkload + `, ' @', c.threads, ' CI ` + half + `') AS metric,
  ` + value + ` AS value
` + runCells + nights + `
  AND c.n > 1 AND ` + value + ` IS NOT NULL`
}

// medianSQL is a cell's median over nights, one series per target and thread count.
func medianSQL(value string) string {
	return `SELECT r.start_time AS time,
  CONCAT(c.target, ` + ofWorkload + `, ' @', c.threads) AS metric,
  ` + value + ` AS value
` + runCells + nights + `
  AND ` + value + ` IS NOT NULL
ORDER BY 1`
}

func ciSQL(low, high string) string {
	return ciHalf("low", low) + "\nUNION ALL\n" + ciHalf("high", high) + "\nORDER BY 1"
}

// verdictsSQL is the annotation of the schedule's comparisons whose verdict matches cond.
func verdictsSQL(cond string) string {
	return `SELECT r.completion_time AS time,
  CONCAT(r.name, ': ', cmp.verdict, COALESCE(CONCAT(' - ', cmp.message), '')) AS text,
  CONCAT_WS(',', 'mysqlbench', cmp.verdict, r.schedule) AS tags
FROM comparisons cmp
JOIN runs r ON r.uid = cmp.run_uid
WHERE $__timeFilter(r.completion_time)
  AND r.namespace = '$namespace' AND r.schedule = '$schedule'
  AND ` + cond + `
ORDER BY 1`
}

func sql(refID string, format MySQLFormat, rawSQL string) *MySQLQueryBuilder {
	return NewMySQLQueryBuilder(rawSQL).Datasource(mysqlDS).RefId(refID).Format(format)
}

// overNights is a timeseries of a cell's medians over nights, its interval dashed beside it.
func overNights(id uint32, title, description string, pos dashboard.GridPos, unit, axisLabel, median, ci string) *timeseries.PanelBuilder {
	return timeseries.NewPanelBuilder().Id(id).Title(title).Description(description).Datasource(mysqlDS).GridPos(pos).
		WithTarget(sql("A", MySQLFormatTimeSeries, median)).
		WithTarget(sql("B", MySQLFormatTimeSeries, ci)).
		Unit(unit).ColorScheme(palette()).
		AxisLabel(axisLabel).DrawStyle(common.GraphDrawStyleLine).LineWidth(2).ShowPoints(common.VisibilityModeAlways).PointSize(5).
		SpanNulls(common.BoolOrFloat64{Bool: ptr(false)}).FillOpacity(0).
		OverrideByRegexp(".* (CI low|CI high)$", []dashboard.DynamicConfigValue{
			property("custom.lineStyle", map[string]any{"fill": "dash", "dash": []any{4, 4}}),
			property("custom.lineWidth", 1),
			property("custom.showPoints", "never"),
			// In the tooltip, not the legend: the legend's last values are the medians'.
			property("custom.hideFrom", map[string]any{"legend": true, "tooltip": false, "viz": false}),
		}).
		Legend(legend(common.LegendDisplayModeTable, common.LegendPlacementRight, "lastNotNull")).Tooltip(tooltip(common.SortOrderDescending))
}

func sqlVar(name, label, description, query string, sort dashboard.VariableSort) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).Label(label).Description(description).Datasource(mysqlDS).
		Query(str(query)).Definition(query).Refresh(dashboard.VariableRefreshOnTimeRangeChanged).Regex("").
		Sort(sort).Multi(false).IncludeAll(false).Hide(dashboard.VariableHideDontHide).Options([]dashboard.VariableOption{})
}

// History is the dashboard over the results database: a schedule's cells over nights, its
// server versions side by side, and its verdicts.
func History() (dashboard.Dashboard, error) {
	b := dashboard.NewDashboardBuilder("mysqlbench history").Uid("mysqlbench-history").
		Description("The operator's results database (a MySQL data source): a schedule's cells over nights with their intervals, server versions side by side, and the runs' verdicts as annotations.").
		Tags([]string{"mysqlbench", "mysql", "history"}).
		Version(1).Editable().Tooltip(dashboard.DashboardCursorSyncCrosshair).FiscalYearStartMonth(0).LiveNow(false).
		Timezone("browser").WeekStart("").Refresh("").Time("now-90d", "now")

	b.WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").
		Description("The operator's results database (a MySQL data source).").Type(mysqlPluginID).Regex("").
		Hide(dashboard.VariableHideDontHide).Multi(false).IncludeAll(false))
	b.WithVariable(sqlVar("namespace", "Namespace", "Namespace of the BenchmarkSchedules.",
		"SELECT DISTINCT namespace FROM runs WHERE schedule IS NOT NULL ORDER BY 1", dashboard.VariableSortAlphabeticalAsc))
	b.WithVariable(sqlVar("schedule", "Schedule", "A BenchmarkSchedule with runs in the database.",
		"SELECT DISTINCT schedule FROM runs WHERE namespace = '$namespace' AND schedule IS NOT NULL ORDER BY 1", dashboard.VariableSortAlphabeticalAsc))
	b.WithVariable(sqlVar("target", "Target", "Targets (servers) of the schedule's runs.",
		"SELECT DISTINCT c.target FROM cells c JOIN runs r ON r.uid = c.run_uid\nWHERE r.namespace = '$namespace' AND r.schedule = '$schedule' ORDER BY 1",
		dashboard.VariableSortAlphabeticalAsc).Multi(true).IncludeAll(true))
	b.WithVariable(sqlVar("workload", "Workload", "Workloads of the schedule's runs, for a schedule of several (spec.workloads, spec.preset); "+
		"a schedule of one workload has one, empty.",
		"SELECT DISTINCT c.workload FROM cells c JOIN runs r ON r.uid = c.run_uid\nWHERE r.namespace = '$namespace' AND r.schedule = '$schedule' ORDER BY 1",
		dashboard.VariableSortAlphabeticalAsc).Multi(true).IncludeAll(true))
	b.WithVariable(sqlVar("threads", "Threads", "Thread counts of the schedule's ladder.",
		"SELECT DISTINCT c.threads FROM cells c JOIN runs r ON r.uid = c.run_uid\nWHERE r.namespace = '$namespace' AND r.schedule = '$schedule' ORDER BY 1",
		dashboard.VariableSortNumericalAsc).Multi(true).IncludeAll(true))

	b.Annotation(dashboard.NewAnnotationQueryBuilder().Name("Regressions").Datasource(mysqlDS).Enable(true).Hide(false).IconColor("red").
		Target(sql("Anno", MySQLFormatTable, verdictsSQL("cmp.verdict = 'Regressed'"))))
	b.Annotation(dashboard.NewAnnotationQueryBuilder().Name("Other verdicts").Datasource(mysqlDS).Enable(true).Hide(false).IconColor("blue").
		Target(sql("Anno", MySQLFormatTable, verdictsSQL("cmp.verdict <> 'Regressed'"))))

	b.WithPanel(overNights(1, "Throughput of a cell over nights",
		"Each night's median QPS (tpmC for go-tpc runs) of the cells of $target at $threads threads, with the interval of the median (dashed: CI low and high, for runs with repetitions). The schedule's successful runs, confirmation runs left out; verdicts are annotations (red: regressed).",
		grid(10, 24, 0, 0), "short", "queries/s (tpmC)",
		medianSQL("COALESCE(c.qps_median, c.tpmc_median)"),
		ciSQL("IF(c.qps_median IS NULL, c.tpmc_ci_low, c.qps_ci_low)", "IF(c.qps_median IS NULL, c.tpmc_ci_high, c.qps_ci_high)")))
	b.WithPanel(overNights(2, "p95 latency of a cell over nights",
		"Each night's median of the steps' 95th percentile latency, with its interval (dashed).",
		grid(10, 24, 0, 10), "ms", "p95 latency",
		medianSQL("c.p95_ms_median"), ciSQL("c.p95_ms_ci_low", "c.p95_ms_ci_high")))

	const versions = `FROM runs r
JOIN cells c ON c.run_uid = r.uid
JOIN targets t ON t.run_uid = c.run_uid AND t.name = c.target
` + nights + `
GROUP BY c.target, c.workload, t.server_version, c.threads
`
	b.WithPanel(barchart.NewPanelBuilder().Id(3).Title("Server versions side by side").Datasource(mysqlDS).
		Description("The mean over nights of each cell's median QPS (tpmC for go-tpc runs), per target and server version: the bars of one thread count compare the versions the schedule has run.").
		GridPos(grid(10, 12, 0, 20)).
		WithTarget(sql("A", MySQLFormatTable, `SELECT CONCAT(c.target, `+ofWorkload+`, ' ', COALESCE(t.server_version, '?')) AS version,
  c.threads AS threads,
  AVG(COALESCE(c.qps_median, c.tpmc_median)) AS qps
`+versions+`ORDER BY c.threads, MIN(r.start_time)`)).
		Transformations([]dashboard.DataTransformerConfig{
			groupingToMatrix("version", "threads", "qps", "null"),
			organize(nil, map[string]any{"threads\\version": "threads"}),
			threadsAs("string"),
		}).
		Unit("short").Min(0).ColorScheme(palette()).
		AxisLabel("queries/s (tpmC)").FillOpacity(80).LineWidth(1).
		XField("threads").Orientation(common.VizOrientationVertical).Stacking(common.StackingModeNone).
		GroupWidth(0.7).BarWidth(0.9).ShowValue(common.VisibilityModeNever).
		Legend(legend(common.LegendDisplayModeList, common.LegendPlacementBottom)).Tooltip(tooltip(common.SortOrderNone)))
	b.WithPanel(table.NewPanelBuilder().Id(4).Title("Server versions: nights and levels").Datasource(mysqlDS).
		Description("Per target, server version and thread count: how many nights, the mean, lowest and highest median QPS (tpmC), the mean p95 latency and the first and last night.").
		GridPos(grid(10, 12, 12, 20)).
		WithTarget(sql("A", MySQLFormatTable, `SELECT CONCAT(c.target, `+ofWorkload+`) AS target, COALESCE(t.server_version, '?') AS version, c.threads AS threads,
  COUNT(*) AS nights,
  AVG(COALESCE(c.qps_median, c.tpmc_median)) AS mean_qps,
  MIN(COALESCE(c.qps_median, c.tpmc_median)) AS min_qps,
  MAX(COALESCE(c.qps_median, c.tpmc_median)) AS max_qps,
  AVG(c.p95_ms_median) AS mean_p95_ms,
  MIN(r.start_time) AS first_night,
  MAX(r.start_time) AS last_night
`+versions+`ORDER BY c.target, c.workload, c.threads, MIN(r.start_time)`)).
		Decimals(1).ShowHeader(true).CellHeight(common.TableCellHeightSm).Footer(tableFooter()))
	b.WithPanel(table.NewPanelBuilder().Id(5).Title("Verdicts").Datasource(mysqlDS).
		Description("Each compared run of the schedule: its verdict against its baseline, from the comparisons table.").
		GridPos(grid(8, 24, 0, 30)).
		WithTarget(sql("A", MySQLFormatTable, `SELECT r.completion_time AS time, r.name AS run, cmp.verdict AS verdict, cmp.baseline AS baseline,
  cmp.regressed_cells AS regressed_cells, cmp.compared_cells AS compared_cells, cmp.message AS message
FROM comparisons cmp
JOIN runs r ON r.uid = cmp.run_uid
WHERE $__timeFilter(r.completion_time)
  AND r.namespace = '$namespace' AND r.schedule = '$schedule'
ORDER BY 1 DESC`)).
		ShowHeader(true).CellHeight(common.TableCellHeightSm).Footer(tableFooter()))

	return finish(b.Build())
}
