package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

const chartDir = "../../charts/mysqlbench-operator/files/grafana"

// The chart ships the generated files: a change here without make dashboards would ship the old
// dashboards.
func TestDashboardFilesUpToDate(t *testing.T) {
	for _, f := range Files {
		t.Run(f.Name, func(t *testing.T) {
			d, err := f.Build()
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			want, err := Render(d)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			path := filepath.Join(chartDir, f.Name)
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v: run make dashboards", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from what internal/dashboards builds: run make dashboards", filepath.Join("charts/mysqlbench-operator/files/grafana", f.Name))
			}
		})
	}
}

func TestRenderDeterministic(t *testing.T) {
	for _, f := range Files {
		var first []byte
		for i := range 3 {
			d, err := f.Build()
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			data, err := Render(d)
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			if i == 0 {
				first = data
			} else if !bytes.Equal(first, data) {
				t.Errorf("%s: two renderings differ", f.Name)
			}
		}
		if !bytes.HasSuffix(first, []byte("}\n")) || !bytes.HasPrefix(first, []byte("{\n  \"")) {
			t.Errorf("%s: want JSON indented by two spaces with a trailing newline", f.Name)
		}
	}
}

func TestMySQLQueryJSON(t *testing.T) {
	tests := []struct {
		name    string
		build   *MySQLQueryBuilder
		want    string
		wantErr string
	}{{
		name:  "table",
		build: NewMySQLQueryBuilder("SELECT 1").RefId("A").Datasource(dsRef("mysql")).Format(MySQLFormatTable),
		want:  `{"datasource":{"type":"mysql","uid":"${datasource}"},"refId":"A","format":"table","rawQuery":true,"editorMode":"code","rawSql":"SELECT 1"}`,
	}, {
		name:  "time series, hidden, no data source",
		build: NewMySQLQueryBuilder("SELECT now() AS time, 1 AS value").RefId("B").Format(MySQLFormatTimeSeries).Hide(true),
		want:  `{"refId":"B","hide":true,"format":"time_series","rawQuery":true,"editorMode":"code","rawSql":"SELECT now() AS time, 1 AS value"}`,
	}, {
		name:    "no refId",
		build:   NewMySQLQueryBuilder("SELECT 1"),
		wantErr: "refId",
	}, {
		name:    "no SQL",
		build:   NewMySQLQueryBuilder("").RefId("A"),
		wantErr: "rawSql",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := tt.build.Build()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Build() error %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Build(): %v", err)
			}
			got, err := json.Marshal(q)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("JSON\n got %s\nwant %s", got, tt.want)
			}
			if q.DataqueryType() != "mysql" {
				t.Errorf("DataqueryType() = %q, want mysql", q.DataqueryType())
			}
			// The SDK's runtime decodes it back to the same query.
			back, err := MySQLQueryVariantConfig().DataqueryUnmarshaler(got)
			if err != nil {
				t.Fatal(err)
			}
			if !q.Equals(back) {
				t.Errorf("decoded %+v, want %+v", back, q)
			}
		})
	}
}

func TestMySQLQueryInPanel(t *testing.T) {
	rt := cog.NewRuntime()
	rt.RegisterDataqueryVariant(MySQLQueryVariantConfig())
	d, err := History()
	if err != nil {
		t.Fatal(err)
	}
	data, err := Render(d)
	if err != nil {
		t.Fatal(err)
	}
	// The dashboard's JSON decodes with the SDK, the MySQL queries as MySQLQuery.
	var back dashboard.Dashboard
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("decode: %v", err)
	}
	var n int
	for _, p := range back.Panels {
		for _, q := range p.Panel.Targets {
			if _, ok := q.(MySQLQuery); !ok {
				t.Errorf("panel %s: query decoded as %T, want MySQLQuery", *p.Panel.Title, q)
			}
			n++
		}
	}
	if n == 0 {
		t.Error("no queries decoded")
	}
}

// panels lists a dashboard's panels, the rows' panels after their row, as "title" -> panel.
func panels(d dashboard.Dashboard) []dashboard.Panel {
	var out []dashboard.Panel
	for _, p := range d.Panels {
		switch {
		case p.Panel != nil:
			out = append(out, *p.Panel)
		case p.RowPanel != nil:
			out = append(out, dashboard.Panel{Type: "row", Id: &p.RowPanel.Id, Title: p.RowPanel.Title, GridPos: p.RowPanel.GridPos})
			out = append(out, p.RowPanel.Panels...)
		}
	}
	return out
}

