package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	moremath "github.com/aclements/go-moremath/stats"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
)

// TargetPair is one target measured twice inside one run: Base is the target holding the
// baseline's side, Cand the one holding the candidate's, Name how the comparison reports it (the
// compared run's name of the target, so that acknowledgements apply as they did there).
type TargetPair struct {
	Name, Base, Cand string
}

// PairedByRound compares, inside one run whose targets come in pairs (a schedule's confirmation
// run), each pair's candidate side with its baseline side, round by round.
//
// Two runs measured on two nights differ by more than their repetitions show: each night has its
// own server instances and its own machine. A confirmation run measures both sides in the same
// rounds (interleaved, a new server instance on each side every round), so the log ratio
// cand/base of one round holds what the two sides share that night and cancels it; what is left
// varies from round to round, instances included. So:
//
//  1. Per cell (a pair at one thread count) and rule, the log ratios of the rounds both sides measured,
//     with a one-sample t test of "the mean log ratio is 0" and an interval at 1 - 2·alpha.
//  2. Per target, the mean over its cells of each round's log ratios: one number per round, and
//     the same test over the rounds (a round's cells share its instances, so they are not
//     independent of each other; the rounds are).
//  3. Every p-value (targets and cells, throughput and p95) adjusted together by
//     Benjamini-Hochberg. A target or cell regressed when its adjusted p-value is below alpha and
//     its ratio is at least the minimum effect in the harmful direction; NoRegression needs every
//     target's interval to exclude the minimum effect and no cell's interval to lie wholly
//     beyond it on the harmful side; anything else is Inconclusive.
//
// With order Sequential (engines that cannot share a node) round r of one side ran hours from
// round r of the other: the pairing then cancels nothing, and the test is as valid, only less
// able to decide. Acknowledged cells are left out as in Compare.
func PairedByRound(run *v1.BenchmarkRun, pairs []TargetPair, regression v1.RegressionPolicy, runName, baselineName string) Result {
	policy := NewPolicy(regression)
	rules, alpha := policy.Rules, policy.Alpha
	res := Result{Summary: policy.Comparison(runName)}
	res.Summary.Baseline = baselineName
	limits := make([]float64, len(rules))
	for ri, r := range rules {
		limits[ri] = harmLimit(r)
	}
	if c := loadclient.For(primaryWorkload(run)); c.Capabilities().Metric.Name != "QPS" {
		res.Summary.Metric = c.Capabilities().Metric.Name
	}
	at := finishedAt(run)
	conf := 1 - 2*alpha

	var tests []pairedTest
	rounds := 0
	for _, g := range pairedGroups(run, pairs) {
		pair, workload := g.pair, g.workload
		base, cand := pairedSteps(run, pair.Base, workload), pairedSteps(run, pair.Cand, workload)
		var threads []int32
		for th := range cand {
			if base[th] != nil {
				threads = append(threads, th)
			}
		}
		slices.Sort(threads)
		// Per rule and round, the log ratios of the target's cells no acknowledgement covers.
		byRound := make([]map[int32][]float64, len(rules))
		for ri := range byRound {
			byRound[ri] = map[int32][]float64{}
		}
		entered := make([]int, len(rules))
		for _, th := range threads {
			c, logs := pairedCell(pair.Name, workload, th, base[th], cand[th], rules)
			i := len(res.Cells)
			res.Cells = append(res.Cells, c)
			rounds = max(rounds, len(logs[0]))
			k := cellKey{pair.Name, workload, th}
			for ri, r := range rules {
				if len(logs[ri]) == 0 {
					continue
				}
				t := pairedT(values(logs[ri]), conf)
				// By index: res.Cells grows, so no pointer into it outlives this loop.
				set := func(q float64, adjusted bool) {
					f := r.cell(&res.Cells[i].CellChange)
					*f.p, *f.verdict = round4(t.p), t.verdict(q, alpha, limits[ri], r.HigherIsBetter())
					if adjusted {
						*f.q = round4(q)
					}
				}
				// An acknowledged metric keeps its own test's verdict, shown but deciding nothing
				// (finishCell); the others are judged once adjusted.
				set(t.p, false)
				if ackCovers(policy.Acknowledged, k, r.Metric(), at) {
					continue
				}
				entered[ri]++
				for rd, l := range logs[ri] {
					byRound[ri][rd] = append(byRound[ri][rd], l)
				}
				tests = append(tests, pairedTest{p: t.p, apply: func(q float64) {
					set(q, true)
					if t.beyond(limits[ri], r.HigherIsBetter()) {
						res.Cells[i].beyond[ri] = true
					}
				}})
			}
		}
		if len(threads) == 0 {
			continue
		}
		tc := v1.TargetChange{Target: pair.Name, Workload: workload, Confidence: conf}
		results := make([]pairedResult, len(rules))
		for ri := range rules {
			results[ri] = pairedT(roundMeans(byRound[ri], entered[ri]), conf)
		}
		tc.Cells = int32(entered[0])
		notes := []string{fmt.Sprintf("paired by round over %d round(s)", results[0].n)}
		for ri, r := range rules {
			if entered[ri] == 0 {
				continue
			}
			pr, f := results[ri], r.target(&tc)
			*f.ratio, *f.low, *f.high, *f.p = round4(math.Exp(pr.mean)), round4(pr.low()), round4(pr.high()), round4(pr.p)
			if pr.reason != "" {
				notes = append(notes, r.Name()+": "+pr.reason)
			}
		}
		tc.Note = strings.Join(notes, "; ")
		res.Targets = append(res.Targets, tc)
		j := len(res.Targets) - 1
		for ri, r := range rules {
			pr := results[ri]
			switch {
			case entered[ri] == 0:
			case pr.valid():
				tests = append(tests, pairedTest{p: pr.p, apply: func(q float64) {
					f := r.target(&res.Targets[j])
					*f.q = round4(q)
					*f.verdict = pr.verdict(q, alpha, limits[ri], r.HigherIsBetter())
				}})
			default:
				*r.target(&res.Targets[j]).verdict = v1.CellInconclusive
			}
		}
	}

	ps := make([]float64, len(tests))
	for i, t := range tests {
		ps[i] = t.p
	}
	for i, q := range stats.AdjustBH(ps) {
		tests[i].apply(q)
	}
	res.Summary.Tests = int32(len(tests))
	finishVerdicts(&res, rules, policy.Acknowledged, at)
	pairedSummary(&res, rules, rounds)
	return res
}

