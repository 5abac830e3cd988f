package dashboards

import (
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/barchart"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/heatmap"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
	"github.com/grafana/grafana-foundation-sdk/go/trend"
)

var promDS = dsRef("prometheus")

// Selectors of the variables: the runs, with the targets picked, and the schedules.
const (
	runSel      = `namespace="$namespace", run=~"$run", target=~"$target", workload=~"$workload"`
	scheduleSel = `namespace="$namespace", schedule=~"$schedule"`
)

// promInstant is an instant query whose result is a table (one row per series).
func promInstant(refID, expr string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Datasource(promDS).RefId(refID).Expr(expr).LegendFormat("__auto").
		Format(prometheus.PromQueryFormatTable).Instant().EditorMode(prometheus.QueryEditorModeCode)
}

// promRange is a range query of time series.
func promRange(refID, expr, legendFormat string, format prometheus.PromQueryFormat) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Datasource(promDS).RefId(refID).Expr(expr).LegendFormat(legendFormat).
		Format(format).Range().EditorMode(prometheus.QueryEditorModeCode)
}

// perRunTarget aggregates a step gauge by run, target, workload and thread count and joins run,
// target and workload into one label, runTarget: the bar charts' series, so that two runs' (or
// two workloads') bars of the same target stay apart.
func perRunTarget(exprs ...string) string {
	join := func(sel string, by ...string) string {
		var sum string
		for i, e := range exprs {
			if i > 0 {
				sum += " or "
			}
			sum += "max by (" + strings.Join(by, ", ") + ", threads) (" + e + "{" + runSel + sel + "})"
		}
		return `label_join(` + sum + `, "` + runTarget + `", " / ", "` + strings.Join(by, `", "`) + `")`
	}
	// A run of one workload has no workload label: its series keep "run / target".
	return join(`, workload=""`, "run", "target") + " or " + join(`, workload!=""`, "run", "target", "workload")
}

// runTarget is the label perRunTarget joins run and target into.
const runTarget = "run_target"

// ladderLines draws a step gauge (or the first of exprs present) over the thread counts of the
// picked runs as the report and kubectl mysqlbench plot draw it: a line per run and target
// over a log2 threads axis, so that 1, 2, 4 ... 512 threads are evenly spaced and a ladder's
// scaling reads as a slope. The trend panel takes a numeric x field (Prometheus gives one
// instant value per series: one row per thread count after groupingToMatrix); the x field's
// own scale is log2, and a thread count not measured yet is a gap, not a line to the next.
func ladderLines(id uint32, title, description string, pos dashboard.GridPos, unit, axisLabel string, exprs ...string) *trend.PanelBuilder {
	return trend.NewPanelBuilder().Id(id).Title(title).Description(description).Datasource(promDS).GridPos(pos).
		WithTarget(promInstant("A", perRunTarget(exprs...))).
		Transformations([]dashboard.DataTransformerConfig{
			groupingToMatrix(runTarget, "threads", "Value", "null"),
			organize(nil, map[string]any{"threads\\" + runTarget: "threads"}),
			// Thread counts are labels, strings: the x axis needs numbers, in ascending order.
			threadsAs("number"),
			transformation("sortBy", map[string]any{"fields": map[string]any{}, "sort": []any{map[string]any{"field": "threads", "desc": false}}}),
		}).
		XField("threads").
		Unit(unit).Min(0).ColorScheme(palette()).
		AxisLabel(axisLabel).AxisPlacement(common.AxisPlacementAuto).GradientMode(common.GraphGradientModeNone).
		DrawStyle(common.GraphDrawStyleLine).LineInterpolation(common.LineInterpolationLinear).LineWidth(2).FillOpacity(0).
		ShowPoints(common.VisibilityModeAlways).PointSize(6).SpanNulls(common.BoolOrFloat64{Bool: ptr(false)}).
		OverrideByName("threads", []dashboard.DynamicConfigValue{
			property("custom.scaleDistribution", map[string]any{"type": "log", "log": 2}),
			property("custom.axisLabel", "threads (log2 scale)"),
			property("unit", "none"),
			property("decimals", 0),
			// A log axis has no 0: the defaults' minimum is the values'.
			property("min", 1),
		}).
		Legend(legend(common.LegendDisplayModeList, common.LegendPlacementBottom)).Tooltip(tooltip(common.SortOrderDescending))
}

