package exported

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing/fstest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// Limits on what Load reads, so that a wrong path (a home directory, a disk image) fails
// instead of filling memory. A run's files are a few MB: its results ConfigMap is at most 1 MiB.
const (
	maxFileBytes    = 64 << 20
	maxArchiveBytes = 256 << 20
	maxDepth        = 8
)

// Load reads the files at paths (files, directories, bundles and their archives, as the package
// says) and joins what belongs to each run. A file named in paths that holds nothing of a run is
// an error that says what it holds; in a directory such a file is passed over (Set.Skipped), and
// files that are not .json, .yaml or .yml (charts, CSV, Markdown) are not read. Files the package
// reads are refused when broken (a results.json of another formatVersion, a BenchmarkRun without
// status, an incomplete bundle), never passed over. Nothing is written.
func Load(paths []string) (*Set, error) {
	if len(paths) == 0 {
		return nil, errors.New("no files to read")
	}
	l := &loader{set: &Set{paths: paths}}
	for i, p := range paths {
		if err := l.path(p, i); err != nil {
			return nil, err
		}
	}
	if err := l.join(); err != nil {
		return nil, err
	}
	if len(l.set.Runs) == 0 {
		return nil, fmt.Errorf("%s hold no run: give a results.json, a BenchmarkRun with its status "+
			"(kubectl get benchmarkrun RUN -o yaml) or a bundle (kubectl mysqlbench export RUN --bundle DIR)%s",
			l.set.where(), l.set.skippedNote())
	}
	return l.set, nil
}

// item is what one file (or one bundle) says of a run: its object, its results, or both.
type item struct {
	run    *v1.BenchmarkRun
	data   map[string]string
	doc    *results.Doc
	bundle *Manifest
	logs   []StepLog
	from   string
	arg    int
}

type loader struct {
	set   *Set
	items []item
	arg   int
}

func (l *loader) path(p string, arg int) error {
	l.arg = arg
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--from %s: no such file or directory: check the path", p)
	}
	if err != nil {
		return fmt.Errorf("--from %s: %w", p, err)
	}
	if st.IsDir() {
		return l.dir(os.DirFS(p), ".", p, 0)
	}
	data, err := readFile(os.DirFS(filepath.Dir(p)), filepath.Base(p), p)
	if err != nil {
		return err
	}
	if isArchive(p) {
		return l.archive(data, p, 0)
	}
	return l.file(data, p, true)
}

// isArchive says whether name is a gzipped tar, as export --bundle writes them.
func isArchive(name string) bool {
	return strings.HasSuffix(name, ".tar.gz") || strings.HasSuffix(name, ".tgz")
}

func readFile(fsys fs.FS, name, display string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", display, err)
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", display, err)
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("read %s: larger than %d MiB, which no exported run is: check the path", display, maxFileBytes>>20)
	}
	return data, nil
}

// dir reads a directory of fsys (display is how messages name it): a bundle when it has a
// manifest, else each of its files and subdirectories.
func (l *loader) dir(fsys fs.FS, dir, display string, depth int) error {
	if _, err := fs.Stat(fsys, path.Join(dir, FileManifest)); err == nil {
		return l.bundle(fsys, dir, display)
	}
	if depth > maxDepth {
		l.skip(display, fmt.Sprintf("more than %d directories deep", maxDepth))
		return nil
	}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return fmt.Errorf("read directory %s: %w", display, err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p, shown := path.Join(dir, name), within(display, name)
		regular := e.Type().IsRegular()
		if e.Type()&fs.ModeSymlink != 0 {
			// A link to a file is read as the file; a link to a directory is not followed, as
			// it may lead in a circle.
			if st, err := fs.Stat(fsys, p); err == nil && st.IsDir() {
				l.skip(shown, "a symbolic link to a directory (not followed: give its target with --from)")
			} else {
				regular = err == nil && st.Mode().IsRegular()
			}
		}
		switch {
		case e.IsDir():
			if err := l.dir(fsys, p, shown, depth+1); err != nil {
				return err
			}
		case !regular:
			// Devices, sockets, broken links.
		case isArchive(name):
			data, err := readFile(fsys, p, shown)
			if err != nil {
				return err
			}
			if err := l.archive(data, shown, depth+1); err != nil {
				return err
			}
		case hasExt(name, ".json", ".yaml", ".yml"):
			data, err := readFile(fsys, p, shown)
			if err != nil {
				return err
			}
			if err := l.file(data, shown, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// within is how messages name file name in the directory display: "dir/name", or in an
// archive's top directory "bundle.tar.gz:name".
func within(display, name string) string {
	if strings.HasSuffix(display, ":") {
		return display + name
	}
	return filepath.Join(display, name)
}

func hasExt(name string, exts ...string) bool {
	for _, e := range exts {
		if strings.HasSuffix(strings.ToLower(name), e) {
			return true
		}
	}
	return false
}

// archive reads a gzipped tar as a directory.
func (l *loader) archive(data []byte, display string, depth int) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%s is not a gzipped tar: give a bundle as export --bundle wrote it, or its directory: %w", display, err)
	}
	// An in-memory directory tree of the archive's regular files (fstest.MapFS is a plain map
	// that implements fs.FS).
	files := fstest.MapFS{}
	tr := tar.NewReader(io.LimitReader(zr, maxArchiveBytes+1))
	total := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read %s: %w: the archive is damaged or cut short", display, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if !fs.ValidPath(name) {
			return fmt.Errorf("%s has an entry %q outside the archive: it is no bundle of kubectl mysqlbench", display, h.Name)
		}
		if h.Size > maxFileBytes {
			return fmt.Errorf("%s: %s is larger than %d MiB, which no exported run is", display, name, maxFileBytes>>20)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return fmt.Errorf("read %s in %s: %w: the archive is damaged or cut short", name, display, err)
		}
		if total += len(body); total > maxArchiveBytes {
			return fmt.Errorf("%s holds more than %d MiB, which no bundle does: check the path", display, maxArchiveBytes>>20)
		}
		files[name] = &fstest.MapFile{Data: body, Mode: 0o644}
	}
	return l.dir(files, ".", display+":", depth)
}

