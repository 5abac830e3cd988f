package plugin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/exported"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// resultsFiles writes results.json files of runs named after names (from the report package's
// golden files: the first with repetitions and finished, the second failed after one step)
// into a new directory, and returns it.
func resultsFiles(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	golden := []string{"repetitions", "failed_after_one_step"}
	for i, name := range names {
		b, err := os.ReadFile(filepath.Join("..", "report", "testdata", golden[i%len(golden)], "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		doc["run"].(map[string]any)["name"] = name
		out, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".json"), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var offlineNow = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// get reads runs from files as from the cluster, with kubectl's -o formats, --no-headers and
// --sort-by.
func TestGetFromFilesWithKubectlFormats(t *testing.T) {
	dir := resultsFiles(t, "zeta", "alpha")
	out, _, err := pluginAt(t, offlineNow, "get", "--from", dir)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || fields(lines[0])[0] != "NAMESPACE" || fields(lines[1])[1] != "alpha" || fields(lines[2])[1] != "zeta" {
		t.Errorf("get --from DIR:\n%s\nwant a header and alpha, zeta by name", out)
	}

	out, _, err = pluginAt(t, offlineNow, "get", "--from", dir, "--no-headers", "--sort-by", "{.status.phase}")
	if err != nil {
		t.Fatal(err)
	}
	lines = strings.Split(strings.TrimSpace(out), "\n")
	// alpha failed, zeta succeeded: Failed sorts first.
	if len(lines) != 2 || fields(lines[0])[1] != "alpha" || fields(lines[0])[2] != "Failed" || fields(lines[1])[1] != "zeta" {
		t.Errorf("--no-headers --sort-by {.status.phase}:\n%s", out)
	}

	out, _, err = pluginAt(t, offlineNow, "get", "--from", dir, "-o", "custom-columns=RUN:.metadata.name,PHASE:.status.phase,NONE:.spec.nothing",
		"--sort-by", ".metadata.name")
	if err != nil {
		t.Fatal(err)
	}
	if want := "RUN    PHASE       NONE\nalpha  Failed      <none>\nzeta   Succeeded   <none>\n"; !strings.Contains(out, "alpha") ||
		strings.Join(strings.Fields(out), " ") != strings.Join(strings.Fields(want), " ") {
		t.Errorf("-o custom-columns:\n%s\nwant\n%s", out, want)
	}
	out, _, err = pluginAt(t, offlineNow, "get", "--from", dir, "-o", "custom-columns=RUN:.metadata.name", "--no-headers")
	if err != nil || strings.Fields(out)[0] == "RUN" {
		t.Errorf("-o custom-columns --no-headers: %q, %v", out, err)
	}

	out, _, err = pluginAt(t, offlineNow, "get", "--from", dir, "-o", "jsonpath={.items[*].metadata.name}")
	if err != nil || strings.TrimSpace(out) != "alpha zeta" {
		t.Errorf("-o jsonpath: %q, %v", out, err)
	}
	out, _, err = pluginAt(t, offlineNow, "get", "zeta", "--from", dir, "-o", "yaml")
	var run v1.BenchmarkRun
	if err != nil || yaml.Unmarshal([]byte(out), &run) != nil || run.Name != "zeta" || run.Kind != "BenchmarkRun" {
		t.Errorf("get zeta --from -o yaml: %v, %s %s", err, run.Kind, run.Name)
	}
	out, _, err = pluginAt(t, offlineNow, "get", "zeta", "--from", dir, "-o", "name")
	if err != nil || out != "benchmarkrun.mysqlbench.io/zeta\n" {
		t.Errorf("-o name: %q, %v", out, err)
	}
	out, _, err = pluginAt(t, offlineNow, "get", "zeta", "--from", dir)
	if err != nil || !strings.Contains(out, "by threads:") {
		t.Errorf("get zeta --from: %v, no results table:\n%s", err, out)
	}

	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"get", "--from", dir, "-w"}, []string{"-w follows runs in the cluster"}},
		{[]string{"get", "--from", dir, "-o", "csv"}, []string{`"csv"`, "wide, json, yaml, name", "custom-columns"}},
		{[]string{"get", "--from", dir, "-o", "custom-columns=NAME"}, []string{"HEADER:JSONPATH"}},
		{[]string{"get", "--from", dir, "-o", "jsonpath"}, []string{"needs a template"}},
		{[]string{"get", "--from", dir, "--sort-by", "{.status.phase"}, []string{"--sort-by"}},
	} {
		_, _, err := pluginAt(t, offlineNow, c.args...)
		checkError(t, strings.Join(c.args, " "), err, c.want...)
	}
}

