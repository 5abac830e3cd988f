package report

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// Everything Render returns is drawn from results.json: rendered again from it, each key comes out
// byte for byte as Render wrote it, whatever Render had to leave out.
func TestRerenderGivesWhatRenderWrote(t *testing.T) {
	chartLeftOut := func() (*v1alpha1.BenchmarkRun, map[string]string) {
		run := hugeRun()
		// As in TestRenderLeavesTheChartOutBeforeAnyNumber: messages just long enough that the
		// numbers fit and the chart does not.
		size := func(k int) int {
			for i := range run.Status.Targets {
				run.Status.Targets[i].Message = strings.Repeat("m", k)
			}
			with, _ := encodeData(ptr(buildDoc(run)), true)
			return dataSize(with)
		}
		k := 0
		for step := 1 << 16; step > 0; step /= 2 {
			if size(k+step) <= MaxConfigMapBytes {
				k += step
			}
		}
		size(k + 1)
		return run, nil
	}
	for _, tc := range []struct {
		name    string
		run     func() (*v1alpha1.BenchmarkRun, map[string]string)
		notes   string // a note results.json must have, "" for none
		dropped bool   // results.json must list what was dropped
	}{
		{"two targets, series and server counters", func() (*v1alpha1.BenchmarkRun, map[string]string) {
			run := fixtureRun(-1)
			return run, storedServer(t, run, storedSeries(t, run, 5, 1<<20))
		}, "", false},
		{"failed target", func() (*v1alpha1.BenchmarkRun, map[string]string) {
			run := fixtureRun(1)
			return run, storedSeries(t, run, 5, 1<<20)
		}, "", false},
		{"repetitions", func() (*v1alpha1.BenchmarkRun, map[string]string) {
			run := repeatedRun()
			return run, storedServer(t, run, storedSeries(t, run, 5, 1<<20))
		}, "", false},
		{"over duration", func() (*v1alpha1.BenchmarkRun, map[string]string) {
			run := overDurationRun(repeatedRun(), 3)
			return run, storedSeries(t, run, 5, 1<<20)
		}, "", false},
		{"go-tpc", func() (*v1alpha1.BenchmarkRun, map[string]string) { return tpccRun(), nil }, "", false},
		{"series dropped to fit", func() (*v1alpha1.BenchmarkRun, map[string]string) {
			run := hugeRun()
			budget := SeriesBudget(run.Spec)
			return run, storeEach(t, run, func(ti int) int { return (2 + ti%2*2) * budget })
		}, "", true},
		{"chart left out", chartLeftOut, chartNote + "is left out", false},
		{"unusable series key", func() (*v1alpha1.BenchmarkRun, map[string]string) {
			run := fixtureRun(-1)
			stored := storedSeries(t, run, 5, 1<<20)
			stored[SeriesKey("mysql57", 1, 1)] = "{not json"
			return run, stored
		}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, stored := tc.run()
			data, err := Render(run, stored)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := results.Decode([]byte(data[KeyResultsJSON]))
			if err != nil {
				t.Fatal(err)
			}
			if tc.notes != "" && !slices.ContainsFunc(doc.Notes, func(n string) bool { return strings.HasPrefix(n, tc.notes) }) {
				t.Fatalf("results.json notes %q lack %q: the case does not test what it says", doc.Notes, tc.notes)
			}
			if tc.dropped != (len(doc.Dropped) > 0) {
				t.Fatalf("results.json dropped %v: the case does not test what it says", doc.Dropped)
			}
			again, err := Rerender(doc)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := slices.Sorted(maps.Keys(again)), slices.Sorted(maps.Keys(data)); !slices.Equal(got, want) {
				t.Fatalf("keys %v, Render wrote %v", got, want)
			}
			for k, v := range data {
				if again[k] != v {
					t.Errorf("%s rendered again differs from Render's (%d and %d bytes)", k, len(again[k]), len(v))
				}
			}
		})
	}
	if _, err := Rerender(nil); err == nil {
		t.Error("Rerender(nil): no error")
	}
}
