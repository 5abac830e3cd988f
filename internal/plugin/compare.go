package plugin

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
	client "github.com/mysqlbench/mysqlbench-operator/internal/kubeclient"
)

type compareOptions struct {
	targets  []string
	output   *outputFlags
	alpha    float64
	qpsDrop  float64
	p95Rise  float64
	runToRun float64
	exitCode bool
	from     []string
}

func newCompareCommand(e *env) *cobra.Command {
	o := &compareOptions{}
	cmd := &cobra.Command{
		Use:   "compare OLD NEW | compare [OLD NEW] --from PATH...",
		Short: "Compare NEW with the baseline OLD, per target and per cell",
		Long: "Compares NEW with OLD (the baseline; old then new, as benchstat and mysqlbench-compare take them) as the " +
			"operator compares a scheduled run with its baseline (internal/compare): per target, the geometric mean over " +
			"its thread counts of new/old median QPS and p95 with an interval that allows for how much two runs differ " +
			"beyond their repetitions (--run-to-run-cv), and the same against the other targets (a shift of the whole run " +
			"cancels); per cell, a t test on the log repetitions; targets tested first, then the cells of a changed target " +
			"adjusted over that target's cells, so a run with no real change is called regressed with at most --alpha " +
			"probability. A target or cell regressed when significant and its median QPS fell by at least --qps-drop " +
			"percent or its p95 rose by at least --p95-rise percent; \"no regression\" needs every target's interval to " +
			"exclude such a drop. The output ends with the smallest drop each target could have shown. In the table, ~ " +
			"means no significant change, ! a noisy median (CV above 5 %). For a scheduled run, as in the operator, the " +
			"spread of the schedule's earlier successful runs (in the cluster, or in the files of --from) replaces the " +
			"run-to-run CV once there are 5. The policy is NEW's schedule's spec.regression when " +
			"NEW was created by a BenchmarkSchedule, else the operator's defaults; the flags override it." + fromHelp +
			" Without OLD and NEW give two --from, each holding one run: the first is OLD, the baseline " +
			"(compare --from old.json --from new.json; the runs may have the same name). A results.json does not say " +
			"which schedule made its run: its policy is then the operator's defaults unless the flags set it; a run's " +
			"YAML names its schedule, whose spec.regression applies when the files hold the schedule (a bundle does).",
		Example: "  kubectl mysqlbench compare release-1 candidate\n" +
			"  kubectl mysqlbench compare release-1 candidate \\\n      --target mysql84 --target mysql84-psoff\n" +
			"  kubectl mysqlbench compare release-1 candidate -o markdown > comparison.md\n" +
			"  kubectl mysqlbench compare release-1 candidate -o json\n" +
			"  kubectl mysqlbench compare --from release-1/results.json \\\n      --from candidate.tar.gz\n" +
			"  kubectl mysqlbench compare release-1 candidate --from exported-runs/",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(o.from) > 0 && len(args) == 0 {
				return nil
			}
			return exactArgs("OLD", "NEW")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.compare(cmd, args, o)
		},
	}
	cmd.Flags().StringArrayVar(&o.targets, "target", nil, "Compare only this target (repeatable).")
	o.output = addOutputFlags(cmd, outputSpec{own: []string{"table", "markdown"},
		what: "the comparison (summary, targets, cells; markdown: comparison.md as the operator writes it), custom-columns a line per cell"})
	cmd.Flags().Float64Var(&o.alpha, "alpha", v1.DefaultAlpha, "Significance level of the U test (default: the schedule's, else this).")
	cmd.Flags().Float64Var(&o.qpsDrop, "qps-drop", v1.DefaultQPSDropPercent, "Smallest QPS drop that matters, in percent (default: the schedule's, else this).")
	cmd.Flags().Float64Var(&o.p95Rise, "p95-rise", v1.DefaultP95RisePercent, "Smallest p95 latency rise that matters, in percent (default: the schedule's, else this).")
	cmd.Flags().Float64Var(&o.runToRun, "run-to-run-cv", v1.DefaultRunToRunCVPercent, "How much, in percent (CV), a target moves between two runs beyond its "+
		"repetitions (default: the schedule's, else this); 0 for runs that shared everything but the repetitions.")
	cmd.Flags().BoolVar(&o.exitCode, "exit-code", false,
		"Exit with 2 when the run regressed and 3 when the comparison is inconclusive or has no common cells (as mysqlbench-compare), 0 otherwise.")
	cmd.Flags().StringArrayVar(&o.from, "from", nil, fromFlag+" Without OLD and NEW: --from OLD --from NEW.")
	return cmd
}

