package plugin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	client "github.com/mysqlbench/mysqlbench-operator/internal/kubeclient"
)

// completionTimeout bounds what a shell waits for the cluster at a tab.
const completionTimeout = 5 * time.Second

// registerCompletions lets the shells (kubectl mysqlbench completion bash|zsh|fish|powershell)
// complete run, target and schedule names from the cluster: a name typed by hand is the most
// common way to ask for a run that is not there.
func registerCompletions(root *cobra.Command, e *env) {
	for _, cmd := range root.Commands() {
		switch cmd.Name() {
		case "get", "describe", "export", "server":
			cmd.ValidArgsFunction = e.completeRuns(1)
		case "compare":
			cmd.ValidArgsFunction = e.completeRuns(2)
		case "plot":
			cmd.ValidArgsFunction = e.completeRuns(-1)
		case "logs":
			cmd.ValidArgsFunction = e.completeLogs
		case "history":
			cmd.ValidArgsFunction = e.completeSchedules
		}
		if cmd.Flags().Lookup("target") != nil {
			_ = cmd.RegisterFlagCompletionFunc("target", e.completeTargets)
		}
	}
}

// completionContext is the command's context (set by ExecuteContext) with the completion's
// time limit.
func completionContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(ctx, completionTimeout)
}

// readsFiles says whether --from points the command at files, whose runs the cluster does
// not know.
func readsFiles(cmd *cobra.Command) bool {
	f := cmd.Flags().Lookup("from")
	return f != nil && f.Changed
}

// completeRuns completes up to most run names (-1: any number), each once, with its phase as
// the description.
func (e *env) completeRuns(most int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if (most >= 0 && len(args) >= most) || readsFiles(cmd) {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := completionContext(cmd)
		defer cancel()
		runs, err := e.completionRuns(ctx)
		if err != nil {
			return cobra.AppendActiveHelp(nil, err.Error()), cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, r := range runs {
			if strings.HasPrefix(r.Name, toComplete) && !slices.Contains(args, r.Name) {
				phase := string(r.Status.Phase)
				if phase == "" {
					phase = "no status yet"
				}
				out = append(out, cobra.CompletionWithDesc(r.Name, phase))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeLogs completes logs RUN TARGET STEP: the runs, the run's targets, and its steps by
// thread count and the steps that are not on the ladder.
func (e *env) completeLogs(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return e.completeRuns(1)(cmd, args, toComplete)
	}
	if len(args) > 2 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := completionContext(cmd)
	defer cancel()
	run, err := e.getRun(ctx, args[0])
	if err != nil {
		return cobra.AppendActiveHelp(nil, err.Error()), cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	if len(args) == 1 {
		for _, t := range run.Spec.Targets {
			names = append(names, t.Name)
		}
	} else {
		for _, n := range run.Spec.Ladder.Threads {
			names = append(names, fmt.Sprint(n))
		}
		names = append(names, "probe", "prepare", "warmup", "cleanup")
	}
	return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeSchedules completes history's SCHEDULE from the BenchmarkSchedules of the namespace.
func (e *env) completeSchedules(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := completionContext(cmd)
	defer cancel()
	scheds, err := e.completionSchedules(ctx)
	if err != nil {
		return cobra.AppendActiveHelp(nil, err.Error()), cobra.ShellCompDirectiveNoFileComp
	}
	names := make([]string, 0, len(scheds))
	for _, s := range scheds {
		names = append(names, s.Name)
	}
	return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeTargets completes --target: the targets of the runs named as arguments (compare,
// server), or for history those of the schedule named (else of every schedule of the
// namespace), as their templates name them.
func (e *env) completeTargets(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if readsFiles(cmd) {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := completionContext(cmd)
	defer cancel()
	var specs []v1.BenchmarkRunSpec
	if cmd.Name() == "history" {
		scheds, err := e.completionSchedules(ctx)
		if err != nil {
			return cobra.AppendActiveHelp(nil, err.Error()), cobra.ShellCompDirectiveNoFileComp
		}
		for _, s := range scheds {
			if len(args) == 0 || args[0] == s.Name {
				specs = append(specs, s.Spec.Template.Spec)
			}
		}
	} else {
		for _, name := range args {
			run, err := e.getRun(ctx, name)
			if err != nil {
				return cobra.AppendActiveHelp(nil, err.Error()), cobra.ShellCompDirectiveNoFileComp
			}
			specs = append(specs, run.Spec)
		}
	}
	var names []string
	for _, s := range specs {
		for _, t := range s.Targets {
			if !slices.Contains(names, t.Name) {
				names = append(names, t.Name)
			}
		}
	}
	slices.Sort(names)
	return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completionRuns lists the runs of the namespace of -n, by name.
func (e *env) completionRuns(ctx context.Context) ([]v1.BenchmarkRun, error) {
	list := &v1.BenchmarkRunList{}
	if err := e.listHere(ctx, list, "benchmarkruns"); err != nil {
		return nil, err
	}
	slices.SortFunc(list.Items, func(a, b v1.BenchmarkRun) int { return strings.Compare(a.Name, b.Name) })
	return list.Items, nil
}

// completionSchedules lists the schedules of the namespace of -n, by name.
func (e *env) completionSchedules(ctx context.Context) ([]v1.BenchmarkSchedule, error) {
	list := &v1.BenchmarkScheduleList{}
	if err := e.listHere(ctx, list, "benchmarkschedules"); err != nil {
		return nil, err
	}
	slices.SortFunc(list.Items, func(a, b v1.BenchmarkSchedule) int { return strings.Compare(a.Name, b.Name) })
	return list.Items, nil
}

// listHere lists the objects of a kind (its plural, for the error) in the namespace of -n.
func (e *env) listHere(ctx context.Context, list client.ObjectList, kind string) error {
	c, err := e.clients()
	if err != nil {
		return err
	}
	ns, _, err := e.namespace()
	if err != nil {
		return err
	}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("list %s in %s: %w", kind, ns, err)
	}
	return nil
}

func withPrefix(names []string, prefix string) []cobra.Completion {
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}
