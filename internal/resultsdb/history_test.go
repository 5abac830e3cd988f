package resultsdb_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/resultsdb"
)

// nightly is night i of a schedule: a fixture run started i days after t0, its throughput
// scaled by qps, compared with the night before (verdict; "" for none).
func nightly(tb testing.TB, schedule string, i int, qps float64, verdict v1.Verdict, edit ...func(*v1.BenchmarkRun)) *resultsdb.Record {
	tb.Helper()
	n := i + 1
	if schedule != "nightly" {
		n += 500
	}
	run, doc := fixture(tb, uid(n), shape{targets: 2, threads: 2, reps: 3}, qps)
	run.Name = fmt.Sprintf("%s-%02d", schedule, i)
	run.Labels[v1.LabelSchedule] = schedule
	start := t0.AddDate(0, 0, i)
	run.Status.StartTime = ptr.To(metav1.NewTime(start))
	run.Status.CompletionTime = ptr.To(metav1.NewTime(start.Add(3 * time.Hour)))
	if verdict != "" {
		run.Status.Comparison = &v1.Comparison{Run: run.Name, Baseline: fmt.Sprintf("%s-%02d", schedule, i-1), Verdict: verdict,
			Message: "fixture " + string(verdict),
			Targets: []v1.TargetChange{{Target: "mariadb-0", Verdict: v1.CellNoChange, QPSRatio: 1}}}
	}
	for _, e := range edit {
		e(run)
	}
	rec, err := resultsdb.Build(run, doc)
	if err != nil {
		tb.Fatal(err)
	}
	return rec
}

func write(tb testing.TB, s *resultsdb.Store, recs ...*resultsdb.Record) {
	tb.Helper()
	for _, r := range recs {
		if _, err := s.Write(context.Background(), r); err != nil {
			tb.Fatal(err)
		}
	}
}

func TestHistory(t *testing.T) {
	_, cfg := database(t)
	w := open(t, cfg, resultsdb.OpenOptions{})
	write(t, w, historyRecords(t)...)
	s := open(t, cfg, resultsdb.OpenOptions{ReadOnly: true})
	ctx := context.Background()

	for _, tc := range historyCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.History(ctx, tc.q)
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

	// What a point holds.
	got, err := s.History(ctx, resultsdb.HistoryQuery{Namespace: "bench", Schedule: "nightly", Target: "mariadb-0", Threads: []int{2}})
	if err != nil || len(got) != 1 {
		t.Fatalf("%v %v", got, err)
	}
	se := got[0]
	if se.Workload != "oltp_read_write" || se.Unit != "qps" || se.Metric != resultsdb.MetricQPS {
		t.Errorf("series %+v", se)
	}
	p := se.Points[1]
	// The fixture's qps at 2 threads, repetitions 1-3: 2·(1000+rep); the median is repetition 2's.
	if p.Median != 2004 || p.N != 3 || p.CILow == nil || p.CIHigh == nil || *p.CILow > 2004 || *p.CIHigh < 2004 ||
		p.ServerVersion != "11.8.3-MariaDB-deb13" || !strings.HasPrefix(p.ImageDigest, "sha256:") || !p.Start.Equal(t0.AddDate(0, 0, 1)) ||
		p.Verdict != "NoRegression" || p.TargetVerdict != "NoChange" || p.UID != uid(2) || p.Phase != "Succeeded" {
		t.Errorf("point %+v", p)
	}
	if p := se.Points[0]; p.Verdict != "NoBaseline" {
		t.Errorf("first night's verdict %q", p.Verdict)
	}
	// mariadb-1 is not in the comparisons' targets: no target verdict.
	got, _ = s.History(ctx, resultsdb.HistoryQuery{Namespace: "bench", Schedule: "nightly", Target: "mariadb-1", Threads: []int{2}})
	if p := got[0].Points[1]; p.Verdict != "NoRegression" || p.TargetVerdict != "" {
		t.Errorf("mariadb-1's point %+v", p)
	}

	scheds, err := s.Schedules(ctx, "bench")
	if err != nil || len(scheds) != 2 || scheds[0].Schedule != "nightly" || scheds[0].Runs != 8 || scheds[1].Schedule != "weekly" {
		t.Errorf("schedules %+v %v", scheds, err)
	}
	if _, err := s.History(ctx, resultsdb.HistoryQuery{Schedule: "nightly"}); err == nil || !strings.Contains(err.Error(), "namespace") {
		t.Errorf("a schedule without its namespace: %v", err)
	}
	if _, err := s.History(ctx, resultsdb.HistoryQuery{Namespace: "bench", Schedule: "nightly", Metric: "tps"}); err == nil ||
		!strings.Contains(err.Error(), "qps, tpmC, p95") {
		t.Errorf("metric tps: %v", err)
	}
}

