package exported

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/charts"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// The files of a bundle. The results ConfigMap's keys (results.json, results.csv, report.md,
// server.csv, qps-by-threads.svg) are files at its root too, under their own names.
const (
	// FileManifest says what the directory is and holds: Manifest.
	FileManifest = "bundle.yaml"
	// FileRun is the BenchmarkRun with its spec and status.
	FileRun = "run.yaml"
	// FileSchedule is the run's BenchmarkSchedule, when it has one that still existed.
	FileSchedule = "schedule.yaml"
	// FileEvents are the run's Events.
	FileEvents = "events.yaml"
	// FileNodes are the node facts of each target (status.targets[].node and instanceNodes).
	FileNodes = "nodes.yaml"
	// DirCharts holds the charts, as PNG.
	DirCharts = "charts"
	// DirTargets holds per target (DirTargets/NAME/) FileMyCnf and FileCommands, and under
	// DirLogs/STEP/ the logs of the step attempts the cluster still had (NN-JOB.log, oldest
	// first).
	DirTargets   = "targets"
	FileMyCnf    = "my.cnf"
	FileCommands = "commands.txt"
	DirLogs      = "logs"
)

// StepLog is the log of one attempt (one Job) of a step of a target, as the cluster still had it
// at export: the operator deletes a successful step's Job once its result is stored and keeps
// failed ones, so these are mostly failed attempts and steps that were running.
type StepLog struct {
	Target string
	// Step is the operator's step label (s03, r2s03, prepare, ...).
	Step string
	// Job is the attempt's Job, State how it ended ("completed", "failed: ...", "running").
	Job, State string
	Text       string
}

// ManifestKind is the kind of a bundle's manifest; BundleFormatVersion the layout this package
// writes and reads.
const (
	ManifestKind        = "MysqlbenchBundle"
	BundleFormatVersion = 1
)

// Manifest is a bundle's FileManifest.
type Manifest struct {
	// Kind is ManifestKind.
	Kind string `json:"kind"`
	// FormatVersion is the bundle's layout (BundleFormatVersion).
	FormatVersion int `json:"formatVersion"`
	// Run is the run the bundle holds.
	Run ManifestRun `json:"run"`
	// ExportedAt is when the bundle was written, ExportedBy by what ("kubectl-mysqlbench v0.1.0").
	ExportedAt metav1.Time `json:"exportedAt"`
	ExportedBy string      `json:"exportedBy"`
	// Results are the keys of the run's results ConfigMap, each a file at the bundle's root.
	Results []string `json:"results"`
	// Schedule is the run's BenchmarkSchedule, when it has one.
	Schedule *ManifestSchedule `json:"schedule,omitempty"`
	// Events says that FileEvents holds the run's Events as they were at export.
	Events bool `json:"events"`
	// Files says what each file is, in the order written.
	Files []ManifestEntry `json:"files"`
	// Notes say what the bundle lacks, and why.
	Notes []string `json:"notes,omitempty"`
}

// ManifestRun names the run of a bundle.
type ManifestRun struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
}

// ManifestSchedule names a run's schedule: Recorded says that FileSchedule holds it, Gone that it
// did not exist when the run was exported (the run's comparisons then use the operator's
// defaults); neither: it could not be read.
type ManifestSchedule struct {
	Name     string `json:"name"`
	Recorded bool   `json:"recorded"`
	Gone     bool   `json:"gone,omitempty"`
}

// ManifestEntry is one file of a bundle and what it is.
type ManifestEntry struct {
	Name string `json:"name"`
	What string `json:"what"`
}

// Bundle is what a bundle is written from.
type Bundle struct {
	// Run is the run, with its status.
	Run *v1.BenchmarkRun
	// Results are its results ConfigMap's data; results.json is required.
	Results map[string]string
	// Schedule is the run's schedule (ScheduleName), nil when it has none, it is gone
	// (ScheduleGone) or it could not be read.
	Schedule     *v1.BenchmarkSchedule
	ScheduleGone bool
	// Events are the run's Events; EventsRead says that they were read.
	Events     []corev1.Event
	EventsRead bool
	// ExportedAt and ExportedBy go into the manifest.
	ExportedAt time.Time
	ExportedBy string
	// SysbenchImage is the operator's default sysbench image, for the command lines of a run
	// whose spec names none; "" is the operator's own default.
	SysbenchImage string
	// Logs are the step attempts' logs, oldest attempt of a step first; LogsRead says that they
	// were read (the cluster may have had none).
	Logs     []StepLog
	LogsRead bool
}

// File is one file of a bundle: its path inside it (slash-separated) and its bytes.
type File struct {
	Name string
	Data []byte
}