// pairedGroup is one pair's cells of one workload: what a target-level verdict judges.
type pairedGroup struct {
	pair     TargetPair
	workload string
}

// pairedGroups are the pairs, each with every workload its candidate side measured, in the
// order measured: each workload of a pair is judged on its own, as in CompareWith.
func pairedGroups(run *v1.BenchmarkRun, pairs []TargetPair) []pairedGroup {
	var out []pairedGroup
	for _, pair := range pairs {
		var seen []string
		for _, ts := range run.Status.Targets {
			if ts.Name != pair.Cand {
				continue
			}
			for _, s := range ts.Steps {
				if !slices.Contains(seen, s.Workload) {
					seen = append(seen, s.Workload)
					out = append(out, pairedGroup{pair, s.Workload})
				}
			}
		}
		if len(seen) == 0 {
			out = append(out, pairedGroup{pair: pair})
		}
	}
	return out
}

// pairedSteps are a target's comparable ladder steps of one workload by thread count and round
// (repetition).
func pairedSteps(run *v1.BenchmarkRun, target, workload string) map[int32]map[int32]v1.StepResult {
	out := map[int32]map[int32]v1.StepResult{}
	for _, ts := range run.Status.Targets {
		if ts.Name != target {
			continue
		}
		for _, s := range ts.Steps {
			if !cells.Comparable(s) || s.Workload != workload {
				continue
			}
			if out[s.Threads] == nil {
				out[s.Threads] = map[int32]v1.StepResult{}
			}
			out[s.Threads][s.RepetitionOrDefault()] = s
		}
	}
	return out
}

