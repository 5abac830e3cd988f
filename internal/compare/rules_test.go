package compare

import (
	"math"
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
)

func TestNewPolicy(t *testing.T) {
	for _, tt := range []struct {
		name      string
		policy    v1.RegressionPolicy
		qps, p95  float64
		alpha, cv float64
		source    string
	}{
		{"defaults", v1.RegressionPolicy{}, v1.DefaultQPSDropPercent, v1.DefaultP95RisePercent, 0.05, 0.06, SourceDefault},
		{"set", v1.RegressionPolicy{QPSDropPercent: f(2.5), P95RisePercent: f(0), Alpha: f(0.1), RunToRunCVPercent: f(0)},
			2.5, 0, 0.1, 0, SourcePolicy},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPolicy(tt.policy)
			if len(p.Rules) != 2 || p.Rules[0] != (QPSDrop{tt.qps}) || p.Rules[1] != (P95Rise{tt.p95}) {
				t.Errorf("rules = %#v, want QPSDrop %v then P95Rise %v", p.Rules, tt.qps, tt.p95)
			}
			if p.Alpha != tt.alpha || math.Abs(p.RunToRunCV-tt.cv) > 1e-12 || p.RunToRunSource != tt.source {
				t.Errorf("alpha %v, run-to-run %v (%s), want %v, %v (%s)", p.Alpha, p.RunToRunCV, p.RunToRunSource, tt.alpha, tt.cv, tt.source)
			}
			if s := p.Comparison("r"); s.Run != "r" || s.QPSDropPercent != tt.qps || s.P95RisePercent != tt.p95 || s.Alpha != tt.alpha {
				t.Errorf("comparison = %+v", s)
			}
			if got := p.ruleFor(true).Metric(); got != v1.AckQPS {
				t.Errorf("ruleFor(higher is better) = %s", got)
			}
			if got := p.ruleFor(false).Metric(); got != v1.AckP95 {
				t.Errorf("ruleFor(lower is better) = %s", got)
			}
		})
	}
}