// A reader never migrates nor creates: a database without the schema is named as such.
func TestOpenReadOnly(t *testing.T) {
	srv, cfg := database(t)
	ctx := context.Background()
	_, err := resultsdb.Open(ctx, cfg, resultsdb.OpenOptions{ReadOnly: true})
	if !errors.Is(err, resultsdb.ErrNoSchema) || !strings.Contains(err.Error(), "database history does not exist") ||
		!strings.Contains(err.Error(), "is this the operator's results database?") {
		t.Errorf("a missing database: %v", err)
	}
	srv.MustSQL(t, "CREATE DATABASE history")
	_, err = resultsdb.Open(ctx, cfg, resultsdb.OpenOptions{ReadOnly: true})
	if !errors.Is(err, resultsdb.ErrNoSchema) || !strings.Contains(err.Error(), "database history has no mysqlbench schema") {
		t.Errorf("an empty database: %v", err)
	}
	if n := srv.MustSQL(t, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'history'"); n != "0" {
		t.Errorf("the reader created %s tables", n)
	}
	open(t, cfg, resultsdb.OpenOptions{UpTo: 1})
	_, err = resultsdb.Open(ctx, cfg, resultsdb.OpenOptions{ReadOnly: true})
	if err == nil || !strings.Contains(err.Error(), "schema version 1 is older") {
		t.Errorf("schema version 1: %v", err)
	}
	open(t, cfg, resultsdb.OpenOptions{})
	s := open(t, cfg, resultsdb.OpenOptions{ReadOnly: true})
	if v, err := s.Version(ctx); err != nil || v != 3 {
		t.Errorf("version %d %v", v, err)
	}
	// The error names the server, never the password.
	bad := cfg.Clone()
	bad.Passwd = "wrong-secret"
	_, err = resultsdb.Open(ctx, bad, resultsdb.OpenOptions{ReadOnly: true})
	var me *mysql.MySQLError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), cfg.Addr) || strings.Contains(err.Error(), "wrong-secret") {
		t.Errorf("a wrong password: %v", err)
	}
}

// historyRecords are the runs TestHistory stores and TestHistoryOf reads: six nights of
// schedule nightly, a confirmation of night 5, a failed night and a run of schedule weekly.
func historyRecords(t *testing.T) []*resultsdb.Record {
	var recs []*resultsdb.Record
	for i := range 6 {
		verdict := v1.VerdictNoRegression
		if i == 0 {
			verdict = v1.VerdictNoBaseline
		}
		recs = append(recs, nightly(t, "nightly", i, 1, verdict))
	}
	recs = append(recs,
		// A confirmation of night 5, a failed night and another schedule's run of the same target.
		nightly(t, "nightly", 9, 1, v1.VerdictRegressed, func(r *v1.BenchmarkRun) {
			// Labelled as the schedule labels its confirmation runs.
			r.Name = "nightly-05-confirm"
			r.Labels[v1.LabelConfirmationOf] = "nightly"
			r.Labels[v1.LabelConfirms] = "nightly-05"
		}),
		nightly(t, "nightly", 10, 1, "", func(r *v1.BenchmarkRun) { r.Status.Phase = v1.RunFailed }),
		nightly(t, "weekly", 3, 2, ""))
	return recs
}

// historyCase is a query and the series it finds in historyRecords.
type historyCase struct {
	name string
	q    resultsdb.HistoryQuery
	// series as "schedule/target@threads:points", runs of the first series.
	series []string
	runs   []string
}

