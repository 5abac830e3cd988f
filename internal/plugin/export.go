package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/exported"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

type exportOptions struct {
	output        *outputFlags
	file          string
	bundle        string
	sysbenchImage string
	from          []string
}

func newExportCommand(e *env) *cobra.Command {
	o := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export RUN -o FORMAT | export RUN --bundle PATH",
		Short: "Write a run's results.csv, results.json, report.md, or its bundle",
		Long: "Writes a file of the run's results ConfigMap as the operator stored it: results.csv (one row per target " +
			"and step), results.json (everything, with each step's per-second series; its formatVersion is checked) " +
			"or report.md. The ConfigMap is written when every target is done.\n\n" +
			"With --bundle PATH it writes the run's bundle instead, so that its numbers outlive the run (deleting a run " +
			"deletes its status and its results ConfigMap): a new directory PATH, or for a PATH ending in .tar.gz or " +
			".tgz a gzipped tar of one directory. It holds " + exported.FileManifest + " (what each file is), " +
			exported.FileRun + " (the BenchmarkRun with its spec and status), every file of the results ConfigMap " +
			"(results.json, results.csv, report.md, server.csv, qps-by-threads.svg), " + exported.DirCharts + "/*.png " +
			"(as plot draws them), " + exported.FileNodes + " (the node each target's server ran on), per target " +
			exported.DirTargets + "/NAME/" + exported.FileMyCnf + " and " + exported.DirTargets + "/NAME/" +
			exported.FileCommands + " (the server's configuration and the client command line of every step, built " +
			"from the spec by the operator's own builders), and the run's BenchmarkSchedule (" + exported.FileSchedule +
			") and Events (" + exported.FileEvents + ") as they were. A bundle never replaces an existing file or a " +
			"non-empty directory. Every read-only command reads it back with --from." + fromHelp +
			" export -o csv or markdown from a results.json alone renders the file again from it, with the " +
			"operator's code: the same bytes as the ConfigMap held.",
		Example: "  kubectl mysqlbench export pk-lookup-57 -o csv > results.csv\n" +
			"  kubectl mysqlbench export pk-lookup-57 -o json --file results.json\n" +
			"  kubectl mysqlbench export pk-lookup-57 --bundle pk-lookup-57.tar.gz\n" +
			"  kubectl mysqlbench export --from pk-lookup-57.tar.gz -o markdown\n" +
			"  kubectl mysqlbench export pk-lookup-57 -o jsonpath='{.targets[*].name}'",
		Args: runArgs(&o.from),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.export(cmd.Context(), argOrEmpty(args), o)
		},
	}
	o.output = addOutputFlags(cmd, outputSpec{own: []string{"csv", "markdown"},
		what: "results.json (json: as stored, byte for byte; custom-columns: a line per target and step)"})
	cmd.Flags().StringVar(&o.file, "file", "", "Write to this file instead of stdout.")
	cmd.Flags().StringVar(&o.bundle, "bundle", "", "Write the run's bundle: a new directory, or a .tar.gz (or .tgz) file.")
	cmd.Flags().StringVar(&o.sysbenchImage, "sysbench-image", "",
		"With --bundle: the operator's --sysbench-image, for the command lines of runs whose spec names none (default: the operator's default, "+
			specs.DefaultSysbenchImage+").")
	cmd.Flags().StringArrayVar(&o.from, "from", nil, fromFlag)
	return cmd
}

func (e *env) export(ctx context.Context, name string, o *exportOptions) error {
	format := o.output.name()
	switch {
	case o.bundle != "" && (format != "" || o.file != ""):
		return errors.New("--bundle writes every file of the run: drop -o and --file, or drop --bundle for one file")
	case o.bundle == "" && format == "" && o.output.template == "":
		return errors.New("say what to write: -o csv, -o json or -o markdown for one file, or --bundle PATH for all of them")
	case o.bundle == "" && o.sysbenchImage != "":
		return errors.New("--sysbench-image is for the command lines of a bundle: add --bundle PATH")
	}
	if err := o.output.validate(); err != nil {
		return err
	}
	key := ""
	switch {
	case o.bundle != "":
	case format == "csv":
		key = report.KeyResultsCSV
	case format == "markdown":
		key = report.KeyReportMD
	default:
		// json as stored; the other data formats read results.json.
		key = report.KeyResultsJSON
	}
	src, err := e.source(o.from)
	if err != nil {
		return err
	}
	whole := ""
	if o.bundle != "" {
		whole = "a bundle holds the run's spec and status"
	}
	run, err := src.getRun(ctx, name, whole)
	if err != nil {
		return err
	}
	data, err := src.resultsData(ctx, run)
	if err != nil {
		return err
	}
	if o.bundle != "" {
		return e.writeBundle(ctx, src, run, data, o)
	}
	text, ok := data[key]
	if !ok {
		return fmt.Errorf("the results ConfigMap of %s holds no %s", run.Name, key)
	}
	if key == report.KeyResultsJSON {
		// Refuse a layout this build does not know rather than hand it on unread.
		doc, err := results.Decode([]byte(text))
		if err != nil {
			return fmt.Errorf("benchmarkrun %s: %w", run.Name, err)
		}
		if format != "json" {
			var view any
			if err := json.Unmarshal([]byte(text), &view); err != nil {
				return fmt.Errorf("benchmarkrun %s: %w", run.Name, err)
			}
			var b strings.Builder
			if err := o.output.printView(&b, view, stepRows(doc)); err != nil {
				return err
			}
			text = b.String()
		}
	}
	return writeOut(e.Out, o.file, text)
}

// stepRow is a step of a target: a line of export -o custom-columns.
type stepRow struct {
	Target string `json:"target"`
	results.Step
}

func stepRows(doc *results.Doc) []any {
	var out []any
	for _, t := range doc.Targets {
		for _, s := range t.Steps {
			s.Series, s.Server = nil, nil // per-second and server data: not a column's
			out = append(out, stepRow{Target: t.Name, Step: s})
		}
	}
	return out
}

// writeBundle writes run's bundle to o.bundle: a directory, or a gzipped tar of one.
func (e *env) writeBundle(ctx context.Context, src runSource, run *v1.BenchmarkRun, data map[string]string, o *exportOptions) error {
	b := src.bundleExtras(ctx, run)
	at := e.now()
	b.Run, b.Results, b.ExportedAt, b.ExportedBy, b.SysbenchImage = run, data, at, "kubectl-mysqlbench "+Version, o.sysbenchImage
	files, notes, err := b.Files()
	if err != nil {
		return err
	}
	if top, ok := archiveTop(o.bundle); ok {
		err = exported.WriteTarGz(o.bundle, top, files, at)
	} else {
		err = exported.WriteDir(o.bundle, files)
	}
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(e.ErrOut, "Wrote %s: the bundle of benchmarkrun %s/%s, %d files (what each is: %s)\n",
		o.bundle, run.Namespace, run.Name, len(files), exported.FileManifest)
	for _, n := range notes {
		_, _ = fmt.Fprintf(e.ErrOut, "Note: %s\n", n)
	}
	return nil
}

// archiveTop is the directory a .tar.gz (or .tgz) bundle at path holds its files under: the
// file's name without the extension; false for a path that names a directory.
func archiveTop(path string) (string, bool) {
	base := filepath.Base(path)
	for _, ext := range []string{".tar.gz", ".tgz"} {
		if top, ok := strings.CutSuffix(base, ext); ok {
			if top == "" {
				top = "bundle"
			}
			return top, true
		}
	}
	return "", false
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