// Each rule reads its own metric and writes its own status fields, and nothing of another's.
func TestRules(t *testing.T) {
	cell := cells.Cell{Threads: 4, QPS: []float64{100, 110}, P95Ms: []float64{5, 6}}
	for _, tt := range []struct {
		rule      Rule
		metric    v1.AckMetric
		name      string
		label     string // under go-tpc's metric
		higher    bool
		samples   []float64
		step      v1.StepResult
		stepValue float64
		threshold string
		limit     float64
		// written checks that the rule's fields landed where status has them.
		written func(c v1.CellChange, t v1.TargetChange, s v1.Comparison) bool
		// measured is a cell whose other metric is missing.
		measured v1.CellChange
	}{
		{
			rule: QPSDrop{5}, metric: v1.AckQPS, name: "QPS", label: "tpmC", higher: true, samples: cell.QPS,
			step: v1.StepResult{TPCC: &v1.TPCCResult{TpmC: 300}, Latency: v1.Latency{P95Ms: 7}}, stepValue: 300,
			threshold: "tpmC -5%", limit: math.Log(0.95),
			written: func(c v1.CellChange, t v1.TargetChange, s v1.Comparison) bool {
				return c.BaselineQPS == 1 && c.QPS == 2 && c.QPSChangePercent == 3 && c.QPSVerdict == v1.CellRegressed &&
					c.QPSP == 4 && c.QPSQ == 5 && c.P95Verdict == "" && c.P95Ms == 0 &&
					t.QPSRatio == 1 && t.QPSLow == 2 && t.QPSHigh == 3 && t.QPSP == 4 && t.QPSQ == 5 &&
					t.QPSVerdict == v1.CellRegressed && t.P95Ratio == 0 && s.QPSDropPercent == 5 && s.P95RisePercent == 0
			},
			measured: v1.CellChange{BaselineQPS: 100, QPS: 90},
		},
		{
			rule: P95Rise{10}, metric: v1.AckP95, name: "p95", label: "p95", higher: false, samples: cell.P95Ms,
			step: v1.StepResult{QPS: v1.QPS{Total: 100}, Latency: v1.Latency{P95Ms: 7}}, stepValue: 7,
			threshold: "p95 +10%", limit: math.Log(1.1),
			written: func(c v1.CellChange, t v1.TargetChange, s v1.Comparison) bool {
				return c.BaselineP95Ms == 1 && c.P95Ms == 2 && c.P95ChangePercent == 3 && c.P95Verdict == v1.CellRegressed &&
					c.P95P == 4 && c.P95Q == 5 && c.QPSVerdict == "" && c.QPS == 0 &&
					t.P95Ratio == 1 && t.P95Low == 2 && t.P95High == 3 && t.P95P == 4 && t.P95Q == 5 &&
					t.P95Verdict == v1.CellRegressed && t.QPSRatio == 0 && s.P95RisePercent == 10 && s.QPSDropPercent == 0
			},
			measured: v1.CellChange{BaselineP95Ms: 5, P95Ms: 6},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.rule
			if r.Metric() != tt.metric || r.Name() != tt.name || r.Label("tpmC") != tt.label || r.HigherIsBetter() != tt.higher {
				t.Errorf("metric %s, name %s, label %s, higher is better %v", r.Metric(), r.Name(), r.Label("tpmC"), r.HigherIsBetter())
			}
			if got := r.Samples(cell); &got[0] != &tt.samples[0] {
				t.Errorf("samples = %v, want %v", got, tt.samples)
			}
			if got := r.Step(tt.step); got != tt.stepValue {
				t.Errorf("step = %v, want %v", got, tt.stepValue)
			}
			if got := threshold(r, "tpmC"); got != tt.threshold {
				t.Errorf("threshold = %q, want %q", got, tt.threshold)
			}
			if got := harmLimit(r); got != tt.limit {
				t.Errorf("harm limit = %v, want %v", got, tt.limit)
			}
			var c v1.CellChange
			cf := r.cell(&c)
			*cf.baseline, *cf.current, *cf.change, *cf.verdict, *cf.p, *cf.q = 1, 2, 3, v1.CellRegressed, 4, 5
			var tc v1.TargetChange
			tf := r.target(&tc)
			*tf.ratio, *tf.low, *tf.high, *tf.p, *tf.q, *tf.verdict = 1, 2, 3, 4, 5, v1.CellRegressed
			var s v1.Comparison
			r.applied(&s)
			if !tt.written(c, tc, s) {
				t.Errorf("fields written: cell %+v, target %+v, summary %+v", c, tc, s)
			}
			if !r.measured(tt.measured) {
				t.Errorf("measured(%+v) = false", tt.measured)
			}
		})
	}
	if (P95Rise{}).measured(v1.CellChange{BaselineQPS: 100, QPS: 90}) {
		t.Error("a cell without p95 measured p95")
	}
}

func TestSeverity(t *testing.T) {
	rules := NewPolicy(v1.RegressionPolicy{}).Rules
	for _, tt := range []struct {
		name string
		c    v1.CellChange
		want float64
	}{
		{"QPS only", v1.CellChange{QPSChangePercent: -12}, 7},
		{"p95 worse than QPS", v1.CellChange{QPSChangePercent: -6, BaselineP95Ms: 5, P95Ms: 7, P95ChangePercent: 40}, 30},
		{"QPS worse than p95", v1.CellChange{QPSChangePercent: -30, BaselineP95Ms: 5, P95Ms: 5.5, P95ChangePercent: 10}, 25},
		{"p95 not measured", v1.CellChange{QPSChangePercent: -6, P95ChangePercent: 40}, 1},
	} {
		if got := severity(tt.c, rules); got != tt.want {
			t.Errorf("%s: severity = %v, want %v", tt.name, got, tt.want)
		}
	}
}
