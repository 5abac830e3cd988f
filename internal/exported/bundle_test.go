package exported

import (
	"bytes"
	"encoding/json"
	"image/png"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

func filesByName(files []File) map[string][]byte {
	out := map[string][]byte{}
	for _, f := range files {
		out[f.Name] = f.Data
	}
	return out
}

// A bundle holds what the run left (its object, every key of its results ConfigMap, its Events),
// what is drawn from it (charts) and what the operator's builders made of its spec (each
// target's my.cnf and command lines), and says what each file is.
func TestBundleFiles(t *testing.T) {
	run := finishedRun("bench", "pk", "uid-pk", 1)
	run.Spec.Targets = append(run.Spec.Targets, v1.Target{Name: "prod", Engine: v1.EngineExternal,
		SecretRef: &v1.LocalObjectReference{Name: "prod-conn"}})
	data := resultsData(t, run)
	files := bundleFiles(t, run)
	got := filesByName(files)
	if files[0].Name != FileManifest {
		t.Errorf("the first file is %s, want the manifest", files[0].Name)
	}
	want := []string{FileManifest, FileRun, FileEvents, FileNodes,
		"charts/p95-by-threads.png", "charts/qps-by-threads.png", "charts/qps-timeline.png", "charts/tps-by-threads.png",
		"targets/mariadb-psoff/commands.txt", "targets/mariadb-psoff/my.cnf", "targets/mariadb/commands.txt", "targets/mariadb/my.cnf",
		"targets/prod/commands.txt"}
	want = append(want, slices.Collect(maps.Keys(data))...)
	if names := slices.Sorted(maps.Keys(got)); !slices.Equal(names, slices.Sorted(slices.Values(want))) {
		t.Errorf("files %q, want %q", names, slices.Sorted(slices.Values(want)))
	}
	for k, v := range data {
		if string(got[k]) != v {
			t.Errorf("%s differs from the ConfigMap's", k)
		}
	}

	var m Manifest
	if err := yaml.Unmarshal(got[FileManifest], &m); err != nil {
		t.Fatal(err)
	}
	if m.Kind != ManifestKind || m.FormatVersion != BundleFormatVersion || m.Run.Name != "pk" || m.Run.UID != "uid-pk" ||
		!m.Events || !slices.Equal(m.Results, slices.Sorted(maps.Keys(data))) || len(m.Files) != len(files)-1 {
		t.Errorf("manifest %+v", m)
	}
	if !slices.ContainsFunc(m.Notes, func(n string) bool {
		return strings.Contains(n, "Target prod has no my.cnf: its server is not the operator's")
	}) {
		t.Errorf("the notes %q do not say why the external target has no my.cnf", m.Notes)
	}

	var back v1.BenchmarkRun
	if err := yaml.Unmarshal(got[FileRun], &back); err != nil || back.Kind != "BenchmarkRun" ||
		string(must(json.Marshal(back.Status))) != string(must(json.Marshal(run.Status))) {
		t.Errorf("run.yaml does not hold the run's status (%v)", err)
	}
	// report.md, at the bundle's root, shows the chart by a relative link.
	if link := "](" + report.BundleQPSChart + ")"; !strings.Contains(string(got[report.KeyReportMD]), link) || got[report.BundleQPSChart] == nil {
		t.Errorf("report.md links to %s, which the bundle must hold", report.BundleQPSChart)
	}
	for _, name := range []string{"charts/qps-by-threads.png", "charts/p95-by-threads.png"} {
		if img, err := png.Decode(bytes.NewReader(got[name])); err != nil || img.Bounds().Dx() < 300 {
			t.Errorf("%s: %v", name, err)
		}
	}
	for file, wants := range map[string][]string{
		"targets/mariadb-psoff/my.cnf": {"# ---- 10-mysqlbench-operator.cnf ----", "max_connections = 151",
			"# ---- 90-mysqlbench-user.cnf ----\n[mysqld]\nperformance_schema = OFF\n"},
		"targets/mariadb/commands.txt": {"# Image: ghcr.io/mysqlbench/sysbench:1.0.20 (the operator's default",
			"MYSQLBENCH_HOST from Secret pk-mariadb-credentials, key host",
			"\nprobe: sysbench ", "\nprepare: sysbench ",
			"\ns01: sysbench /opt/mysqlbench/reporter.lua --db-driver=mysql --mysql-host=$(MYSQLBENCH_HOST) " +
				"--mysql-port=$(MYSQLBENCH_PORT) --mysql-user=$(MYSQLBENCH_USER) --tables=4 --table-size=1000 --threads=1 --time=3 ",
			"\nr3s02: sysbench "},
		"targets/prod/commands.txt": {"MYSQLBENCH_HOST from Secret prod-conn, key host"},
		FileNodes:                   {"name: node-mariadb-psoff", "target: prod"},
		FileEvents:                  {"reason: ServerStatsUnavailable", "kind: Event"},
	} {
		for _, w := range wants {
			if !strings.Contains(string(got[file]), w) {
				t.Errorf("%s lacks %q:\n%s", file, w, got[file])
			}
		}
	}

	// The operator's default image is only a default: --sysbench-image of the operator replaces it.
	files, _, err := Bundle{Run: run, Results: data, SysbenchImage: "registry.local/sysbench:1"}.Files()
	if err != nil {
		t.Fatal(err)
	}
	if cmds := string(filesByName(files)["targets/mariadb/commands.txt"]); !strings.Contains(cmds, "# Image: registry.local/sysbench:1\n") {
		t.Errorf("commands with --sysbench-image:\n%s", cmds)
	}
	if m := string(filesByName(files)[FileManifest]); !strings.Contains(m, "Events were not read") {
		t.Errorf("a bundle without Events does not say so:\n%s", m)
	}

	// A scheduled run: its schedule recorded, gone, or not readable, each said.
	scheduled := run.DeepCopy()
	scheduled.Labels = map[string]string{v1.LabelSchedule: "nightly"}
	sched := &v1.BenchmarkSchedule{}
	sched.Name, sched.Namespace = "nightly", "bench"
	for _, c := range []struct {
		b    Bundle
		want ManifestSchedule
		note string
	}{
		{Bundle{Schedule: sched}, ManifestSchedule{Name: "nightly", Recorded: true}, ""},
		{Bundle{ScheduleGone: true}, ManifestSchedule{Name: "nightly", Gone: true}, "was gone at export"},
		{Bundle{}, ManifestSchedule{Name: "nightly"}, "could not be read at export"},
	} {
		c.b.Run, c.b.Results = scheduled, data
		files, notes, err := c.b.Files()
		if err != nil {
			t.Fatal(err)
		}
		var m Manifest
		if err := yaml.Unmarshal(filesByName(files)[FileManifest], &m); err != nil {
			t.Fatal(err)
		}
		_, recorded := filesByName(files)[FileSchedule]
		hasNote := slices.ContainsFunc(notes, func(n string) bool { return c.note != "" && strings.Contains(n, c.note) })
		if m.Schedule == nil || *m.Schedule != c.want || recorded != c.want.Recorded || hasNote != (c.note != "") {
			t.Errorf("schedule %+v (file %v), notes %q; want %+v", m.Schedule, recorded, notes, c.want)
		}
	}

	for _, c := range []struct {
		name    string
		b       Bundle
		wantErr string
	}{
		{"no run", Bundle{Results: data}, "no BenchmarkRun"},
		{"no results.json", Bundle{Run: run, Results: map[string]string{report.KeyReportMD: "x"}}, "holds no results.json"},
		{"a ConfigMap key that is a bundle file", Bundle{Run: run, Results: map[string]string{
			report.KeyResultsJSON: data[report.KeyResultsJSON], FileRun: "x"}}, `a key "run.yaml"`},
	} {
		if _, _, err := c.b.Files(); err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: %v, want %q", c.name, err, c.wantErr)
		}
	}
}

