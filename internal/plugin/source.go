package plugin

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
	"github.com/mysqlbench/mysqlbench-operator/internal/exported"
	client "github.com/mysqlbench/mysqlbench-operator/internal/kubeclient"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// runSource is where the read-only commands (describe, compare, export, plot, server) find runs:
// the cluster, or the files of --from. Both give the same run the same answers, so the commands
// print the same; the files answer differently only where they lack what the cluster has.
type runSource interface {
	// getRun is the run called name; "" asks for the only run of the files. whole, when not
	// empty, says why the command needs the run itself (its conditions, labels, ...) and not only
	// the numbers a results.json holds.
	getRun(ctx context.Context, name, whole string) (*v1.BenchmarkRun, error)
	// resultsData is the run's results ConfigMap data, results.json included.
	resultsData(ctx context.Context, run *v1.BenchmarkRun) (map[string]string, error)
	// confirmationOf is the confirmation of run's schedule that concerns run, or nil.
	confirmationOf(ctx context.Context, run *v1.BenchmarkRun) *v1.Confirmation
	// policy is the regression policy the operator would apply to run, and where it is from.
	policy(ctx context.Context, run *v1.BenchmarkRun) (v1.RegressionPolicy, string, error)
	// serverNotStored is why steps of run have no server counters, from the operator's Events.
	serverNotStored(ctx context.Context, run *v1.BenchmarkRun) notStored
	// bundleExtras is what a bundle holds of run besides the run and its results: its schedule,
	// its Events and its steps' logs (exported.Bundle's Schedule, ScheduleGone, Events,
	// EventsRead and Logs).
	bundleExtras(ctx context.Context, run *v1.BenchmarkRun) exported.Bundle
	// history is the earlier successful runs of run's schedule that the source holds
	// (compare.HistoryOf), whose spread the operator's comparison takes as the between-run noise.
	history(ctx context.Context, run *v1.BenchmarkRun) []*v1.BenchmarkRun
}

// fromFlag is the --from flag's help, the same for every command that has it.
const fromFlag = "Read the run from exported files instead of the cluster (repeatable): a results.json " +
	"(export -o json), a BenchmarkRun with its status (kubectl get benchmarkrun RUN -o yaml), a bundle " +
	"(export --bundle: its directory or .tar.gz) or a directory of these."

// fromHelp is the paragraph of the commands' long help on --from.
const fromHelp = "\n\nWith --from PATH the run is read from files instead of the cluster, with the same output: a " +
	"results.json as the results ConfigMap holds it (export -o json), a BenchmarkRun with its status (kubectl get " +
	"benchmarkrun RUN -o yaml or -o json), the results ConfigMap's YAML, a bundle (export --bundle: its directory or " +
	".tar.gz), or a directory of any of these (and of bundles). RUN may be left out when the files hold one run; -n " +
	"picks a namespace when they hold runs of one name in several."

// source is the cluster, or the files of from when there are any.
func (e *env) source(from []string) (runSource, error) {
	if len(from) == 0 {
		return clusterSource{e}, nil
	}
	set, err := exported.Load(from)
	if err != nil {
		return nil, err
	}
	for _, s := range set.Skipped {
		_, _ = fmt.Fprintf(e.ErrOut, "Note: passed over %s\n", s)
	}
	ns := ""
	if e.flags.Namespace != nil {
		ns = *e.flags.Namespace
	}
	return &fileSource{set: set, namespace: ns, errOut: e.ErrOut, runs: map[*v1.BenchmarkRun]*exported.Run{}}, nil
}

// runArgs accepts RUN, or with --from also no argument (the files' only run).
func runArgs(from *[]string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(*from) > 0 && len(args) <= 1 {
			return nil
		}
		return exactArgs("RUN")(cmd, args)
	}
}

