package metrics

// The chart's operator dashboard marks each run's start and end with Prometheus annotations read
// from the run timestamp gauges, and lets several runs be picked at once.

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// annotationSelector is the annotations' query: one selector, times 1000.
var annotationSelector = regexp.MustCompile(`^\s*(\w+)\{([^}]*)\}\s*\*\s*1000\s*$`)

type dashboardAnnotation struct {
	Name            string
	Datasource      *datasourceRef
	Enable          bool
	Expr            string
	TitleFormat     string
	UseValueForTime bool
}

type dashboardWithAnnotations struct {
	Annotations struct{ List []dashboardAnnotation }
	Templating  struct {
		List []struct {
			Name       string
			Multi      bool
			IncludeAll bool
			AllValue   string
		}
	}
}

func loadAnnotated(t *testing.T) (dashboardWithAnnotations, string) {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboardWithAnnotations
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d, string(data)
}

func TestDashboardRunAnnotations(t *testing.T) {
	d, _ := loadAnnotated(t)
	families := exportedFamilies(t)
	for _, want := range []struct {
		name, metric string
		titleLabels  []string
	}{
		{"Run start", "mysqlbench_run_start_timestamp_seconds", []string{"run"}},
		{"Run end", "mysqlbench_run_completion_timestamp_seconds", []string{"run", "outcome"}},
	} {
		var a *dashboardAnnotation
		for i := range d.Annotations.List {
			if d.Annotations.List[i].Name == want.name {
				a = &d.Annotations.List[i]
			}
		}
		if a == nil {
			t.Errorf("no annotation %q", want.name)
			continue
		}
		if a.Datasource == nil || a.Datasource.Type != "prometheus" || a.Datasource.UID != datasourceVar {
			t.Errorf("annotation %q: datasource %+v, want prometheus %s", want.name, a.Datasource, datasourceVar)
		}
		if !a.Enable {
			t.Errorf("annotation %q is not enabled", want.name)
		}
		// The value is the time in seconds; Grafana wants milliseconds when it places the
		// annotation at the value instead of at the sample's time.
		if !a.UseValueForTime {
			t.Errorf("annotation %q: useValueForTime false, want true", want.name)
		}
		m := annotationSelector.FindStringSubmatch(a.Expr)
		if m == nil || m[1] != want.metric {
			t.Errorf("annotation %q: expr %q, want a selector of %s times 1000", want.name, a.Expr, want.metric)
			continue
		}
		if m[2] != `namespace="$namespace", run=~"$run"` {
			t.Errorf("annotation %q: matchers {%s}, want the namespace and the run variable", want.name, m[2])
		}
		f, ok := families[want.metric]
		if !ok {
			t.Errorf("annotation %q: %s is not exported", want.name, want.metric)
			continue
		}
		for _, l := range append([]string{LabelNamespace}, want.titleLabels...) {
			if !f.labels[l] {
				t.Errorf("annotation %q: %s has no label %s", want.name, want.metric, l)
			}
		}
		for _, l := range want.titleLabels {
			if !strings.Contains(a.TitleFormat, "{{"+l+"}}") {
				t.Errorf("annotation %q: title %q does not name the %s", want.name, a.TitleFormat, l)
			}
		}
	}
}

func TestDashboardAnnotationRunVariableMulti(t *testing.T) {
	d, raw := loadAnnotated(t)
	var found bool
	for _, v := range d.Templating.List {
		if v.Name != "run" {
			continue
		}
		found = true
		if !v.Multi || !v.IncludeAll || v.AllValue != ".*" {
			t.Errorf("variable run: multi %v includeAll %v allValue %q, want several runs and All matching .*", v.Multi, v.IncludeAll, v.AllValue)
		}
	}
	if !found {
		t.Error("no variable run")
	}
	// A multi-valued variable expands to a regular expression: = would match none of two runs.
	if strings.Contains(raw, `run=\"$run\"`) {
		t.Errorf("%s still matches run=\"$run\"; want run=~\"$run\"", dashboardFile)
	}
}