func TestBuilders(t *testing.T) {
	for _, tt := range []struct {
		file       string
		build      func() (dashboard.Dashboard, error)
		uid        string
		pluginType string
	}{
		{"operator", Operator, "mysqlbench-operator", "prometheus"},
		{"history", History, "mysqlbench-history", "mysql"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			d, err := tt.build()
			if err != nil {
				t.Fatal(err)
			}
			if d.Uid == nil || *d.Uid != tt.uid {
				t.Errorf("uid %v, want %s", d.Uid, tt.uid)
			}
			isVar := func(ds *common.DataSourceRef) bool {
				return ds != nil && ds.Type != nil && *ds.Type == tt.pluginType && ds.Uid != nil && *ds.Uid == DatasourceVar
			}
			ids := map[uint32]string{}
			for _, p := range panels(d) {
				title := fmt.Sprint(*p.Title)
				if p.Id == nil || *p.Id == 0 {
					t.Errorf("panel %q has no id", title)
				} else if other, dup := ids[*p.Id]; dup {
					t.Errorf("panels %q and %q share id %d", other, title, *p.Id)
				} else {
					ids[*p.Id] = title
				}
				if p.GridPos == nil || p.GridPos.W == 0 || p.GridPos.H == 0 || p.GridPos.X+p.GridPos.W > 24 {
					t.Errorf("panel %q: grid position %+v", title, p.GridPos)
				}
				if p.Type == "row" {
					continue
				}
				if !isVar(p.Datasource) {
					t.Errorf("panel %q: datasource %+v, want %s %s", title, p.Datasource, tt.pluginType, DatasourceVar)
				}
				if len(p.Targets) == 0 {
					t.Errorf("panel %q has no queries", title)
				}
				for _, q := range p.Targets {
					// Every query type carries its datasource under the same JSON key.
					data, _ := json.Marshal(q)
					var ref struct{ Datasource *common.DataSourceRef }
					_ = json.Unmarshal(data, &ref)
					if !isVar(ref.Datasource) {
						t.Errorf("panel %q: query %s names datasource %+v", title, data, ref.Datasource)
					}
				}
			}
			for _, a := range d.Annotations.List {
				if !isVar(a.Datasource) {
					t.Errorf("annotation %q: datasource %+v", a.Name, a.Datasource)
				}
				if a.Placement != nil {
					t.Errorf("annotation %q placed %v: its toggle would hide in the controls menu", a.Name, *a.Placement)
				}
			}
			var hasDSVar bool
			for _, v := range d.Templating.List {
				switch {
				case v.Type == "datasource":
					hasDSVar = v.Name == "datasource" && v.Query != nil && v.Query.String != nil && *v.Query.String == tt.pluginType
				case !isVar(v.Datasource):
					t.Errorf("variable %s: datasource %+v", v.Name, v.Datasource)
				}
			}
			if !hasDSVar {
				t.Errorf("no data source variable datasource of plugin %s", tt.pluginType)
			}
		})
	}
}

// The ladder panels draw what the report and the plugin's charts draw: lines over a log2 threads
// axis (1, 2, 4, ... evenly spaced), with numeric thread counts in ascending order, not bars over
// thread counts as categories.
func TestLadderPanelsAreLog2Lines(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(chartDir, "mysqlbench-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Type            string
			Title           string
			Options         struct{ XField string }
			Transformations []struct {
				ID      string
				Options map[string]any
			}
			FieldConfig struct {
				Defaults  struct{ Custom map[string]any }
				Overrides []struct {
					Matcher    struct{ ID, Options string }
					Properties []struct {
						ID    string
						Value any
					}
				}
			}
		}
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	var ladders []string
	for _, p := range d.Panels {
		if !strings.HasSuffix(p.Title, "by threads") {
			continue
		}
		ladders = append(ladders, p.Title)
		if p.Type != "trend" || p.Options.XField != "threads" || p.FieldConfig.Defaults.Custom["drawStyle"] != "line" {
			t.Errorf("%s: a %s panel, x field %q, draw style %v; want trend lines over threads", p.Title, p.Type,
				p.Options.XField, p.FieldConfig.Defaults.Custom["drawStyle"])
		}
		log2 := false
		for _, o := range p.FieldConfig.Overrides {
			for _, prop := range o.Properties {
				if o.Matcher.ID == "byName" && o.Matcher.Options == "threads" && prop.ID == "custom.scaleDistribution" {
					v, _ := prop.Value.(map[string]any)
					log2 = v["type"] == "log" && v["log"] == float64(2)
				}
			}
		}
		if !log2 {
			t.Errorf("%s: the threads axis is not log2", p.Title)
		}
		// The last conversion of threads must leave numbers: a string x field is no axis.
		var to any
		for _, tr := range p.Transformations {
			if tr.ID == "convertFieldType" {
				to = tr.Options["conversions"].([]any)[0].(map[string]any)["destinationType"]
			}
		}
		if to != "number" {
			t.Errorf("%s: threads end as %v, want number", p.Title, to)
		}
	}
	if len(ladders) < 3 {
		t.Errorf("ladder panels %q: want QPS, TPS and p95 by threads", ladders)
	}
}