// ScheduleName is the BenchmarkSchedule that concerns run: the one that created it (its
// controller), else the one its labels name (a confirmation run's); "" for none.
func ScheduleName(run *v1.BenchmarkRun) string {
	if o := metav1.GetControllerOf(run); o != nil && o.Kind == "BenchmarkSchedule" && o.APIVersion == v1.GroupVersion.String() {
		return o.Name
	}
	if s := run.Labels[v1.LabelSchedule]; s != "" {
		return s
	}
	return run.Labels[v1.LabelConfirmationOf]
}

// Files are the bundle's files, the manifest first, and the manifest's notes. What cannot be made
// (a chart that cannot be drawn, command lines the builders refuse) is left out and said in the
// notes; it is an error only when the run or its results.json is missing.
func (b Bundle) Files() ([]File, []string, error) {
	files, m, err := b.files()
	if err != nil {
		return nil, nil, err
	}
	return files, m.Notes, nil
}

func (b Bundle) files() ([]File, *Manifest, error) {
	if b.Run == nil {
		return nil, nil, errors.New("bundle: no BenchmarkRun")
	}
	doc, err := resultsOf(b.Results, "the results of "+b.Run.Name)
	if err != nil {
		return nil, nil, err
	}
	m := Manifest{
		Kind: ManifestKind, FormatVersion: BundleFormatVersion,
		Run:        ManifestRun{Namespace: b.Run.Namespace, Name: b.Run.Name, UID: string(b.Run.UID)},
		ExportedAt: metav1.NewTime(b.ExportedAt.UTC().Truncate(time.Second)), ExportedBy: b.ExportedBy,
		Events: b.EventsRead,
	}
	var files []File
	add := func(name, what string, data []byte) {
		files = append(files, File{Name: name, Data: data})
		m.Files = append(m.Files, ManifestEntry{Name: name, What: what})
	}

	run := b.Run.DeepCopy()
	run.ManagedFields = nil
	run.APIVersion, run.Kind = v1.GroupVersion.String(), "BenchmarkRun"
	runYAML, err := yaml.Marshal(run)
	if err != nil {
		return nil, nil, fmt.Errorf("encode %s: %w", FileRun, err)
	}
	add(FileRun, "the BenchmarkRun with its spec and status, as the API server held it (kubectl get benchmarkrun -o yaml)", runYAML)

	for _, k := range slices.Sorted(maps.Keys(b.Results)) {
		if reserved(k) {
			return nil, nil, fmt.Errorf("the results ConfigMap of %s has a key %q, which is a file of the bundle's own: "+
				"rename the key", b.Run.Name, k)
		}
		m.Results = append(m.Results, k)
		add(k, "the results ConfigMap's "+k+", as the operator wrote it", []byte(b.Results[k]))
	}

	if name := ScheduleName(b.Run); name != "" {
		m.Schedule = &ManifestSchedule{Name: name, Recorded: b.Schedule != nil, Gone: b.Schedule == nil && b.ScheduleGone}
		switch {
		case b.Schedule != nil:
			sc := b.Schedule.DeepCopy()
			sc.ManagedFields = nil
			sc.APIVersion, sc.Kind = v1.GroupVersion.String(), "BenchmarkSchedule"
			data, err := yaml.Marshal(sc)
			if err != nil {
				return nil, nil, fmt.Errorf("encode %s: %w", FileSchedule, err)
			}
			add(FileSchedule, "the run's BenchmarkSchedule "+name+" (its regression policy and confirmation)", data)
		case b.ScheduleGone:
			m.Notes = append(m.Notes, fmt.Sprintf("The run's BenchmarkSchedule %s was gone at export: its comparisons use the operator's defaults.", name))
		default:
			m.Notes = append(m.Notes, fmt.Sprintf("The run's BenchmarkSchedule %s could not be read at export: its regression policy and confirmation are not in the bundle.", name))
		}
	}
	if b.EventsRead {
		data, err := eventsYAML(b.Events)
		if err != nil {
			return nil, nil, err
		}
		add(FileEvents, fmt.Sprintf("the run's %d Events at export (the API server keeps them about an hour)", len(b.Events)), data)
	} else {
		m.Notes = append(m.Notes, "The run's Events were not read (the reasons why server counters were not stored are not in the bundle).")
	}

	nodes, err := nodesYAML(run)
	if err != nil {
		return nil, nil, err
	}
	add(FileNodes, "the node each target's server ran on (status.targets[].node, instanceNodes)", nodes)

	chartFiles, notes := bundleCharts(doc, loadclient.For(run.Spec.Workload).Capabilities())
	for _, f := range chartFiles {
		add(f.file.Name, f.what, f.file.Data)
	}
	m.Notes = append(m.Notes, notes...)

	tfiles, notes := targetFiles(run, b.SysbenchImage, b.ExportedBy)
	for _, f := range tfiles {
		add(f.file.Name, f.what, f.file.Data)
	}
	m.Notes = append(m.Notes, notes...)

	if !b.LogsRead {
		m.Notes = append(m.Notes, "The logs of the run's steps were not read: the bundle holds none.")
	}
	attempt := map[string]int{}
	for _, lg := range b.Logs {
		dir := path.Join(DirTargets, lg.Target, DirLogs, lg.Step)
		attempt[dir]++
		add(path.Join(dir, fmt.Sprintf("%02d-%s.log", attempt[dir], lg.Job)),
			fmt.Sprintf("the log of step %s of target %s, attempt %d (Job %s, %s), as the cluster still had it at export",
				lg.Step, lg.Target, attempt[dir], lg.Job, lg.State), []byte(lg.Text))
	}

	manifest, err := yaml.Marshal(m)
	if err != nil {
		return nil, nil, fmt.Errorf("encode %s: %w", FileManifest, err)
	}
	head := "# A run exported by kubectl mysqlbench export RUN --bundle PATH; read it back with --from (get, describe, compare, plot, server, export, history).\n"
	return append([]File{{Name: FileManifest, Data: append([]byte(head), manifest...)}}, files...), &m, nil
}

