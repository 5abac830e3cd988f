package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/yaml"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// kubectlFormats are kubectl's -o values for data, the same on every command that prints
// something: the objects a command reads (get, describe) or the view it prints as a table
// (compare, server, history), whole or picked by a template. name is added where the output
// is API objects.
var kubectlFormats = []string{"json", "yaml", "jsonpath", "jsonpath-as-json", "jsonpath-file",
	"go-template", "go-template-file", "template", "templatefile", "custom-columns", "custom-columns-file"}

// outputSpec says what a command's -o offers besides kubectlFormats.
type outputSpec struct {
	// objects: the command prints API objects (BenchmarkRuns): -o name and
	// --show-managed-fields apply.
	objects bool
	// own are the command's formats of its own: wide (its text with more columns), csv,
	// markdown, ... Its text, with no -o, is never listed.
	own []string
	// what says what json and yaml print, for the flag's help.
	what string
	// listFlags: get's --sort-by, and its --no-headers for its text too.
	listFlags bool
}

// outputFlags is a command's -o with kubectl's template flags, and on get --no-headers and
// --sort-by; its printers are cli-runtime's (what kubectl get prints), but the flags are
// declared here: cli-runtime's PrintFlags would link its resource builder and kustomize.
type outputFlags struct {
	spec              outputSpec
	format            string
	template          string
	allowMissingKeys  bool
	showManagedFields bool
	noHeaders         bool
	sortBy            string
}

func addOutputFlags(cmd *cobra.Command, spec outputSpec) *outputFlags {
	o := &outputFlags{spec: spec}
	formats := o.formats()
	cmd.Flags().StringVarP(&o.format, "output", "o", "", "Output format: "+strings.Join(formats, ", ")+
		" (kubectl's, e.g. -o jsonpath='{...}' or -o custom-columns=NAME:.path); without -o, the command's text. "+
		"json and yaml print "+spec.what+".")
	cmd.Flags().StringVar(&o.template, "template", "",
		"Template string or path to a template file to use when -o is go-template, go-template-file, jsonpath or jsonpath-file.")
	cmd.Flags().BoolVar(&o.allowMissingKeys, "allow-missing-template-keys", true,
		"If true, ignore any errors in templates when a field or map key is missing in the template.")
	if spec.objects {
		cmd.Flags().BoolVar(&o.showManagedFields, "show-managed-fields", false,
			"If true, keep the managedFields when printing objects in JSON or YAML format.")
	}
	if spec.listFlags {
		cmd.Flags().BoolVar(&o.noHeaders, "no-headers", false, "Print no header line (the text and -o wide, custom-columns).")
	} else {
		cmd.Flags().BoolVar(&o.noHeaders, "no-headers", false, "Print no header line with -o custom-columns.")
	}
	if spec.listFlags {
		cmd.Flags().StringVar(&o.sortBy, "sort-by", "",
			"Sort the list by this JSONPath field of the runs, e.g. '{.metadata.creationTimestamp}' or .status.phase.")
	}
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	return o
}

// formats are the -o values of the command, its own first.
func (o *outputFlags) formats() []string {
	out := slices.Clone(o.spec.own)
	out = append(out, kubectlFormats[:2]...)
	if o.spec.objects {
		out = append(out, "name")
	}
	return append(out, kubectlFormats[2:]...)
}

// name is -o's format without its argument (jsonpath=... is jsonpath).
func (o *outputFlags) name() string {
	f, _, _ := strings.Cut(o.format, "=")
	return f
}

// is says whether -o is the command's format f.
func (o *outputFlags) is(f string) bool { return o.name() == f && slices.Contains(o.spec.own, f) }

// isWide says whether -o wide asks for the text with its extra columns.
func (o *outputFlags) isWide() bool { return o.is("wide") }

// structured says whether kubectl's printers print (json, yaml, name, templates, columns),
// not the command's own text or formats.
func (o *outputFlags) structured() bool {
	f := o.name()
	return (f != "" || o.template != "") && !slices.Contains(o.spec.own, f)
}

// validate refuses an -o the command does not print, and a template that does not parse,
// before anything is read.
func (o *outputFlags) validate() error {
	if !o.structured() {
		return nil
	}
	if f := o.name(); f != "" && !slices.Contains(o.formats(), f) {
		return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: %s",
			o.format, strings.Join(o.formats(), ", "))
	}
	if o.sortBy != "" {
		if _, err := parseJSONPath(o.sortBy); err != nil {
			return fmt.Errorf("--sort-by %q: %w", o.sortBy, err)
		}
	}
	_, err := o.dataPrinter()
	return err
}

