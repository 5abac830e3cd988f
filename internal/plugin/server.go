package plugin

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/printers"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	client "github.com/mysqlbench/mysqlbench-operator/internal/kubeclient"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

type serverOptions struct {
	targets  []string
	counters []string
	per      string
	output   *outputFlags
	from     []string
}

func newServerCommand(e *env) *cobra.Command {
	o := &serverOptions{}
	cmd := &cobra.Command{
		Use:   "server RUN [--target T...] [--counter NAME...]",
		Short: "What the servers did at each thread count: counters, CPU, waits",
		Long: "Shows, per target of a finished run, the server counters each ladder step recorded (spec.serverStats, " +
			"results.json steps[].server): one row per counter and one column per thread count, per sysbench query " +
			"(--per second: per second between the step's two snapshots), the gauges at the end of the step, the " +
			"server container's CPU seconds per query (--per second: cores busy) when the operator measured it, and " +
			"the top performance_schema waits in seconds of wait per second (how many threads waited on average). " +
			"With spec.repetitions above 1 a value is the median over the thread count's repetitions. Under each " +
			"target it says what is missing and why: performance_schema OFF, counters the server lacks, snapshot " +
			"errors, steps whose counters were not stored, CPU not measured. Every step's raw numbers are in " +
			"server.csv (kubectl get configmap RUN-results -o jsonpath='{.data.server\\.csv}')." + fromHelp + " server " +
			"needs the run's results.json. Why steps' counters were not stored is read from the operator's Events, " +
			"which a bundle holds as they were at export; a results.json alone does not say whether " +
			"spec.serverStats was off.",
		Example: "  kubectl mysqlbench server pk-lookup-57\n" +
			"  kubectl mysqlbench server pk-lookup-57 --target mysql84 \\\n      --counter Innodb_rows_read --counter Innodb_data_fsyncs\n" +
			"  kubectl mysqlbench server pk-lookup-57 --per second -o csv > server-rates.csv\n" +
			"  kubectl mysqlbench server --from pk-lookup-57/results.json",
		Args: runArgs(&o.from),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.server(cmd.Context(), argOrEmpty(args), o)
		},
	}
	cmd.Flags().StringArrayVar(&o.targets, "target", nil, "Show only this target (repeatable).")
	cmd.Flags().StringArrayVar(&o.counters, "counter", nil,
		"Show only this counter or gauge, e.g. Innodb_rows_read (repeatable; the CPU row and the waits are always shown).")
	cmd.Flags().StringVar(&o.per, "per", "query", "Counters and CPU per sysbench query, or per second.")
	o.output = addOutputFlags(cmd, outputSpec{own: []string{"table", "csv"},
		what: "the tables (csv and custom-columns: a line per target, row and thread count)"})
	cmd.Flags().StringArrayVar(&o.from, "from", nil, fromFlag)
	return cmd
}

func (e *env) server(ctx context.Context, name string, o *serverOptions) error {
	if o.per != "query" && o.per != "second" {
		return fmt.Errorf("--per %q: use --per query or --per second", o.per)
	}
	if err := o.output.validate(); err != nil {
		return err
	}
	src, err := e.source(o.from)
	if err != nil {
		return err
	}
	run, err := src.getRun(ctx, name, "")
	if err != nil {
		return err
	}
	for _, t := range o.targets {
		if err := checkTarget(run, t); err != nil {
			return err
		}
	}
	doc, err := resultsDoc(ctx, src, run)
	if err != nil {
		return err
	}
	if err := checkCounters(doc, o.counters); err != nil {
		return err
	}
	view, err := serverViewOf(doc, serverQuery{
		targets: o.targets, counters: o.counters, perSecond: o.per == "second",
		off: !run.Spec.ServerStatsEnabled(), notStored: src.serverNotStored(ctx, run),
	})
	if err != nil {
		return fmt.Errorf("benchmarkrun %s: %w", run.Name, err)
	}
	switch {
	case o.output.structured():
		return o.output.printView(e.Out, view, serverValueRows(view))
	case o.output.is("csv"):
		return writeServerCSV(e.Out, view)
	}
	return writeServerTables(e.Out, view)
}