// A bundle never replaces anything, and is written whole or not at all.
func TestWriteBundleRefusesToReplace(t *testing.T) {
	files := bundleFiles(t, finishedRun("bench", "pk", "uid-pk", 1))
	dir := t.TempDir()

	full := filepath.Join(dir, "full")
	write(t, full, map[string][]byte{"mine.txt": []byte("keep me")})
	if err := WriteDir(full, files); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("WriteDir into a directory with files: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(full, "mine.txt")); err != nil || string(data) != "keep me" {
		t.Errorf("the directory's file was touched: %q, %v", data, err)
	}
	archive := filepath.Join(dir, "old.tar.gz")
	write(t, dir, map[string][]byte{"old.tar.gz": []byte("an old bundle")})
	if err := WriteTarGz(archive, "old", files, t0); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("WriteTarGz over a file: %v", err)
	}
	if data, _ := os.ReadFile(archive); string(data) != "an old bundle" {
		t.Errorf("the file was replaced")
	}

	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteDir(empty, files); err != nil {
		t.Errorf("WriteDir into an empty directory: %v", err)
	}
	if err := WriteDir(filepath.Join(dir, "no", "parent"), files); err == nil {
		t.Errorf("WriteDir without its parent directory: no error")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".partial-") {
			t.Errorf("a partial bundle was left: %s", e.Name())
		}
	}

	// The archive unpacks to the directory's files, under one directory.
	tgz := filepath.Join(dir, "pk.tgz")
	if err := WriteTarGz(tgz, "pk", files, t0); err != nil {
		t.Fatal(err)
	}
	fromDir, err := Load([]string{empty})
	if err != nil {
		t.Fatal(err)
	}
	fromTar, err := Load([]string{tgz})
	if err != nil {
		t.Fatal(err)
	}
	a, b := fromDir.Runs[0], fromTar.Runs[0]
	if !reflect.DeepEqual(a.Object, b.Object) || !reflect.DeepEqual(a.Results, b.Results) || !reflect.DeepEqual(a.Bundle, b.Bundle) ||
		b.From[0] != tgz+":pk" {
		t.Errorf("the archive reads otherwise than the directory: from %q", b.From)
	}
}

