package compare

import (
	"math"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
)

// A Rule is one metric the verdict judges and the smallest change of it that matters. It says
// which way is harmful, how large a change must be, where the metric is in a cell's repetitions
// and in a step, and where its findings go in status. It tests nothing alone: every comparison
// (CompareWith's hierarchy, PairedByRound's rounds, History's change points) tests every rule
// the same way and adjusts all their p-values together, which is what holds the chance of a
// false Regressed to alpha for the whole run however many rules apply.
type Rule interface {
	// Metric names what the rule judges, as acknowledgements and change points name it.
	Metric() v1.AckMetric
	// Name is how notes name the rule ("QPS", "p95").
	Name() string
	// Label is how a cell's or target's description names the metric under a comparison's
	// Metric (tpmC for go-tpc's throughput).
	Label(metric string) string
	// HigherIsBetter: a fall is harmful (a throughput), else a rise (a latency).
	HigherIsBetter() bool
	// Percent is the smallest harmful change that matters, in percent, as the policy gives it.
	Percent() float64
	// Samples are the metric's repetitions in a cell.
	Samples(c cells.Cell) []float64
	// Step is one step's value of the metric; 0 when the step did not measure it.
	Step(s v1.StepResult) float64

	// cell and target point at the rule's fields of a cell's and a target's status.
	cell(c *v1.CellChange) cellFields
	target(t *v1.TargetChange) targetFields
	// measured says whether a compared cell holds the metric on both sides.
	measured(c v1.CellChange) bool
	// applied records the rule's minimum effect in a comparison's summary.
	applied(s *v1.Comparison)
}

// cellFields are where a rule's findings on one cell go: the medians of both sides, the change
// in percent, the verdict, the p-value and the adjusted q.
type cellFields struct {
	baseline, current, change *float64
	verdict                   *v1.CellVerdict
	p, q                      *float64
}

// targetFields are where a rule's findings on one target go: the geometric-mean ratio with its
// interval, the p-value, the adjusted q and the verdict.
type targetFields struct {
	ratio, low, high *float64
	p, q             *float64
	verdict          *v1.CellVerdict
}

// Policy is a RegressionPolicy as the comparisons apply it.
type Policy struct {
	// Rules are judged together, in this order. The first is the throughput's: a cell is
	// compared when both runs measured it, and its target level alone carries the figures of
	// the between-run allowance (vs the other targets, run-to-run CV, smallest detectable drop).
	Rules []Rule
	// Alpha is the level of the tests over the whole comparison.
	Alpha        float64
	Acknowledged []v1.Acknowledgement
	// RunToRunCV is the between-run allowance (a fraction) when the history has none, and
	// RunToRunSource where it comes from (SourcePolicy or SourceDefault).
	RunToRunCV     float64
	RunToRunSource string
}

// NewPolicy is the one place a RegressionPolicy becomes rules: a new rule is one type here
// and its minimum effect in v1.RegressionPolicy.
func NewPolicy(p v1.RegressionPolicy) Policy {
	source := SourceDefault
	if p.RunToRunCVPercent != nil {
		source = SourcePolicy
	}
	return Policy{
		Rules: []Rule{
			QPSDrop{percent: p.QPSDropPercentOrDefault()},
			P95Rise{percent: p.P95RisePercentOrDefault()},
		},
		Alpha:          p.AlphaOrDefault(),
		Acknowledged:   p.Acknowledged,
		RunToRunCV:     p.RunToRunCVPercentOrDefault() / 100,
		RunToRunSource: source,
	}
}

// Comparison is a comparison of run under the policy before any verdict: the minimum effects
// and the level it applies.
func (p Policy) Comparison(run string) v1.Comparison {
	s := v1.Comparison{Run: run, Alpha: p.Alpha}
	for _, r := range p.Rules {
		r.applied(&s)
	}
	return s
}

// ruleFor is the policy's first rule harmful in the same direction: the minimum effect of a
// series that names only its direction (Shifts).
func (p Policy) ruleFor(higherIsBetter bool) Rule {
	for _, r := range p.Rules {
		if r.HigherIsBetter() == higherIsBetter {
			return r
		}
	}
	return nil
}