func tableFooter() *common.TableFooterOptionsBuilder {
	return common.NewTableFooterOptionsBuilder().Show(false).Reducer([]string{"sum"}).CountRows(false)
}

func sortBy(field string, desc bool) []cog.Builder[common.TableSortByFieldState] {
	return []cog.Builder[common.TableSortByFieldState]{common.NewTableSortByFieldStateBuilder().DisplayName(field).Desc(desc)}
}

func autoCells() common.TableCellOptions {
	return common.TableCellOptions{TableAutoCellOptions: &common.TableAutoCellOptions{Type: common.TableCellDisplayModeAuto}}
}

// scheduleSeries is a timeseries panel of a per-schedule gauge.
func scheduleSeries(id uint32, title, description string, pos dashboard.GridPos, expr string) *timeseries.PanelBuilder {
	return timeseries.NewPanelBuilder().Id(id).Title(title).Description(description).Datasource(promDS).GridPos(pos).
		WithTarget(promRange("A", expr, "{{schedule}}", prometheus.PromQueryFormatTimeSeries)).
		Unit("short").Min(0).Decimals(0).ColorScheme(palette()).
		DrawStyle(common.GraphDrawStyleLine).LineInterpolation(common.LineInterpolationStepAfter).LineWidth(1).FillOpacity(10).
		ShowPoints(common.VisibilityModeNever).SpanNulls(common.BoolOrFloat64{Bool: ptr(false)}).
		Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNone).Group("A")).
		AxisPlacement(common.AxisPlacementAuto).GradientMode(common.GraphGradientModeNone).
		Legend(legend(common.LegendDisplayModeTable, common.LegendPlacementRight)).Tooltip(tooltip(common.SortOrderDescending))
}

// redFromOne colours a table cell green at 0 and red from 1.
func redFromOne() []dashboard.DynamicConfigValue {
	return []dashboard.DynamicConfigValue{
		property("custom.cellOptions", map[string]any{"type": "color-background", "mode": "basic"}),
		property("thresholds", map[string]any{"mode": "absolute", "steps": []any{
			map[string]any{"color": "green", "value": nil},
			map[string]any{"color": "red", "value": 1},
		}}),
	}
}

// standalone names the schedule "" of standalone runs.
func standalone(expr string) string {
	return `label_replace(` + expr + `, "schedule", "(standalone)", "schedule", "")`
}

// queryVar is a variable listing a label's values.
func queryVar(name, label, description, query string, sort dashboard.VariableSort) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).Label(label).Description(description).Datasource(promDS).
		Query(str(query)).Definition(query).Refresh(dashboard.VariableRefreshOnTimeRangeChanged).Regex("").
		Sort(sort).Multi(false).IncludeAll(false).Hide(dashboard.VariableHideDontHide).Options([]dashboard.VariableOption{})
}

// multi makes a variable multi-valued with All, which matches any value (.*).
func multi(v *dashboard.QueryVariableBuilder) *dashboard.QueryVariableBuilder {
	return v.Multi(true).IncludeAll(true).AllValue(".*")
}

// allOf is multi, All picked until the user picks otherwise.
func allOf(v *dashboard.QueryVariableBuilder) *dashboard.QueryVariableBuilder {
	return multi(v).Current(dashboard.VariableOption{
		Selected: ptr(true),
		Text:     dashboard.StringOrArrayOfString{ArrayOfString: []string{"All"}},
		Value:    dashboard.StringOrArrayOfString{ArrayOfString: []string{"$__all"}},
	})
}