// A run made of its results.json compares as the run itself: the comparison reads only what
// results.json holds.
func TestFromResultsComparesAsTheRun(t *testing.T) {
	base := finishedRun("bench", "base", "uid-base", 1)
	cand := finishedRun("bench", "cand", "uid-cand", 0.9)
	fromResults := func(run *v1.BenchmarkRun) *v1.BenchmarkRun {
		doc, err := results.Decode([]byte(resultsData(t, run)[report.KeyResultsJSON]))
		if err != nil {
			t.Fatal(err)
		}
		return FromResults(doc)
	}
	// Runs of the same instance: no between-run allowance, so the fixture's drop decides.
	policy := v1.RegressionPolicy{RunToRunCVPercent: new(float64)}
	want := compare.Compare(cand, base, policy)
	got := compare.Compare(fromResults(cand), fromResults(base), policy)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("compared from results.json:\n%+v\nfrom the runs:\n%+v", got, want)
	}
	if want.Summary.Verdict != v1.VerdictRegressed {
		t.Errorf("the fixture's verdict is %s: a 10 %% drop should regress", want.Summary.Verdict)
	}
	r := fromResults(base)
	if r.Name != "base" || r.Namespace != "bench" || len(r.Spec.Targets) != 2 || r.Spec.Targets[1].MyCnf != "performance_schema = OFF" ||
		r.Spec.RepetitionsOrDefault() != 3 || r.Spec.Ladder.StepDurationOrDefault() != base.Spec.Ladder.StepDurationOrDefault() ||
		!reflect.DeepEqual(r.Status.Targets[0].Steps, base.Status.Targets[0].Steps) ||
		!reflect.DeepEqual(r.Status.Targets[0].Cells, base.Status.Targets[0].Cells) || r.Status.Phase != v1.RunSucceeded {
		t.Errorf("FromResults = %+v", r)
	}
	if FromResults(nil) != nil {
		t.Errorf("FromResults(nil) is not nil")
	}
}

// The step logs a bundle is written with are read back, per target and step in attempt order,
// from a directory and from a .tar.gz.
func TestBundleStepLogs(t *testing.T) {
	run := finishedRun("bench", "pk", "uid-pk", 1)
	logs := []StepLog{
		{Target: "mariadb", Step: "s02", Job: "pk-mariadb-s02-a1", State: "failed: BackoffLimitExceeded", Text: "FATAL: error 2013\n"},
		{Target: "mariadb", Step: "s02", Job: "pk-mariadb-s02-a2", State: "completed", Text: "SQL statistics:\n"},
		{Target: "mariadb-psoff", Step: "prepare", Job: "pk-mariadb-psoff-prepare", State: "running", Text: ""},
	}
	files, _, err := Bundle{Run: run, Results: resultsData(t, run), ExportedAt: t0, ExportedBy: "test", Logs: logs, LogsRead: true}.Files()
	if err != nil {
		t.Fatal(err)
	}
	got := filesByName(files)
	for _, name := range []string{"targets/mariadb/logs/s02/01-pk-mariadb-s02-a1.log", "targets/mariadb/logs/s02/02-pk-mariadb-s02-a2.log",
		"targets/mariadb-psoff/logs/prepare/01-pk-mariadb-psoff-prepare.log"} {
		if _, ok := got[name]; !ok {
			t.Errorf("no %s among %q", name, slices.Sorted(maps.Keys(got)))
		}
	}
	dir := filepath.Join(t.TempDir(), "pk")
	if err := WriteDir(dir, files); err != nil {
		t.Fatal(err)
	}
	tgz := filepath.Join(t.TempDir(), "pk.tar.gz")
	if err := WriteTarGz(tgz, "pk", files, t0); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, tgz} {
		set, err := Load([]string{p})
		if err != nil {
			t.Fatal(err)
		}
		r, err := set.Only()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.Logs, logs) {
			t.Errorf("%s: logs %+v, want %+v", p, r.Logs, logs)
		}
	}
}
