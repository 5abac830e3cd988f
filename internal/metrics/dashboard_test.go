package metrics

// The Grafana dashboard the chart ships (charts/mysqlbench-operator/files/grafana): every query
// must name metrics and labels this package exports, so that renaming one breaks this test
// instead of leaving the dashboard's panels empty. PromQL is read by a small tokenizer, enough
// for selectors, label matchers and grouping clauses.

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
	tpcc := mkRun(ns, "tpcc-1", "")
	ts := step(8, 0, 700, 9)
	ts.TPCC = &v1.TPCCResult{TpmC: 31250}
	RecordStep(tpcc, "mariadb118", "11.8.3-MariaDB", ts)
	t.Cleanup(func() { ForgetRun(ns, tpcc.Name) })
	RecordOutcome(run, v1.RunSucceeded)
	RecordComparison(ns, sched, v1.Comparison{ComparedCells: 2, RegressedCells: 1, NoChangeCells: 1})
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
	labelsOf := map[int]map[string]bool{} // by token index of the selector
	for _, s := range q.selectors {
		l, err := seriesLabels(families, s.metric)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		labelsOf[s.at] = l
		for _, name := range s.labels {
			if !l[name] {
				errs = append(errs, fmt.Errorf("%s has no label %s", s.metric, name))
			}
		}
	}
	for _, g := range q.groupings {
		var scoped int
		for _, s := range q.selectors {
			if s.at < g.from || s.at > g.to {
				continue
			}
			scoped++
			l, ok := labelsOf[s.at]
			if !ok {
				continue // reported above
			}
			for _, name := range g.labels {
				if !l[name] {
					errs = append(errs, fmt.Errorf("%s (%s) groups by %s, a label %s lacks", g.clause, strings.Join(g.labels, ", "), name, s.metric))
				}
			}
		}
		if scoped == 0 {
			errs = append(errs, fmt.Errorf("%s (%s) applies to no metric", g.clause, strings.Join(g.labels, ", ")))
		}
	}
	return errs
}

// PromQL tokens.

type tokenKind int

const (
	tokIdent    tokenKind = iota
	tokString             // text is the contents, unescaped only as far as finding its end
	tokNumber             // numbers and durations
	tokVariable           // a Grafana variable; text is its name
	tokPunct
)

type promToken struct {
	kind tokenKind
	text string
}

var promOperators = []string{"=~", "!~", "!=", "==", ">=", "<="}

func isIdentChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// lexPromQL splits a PromQL expression, with Grafana variables in it, into tokens.
func lexPromQL(expr string) ([]promToken, error) {
	var toks []promToken
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#': // a comment, to the end of the line
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(expr) && expr[j] != c {
				if expr[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			if j >= len(expr) {
				return nil, fmt.Errorf("unterminated string at offset %d", i)
			}
			toks = append(toks, promToken{tokString, expr[i+1 : j]})
			i = j + 1
		case c == '$' || strings.HasPrefix(expr[i:], "[["):
			loc := variableRef.FindStringSubmatchIndex(expr[i:])
			if loc == nil || loc[0] != 0 {
				return nil, fmt.Errorf("malformed variable at offset %d", i)
			}
			m := variableRef.FindStringSubmatch(expr[i:])
			toks = append(toks, promToken{tokVariable, m[1] + m[2] + m[3]})
			i += loc[1]
		case c == ':' || isIdentChar(c) && !isDigit(c):
			j := i
			for j < len(expr) && (isIdentChar(expr[j]) || expr[j] == ':') {
				j++
			}
			toks = append(toks, promToken{tokIdent, expr[i:j]})
			i = j
		case isDigit(c) || c == '.' && i+1 < len(expr) && isDigit(expr[i+1]):
			j := i
			for j < len(expr) && (isIdentChar(expr[j]) || expr[j] == '.') {
				j++
			}
			toks = append(toks, promToken{tokNumber, expr[i:j]})
			i = j
		default:
			n := 0
			for _, op := range promOperators {
				if strings.HasPrefix(expr[i:], op) {
					n = len(op)
				}
			}
			if n == 0 && strings.IndexByte("{}()[],=<>+-*/%^@", c) >= 0 {
				n = 1
			}
			if n == 0 {
				return nil, fmt.Errorf("unexpected %q at offset %d", c, i)
			}
			toks = append(toks, promToken{tokPunct, expr[i : i+n]})
			i += n
		}
	}
	return toks, nil
}

// promSelector is a metric an expression names, with the labels of its matchers.
type promSelector struct {
	metric string
	labels []string
	at     int // token index
}