// pairedCell is one cell of a pair: the spread of each side's throughput and each rule's medians
// (for the table), and per rule the log ratios cand/base of the rounds both sides measured, by
// round (none for a rule that some such round did not measure on both sides).
func pairedCell(name, workload string, threads int32, base, cand map[int32]v1.StepResult, rules []Rule) (Cell, []map[int32]float64) {
	logs := make([]map[int32]float64, len(rules))
	sides := make([][2][]float64, len(rules)) // each rule's values of base and cand
	whole := make([]bool, len(rules))
	for ri := range rules {
		logs[ri], whole[ri] = map[int32]float64{}, true
	}
	var bq, cq []float64
	for r, c := range cand {
		b, ok := base[r]
		if !ok {
			continue
		}
		bq, cq = append(bq, b.Throughput()), append(cq, c.Throughput())
		for ri, rule := range rules {
			bv, cv := rule.Step(b), rule.Step(c)
			if !(bv > 0 && cv > 0) {
				whole[ri] = false
				continue
			}
			logs[ri][r] = math.Log(cv / bv)
			sides[ri][0], sides[ri][1] = append(sides[ri][0], bv), append(sides[ri][1], cv)
		}
	}
	bs, cs := stats.Summarize(bq), stats.Summarize(cq)
	c := v1.CellChange{
		Target: name, Workload: workload, Threads: threads, BaselineN: int32(len(bq)), N: int32(len(cq)),
		BaselineQPSCV: round1(bs.CV * 100), QPSCV: round1(cs.CV * 100),
		BaselineQPSSpread: round1(spread(bs)), QPSSpread: round1(spread(cs)),
		SpreadConfidence: round4(min(bs.CIConfidence, cs.CIConfidence)),
	}
	for ri, r := range rules {
		if !whole[ri] {
			logs[ri], sides[ri] = map[int32]float64{}, [2][]float64{}
		}
		if len(logs[ri]) == 0 {
			continue
		}
		f := r.cell(&c)
		*f.baseline, *f.current = stats.Summarize(sides[ri][0]).Median, stats.Summarize(sides[ri][1]).Median
		*f.change = round1((math.Exp(meanOf(values(logs[ri]))) - 1) * 100)
	}
	return newCell(c, rules), logs
}

