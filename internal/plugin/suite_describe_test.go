package plugin

import (
	"bytes"
	"flag"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/internal/exported"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/")

// assertGolden compares got with testdata/name (go test -update writes it).
func assertGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it, then review it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it):\n%s", path, got)
	}
}

// describe of a suite: its workloads, a row per workload and thread count in the tables, and
// the relative table with a row per workload and thread count.
func TestDescribeSuiteGolden(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "report", "testdata", "suite", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := results.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	run := exported.FromResults(doc)
	var out bytes.Buffer
	if err := describe(&out, run, offlineNow, nil); err != nil {
		t.Fatal(err)
	}
	assertGolden(t, "describe-suite.txt", out.String())
	for _, want := range []string{"2 workloads, in measuring order: points (oltp_point_select, 4 tables x 10000 rows), rw (",
		"QPS relative to mysql57:", "WORKLOAD   THREADS   ps80", "rw         64        x0.90 [0.87, 0.93]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("describe lacks %q", want)
		}
	}

	// spec.baseTarget picks the base.
	run.Spec.BaseTarget = "ps80"
	out.Reset()
	if err := describe(&out, run, offlineNow, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "QPS relative to ps80:") || !strings.Contains(out.String(), "x1.11 [") {
		t.Errorf("describe with baseTarget ps80:\n%s", out.String())
	}
}

// export -o csv and markdown from a suite's results.json alone render its files again whole:
// as the operator rendered them.
func TestExportSuiteFromResults(t *testing.T) {
	dir := filepath.Join("..", "report", "testdata", "suite")
	for _, tc := range []struct{ format, file string }{{"csv", "results.csv"}, {"markdown", "report.md"}} {
		got, _, err := pluginAt(t, offlineNow, "export", "--from", filepath.Join(dir, "results.json"), "-o", tc.format)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(dir, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("export -o %s of the suite's results.json differs from %s:\n%s", tc.format, tc.file, got)
		}
	}
}

// plot --heatmap draws a suite's relative table from its results.json; what it cannot draw is
// refused with what to do.
func TestPlotHeatmap(t *testing.T) {
	from := filepath.Join("..", "report", "testdata", "suite", "results.json")
	file := filepath.Join(t.TempDir(), "heat.png")
	if _, _, err := pluginAt(t, offlineNow, "plot", "--from", from, "--heatmap", "--relative-to", "ps80", "--output-file", file); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("heat map png: %v", err)
	}
	svg, _, err := pluginAt(t, offlineNow, "plot", "--from", from, "--heatmap", "-o", "svg")
	if err != nil || !strings.Contains(svg, "QPS relative to mysql57") || !strings.Contains(svg, ">rw @ 8<") {
		t.Errorf("heat map svg (%v): %.300s", err, svg)
	}
	_, _, err = pluginAt(t, offlineNow, "plot", "--from", from, "--heatmap", "--timeline", "-o", "svg")
	checkError(t, "--heatmap --timeline", err, "drop --timeline")
	_, _, err = pluginAt(t, offlineNow, "plot", "--from", from, "--heatmap", "--relative-to", "nope", "-o", "svg")
	checkError(t, "--heatmap --relative-to nope", err, `base target "nope"`)
}
