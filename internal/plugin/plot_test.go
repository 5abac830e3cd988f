package plugin

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/internal/charts"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// decodePNG reads a chart the plugin wrote and checks it is a picture, not a blank canvas.
func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b := img.Bounds()
	if b.Dx() < 300 || b.Dy() < 200 {
		t.Errorf("%s is %dx%d", path, b.Dx(), b.Dy())
	}
	colors := map[[4]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			colors[[4]uint32{r, g, bl, a}] = true
		}
	}
	if len(colors) < 3 {
		t.Errorf("%s is blank (%d colours)", path, len(colors))
	}
	return img
}

func TestPlotWritesCharts(t *testing.T) {
	needCluster(t)
	dpi := charts.DefaultDPI
	sixteenCM := int(16/2.54*float64(dpi) + 0.5)
	dir := t.TempDir()
	for _, c := range []struct {
		file string
		args []string
	}{
		{"qps.png", []string{"pk"}},
		{"relative.png", []string{"pk", "--relative-to", "mariadb"}},
		{"p95.png", []string{"base", "--metric", "p95"}},
		{"timeline.png", []string{"pk", "--timeline", "--metric", "tps"}},
		{"two-runs.png", []string{"base", "cand", "--width", "16cm"}},
		{"print.png", []string{"pk", "--width", "4in", "--height", "3in", "--dpi", "300"}},
		{"p95-log.png", []string{"base", "cand", "--metric", "p95", "--log-latency"}},
	} {
		path := filepath.Join(dir, c.file)
		_, errOut, err := kubectlMysqlbench(t, append([]string{"plot", "--output-file", path}, c.args...)...)
		if err != nil {
			t.Errorf("plot %s: %v", c.file, err)
			continue
		}
		if !strings.Contains(errOut, "Wrote "+path) {
			t.Errorf("plot %s does not say where it wrote", c.file)
		}
		img := decodePNG(t, path)
		if c.file == "two-runs.png" && img.Bounds().Dx() != sixteenCM { // 16 cm at the default resolution
			t.Errorf("--width 16cm: %d pixels wide", img.Bounds().Dx())
		}
		if b := img.Bounds(); c.file == "print.png" && (b.Dx() != 1200 || b.Dy() != 900) {
			t.Errorf("4in x 3in at 300 dpi: %dx%d pixels, want 1200x900", b.Dx(), b.Dy())
		}
	}
	svg := filepath.Join(dir, "qps.svg")
	if _, _, err := kubectlMysqlbench(t, "plot", "pk", "--output-file", svg); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(svg)
	if err != nil || !strings.Contains(string(data), "<svg") || !strings.Contains(string(data), "mariadb-psoff") {
		t.Errorf("%s is not an SVG chart naming the targets (%v)", svg, err)
	}
	_, _, err = kubectlMysqlbench(t, "plot", "pk", "--output-file", filepath.Join(dir, "qps.jpg"))
	checkError(t, "-o qps.jpg", err, ".png or .svg")
	_, _, err = kubectlMysqlbench(t, "plot", "pk", "--metric", "qpm", "--output-file", filepath.Join(dir, "x.png"))
	checkError(t, "--metric qpm", err, "qpm", "qps, tps, p95")
	// -o is an output format everywhere else in kubectl: plot does not take a file name from it.
	_, _, err = kubectlMysqlbench(t, "plot", "pk", "-o", filepath.Join(dir, "o.png"))
	checkError(t, "-o o.png", err, "--output-file "+filepath.Join(dir, "o.png"), "-o is the chart's format")
	_, _, err = kubectlMysqlbench(t, "plot", "pk")
	checkError(t, "no --output-file", err, "needs --output-file")
	_, _, err = kubectlMysqlbench(t, "plot", "pk", "--log-latency", "--output-file", filepath.Join(dir, "x.png"))
	checkError(t, "--log-latency of qps", err, "log scale is for latency")
	_, _, err = kubectlMysqlbench(t, "plot", "pk", "--dpi", "300", "--output-file", filepath.Join(dir, "x.svg"))
	checkError(t, "--dpi of an svg", err, "--dpi 300", "an svg has no pixels")
}

// plottable refuses a metric the run's client does not report, by what the client declares.
func TestPlottable(t *testing.T) {
	sysbenchDoc := &results.Doc{}
	slapDoc := &results.Doc{Workload: results.Workload{Client: "mysqlslap"}}
	cases := []struct {
		doc    *results.Doc
		metric charts.Metric
		refuse bool
	}{
		{sysbenchDoc, charts.QPS, false},
		{sysbenchDoc, charts.TPS, false},
		{sysbenchDoc, charts.P95, false},
		{slapDoc, charts.QPS, false},
		{slapDoc, charts.TPS, true},
		{slapDoc, charts.P95, true},
		{slapDoc, charts.Metric("cpu-per-query"), false},
	}
	for _, tc := range cases {
		err := plottable("r", tc.doc, tc.metric)
		if (err != nil) != tc.refuse {
			t.Errorf("client %q, metric %s: error %v, want refused %v", tc.doc.Workload.Client, tc.metric, err, tc.refuse)
		}
		if err != nil && !strings.Contains(err.Error(), "run r measured with mysqlslap, which reports no transactions or per-query latency") {
			t.Errorf("error %q does not say what mysqlslap lacks", err)
		}
	}
}
