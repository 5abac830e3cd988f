package exported

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"sigs.k8s.io/yaml"
)

// bundle reads the bundle in directory dir of fsys.
func (l *loader) bundle(fsys fs.FS, dir, display string) error {
	at := func(name string) string { return path.Join(dir, name) }
	shown := func(name string) string { return within(display, name) }
	data, err := readFile(fsys, at(FileManifest), shown(FileManifest))
	if err != nil {
		return err
	}
	var m Manifest
	if err := yaml.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("%s: %w", shown(FileManifest), err)
	}
	switch {
	case m.Kind != ManifestKind:
		return fmt.Errorf("%s has kind %q, not %s: it is not a bundle of kubectl mysqlbench", shown(FileManifest), m.Kind, ManifestKind)
	case m.FormatVersion != BundleFormatVersion:
		return fmt.Errorf("%s is a bundle of formatVersion %d; this plugin reads %d: use the plugin that wrote it",
			display, m.FormatVersion, BundleFormatVersion)
	}
	incomplete := func(name string, err error) error {
		return fmt.Errorf("bundle %s is incomplete: %s: %w (its %s lists it)", display, name, err, FileManifest)
	}
	data, err = readFile(fsys, at(FileRun), shown(FileRun))
	if err != nil {
		return incomplete(FileRun, err)
	}
	docs, err := documents(data)
	if err != nil {
		return fmt.Errorf("%s: %w", shown(FileRun), err)
	}
	if len(docs) != 1 {
		return fmt.Errorf("%s holds %d documents, not the one BenchmarkRun of a bundle", shown(FileRun), len(docs))
	}
	run, err := decodeRun(docs[0], shown(FileRun))
	if err != nil {
		return err
	}
	if run.Namespace != m.Run.Namespace || run.Name != m.Run.Name {
		return fmt.Errorf("bundle %s is inconsistent: %s names %s/%s and %s holds %s/%s", display, FileManifest,
			m.Run.Namespace, m.Run.Name, FileRun, run.Namespace, run.Name)
	}
	it := item{run: run, bundle: &m, from: display, arg: l.arg}
	if len(m.Results) > 0 {
		it.data = map[string]string{}
		for _, k := range m.Results {
			text, err := readFile(fsys, at(k), shown(k))
			if err != nil {
				return incomplete(k, err)
			}
			it.data[k] = string(text)
		}
		if it.doc, err = resultsOf(it.data, "bundle "+display); err != nil {
			return err
		}
	}
	if m.Schedule != nil && m.Schedule.Recorded {
		data, err := readFile(fsys, at(FileSchedule), shown(FileSchedule))
		if err != nil {
			return incomplete(FileSchedule, err)
		}
		if err := l.file(data, shown(FileSchedule), true); err != nil {
			return err
		}
	}
	if m.Events {
		data, err := readFile(fsys, at(FileEvents), shown(FileEvents))
		if err != nil {
			return incomplete(FileEvents, err)
		}
		if err := l.file(data, shown(FileEvents), true); err != nil {
			return err
		}
	}
	for _, f := range m.Files {
		lg, ok := stepLogOf(f)
		if !ok {
			continue
		}
		text, err := readFile(fsys, at(f.Name), shown(f.Name))
		if err != nil {
			return incomplete(f.Name, err)
		}
		lg.Text = string(text)
		it.logs = append(it.logs, lg)
	}
	l.items = append(l.items, it)
	return nil
}

// stepLogOf reads a manifest entry of a step's log (DirTargets/T/DirLogs/STEP/NN-JOB.log) back
// into what it was written from, its text aside; false for the other files.
func stepLogOf(f ManifestEntry) (StepLog, bool) {
	parts := strings.Split(f.Name, "/")
	if len(parts) != 5 || parts[0] != DirTargets || parts[2] != DirLogs || !strings.HasSuffix(parts[4], ".log") {
		return StepLog{}, false
	}
	_, job, ok := strings.Cut(strings.TrimSuffix(parts[4], ".log"), "-")
	if !ok {
		return StepLog{}, false
	}
	state := ""
	if _, after, ok := strings.Cut(f.What, "(Job "+job+", "); ok {
		state, _, _ = strings.Cut(after, "), as the cluster")
	}
	return StepLog{Target: parts[1], Step: parts[3], Job: job, State: state}, true
}
