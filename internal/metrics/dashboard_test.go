package metrics

// The Grafana dashboard the chart ships (charts/mysqlbench-operator/files/grafana): every query
// must name metrics and labels this package exports, so that renaming one breaks this test
// instead of leaving the dashboard's panels empty. PromQL is read by Prometheus' own parser
// (promql/parser of Prometheus 3.5 LTS, module v0.305.0: the newest whose requirements keep this
// module's Kubernetes libraries where they are).

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

const dashboardFile = "../../charts/mysqlbench-operator/files/grafana/mysqlbench-dashboard.json"

// datasourceVar is the dashboard's data source variable; no panel may name a data source itself.
const datasourceVar = "${datasource}"

type dashboard struct {
	UID           string
	Title         string
	SchemaVersion int
	Panels        []dashboardPanel
	Templating    struct{ List []dashboardVariable }
}

type dashboardPanel struct {
	ID         int
	Type       string
	Title      string
	Datasource *datasourceRef
	Targets    []struct {
		RefID      string
		Expr       string
		Datasource *datasourceRef
	}
	// A row's panels: a collapsed row holds its panels here, an expanded one follows them.
	Panels []dashboardPanel
}

type dashboardVariable struct {
	Name       string
	Type       string
	Datasource *datasourceRef
	// A string, or {"query": "..."} as newer Grafana versions save it.
	Query json.RawMessage
}

type datasourceRef struct{ Type, UID string }

// loadDashboard returns the dashboard decoded and as generic JSON.
func loadDashboard(t *testing.T) (dashboard, any) {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var raw any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d, raw
}

// flatten returns the panels with the rows' panels after their row.
func flatten(panels []dashboardPanel) []dashboardPanel {
	var out []dashboardPanel
	for _, p := range panels {
		out = append(out, p)
		out = append(out, flatten(p.Panels)...)
	}
	return out
}

// metricFamily is an exported family's type and label names.
type metricFamily struct {
	typ    dto.MetricType
	labels map[string]bool
}

// exportedFamilies gathers controller-runtime's registry (what /metrics serves) after one
// observation of each of this package's collectors, so that every family has a series.
func exportedFamilies(t *testing.T) map[string]metricFamily {
	t.Helper()
	ns, sched := "dashboard", "nightly"
	run := mkRun(ns, sched+"-1", sched)
	start := metav1.NewTime(time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC))
	finish := metav1.NewTime(start.Add(time.Minute))
	s := step(8, 1000, 50, 2)
	s.StartTime, s.FinishTime = &start, &finish
	RecordStep(run, "mysql80", "8.0.36", s)
	// A go-tpc run exports tpmC instead of QPS; a standalone run, so that the schedule's run
	// above keeps its series.
	tpcc := goTPCRun(ns, "tpcc-1", "")
	ts := step(8, 0, 700, 9)
	ts.TPCC = &v1.TPCCResult{TpmC: 31250}
	RecordStep(tpcc, "mariadb118", "11.8.3-MariaDB", ts)
	t.Cleanup(func() { ForgetRun(ns, tpcc.Name) })
	RecordOutcome(run, v1.RunSucceeded)
	RecordComparison(ns, sched, v1.Comparison{ComparedCells: 2, RegressedCells: 1, NoChangeCells: 1})
	RecordRegressions(ns, sched, 1, 1)
	RecordHistory(ns, sched, v1.History{RegressedCells: 1})
	t.Cleanup(func() { ForgetSchedule(ns, sched) })

	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string]metricFamily{}
	for _, mf := range mfs {
		f := metricFamily{typ: mf.GetType(), labels: map[string]bool{}}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				f.labels[l.GetName()] = true
			}
		}
		out[mf.GetName()] = f
	}
	return out
}

// seriesLabels returns the label names of the series named name: a family's, or a histogram's
// _bucket (with le), _sum or _count.
func seriesLabels(families map[string]metricFamily, name string) (map[string]bool, error) {
	if f, ok := families[name]; ok {
		switch f.typ {
		case dto.MetricType_HISTOGRAM:
			return nil, fmt.Errorf("%s is a histogram: its series are %[1]s_bucket, %[1]s_sum and %[1]s_count", name)
		case dto.MetricType_SUMMARY:
			l := maps.Clone(f.labels)
			l["quantile"] = true
			return l, nil
		}
		return f.labels, nil
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		f, found := families[base]
		if !ok || !found {
			continue
		}
		if f.typ == dto.MetricType_HISTOGRAM || f.typ == dto.MetricType_SUMMARY && suffix != "_bucket" {
			l := maps.Clone(f.labels)
			if suffix == "_bucket" {
				l["le"] = true
			}
			return l, nil
		}
	}
	return nil, fmt.Errorf("%s is not exported by the operator", name)
}