// file reads one file's documents. strict: the file was named on the command line, and holding
// nothing of a run is an error rather than a reason to pass it over.
func (l *loader) file(data []byte, display string, strict bool) error {
	docs, err := documents(data)
	if err != nil {
		if strict {
			return fmt.Errorf("%s: %w", display, err)
		}
		l.skip(display, err.Error())
		return nil
	}
	var unknown []string
	found := false
	for _, d := range docs {
		what, err := l.document(d, data, len(docs) == 1, display)
		var pass *passOver
		if errors.As(err, &pass) && !strict {
			l.skip(display, pass.why)
			continue
		}
		if err != nil {
			return err
		}
		if what != "" {
			unknown = append(unknown, what)
		} else {
			found = true
		}
	}
	if found || len(unknown) == 0 {
		return nil
	}
	if strict {
		return fmt.Errorf("%s holds %s, not a BenchmarkRun, results.json or bundle: give a results.json (kubectl "+
			"mysqlbench export RUN -o json), a BenchmarkRun with its status (kubectl get benchmarkrun RUN -o yaml) or a "+
			"bundle (kubectl mysqlbench export RUN --bundle DIR)", display, strings.Join(unknown, ", "))
	}
	l.skip(display, strings.Join(unknown, ", "))
	return nil
}

func (l *loader) skip(display, why string) {
	l.set.Skipped = append(l.set.Skipped, display+": "+why)
}

// documents splits a file into its JSON documents: one JSON value, or a stream of YAML
// documents (converted to JSON).
func documents(data []byte) ([]json.RawMessage, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("the file is empty")
	}
	if trimmed[0] == '{' {
		if !json.Valid(trimmed) {
			var v any
			err := json.Unmarshal(trimmed, &v)
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
		return []json.RawMessage{trimmed}, nil
	}
	var out []json.RawMessage
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not valid YAML: %w", err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("not valid YAML: %w", err)
		}
		if s := string(bytes.TrimSpace(js)); s == "null" || s == "" {
			continue
		}
		if js[0] != '{' {
			return nil, errors.New("not a Kubernetes object or results.json (a YAML document that is no mapping)")
		}
		out = append(out, js)
	}
	if len(out) == 0 {
		return nil, errors.New("the file holds no document")
	}
	return out, nil
}

