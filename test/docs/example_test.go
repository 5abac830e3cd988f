package docs

import (
	"bytes"
	"context"
	"encoding/csv"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/mysqlbench/mysqlbench-operator/internal/plugin"
)

// The example bundle the README offers to try without a cluster is a whole run the plugin reads
// as it reads a cluster's: both targets finished with every step, the CSV has a row per step, and
// the chart is a PNG.
func TestExampleBundleReadsWhole(t *testing.T) {
	dir := filepath.Join(repoRoot, "examples", "quick-psoff")
	run := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
		if code := plugin.Execute(context.Background(), plugin.Options{Streams: streams}, args); code != 0 {
			t.Fatalf("kubectl mysqlbench %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
		}
		return out.String()
	}

	desc := run("describe", "--from", dir)
	for _, want := range []string{"Phase:          Succeeded", "Targets done:   2/2", "mysql97-psoff"} {
		if !strings.Contains(desc, want) {
			t.Errorf("describe lacks %q:\n%s", want, desc)
		}
	}
	rows, err := csv.NewReader(strings.NewReader(run("export", "--from", dir, "-o", "csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string]int{}
	for _, r := range rows[1:] {
		steps[r[0]]++
	}
	if len(rows) != 9 || steps["mysql97"] != 4 || steps["mysql97-psoff"] != 4 {
		t.Errorf("export -o csv: %d rows, steps by target %v; want a header and 4 steps of each target", len(rows), steps)
	}
	chart := filepath.Join(t.TempDir(), "qps.png")
	run("plot", "--from", dir, "--output-file", chart)
	f, err := os.Open(chart)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if img, err := png.Decode(f); err != nil || img.Bounds().Dx() < 300 {
		t.Errorf("plot --output-file: %v (a PNG of width >= 300 wanted)", err)
	}
}
