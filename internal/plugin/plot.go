package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/charts"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

type plotOptions struct {
	metric     string
	relativeTo string
	timeline   bool
	outputFile string
	// output is -o, the chart's format as kubectl's -o is a format: png or svg. A file name
	// given to it is refused with the --output-file that works.
	output     string
	title      string
	width      string
	height     string
	dpi        int
	logLatency bool
	per        string
	workload   string
	heatmap    bool
	from       []string
}

func newPlotCommand(e *env) *cobra.Command {
	o := &plotOptions{}
	metrics := make([]string, 0, len(charts.Metrics)+len(charts.ServerMetrics))
	for _, m := range append(slices.Clone(charts.Metrics), charts.ServerMetrics...) {
		metrics = append(metrics, string(m))
	}
	cmd := &cobra.Command{
		Use:   "plot RUN... (--output-file FILE | -o png|svg)",
		Short: "Chart a metric by threads, relative to a target, or over time",
		Long: "Draws one chart from the runs' results.json, one line per target (\"run/target\" with several runs): " +
			"--metric by thread count on a log-2 axis (with error bars from the confidence intervals when the run " +
			"has repetitions), --relative-to TARGET divides each line by that target at the same thread count, and " +
			"--timeline draws the per-second series across the whole ladder instead (to spot stalls). " +
			"The server metrics come from each step's server counters (spec.serverStats; see `kubectl mysqlbench server`): " +
			"cpu-per-query is the server container's CPU time per query in microseconds, cpu-per-second the cores it " +
			"kept busy, counter:NAME a server counter per query (--per second: per second); they are drawn by threads " +
			"only, and the targets and steps without them are said under the chart and on stderr, never drawn as 0. " +
			"The format is -o png or -o svg, else --output-file's extension; without --output-file the chart goes to stdout; --width, --height and --dpi size it, --log-latency draws " +
			"p95 on a log axis. A relative chart centres on the 1.0 line (marked) to show the differences; with " +
			"several runs each target keeps one colour and each run one dash pattern." + fromHelp + " Without RUN every run of the files is drawn, in the " +
			"order of --from. plot needs each run's results.json (a run's YAML alone has no results).",
		Example: "  kubectl mysqlbench plot pk-lookup-57 --output-file qps.png\n" +
			"  kubectl mysqlbench plot pk-lookup-57 --relative-to mysql57 \\\n      --output-file relative.svg\n" +
			"  kubectl mysqlbench plot pk-lookup-57 --metric p95 --log-latency \\\n      --output-file p95.png\n" +
			"  kubectl mysqlbench plot pk-lookup-57 --width 16cm --height 10cm --dpi 300 \\\n      --output-file qps-print.png\n" +
			"  kubectl mysqlbench plot pk-lookup-57 --timeline --output-file timeline.png\n" +
			"  kubectl mysqlbench plot micro-57 --heatmap --relative-to mysql57 \\\n      --output-file heatmap.png\n" +
			"  kubectl mysqlbench plot pk-lookup-57 --metric cpu-per-query -o png > cpu.png\n" +
			"  kubectl mysqlbench plot pk-lookup-57 --metric counter:Innodb_rows_read \\\n      --output-file rows-read.svg\n" +
			"  kubectl mysqlbench plot release-1 candidate --output-file both.png\n" +
			"  kubectl mysqlbench plot pk-lookup-57 -o svg > qps.svg\n" +
			"  kubectl mysqlbench plot --from release-1.tar.gz \\\n      --from candidate/results.json --output-file both.png",
		Args: func(cmd *cobra.Command, args []string) error {
			if o.output != "" && o.output != "png" && o.output != "svg" {
				if ext := strings.ToLower(filepath.Ext(o.output)); ext == ".png" || ext == ".svg" {
					return fmt.Errorf("-o is the chart's format (png or svg), as kubectl's -o is a format: name the file "+
						"with --output-file %s", o.output)
				}
				return fmt.Errorf("-o %q: plot draws -o png or -o svg", o.output)
			}
			if o.outputFile == "" && o.output == "" {
				return errors.New("plot needs --output-file NAME.png or NAME.svg (the chart file to write), or -o png " +
					"or -o svg to write the chart to stdout")
			}
			if len(o.from) == 0 && len(args) == 0 {
				return fmt.Errorf("%s needs RUN (or --from PATH); see %s --help", cmd.CommandPath(), cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.per != "query" && o.per != "second" {
				return fmt.Errorf("--per %q: use --per query or --per second", o.per)
			}
			format := o.output
			if ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(o.outputFile)), "."); format == "" {
				format = ext
				if format != "png" && format != "svg" {
					return fmt.Errorf("--output-file %q: name a .png or .svg file, e.g. --output-file qps.png, or give "+
						"the format with -o png or -o svg", o.outputFile)
				}
			}
			if o.outputFile == "" && isTerminal(e.Out) {
				return fmt.Errorf("-o %s writes the chart to stdout, which is a terminal: redirect it (> chart.%s) or "+
					"name a file with --output-file chart.%s", format, format, format)
			}
			if o.dpi < 0 || (o.dpi > 0 && format != "png") {
				return fmt.Errorf("--dpi %d: give a positive resolution, for a .png (an svg has no pixels)", o.dpi)
			}
			width, err := parseLength("--width", o.width)
			if err != nil {
				return err
			}
			height, err := parseLength("--height", o.height)
			if err != nil {
				return err
			}
			src, err := e.source(o.from)
			if err != nil {
				return err
			}
			runs, err := runsOf(cmd.Context(), src, args)
			if err != nil {
				return err
			}
			docs := make([]*results.Doc, 0, len(runs))
			for _, run := range runs {
				doc, err := resultsDoc(cmd.Context(), src, run)
				if err != nil {
					return err
				}
				if err := plottable(run.Name, doc, charts.Metric(o.metric)); err != nil {
					return err
				}
				docs = append(docs, doc)
			}
			var p *charts.Chart
			var leftOut []string
			if o.heatmap {
				if p, err = heatmap(cmd, docs, o); err != nil {
					return err
				}
			} else {
				p, leftOut, err = charts.DrawWithNotes(docs, charts.Spec{
					Metric: charts.Metric(o.metric), RelativeTo: o.relativeTo, Workload: o.workload, Timeline: o.timeline, Title: o.title,
					PerSecond: o.per == "second", LogLatency: o.logLatency,
				})
				if err != nil {
					return err
				}
			}
			var buf bytes.Buffer
			if err := charts.Encode(p, format, charts.Size{Width: width, Height: height, DPI: o.dpi}, &buf); err != nil {
				return err
			}
			if o.outputFile == "" {
				if _, err := buf.WriteTo(e.Out); err != nil {
					return fmt.Errorf("write the chart: %w", err)
				}
			} else {
				if err := os.WriteFile(o.outputFile, buf.Bytes(), 0o644); err != nil {
					return fmt.Errorf("write %s: %w", o.outputFile, err)
				}
				_, _ = fmt.Fprintf(e.ErrOut, "Wrote %s\n", o.outputFile)
			}
			for _, n := range leftOut {
				_, _ = fmt.Fprintf(e.ErrOut, "Note: %s\n", n)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.metric, "metric", string(charts.QPS), "What to plot: "+strings.Join(metrics, ", ")+
		" (qps is the throughput: tpmC for go-tpc runs; p95 latency in ms; NAME a server counter, e.g. counter:Innodb_rows_read).")
	cmd.Flags().StringVar(&o.per, "per", "query", "A server counter (--metric counter:NAME) per query or per second.")
	cmd.Flags().StringVar(&o.relativeTo, "relative-to", "", "Divide every line by this target's value at the same thread count (\"run/target\" with several runs).")
	cmd.Flags().StringVar(&o.workload, "workload", "", "Draw only this workload of a run of several (spec.workloads, spec.preset); "+
		"without it such a run has a line per target and workload, each relative to the same workload of --relative-to's target, "+
		"and its --timeline a line per target through every workload in measuring order.")
	cmd.Flags().BoolVar(&o.heatmap, "heatmap", false, "Draw one run's throughput relative to a base target (--relative-to, else "+
		"spec.baseTarget, else the first target) as a heat map: a row per workload and thread count, a column per target, "+
		"each cell's ratio and 95 % interval printed in it on colours centred on 1.0.")
	cmd.Flags().BoolVar(&o.timeline, "timeline", false, "Draw the per-second series across the ladder instead of one point per thread count.")
	cmd.Flags().StringVar(&o.outputFile, "output-file", "", "The chart file to write: NAME.png or NAME.svg (without it, stdout).")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "Output format: png or svg (default: --output-file's extension).")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"png", "svg"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().StringVar(&o.title, "title", "", "Title of the chart (default: the runs and the metric).")
	cmd.Flags().StringVar(&o.width, "width", "", "Width, e.g. 20cm, 8in or 600pt (default 20cm; with only --height, the default's aspect ratio).")
	cmd.Flags().StringVar(&o.height, "height", "", "Height, e.g. 12cm (default 12cm).")
	cmd.Flags().IntVar(&o.dpi, "dpi", 0, fmt.Sprintf("Resolution of a .png in pixels per inch (default %d; 300 for print).", charts.DefaultDPI))
	cmd.Flags().BoolVar(&o.logLatency, "log-latency", false, "Draw latency (--metric p95) on a log axis.")
	cmd.Flags().StringArrayVar(&o.from, "from", nil, fromFlag)
	return cmd
}

// isTerminal says whether w is a terminal, where a chart's bytes would only garble the screen.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// runsOf are the runs called names, in order; without names, every run of the files.
func runsOf(ctx context.Context, src runSource, names []string) ([]*v1.BenchmarkRun, error) {
	if fs, ok := src.(*fileSource); ok && len(names) == 0 {
		return fs.all("")
	}
	runs := make([]*v1.BenchmarkRun, 0, len(names))
	for _, name := range names {
		run, err := src.getRun(ctx, name, "")
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	return runs, nil
}

// parseLength reads a chart side ("20cm", "8in", "600pt", "600" in points); "" is 0, the default.
func parseLength(flag, s string) (vg.Length, error) {
	if s == "" {
		return 0, nil
	}
	l, err := vg.ParseLength(s)
	if err != nil || l <= 0 {
		return 0, fmt.Errorf("%s %q: give a positive length such as 20cm, 8in or 600pt", flag, s)
	}
	return l, nil
}

// plottable says why run name's results cannot be drawn as metric m, nil when they can: a client
// that reports no transactions has no TPS, one without the 95th percentile no p95.
func plottable(name string, doc *results.Doc, m charts.Metric) error {
	c, _ := loadclient.Named(doc.Workload.Client)
	caps := c.Capabilities()
	if (m == charts.TPS && !caps.Transactions) || (m == charts.P95 && !caps.Reports(95)) {
		var missing []string
		if !caps.Transactions {
			missing = append(missing, "transactions")
		}
		if !caps.Reports(95) {
			missing = append(missing, "per-query latency")
		}
		return fmt.Errorf("run %s measured with %s, which reports no %s: plot --metric qps, or a server metric "+
			"(cpu-per-query, counter:NAME)", name, c.Name(), strings.Join(missing, " or "))
	}
	return nil
}

// heatmap draws plot --heatmap: one run's relative table, base --relative-to.
func heatmap(cmd *cobra.Command, docs []*results.Doc, o *plotOptions) (*charts.Chart, error) {
	for _, f := range []string{"metric", "timeline", "workload", "log-latency", "per"} {
		if cmd.Flags().Changed(f) {
			return nil, fmt.Errorf("--heatmap draws the throughput of every workload and thread count: drop --%s", f)
		}
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("--heatmap draws one run's targets against its base target (%d runs given): name one run", len(docs))
	}
	return charts.Heatmap(docs[0], o.relativeTo, o.title)
}