// compare compares NEW (args[1]) with the baseline OLD (args[0]); without args, the runs of
// the two --from paths, OLD first.
func (e *env) compare(cmd *cobra.Command, args []string, o *compareOptions) error {
	ctx := cmd.Context()
	if err := o.output.validate(); err != nil {
		return err
	}
	src, err := e.source(o.from)
	if err != nil {
		return err
	}
	run, baseline, err := comparedRuns(ctx, src, args)
	if err != nil {
		return err
	}
	policy, source, err := src.policy(ctx, run)
	if err != nil {
		return err
	}
	if len(o.targets) > 0 {
		for _, t := range o.targets {
			if !slices.Contains(targetNames(run), t) && !slices.Contains(targetNames(baseline), t) {
				return fmt.Errorf("no target %q in %s or %s; %s has %s, %s has %s", t, run.Name, baseline.Name,
					run.Name, strings.Join(targetNames(run), ", "), baseline.Name, strings.Join(targetNames(baseline), ", "))
			}
		}
		run, baseline = onlyTargets(run, o.targets), onlyTargets(baseline, o.targets)
	}
	for _, r := range []*v1.BenchmarkRun{run, baseline} {
		if !r.Status.Phase.Finished() {
			_, _ = fmt.Fprintf(e.ErrOut, "Note: %s is not finished (%s): comparing the cells measured so far.\n", r.Name, progress(r))
		}
	}
	flags := cmd.Flags()
	if flags.Changed("alpha") {
		policy.Alpha = &o.alpha
	}
	if flags.Changed("qps-drop") {
		policy.QPSDropPercent = &o.qpsDrop
	}
	if flags.Changed("p95-rise") {
		policy.P95RisePercent = &o.p95Rise
	}
	if flags.Changed("run-to-run-cv") {
		policy.RunToRunCVPercent = &o.runToRun
	}
	res := compare.CompareWith(run, baseline, policy, compare.Options{History: src.history(ctx, run)})
	switch {
	case o.output.structured():
		err = o.output.printView(e.Out, comparisonViewOf(res, source), cellRows(res))
	case o.output.is("markdown"):
		_, err = io.WriteString(e.Out, compare.Markdown(res))
	default:
		err = writeComparison(e.Out, res, source, o.targets)
	}
	if err != nil {
		return err
	}
	if o.exitCode {
		switch res.Summary.Verdict {
		case v1.VerdictNoRegression:
		case v1.VerdictRegressed:
			return exitCode(2)
		default:
			return exitCode(3)
		}
	}
	return nil
}

// comparisonView is what compare prints as data: the comparison the operator would store, its
// targets and cells, and where its policy came from.
type comparisonView struct {
	Summary        v1.Comparison     `json:"summary"`
	Policy         string            `json:"policy"`
	Targets        []v1.TargetChange `json:"targets"`
	Cells          []v1.CellChange   `json:"cells"`
	OnlyInRun      []string          `json:"onlyInRun,omitempty"`
	OnlyInBaseline []string          `json:"onlyInBaseline,omitempty"`
}

func comparisonViewOf(res compare.Result, policySource string) comparisonView {
	v := comparisonView{Summary: res.Summary, Policy: policySource, Targets: res.Targets,
		OnlyInRun: res.OnlyInRun, OnlyInBaseline: res.OnlyInBaseline, Cells: []v1.CellChange{}}
	for _, c := range res.Cells {
		v.Cells = append(v.Cells, c.CellChange)
	}
	return v
}

// cellRows are the comparison's cells, the rows of -o custom-columns.
func cellRows(res compare.Result) []any {
	rows := make([]any, len(res.Cells))
	for i, c := range res.Cells {
		rows[i] = c.CellChange
	}
	return rows
}

// comparedRuns are NEW and OLD: args' (OLD NEW) or, without args, the runs of two --from paths.
func comparedRuns(ctx context.Context, src runSource, args []string) (run, baseline *v1.BenchmarkRun, err error) {
	if fs, ok := src.(*fileSource); ok && len(args) == 0 {
		if n := len(fs.set.Paths()); n != 2 {
			return nil, nil, fmt.Errorf("compare without OLD and NEW takes two --from, OLD's and NEW's (got %d); "+
				"or name the runs: compare OLD NEW --from PATH", n)
		}
		runs, err := fs.onePerPath("")
		if err != nil {
			return nil, nil, err
		}
		return runs[1], runs[0], nil
	}
	if run, err = src.getRun(ctx, args[1], ""); err != nil {
		return nil, nil, err
	}
	if baseline, err = src.getRun(ctx, args[0], ""); err != nil {
		return nil, nil, err
	}
	return run, baseline, nil
}