// promGrouping is a by, without, on, ignoring, group_left or group_right label list, and the
// token range [from, to] it applies to: an aggregation's argument, or for the binary operator
// clauses, the whole expression.
type promGrouping struct {
	clause   string
	labels   []string
	from, to int
}

type promQuery struct {
	selectors []promSelector
	groupings []promGrouping
}

var (
	promClauses = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}
	// Keywords that are no metric when not followed by a parenthesis.
	promKeywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
		"inf": true, "nan": true, "group_left": true, "group_right": true}
	promMatchOps = map[string]bool{"=": true, "!=": true, "=~": true, "!~": true}
)

// parsePromQL finds the selectors and grouping clauses of a PromQL expression.
func parsePromQL(expr string) (promQuery, error) {
	toks, err := lexPromQL(expr)
	if err != nil {
		return promQuery{}, err
	}
	match := map[int]int{} // bracket pairs, both ways
	var open []int
	closing := map[string]string{")": "(", "}": "{", "]": "["}
	for i, tk := range toks {
		if tk.kind != tokPunct {
			continue
		}
		switch tk.text {
		case "(", "{", "[":
			open = append(open, i)
		case ")", "}", "]":
			if len(open) == 0 || toks[open[len(open)-1]].text != closing[tk.text] {
				return promQuery{}, fmt.Errorf("unbalanced %q", tk.text)
			}
			o := open[len(open)-1]
			open = open[:len(open)-1]
			match[o], match[i] = i, o
		}
	}
	if len(open) > 0 {
		return promQuery{}, fmt.Errorf("unclosed %q", toks[open[len(open)-1]].text)
	}
	punctAt := func(i int, text string) bool {
		return i >= 0 && i < len(toks) && toks[i].kind == tokPunct && toks[i].text == text
	}
	// sum by (l) (x): after an aggregation operator.
	aggregationClauseAt := func(i int) bool {
		return i < len(toks) && toks[i].kind == tokIdent && (strings.EqualFold(toks[i].text, "by") || strings.EqualFold(toks[i].text, "without"))
	}

	var q promQuery
	for i := 0; i < len(toks); i++ {
		tk := toks[i]
		word := strings.ToLower(tk.text)
		switch {
		case punctAt(i, "["):
			i = match[i] // ranges and subqueries name no labels
		case punctAt(i, "{"):
			return promQuery{}, fmt.Errorf("a selector without a metric name")
		case tk.kind != tokIdent:
		case promClauses[word] && punctAt(i+1, "("):
			end := match[i+1]
			names, err := labelList(toks[i+2 : end])
			if err != nil {
				return promQuery{}, fmt.Errorf("%s: %w", word, err)
			}
			g := promGrouping{clause: word, labels: names, from: 0, to: len(toks) - 1}
			if word == "by" || word == "without" {
				switch {
				case punctAt(i-1, ")"): // sum(x) by (l)
					g.from, g.to = match[i-1], i-1
				case punctAt(end+1, "("): // sum by (l) (x)
					g.from, g.to = end+1, match[end+1]
				default:
					return promQuery{}, fmt.Errorf("%s (%s) outside an aggregation", word, strings.Join(names, ", "))
				}
			}
			q.groupings = append(q.groupings, g)
			i = end
		case punctAt(i+1, "(") || aggregationClauseAt(i+1): // a function or an aggregation
		case promKeywords[word]:
		case punctAt(i+1, "{"):
			end := match[i+1]
			names, err := matcherLabels(toks[i+2 : end])
			if err != nil {
				return promQuery{}, fmt.Errorf("%s: %w", tk.text, err)
			}
			q.selectors = append(q.selectors, promSelector{metric: tk.text, labels: names, at: i})
			i = end
		default:
			q.selectors = append(q.selectors, promSelector{metric: tk.text, at: i})
		}
	}
	return q, nil
}

// labelList reads "a, b, c" (a trailing comma allowed).
func labelList(toks []promToken) ([]string, error) {
	var names []string
	for i := 0; i < len(toks); i += 2 {
		if toks[i].kind != tokIdent {
			return nil, fmt.Errorf("%q where a label name belongs", toks[i].text)
		}
		names = append(names, toks[i].text)
		if i+1 < len(toks) && (toks[i+1].kind != tokPunct || toks[i+1].text != ",") {
			return nil, fmt.Errorf("%q after label %s", toks[i+1].text, toks[i].text)
		}
	}
	return names, nil
}