// QPSDrop is the throughput falling (QPS, or tpmC for go-tpc) by at least
// spec.regression.qpsDropPercent.
type QPSDrop struct{ percent float64 }

func (QPSDrop) Metric() v1.AckMetric           { return v1.AckQPS }
func (QPSDrop) Name() string                   { return "QPS" }
func (QPSDrop) Label(metric string) string     { return metricName(metric) }
func (QPSDrop) HigherIsBetter() bool           { return true }
func (r QPSDrop) Percent() float64             { return r.percent }
func (QPSDrop) Samples(c cells.Cell) []float64 { return c.QPS }
func (QPSDrop) Step(s v1.StepResult) float64   { return s.Throughput() }

func (QPSDrop) cell(c *v1.CellChange) cellFields {
	return cellFields{&c.BaselineQPS, &c.QPS, &c.QPSChangePercent, &c.QPSVerdict, &c.QPSP, &c.QPSQ}
}

func (QPSDrop) target(t *v1.TargetChange) targetFields {
	return targetFields{&t.QPSRatio, &t.QPSLow, &t.QPSHigh, &t.QPSP, &t.QPSQ, &t.QPSVerdict}
}

// measured: a cell is compared only when both runs measured its throughput.
func (QPSDrop) measured(v1.CellChange) bool { return true }

func (r QPSDrop) applied(s *v1.Comparison) { s.QPSDropPercent = r.percent }

// P95Rise is the p95 latency rising by at least spec.regression.p95RisePercent.
type P95Rise struct{ percent float64 }

func (P95Rise) Metric() v1.AckMetric           { return v1.AckP95 }
func (P95Rise) Name() string                   { return "p95" }
func (P95Rise) Label(string) string            { return "p95" }
func (P95Rise) HigherIsBetter() bool           { return false }
func (r P95Rise) Percent() float64             { return r.percent }
func (P95Rise) Samples(c cells.Cell) []float64 { return c.P95Ms }
func (P95Rise) Step(s v1.StepResult) float64   { return s.Latency.P95Ms }

func (P95Rise) cell(c *v1.CellChange) cellFields {
	return cellFields{&c.BaselineP95Ms, &c.P95Ms, &c.P95ChangePercent, &c.P95Verdict, &c.P95P, &c.P95Q}
}

func (P95Rise) target(t *v1.TargetChange) targetFields {
	return targetFields{&t.P95Ratio, &t.P95Low, &t.P95High, &t.P95P, &t.P95Q, &t.P95Verdict}
}

func (P95Rise) measured(c v1.CellChange) bool { return c.BaselineP95Ms > 0 && c.P95Ms > 0 }

func (r P95Rise) applied(s *v1.Comparison) { s.P95RisePercent = r.percent }

// minEffect is r's minimum effect as a fraction (0.05).
func minEffect(r Rule) float64 { return r.Percent() / 100 }

// harmLimit is the log of the ratio at the minimum effect on r's harmful side: below 0 for a
// throughput's drop, above 0 for a latency's rise.
func harmLimit(r Rule) float64 {
	if r.HigherIsBetter() {
		return math.Log(1 - minEffect(r))
	}
	return math.Log(1 + minEffect(r))
}

// threshold says r's minimum effect for a verdict's message: "QPS -5%", "p95 +10%".
func threshold(r Rule, metric string) string {
	sign := "+"
	if r.HigherIsBetter() {
		sign = "-"
	}
	return r.Label(metric) + " " + sign + pct(r.Percent()) + "%"
}

// severity orders regressed cells: how many percentage points the worst of the cell's changes
// went beyond its rule's minimum effect.
func severity(c v1.CellChange, rules []Rule) float64 {
	s := math.Inf(-1)
	for _, r := range rules {
		if !r.measured(c) {
			continue
		}
		change := *r.cell(&c).change
		if r.HigherIsBetter() {
			change = -change
		}
		s = math.Max(s, change-r.Percent())
	}
	return s
}
