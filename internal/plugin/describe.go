package plugin

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/printers"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
	client "github.com/mysqlbench/mysqlbench-operator/internal/kubeclient"
	"github.com/mysqlbench/mysqlbench-operator/internal/relative"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
)

func newDescribeCommand(e *env) *cobra.Command {
	var from []string
	var output *outputFlags
	cmd := &cobra.Command{
		Use:   "describe RUN | describe [RUN] --from PATH",
		Short: "Show a run's conditions, targets, and QPS and p95 by threads",
		Long: "Shows the run's phase and conditions, each target's phase, server version and message, the step in " +
			"progress, and the QPS and p95 latency by threads, one column per target. With spec.repetitions above 1 " +
			"a cell is the median of its repetitions with the confidence interval of the median " +
			"(status.targets[].cells), and ~ marks a noisy cell." + fromHelp + " describe needs the run with its " +
			"status (a BenchmarkRun's YAML or a bundle): a results.json alone has no conditions and is refused. A " +
			"scheduled run's confirmation is shown when the files hold its BenchmarkSchedule (a bundle does).",
		Example: "  kubectl mysqlbench describe pk-lookup-57 -n bench\n" +
			"  kubectl mysqlbench describe --from pk-lookup-57.tar.gz\n" +
			"  # the run object the bundle holds\n  kubectl mysqlbench describe --from pk-lookup-57.tar.gz -o yaml",
		Args: runArgs(&from),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := output.validate(); err != nil {
				return err
			}
			src, err := e.source(from)
			if err != nil {
				return err
			}
			run, err := src.getRun(cmd.Context(), argOrEmpty(args), "describe shows its conditions and its targets' state")
			if err != nil {
				return err
			}
			if output.structured() {
				return output.printRuns(e.Out, []v1.BenchmarkRun{*run}, false)
			}
			return describe(e.Out, run, e.now(), src.confirmationOf(cmd.Context(), run))
		},
	}
	cmd.Flags().StringArrayVar(&from, "from", nil, fromFlag)
	output = addOutputFlags(cmd, outputSpec{objects: true,
		what: "the BenchmarkRun object as the API server returns it (or the files hold it); name prints benchmarkrun.mysqlbench.io/NAME"})
	return cmd
}

// confirmationOf is the confirmation in the status of run's schedule that concerns run (as the
// compared run or as the confirmation run), or nil. It only adds to describe: a schedule that
// cannot be read shows nothing.
func (e *env) confirmationOf(ctx context.Context, run *v1.BenchmarkRun) *v1.Confirmation {
	name := confirmationSchedule(run)
	if name == "" {
		return nil
	}
	c, err := e.clients()
	if err != nil {
		return nil
	}
	sched := &v1.BenchmarkSchedule{}
	if c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, sched) != nil {
		return nil
	}
	return confirmationIn(sched, run)
}

// confirmationSchedule names the schedule whose confirmation may concern run: the one that made
// it, or the one whose regression it re-measures.
func confirmationSchedule(run *v1.BenchmarkRun) string {
	if name := run.Labels[v1.LabelSchedule]; name != "" {
		return name
	}
	return run.Labels[v1.LabelConfirmationOf]
}

// confirmationIn is sched's confirmation when it concerns run, else nil.
func confirmationIn(sched *v1.BenchmarkSchedule, run *v1.BenchmarkRun) *v1.Confirmation {
	if sched == nil {
		return nil
	}
	if conf := sched.Status.Confirmation; conf != nil && (conf.Run == run.Name || conf.ConfirmationRun == run.Name) {
		return conf
	}
	return nil
}