// templateArg is the template of -o FORMAT=TEMPLATE or --template, read from its file for the
// -file formats.
func (o *outputFlags) templateArg() (string, error) {
	f, arg, found := strings.Cut(o.format, "=")
	if !found {
		arg = o.template
	}
	if arg == "" {
		return "", fmt.Errorf("-o %s needs a template: -o %s=TEMPLATE or --template TEMPLATE", f, f)
	}
	if strings.HasSuffix(f, "-file") || f == "templatefile" {
		b, err := os.ReadFile(arg)
		if err != nil {
			return "", fmt.Errorf("-o %s: read the template: %w", f, err)
		}
		return string(b), nil
	}
	return arg, nil
}

// dataPrinter prints one value (an object or a view) in a data format.
func (o *outputFlags) dataPrinter() (printers.ResourcePrinter, error) {
	f := o.name()
	if f == "" {
		f = "go-template" // --template alone is a go template, as in kubectl
	}
	switch f {
	case "json":
		return printers.ResourcePrinterFunc(func(obj runtime.Object, w io.Writer) error {
			return writeIndentedJSON(w, obj)
		}), nil
	case "yaml":
		return printers.ResourcePrinterFunc(func(obj runtime.Object, w io.Writer) error {
			b, err := yaml.Marshal(obj)
			if err != nil {
				return err
			}
			_, err = w.Write(b)
			return err
		}), nil
	case "name":
		return &printers.NamePrinter{}, nil
	case "custom-columns", "custom-columns-file":
		spec, err := o.templateArg()
		if err != nil {
			return nil, err
		}
		return parseColumns(spec, o.noHeaders)
	case "jsonpath", "jsonpath-file", "jsonpath-as-json":
		tmpl, err := o.templateArg()
		if err != nil {
			return nil, err
		}
		p, err := printers.NewJSONPathPrinter(tmpl)
		if err != nil {
			return nil, fmt.Errorf("-o %s: %w", f, err)
		}
		p.AllowMissingKeys(o.allowMissingKeys)
		p.EnableJSONOutput(f == "jsonpath-as-json")
		return p, nil
	case "go-template", "go-template-file", "template", "templatefile":
		tmpl, err := o.templateArg()
		if err != nil {
			return nil, err
		}
		p, err := printers.NewGoTemplatePrinter([]byte(tmpl))
		if err != nil {
			return nil, fmt.Errorf("-o %s: %w", f, err)
		}
		p.AllowMissingKeys(o.allowMissingKeys)
		return p, nil
	}
	return nil, fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: %s",
		o.format, strings.Join(o.formats(), ", "))
}

func writeIndentedJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "    ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := buf.WriteTo(w)
	return err
}

// printRuns writes runs with the printer of -o: one run as itself, several (or none, as from a
// list) as a BenchmarkRunList.
func (o *outputFlags) printRuns(w io.Writer, runs []v1.BenchmarkRun, list bool) error {
	p, err := o.dataPrinter()
	if err != nil {
		return err
	}
	cols, isColumns := p.(*columnsPrinter)
	if !o.showManagedFields {
		p = &printers.OmitManagedFieldsPrinter{Delegate: p}
	}
	gvk := v1.GroupVersion.WithKind("BenchmarkRun")
	items := make([]v1.BenchmarkRun, len(runs))
	for i := range runs {
		items[i] = *runs[i].DeepCopy()
		items[i].SetGroupVersionKind(gvk)
	}
	if o.name() == "name" {
		// The name printer takes no typed lists: a line per run, as kubectl prints them.
		for i := range items {
			if err := p.PrintObj(&items[i], w); err != nil {
				return err
			}
		}
		return nil
	}
	if isColumns {
		rows := make([]any, len(items))
		for i := range items {
			items[i].ManagedFields = nil
			rows[i] = &items[i]
		}
		return cols.printRows(w, rows)
	}
	if !list && len(items) == 1 {
		return p.PrintObj(&items[0], w)
	}
	l := &v1.BenchmarkRunList{Items: items}
	l.SetGroupVersionKind(v1.GroupVersion.WithKind("BenchmarkRunList"))
	return p.PrintObj(l, w)
}

// printView writes what a command prints as a table (a comparison, server counters, a
// history) in a data format: json and yaml the whole view, templates applied to it, and
// custom-columns one line per row, rows being the view's table rows.
func (o *outputFlags) printView(w io.Writer, view any, rows []any) error {
	p, err := o.dataPrinter()
	if err != nil {
		return err
	}
	if cols, ok := p.(*columnsPrinter); ok {
		return cols.printRows(w, rows)
	}
	return p.PrintObj(viewObject{view}, w)
}

// viewObject lets kubectl's printers print a value that is no API object: they only marshal it.
type viewObject struct{ v any }

func (viewObject) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }
func (o viewObject) DeepCopyObject() runtime.Object { return o }
func (o viewObject) MarshalJSON() ([]byte, error)   { return json.Marshal(o.v) }

// columnsPrinter is kubectl's -o custom-columns=HEADER:JSONPATH,...: a column per field, a
// line per row (run, cell, night, ...).
type columnsPrinter struct {
	headers   []string
	paths     []*jsonpath.JSONPath
	noHeaders bool
}