// checkCounters refuses a --counter that neither the operator's bounded set nor any step has.
func checkCounters(doc *results.Doc, names []string) error {
	for _, n := range names {
		if results.KnownCounter(n) || serverstats.IsGauge(n) || docHasCounter(doc, n) {
			continue
		}
		hint := "names are case-sensitive, as SHOW GLOBAL STATUS and INNODB_METRICS spell them"
		if s := results.CounterSuggestion(n); s != "" {
			hint = "did you mean " + s + "?"
		}
		return fmt.Errorf("--counter %q: no such server counter (%s): the operator reads %s", n, hint,
			strings.Join(append(slices.Clone(serverstats.StatusNames), serverstats.InnoDBMetricNames...), ", "))
	}
	return nil
}

func docHasCounter(doc *results.Doc, name string) bool {
	for i := range doc.Targets {
		servers, err := results.ServerStepsOf(&doc.Targets[i])
		if err != nil {
			continue
		}
		for _, s := range servers {
			if s != nil && slices.ContainsFunc(s.Counters, func(c serverstats.Counter) bool { return c.Name == name }) {
				return true
			}
		}
	}
	return false
}

// serverStatsUnavailable is the reason of the Warning Event the operator records when a batch of
// steps' server counters could not be stored (internal/stepjob); its message reads "target
// T: the server's counters of N step(s) (threads 1, 8) are not stored: WHY".
const serverStatsUnavailable = "ServerStatsUnavailable"

// notStored is why a target's steps at a thread count have no server counters, from the
// operator's Events (kept about an hour by default), by target and thread count; 0 stands for
// the target's steps whose thread counts the message did not name.
type notStored map[string]map[int32]string

// serverNotStored reads the run's ServerStatsUnavailable Events; nothing when they are gone or
// may not be read (the table then says the reason is unknown).
func (e *env) serverNotStored(ctx context.Context, run *v1.BenchmarkRun) notStored {
	c, err := e.clients()
	if err != nil {
		return nil
	}
	events := &corev1.EventList{}
	if err := c.List(ctx, events, client.InNamespace(run.Namespace),
		client.MatchingFields{"involvedObject.uid": string(run.UID), "reason": serverStatsUnavailable}); err != nil {
		return nil
	}
	return notStoredFrom(events.Items)
}

// notStoredFrom reads the ServerStatsUnavailable Events among events, the newest last.
func notStoredFrom(events []corev1.Event) notStored {
	events = slices.DeleteFunc(slices.Clone(events), func(ev corev1.Event) bool { return ev.Reason != serverStatsUnavailable })
	slices.SortStableFunc(events, func(a, b corev1.Event) int { return a.LastTimestamp.Compare(b.LastTimestamp.Time) })
	out := notStored{}
	for _, ev := range events {
		target, threads, why, ok := parseNotStored(ev.Message)
		if !ok {
			continue
		}
		if out[target] == nil {
			out[target] = map[int32]string{}
		}
		if len(threads) == 0 {
			threads = []int32{0}
		}
		for _, th := range threads {
			out[target][th] = why
		}
	}
	return out
}

// parseNotStored reads a ServerStatsUnavailable Event's message.
func parseNotStored(msg string) (target string, threads []int32, why string, ok bool) {
	rest, found := strings.CutPrefix(msg, "target ")
	if !found {
		return "", nil, "", false
	}
	target, rest, found = strings.Cut(rest, ": ")
	if !found {
		return "", nil, "", false
	}
	head, why, found := strings.Cut(rest, " are not stored: ")
	if !found {
		return "", nil, "", false
	}
	if _, list, found := strings.Cut(head, "(threads "); found {
		list, _, _ = strings.Cut(list, ")")
		for _, f := range strings.Split(list, ", ") {
			if n, err := strconv.ParseInt(f, 10, 32); err == nil && !slices.Contains(threads, int32(n)) {
				threads = append(threads, int32(n))
			}
		}
	}
	return target, threads, why, true
}

// serverQuery is what the server command shows.
type serverQuery struct {
	targets   []string // empty: all
	counters  []string // empty: every counter and gauge a step has
	perSecond bool
	// off: the run's spec.serverStats.enabled is false.
	off       bool
	notStored notStored
}

// serverView is the server command's output, the same for the table, csv and json.
type serverView struct {
	Run       string `json:"run"`
	Namespace string `json:"namespace"`
	// Per is "query" or "second": what the counters' and the CPU's values are divided by.
	Per string `json:"per"`
	// Repetitions: with more than one a value is the median of the thread count's steps.
	Repetitions int                `json:"repetitions"`
	Targets     []serverTargetView `json:"targets"`
}