func historyCases() []historyCase {
	return []historyCase{
		{name: "a schedule", q: resultsdb.HistoryQuery{Namespace: "bench", Schedule: "nightly"},
			series: []string{"nightly/mariadb-0@1:6", "nightly/mariadb-0@2:6", "nightly/mariadb-1@1:6", "nightly/mariadb-1@2:6"},
			runs:   []string{"nightly-00", "nightly-01", "nightly-02", "nightly-03", "nightly-04", "nightly-05"}},
		{name: "with its confirmations and failures", q: resultsdb.HistoryQuery{Namespace: "bench", Schedule: "nightly",
			Threads: []int{2}, Target: "mariadb-1", Confirmations: true, Phases: []string{"Succeeded", "Failed"}},
			series: []string{"nightly/mariadb-1@2:8"},
			runs: []string{"nightly-00", "nightly-01", "nightly-02", "nightly-03", "nightly-04", "nightly-05",
				"nightly-05-confirm", "nightly-10"}},
		{name: "a target across schedules", q: resultsdb.HistoryQuery{Target: "mariadb-0", Threads: []int{1}},
			series: []string{"nightly/mariadb-0@1:6", "weekly/mariadb-0@1:1"}},
		{name: "since, newest nights", q: resultsdb.HistoryQuery{Namespace: "bench", Schedule: "nightly", Threads: []int{1},
			Target: "mariadb-0", Since: t0.AddDate(0, 0, 1), Nights: 3},
			series: []string{"nightly/mariadb-0@1:3"}, runs: []string{"nightly-03", "nightly-04", "nightly-05"}},
		{name: "p95", q: resultsdb.HistoryQuery{Namespace: "bench", Schedule: "nightly", Threads: []int{2}, Target: "mariadb-0",
			Metric: resultsdb.MetricP95}, series: []string{"nightly/mariadb-0@2:6"}},
		{name: "tpmC of a sysbench schedule: none", q: resultsdb.HistoryQuery{Namespace: "bench", Schedule: "nightly",
			Metric: resultsdb.MetricTpmC}},
		{name: "another namespace: none", q: resultsdb.HistoryQuery{Namespace: "prod", Schedule: "nightly"}},
	}
}

// confirmedRecords are nights of schedule "confirm" whose Regressed verdicts ended differently:
// night 1 confirmed by a stored confirmation run, night 2 alarmed with confirmation off (the same
// condition reason, no confirmation run), night 3 still awaiting its confirmation.
func confirmedRecords(t *testing.T) []*resultsdb.Record {
	regressed := func(reason string) func(*v1.BenchmarkRun) {
		return func(r *v1.BenchmarkRun) {
			status := metav1.ConditionTrue
			if reason == v1.ReasonAwaitingConfirmation {
				status = metav1.ConditionUnknown
			}
			r.Status.Conditions = append(r.Status.Conditions, metav1.Condition{Type: v1.ConditionRegressed, Status: status,
				Reason: reason, Message: "fixture", LastTransitionTime: metav1.NewTime(t0)})
		}
	}
	return []*resultsdb.Record{
		nightly(t, "confirm", 0, 1, v1.VerdictNoBaseline),
		nightly(t, "confirm", 1, 0.9, v1.VerdictRegressed, regressed(v1.ReasonRegressed)),
		nightly(t, "confirm", 2, 0.9, v1.VerdictRegressed, regressed(v1.ReasonRegressed)),
		nightly(t, "confirm", 3, 0.9, v1.VerdictRegressed, regressed(v1.ReasonAwaitingConfirmation)),
		nightly(t, "confirm", 4, 0.9, v1.VerdictRegressed, func(r *v1.BenchmarkRun) {
			r.Name = "confirm-01-confirm"
			r.Labels[v1.LabelConfirmationOf] = "confirm"
			r.Labels[v1.LabelConfirms] = "confirm-01"
		}),
	}
}

// checkConfirmed checks what the history says of each night's confirmation.
func checkConfirmed(t *testing.T, got []resultsdb.Series) {
	t.Helper()
	if len(got) == 0 {
		t.Fatal("no series")
	}
	type want struct {
		reason    string
		confirmed bool
	}
	wants := map[string]want{"confirm-00": {}, "confirm-01": {v1.ReasonRegressed, true},
		"confirm-02": {v1.ReasonRegressed, false}, "confirm-03": {v1.ReasonAwaitingConfirmation, false}}
	for _, p := range got[0].Points {
		w, ok := wants[p.Run]
		if !ok {
			t.Errorf("unexpected run %s in the history", p.Run)
			continue
		}
		delete(wants, p.Run)
		if p.RegressedReason != w.reason || p.Confirmed != w.confirmed {
			t.Errorf("%s: reason %q confirmed %v, want %q %v", p.Run, p.RegressedReason, p.Confirmed, w.reason, w.confirmed)
		}
	}
	if len(wants) > 0 {
		t.Errorf("runs missing from the history: %v", wants)
	}
}

func TestHistoryConfirmed(t *testing.T) {
	recs := confirmedRecords(t)
	q := resultsdb.HistoryQuery{Namespace: "bench", Schedule: "confirm", Target: "mariadb-0", Threads: []int{1}}
	t.Run("records", func(t *testing.T) {
		got, err := resultsdb.HistoryOf(recs, q)
		if err != nil {
			t.Fatal(err)
		}
		checkConfirmed(t, got)
	})
	t.Run("database", func(t *testing.T) {
		_, cfg := database(t)
		write(t, open(t, cfg, resultsdb.OpenOptions{}), recs...)
		got, err := open(t, cfg, resultsdb.OpenOptions{ReadOnly: true}).History(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		checkConfirmed(t, got)
	})
}