func TestDashboardIdentity(t *testing.T) {
	d, _ := loadDashboard(t)
	if d.UID == "" || len(d.UID) > 40 {
		t.Errorf("uid %q: want one of 1 to 40 characters (Grafana's limit)", d.UID)
	}
	if d.Title == "" {
		t.Error("no title")
	}
	if d.SchemaVersion < 39 {
		t.Errorf("schemaVersion %d, want 39 or newer", d.SchemaVersion)
	}
	panels := flatten(d.Panels)
	if len(panels) == 0 {
		t.Fatal("no panels")
	}
	ids := map[int]string{}
	for _, p := range panels {
		if p.ID <= 0 {
			t.Errorf("panel %q: id %d, want a positive one", p.Title, p.ID)
		}
		if other, dup := ids[p.ID]; dup {
			t.Errorf("panels %q and %q share id %d", other, p.Title, p.ID)
		}
		ids[p.ID] = p.Title
	}
}

// Every panel and query uses the data source the dashboard's user picks, so the dashboard works
// with any Prometheus without editing.
func TestDashboardDatasources(t *testing.T) {
	d, raw := loadDashboard(t)
	isVar := func(ds *datasourceRef) bool { return ds != nil && ds.Type == "prometheus" && ds.UID == datasourceVar }
	for _, p := range flatten(d.Panels) {
		if p.Type == "row" {
			if len(p.Targets) > 0 {
				t.Errorf("row %q has queries", p.Title)
			}
			continue
		}
		if !isVar(p.Datasource) {
			t.Errorf("panel %q: datasource %+v, want prometheus %s", p.Title, p.Datasource, datasourceVar)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no queries", p.Title)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if !isVar(tg.Datasource) {
				t.Errorf("panel %q query %s: datasource %+v, want prometheus %s", p.Title, tg.RefID, tg.Datasource, datasourceVar)
			}
			if tg.RefID == "" || refs[tg.RefID] {
				t.Errorf("panel %q: query refId %q empty or repeated", p.Title, tg.RefID)
			}
			refs[tg.RefID] = true
		}
	}
	var found bool
	for _, v := range d.Templating.List {
		if v.Name == strings.Trim(datasourceVar, "${}") {
			found = v.Type == "datasource" && string(v.Query) == `"prometheus"`
		}
	}
	if !found {
		t.Errorf("no variable datasource of type datasource with query prometheus")
	}
	// Anything else naming a data source (annotations, variables) names the variable too.
	walkJSON(raw, "", func(path string, v any) {
		if !strings.HasSuffix(path, ".datasource") {
			return
		}
		if m, ok := v.(map[string]any); !ok || m["uid"] != datasourceVar {
			t.Errorf("%s = %v, want uid %s", path, v, datasourceVar)
		}
	})
}

// walkJSON calls fn with every value of v and its path (".panels[2].title").
func walkJSON(v any, path string, fn func(path string, v any)) {
	fn(path, v)
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			walkJSON(v[k], path+"."+k, fn)
		}
	case []any:
		for i, e := range v {
			walkJSON(e, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	}
}

// variableRef matches Grafana's variable syntaxes: $name, ${name}, ${name:format}, [[name]].
var variableRef = regexp.MustCompile(`\$\{(\w+)(?::[^}]*)?\}|\$(\w+)|\[\[(\w+)(?::[^\]]*)?\]\]`)

func TestDashboardVariables(t *testing.T) {
	d, raw := loadDashboard(t)
	defined := map[string]bool{}
	for _, v := range d.Templating.List {
		if defined[v.Name] {
			t.Errorf("variable %s defined twice", v.Name)
		}
		defined[v.Name] = true
	}
	for _, want := range []string{"datasource", "namespace", "run", "target"} {
		if !defined[want] {
			t.Errorf("no variable %s", want)
		}
	}
	used := map[string]bool{}
	walkJSON(raw, "", func(path string, v any) {
		s, ok := v.(string)
		if !ok {
			return
		}
		for _, m := range variableRef.FindAllStringSubmatch(s, -1) {
			name := m[1] + m[2] + m[3]
			if strings.HasPrefix(name, "__") { // Grafana's own: $__range, $__rate_interval, $__all
				continue
			}
			used[name] = true
			if !defined[name] {
				t.Errorf("%s uses $%s, which is not a variable of the dashboard", path, name)
			}
		}
	})
	for name := range defined {
		if !used[name] {
			t.Errorf("variable %s is used nowhere", name)
		}
	}
}