// writeConfirmation shows a regression's confirmation: its state, runs, cells and outcome.
func writeConfirmation(w io.Writer, run *v1.BenchmarkRun, conf *v1.Confirmation) {
	if conf == nil {
		if of := run.Labels[v1.LabelConfirms]; of != "" {
			_, _ = fmt.Fprintf(w, "\nConfirms: the regression of %s against %s (targets <name>-base run the baseline's servers)\n",
				of, run.Annotations[v1.AnnotationConfirmationBaseline])
		}
		return
	}
	_, _ = fmt.Fprintf(w, "\nConfirmation: %s\n", conf.State)
	_, _ = fmt.Fprintf(w, "  run %s against baseline %s", conf.Run, conf.Baseline)
	if conf.ConfirmationRun != "" {
		_, _ = fmt.Fprintf(w, ", re-measured by %s (%s)", conf.ConfirmationRun, conf.Order)
	}
	_, _ = fmt.Fprintln(w)
	if len(conf.Cells) > 0 {
		_, _ = fmt.Fprintf(w, "  cells: %s\n", strings.Join(conf.Cells, ", "))
	}
	if conf.Result != nil {
		_, _ = fmt.Fprintf(w, "  result: %s\n", compare.Short(*conf.Result))
	}
	_, _ = fmt.Fprintf(w, "  %s\n", conf.Message)
}