// matcherLabels reads `a="x", b=~"y"` and returns the label names.
func matcherLabels(toks []promToken) ([]string, error) {
	var names []string
	for i := 0; i < len(toks); i += 4 {
		if i+2 >= len(toks) || toks[i].kind != tokIdent || toks[i+1].kind != tokPunct || !promMatchOps[toks[i+1].text] ||
			toks[i+2].kind != tokString {
			return nil, fmt.Errorf("malformed label matcher at %q", toks[i].text)
		}
		names = append(names, toks[i].text)
		if i+3 < len(toks) && (toks[i+3].kind != tokPunct || toks[i+3].text != ",") {
			return nil, fmt.Errorf("%q after matcher of %s", toks[i+3].text, toks[i].text)
		}
	}
	return names, nil
}

// The tokenizer itself, so that a bug in it cannot make the dashboard checks pass vacuously.
func TestParsePromQL(t *testing.T) {
	// describe prints selectors as metric[labels] and groupings as clause[labels]:metrics-in-scope.
	describe := func(q promQuery) string {
		var parts []string
		for _, s := range q.selectors {
			parts = append(parts, fmt.Sprintf("%s%v", s.metric, s.labels))
		}
		for _, g := range q.groupings {
			var in []string
			for _, s := range q.selectors {
				if s.at >= g.from && s.at <= g.to {
					in = append(in, s.metric)
				}
			}
			parts = append(parts, fmt.Sprintf("%s%v:%s", g.clause, g.labels, strings.Join(in, ",")))
		}
		return strings.Join(parts, " ")
	}
	tests := []struct {
		expr, want, wantErr string
	}{{
		expr: `max by (target, threads) (mysqlbench_step_qps{namespace="$namespace", run=~"${run:regex}"})`,
		want: "mysqlbench_step_qps[namespace run] by[target threads]:mysqlbench_step_qps",
	}, {
		expr: `histogram_quantile(0.95, sum(rate(d_bucket{a="x"}[$__rate_interval])) by (le)) > bool 2`,
		want: "d_bucket[a] by[le]:d_bucket",
	}, {
		expr: `label_replace(sum without (x) (m), "schedule", "(standalone)", "schedule", "")`,
		want: "m[] without[x]:m",
	}, {
		expr: "sum by (a) (x_sum[1h:5m] offset 1d) / on (a) group_left sum by (a) (x_count) # ratio",
		want: "x_sum[] x_count[] by[a]:x_sum on[a]:x_sum,x_count by[a]:x_count",
	}, {
		expr: `up{job='a\'b'} unless ignoring (instance) down`,
		want: "up[job] down[] ignoring[instance]:up,down",
	},
		{expr: `{__name__="up"}`, wantErr: "without a metric name"},
		{expr: `sum(up`, wantErr: "unclosed"},
		{expr: `up{job="a"`, wantErr: "unclosed"},
		{expr: `up{job}`, wantErr: "malformed label matcher"},
		{expr: `up by (job)`, wantErr: "outside an aggregation"},
		{expr: `sum by ("job") (up)`, wantErr: "label name"},
		{expr: `up{job="a}`, wantErr: "unterminated string"},
	}
	for _, tt := range tests {
		q, err := parsePromQL(tt.expr)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parsePromQL(%s) error %v, want one saying %q", tt.expr, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("parsePromQL(%s): %v", tt.expr, err)
		case describe(q) != tt.want:
			t.Errorf("parsePromQL(%s) = %s, want %s", tt.expr, describe(q), tt.want)
		}
	}
}

// checkExpr against the real families: what it must reject.
func TestCheckExpr(t *testing.T) {
	families := exportedFamilies(t)
	tests := []struct{ expr, wantErr string }{
		{`mysqlbench_step_qps{namespace="a"}`, ""},
		{`histogram_quantile(0.5, sum by (schedule, le) (increase(mysqlbench_step_duration_seconds_bucket[1h])))`, ""},
		{`mysqlbench_step_qpss`, "not exported"},
		{`mysqlbench_step_duration_seconds{namespace="a"}`, "is a histogram"},
		{`mysqlbench_runs_total{phase="Failed"}`, "no label phase"},
		{`sum by (run) (mysqlbench_runs_total)`, "groups by run"},
		{`sum by (le) (mysqlbench_step_duration_seconds_count)`, "groups by le"},
		{`sum by (schedule) (vector(1)) + mysqlbench_runs_total`, "applies to no metric"},
		{`vector(1)`, "no metric"},
	}
	for _, tt := range tests {
		errs := checkExpr(families, tt.expr)
		if tt.wantErr == "" {
			if len(errs) > 0 {
				t.Errorf("checkExpr(%s) = %v, want no error", tt.expr, errs)
			}
			continue
		}
		if len(errs) == 0 || !strings.Contains(fmt.Sprint(errs), tt.wantErr) {
			t.Errorf("checkExpr(%s) = %v, want an error saying %q", tt.expr, errs, tt.wantErr)
		}
	}
}
