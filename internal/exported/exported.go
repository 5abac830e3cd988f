// Package exported reads BenchmarkRuns from the files they were exported to, and writes a run's
// bundle: a run's status and its results ConfigMap are deleted with the run, and these files are
// what outlives it. The kubectl plugin reads them with --from and writes bundles with export
// --bundle.
//
// The files it reads: a results.json (the results ConfigMap's, as `kubectl mysqlbench export -o
// json` writes it), a BenchmarkRun with its status as `kubectl get benchmarkrun -o yaml|json`
// writes it (one, a List, or a stream of YAML documents), the results ConfigMap itself, a
// BenchmarkSchedule (whose regression policy and confirmation concern its runs), the run's Events,
// a bundle (a directory with bundle.yaml, or its .tar.gz), and directories of any of these. What
// belongs to one run is joined: its object, its results, its schedule and Events.
package exported

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// Run is one BenchmarkRun as the files hold it.
type Run struct {
	Namespace, Name string
	// Object is the run with its spec and status; nil when the files hold only its results.
	Object *v1.BenchmarkRun
	// Results is the run's results ConfigMap data: every key from a bundle or the ConfigMap's
	// own YAML, results.json alone from a results.json file; nil when the files hold none.
	Results map[string]string
	// Doc is Results' results.json, decoded (its formatVersion checked); nil without results.
	Doc *results.Doc
	// Bundle is the manifest of the bundle the run was read from, nil when it was not.
	Bundle *Manifest
	// Logs are the step attempts' logs a bundle holds, oldest attempt of a step first.
	Logs []StepLog
	// From are the files the run was read from, for messages.
	From []string
	// Args are the indexes, in Load's paths, of the paths the run was read from.
	Args []int
}

// String names the run and where it came from, for messages: "bench/pk (run.yaml, results.json;
// started 2026-11-02T10:00:00Z, Succeeded)".
func (r *Run) String() string {
	var facts []string
	if t := r.startTime(); t != nil {
		facts = append(facts, "started "+t.UTC().Format(time.RFC3339))
	}
	if p := r.phase(); p != "" {
		facts = append(facts, p)
	}
	if r.Object == nil {
		facts = append(facts, "results only")
	}
	s := fmt.Sprintf("%s/%s (%s", r.Namespace, r.Name, strings.Join(r.From, ", "))
	if len(facts) > 0 {
		s += "; " + strings.Join(facts, ", ")
	}
	return s + ")"
}

func (r *Run) startTime() *time.Time {
	switch {
	case r.Object != nil && r.Object.Status.StartTime != nil:
		return &r.Object.Status.StartTime.Time
	case r.Doc != nil && r.Doc.Run.StartTime != nil:
		return &r.Doc.Run.StartTime.Time
	}
	return nil
}

func (r *Run) phase() string {
	if r.Object != nil {
		return string(r.Object.Status.Phase)
	}
	if r.Doc != nil {
		return r.Doc.Run.Phase
	}
	return ""
}

// Set is what the files hold: the runs, and the schedules and Events that concern them.
type Set struct {
	// Runs in the order the files were read (paths in order, a directory's files by name).
	Runs []*Run
	// Schedules are the BenchmarkSchedules the files hold.
	Schedules []*v1.BenchmarkSchedule
	// Events are the Events the files hold, of any object.
	Events []corev1.Event
	// Skipped are the files of directories that hold no run, schedule or Event of this API, with
	// why they were passed over ("dir/x.yaml: a Deployment").
	Skipped []string
	// paths are what Load was given, for messages.
	paths []string
}

