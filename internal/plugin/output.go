package plugin

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// outputFlags is kubectl's -o of get and describe: json, yaml, name and the templates (jsonpath,
// go-template, ...) through cli-runtime's printers, so they print what kubectl get benchmarkrun
// would; no -o (and on get, -o wide) is the command's own text.
type outputFlags struct {
	print *genericclioptions.PrintFlags
	wide  bool // whether the command has a wide text form
}

func addOutputFlags(cmd *cobra.Command, wide bool) *outputFlags {
	o := &outputFlags{print: genericclioptions.NewPrintFlags("").WithTypeSetter(Scheme), wide: wide}
	o.print.AddFlags(cmd)
	formats := o.print.AllowedFormats()
	if wide {
		formats = append([]string{"wide"}, formats...)
	}
	cmd.Flags().Lookup("output").Usage = "Output format: " + strings.Join(formats, ", ") +
		". json and yaml print the BenchmarkRun objects as the API server returns them; name prints benchmarkrun.mysqlbench.io/NAME."
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	return o
}

// isWide says whether -o wide asks for the text with its extra columns.
func (o *outputFlags) isWide() bool { return o.wide && *o.print.OutputFormat == "wide" }

// structured says whether a printer of cli-runtime prints, not the command's own text.
func (o *outputFlags) structured() bool {
	f := *o.print.OutputFormat
	templated := o.print.TemplatePrinterFlags.TemplateArgument != nil && *o.print.TemplatePrinterFlags.TemplateArgument != ""
	return (f != "" && !o.isWide()) || templated
}

// validate refuses an -o no printer handles, before anything is read.
func (o *outputFlags) validate() error {
	if !o.structured() {
		return nil
	}
	_, err := o.printer()
	return err
}

func (o *outputFlags) printer() (printers.ResourcePrinter, error) {
	p, err := o.print.ToPrinter()
	if err != nil && genericclioptions.IsNoCompatiblePrinterError(err) && o.wide {
		return nil, fmt.Errorf("%w, wide", err)
	}
	return p, err
}

// printRuns writes runs with the printer of -o: one run as itself, several (or none, as from a
// list) as a BenchmarkRunList.
func (o *outputFlags) printRuns(w io.Writer, runs []v1.BenchmarkRun, list bool) error {
	p, err := o.printer()
	if err != nil {
		return err
	}
	gvk := v1.GroupVersion.WithKind("BenchmarkRun")
	items := make([]v1.BenchmarkRun, len(runs))
	for i := range runs {
		items[i] = *runs[i].DeepCopy()
		items[i].SetGroupVersionKind(gvk)
	}
	if *o.print.OutputFormat == "name" {
		// The name printer takes no typed lists: a line per run, as kubectl prints them.
		for i := range items {
			if err := p.PrintObj(&items[i], w); err != nil {
				return err
			}
		}
		return nil
	}
	var obj runtime.Object
	if !list && len(items) == 1 {
		obj = &items[0]
	} else {
		obj = &v1.BenchmarkRunList{Items: items}
	}
	return p.PrintObj(obj, w)
}