func describe(w io.Writer, run *v1.BenchmarkRun, now time.Time, conf *v1.Confirmation) error {
	tw := printers.GetNewTabWriter(w)
	field := func(name, value string) { _, _ = fmt.Fprintf(tw, "%s:\t%s\n", name, value) }
	field("Name", run.Name)
	field("Namespace", run.Namespace)
	if s := run.Labels[v1.LabelSchedule]; s != "" {
		field("Schedule", s)
	}
	phase := string(run.Status.Phase)
	if phase == "" {
		phase = "<none> (no status yet: is the operator running and watching this namespace?)"
	}
	field("Phase", phase)
	if t := run.Status.StartTime; t != nil {
		field("Started", fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), age(t.Time, now)))
	}
	if t := run.Status.CompletionTime; t != nil {
		took := ""
		if run.Status.StartTime != nil {
			took = fmt.Sprintf(" (took %s)", t.Sub(run.Status.StartTime.Time).Round(time.Second))
		}
		field("Completed", t.UTC().Format(time.RFC3339)+took)
	}
	if !run.Status.Phase.Finished() && run.Status.CurrentTarget != "" {
		field("Current", fmt.Sprintf("target %s, step %s", run.Status.CurrentTarget, run.Status.CurrentStep))
	}
	done, total := targetsDone(run)
	field("Targets done", fmt.Sprintf("%d/%d", done, total))
	field("Workload", workloadLine(run))
	if run.Status.ResultsConfigMap != "" {
		field("Results", "ConfigMap "+run.Status.ResultsConfigMap+" (kubectl mysqlbench export "+run.Name+" -o csv|json)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	_, _ = fmt.Fprintln(w, "\nConditions:")
	if err := writeConditions(indent(w), run, now); err != nil {
		return err
	}
	_, _ = fmt.Fprintln(w, "\nTargets:")
	if err := writeTargets(indent(w), run, true); err != nil {
		return err
	}
	if err := writeNodes(w, run); err != nil {
		return err
	}
	if c := run.Status.Comparison; c != nil {
		_, _ = fmt.Fprintf(w, "\nComparison: %s\n  %s\n", compare.Short(*c), c.Message)
	}
	writeConfirmation(w, run, conf)

	notes := &tableNotes{}
	metrics := []metric{throughputMetric(run)}
	if loadclient.For(primaryWorkload(run)).Capabilities().Reports(95) {
		metrics = append(metrics, p95Metric)
	}
	for _, m := range metrics {
		_, _ = fmt.Fprintf(w, "\n%s by threads:\n", m.title)
		if err := writeResultsTable(indent(w), run, m, notes); err != nil {
			return err
		}
	}
	if err := writeRelative(w, run); err != nil {
		return err
	}
	_, _ = fmt.Fprintln(w)
	writeLegend(w, run, notes)
	return nil
}

// writeRelative shows a suite's throughput relative to the base target (spec.baseTarget, else
// the first): a row per workload and thread count, a column per other target, each the ratio
// of the medians with its 95 % interval, as report.md's table.
func writeRelative(w io.Writer, run *v1.BenchmarkRun) error {
	if !run.Spec.Suite() || len(run.Spec.Targets) < 2 {
		return nil
	}
	t, err := relative.Of(report.DocOf(run), "")
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(w, "\n%s relative to %s:\n", throughputMetric(run).title, t.Base)
	tw := printers.GetNewTabWriter(indent(w))
	_, _ = fmt.Fprintf(tw, "WORKLOAD\tTHREADS\t%s\n", strings.Join(t.Targets, "\t"))
	for _, r := range t.Rows {
		texts := make([]string, len(r.Cells))
		for i, c := range r.Cells {
			texts[i] = c.Text()
		}
		_, _ = fmt.Fprintf(tw, "%s\t%d\t%s\n", r.Workload, r.Threads, strings.Join(texts, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	how := "from the repetitions of each side"
	if t.Paired {
		how = "paired by round (the targets were interleaved)"
	}
	_, _ = fmt.Fprintf(w, "  Each target's median over %s's at the same workload and thread count, with its 95 %% interval %s; "+
		"\"within noise\" when the interval holds 1.\n", t.Base, how)
	return nil
}

// workloadLine summarizes what every step runs: "oltp_point_select, 4 tables x 10000 rows;
// threads 1 2 4 8, 30s per step, 10s warm-up; 3 repetitions".
func workloadLine(run *v1.BenchmarkRun) string {
	s := run.Spec
	threads := make([]string, 0, len(s.Ladder.Threads))
	for _, t := range s.Ladder.Threads {
		threads = append(threads, fmt.Sprint(t))
	}
	line := loadclient.For(s.Workload).Describe(s, strings.Join(threads, " "))
	if s.Suite() {
		// Each workload's script and data, then the ladder they share.
		var parts []string
		var ladder string
		for _, w := range s.OrderedWorkloads() {
			d := loadclient.For(w.Workload).Describe(s.WithWorkload(w.Workload), strings.Join(threads, " "))
			what, rest, ok := strings.Cut(d, "; ")
			if ok {
				ladder = rest
			}
			parts = append(parts, fmt.Sprintf("%s (%s)", w.Name, what))
		}
		line = fmt.Sprintf("%d workloads, in measuring order: %s; %s", len(parts), strings.Join(parts, ", "), ladder)
	}
	if d := s.Ladder.WarmupDuration(); d > 0 {
		line += fmt.Sprintf(", %s warm-up at %s", d, threadCount(s.Ladder.WarmupThreadsOrDefault()))
	}
	if r := s.RepetitionsOrDefault(); r > 1 {
		line += fmt.Sprintf("; %d repetitions", r)
	}
	return line
}

func writeConditions(w io.Writer, run *v1.BenchmarkRun, now time.Time) error {
	tw := printers.GetNewTabWriter(w)
	_, _ = fmt.Fprintln(tw, "TYPE\tSTATUS\tREASON\tAGE\tMESSAGE")
	for _, c := range run.Status.Conditions {
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, age(c.LastTransitionTime.Time, now),
			strings.ReplaceAll(c.Message, "\n", " "))
	}
	return tw.Flush()
}

// indent prefixes every line written to w with two spaces, as kubectl describe nests sections.
func indent(w io.Writer) io.Writer { return &indenter{w: w, start: true} }

type indenter struct {
	w     io.Writer
	start bool
}

func (i *indenter) Write(p []byte) (int, error) {
	var b strings.Builder
	for _, c := range string(p) {
		if i.start && c != '\n' {
			b.WriteString("  ")
		}
		b.WriteRune(c)
		i.start = c == '\n'
	}
	if _, err := io.WriteString(i.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// exactArgs names the arguments a command wants when they are missing or too many.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return fmt.Errorf("%s needs %s (got %d argument(s)); see %s --help", cmd.CommandPath(), strings.Join(names, " "), len(args), cmd.CommandPath())
		}
		return nil
	}
}