// reserved says whether name is one of the bundle's own files or directories.
func reserved(name string) bool {
	switch name {
	case FileManifest, FileRun, FileSchedule, FileEvents, FileNodes, DirCharts, DirTargets:
		return true
	}
	return false
}

func eventsYAML(events []corev1.Event) ([]byte, error) {
	items := make([]corev1.Event, len(events))
	for i, e := range events {
		e.ManagedFields = nil
		e.APIVersion, e.Kind = "v1", "Event"
		items[i] = e
	}
	slices.SortStableFunc(items, func(a, b corev1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	list := corev1.EventList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "EventList"}, Items: items}
	data, err := yaml.Marshal(list)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", FileEvents, err)
	}
	return data, nil
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// nodeFacts is one target's entry of FileNodes.
type nodeFacts struct {
	Target        string         `json:"target"`
	Engine        string         `json:"engine"`
	Node          *v1.ServerNode `json:"node"`
	InstanceNodes []string       `json:"instanceNodes,omitempty"`
}

func nodesYAML(run *v1.BenchmarkRun) ([]byte, error) {
	var out struct {
		Note    string      `json:"note"`
		Targets []nodeFacts `json:"targets"`
	}
	out.Note = "node is null where the operator did not run the server (external and Percona targets) or had not probed it"
	for _, t := range run.Spec.Targets {
		nf := nodeFacts{Target: t.Name, Engine: string(t.EngineOrDefault())}
		for _, ts := range run.Status.Targets {
			if ts.Name == t.Name {
				nf.Node, nf.InstanceNodes = ts.Node, ts.InstanceNodes
			}
		}
		out.Targets = append(out.Targets, nf)
	}
	data, err := yaml.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", FileNodes, err)
	}
	return data, nil
}

// described is a file with what the manifest says of it.
type described struct {
	file File
	what string
}

// bundleCharts draws the charts a reader looks at first, those the run's client measures: the
// throughput by threads, TPS and p95 latency by threads, and the throughput over time.
func bundleCharts(doc *results.Doc, caps load.Capabilities) ([]described, []string) {
	type chart struct {
		file string
		spec charts.Spec
		what string
		ok   bool
	}
	throughput := "QPS"
	if caps.Metric.Name != "" {
		throughput = caps.Metric.Name
	}
	list := []chart{
		{"qps-by-threads.png", charts.Spec{Metric: charts.QPS}, throughput + " by threads", true},
		{"tps-by-threads.png", charts.Spec{Metric: charts.TPS}, "TPS by threads", caps.Transactions},
		{"p95-by-threads.png", charts.Spec{Metric: charts.P95}, "p95 latency by threads", caps.Reports(95)},
		{"qps-timeline.png", charts.Spec{Metric: charts.QPS, Timeline: true}, throughput + " per second across the ladder", caps.Series},
	}
	var out []described
	var notes []string
	for _, c := range list {
		if !c.ok {
			continue
		}
		name := path.Join(DirCharts, c.file)
		p, leftOut, err := charts.DrawWithNotes([]*results.Doc{doc}, c.spec)
		var buf bytes.Buffer
		if err == nil {
			err = charts.Encode(p, "png", charts.Size{}, &buf)
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s is not in the bundle: %v.", name, err))
			continue
		}
		what := "chart: " + c.what + " (kubectl mysqlbench plot)"
		if len(leftOut) > 0 {
			what += "; " + strings.Join(leftOut, "; ")
		}
		out = append(out, described{File{Name: name, Data: buf.Bytes()}, what})
	}
	return out, notes
}