// argOrEmpty is the first argument, "" when there is none.
func argOrEmpty(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// resultsDoc is the run's results.json, decoded (its formatVersion checked).
func resultsDoc(ctx context.Context, src runSource, run *v1.BenchmarkRun) (*results.Doc, error) {
	data, err := src.resultsData(ctx, run)
	if err != nil {
		return nil, err
	}
	doc, err := results.Decode([]byte(data[report.KeyResultsJSON]))
	if err != nil {
		return nil, fmt.Errorf("benchmarkrun %s: %w", run.Name, err)
	}
	return doc, nil
}

// clusterSource reads runs from the API server.
type clusterSource struct{ e *env }

func (c clusterSource) getRun(ctx context.Context, name, _ string) (*v1.BenchmarkRun, error) {
	return c.e.getRun(ctx, name)
}

func (c clusterSource) resultsData(ctx context.Context, run *v1.BenchmarkRun) (map[string]string, error) {
	return c.e.resultsData(ctx, run)
}

func (c clusterSource) confirmationOf(ctx context.Context, run *v1.BenchmarkRun) *v1.Confirmation {
	return c.e.confirmationOf(ctx, run)
}

func (c clusterSource) policy(ctx context.Context, run *v1.BenchmarkRun) (v1.RegressionPolicy, string, error) {
	return c.e.policy(ctx, run)
}

func (c clusterSource) history(ctx context.Context, run *v1.BenchmarkRun) []*v1.BenchmarkRun {
	name := run.Labels[v1.LabelSchedule]
	if name == "" {
		return nil
	}
	cl, err := c.e.clients()
	if err != nil {
		return nil
	}
	list := &v1.BenchmarkRunList{}
	if err := cl.List(ctx, list, client.InNamespace(run.Namespace), client.MatchingLabels{v1.LabelSchedule: name}); err != nil {
		_, _ = fmt.Fprintf(c.e.ErrOut, "Note: the runs of schedule %s could not be listed (%v): the comparison allows the "+
			"policy's run-to-run CV instead of their spread\n", name, err)
		return nil
	}
	runs := make([]*v1.BenchmarkRun, 0, len(list.Items))
	for i := range list.Items {
		runs = append(runs, &list.Items[i])
	}
	return compare.HistoryOf(run, runs)
}

func (c clusterSource) serverNotStored(ctx context.Context, run *v1.BenchmarkRun) notStored {
	return c.e.serverNotStored(ctx, run)
}

func (c clusterSource) bundleExtras(ctx context.Context, run *v1.BenchmarkRun) exported.Bundle {
	var b exported.Bundle
	// Both only add to a bundle: what cannot be read is said in its manifest and here.
	note := func(what string, err error) {
		_, _ = fmt.Fprintf(c.e.ErrOut, "Note: %s could not be read (%v): the bundle says so\n", what, err)
	}
	cl, err := c.e.clients()
	if err != nil {
		note("the run's schedule and Events", err)
		return b
	}
	if name := exported.ScheduleName(run); name != "" {
		s := &v1.BenchmarkSchedule{}
		switch err := cl.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, s); {
		case err == nil:
			b.Schedule = s
		case apierrors.IsNotFound(err):
			b.ScheduleGone = true
		default:
			note("schedule "+name, err)
		}
	}
	events := &corev1.EventList{}
	if err := cl.List(ctx, events, client.InNamespace(run.Namespace), client.MatchingFields{"involvedObject.uid": string(run.UID)}); err != nil {
		note("the run's Events", err)
		return b
	}
	b.Events, b.EventsRead = events.Items, true
	logs, err := c.e.stepLogs(ctx, run)
	if err != nil {
		note("the logs of the run's steps", err)
		return b
	}
	b.Logs, b.LogsRead = logs, true
	return b
}

// fileSource reads runs from exported files.
type fileSource struct {
	set *exported.Set
	// namespace is -n's, "" for any.
	namespace string
	errOut    io.Writer
	// runs are the files' runs of the objects getRun returned.
	runs map[*v1.BenchmarkRun]*exported.Run
}

func (f *fileSource) getRun(_ context.Context, name, whole string) (*v1.BenchmarkRun, error) {
	var r *exported.Run
	var err error
	if name == "" {
		r, err = f.set.Only()
	} else {
		r, err = f.set.Find(f.namespace, name)
	}
	if err != nil {
		return nil, err
	}
	return f.object(r, whole)
}

// object is r's run object (else the run its results.json describes), remembered for the
// questions that follow.
func (f *fileSource) object(r *exported.Run, whole string) (*v1.BenchmarkRun, error) {
	if r.Object == nil && whole != "" {
		return nil, fmt.Errorf("the files hold only the results of run %s (%s): %s, which results.json does not "+
			"hold; give the run with its status too (kubectl get benchmarkrun %s -o yaml, while it exists) or a "+
			"bundle (kubectl mysqlbench export %s --bundle DIR)", r.Name, strings.Join(r.From, ", "), whole, r.Name, r.Name)
	}
	run := r.ObjectOrResults()
	f.runs[run] = r
	return run, nil
}

// all are every run of the files, in the order read.
func (f *fileSource) all(whole string) ([]*v1.BenchmarkRun, error) {
	out := make([]*v1.BenchmarkRun, 0, len(f.set.Runs))
	for _, r := range f.set.Runs {
		if f.namespace != "" && r.Namespace != f.namespace {
			continue
		}
		run, err := f.object(r, whole)
		if err != nil {
			return nil, err
		}
		out = append(out, run)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the files of --from hold no run in namespace %s", f.namespace)
	}
	return out, nil
}

