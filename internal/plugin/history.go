package plugin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mysqlbench/mysqlbench-operator/internal/exported"
	client "github.com/mysqlbench/mysqlbench-operator/internal/kubeclient"
	"github.com/mysqlbench/mysqlbench-operator/internal/resultsdb"
)

// DSNEnv names the results database when neither --database-secret nor --database-dsn does, so
// a DSN with its password need not be typed on a command line (and land in the shell's history).
const DSNEnv = "MYSQLBENCH_RESULTS_DSN"

type historyOptions struct {
	target        string
	threads       []int
	workload      string
	metric        string
	since         string
	limit         int
	output        *outputFlags
	secret        string
	dsn           string
	confirmations bool
	from          []string
}

func newHistoryCommand(e *env) *cobra.Command {
	o := &historyOptions{}
	metrics := make([]string, len(resultsdb.Metrics))
	for i, m := range resultsdb.Metrics {
		metrics[i] = string(m)
	}
	cmd := &cobra.Command{
		Use:   "history SCHEDULE | history --target NAME",
		Short: "A cell's QPS or p95 over nights, from the results database",
		Long: "Reads the operator's results database (the runs it stored) and prints, for each target and thread " +
			"count, the cell's median over the schedule's successful runs, oldest first: the night, the run, the " +
			"server version, the median with its interval, the change against the night before, the run's verdict " +
			"against its baseline (and the target's in it) and the marks: ◆ the first night of a sustained shift in " +
			"level, found as the operator finds them in a schedule's history (stats.ChangePoint on every series, " +
			"whitened by the nights' autocorrelation pooled over all of them, p-values adjusted together: " +
			"Benjamini-Hochberg, the operator's default alpha and minimum effect), and a new server version or image. " +
			"SCHEDULE is a BenchmarkSchedule of the namespace (-n); --target NAME follows a target across its " +
			"schedules (in -n's namespace when given, else in all), one series per schedule and workload. " +
			"Confirmation runs re-measure a night and are left out unless --confirmations.\n\n" +
			"The database: --database-secret [NAMESPACE/]NAME reads the Secret the operator uses " +
			"(--results-database-secret; keys dsn, or host, port, user, password, database, tls), --database-dsn " +
			"takes a DSN (user:password@tcp(host:3306)/mysqlbench), else the environment variable " + DSNEnv + ". " +
			"The plugin only reads: it never creates or migrates the schema.\n\n" +
			"With --from PATH the runs are read from exported files instead (bundles of export --bundle, a " +
			"BenchmarkRun with its status, results.json, or directories of them), each as the operator would store it: " +
			"a results.json alone does not say which schedule made its run, so it serves --target only.",
		Example: "  kubectl mysqlbench history nightly -n bench \\\n      --database-secret mysqlbench-system/results-db\n" +
			"  kubectl mysqlbench history nightly --threads 8,64 --since 90d\n" +
			"  kubectl mysqlbench history micro-nightly --workload read-write\n" +
			"  kubectl mysqlbench history nightly --from exported-bundles/\n" +
			"  kubectl mysqlbench history --target mysql84 --metric p95 \\\n      --since 2026-01-01 -o json\n" +
			"  export " + DSNEnv + "='reader:...@tcp(db.example:3306)/mysqlbench'\n" +
			"  kubectl mysqlbench history nightly",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 || (len(args) == 0 && o.target == "") {
				return fmt.Errorf("%s needs SCHEDULE or --target NAME (got %d argument(s)); see %s --help",
					cmd.CommandPath(), len(args), cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			schedule := ""
			if len(args) == 1 {
				schedule = args[0]
			}
			return e.history(cmd.Context(), schedule, o)
		},
	}
	cmd.Flags().StringVar(&o.target, "target", "", "Follow this target (across schedules unless SCHEDULE is given).")
	cmd.Flags().IntSliceVar(&o.threads, "threads", nil, "Show only these thread counts (repeatable, or a list: --threads 8,64).")
	cmd.Flags().StringVar(&o.workload, "workload", "", "Show only this workload's series: a workload's name in a schedule of several "+
		"(spec.workloads, spec.preset), or the script of a run of one.")
	cmd.Flags().StringVar(&o.metric, "metric", string(resultsdb.MetricQPS), "What to follow: "+strings.Join(metrics, ", ")+
		" (qps is the throughput: tpmC for go-tpc runs; p95 latency in ms).")
	cmd.Flags().StringVar(&o.since, "since", "", "Only runs started since: an age (90d, 2w, 36h) or a date (2026-01-01).")
	cmd.Flags().IntVar(&o.limit, "limit", 60, "At most this many nights per series, the newest (0: all).")
	o.output = addOutputFlags(cmd, outputSpec{own: []string{"table"},
		what: "the series with their change points (custom-columns: a line per night of a series)"})
	cmd.Flags().StringVar(&o.secret, "database-secret", "", "The results database's Secret, [NAMESPACE/]NAME (default namespace: -n's).")
	cmd.Flags().StringVar(&o.dsn, "database-dsn", "", "The results database's DSN (default: $"+DSNEnv+"), e.g. user:pw@tcp(db:3306)/mysqlbench.")
	cmd.Flags().BoolVar(&o.confirmations, "confirmations", false, "Include the confirmation runs, as points of their own.")
	cmd.Flags().StringArrayVar(&o.from, "from", nil, "Read the runs from exported files instead of the results database "+
		"(repeatable): bundles (export --bundle), BenchmarkRuns with their status, results.json files, or directories of them.")
	return cmd
}

func (e *env) history(ctx context.Context, schedule string, o *historyOptions) error {
	if err := o.output.validate(); err != nil {
		return err
	}
	metric := resultsdb.Metric(o.metric)
	if !slices.Contains(resultsdb.Metrics, metric) {
		return fmt.Errorf("--metric %q: use qps, tpmC or p95", o.metric)
	}
	since, err := parseSince(o.since, e.now())
	if err != nil {
		return err
	}
	if o.limit < 0 {
		return fmt.Errorf("--limit %d: give a number of nights, or 0 for all", o.limit)
	}
	q := resultsdb.HistoryQuery{Schedule: schedule, Target: o.target, Metric: metric, Since: since, Nights: o.limit,
		Confirmations: o.confirmations}
	var series []resultsdb.Series
	if len(o.from) > 0 {
		if o.dsn != "" || o.secret != "" {
			return errors.New("--from reads the runs from files: drop --database-dsn and --database-secret")
		}
		// Files hold the runs the user picked: -n narrows them, nothing else does.
		if e.flags.Namespace != nil {
			q.Namespace = *e.flags.Namespace
		}
		if series, err = e.historyFromFiles(q, o.from); err != nil {
			return err
		}
	} else {
		ns, explicit := e.historyNamespace()
		if schedule != "" || explicit {
			q.Namespace = ns
		}
		if series, err = e.historyFromDatabase(ctx, q, o, ns); err != nil {
			return err
		}
	}
	view := analyse(series, metric)
	if o.workload != "" {
		// Like --threads, a filter of what is shown: the change points were adjusted over every
		// workload's series, as the schedule's own analysis is.
		view.Series = slices.DeleteFunc(view.Series, func(s seriesView) bool { return s.Workload != o.workload })
		if len(view.Series) == 0 {
			var have []string
			for _, s := range series {
				if !slices.Contains(have, s.Workload) {
					have = append(have, s.Workload)
				}
			}
			return fmt.Errorf("no cells of --workload %s; the series have workloads %s", o.workload, strings.Join(have, ", "))
		}
	}
	if len(o.threads) > 0 {
		view.Series = slices.DeleteFunc(view.Series, func(s seriesView) bool { return !slices.Contains(o.threads, s.Threads) })
		if len(view.Series) == 0 {
			var have []string
			for _, s := range series {
				if t := strconv.Itoa(s.Threads); !slices.Contains(have, t) {
					have = append(have, t)
				}
			}
			return fmt.Errorf("no cells at --threads %s; the series have threads %s", intList(o.threads), strings.Join(have, ", "))
		}
	}
	if o.output.structured() {
		return o.output.printView(e.Out, view, nightRows(view))
	}
	return writeHistory(e.Out, view)
}

// historyFromDatabase reads the series from the results database the flags name.
func (e *env) historyFromDatabase(ctx context.Context, q resultsdb.HistoryQuery, o *historyOptions, ns string) ([]resultsdb.Series, error) {
	cfg, err := e.resultsDatabase(ctx, o, ns)
	if err != nil {
		return nil, err
	}
	openCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	store, err := resultsdb.Open(openCtx, cfg, resultsdb.OpenOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("results database: %w", err)
	}
	defer func() { _ = store.Close() }()
	// Every thread count is read and analysed, --threads only picks what is shown: the
	// autocorrelation and the adjustment over all series are the schedule's, not the selection's.
	series, err := store.History(ctx, q)
	if err != nil {
		return nil, err
	}
	if len(series) == 0 {
		return nil, e.nothingFound(ctx, store, q)
	}
	return series, nil
}

// historyFromFiles reads the series from exported runs (bundles, run YAML, results.json): each
// run becomes the record the operator would store for it (resultsdb.Build), and the records are
// queried as the database would be.
func (e *env) historyFromFiles(q resultsdb.HistoryQuery, from []string) ([]resultsdb.Series, error) {
	set, err := exported.Load(from)
	if err != nil {
		return nil, err
	}
	for _, s := range set.Skipped {
		_, _ = fmt.Fprintf(e.ErrOut, "Note: passed over %s\n", s)
	}
	var records []*resultsdb.Record
	for _, r := range set.Runs {
		run := r.ObjectOrResults().DeepCopy()
		if run.UID == "" {
			// A results.json has no UID: its run is keyed by name and start, as it is told apart.
			start := ""
			if run.Status.StartTime != nil {
				start = run.Status.StartTime.UTC().Format(time.RFC3339)
			}
			run.UID = types.UID("results.json:" + run.Namespace + "/" + run.Name + "@" + start)
		}
		rec, err := resultsdb.Build(run, r.Doc)
		if err != nil {
			return nil, fmt.Errorf("benchmarkrun %s (%s): %w", run.Name, strings.Join(r.From, ", "), err)
		}
		records = append(records, rec)
	}
	series, err := resultsdb.HistoryOf(records, q)
	if err != nil {
		return nil, err
	}
	if len(series) > 0 {
		return series, nil
	}
	what := "no successful runs of schedule " + q.Schedule
	if q.Schedule == "" {
		what = "no cells of target " + q.Target + " in successful runs"
	}
	var have []string
	for _, s := range resultsdb.SchedulesOf(records, q.Namespace) {
		name := cmp.Or(s.Schedule, "(runs of no schedule: a results.json does not say)")
		have = append(have, fmt.Sprintf("%s/%s (%d runs)", s.Namespace, name, s.Runs))
	}
	if len(have) == 0 {
		return nil, fmt.Errorf("the files of --from hold %s: they hold no runs", what)
	}
	return nil, fmt.Errorf("the files of --from hold %s; they hold runs of %s", what, strings.Join(have, ", "))
}

// historyNamespace is -n's namespace, else the kubeconfig context's; explicit says one of them
// named it. Without a kubeconfig (a DSN alone) it is "default", not explicit.
func (e *env) historyNamespace() (string, bool) {
	if e.flags.Namespace != nil && *e.flags.Namespace != "" {
		return *e.flags.Namespace, true
	}
	ns, explicit, err := e.namespace()
	if err != nil || ns == "" {
		return "default", false
	}
	return ns, explicit
}

// resultsDatabase is the connection the flags name: --database-dsn, --database-secret, else
// the environment's DSN.
func (e *env) resultsDatabase(ctx context.Context, o *historyOptions, ns string) (*mysql.Config, error) {
	switch {
	case o.dsn != "" && o.secret != "":
		return nil, errors.New("give --database-secret or --database-dsn, not both")
	case o.dsn != "":
		cfg, err := resultsdb.ParseDSN(o.dsn)
		if err != nil {
			return nil, fmt.Errorf("--database-dsn: %w (the form is user:password@tcp(host:3306)/mysqlbench)", err)
		}
		return cfg, nil
	case o.secret != "":
		return e.databaseSecret(ctx, o.secret, ns)
	}
	if dsn := os.Getenv(DSNEnv); dsn != "" {
		cfg, err := resultsdb.ParseDSN(dsn)
		if err != nil {
			return nil, fmt.Errorf("$%s: %w (the form is user:password@tcp(host:3306)/mysqlbench)", DSNEnv, err)
		}
		return cfg, nil
	}
	return nil, fmt.Errorf("no results database given: name the Secret the operator writes with (--database-secret " +
		"[NAMESPACE/]NAME, the operator's --results-database-secret or the chart's resultsDatabase.secretName), or " +
		"give --database-dsn user:password@tcp(host:3306)/mysqlbench, or set " + DSNEnv)
}

// databaseSecret reads the results database's Secret ([NAMESPACE/]NAME) from the cluster.
func (e *env) databaseSecret(ctx context.Context, ref, ns string) (*mysql.Config, error) {
	name := ref
	if before, after, ok := strings.Cut(ref, "/"); ok {
		ns, name = before, after
	}
	if ns == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("--database-secret %q: give NAME or NAMESPACE/NAME", ref)
	}
	c, err := e.clients()
	if err != nil {
		return nil, err
	}
	secret := &corev1.Secret{}
	err = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("--database-secret: Secret %q not found in namespace %q: name the Secret the operator "+
			"uses (its --results-database-secret, the chart's resultsDatabase.secretName) as NAMESPACE/NAME", name, ns)
	case err != nil:
		return nil, fmt.Errorf("--database-secret: read Secret %s/%s: %w", ns, name, err)
	}
	cfg, err := resultsdb.Config(secret.Data)
	if err != nil {
		return nil, fmt.Errorf("--database-secret: Secret %s/%s: %w", ns, name, err)
	}
	return cfg, nil
}

