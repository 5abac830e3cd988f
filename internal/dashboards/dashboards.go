// Package dashboards builds the Grafana dashboards the chart ships
// (charts/mysqlbench-operator/files/grafana) with the Grafana Foundation SDK: the operator's
// dashboard over its Prometheus metrics and the history dashboard over the results database.
// hack/gen-dashboards writes them; a test here fails when the chart's files are stale.
//
// The dashboards were hand-written JSON before; their panels, queries, variables, layout, units,
// field configs, overrides and descriptions are kept. What the SDK makes differ in the files:
//   - schemaVersion is the SDK's 42 (was 39): its types are that schema's.
//   - Empty fields are left out: id null, links [], the variables' current {} and options [],
//     timepicker {}, a table footer's fields "" (the SDK's is a list).
//   - The SDK writes its defaults: panels' transparent false and repeatDirection "h"; variables'
//     allowCustomValue true, skipUrlSync false and auto, auto_min, auto_count; tables'
//     custom.inspect false, frameIndex 0, showTypeIcons false; bar charts' barRadius 0,
//     fullHighlight false, xTickLabelMaxLength 0 (and gradientMode, xTickLabelRotation and
//     xTickLabelSpacing where the history dashboard's bar chart had none); the stat panel's
//     percentChangeColorMode "standard"; the heatmap's selectionMode "x"; annotations' builtIn 0.
//   - The history dashboard's tables, which had no footer, get the hidden one the operator
//     dashboard's tables have, rather than the SDK's default with reducer null.
//
// Grafana reads each of these as it read the hand-written value or its absence.
package dashboards

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

var errEmpty = errors.New("must not be empty")

// DatasourceVar is the dashboards' data source variable: every panel, query, variable and
// annotation names it instead of a data source, whose uid differs in every Grafana.
const DatasourceVar = "${datasource}"

// File is a dashboard of the chart and the name of its file.
type File struct {
	Name  string
	Build func() (dashboard.Dashboard, error)
}

// Files are the chart's dashboards, in the order the generator writes them.
var Files = []File{
	{"mysqlbench-dashboard.json", Operator},
	{"mysqlbench-history-dashboard.json", History},
}

// Render is a dashboard's file: JSON indented by two spaces, with a trailing newline, HTML
// characters (<, >, &) left as they are. The SDK's types marshal their fields in a fixed order
// and maps sorted, so the same dashboard renders to the same bytes.
func Render(d dashboard.Dashboard) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func dsRef(pluginType string) common.DataSourceRef {
	uid := DatasourceVar
	return common.DataSourceRef{Type: &pluginType, Uid: &uid}
}

func ptr[T any](v T) *T { return &v }

func str(s string) dashboard.StringOrMap { return dashboard.StringOrMap{String: &s} }

// transformation is one of a panel's transformations; options are written as Grafana saves them.
func transformation(id string, options map[string]any) dashboard.DataTransformerConfig {
	return dashboard.DataTransformerConfig{Id: id, Options: options}
}

// organize renames (and hides) fields.
func organize(exclude map[string]any, rename map[string]any) dashboard.DataTransformerConfig {
	if exclude == nil {
		exclude = map[string]any{}
	}
	return transformation("organize", map[string]any{"excludeByName": exclude, "indexByName": map[string]any{}, "renameByName": rename})
}

// threadsAs converts the threads field to type (number, to sort by it; string, to use it as a
// category axis).
func threadsAs(to string) dashboard.DataTransformerConfig {
	return transformation("convertFieldType", map[string]any{
		"fields":      map[string]any{},
		"conversions": []any{map[string]any{"targetField": "threads", "destinationType": to}},
	})
}

// groupingToMatrix turns rows of (row, column, value) into a row per rowField value and a column
// per columnField value: what a bar chart of several series over one category axis needs.
func groupingToMatrix(column, row, value, empty string) dashboard.DataTransformerConfig {
	return transformation("groupingToMatrix", map[string]any{"columnField": column, "rowField": row, "valueField": value, "emptyValue": empty})
}

func merge() dashboard.DataTransformerConfig { return transformation("merge", map[string]any{}) }

func property(id string, value any) dashboard.DynamicConfigValue {
	return dashboard.DynamicConfigValue{Id: id, Value: value}
}

func fixedColor(color string) map[string]any {
	return map[string]any{"mode": "fixed", "fixedColor": color}
}

func palette() *dashboard.FieldColorBuilder {
	return dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdPaletteClassic)
}

func legend(mode common.LegendDisplayMode, placement common.LegendPlacement, calcs ...string) *common.VizLegendOptionsBuilder {
	return common.NewVizLegendOptionsBuilder().ShowLegend(true).DisplayMode(mode).Placement(placement).Calcs(append([]string{}, calcs...))
}

func tooltip(sort common.SortOrder) *common.VizTooltipOptionsBuilder {
	return common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeMulti).Sort(sort)
}

func grid(h, w, x, y uint32) dashboard.GridPos { return dashboard.GridPos{H: h, W: w, X: x, Y: y} }

// finish sets what the SDK's builders cannot: a data source variable refreshed when the dashboard
// loads (what Grafana saves for one), and annotations whose toggles stay above the panels
// instead of the SDK's default placement in the controls menu, which hides them.
func finish(d dashboard.Dashboard, err error) (dashboard.Dashboard, error) {
	if err != nil {
		return d, err
	}
	for i := range d.Templating.List {
		if v := &d.Templating.List[i]; v.Type == "datasource" {
			v.Refresh = ptr(dashboard.VariableRefreshOnDashboardLoad)
		}
	}
	for i := range d.Annotations.List {
		d.Annotations.List[i].Placement = nil
	}
	return d, nil
}