// compare, server and history print their tables' data in kubectl's formats too.
func TestTablesInKubectlFormats(t *testing.T) {
	dir := resultsFiles(t, "base", "cand")
	old, new := filepath.Join(dir, "base.json"), filepath.Join(dir, "cand.json")
	out, _, err := pluginAt(t, offlineNow, "compare", "--from", old, "--from", new, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var view comparisonView
	if err := json.Unmarshal([]byte(out), &view); err != nil || view.Summary.Baseline != "base" || view.Summary.Run != "cand" ||
		view.Policy == "" || len(view.Cells) == 0 {
		t.Errorf("compare -o json: %v, %+v", err, view.Summary)
	}
	out, _, err = pluginAt(t, offlineNow, "compare", "--from", old, "--from", new, "-o", "custom-columns=TARGET:.target,THREADS:.threads")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(view.Cells)+1 || strings.Join(fields(lines[0]), " ") != "TARGET THREADS" {
		t.Errorf("compare -o custom-columns: %d lines for %d cells:\n%s", len(lines), len(view.Cells), out)
	}
	out, _, err = pluginAt(t, offlineNow, "compare", "--from", old, "--from", new, "-o", "jsonpath={.summary.verdict}")
	if err != nil || out == "" || out != string(view.Summary.Verdict) {
		t.Errorf("compare -o jsonpath: %q, %v, want %q", out, err, view.Summary.Verdict)
	}
	if _, _, err := pluginAt(t, offlineNow, "compare", "--from", old, "--from", new, "-o", "table"); err != nil {
		t.Errorf("compare -o table: %v", err)
	}

	out, _, err = pluginAt(t, offlineNow, "server", "--from", new, "-o", "yaml")
	var sv serverView
	if err != nil || yaml.Unmarshal([]byte(out), &sv) != nil || sv.Run != "cand" || len(sv.Targets) == 0 {
		t.Errorf("server -o yaml: %v, %+v", err, sv)
	}
	out, _, err = pluginAt(t, offlineNow, "server", "--from", new, "-o", "jsonpath={.targets[*].name}")
	if err != nil || !slices.Equal(strings.Fields(out), []string{"mysql57", "ps80"}) {
		t.Errorf("server -o jsonpath: %q, %v", out, err)
	}
	_, _, err = pluginAt(t, offlineNow, "server", "--from", new, "-o", "markdown")
	checkError(t, "server -o markdown", err, `"markdown"`, "table, csv, json")
}

// plot's -o is the chart's format, as kubectl's -o is a format: to stdout without
// --output-file; a file name given to -o is refused with the flag that takes it.
func TestPlotOutputFormat(t *testing.T) {
	dir := resultsFiles(t, "pk")
	from := filepath.Join(dir, "pk.json")
	out, _, err := pluginAt(t, offlineNow, "plot", "--from", from, "-o", "svg")
	if err != nil || !strings.Contains(out, "<svg") {
		t.Errorf("plot -o svg: no svg on stdout (%v)", err)
	}
	out, _, err = pluginAt(t, offlineNow, "plot", "--from", from, "-o", "png")
	if err != nil || !strings.HasPrefix(out, "\x89PNG") {
		t.Errorf("plot -o png: no png on stdout (%v)", err)
	}
	file := filepath.Join(t.TempDir(), "chart")
	if _, _, err := pluginAt(t, offlineNow, "plot", "--from", from, "-o", "png", "--output-file", file); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(file); err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
		t.Errorf("-o png --output-file chart (no extension): %v", err)
	}
	_, _, err = pluginAt(t, offlineNow, "plot", "--from", from, "-o", "chart.png")
	checkError(t, "plot -o chart.png", err, "--output-file chart.png")
	_, _, err = pluginAt(t, offlineNow, "plot", "--from", from, "-o", "jpg")
	checkError(t, "plot -o jpg", err, "png", "svg")
	_, _, err = pluginAt(t, offlineNow, "plot", "--from", from)
	checkError(t, "plot without a file or -o", err, "--output-file", "-o png")
}