// values are m's values in the order of its keys (the rounds).
func values(m map[int32]float64) []float64 {
	keys := make([]int32, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]float64, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// roundMeans are, per round in which all of a target's cells were paired, the mean of their log
// ratios: a round missing a cell would weigh the others differently, so it is left out.
func roundMeans(byRound map[int32][]float64, cellCount int) []float64 {
	rounds := make([]int32, 0, len(byRound))
	for r, ls := range byRound {
		if len(ls) == cellCount {
			rounds = append(rounds, r)
		}
	}
	slices.Sort(rounds)
	out := make([]float64, len(rounds))
	for i, r := range rounds {
		out[i] = meanOf(byRound[r])
	}
	return out
}

func meanOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// pairedResult is a one-sample t test of log ratios: their mean, the interval's half-width at
// the given confidence (log scale), and the two-sided p-value of "the mean is 0".
type pairedResult struct {
	n          int
	mean, half float64
	p          float64
	reason     string
}

// pairedT tests xs (log ratios, one per round). Fewer than 2 rounds give no interval. Rounds
// that agree exactly (no spread at all) give a zero-width interval: p 1 when they are all 0,
// else 0 (every round moved by the same amount).
func pairedT(xs []float64, conf float64) pairedResult {
	r := pairedResult{n: len(xs), mean: meanOf(xs), p: 1}
	if r.n < 2 {
		r.reason = fmt.Sprintf("%d round(s) measured on both sides: 2 are needed for an interval", r.n)
		return r
	}
	var ss float64
	for _, x := range xs {
		ss += (x - r.mean) * (x - r.mean)
	}
	se := math.Sqrt(ss/float64(r.n-1)) / math.Sqrt(float64(r.n))
	if se == 0 {
		if r.mean != 0 {
			r.p = 0
		}
		return r
	}
	df := float64(r.n - 1)
	r.half = stats.TQuantile(df, 1-(1-conf)/2) * se
	r.p = 2 * (1 - moremath.TDist{V: df}.CDF(math.Abs(r.mean)/se))
	return r
}

func (r pairedResult) valid() bool { return r.n >= 2 }

// low and high bound the ratio's interval; 0 when there is none.
func (r pairedResult) low() float64 {
	if !r.valid() {
		return 0
	}
	return math.Exp(r.mean - r.half)
}

func (r pairedResult) high() float64 {
	if !r.valid() {
		return 0
	}
	return math.Exp(r.mean + r.half)
}

// verdict judges the mean log ratio against limit, the log of the minimum effect's ratio (below
// 0 for a throughput drop, above 0 for a latency rise), with q its adjusted p-value: significant
// and at least the minimum effect is Regressed (harmful) or Improved; an interval inside the
// minimum effect on the harmful side is NoChange; anything else is Inconclusive.
func (r pairedResult) verdict(q, alpha, limit float64, higherIsBetter bool) v1.CellVerdict {
	if !r.valid() {
		return v1.CellInconclusive
	}
	harmful := (r.mean < 0) == higherIsBetter
	big := math.Abs(r.mean) >= math.Abs(limit)
	switch {
	case q < alpha && big && harmful:
		return v1.CellRegressed
	case q < alpha && big:
		return v1.CellImproved
	case higherIsBetter && r.mean-r.half > limit:
		return v1.CellNoChange
	case !higherIsBetter && r.mean+r.half < limit:
		return v1.CellNoChange
	default:
		return v1.CellInconclusive
	}
}

// beyond says whether the whole interval lies past the minimum effect on the harmful side.
func (r pairedResult) beyond(limit float64, higherIsBetter bool) bool {
	if !r.valid() {
		return false
	}
	if higherIsBetter {
		return r.mean+r.half < limit
	}
	return r.mean-r.half > limit
}

// pairedTest is one p-value of a paired comparison and what to do with its adjusted value.
type pairedTest struct {
	p     float64
	apply func(q float64)
}

// pairedSummary counts the cells and decides the verdict of a paired comparison: Regressed when
// a target or cell regressed; Inconclusive when a target could not rule out the minimum effect,
// or a cell's interval lies wholly beyond it on the harmful side without reaching significance
// once adjusted (beyond counts those); else NoRegression.
func pairedSummary(res *Result, rules []Rule, rounds int) {
	s := &res.Summary
	// Cells whose interval lies wholly past the minimum effect on the harmful side keep the
	// comparison from NoRegression even when not significant once adjusted.
	beyond := 0
	for _, c := range res.Cells {
		if slices.Contains(c.beyond, true) {
			beyond++
		}
	}
	regressed := tallyCells(res, rules)

	var regressedTargets, openTargets []string
	for _, t := range res.Targets {
		switch t.Verdict {
		case v1.CellRegressed:
			regressedTargets = append(regressedTargets, DescribeTarget(s.Metric, t))
		case v1.CellInconclusive:
			openTargets = append(openTargets, DescribeTarget(s.Metric, t))
		}
	}
	rule := fmt.Sprintf("paired by round over %d round(s), alpha %g over %d tests (Benjamini-Hochberg), minimum effect %s",
		rounds, s.Alpha, s.Tests, thresholds(rules, s.Metric))
	counts := cellCounts(s)
	switch {
	case len(res.Cells) == 0:
		s.Verdict = v1.VerdictNoBaseline
		s.Message = fmt.Sprintf("no cell measured on both sides against %s", s.Baseline)
	case len(regressedTargets) > 0 || s.RegressedCells > 0:
		s.Verdict = v1.VerdictRegressed
		what := regressedParts(s.Metric, regressedTargets, regressed)
		s.Message = fmt.Sprintf("regressed against %s (%s; %s); %s", s.Baseline, rule, counts, strings.Join(what, "; "))
	case len(openTargets) > 0 || beyond > 0:
		s.Verdict = v1.VerdictInconclusive
		var why []string
		if len(openTargets) > 0 {
			why = append(why, "a drop of the minimum effect cannot be ruled out for "+strings.Join(openTargets, "; "))
		}
		if beyond > 0 {
			why = append(why, fmt.Sprintf("%d cell(s) lie wholly beyond the minimum effect without being significant over all tests", beyond))
		}
		s.Message = fmt.Sprintf("nothing regressed against %s, but %s (%s; %s)", s.Baseline, strings.Join(why, ", and "), rule, counts)
		// What a schedule would re-measure, as in Compare: a confirmation that names none has
		// not found its night's suspicion again.
		s.Suspects = suspects(res, rules)
	default:
		s.Verdict = v1.VerdictNoRegression
		s.Message = fmt.Sprintf("no regression against %s: every target's interval rules out the minimum effect (%s; %s)", s.Baseline, rule, counts)
	}
}