// A go-tpc run exports tpmC and no QPS: the run and target pickers must list it, and the
// dashboard must draw its throughput.
func TestDashboardShowsGoTPCRuns(t *testing.T) {
	d, _ := loadDashboard(t)
	families := exportedFamilies(t) // records the go-tpc run tpcc-1 among others
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	hasGoTPCRun := map[string]bool{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == LabelRun && l.GetValue() == "tpcc-1" {
					hasGoTPCRun[mf.GetName()] = true
				}
			}
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q string
		if json.Unmarshal(v.Query, &q) != nil {
			var obj struct{ Query string }
			_ = json.Unmarshal(v.Query, &obj) // TestDashboardQueriesUseExportedMetrics reports a bad one
			q = obj.Query
		}
		m := labelValues.FindStringSubmatch(q)
		if m == nil {
			continue
		}
		pq, err := parsePromQL(m[1])
		if err != nil {
			continue
		}
		for _, s := range pq.selectors {
			// Only series of runs matter (the schedule picker reads per-schedule series).
			if l, err := seriesLabels(families, s.metric); err == nil && l[LabelRun] && !hasGoTPCRun[s.metric] {
				t.Errorf("variable %s lists values of %s, which a go-tpc run does not export: its runs cannot be picked", v.Name, s.metric)
			}
		}
	}
	var tpmCPanels []string
	for _, p := range flatten(d.Panels) {
		for _, tg := range p.Targets {
			if pq, err := parsePromQL(tg.Expr); err == nil &&
				slices.ContainsFunc(pq.selectors, func(s promSelector) bool { return s.metric == "mysqlbench_step_tpmc" }) {
				tpmCPanels = append(tpmCPanels, p.Title)
			}
		}
	}
	if len(tpmCPanels) < 2 {
		t.Errorf("panels reading mysqlbench_step_tpmc: %q, want the throughput by threads and the ladder table", tpmCPanels)
	}
}

// labelValues is Grafana's Prometheus variable query label_values(selector, label).
var labelValues = regexp.MustCompile(`^\s*label_values\((.+),\s*(\w+)\s*\)\s*$`)

func TestDashboardQueriesUseExportedMetrics(t *testing.T) {
	d, _ := loadDashboard(t)
	families := exportedFamilies(t)
	for _, p := range flatten(d.Panels) {
		for _, tg := range p.Targets {
			where := fmt.Sprintf("panel %q query %s", p.Title, tg.RefID)
			for _, err := range checkExpr(families, tg.Expr) {
				t.Errorf("%s: %v\n  %s", where, err, tg.Expr)
			}
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q string
		if err := json.Unmarshal(v.Query, &q); err != nil {
			var obj struct{ Query string }
			if err := json.Unmarshal(v.Query, &obj); err != nil {
				t.Errorf("variable %s: query %s is neither a string nor {query}", v.Name, v.Query)
				continue
			}
			q = obj.Query
		}
		if v.Datasource == nil || v.Datasource.UID != datasourceVar {
			t.Errorf("variable %s: datasource %+v, want %s", v.Name, v.Datasource, datasourceVar)
		}
		m := labelValues.FindStringSubmatch(q)
		if m == nil {
			t.Errorf("variable %s: query %q, want label_values(<selector>, <label>)", v.Name, q)
			continue
		}
		for _, err := range checkExpr(families, m[1]) {
			t.Errorf("variable %s: %v\n  %s", v.Name, err, q)
		}
		if pq, err := parsePromQL(m[1]); err == nil && len(pq.selectors) == 1 {
			if l, err := seriesLabels(families, pq.selectors[0].metric); err == nil && !l[m[2]] {
				t.Errorf("variable %s: %s has no label %s", v.Name, pq.selectors[0].metric, m[2])
			}
		}
	}
}

// checkExpr returns what is wrong with a PromQL expression given the exported families.
func checkExpr(families map[string]metricFamily, expr string) []error {
	q, err := parsePromQL(expr)
	if err != nil {
		return []error{err}
	}
	if len(q.selectors) == 0 {
		return []error{fmt.Errorf("no metric")}
	}
	var errs []error
	labelsOf := map[int]map[string]bool{} // by selector index
	for i, s := range q.selectors {
		l, err := seriesLabels(families, s.metric)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		labelsOf[i] = l
		for _, name := range s.labels {
			if !l[name] {
				errs = append(errs, fmt.Errorf("%s has no label %s", s.metric, name))
			}
		}
	}
	for _, g := range q.groupings {
		if len(g.selectors) == 0 {
			errs = append(errs, fmt.Errorf("%s (%s) applies to no metric", g.clause, strings.Join(g.labels, ", ")))
		}
		for _, i := range g.selectors {
			l, ok := labelsOf[i]
			if !ok {
				continue // reported above
			}
			for _, name := range g.labels {
				if !l[name] {
					errs = append(errs, fmt.Errorf("%s (%s) groups by %s, a label %s lacks", g.clause, strings.Join(g.labels, ", "), name, q.selectors[i].metric))
				}
			}
		}
	}
	return errs
}