// head is what a document says it is.
type head struct {
	APIVersion    string            `json:"apiVersion"`
	Kind          string            `json:"kind"`
	FormatVersion *int              `json:"formatVersion"`
	Items         []json.RawMessage `json:"items"`
	Metadata      struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// document reads one document into the loader. It returns what the document is when it is
// nothing of a run ("a Deployment (apps/v1)"), "" when it was taken; an error for a document of
// a kind this package reads that cannot be read. whole is the file's bytes, kept as results.json
// when the file is exactly one results.json.
func (l *loader) document(d json.RawMessage, whole []byte, only bool, display string) (string, error) {
	var h head
	if err := json.Unmarshal(d, &h); err != nil {
		return "", fmt.Errorf("%s: %w", display, err)
	}
	if h.Kind == "" {
		if h.FormatVersion == nil {
			return "a JSON object without kind or formatVersion", nil
		}
		text := string(d)
		if only && bytes.Equal(bytes.TrimSpace(whole), bytes.TrimSpace(d)) {
			text = string(whole) // as exported, byte for byte
		}
		data := map[string]string{report.KeyResultsJSON: text}
		doc, err := resultsOf(data, display)
		if err != nil {
			return "", err
		}
		l.items = append(l.items, item{data: data, doc: doc, from: display, arg: l.arg})
		return "", nil
	}
	gv := v1.GroupVersion.String()
	switch {
	case strings.HasSuffix(h.Kind, "List") && h.Items != nil:
		var unknown []string
		for i, it := range h.Items {
			what, err := l.document(it, nil, false, fmt.Sprintf("%s (item %d)", display, i))
			var pass *passOver
			if errors.As(err, &pass) {
				// One item of a list (a run just created, without status yet) spoils not the others.
				l.skip(pass.display, pass.why)
				continue
			}
			if err != nil {
				return "", err
			}
			if what != "" {
				unknown = append(unknown, what)
			}
		}
		if len(unknown) == len(h.Items) && len(h.Items) > 0 {
			return "a list of " + strings.Join(dedupe(unknown), ", "), nil
		}
		return "", nil // an empty list (a run without Events) holds nothing wrong
	case h.Kind == "BenchmarkRun" || h.Kind == "BenchmarkSchedule":
		if h.APIVersion != gv {
			return "", fmt.Errorf("%s: %s %s has apiVersion %q; this plugin reads %s: use the plugin of the operator that wrote it",
				display, h.Kind, h.Metadata.Name, h.APIVersion, gv)
		}
		if h.Kind == "BenchmarkSchedule" {
			sc := &v1.BenchmarkSchedule{}
			if err := json.Unmarshal(d, sc); err != nil {
				return "", fmt.Errorf("%s: BenchmarkSchedule %s: %w", display, h.Metadata.Name, err)
			}
			l.set.Schedules = append(l.set.Schedules, sc)
			return "", nil
		}
		run, err := decodeRun(d, display)
		if err != nil {
			return "", err
		}
		l.items = append(l.items, item{run: run, from: display, arg: l.arg})
		return "", nil
	case h.Kind == "ConfigMap" && h.APIVersion == "v1":
		cm := &corev1.ConfigMap{}
		if err := json.Unmarshal(d, cm); err != nil {
			return "", fmt.Errorf("%s: ConfigMap %s: %w", display, h.Metadata.Name, err)
		}
		if _, ok := cm.Data[report.KeyResultsJSON]; !ok {
			return fmt.Sprintf("a ConfigMap (%s) without %s", cm.Name, report.KeyResultsJSON), nil
		}
		doc, err := resultsOf(cm.Data, fmt.Sprintf("%s (ConfigMap %s)", display, cm.Name))
		if err != nil {
			return "", err
		}
		l.items = append(l.items, item{data: cm.Data, doc: doc, from: display, arg: l.arg})
		return "", nil
	case h.Kind == "Event" && h.APIVersion == "v1":
		ev := corev1.Event{}
		if err := json.Unmarshal(d, &ev); err != nil {
			return "", fmt.Errorf("%s: Event %s: %w", display, h.Metadata.Name, err)
		}
		l.set.Events = append(l.set.Events, ev)
		return "", nil
	}
	what := "a " + h.Kind
	if h.APIVersion != "" {
		what += " (" + h.APIVersion + ")"
	}
	return what, nil
}

// decodeRun reads a BenchmarkRun as the API server returned it, with its status.
func decodeRun(d json.RawMessage, display string) (*v1.BenchmarkRun, error) {
	run := &v1.BenchmarkRun{}
	if err := json.Unmarshal(d, run); err != nil {
		return nil, fmt.Errorf("%s: BenchmarkRun: %w", display, err)
	}
	if run.Name == "" {
		return nil, fmt.Errorf("%s: a BenchmarkRun without metadata.name", display)
	}
	s := run.Status
	if s.Phase == "" && s.StartTime == nil && len(s.Targets) == 0 && len(s.Conditions) == 0 {
		why := fmt.Sprintf("BenchmarkRun %s has no status: it is a manifest, not the run as the operator left it; "+
			"export the run itself: kubectl get benchmarkrun %s -o yaml (status included), or kubectl mysqlbench "+
			"export %s --bundle DIR", run.Name, run.Name, run.Name)
		return nil, &passOver{display: display, why: why}
	}
	return run, nil
}

// passOver is a document of a kind this package reads that holds nothing to read (a run's
// manifest): an error for a file named on the command line, a file passed over in a directory.
type passOver struct{ display, why string }

func (p *passOver) Error() string { return p.display + ": " + p.why }

func dedupe(xs []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func timesEqual(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(b)
}

// join makes the runs of the items: one run per BenchmarkRun object (the same object read twice,
// same UID and resourceVersion, is one), its results attached when a results.json names it and
// its start time; results that match no object, or an object that has other results, are runs
// of their own, so that nothing read is dropped or given to the wrong run.
func (l *loader) join() error {
	runs := &l.set.Runs
	first := map[*Run]int{} // the index of a run's first item: the runs keep the order read
	add := func(r *Run, i int, it item) {
		r.From = append(r.From, it.from)
		if !slices.Contains(r.Args, it.arg) {
			r.Args = append(r.Args, it.arg)
		}
		if f, ok := first[r]; !ok || i < f {
			first[r] = i
		}
	}
	for i, it := range l.items {
		if it.run == nil {
			continue
		}
		if it.doc != nil && (it.doc.Run.Name != it.run.Name || it.doc.Run.Namespace != it.run.Namespace) {
			return fmt.Errorf("%s is inconsistent: its run.yaml is %s/%s and its results.json %s/%s",
				it.from, it.run.Namespace, it.run.Name, it.doc.Run.Namespace, it.doc.Run.Name)
		}
		r := sameObject(*runs, it.run)
		if r == nil || !mergeable(r, it) {
			r = &Run{Namespace: it.run.Namespace, Name: it.run.Name, Object: it.run}
			*runs = append(*runs, r)
		}
		if it.data != nil && r.Results == nil {
			r.Results, r.Doc = it.data, it.doc
		}
		if r.Bundle == nil {
			r.Bundle = it.bundle
		}
		if len(r.Logs) == 0 {
			r.Logs = it.logs
		}
		add(r, i, it)
	}
	for i, it := range l.items {
		if it.run != nil {
			continue
		}
		ns, name := it.doc.Run.Namespace, it.doc.Run.Name
		var same, free []*Run
		for _, r := range *runs {
			if r.Namespace != ns || r.Name != name || !sameStart(r, it.doc) {
				continue
			}
			switch {
			case r.Results == nil:
				free = append(free, r)
			case r.Results[report.KeyResultsJSON] == it.data[report.KeyResultsJSON]:
				same = append(same, r)
			}
		}
		var r *Run
		switch {
		case len(same) > 0:
			r = same[0]
			for k, v := range it.data {
				if _, ok := r.Results[k]; !ok {
					r.Results[k] = v
				}
			}
		case len(free) == 1:
			r = free[0]
			r.Results, r.Doc = it.data, it.doc
		default:
			r = &Run{Namespace: ns, Name: name, Results: it.data, Doc: it.doc}
			*runs = append(*runs, r)
		}
		add(r, i, it)
	}
	slices.SortStableFunc(*runs, func(a, b *Run) int { return first[a] - first[b] })
	return nil
}

// sameObject is the run whose object is run read again: the same UID and resourceVersion (or,
// for objects without a UID, equal).
func sameObject(runs []*Run, run *v1.BenchmarkRun) *Run {
	for _, r := range runs {
		o := r.Object
		if o == nil || o.Namespace != run.Namespace || o.Name != run.Name {
			continue
		}
		if (o.UID != "" && o.UID == run.UID && o.ResourceVersion == run.ResourceVersion) ||
			(o.UID == "" && reflect.DeepEqual(o, run)) {
			return r
		}
	}
	return nil
}

// mergeable says whether item it may join run r: it brings no results, or the same results.json.
func mergeable(r *Run, it item) bool {
	return it.data == nil || r.Results == nil || r.Results[report.KeyResultsJSON] == it.data[report.KeyResultsJSON]
}

// sameStart says whether doc can be the results of r: the same start time (a run deleted and
// created again under its name starts later).
func sameStart(r *Run, doc *results.Doc) bool {
	if r.Object == nil {
		return r.Doc != nil && timesEqual(r.Doc.Run.StartTime, doc.Run.StartTime)
	}
	return timesEqual(r.Object.Status.StartTime, doc.Run.StartTime)
}
