package plugin

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	"github.com/mysqlbench/mysqlbench-operator/internal/charts"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

type plotOptions struct {
	metric     string
	relativeTo string
	timeline   bool
	output     string
	title      string
	width      string
	height     string
}

func newPlotCommand(e *env) *cobra.Command {
	o := &plotOptions{}
	metrics := make([]string, 0, len(charts.Metrics))
	for _, m := range charts.Metrics {
		metrics = append(metrics, string(m))
	}
	cmd := &cobra.Command{
		Use:   "plot RUN [RUN...] -o CHART.png|CHART.svg",
		Short: "Draw a chart of finished runs: a metric by threads (log-2 axis), relative to a target, or over time",
		Long: "Draws one chart from the runs' results.json, one line per target (\"run/target\" with several runs): " +
			"--metric by thread count on a log-2 axis (with error bars from the confidence intervals when the run " +
			"has repetitions), --relative-to TARGET divides each line by that target at the same thread count, and " +
			"--timeline draws the per-second series across the whole ladder instead (to spot stalls). " +
			"The format follows -o's extension.",
		Example: "  kubectl mysqlbench plot pk-lookup-57 -o qps.png\n" +
			"  kubectl mysqlbench plot pk-lookup-57 --relative-to mysql57 -o relative.svg\n" +
			"  kubectl mysqlbench plot pk-lookup-57 --metric p95 -o p95.png\n" +
			"  kubectl mysqlbench plot pk-lookup-57 --timeline --metric qps -o timeline.png\n" +
			"  kubectl mysqlbench plot release-1 candidate -o both.png",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format := strings.TrimPrefix(strings.ToLower(filepath.Ext(o.output)), ".")
			if format != "png" && format != "svg" {
				return fmt.Errorf("-o %q: name a .png or .svg file, e.g. -o qps.png", o.output)
			}
			width, err := parseLength("--width", o.width)
			if err != nil {
				return err
			}
			height, err := parseLength("--height", o.height)
			if err != nil {
				return err
			}
			docs := make([]*results.Doc, 0, len(args))
			for _, name := range args {
				run, err := e.getRun(cmd.Context(), name)
				if err != nil {
					return err
				}
				doc, err := e.resultsDoc(cmd.Context(), run)
				if err != nil {
					return err
				}
				docs = append(docs, doc)
			}
			p, err := charts.Draw(docs, charts.Spec{
				Metric: charts.Metric(o.metric), RelativeTo: o.relativeTo, Timeline: o.timeline, Title: o.title,
			})
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			if err := charts.Encode(p, format, width, height, &buf); err != nil {
				return err
			}
			if err := os.WriteFile(o.output, buf.Bytes(), 0o644); err != nil {
				return fmt.Errorf("write %s: %w", o.output, err)
			}
			_, _ = fmt.Fprintf(e.ErrOut, "Wrote %s\n", o.output)
			return nil
		},
	}
	cmd.Flags().StringVar(&o.metric, "metric", string(charts.QPS), "What to plot: "+strings.Join(metrics, ", ")+" (p95 latency in ms).")
	cmd.Flags().StringVar(&o.relativeTo, "relative-to", "", "Divide every line by this target's value at the same thread count (\"run/target\" with several runs).")
	cmd.Flags().BoolVar(&o.timeline, "timeline", false, "Draw the per-second series across the ladder instead of one point per thread count.")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "The chart file to write: NAME.png or NAME.svg.")
	cmd.Flags().StringVar(&o.title, "title", "", "Title of the chart (default: the runs and the metric).")
	cmd.Flags().StringVar(&o.width, "width", "", "Width, e.g. 20cm, 8in or 600pt (default 20cm; with only --height, the default's aspect ratio).")
	cmd.Flags().StringVar(&o.height, "height", "", "Height, e.g. 12cm (default 12cm).")
	_ = cmd.MarkFlagRequired("output")
	return cmd
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
