package plugin

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/printers"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	client "github.com/mysqlbench/mysqlbench-operator/internal/kubeclient"
)

type getOptions struct {
	allNamespaces bool
	watch         bool
	selector      string
	output        *outputFlags
	from          []string
}

func newGetCommand(e *env) *cobra.Command {
	o := &getOptions{}
	cmd := &cobra.Command{
		Use:   "get [RUN]",
		Short: "List BenchmarkRuns, or show one run's progress and results",
		Long: "Without RUN: one line per BenchmarkRun (phase, targets done, the target and step in progress, age). " +
			"With RUN: that line, each target's progress, and the QPS by threads measured so far, one column per target.",
		Example: "  kubectl mysqlbench get -A\n  kubectl mysqlbench get -l mysqlbench.io/schedule=nightly -o wide\n" +
			"  kubectl mysqlbench get pk-lookup-57\n  kubectl mysqlbench get pk-lookup-57 -w\n  kubectl mysqlbench get pk-lookup-57 -o yaml",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.output.validate(); err != nil {
				return err
			}
			if o.watch && len(o.from) > 0 {
				return fmt.Errorf("-w follows runs in the cluster; --from reads files, which do not change")
			}
			if o.watch && o.output.structured() {
				return fmt.Errorf("-w prints a table line per change: use it without -o %s", o.output.format)
			}
			if len(args) == 1 {
				if o.allNamespaces {
					return fmt.Errorf("-A lists runs; to show one run, name its namespace with -n")
				}
				if o.selector != "" {
					return fmt.Errorf("-l selects runs to list: give either RUN or -l, not both")
				}
				return e.getOne(cmd.Context(), args[0], o)
			}
			return e.getList(cmd.Context(), o)
		},
	}
	o.output = addOutputFlags(cmd, outputSpec{objects: true, own: []string{"wide"}, listFlags: true,
		what: "the BenchmarkRun objects as the API server returns them; name prints benchmarkrun.mysqlbench.io/NAME"})
	cmd.Flags().StringVarP(&o.selector, "selector", "l", "",
		"List only the runs whose labels match this selector (=, ==, !=, in, notin; e.g. -l mysqlbench.io/schedule=nightly).")
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "List the runs of every namespace.")
	cmd.Flags().BoolVarP(&o.watch, "watch", "w", false,
		"After printing, watch for changes: with RUN until it has finished (then print its results), without RUN until interrupted.")
	cmd.Flags().StringArrayVar(&o.from, "from", nil, fromFlag)
	return cmd
}

// runRow is a run's line: NAME, PHASE, TARGETS (done/total), CURRENT (target and step), AGE;
// wide adds VERDICT (the comparison's, the CRD's priority-1 column) and SCHEDULE (the
// schedule that made the run) before AGE.
func runRow(run *v1.BenchmarkRun, now time.Time, withNamespace, wide bool) string {
	phase := string(run.Status.Phase)
	if phase == "" {
		phase = "<none>"
	}
	done, total := targetsDone(run)
	current := "-"
	if !run.Status.Phase.Finished() && run.Status.CurrentTarget != "" {
		current = run.Status.CurrentTarget
		if run.Status.CurrentStep != "" {
			current += " " + run.Status.CurrentStep
		}
	}
	cols := []string{run.Name, phase, fmt.Sprintf("%d/%d", done, total), current}
	if wide {
		verdict, schedule := "-", "-"
		if c := run.Status.Comparison; c != nil && c.Verdict != "" {
			verdict = string(c.Verdict)
		}
		if s := run.Labels[v1.LabelSchedule]; s != "" {
			schedule = s
		}
		cols = append(cols, verdict, schedule)
	}
	// AGE stays last: a watched row is compared without it.
	cols = append(cols, age(run.CreationTimestamp.Time, now))
	if withNamespace {
		cols = append([]string{run.Namespace}, cols...)
	}
	return strings.Join(cols, "\t")
}

func rowHeader(withNamespace, wide bool) string {
	h := "NAME\tPHASE\tTARGETS\tCURRENT\tAGE"
	if wide {
		h = "NAME\tPHASE\tTARGETS\tCURRENT\tVERDICT\tSCHEDULE\tAGE"
	}
	if withNamespace {
		h = "NAMESPACE\t" + h
	}
	return h
}

