package resultsdb_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/internal/resultsdb"
)

// HistoryOf answers TestHistory's queries over the same runs as the database does, without one.
func TestHistoryOf(t *testing.T) {
	recs := historyRecords(t)
	for _, tc := range historyCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resultsdb.HistoryOf(recs, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			var series []string
			for _, se := range got {
				series = append(series, fmt.Sprintf("%s/%s@%d:%d", se.Schedule, se.Target, se.Threads, len(se.Points)))
			}
			if strings.Join(series, " ") != strings.Join(tc.series, " ") {
				t.Fatalf("series %v, want %v", series, tc.series)
			}
			if tc.runs != nil {
				var runs []string
				for _, p := range got[0].Points {
					runs = append(runs, p.Run)
				}
				if strings.Join(runs, " ") != strings.Join(tc.runs, " ") {
					t.Errorf("runs %v, want %v", runs, tc.runs)
				}
			}
		})
	}

	got, err := resultsdb.HistoryOf(recs, resultsdb.HistoryQuery{Namespace: "bench", Schedule: "nightly", Target: "mariadb-0", Threads: []int{2}})
	if err != nil || len(got) != 1 {
		t.Fatalf("%v %v", got, err)
	}
	se := got[0]
	if se.Workload != "oltp_read_write" || se.Unit != "qps" || se.Metric != resultsdb.MetricQPS {
		t.Errorf("series %+v", se)
	}
	p := se.Points[1]
	if p.Median != 2004 || p.N != 3 || p.CILow == nil || p.CIHigh == nil || *p.CILow > 2004 || *p.CIHigh < 2004 ||
		p.ServerVersion != "11.8.3-MariaDB-deb13" || !strings.HasPrefix(p.ImageDigest, "sha256:") || !p.Start.Equal(t0.AddDate(0, 0, 1)) ||
		p.Verdict != "NoRegression" || p.TargetVerdict != "NoChange" || p.UID != uid(2) || p.Phase != "Succeeded" {
		t.Errorf("point %+v", p)
	}
	if _, err := resultsdb.HistoryOf(recs, resultsdb.HistoryQuery{Schedule: "nightly", Metric: "tps"}); err == nil {
		t.Error("metric tps accepted")
	}
	scheds := resultsdb.SchedulesOf(recs, "bench")
	if len(scheds) != 2 || scheds[0].Schedule != "nightly" || scheds[0].Runs != 8 || scheds[1].Schedule != "weekly" {
		t.Errorf("schedules %+v", scheds)
	}
}