// policy is what the operator would apply to run: its schedule's regression policy (the
// pinned baseline aside, which the command line replaces), else the defaults.
func (e *env) policy(ctx context.Context, run *v1.BenchmarkRun) (v1.RegressionPolicy, string, error) {
	owner := scheduleOwner(run)
	if owner == nil {
		return v1.RegressionPolicy{}, defaultPolicy, nil
	}
	c, err := e.clients()
	if err != nil {
		return v1.RegressionPolicy{}, "", err
	}
	sched := &v1.BenchmarkSchedule{}
	err = c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: owner.Name}, sched)
	switch {
	case apierrors.IsNotFound(err):
		sched = nil
	case err != nil:
		return v1.RegressionPolicy{}, "", fmt.Errorf("get schedule %s of %s for its regression policy: %w", owner.Name, run.Name, err)
	}
	policy, source := schedulePolicy(owner, sched)
	return policy, source, nil
}

// defaultPolicy says where the policy of a run no schedule made comes from.
const defaultPolicy = "the operator's defaults"

// scheduleOwner is the BenchmarkSchedule that created run (its controller), nil when none did.
func scheduleOwner(run *v1.BenchmarkRun) *metav1.OwnerReference {
	owner := metav1.GetControllerOf(run)
	if owner == nil || owner.Kind != "BenchmarkSchedule" || owner.APIVersion != v1.GroupVersion.String() {
		return nil
	}
	return owner
}

// schedulePolicy is the policy of a run owner's schedule made, with where it comes from: sched
// is that schedule as read, nil when it is not found (one of the same name and another UID is
// another schedule: the run's is gone).
func schedulePolicy(owner *metav1.OwnerReference, sched *v1.BenchmarkSchedule) (v1.RegressionPolicy, string) {
	if sched == nil || sched.UID != owner.UID {
		return v1.RegressionPolicy{}, fmt.Sprintf("%s (schedule %s is gone)", defaultPolicy, owner.Name)
	}
	return sched.Spec.Regression, "schedule " + sched.Name + "'s spec.regression"
}

// onlyTargets is a copy of run whose status holds only the named targets, so the comparison's
// cells and counts cover those alone.
func onlyTargets(run *v1.BenchmarkRun, names []string) *v1.BenchmarkRun {
	out := run.DeepCopy()
	out.Status.Targets = slices.DeleteFunc(out.Status.Targets, func(t v1.TargetStatus) bool { return !slices.Contains(names, t.Name) })
	return out
}