func (e *env) getList(ctx context.Context, o *getOptions) error {
	list, opts, ns, err := e.listRuns(ctx, o)
	if err != nil {
		return err
	}
	if o.output.sortBy != "" {
		if err := sortByPath(list.Items, o.output.sortBy); err != nil {
			return err
		}
	}
	if o.output.structured() {
		return o.output.printRuns(e.Out, list.Items, true)
	}
	tw := printers.GetNewTabWriter(e.Out)
	if len(list.Items) == 0 && !o.watch {
		matching := ""
		if o.selector != "" {
			matching = " matching -l " + o.selector
		}
		if o.allNamespaces {
			_, _ = fmt.Fprintf(e.ErrOut, "No BenchmarkRuns%s found.\n", matching)
		} else {
			_, _ = fmt.Fprintf(e.ErrOut, "No BenchmarkRuns%s found in namespace %s (-A lists every namespace).\n", matching, ns)
		}
		return nil
	}
	now := e.now()
	wide := o.output.isWide()
	if !o.watch {
		if !o.output.noHeaders {
			_, _ = fmt.Fprintln(tw, rowHeader(o.allNamespaces, wide))
		}
		for i := range list.Items {
			_, _ = fmt.Fprintln(tw, runRow(&list.Items[i], now, o.allNamespaces, wide))
		}
		return tw.Flush()
	}
	// Like kubectl get -w: the runs, then a line for every change until interrupted.
	rows := &rowWriter{w: e.Out}
	var lines []string
	if !o.output.noHeaders {
		lines = append(lines, rowHeader(o.allNamespaces, wide))
	}
	for i := range list.Items {
		lines = append(lines, runRow(&list.Items[i], now, o.allNamespaces, wide))
	}
	rows.seed(append([]string{rowHeader(o.allNamespaces, wide)}, lines...)...)
	for _, l := range lines {
		rows.print(l)
	}
	return e.watchRuns(ctx, opts, list.ResourceVersion, func(run *v1.BenchmarkRun, deleted bool) bool {
		line := runRow(run, time.Now(), o.allNamespaces, wide)
		if deleted {
			line += "\t(deleted)"
		}
		rows.print(line)
		return false
	})
}