// Find is the run called name, in namespace unless it is empty. It fails, saying what the files
// hold, when none is or when several different runs are (two exports of runs of the same name).
func (s *Set) Find(namespace, name string) (*Run, error) {
	var found, elsewhere []*Run
	for _, r := range s.Runs {
		switch {
		case r.Name != name:
		case namespace == "" || r.Namespace == namespace:
			found = append(found, r)
		default:
			elsewhere = append(elsewhere, r)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return nil, fmt.Errorf("%s hold %d different runs named %q: %s; pass only the files of the one you mean "+
			"(--from FILE)%s", s.where(), len(found), name, list(found), namespaceHint(found, namespace))
	case len(elsewhere) > 0:
		return nil, fmt.Errorf("%s hold no run %q in namespace %s, but %s: drop -n, or give its namespace",
			s.where(), name, namespace, list(elsewhere))
	}
	return nil, fmt.Errorf("%s hold no run named %q; %s%s", s.where(), name, s.holding(), s.skippedNote())
}

// Only is the one run the files hold; it fails when they hold none or several.
func (s *Set) Only() (*Run, error) {
	switch len(s.Runs) {
	case 1:
		return s.Runs[0], nil
	case 0:
		return nil, fmt.Errorf("%s hold no run%s", s.where(), s.skippedNote())
	}
	return nil, fmt.Errorf("%s hold %d runs: name the one you mean (%s)", s.where(), len(s.Runs), list(s.Runs))
}

// FromPath are the runs read from the i-th path given to Load.
func (s *Set) FromPath(i int) []*Run {
	var out []*Run
	for _, r := range s.Runs {
		if slices.Contains(r.Args, i) {
			out = append(out, r)
		}
	}
	return out
}

// Paths are the paths given to Load.
func (s *Set) Paths() []string { return slices.Clone(s.paths) }

// Schedule is the schedule called name in namespace whose UID is uid ("" for any), nil when the
// files do not hold it.
func (s *Set) Schedule(namespace, name string, uid types.UID) *v1.BenchmarkSchedule {
	for _, sc := range s.Schedules {
		if sc.Namespace == namespace && sc.Name == name && (uid == "" || sc.UID == uid) {
			return sc
		}
	}
	return nil
}

// EventsOf are the files' Events about the object with uid, each once (an Event read from two
// files, a bundle's and kubectl's, is one: the API server names Events uniquely per namespace).
func (s *Set) EventsOf(uid types.UID) []corev1.Event {
	var out []corev1.Event
	seen := map[types.NamespacedName]bool{}
	for _, e := range s.Events {
		key := types.NamespacedName{Namespace: e.Namespace, Name: e.Name}
		if uid == "" || e.InvolvedObject.UID != uid || (e.Name != "" && seen[key]) {
			continue
		}
		seen[key] = true
		out = append(out, e)
	}
	return out
}

// where is what was read, for messages: "the files of --from a.json, dir".
func (s *Set) where() string {
	return "the files of --from " + strings.Join(s.paths, ", ")
}

// holding lists the runs the files hold.
func (s *Set) holding() string {
	if len(s.Runs) == 0 {
		return "they hold no run"
	}
	return "they hold " + list(s.Runs)
}

// skippedNote lists the files passed over, since the run asked for may be one of them.
func (s *Set) skippedNote() string {
	if len(s.Skipped) == 0 {
		return ""
	}
	const most = 5
	shown := s.Skipped[:min(most, len(s.Skipped))]
	more := ""
	if len(s.Skipped) > most {
		more = fmt.Sprintf("; and %d more", len(s.Skipped)-most)
	}
	return "; passed over: " + strings.Join(shown, "; ") + more
}

func list(runs []*Run) string {
	parts := make([]string, 0, len(runs))
	for _, r := range runs {
		parts = append(parts, r.String())
	}
	return strings.Join(parts, ", ")
}

// namespaceHint suggests -n when the runs of one name are in several namespaces.
func namespaceHint(runs []*Run, namespace string) string {
	if namespace != "" {
		return ""
	}
	for _, r := range runs[1:] {
		if r.Namespace != runs[0].Namespace {
			return ", or pick its namespace with -n"
		}
	}
	return ""
}

// ObjectOrResults is the run's object, else a BenchmarkRun made of what its results.json holds
// (FromResults): enough for what reads only the numbers (a comparison, the target names).
func (r *Run) ObjectOrResults() *v1.BenchmarkRun {
	if r.Object != nil {
		return r.Object
	}
	return FromResults(r.Doc)
}

// resultsOf decodes data's results.json; data without one is an error that names from.
func resultsOf(data map[string]string, from string) (*results.Doc, error) {
	text, ok := data[report.KeyResultsJSON]
	if !ok {
		return nil, fmt.Errorf("%s holds no %s", from, report.KeyResultsJSON)
	}
	doc, err := results.Decode([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	return doc, nil
}