// Operator is the dashboard over the operator's metrics: the ladders of the picked runs, the
// schedules' outcomes and regressions, and step durations.
func Operator() (dashboard.Dashboard, error) {
	b := dashboard.NewDashboardBuilder("mysqlbench operator").Uid("mysqlbench-operator").
		Description("Ladders of the mysqlbench operator: QPS (tpmC for go-tpc runs) and p95 latency by thread count of a run, run outcomes, regressions and step durations per schedule.").
		Tags([]string{"mysqlbench", "sysbench", "mysql"}).
		Version(1).Editable().Tooltip(dashboard.DashboardCursorSyncCrosshair).FiscalYearStartMonth(0).LiveNow(false).
		Timezone("browser").WeekStart("").Refresh("5m").Time("now-7d", "now")

	b.WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").Type("prometheus").Regex("").
		Hide(dashboard.VariableHideDontHide).Multi(false).IncludeAll(false))
	b.WithVariable(queryVar("namespace", "Namespace", "Namespace of the BenchmarkRuns and BenchmarkSchedules.",
		`label_values(mysqlbench_step_tps, namespace)`, dashboard.VariableSortAlphabeticalAsc))
	// No run picked by default: Grafana then picks the first, the newest by name (a
	// schedule's run names sort by scheduled time), as before the variable took several.
	b.WithVariable(multi(queryVar("run", "Runs", "Runs with results: each standalone run, and the newest run of each schedule. Several picked runs are drawn side by side.",
		`label_values(mysqlbench_step_tps{namespace="$namespace"}, run)`, dashboard.VariableSortAlphabeticalDesc)))
	b.WithVariable(allOf(queryVar("target", "Target", "Targets (servers) of the runs.",
		`label_values(mysqlbench_step_tps{namespace="$namespace", run=~"$run"}, target)`, dashboard.VariableSortAlphabeticalAsc)))
	b.WithVariable(allOf(queryVar("workload", "Workload", "Workloads of the runs that measure several (spec.workloads, spec.preset); "+
		"All includes runs of one workload, whose steps have no workload label.",
		`label_values(mysqlbench_step_tps{namespace="$namespace", run=~"$run"}, workload)`, dashboard.VariableSortAlphabeticalAsc)))
	b.WithVariable(allOf(queryVar("schedule", "Schedule", "Schedules of the lower rows; All includes standalone runs.",
		`label_values(mysqlbench_step_duration_seconds_count{namespace="$namespace"}, schedule)`, dashboard.VariableSortAlphabeticalAsc)))

	// The runs' start and end, from gauges whose value is the time: multiplied to milliseconds
	// and used as the annotation's time, they mark the run where it happened, not where the
	// series was scraped.
	b.Annotation(dashboard.NewAnnotationQueryBuilder().Name("Run start").Datasource(promDS).Enable(true).Hide(false).IconColor("blue").
		Expr(`mysqlbench_run_start_timestamp_seconds{namespace="$namespace", run=~"$run"} * 1000`).UseValueForTime(true).
		TitleFormat("{{run}} started").TagKeys("schedule"))
	b.Annotation(dashboard.NewAnnotationQueryBuilder().Name("Run end").Datasource(promDS).Enable(true).Hide(false).IconColor("purple").
		Expr(`mysqlbench_run_completion_timestamp_seconds{namespace="$namespace", run=~"$run"} * 1000`).UseValueForTime(true).
		TitleFormat("{{run}} {{outcome}}").TagKeys("schedule,outcome"))

	b.WithRow(dashboard.NewRowBuilder("Runs $run").Id(1).Collapsed(false).GridPos(grid(1, 24, 0, 0)))
	b.WithPanel(ladderLines(2, "QPS (tpmC for go-tpc) by threads",
		"The newest finished step of each thread count of the runs $run, per run and target (the gauge mysqlbench_step_qps; for a go-tpc run mysqlbench_step_tpmc, new-order transactions per minute, as go-tpc counts no queries). Points appear as the ladder advances.",
		grid(9, 8, 0, 1), "short", "queries/s", "mysqlbench_step_qps", "mysqlbench_step_tpmc"))
	b.WithPanel(ladderLines(3, "TPS by threads",
		"The newest finished step of each thread count of the runs $run, per run and target (the gauge mysqlbench_step_tps). Points appear as the ladder advances.",
		grid(9, 8, 8, 1), "short", "transactions/s", "mysqlbench_step_tps"))
	b.WithPanel(ladderLines(4, "p95 latency by threads",
		"The newest finished step of each thread count of the runs $run, per run and target (the gauge mysqlbench_step_latency_p95_seconds). Points appear as the ladder advances.",
		grid(9, 8, 16, 1), "s", "", "mysqlbench_step_latency_p95_seconds"))

	ladder := func(refID, metric string) *prometheus.DataqueryBuilder {
		return promInstant(refID, "max by (run, target, workload, server_version, threads) ("+metric+"{"+runSel+"})")
	}
	b.WithRow(dashboard.NewRowBuilder("Ladder table of runs $run").Id(5).Collapsed(true).GridPos(grid(1, 24, 0, 10)).
		WithPanel(table.NewPanelBuilder().Id(6).Title("Ladders of runs $run").Datasource(promDS).
			Description("Every finished step of the runs $run: QPS (tpmC for a go-tpc run), TPS (sysbench events, or go-tpc's successful transactions, per second) and p95 latency per run, target, server version and thread count.").
			GridPos(grid(9, 24, 0, 11)).
			WithTarget(ladder("A", "mysqlbench_step_qps")).
			WithTarget(ladder("B", "mysqlbench_step_tps")).
			WithTarget(ladder("C", "mysqlbench_step_latency_p95_seconds")).
			WithTarget(ladder("D", "mysqlbench_step_tpmc")).
			Transformations([]dashboard.DataTransformerConfig{
				merge(),
				organize(map[string]any{"Time": true}, map[string]any{
					"Value #A": "QPS", "Value #B": "TPS", "Value #C": "p95 latency", "server_version": "server version", "Value #D": "tpmC",
				}),
				threadsAs("number"),
			}).
			Align(common.FieldTextAlignmentAuto).CellOptions(autoCells()).
			OverrideByName("p95 latency", []dashboard.DynamicConfigValue{property("unit", "s")}).
			OverrideByRegexp("^(QPS|TPS|tpmC)$", []dashboard.DynamicConfigValue{property("decimals", 1)}).
			ShowHeader(true).CellHeight(common.TableCellHeightSm).Footer(tableFooter()).
			SortBy(sortBy("threads", false))))

	b.WithRow(dashboard.NewRowBuilder("Schedules: runs and regressions").Id(7).Collapsed(false).GridPos(grid(1, 24, 0, 11)))
	b.WithPanel(stat.NewPanelBuilder().Id(8).Title("Runs finished in the time range").Datasource(promDS).
		Description("BenchmarkRuns that reached Succeeded or Failed during the dashboard's time range (increase of mysqlbench_runs_total). The operator creates both outcome counters at 0 when a run starts, so increase() counts every run that ended while Prometheus scraped the manager.").
		GridPos(grid(8, 6, 0, 12)).
		WithTarget(prometheus.NewDataqueryBuilder().Datasource(promDS).RefId("A").
			Expr("sum by (outcome) (increase(mysqlbench_runs_total{"+scheduleSel+"}[$__range]))").LegendFormat("{{outcome}}").
			Format(prometheus.PromQueryFormatTimeSeries).Instant().EditorMode(prometheus.QueryEditorModeCode)).
		Unit("short").Decimals(0).ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor("text")).
		OverrideByName("succeeded", []dashboard.DynamicConfigValue{property("color", fixedColor("green"))}).
		OverrideByName("failed", []dashboard.DynamicConfigValue{property("color", fixedColor("red"))}).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}).Fields("").Values(false)).
		Orientation(common.VizOrientationHorizontal).TextMode(common.BigValueTextModeValueAndName).
		ColorMode(common.BigValueColorModeBackground).GraphMode(common.BigValueGraphModeNone).
		JustifyMode(common.BigValueJustifyModeAuto).WideLayout(true).ShowPercentChange(false))
	b.WithPanel(timeseries.NewPanelBuilder().Id(9).Title("Runs finished by schedule").Datasource(promDS).
		Description(`Runs that finished in each interval, by schedule and outcome; "(standalone)" are runs without a schedule.`).
		GridPos(grid(8, 18, 6, 12)).Interval("1h").
		WithTarget(promRange("A", standalone("sum by (schedule, outcome) (increase(mysqlbench_runs_total{"+scheduleSel+"}[$__interval]))"),
			"{{schedule}}: {{outcome}}", prometheus.PromQueryFormatTimeSeries)).
		Unit("short").Min(0).Decimals(0).ColorScheme(palette()).
		DrawStyle(common.GraphDrawStyleBars).LineInterpolation(common.LineInterpolationStepAfter).LineWidth(1).FillOpacity(80).
		ShowPoints(common.VisibilityModeNever).SpanNulls(common.BoolOrFloat64{Bool: ptr(false)}).
		Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal).Group("A")).
		AxisPlacement(common.AxisPlacementAuto).GradientMode(common.GraphGradientModeNone).
		OverrideByRegexp(".*: failed$", []dashboard.DynamicConfigValue{property("color", map[string]any{"mode": "shades", "fixedColor": "red"})}).
		Legend(legend(common.LegendDisplayModeTable, common.LegendPlacementRight)).Tooltip(tooltip(common.SortOrderDescending)))
	b.WithPanel(scheduleSeries(10, "Regressed cells by schedule",
		"Cells (target x thread count) of each schedule's newest compared run whose verdict against the baseline is Regressed.",
		grid(8, 12, 0, 20), "max by (schedule) (mysqlbench_schedule_regressed_cells{"+scheduleSel+"})"))
	b.WithPanel(scheduleSeries(11, "Shifted cells by schedule",
		"Cells whose median shifted for the worse across each schedule's retained runs (change points not acknowledged).",
		grid(8, 12, 12, 20), "max by (schedule) (mysqlbench_schedule_shifted_cells{"+scheduleSel+"})"))
	b.WithPanel(table.NewPanelBuilder().Id(12).Title("Newest comparison by schedule").Datasource(promDS).
		Description("Per schedule: the cells its newest compared run had in common with the baseline, those Regressed, and those shifted for the worse across its retained runs.").
		GridPos(grid(8, 12, 0, 28)).
		WithTarget(promInstant("A", "max by (schedule) (mysqlbench_schedule_compared_cells{"+scheduleSel+"})")).
		WithTarget(promInstant("B", "max by (schedule) (mysqlbench_schedule_regressed_cells{"+scheduleSel+"})")).
		WithTarget(promInstant("C", "max by (schedule) (mysqlbench_schedule_shifted_cells{"+scheduleSel+"})")).
		Transformations([]dashboard.DataTransformerConfig{
			merge(),
			organize(map[string]any{"Time": true}, map[string]any{"Value #A": "compared", "Value #B": "regressed", "Value #C": "shifted"}),
		}).
		Decimals(0).Align(common.FieldTextAlignmentAuto).CellOptions(autoCells()).
		OverrideByName("regressed", redFromOne()).
		OverrideByName("shifted", redFromOne()).
		ShowHeader(true).CellHeight(common.TableCellHeightSm).Footer(tableFooter()).SortBy(sortBy("regressed", true)))
	b.WithPanel(barchart.NewPanelBuilder().Id(13).Title("Cells by verdict").Datasource(promDS).
		Description("Cells of each schedule's newest compared run by verdict (Regressed, Improved, NoChange, Inconclusive).").
		GridPos(grid(8, 12, 12, 28)).
		WithTarget(promInstant("A", "max by (schedule, verdict) (mysqlbench_schedule_cells{"+scheduleSel+"})")).
		Transformations([]dashboard.DataTransformerConfig{
			groupingToMatrix("verdict", "schedule", "Value", "zero"),
			organize(nil, map[string]any{"schedule\\verdict": "schedule"}),
		}).
		Unit("short").Decimals(0).Min(0).ColorScheme(palette()).
		AxisPlacement(common.AxisPlacementAuto).FillOpacity(80).GradientMode(common.GraphGradientModeNone).LineWidth(1).
		OverrideByName("Regressed", []dashboard.DynamicConfigValue{property("color", fixedColor("red"))}).
		OverrideByName("Improved", []dashboard.DynamicConfigValue{property("color", fixedColor("green"))}).
		OverrideByName("NoChange", []dashboard.DynamicConfigValue{property("color", fixedColor("blue"))}).
		OverrideByName("Inconclusive", []dashboard.DynamicConfigValue{property("color", fixedColor("yellow"))}).
		XField("schedule").Orientation(common.VizOrientationHorizontal).Stacking(common.StackingModeNormal).
		GroupWidth(0.7).BarWidth(0.9).ShowValue(common.VisibilityModeAuto).XTickLabelRotation(0).XTickLabelSpacing(0).
		Legend(legend(common.LegendDisplayModeList, common.LegendPlacementBottom)).Tooltip(tooltip(common.SortOrderNone)))

	b.WithRow(dashboard.NewRowBuilder("Step durations").Id(14).Collapsed(false).GridPos(grid(1, 24, 0, 36)))
	b.WithPanel(heatmap.NewPanelBuilder().Id(15).Title("Step duration distribution").Datasource(promDS).
		Description("Wall time of ladder steps' Jobs, from start to finish: the configured step duration plus start-up; a Job started while the step before measured counts its wait for it (mysqlbench_step_duration_seconds).").
		GridPos(grid(9, 12, 0, 37)).Interval("5m").
		WithTarget(promRange("A", "sum by (le) (increase(mysqlbench_step_duration_seconds_bucket{"+scheduleSel+"}[$__interval]))",
			"{{le}}", prometheus.PromQueryFormatHeatmap)).
		HideFrom(common.NewHideSeriesConfigBuilder().Legend(false).Tooltip(false).Viz(false)).
		ScaleDistribution(common.NewScaleDistributionConfigBuilder().Type(common.ScaleDistributionLinear)).
		Calculate(false).CellGap(1).
		YAxis(heatmap.NewYAxisConfigBuilder().AxisPlacement(common.AxisPlacementLeft).Unit("s").Reverse(false)).
		RowsFrame(heatmap.NewRowsHeatmapOptionsBuilder().Layout(common.HeatmapCellLayoutAuto)).
		Color(heatmap.NewHeatmapColorOptionsBuilder().Mode(heatmap.HeatmapColorModeScheme).Scheme("Oranges").Fill("dark-orange").
			Scale(heatmap.HeatmapColorScaleExponential).Exponent(0.5).Steps(64).Reverse(false)).
		FilterValues(heatmap.NewFilterValueRangeBuilder().Le(1e-9)).
		ShowValue(common.VisibilityModeAuto).
		Tooltip(heatmap.NewHeatmapTooltipBuilder().Mode(common.TooltipDisplayModeSingle).YHistogram(true).ShowColorScale(false)).
		ShowLegend().ExemplarsColor("rgba(255,0,255,0.7)"))
	quantile := func(refID, q string) *prometheus.DataqueryBuilder {
		return promInstant(refID, standalone("histogram_quantile("+q+", sum by (schedule, le) (increase(mysqlbench_step_duration_seconds_bucket{"+scheduleSel+"}[$__range])))"))
	}
	b.WithPanel(table.NewPanelBuilder().Id(16).Title("Step durations by schedule").Datasource(promDS).
		Description(`Over the dashboard's time range, per schedule ("(standalone)": runs without one): median, 95th percentile (estimated from the histogram's buckets) and mean wall time of a step, and the number of steps.`).
		GridPos(grid(9, 12, 12, 37)).
		WithTarget(quantile("A", "0.5")).
		WithTarget(quantile("B", "0.95")).
		WithTarget(promInstant("C", standalone("sum by (schedule) (increase(mysqlbench_step_duration_seconds_sum{"+scheduleSel+"}[$__range])) / (sum by (schedule) (increase(mysqlbench_step_duration_seconds_count{"+scheduleSel+"}[$__range])) > 0)"))).
		WithTarget(promInstant("D", standalone("round(sum by (schedule) (increase(mysqlbench_step_duration_seconds_count{"+scheduleSel+"}[$__range])))"))).
		Transformations([]dashboard.DataTransformerConfig{
			merge(),
			organize(map[string]any{"Time": true}, map[string]any{"Value #A": "median", "Value #B": "p95", "Value #C": "mean", "Value #D": "steps"}),
		}).
		Align(common.FieldTextAlignmentAuto).CellOptions(autoCells()).
		OverrideByName("median", []dashboard.DynamicConfigValue{property("unit", "s")}).
		OverrideByName("p95", []dashboard.DynamicConfigValue{property("unit", "s")}).
		OverrideByName("mean", []dashboard.DynamicConfigValue{property("unit", "s")}).
		OverrideByName("steps", []dashboard.DynamicConfigValue{property("decimals", 0)}).
		ShowHeader(true).CellHeight(common.TableCellHeightSm).Footer(tableFooter()).SortBy(sortBy("schedule", false)))

	return finish(b.Build())
}