// serverTargetView is a target's table, the one report.md renders too, with what it lacks.
type serverTargetView struct {
	report.ServerTable
	// Missing says what the rows lack and why, one sentence each.
	Missing []string `json:"missing,omitempty"`
}

// serverStep is a step's server counters, nil when results.json has none, with the step.
type serverStep struct {
	threads, rep int32
	s            *serverstats.Step
}

// serverViewOf builds the view of the targets of doc that q asks for, in the run's order.
func serverViewOf(doc *results.Doc, q serverQuery) (serverView, error) {
	v := serverView{Run: doc.Run.Name, Namespace: doc.Run.Namespace, Per: "query", Repetitions: doc.Ladder.Repetitions}
	if q.perSecond {
		v.Per = "second"
	}
	for i := range doc.Targets {
		t := &doc.Targets[i]
		if len(q.targets) > 0 && !slices.Contains(q.targets, t.Name) {
			continue
		}
		servers, err := results.ServerStepsOf(t)
		if err != nil {
			return serverView{}, err
		}
		steps := make([]serverStep, len(t.Steps))
		for j, st := range t.Steps {
			steps[j] = serverStep{threads: st.Threads, rep: max(st.Repetition, 1), s: servers[j]}
		}
		v.Targets = append(v.Targets, targetView(doc, t, steps, servers, q))
	}
	return v, nil
}

func targetView(doc *results.Doc, t *results.Target, steps []serverStep, servers []*serverstats.Step, q serverQuery) serverTargetView {
	if q.off {
		// The run did not record them: the table has the thread counts and no rows.
		servers = nil
	}
	tv := serverTargetView{ServerTable: report.NewServerTable(t, servers, report.ServerQuery{Counters: q.counters, PerSecond: q.perSecond})}
	if len(steps) == 0 {
		tv.Missing = append(tv.Missing, "no measured step")
		return tv
	}
	if q.off {
		tv.Missing = append(tv.Missing, "no server counters: the run did not record them (spec.serverStats.enabled: false)")
		return tv
	}
	tv.Missing = append(tv.Missing, notStoredLines(doc, t.Name, steps, q.notStored)...)
	var with []serverStep
	for _, s := range steps {
		if s.s != nil {
			with = append(with, s)
		}
	}
	if len(with) == 0 {
		return tv
	}
	tv.Missing = append(tv.Missing, gapLines(t.Name, tv, with, q, results.ServerValue{PerSecond: q.perSecond})...)
	return tv
}

// notStoredLines say which steps have no server counters and why, when it is known.
func notStoredLines(doc *results.Doc, target string, steps []serverStep, events notStored) []string {
	reps := doc.Ladder.Repetitions > 1
	var whys []string
	at := map[string][]string{}
	missing := 0
	for _, s := range steps {
		if s.s != nil {
			continue
		}
		missing++
		why := "why is not known: the operator's Warning Event " + serverStatsUnavailable + " said it, and is gone"
		switch ev := events[target]; {
		case doc.ServerDropped(target, s.threads, s.rep):
			why = "left out of results.json to fit the ConfigMap (see its notes)"
		case ev[s.threads] != "":
			why = ev[s.threads]
		case ev[0] != "":
			why = ev[0]
		}
		if _, ok := at[why]; !ok {
			whys = append(whys, why)
		}
		step := strconv.Itoa(int(s.threads))
		if reps {
			step += fmt.Sprintf(" (repetition %d)", s.rep)
		}
		at[why] = append(at[why], step)
	}
	if missing == len(steps) && len(whys) == 1 && strings.HasPrefix(whys[0], "why is not known") {
		// No step of the target has any: most likely the run did not record them.
		return []string{"no server counters stored for any step (spec.serverStats.enabled false, or no step's log " +
			"had the server snapshots; a Warning Event " + serverStatsUnavailable + " says why while it is kept)"}
	}
	var out []string
	for _, why := range whys {
		out = append(out, fmt.Sprintf("server counters not stored at %s threads: %s", strings.Join(at[why], ", "), why))
	}
	return out
}