// listRuns are the runs get lists, by name within their namespace: the cluster's (with the
// list options and namespace used, for -w) or those of the files of --from.
func (e *env) listRuns(ctx context.Context, o *getOptions) (*v1.BenchmarkRunList, []client.ListOption, string, error) {
	var sel labels.Selector
	if o.selector != "" {
		var err error
		if sel, err = labels.Parse(o.selector); err != nil {
			return nil, nil, "", fmt.Errorf("-l %q: %w", o.selector, err)
		}
	}
	list := &v1.BenchmarkRunList{}
	var opts []client.ListOption
	ns := ""
	if len(o.from) > 0 {
		src, err := e.source(o.from)
		if err != nil {
			return nil, nil, "", err
		}
		fs := src.(*fileSource)
		if o.allNamespaces {
			fs.namespace = ""
		}
		runs, err := fs.all("")
		if err != nil {
			return nil, nil, "", err
		}
		for _, r := range runs {
			if sel == nil || sel.Matches(labels.Set(r.Labels)) {
				list.Items = append(list.Items, *r)
			}
		}
		ns, o.allNamespaces = fs.namespace, o.allNamespaces || fs.namespace == ""
	} else {
		c, err := e.clients()
		if err != nil {
			return nil, nil, "", err
		}
		if !o.allNamespaces {
			if ns, _, err = e.namespace(); err != nil {
				return nil, nil, "", err
			}
			opts = append(opts, client.InNamespace(ns))
		}
		if sel != nil {
			opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
		}
		if err := c.List(ctx, list, opts...); err != nil {
			return nil, nil, "", fmt.Errorf("list benchmarkruns: %w", err)
		}
	}
	sort.SliceStable(list.Items, func(i, j int) bool {
		a, b := list.Items[i], list.Items[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return list, opts, ns, nil
}

// rowWriter prints tab-separated rows one at a time, each as soon as it comes, with columns as
// wide as the widest cell printed so far (a tabwriter aligns only what it holds back).
type rowWriter struct {
	w      io.Writer
	widths []int
}

// seed widens the columns to fit rows, printing nothing: the rows at hand and a phase as long as
// any, so the first lines line up with those that follow.
func (r *rowWriter) seed(rows ...string) {
	for _, row := range rows {
		for i, c := range strings.Split(row, "\t") {
			if i == len(r.widths) {
				r.widths = append(r.widths, 0)
			}
			r.widths[i] = max(r.widths[i], len(c))
			if c == "PHASE" {
				r.widths[i] = max(r.widths[i], len(v1.RunProvisioning))
			}
		}
	}
}

func (r *rowWriter) print(row string) {
	cells := strings.Split(row, "\t")
	var b strings.Builder
	for i, c := range cells {
		if i == len(r.widths) {
			r.widths = append(r.widths, 0)
		}
		r.widths[i] = max(r.widths[i], len(c))
		if i == len(cells)-1 {
			b.WriteString(c)
			break
		}
		b.WriteString(c + strings.Repeat(" ", r.widths[i]-len(c)+3))
	}
	_, _ = fmt.Fprintln(r.w, b.String())
}

// watchRuns calls seen for every change of the runs opts select, from resourceVersion on,
// re-watching when the server ends a watch, until seen returns true or ctx ends.
func (e *env) watchRuns(ctx context.Context, opts []client.ListOption, resourceVersion string, seen func(*v1.BenchmarkRun, bool) bool) error {
	c, err := e.clients()
	if err != nil {
		return err
	}
	for {
		list := &v1.BenchmarkRunList{}
		w, err := c.Watch(ctx, list, append(opts, &client.ListOptions{Raw: watchFrom(resourceVersion)})...)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				resourceVersion = ""
				continue
			}
			return fmt.Errorf("watch benchmarkruns: %w", err)
		}
		for ev := range w.ResultChan() {
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Deleted:
				run, ok := ev.Object.(*v1.BenchmarkRun)
				if !ok {
					continue
				}
				resourceVersion = run.ResourceVersion
				if seen(run, ev.Type == watch.Deleted) {
					w.Stop()
					return nil
				}
			case watch.Error:
				resourceVersion = "" // expired: start again from the current state
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			return nil
		}
	}
}

func (e *env) getOne(ctx context.Context, name string, o *getOptions) error {
	src, err := e.source(o.from)
	if err != nil {
		return err
	}
	run, err := src.getRun(ctx, name, "")
	if err != nil {
		return err
	}
	if o.output.structured() {
		return o.output.printRuns(e.Out, []v1.BenchmarkRun{*run}, false)
	}
	wide := o.output.isWide()
	if o.watch && !run.Status.Phase.Finished() {
		rows := &rowWriter{w: e.Out}
		last := runRow(run, time.Now(), false, wide)
		rows.seed(rowHeader(false, wide), last)
		rows.print(rowHeader(false, wide))
		rows.print(last)
		var deleted bool
		opts := []client.ListOption{client.InNamespace(run.Namespace), client.MatchingFields{"metadata.name": name}}
		err := e.watchRuns(ctx, opts, run.ResourceVersion, func(r *v1.BenchmarkRun, gone bool) bool {
			if gone {
				deleted = true
				return true
			}
			run = r
			// One line per change of phase, target or step (the age column changes alone).
			if line := runRow(r, time.Now(), false, wide); stripAge(line) != stripAge(last) {
				last = line
				rows.print(line)
			}
			return r.Status.Phase.Finished()
		})
		if err != nil {
			return err
		}
		if deleted {
			return fmt.Errorf("benchmarkrun %s/%s was deleted while watching it", run.Namespace, name)
		}
		if !run.Status.Phase.Finished() {
			return nil // interrupted
		}
		_, _ = fmt.Fprintln(e.Out)
	}
	return e.printProgressAndResults(run, wide, o.output.noHeaders)
}

func stripAge(row string) string { return row[:strings.LastIndex(row, "\t")] }

// printProgressAndResults is get RUN: the run's line, its targets, and the QPS table.
func (e *env) printProgressAndResults(run *v1.BenchmarkRun, wide, noHeaders bool) error {
	now := e.now()
	tw := printers.GetNewTabWriter(e.Out)
	if !noHeaders {
		_, _ = fmt.Fprintln(tw, rowHeader(false, wide))
	}
	_, _ = fmt.Fprintln(tw, runRow(run, now, false, wide))
	if err := tw.Flush(); err != nil {
		return err
	}
	_, _ = fmt.Fprintln(e.Out)
	if err := writeTargets(e.Out, run, false); err != nil {
		return err
	}
	m := throughputMetric(run)
	_, _ = fmt.Fprintf(e.Out, "\n%s by threads:\n", m.title)
	notes := &tableNotes{}
	if err := writeResultsTable(e.Out, run, m, notes); err != nil {
		return err
	}
	switch {
	case run.Spec.RepetitionsOrDefault() > 1:
		_, _ = fmt.Fprintln(e.Out)
		writeLegend(e.Out, run, notes)
	case len(notes.over) > 0:
		_, _ = fmt.Fprintln(e.Out)
		writeOverLegend(e.Out, run, notes)
	}
	return nil
}

// writeTargets is a line per target: phase, server version, steps measured of all, and with
// messages the reason a target failed.
func writeTargets(w io.Writer, run *v1.BenchmarkRun, messages bool) error {
	tw := printers.GetNewTabWriter(w)
	h := "TARGET\tPHASE\tVERSION\tSTEPS"
	if messages {
		h += "\tMESSAGE"
	}
	_, _ = fmt.Fprintln(tw, h)
	for _, t := range run.Spec.Targets {
		ts := targetStatus(run, t.Name)
		phase, version, steps, msg := string(v1.TargetPending), "-", 0, ""
		if ts != nil {
			if ts.Phase != "" {
				phase = string(ts.Phase)
			}
			if ts.ServerVersion != "" {
				version = ts.ServerVersion
			}
			steps, msg = len(ts.Steps), ts.Message
			if ts.ServerRestarts > 0 {
				msg = strings.TrimPrefix(msg+fmt.Sprintf("; server restarted %d time(s)", ts.ServerRestarts), "; ")
			}
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%d/%d", t.Name, phase, version, steps, run.Spec.StepCount())
		if messages {
			line += "\t" + strings.ReplaceAll(msg, "\n", " ")
		}
		_, _ = fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// watchFrom starts a watch at resourceVersion ("": the current state, each object as Added).
func watchFrom(resourceVersion string) *metav1.ListOptions {
	return &metav1.ListOptions{ResourceVersion: resourceVersion}
}