// parseColumns reads a custom-columns spec: HEADER:PATH pairs separated by commas, or (from a
// file) a line of headers and a line of paths.
func parseColumns(spec string, noHeaders bool) (*columnsPrinter, error) {
	c := &columnsPrinter{noHeaders: noHeaders}
	var pairs [][2]string
	if spec = strings.TrimSpace(spec); strings.Contains(spec, "\n") {
		all := strings.Split(spec, "\n")
		if len(all) != 2 {
			return nil, fmt.Errorf("custom-columns file: want a line of headers and a line of paths, got %d lines", len(all))
		}
		hs, ps := strings.Fields(all[0]), strings.Fields(all[1])
		if len(hs) != len(ps) {
			return nil, fmt.Errorf("custom-columns file: %d headers and %d paths", len(hs), len(ps))
		}
		for i := range hs {
			pairs = append(pairs, [2]string{hs[i], ps[i]})
		}
	} else {
		for _, col := range strings.Split(spec, ",") {
			h, p, ok := strings.Cut(col, ":")
			if !ok || h == "" || p == "" {
				return nil, fmt.Errorf("custom-columns %q: each column is HEADER:JSONPATH, e.g. NAME:.metadata.name", col)
			}
			pairs = append(pairs, [2]string{h, p})
		}
	}
	for _, hp := range pairs {
		jp, err := parseJSONPath(hp[1])
		if err != nil {
			return nil, fmt.Errorf("custom-columns %s:%s: %w", hp[0], hp[1], err)
		}
		jp.AllowMissingKeys(true)
		c.headers = append(c.headers, hp[0])
		c.paths = append(c.paths, jp)
	}
	return c, nil
}

// parseJSONPath reads a field path with or without kubectl's braces: .status.phase or
// {.status.phase}.
func parseJSONPath(path string) (*jsonpath.JSONPath, error) {
	if !strings.HasPrefix(path, "{") {
		path = "{" + path + "}"
	}
	jp := jsonpath.New("column")
	if err := jp.Parse(path); err != nil {
		return nil, err
	}
	return jp, nil
}

func (c *columnsPrinter) PrintObj(obj runtime.Object, w io.Writer) error {
	return c.printRows(w, []any{obj})
}

func (c *columnsPrinter) printRows(w io.Writer, rows []any) error {
	tw := printers.GetNewTabWriter(w)
	if !c.noHeaders {
		_, _ = fmt.Fprintln(tw, strings.Join(c.headers, "\t"))
	}
	for _, r := range rows {
		data, err := asJSONData(r)
		if err != nil {
			return err
		}
		cells := make([]string, len(c.paths))
		for i, jp := range c.paths {
			cells[i] = pathText(jp, data)
		}
		_, _ = fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// pathText is what a path finds in data, as kubectl's custom columns show it: values joined by
// commas, <none> for nothing.
func pathText(jp *jsonpath.JSONPath, data any) string {
	results, err := jp.FindResults(data)
	if err != nil {
		return "<none>"
	}
	var vals []string
	for _, set := range results {
		for _, v := range set {
			if !v.IsValid() || (v.Kind() == reflect.Interface && v.IsNil()) {
				continue
			}
			vals = append(vals, jsonText(v.Interface()))
		}
	}
	if len(vals) == 0 {
		return "<none>"
	}
	return strings.Join(vals, ",")
}

func jsonText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// asJSONData is v as JSON data (maps, slices, strings, float64s), as the paths read it.
func asJSONData(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// sortByPath sorts rows by the value a path finds in each: numbers as numbers, the rest as
// text, rows without it first (kubectl's --sort-by). The sort is stable.
func sortByPath[T any](rows []T, path string) error {
	jp, err := parseJSONPath(path)
	if err != nil {
		return fmt.Errorf("--sort-by %q: %w", path, err)
	}
	jp.AllowMissingKeys(true)
	type key struct {
		num   float64
		isNum bool
		text  string
	}
	keys := make([]key, len(rows))
	for i := range rows {
		data, err := asJSONData(rows[i])
		if err != nil {
			return err
		}
		results, err := jp.FindResults(data)
		if err != nil || len(results) == 0 || len(results[0]) == 0 {
			continue
		}
		switch x := results[0][0].Interface().(type) {
		case float64:
			keys[i] = key{num: x, isNum: true}
		default:
			keys[i] = key{text: jsonText(x)}
		}
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ka, kb := keys[a], keys[b]
		if ka.isNum && kb.isNum {
			switch {
			case ka.num < kb.num:
				return -1
			case ka.num > kb.num:
				return 1
			}
			return 0
		}
		return strings.Compare(ka.text, kb.text)
	})
	sorted := make([]T, len(rows))
	for i, j := range idx {
		sorted[i] = rows[j]
	}
	copy(rows, sorted)
	return nil
}