// gapLines say what the target's stored server counters lack: waits, counters, CPU, errors.
func gapLines(target string, tv serverTargetView, steps []serverStep, q serverQuery, cpu results.ServerValue) []string {
	var out []string
	if !tv.PerformanceSchema {
		out = append(out, fmt.Sprintf("performance_schema is OFF on %s: no waits recorded (set performance_schema = ON "+
			"in the target's myCnf, or targets[].synchWaits: true)", target))
	}
	var status, metrics, errs, backwards []string
	for _, s := range steps {
		status = appendNew(status, s.s.MissingStatus...)
		metrics = appendNew(metrics, s.s.MissingInnoDBMetrics...)
		errs = appendNew(errs, s.s.Errors...)
		if len(s.s.WaitsLeftOut) > 0 {
			backwards = append(backwards, strconv.Itoa(int(s.threads)))
		}
	}
	if len(q.counters) > 0 {
		notAsked := func(n string) bool { return !slices.Contains(q.counters, n) }
		status, metrics = slices.DeleteFunc(status, notAsked), slices.DeleteFunc(metrics, notAsked)
	}
	var lacks []string
	if len(status) > 0 {
		has := func(name string) bool {
			return slices.ContainsFunc(steps, func(s serverStep) bool {
				return slices.ContainsFunc(s.s.Counters, func(c serverstats.Counter) bool { return c.Name == name })
			})
		}
		lacks = append(lacks, "status "+withStandIns(status, has))
	}
	if len(metrics) > 0 {
		lacks = append(lacks, "InnoDB metrics "+strings.Join(metrics, ", "))
	}
	if len(lacks) > 0 {
		out = append(out, fmt.Sprintf("counters %s lacks or has disabled: %s", target, strings.Join(lacks, "; ")))
	}
	for _, n := range q.counters {
		row := slices.IndexFunc(tv.Rows, func(r report.ServerRow) bool { return r.Name == n })
		if row >= 0 && !slices.ContainsFunc(tv.Rows[row].Values, func(v *float64) bool { return v != nil }) &&
			!slices.Contains(status, n) && !slices.Contains(metrics, n) {
			out = append(out, fmt.Sprintf("%s: %s", n, whyNot(results.ServerValue{Counter: n, PerSecond: q.perSecond}, steps)))
		}
	}
	if len(errs) > 0 {
		out = append(out, "snapshot errors (why some counters are missing): "+strings.Join(errs, "; "))
	}
	if len(backwards) > 0 {
		out = append(out, fmt.Sprintf("some wait events' totals went backwards at %s threads (performance_schema forgets the "+
			"waits of a table it drops or evicts): left out of the waits", strings.Join(slices.Compact(backwards), ", ")))
	}
	// The CPU: not measured at all, or at some thread counts.
	var cpuWhys []string
	cpuAt := map[string][]string{}
	for _, s := range steps {
		if _, ok, why := cpu.Of(*s.s); !ok {
			if _, seen := cpuAt[why]; !seen {
				cpuWhys = append(cpuWhys, why)
			}
			cpuAt[why] = appendNew(cpuAt[why], strconv.Itoa(int(s.threads)))
		}
	}
	what := "CPU per query"
	if q.perSecond {
		what = "CPU per second"
	}
	measured := slices.ContainsFunc(tv.Rows, func(r report.ServerRow) bool { return r.Kind == report.RowCPU })
	for _, why := range cpuWhys {
		why = strings.TrimPrefix(why, "CPU not measured: ")
		if !measured {
			out = append(out, fmt.Sprintf("%s: not measured (%s)", what, why))
			continue
		}
		out = append(out, fmt.Sprintf("%s: not measured at %s threads (%s)", what, strings.Join(cpuAt[why], ", "), why))
	}
	return out
}

// whyNot is why no step has v: the first step's reason.
func whyNot(v results.ServerValue, steps []serverStep) string {
	for _, s := range steps {
		if _, ok, why := v.Of(*s.s); !ok {
			return why
		}
	}
	return "not recorded"
}

// withStandIns lists missing status counters, naming what stands in for a counter the server
// lacks where it has that: "Innodb_rows_read (has Rows_read)".
func withStandIns(names []string, has func(string) bool) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		for _, alt := range results.CounterStandIns(n) {
			if has(alt) {
				out[i] = n + " (has " + alt + ")"
				break
			}
		}
	}
	return strings.Join(out, ", ")
}

