package plugin

import (
	"fmt"
	"strings"
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// section is the table under title in out: its header's fields and its rows' lines.
func section(t *testing.T, out, title string) (header []string, rows []string) {
	t.Helper()
	i := strings.Index(out, title)
	if i < 0 {
		t.Fatalf("no %q in\n%s", title, out)
	}
	lines := strings.Split(out[i:], "\n")[1:]
	header = fields(lines[0])
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "" {
			break
		}
		rows = append(rows, l)
	}
	return header, rows
}

func TestDescribeShowsProgressConditionsAndOneColumnPerTarget(t *testing.T) {
	needCluster(t)
	out, _, err := kubectlMysqlbench(t, "describe", "pk")
	if err != nil {
		t.Fatal(err)
	}
	run := getRun(t, nsBench, "pk")
	for _, want := range []string{"Phase:", "Succeeded", "Conditions:", "Targets:", "Results:", run.Status.ResultsConfigMap} {
		if !strings.Contains(out, want) {
			t.Errorf("describe lacks %q", want)
		}
	}
	for _, c := range run.Status.Conditions {
		if lineStarting(out, c.Type, string(c.Status), c.Reason) == "" {
			t.Errorf("no line for condition %s %s %s", c.Type, c.Status, c.Reason)
		}
	}
	checkQPSTable(t, out, run)
	header, rows := section(t, out, "p95 latency (ms) by threads:")
	if len(header) != 1+2*len(run.Spec.Targets) {
		t.Errorf("p95 header %q: want THREADS and one column per target", header)
	}
	for r, th := range run.Spec.Ladder.Threads {
		want := []string{fmt.Sprint(th)}
		for _, ts := range run.Status.Targets {
			for _, s := range ts.Steps {
				if s.Threads == th {
					want = append(want, fmt.Sprintf("%.3f", s.Latency.P95Ms))
				}
			}
		}
		if got := fields(rows[r]); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("p95 row %q, want %q", got, want)
		}
	}
	if !strings.Contains(out, "no confidence interval") {
		t.Errorf("a run without repetitions does not say it has no intervals")
	}
}

// With repetitions a cell is the median and the confidence interval of the median from
// status.targets[].cells, with its confidence; a noisy cell is marked.
func TestDescribeRepetitionsShowsMediansAndIntervals(t *testing.T) {
	needCluster(t)
	out, _, err := kubectlMysqlbench(t, "describe", "base")
	if err != nil {
		t.Fatal(err)
	}
	run := getRun(t, nsBench, "base")
	_, rows := section(t, out, "QPS by threads:")
	noisyCells := 0
	for r, th := range run.Spec.Ladder.Threads {
		row := rows[r]
		for _, ts := range run.Status.Targets {
			var cell *v1.CellStats
			for i := range ts.Cells {
				if ts.Cells[i].Threads == th {
					cell = &ts.Cells[i]
				}
			}
			if cell == nil || cell.N != 4 {
				t.Fatalf("%s at %d threads: cell %+v, want 4 repetitions", ts.Name, th, cell)
			}
			want := fmt.Sprintf("%.0f [%.0f, %.0f]", cell.QPS.Median, cell.QPS.CILow, cell.QPS.CIHigh)
			if !strings.Contains(row, want) {
				t.Errorf("row %q lacks %s's %q", row, ts.Name, want)
			}
			if noisy(*cell) {
				noisyCells++
				if !strings.Contains(row, want+" ~") {
					t.Errorf("row %q: %s's noisy cell is not marked", row, ts.Name)
				}
			}
		}
	}
	// The fake kubelet makes exactly one cell noisy: mariadb at 1 thread.
	if noisyCells != 1 || !strings.Contains(rows[0], "~") || strings.Contains(rows[1], "~") {
		t.Errorf("%d noisy cells; rows %q", noisyCells, rows)
	}
	conf := run.Status.Targets[0].Cells[0].QPS.CIConfidence
	if want := fmt.Sprintf("confidence %s with 4 repetitions", percent(conf)); !strings.Contains(out, want) || conf != 0.875 {
		t.Errorf("the legend lacks %q (status: %v)", want, conf)
	}
	if !strings.Contains(out, "~ noisy") {
		t.Errorf("the legend does not explain ~")
	}
}
