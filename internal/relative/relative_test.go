package relative

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

func golden(t *testing.T, name string) *results.Doc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "report", "testdata", name, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := results.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestOf(t *testing.T) {
	suite := golden(t, "suite")
	for _, tc := range []struct {
		name      string
		doc       *results.Doc
		base      string
		specBase  string
		wantBase  string
		wantRows  []string // workload@threads
		wantRatio float64  // of every cell
		wantErr   string
	}{
		{name: "suite, first target", doc: suite, wantBase: "mysql57", wantRatio: 0.9,
			wantRows: []string{"points@1", "points@8", "points@64", "rw@1", "rw@8", "rw@64"}},
		{name: "suite, spec.baseTarget", doc: suite, specBase: "ps80", wantBase: "ps80", wantRatio: 1 / 0.9,
			wantRows: []string{"points@1", "points@8", "points@64", "rw@1", "rw@8", "rw@64"}},
		{name: "suite, asked base over spec's", doc: suite, base: "mysql57", specBase: "ps80", wantBase: "mysql57", wantRatio: 0.9,
			wantRows: []string{"points@1", "points@8", "points@64", "rw@1", "rw@8", "rw@64"}},
		{name: "unknown base", doc: suite, base: "mysql80", wantErr: `base target "mysql80": run pk-lookup has targets [mysql57 ps80]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := *tc.doc
			doc.BaseTarget = tc.specBase
			tab, err := Of(&doc, tc.base)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tab.Base != tc.wantBase || len(tab.Targets) != 1 {
				t.Fatalf("base %s, targets %v", tab.Base, tab.Targets)
			}
			var rows []string
			for _, r := range tab.Rows {
				rows = append(rows, r.Workload+"@"+itoa(r.Threads))
				c := r.Cells[0]
				if !c.OK || c.Ratio < tc.wantRatio*0.995 || c.Ratio > tc.wantRatio*1.005 || !c.HasInterval() || c.Low > c.Ratio || c.High < c.Ratio {
					t.Errorf("%s@%d: %+v, want %.3f inside its interval", r.Workload, r.Threads, c, tc.wantRatio)
				}
			}
			if strings.Join(rows, " ") != strings.Join(tc.wantRows, " ") {
				t.Errorf("rows %v, want %v", rows, tc.wantRows)
			}
		})
	}
}

// A run of one workload has one row per thread count, its cells the report's "vs" column.
func TestOfOneWorkload(t *testing.T) {
	tab, err := Of(golden(t, "repetitions"), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tab.Rows {
		if r.Workload != "" || len(r.Cells) != len(tab.Targets) {
			t.Errorf("row %+v", r)
		}
	}
	if len(tab.Rows) == 0 {
		t.Fatal("no rows")
	}
}

func TestCellText(t *testing.T) {
	for _, tc := range []struct {
		c    Cell
		want string
	}{
		{Cell{}, "-"},
		{Cell{OK: true, Ratio: 0.9}, "x0.90 (no interval)"},
		{Cell{OK: true, Ratio: 0.9, Low: 0.87, High: 0.93}, "x0.90 [0.87, 0.93]"},
		{Cell{OK: true, Ratio: 0.99, Low: 0.95, High: 1.03}, "x0.99 [0.95, 1.03] within noise"},
	} {
		if got := tc.c.Text(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