// onePerPath is the run of each --from path, each of which must hold exactly one.
func (f *fileSource) onePerPath(whole string) ([]*v1.BenchmarkRun, error) {
	paths := f.set.Paths()
	out := make([]*v1.BenchmarkRun, 0, len(paths))
	for i, p := range paths {
		runs := f.set.FromPath(i)
		if len(runs) != 1 {
			return nil, fmt.Errorf("--from %s holds %d runs: without run names each --from must hold one run; "+
				"name the runs instead (OLD NEW)", p, len(runs))
		}
		run, err := f.object(runs[0], whole)
		if err != nil {
			return nil, err
		}
		out = append(out, run)
	}
	return out, nil
}

func (f *fileSource) run(run *v1.BenchmarkRun) *exported.Run {
	if r, ok := f.runs[run]; ok {
		return r
	}
	return &exported.Run{Namespace: run.Namespace, Name: run.Name} // not from getRun: nothing known of it
}

func (f *fileSource) resultsData(_ context.Context, run *v1.BenchmarkRun) (map[string]string, error) {
	r := f.run(run)
	if r.Results == nil {
		if !run.Status.Phase.Finished() {
			return nil, fmt.Errorf("benchmarkrun %s had not finished when it was exported (%s), so the files hold no "+
				"results of it: export it again once it has (`kubectl mysqlbench get %s -w` follows it)", run.Name, progress(run), run.Name)
		}
		return nil, fmt.Errorf("the files hold benchmarkrun %s (%s) without its results: give its results.json too "+
			"(kubectl mysqlbench export %s -o json, while the run exists) or a bundle; the run's status alone serves "+
			"describe and compare", run.Name, strings.Join(r.From, ", "), run.Name)
	}
	if len(r.Results) == 1 {
		// results.json alone: what the operator wrote with it is drawn from it, byte for byte.
		data, err := report.Rerender(r.Doc)
		if err != nil {
			// Only the other files are lost: results.json is still read as it is.
			_, _ = fmt.Fprintf(f.errOut, "Note: the files of benchmarkrun %s other than results.json cannot be rendered from it: %v\n", run.Name, err)
			return r.Results, nil
		}
		data[report.KeyResultsJSON] = r.Results[report.KeyResultsJSON]
		return data, nil
	}
	return r.Results, nil
}

func (f *fileSource) confirmationOf(_ context.Context, run *v1.BenchmarkRun) *v1.Confirmation {
	name := confirmationSchedule(run)
	if name == "" {
		return nil
	}
	return confirmationIn(f.set.Schedule(run.Namespace, name, ""), run)
}

func (f *fileSource) policy(_ context.Context, run *v1.BenchmarkRun) (v1.RegressionPolicy, string, error) {
	r := f.run(run)
	if r.Object == nil {
		_, _ = fmt.Fprintf(f.errOut, "Note: %s is read from its results.json, which does not say whether a BenchmarkSchedule "+
			"made it; if one did, its spec.regression is not applied: set --alpha, --qps-drop and --p95-rise, or give the run's YAML or bundle\n", run.Name)
	}
	owner := scheduleOwner(run)
	if owner == nil {
		return v1.RegressionPolicy{}, defaultPolicy, nil
	}
	sched := f.set.Schedule(run.Namespace, owner.Name, "")
	gone := r.Bundle != nil && r.Bundle.Schedule != nil && r.Bundle.Schedule.Name == owner.Name && r.Bundle.Schedule.Gone
	if sched == nil && !gone {
		return v1.RegressionPolicy{}, fmt.Sprintf("%s (schedule %s is not in the files: add its YAML, kubectl get "+
			"benchmarkschedule %s -o yaml, or set --alpha, --qps-drop and --p95-rise)", defaultPolicy, owner.Name, owner.Name), nil
	}
	policy, source := schedulePolicy(owner, sched)
	return policy, source, nil
}

func (f *fileSource) history(_ context.Context, run *v1.BenchmarkRun) []*v1.BenchmarkRun {
	var runs []*v1.BenchmarkRun
	for _, r := range f.set.Runs {
		if r.Object != nil {
			runs = append(runs, r.Object)
		}
	}
	return compare.HistoryOf(run, runs)
}

func (f *fileSource) serverNotStored(_ context.Context, run *v1.BenchmarkRun) notStored {
	return notStoredFrom(f.set.EventsOf(run.UID))
}

func (f *fileSource) bundleExtras(_ context.Context, run *v1.BenchmarkRun) exported.Bundle {
	r := f.run(run)
	var b exported.Bundle
	if name := exported.ScheduleName(run); name != "" {
		b.Schedule = f.set.Schedule(run.Namespace, name, "")
		b.ScheduleGone = b.Schedule == nil && r.Bundle != nil && r.Bundle.Schedule != nil && r.Bundle.Schedule.Gone
	}
	b.Events = f.set.EventsOf(run.UID)
	b.EventsRead = len(b.Events) > 0 || (r.Bundle != nil && r.Bundle.Events)
	// A bundle read back keeps the logs it holds; other files hold none to read.
	b.Logs, b.LogsRead = r.Logs, r.Bundle != nil
	return b
}
