package metrics

// The Grafana dashboard the chart ships (charts/mysqlbench-operator/files/grafana): every query
// must name metrics and labels this package exports, so that renaming one breaks this test
// instead of leaving the dashboard's panels empty. PromQL is read by Prometheus' own parser
// (promql/parser of Prometheus 3.5 LTS, module v0.305.0: the newest whose requirements keep this
// module's Kubernetes libraries where they are).

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	promlabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// promSelector is a metric an expression names, with the labels of its matchers.
type promSelector struct {
	metric string
	labels []string
}

// promGrouping is a by, without, on, ignoring, group_left or group_right label list and the
// selectors (indexes into promQuery.selectors) it applies to: an aggregation's argument, or
// both operands of a binary operator.
type promGrouping struct {
	clause    string
	labels    []string
	selectors []int
}

type promQuery struct {
	selectors []promSelector
	groupings []promGrouping
}

// grafanaInterval matches Grafana's interval variables, which stand where PromQL wants a
// duration ([$__rate_interval]); every other variable stands inside a label value.
var grafanaInterval = regexp.MustCompile(`\$\{?__(?:range|interval|rate_interval)(?:_ms|_s)?\}?`)

// substituteVariables turns a dashboard query into PromQL as Grafana would before sending it:
// intervals become a duration, other variables a plain value.
func substituteVariables(expr string) string {
	expr = grafanaInterval.ReplaceAllString(expr, "5m")
	return variableRef.ReplaceAllString(expr, "grafana_variable")
}

// parsePromQL reads a dashboard query with Prometheus' own parser and returns the selectors and
// grouping clauses in it.
func parsePromQL(expr string) (promQuery, error) {
	root, err := parser.ParseExpr(substituteVariables(expr))
	if err != nil {
		return promQuery{}, err
	}
	var q promQuery
	// selectorsOf appends the selectors under node (once each) and returns their indexes.
	seen := map[*parser.VectorSelector]int{}
	selectorsOf := func(node parser.Node) []int {
		var out []int
		parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
			vs, ok := n.(*parser.VectorSelector)
			if !ok {
				return nil
			}
			i, known := seen[vs]
			if !known {
				s := promSelector{metric: vs.Name}
				for _, m := range vs.LabelMatchers {
					if m.Name == promlabels.MetricName {
						s.metric = m.Value
						continue
					}
					s.labels = append(s.labels, m.Name)
				}
				i = len(q.selectors)
				seen[vs] = i
				q.selectors = append(q.selectors, s)
			}
			out = append(out, i)
			return nil
		})
		return out
	}
	selectorsOf(root)
	parser.Inspect(root, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.AggregateExpr:
			if len(n.Grouping) == 0 {
				return nil
			}
			clause := "by"
			if n.Without {
				clause = "without"
			}
			q.groupings = append(q.groupings, promGrouping{clause: clause, labels: n.Grouping, selectors: selectorsOf(n.Expr)})
		case *parser.BinaryExpr:
			vm := n.VectorMatching
			if vm == nil {
				return nil
			}
			operands := append(selectorsOf(n.LHS), selectorsOf(n.RHS)...)
			if len(vm.MatchingLabels) > 0 {
				clause := "ignoring"
				if vm.On {
					clause = "on"
				}
				q.groupings = append(q.groupings, promGrouping{clause: clause, labels: vm.MatchingLabels, selectors: operands})
			}
			if len(vm.Include) > 0 {
				clause := "group_left"
				if vm.Card == parser.CardOneToMany {
					clause = "group_right"
				}
				q.groupings = append(q.groupings, promGrouping{clause: clause, labels: vm.Include, selectors: operands})
			}
		}
		return nil
	})
	return q, nil
}

// What the dashboard checks read out of a query: a bug here would let them pass vacuously.
func TestParsePromQL(t *testing.T) {
	// describe prints selectors as metric[labels] and groupings as clause[labels]:metrics-in-scope.
	describe := func(q promQuery) string {
		var parts []string
		for _, s := range q.selectors {
			parts = append(parts, fmt.Sprintf("%s%v", s.metric, s.labels))
		}
		for _, g := range q.groupings {
			var in []string
			for _, i := range g.selectors {
				in = append(in, q.selectors[i].metric)
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
		expr: "sum by (a) (max_over_time(x_sum[1h:5m] offset 1d)) / on (a) group_left (b) sum by (a) (x_count) # ratio",
		want: "x_sum[] x_count[] on[a]:x_sum,x_count group_left[b]:x_sum,x_count by[a]:x_sum by[a]:x_count",
	}, {
		expr: `up{job='a\'b'} unless ignoring (instance) down`,
		want: "up[job] down[] ignoring[instance]:up,down",
	}, {
		expr: `{__name__="up", job="a"} * on (job) group_right count(down)`,
		want: "up[job] down[] on[job]:up,down",
	}, {
		expr: `increase(mysqlbench_runs_total[$__range]) * 1000`,
		want: "mysqlbench_runs_total[]",
	},
		{expr: `sum(up`, wantErr: "unclosed left parenthesis"},
		{expr: `up{job="a"`, wantErr: "unexpected end of input"},
		{expr: `up{job}`, wantErr: "unexpected"},
		{expr: `up by (job)`, wantErr: "unexpected"},
		{expr: `max_over_time(up[5m)`, wantErr: "unexpected"},
		{expr: `up{job="a}`, wantErr: "unterminated quoted string"},
		{expr: `rate(up)`, wantErr: "expected type range vector"},
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
		{`mysqlbench_step_qps / on (phase) mysqlbench_step_tps`, "groups by phase"},
		{`vector(1)`, "no metric"},
		{`sum(mysqlbench_runs_total`, "unclosed left parenthesis"},
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