// nights writes, into a new directory, the run of the report package's repetitions golden file
// as a schedule's runs on consecutive nights: BenchmarkRun YAML with its status (labelled with
// the schedule) for each night, the first night's also as a results.json alone. The QPS of the
// last night is cut by factor.
func nights(t *testing.T, schedule string, n int, factor float64) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("..", "report", "testdata", "repetitions", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		doc, err := results.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		start := metav1.NewTime(time.Date(2026, 11, 1+i, 2, 0, 0, 0, time.UTC))
		doc.Run.Name, doc.Run.StartTime = fmt.Sprintf("%s-%d", schedule, i+1), &start
		run := exported.FromResults(doc)
		run.SetGroupVersionKind(v1.GroupVersion.WithKind("BenchmarkRun"))
		run.UID = types.UID(fmt.Sprintf("uid-%d", i+1))
		run.Labels = map[string]string{v1.LabelSchedule: schedule}
		if i == n-1 {
			for ti := range run.Status.Targets {
				for si := range run.Status.Targets[ti].Steps {
					s := &run.Status.Targets[ti].Steps[si]
					s.QPS.Total *= factor
				}
			}
		}
		y, err := yaml.Marshal(run)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, run.Name+".yaml"), y, 0o644); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			j, _ := json.Marshal(doc)
			if err := os.WriteFile(filepath.Join(dir, "alone.json"), j, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// history reads a schedule's nights from exported runs as from the results database.
func TestHistoryFromFiles(t *testing.T) {
	dir := nights(t, "nightly", 3, 0.5)
	out, _, err := pluginAt(t, offlineNow, "history", "nightly", "--from", dir, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var view historyView
	if err := json.Unmarshal([]byte(out), &view); err != nil {
		t.Fatal(err)
	}
	if len(view.Series) == 0 {
		t.Fatal("no series")
	}
	for _, s := range view.Series {
		var runs []string
		for _, p := range s.Points {
			runs = append(runs, p.Run)
		}
		if s.Schedule != "nightly" || !slices.Equal(runs, []string{"nightly-1", "nightly-2", "nightly-3"}) {
			t.Errorf("series %s/%s %s@%d: runs %v, want the three nights in order", s.Namespace, s.Schedule, s.Target, s.Threads, runs)
		}
		if n := len(s.Points); n == 3 && !(s.Points[2].Median < 0.6*s.Points[1].Median) {
			t.Errorf("series %s@%d: the last night's median %v is not half the one before (%v)", s.Target, s.Threads,
				s.Points[2].Median, s.Points[1].Median)
		}
	}
	out, _, err = pluginAt(t, offlineNow, "history", "nightly", "--from", dir, "--threads", "1")
	if err != nil || !strings.Contains(out, "nightly-3") || !strings.Contains(out, "NIGHT") {
		t.Errorf("history --from as a table: %v\n%s", err, out)
	}
	// The results.json alone belongs to no schedule: it serves --target.
	out, _, err = pluginAt(t, offlineNow, "history", "--target", "mysql57", "--from", filepath.Join(dir, "alone.json"),
		"-o", "custom-columns=RUN:.run,THREADS:.threads", "--no-headers")
	if err != nil || !strings.Contains(out, "nightly-1") {
		t.Errorf("history --target --from results.json: %v\n%s", err, out)
	}
	_, _, err = pluginAt(t, offlineNow, "history", "weekly", "--from", dir)
	checkError(t, "a schedule the files lack", err, "no successful runs of schedule weekly", "bench/nightly (3 runs)")
	_, _, err = pluginAt(t, offlineNow, "history", "nightly", "--from", dir, "--database-dsn", "u:p@tcp(h:3306)/db")
	checkError(t, "--from and a database", err, "drop --database-dsn")
}

// export writes results.json as stored for -o json, and reads it with kubectl's other formats.
func TestExportInKubectlFormats(t *testing.T) {
	dir := resultsFiles(t, "pk")
	from := filepath.Join(dir, "pk.json")
	stored, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := pluginAt(t, offlineNow, "export", "--from", from, "-o", "json")
	if err != nil || out != string(stored) {
		t.Errorf("export -o json is not results.json byte for byte (%v)", err)
	}
	out, _, err = pluginAt(t, offlineNow, "export", "--from", from, "-o", "jsonpath={.targets[*].name}")
	if err != nil || out != "mysql57 ps80" {
		t.Errorf("export -o jsonpath: %q, %v", out, err)
	}
	out, _, err = pluginAt(t, offlineNow, "export", "--from", from, "-o", "custom-columns=TARGET:.target,THREADS:.threads,QPS:.qps.total")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if strings.Join(fields(lines[0]), " ") != "TARGET THREADS QPS" || len(lines) < 3 || fields(lines[1])[0] != "mysql57" ||
		fields(lines[1])[2] == "<none>" {
		t.Errorf("export -o custom-columns:\n%s", out)
	}
	out, _, err = pluginAt(t, offlineNow, "export", "--from", from, "-o", "yaml")
	var doc map[string]any
	if err != nil || yaml.Unmarshal([]byte(out), &doc) != nil || doc["formatVersion"] == nil {
		t.Errorf("export -o yaml: %v", err)
	}
	_, _, err = pluginAt(t, offlineNow, "export", "--from", from, "-o", "name")
	checkError(t, "export -o name", err, `"name"`, "csv, markdown, json, yaml")
	_, _, err = pluginAt(t, offlineNow, "export", "--from", from, "-o", "yaml", "--bundle", filepath.Join(t.TempDir(), "b"))
	checkError(t, "export -o yaml --bundle", err, "drop -o")
}

// logs reads a bundle's step logs as it reads the cluster's: the newest attempt, or every one.
func TestLogsFromABundle(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "report", "testdata", "two_targets", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := results.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	run := exported.FromResults(doc)
	run.UID = "uid-pk"
	files, _, err := exported.Bundle{Run: run, Results: map[string]string{"results.json": string(b)}, ExportedAt: offlineNow,
		ExportedBy: "test", LogsRead: true, Logs: []exported.StepLog{
			{Target: "mysql57", Step: "s02", Job: "pk-lookup-mysql57-s02-1", State: "failed", Text: "FATAL: first attempt\n"},
			{Target: "mysql57", Step: "s02", Job: "pk-lookup-mysql57-s02-2", State: "completed", Text: "SQL statistics: second\n"},
		}}.Files()
	if err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(t.TempDir(), "pk")
	if err := exported.WriteDir(bundle, files); err != nil {
		t.Fatal(err)
	}
	// 8 threads is the ladder's second step, s02.
	out, _, err := pluginAt(t, offlineNow, "logs", "mysql57", "8", "--from", bundle)
	if err != nil || out != "SQL statistics: second\n" {
		t.Errorf("logs --from: %q, %v; want the newest attempt's log", out, err)
	}
	out, _, err = pluginAt(t, offlineNow, "logs", "pk-lookup", "mysql57", "s02", "--from", bundle, "--all-attempts")
	if err != nil || !strings.Contains(out, "Job pk-lookup-mysql57-s02-1 (failed)") || !strings.Contains(out, "FATAL: first attempt") ||
		strings.Index(out, "first attempt") > strings.Index(out, "second") {
		t.Errorf("logs --from --all-attempts:\n%s\n%v", out, err)
	}
	_, _, err = pluginAt(t, offlineNow, "logs", "mysql57", "64", "--from", bundle)
	checkError(t, "a step the bundle has no log of", err, "no log of step s03", "describe --from")
	_, _, err = pluginAt(t, offlineNow, "logs", "mysql57", "8", "--from", bundle, "-f")
	checkError(t, "-f --from", err, "-f follows a running step")
	_, _, err = pluginAt(t, offlineNow, "logs", "mysql57", "8", "--from", filepath.Join("..", "report", "testdata", "two_targets", "results.json"))
	checkError(t, "a results.json", err, "only a bundle")
}