// appendNew appends the values not in list yet.
func appendNew(list []string, values ...string) []string {
	for _, v := range values {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}

// writeServerTables writes, per target, the counters table (one row per counter, gauge and the
// CPU, one column per thread count), the waits table, and what is missing.
func writeServerTables(w io.Writer, v serverView) error {
	unit := "per query"
	if v.Per == "second" {
		unit = "per second"
	}
	medians := ""
	if v.Repetitions > 1 {
		medians = fmt.Sprintf(" (median of %d repetitions)", v.Repetitions)
	}
	dash := false
	for i, t := range v.Targets {
		if i > 0 {
			_, _ = fmt.Fprintln(w)
		}
		name := t.Name
		if t.ServerVersion != "" {
			name += " (" + t.ServerVersion + ")"
		}
		_, _ = fmt.Fprintf(w, "Target %s:\n", name)
		iw := indent(w)
		if len(t.Rows) > 0 {
			_, _ = fmt.Fprintf(iw, "Server counters %s by threads%s:\n", unit, medians)
			if err := writeRows(iw, "COUNTER", t.Threads, t.Rows, &dash); err != nil {
				return err
			}
		}
		if len(t.Waits) > 0 {
			_, _ = fmt.Fprintf(iw, "\nTop waits by threads in seconds of wait per second, i.e. threads waiting on average%s:\n", medians)
			if err := writeRows(iw, "EVENT", t.Threads, t.Waits, &dash); err != nil {
				return err
			}
		}
		if len(t.Missing) > 0 {
			if len(t.Rows) > 0 {
				_, _ = fmt.Fprintln(iw)
			}
			for _, m := range t.Missing {
				_, _ = fmt.Fprintf(iw, "- %s\n", m)
			}
		}
	}
	if dash {
		_, _ = fmt.Fprintln(w, "\n-: no value at that thread count (see the lines under the target); for a wait, not "+
			"among the events that step stored (spec.serverStats.topWaits).")
	}
	return nil
}

func writeRows(w io.Writer, first string, threads []int32, rows []report.ServerRow, dash *bool) error {
	tw := printers.GetNewTabWriter(w)
	header := []string{first}
	for _, th := range threads {
		header = append(header, strconv.Itoa(int(th)))
	}
	_, _ = fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		name := r.Name
		switch r.Kind {
		case report.RowGauge:
			name += " (at end)"
		case report.RowWait:
			name = report.ShortEvent(name)
		}
		cells := []string{name}
		for _, x := range r.Values {
			if x == nil {
				cells = append(cells, "-")
				*dash = true
				continue
			}
			cells = append(cells, report.Sig3(*x))
		}
		_, _ = fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// writeServerCSV writes one row per target, row and thread count with a value, then the missing
// lines as rows of kind "missing".
// serverValue is one value of the tables: a line of the csv and of -o custom-columns.
type serverValue struct {
	Run     string  `json:"run"`
	Target  string  `json:"target"`
	Threads int32   `json:"threads"`
	Kind    string  `json:"kind"`
	Source  string  `json:"source"`
	Name    string  `json:"name"`
	Unit    string  `json:"unit"`
	Value   float64 `json:"value"`
	Steps   int     `json:"steps"`
}

func serverValueRows(v serverView) []any {
	var out []any
	for _, t := range v.Targets {
		for _, rows := range [][]report.ServerRow{t.Rows, t.Waits} {
			for _, r := range rows {
				for i, x := range r.Values {
					if x != nil {
						out = append(out, serverValue{Run: v.Run, Target: t.Name, Threads: t.Threads[i], Kind: r.Kind,
							Source: r.Source, Name: r.Name, Unit: r.Unit, Value: *x, Steps: r.N[i]})
					}
				}
			}
		}
	}
	return out
}

func writeServerCSV(w io.Writer, v serverView) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"run", "target", "threads", "kind", "source", "name", "unit", "value", "steps"})
	for _, t := range v.Targets {
		for _, rows := range [][]report.ServerRow{t.Rows, t.Waits} {
			for _, r := range rows {
				for i, x := range r.Values {
					if x == nil {
						continue
					}
					_ = cw.Write([]string{v.Run, t.Name, strconv.Itoa(int(t.Threads[i])), r.Kind, r.Source, r.Name, r.Unit,
						strconv.FormatFloat(*x, 'g', -1, 64), strconv.Itoa(r.N[i])})
				}
			}
		}
		for _, m := range t.Missing {
			_ = cw.Write([]string{v.Run, t.Name, "", "missing", "", m, "", "", ""})
		}
	}
	cw.Flush()
	return cw.Error()
}