// writeComparison is the terminal form of comparison.md, in benchstat's conventions: old then
// new, ~ for no significant change with p, q and n, a geometric-mean row per target, ! for a
// noisy median, and the regressed targets and cells named as the operator names them.
func writeComparison(w io.Writer, res compare.Result, policySource string, targets []string) error {
	s := res.Summary
	if s.Baseline == "" {
		_, err := fmt.Fprintf(w, "%s: %s\n", s.Run, s.Message)
		return err
	}
	_, _ = fmt.Fprintf(w, "old: %s (baseline)  new: %s", s.Baseline, s.Run)
	if len(targets) > 0 {
		_, _ = fmt.Fprintf(w, "  targets %s only", strings.Join(targets, ", "))
	}
	// The throughput is the clients' metric: QPS, or go-tpc's tpmC (Summary.Metric).
	metric := cmp.Or(s.Metric, "QPS")
	_, _ = fmt.Fprintf(w, "\nPolicy: %s: alpha %g over %d tests (targets, then the cells of changed targets), regressed at %s -%g %% or p95 +%g %% (medians)\n",
		policySource, s.Alpha, s.Tests, metric, s.QPSDropPercent, s.P95RisePercent)
	_, _ = fmt.Fprintf(w, "Verdict: %s: %s\n", compare.Short(s), s.Message)
	if len(res.Cells) > 0 {
		_, _ = fmt.Fprintln(w)
		tw := printers.GetNewTabWriter(w)
		_, _ = fmt.Fprintf(tw, "TARGET\tTHREADS\tOLD %[1]s\tNEW %[1]s\tVS BASE\tOLD P95 MS\tNEW P95 MS\tVS BASE\tVERDICT\n", strings.ToUpper(metric))
		row := func(c compare.Cell) {
			p95o, p95n, p95c := "-", "-", "-"
			if c.BaselineP95Ms > 0 && c.P95Ms > 0 {
				p95o, p95n = fmt.Sprintf("%.3f", c.BaselineP95Ms), fmt.Sprintf("%.3f", c.P95Ms)
				p95c = compare.Change(c.P95ChangePercent, c.P95P, c.P95Q, s.Alpha, c.BaselineN, c.N)
			}
			verdict := string(c.Verdict)
			switch {
			case c.Acknowledged:
				verdict = "Regressed, acknowledged: " + c.AcknowledgedReason
			case c.Verdict == v1.CellInconclusive && c.NeededRepetitions > 0:
				verdict += fmt.Sprintf(" (needs %d repetitions)", c.NeededRepetitions)
			}
			_, _ = fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
				compare.CellLabel(c.CellChange), c.Threads, noisyQPS(c.BaselineQPS, c.BaselineQPSCV), noisyQPS(c.QPS, c.QPSCV),
				compare.Change(c.QPSChangePercent, c.QPSP, c.QPSQ, s.Alpha, c.BaselineN, c.N), p95o, p95n, p95c, verdict)
		}
		for _, t := range res.Targets {
			for _, c := range res.Cells {
				if c.Target == t.Target && c.Workload == t.Workload {
					row(c)
				}
			}
			p95 := "-"
			if t.P95Ratio > 0 {
				p95 = compare.GeomeanChange(t.P95Ratio, t.P95Low, t.P95High, t.P95P, t.P95Q, s.Alpha)
			}
			_, _ = fmt.Fprintf(tw, "%s\tgeomean\t\t\t%s\t\t\t%s\t%s\n", compare.TargetLabel(t),
				compare.GeomeanChange(t.QPSRatio, t.QPSLow, t.QPSHigh, t.QPSP, t.QPSQ, s.Alpha), p95, t.Verdict)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	var regressed []string
	for _, t := range res.Targets {
		if t.Verdict == v1.CellRegressed {
			regressed = append(regressed, "  "+compare.DescribeTarget(res.Summary.Metric, t))
		}
	}
	for _, c := range res.Cells {
		if c.Verdict == v1.CellRegressed && !c.Acknowledged {
			regressed = append(regressed, "  "+compare.Describe(res.Summary.Metric, c.CellChange))
		}
	}
	if len(regressed) > 0 {
		_, _ = fmt.Fprintf(w, "\nRegressed:\n%s\n", strings.Join(regressed, "\n"))
	}
	if noise := noiseLines(s); len(noise) > 0 {
		_, _ = fmt.Fprintf(w, "\nBetween runs:\n%s\n", strings.Join(noise, "\n"))
	}
	_, _ = fmt.Fprintln(w, "\n~: no significant change (adjusted q >= alpha) and an interval that holds 0; !: noisy median (CV above 5 %); "+
		"geomean: the target over its thread counts, with its interval (which allows for the run-to-run CV).")
	if len(res.OnlyInRun) > 0 {
		_, _ = fmt.Fprintf(w, "\nNot in the baseline (not compared): %s\n", strings.Join(res.OnlyInRun, ", "))
	}
	if len(res.OnlyInBaseline) > 0 {
		_, _ = fmt.Fprintf(w, "\nMeasured by the baseline only (not compared): %s\n", strings.Join(res.OnlyInBaseline, ", "))
	}
	return nil
}

// noiseLines say, per target, the between-run noise its verdict allowed for, the target against
// the other targets, and the smallest drop the comparison could have found.
func noiseLines(s v1.Comparison) []string {
	var out []string
	for _, t := range s.Targets {
		if t.RunToRunSource == "" {
			continue
		}
		line := fmt.Sprintf("  %s: run-to-run CV %s %% (%s)", compare.TargetLabel(t), strconv.FormatFloat(t.RunToRunCVPercent, 'f', -1, 64), t.RunToRunSource)
		if t.InstancesMeasured {
			line += fmt.Sprintf(", every repetition on its own server instance (their CV %s %%, instances included)", strconv.FormatFloat(t.InstanceCVPercent, 'f', -1, 64))
		}
		if t.QPSVsOthersHigh > 0 {
			line += "; vs the other targets " + compare.GeomeanChange(t.QPSVsOthers, t.QPSVsOthersLow, t.QPSVsOthersHigh, t.QPSVsOthersP, 0, s.Alpha)
		}
		if t.MinDetectablePercent > 0 {
			line += fmt.Sprintf("; smallest detectable drop %s %%", strconv.FormatFloat(t.MinDetectablePercent, 'f', -1, 64))
			if t.MinDetectablePercent > s.QPSDropPercent {
				line += " (too noisy for the minimum effect)"
			}
		}
		out = append(out, line)
	}
	return out
}

// noisyQPS is a median throughput (QPS or tpmC), with ! when its repetitions vary by more than 5 %.
func noisyQPS(qps, cv float64) string {
	out := num(qps, throughputDecimals)
	if cv > 5 {
		out += " !"
	}
	return out
}