// nothingFound says what the database does hold, since the query found no cells.
func (e *env) nothingFound(ctx context.Context, store *resultsdb.Store, q resultsdb.HistoryQuery) error {
	var what string
	switch {
	case q.Schedule != "" && q.Target != "":
		what = fmt.Sprintf("no cells of target %s in schedule %s/%s", q.Target, q.Namespace, q.Schedule)
	case q.Schedule != "":
		what = fmt.Sprintf("no runs of schedule %s in namespace %s", q.Schedule, q.Namespace)
	case q.Namespace != "":
		what = fmt.Sprintf("no cells of target %s in namespace %s", q.Target, q.Namespace)
	default:
		what = fmt.Sprintf("no cells of target %s", q.Target)
	}
	var filters []string
	if !q.Since.IsZero() {
		filters = append(filters, "since "+q.Since.Format(time.DateOnly))
	}
	if q.Metric != resultsdb.MetricQPS {
		filters = append(filters, "with "+string(q.Metric))
	}
	if len(filters) > 0 {
		what += " (" + strings.Join(filters, ", ") + ")"
	}
	what += " that succeeded in " + store.Describe()
	scheds, err := store.Schedules(ctx, q.Namespace)
	if err != nil {
		return fmt.Errorf("%s; %w", what, err)
	}
	if len(scheds) == 0 {
		if q.Namespace == "" {
			return fmt.Errorf("%s: the database holds no runs yet", what)
		}
		all, err := store.Schedules(ctx, "")
		if err != nil {
			return fmt.Errorf("%s; %w", what, err)
		}
		var nss []string
		for _, s := range all {
			if !slices.Contains(nss, s.Namespace) {
				nss = append(nss, s.Namespace)
			}
		}
		if len(nss) == 0 {
			return fmt.Errorf("%s: the database holds no runs yet", what)
		}
		return fmt.Errorf("%s: it holds no runs of namespace %s, only of %s (-n NAMESPACE)", what, q.Namespace, strings.Join(nss, ", "))
	}
	var have []string
	for _, s := range scheds {
		name := s.Schedule
		if name == "" {
			name = "(runs of no schedule)"
		}
		if q.Namespace == "" {
			name = s.Namespace + "/" + name
		}
		have = append(have, fmt.Sprintf("%s (%d runs, newest %s)", name, s.Runs, s.Newest.Format(time.DateOnly)))
	}
	where := "namespace " + q.Namespace
	if q.Namespace == "" {
		where = "all namespaces"
	}
	return fmt.Errorf("%s; the schedules of %s it holds runs of: %s", what, where, strings.Join(have, ", "))
}

// parseSince reads --since: an age before now (90d, 2w, 36h, 90m) or a date (2026-01-01, or an
// RFC 3339 time); "" is no bound.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	bad := fmt.Errorf("--since %q: give an age such as 90d, 2w or 36h, or a date such as 2026-01-01", s)
	var age time.Duration
	if n, unit := strings.TrimRight(s, "dw"), s[len(strings.TrimRight(s, "dw")):]; unit == "d" || unit == "w" {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 {
			return time.Time{}, bad
		}
		if unit == "w" {
			days *= 7
		}
		age = time.Duration(days) * 24 * time.Hour
	} else {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return time.Time{}, bad
		}
		age = d
	}
	return now.Add(-age), nil
}
