package plugin

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

type exportOptions struct {
	output string
	file   string
}

func newExportCommand(e *env) *cobra.Command {
	o := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export RUN -o csv|json|markdown",
		Short: "Write a finished run's results.csv, results.json or report.md",
		Long: "Writes a file of the run's results ConfigMap as the operator stored it: results.csv (one row per target " +
			"and step), results.json (everything, with each step's per-second series; its formatVersion is checked) " +
			"or report.md. The ConfigMap is written when every target is done.",
		Example: "  kubectl mysqlbench export pk-lookup-57 -o csv > results.csv\n" +
			"  kubectl mysqlbench export pk-lookup-57 -o json --file results.json",
		Args: exactArgs("RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			key := map[string]string{"csv": report.KeyResultsCSV, "json": report.KeyResultsJSON, "markdown": report.KeyReportMD}[o.output]
			if key == "" {
				return fmt.Errorf("unknown output format %q: use -o csv, -o json or -o markdown", o.output)
			}
			run, err := e.getRun(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			data, err := e.resultsData(cmd.Context(), run)
			if err != nil {
				return err
			}
			if key == report.KeyResultsJSON {
				// Refuse a layout this build does not know rather than hand it on unread.
				if _, err := results.Decode([]byte(data[key])); err != nil {
					return fmt.Errorf("benchmarkrun %s: %w", run.Name, err)
				}
			}
			text, ok := data[key]
			if !ok {
				return fmt.Errorf("the results ConfigMap of %s holds no %s", run.Name, key)
			}
			return writeOut(e.Out, o.file, text)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "What to write: csv (results.csv), json (results.json) or markdown (report.md).")
	cmd.Flags().StringVar(&o.file, "file", "", "Write to this file instead of stdout.")
	_ = cmd.MarkFlagRequired("output")
	return cmd
}

// writeOut writes text to path, or to out when path is empty.
func writeOut(out io.Writer, path, text string) error {
	if path == "" {
		_, err := io.WriteString(out, text)
		return err
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
