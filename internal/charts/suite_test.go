package charts

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// suiteDoc is the report package's suite golden run: targets mysql57 and ps80, workloads points
// and rw (rw at two thirds of points' QPS), ps80 at 0.9 of mysql57 in both.
func suiteDoc(t *testing.T) *results.Doc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "report", "testdata", "suite", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := results.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// A suite's chart has a line per target and workload, and a relative one divides each by the
// base target's line of its own workload: every ratio is ps80's 0.9, never points against rw.
func TestSuiteLines(t *testing.T) {
	doc := suiteDoc(t)
	m := measure{metric: QPS}
	lines, _, _, _, err := workloadLines([]*results.Doc{doc}, m, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, ln := range lines {
		labels = append(labels, ln.label)
	}
	if want := []string{"mysql57/points", "ps80/points", "mysql57/rw", "ps80/rw"}; !slices.Equal(labels, want) {
		t.Fatalf("lines %v, want %v", labels, want)
	}
	rel, _, _, _, err := workloadLines([]*results.Doc{doc}, m, "mysql57", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rel) != 4 {
		t.Fatalf("%d relative lines", len(rel))
	}
	for _, ln := range rel {
		want := 1.0
		if ln.target == "ps80" {
			want = 0.9
		}
		for _, pt := range ln.points {
			if pt.value < want-0.005 || pt.value > want+0.005 {
				t.Errorf("%s at %d threads: %.3f, want %.1f", ln.label, pt.threads, pt.value, want)
			}
		}
	}
	one, _, _, _, err := workloadLines([]*results.Doc{doc}, m, "", "rw")
	if err != nil || len(one) != 2 || one[0].label != "mysql57" || one[0].points[0].value >= lines[0].points[0].value {
		t.Errorf("workload rw: %+v %v", one, err)
	}
	if _, _, _, _, err := workloadLines([]*results.Doc{doc}, m, "", "insert"); err == nil || !strings.Contains(err.Error(), "has workloads points, rw") {
		t.Errorf("an unknown workload: %v", err)
	}
	p, err := Draw([]*results.Doc{doc}, Spec{Metric: QPS, RelativeTo: "mysql57", Workload: "points"})
	if err != nil {
		t.Fatal(err)
	}
	var svg bytes.Buffer
	if err := Encode(p, "svg", Size{}, &svg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), "QPS of points relative to mysql57") {
		t.Errorf("the title does not name the workload:\n%s", firstLines(svg.String(), 40))
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return fmt.Sprint(strings.Join(lines[:min(n, len(lines))], "\n"))
}

// A suite's timeline is a line per target through its workloads in measuring order, and says
// so; with a workload named it draws that workload's steps only, and refuses a workload the run
// does not have.
func TestSuiteTimeline(t *testing.T) {
	doc := suiteDoc(t)
	// The golden's start times repeat per workload; here each step starts 360 s after the one
	// before it, as a suite's steps run.
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for ti := range doc.Targets {
		for si := range doc.Targets[ti].Steps {
			doc.Targets[ti].Steps[si].StartTime = &metav1.Time{Time: t0.Add(time.Duration(360*si) * time.Second)}
		}
	}
	whole, _, err := DrawWithNotes([]*results.Doc{doc}, Spec{Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	texts := checkEncoded(t, whole, 2, 4)
	checkCaption(t, texts, []string{"a line runs through the workloads in measuring order (points, rw)"})
	one, _, err := DrawWithNotes([]*results.Doc{doc}, Spec{Timeline: true, Workload: "rw"})
	if err != nil {
		t.Fatal(err)
	}
	texts = checkEncoded(t, one, 2, 4)
	checkCaption(t, texts, []string{"workload rw"})
	if slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, "measuring order") }) {
		t.Errorf("the timeline of one workload says it runs through the workloads: %q", texts)
	}
	// rw's first step is the suite's fourth: its timeline starts there.
	if math.Abs(one.X.Max-(whole.X.Max-3*360)) > 1e-6 {
		t.Errorf("the timeline of workload rw spans %.0f s, the whole suite's %.0f s: want rw's steps only, from the fourth step's start",
			one.X.Max, whole.X.Max)
	}
	if _, _, err := DrawWithNotes([]*results.Doc{doc}, Spec{Timeline: true, Workload: "insert"}); err == nil ||
		!strings.Contains(err.Error(), "has workloads points, rw") {
		t.Errorf("timeline of a workload the run lacks: %v, want an error naming the run's workloads", err)
	}
}
