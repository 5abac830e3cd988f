package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
	"github.com/mysqlbench/mysqlbench-operator/internal/resultsdb"
	"github.com/mysqlbench/mysqlbench-operator/internal/testmariadb"
)

var night0 = time.Date(2026, 11, 2, 22, 0, 0, 0, time.UTC)

var spaces = regexp.MustCompile(` +`)

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: ""},
		{in: "90d", want: now.AddDate(0, 0, -90)},
		{in: "2w", want: now.AddDate(0, 0, -14)},
		{in: "36h", want: now.Add(-36 * time.Hour)},
		{in: "2026-01-01", want: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{in: "2026-01-01T10:00:00Z", want: time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)},
		{in: "d", bad: true},
		{in: "-3d", bad: true},
		{in: "yesterday", bad: true},
	} {
		got, err := parseSince(tc.in, now)
		if (err != nil) != tc.bad || !got.Equal(tc.want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.bad)
		}
		if err != nil && !strings.Contains(err.Error(), "90d") {
			t.Errorf("parseSince(%q): %q gives no example", tc.in, err)
		}
	}
}

// point is night i of a series: median m, interval ±1 %, version v.
func point(i int, m float64, v, verdict, targetVerdict string) resultsdb.Point {
	lo, hi := m*0.99, m*1.01
	return resultsdb.Point{Run: fmt.Sprintf("nightly-%02d", i), Start: night0.AddDate(0, 0, i), Phase: "Succeeded",
		ServerVersion: v, ImageDigest: "sha256:" + v, N: 3, Median: m, CILow: &lo, CIHigh: &hi, Verdict: verdict,
		TargetVerdict: targetVerdict}
}

func TestWriteHistory(t *testing.T) {
	series := resultsdb.Series{Namespace: "bench", Schedule: "nightly", Workload: "oltp_read_write", Target: "mysql84",
		Threads: 8, Metric: resultsdb.MetricQPS, Unit: "qps", Points: []resultsdb.Point{
			point(0, 8000, "8.4.6", "NoBaseline", ""),
			point(1, 8040, "8.4.6", "NoRegression", "NoChange"),
			point(2, 7460, "8.4.7", "Regressed", "Regressed"),
		}}
	shift := &changePoint{Shift: compare.Shift{Index: 2, Before: 8020, After: 7460, ChangePercent: -7.2, P: 0.003, Q: 0.006, Regressed: true},
		Run: "nightly-02", Start: night0.AddDate(0, 0, 2)}
	for _, tc := range []struct {
		name  string
		view  historyView
		lines []string // lines the output has, in this order
		not   []string
	}{
		{name: "a change point, verdicts, a new version",
			view: historyView{Metric: resultsdb.MetricQPS, Tested: 1, Series: []seriesView{{Series: series, ChangePoint: shift}}},
			lines: []string{
				"bench/nightly  oltp_read_write  target mysql84  threads 8",
				"NIGHT       RUN         SERVER VERSION  QPS [CI]            VS PREV  VERDICT                          MARKS",
				"2026-11-02  nightly-00  8.4.6           8000 [7920, 8080]            NoBaseline",
				"2026-11-03  nightly-01  8.4.6           8040 [7960, 8120]   +0.5 %   NoRegression (target NoChange)",
				"2026-11-04  nightly-02  8.4.7           7460 [7385, 7535]   -7.2 %   Regressed (target Regressed)     ◆ shift -7.2 % (p=0.003 q=0.006, regression); new version",
				"◆: the first night of a sustained shift in level (1 of 1 series; p-values adjusted over all 1, with the operator's default policy)",
			}},
		{name: "no change point; p95; a confirmation; no interval",
			view: historyView{Metric: resultsdb.MetricP95, Tested: 4, Autocorrelation: 0.21, Series: []seriesView{{Series: resultsdb.Series{
				Namespace: "bench", Target: "mysql84", Workload: "oltp_point_select", Threads: 1, Metric: resultsdb.MetricP95, Unit: "ms",
				Points: []resultsdb.Point{
					{Run: "adhoc", Start: night0, Phase: "Succeeded", N: 1, Median: 2.5},
					{Run: "adhoc-confirm", ConfirmationOf: "adhoc", Start: night0.Add(time.Hour), Phase: "Failed", N: 1, Median: 2.25},
				}}}}},
			lines: []string{
				"bench (runs of no schedule)  oltp_point_select  target mysql84  threads 1",
				"NIGHT       RUN                                 SERVER VERSION  P95 MS [CI]  VS PREV   VERDICT  MARKS",
				"2026-11-02  adhoc                               -               2.500",
				"2026-11-02  adhoc-confirm (confirms adhoc) (Failed)  -               2.250        -10.0 %",
				"(0 of 1 series; p-values adjusted over all 4, after removing the nights' autocorrelation 0.21,",
			},
			not: []string{changeMark + " shift", "new version"}},
		{name: "go-tpc's throughput", view: historyView{Series: []seriesView{{Series: resultsdb.Series{Namespace: "bench", Schedule: "tpcc",
			Target: "m", Threads: 4, Metric: resultsdb.MetricQPS, Unit: "tpmC", Points: []resultsdb.Point{{Run: "r", Start: night0, Median: 52345.6, N: 1}}}}}},
			lines: []string{"TPMC [CI]", "52346"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := writeHistory(&buf, tc.view); err != nil {
				t.Fatal(err)
			}
			// Compared with the columns' padding collapsed: aligning them is the tabwriter's job.
			out := spaces.ReplaceAllString(buf.String(), " ")
			rest := out
			for _, l := range tc.lines {
				l = spaces.ReplaceAllString(l, " ")
				i := strings.Index(rest, l)
				if i < 0 {
					t.Errorf("no %q (in order) in:\n%s", l, out)
					continue
				}
				rest = rest[i+len(l):]
			}
			for _, n := range tc.not {
				if strings.Contains(out, n) {
					t.Errorf("%q in:\n%s", n, out)
				}
			}
		})
	}
}

// historyRun is night i of schedule nightly in namespace bench: targets mariadb and
// mariadb-psoff at 1 and 8 threads, 3 repetitions with 1 % noise. mariadb's throughput is 10 %
// lower from night step on, when its server version changed; the comparisons with the night
// before say so on that night.
func historyRun(i, step int, rng *rand.Rand) *v1.BenchmarkRun {
	start := night0.AddDate(0, 0, i)
	run := &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("nightly-%02d", i), Namespace: nsBench,
			UID:    types.UID(fmt.Sprintf("%08d-0000-4000-8000-000000000001", i)),
			Labels: map[string]string{v1.LabelSchedule: "nightly"}},
		Spec: v1.BenchmarkRunSpec{
			Workload:    v1.Workload{Script: "oltp_point_select", Tables: 4, TableSize: 1000},
			Ladder:      v1.Ladder{Threads: []int32{1, 8}, StepDuration: &metav1.Duration{Duration: time.Minute}},
			Repetitions: ptr.To(int32(3)),
			Targets:     []v1.Target{{Name: "mariadb", Image: "mariadb:11.8"}, {Name: "mariadb-psoff", Image: "mariadb:11.8"}},
		},
		Status: v1.BenchmarkRunStatus{Phase: v1.RunSucceeded, StartTime: ptr.To(metav1.NewTime(start)),
			CompletionTime: ptr.To(metav1.NewTime(start.Add(time.Hour)))},
	}
	for ti, name := range []string{"mariadb", "mariadb-psoff"} {
		version := "11.8.3-MariaDB"
		level := 1.0
		if name == "mariadb" && i >= step {
			version, level = "11.8.4-MariaDB", 0.9
		}
		ts := v1.TargetStatus{Name: name, Phase: v1.TargetSucceeded, ServerVersion: version, ServerImageDigest: "sha256:" + version}
		for rep := int32(1); rep <= 3; rep++ {
			for _, th := range run.Spec.Ladder.Threads {
				q := 1000 * float64(th) * (1 + 0.1*float64(ti)) * level * (1 + 0.01*rng.NormFloat64())
				ts.Steps = append(ts.Steps, v1.StepResult{Threads: th, Repetition: rep, TPS: q / 20, QPS: v1.QPS{Total: q, Read: q},
					Latency: v1.Latency{MinMs: 0.1, AvgMs: 1, P95Ms: 2 / level, MaxMs: 10}, DurationSeconds: 60})
			}
		}
		run.Status.Targets = append(run.Status.Targets, ts)
	}
	if i > 0 {
		verdict, target := v1.VerdictNoRegression, v1.CellNoChange
		if i == step {
			verdict, target = v1.VerdictRegressed, v1.CellRegressed
		}
		run.Status.Comparison = &v1.Comparison{Run: run.Name, Baseline: fmt.Sprintf("nightly-%02d", i-1), Verdict: verdict,
			Targets: []v1.TargetChange{{Target: "mariadb", Verdict: target, QPSRatio: 1}, {Target: "mariadb-psoff", Verdict: v1.CellNoChange, QPSRatio: 1}}}
	}
	return run
}

// historyDatabase starts a MariaDB, has the "operator" store nights runs in it (a 10 % step of
// mariadb at night step) and returns the server and a reader's configuration.
func historyDatabase(t *testing.T, nights, step int) (*testmariadb.Server, *mysql.Config, string) {
	t.Helper()
	srv := testmariadb.Start(t, testmariadb.Look(t))
	password := srv.User(t, "bench", "results")
	cfg, err := resultsdb.Config(map[string][]byte{"host": []byte("127.0.0.1"), "port": []byte(strconv.Itoa(srv.Port)),
		"user": []byte("bench"), "password": []byte(password), "database": []byte("results")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store, err := resultsdb.Open(ctx, cfg, resultsdb.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	rng := rand.New(rand.NewPCG(3, 3))
	for i := range nights {
		rec, err := resultsdb.Build(historyRun(i, step, rng), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Write(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	return srv, cfg, password
}

func TestHistoryFromTheResultsDatabase(t *testing.T) {
	const nights, step = 14, 8
	srv, cfg, password := historyDatabase(t, nights, step)
	dsn := cfg.FormatDSN()
	stepNight := night0.AddDate(0, 0, step).Format(time.DateOnly)

	checkTable := func(t *testing.T, out string) {
		t.Helper()
		blocks := strings.Split(out, "\n\n")
		if len(blocks) != 5 { // four series and the legend
			t.Fatalf("%d blocks, want one per target and thread count and the legend:\n%s", len(blocks), out)
		}
		for _, b := range blocks[:4] {
			stepped := strings.Contains(b, "target mariadb ")
			rows := 0
			for _, l := range strings.Split(b, "\n") {
				if strings.HasPrefix(l, "2026-") {
					rows++
				}
			}
			if rows != nights {
				t.Errorf("%d nights in block:\n%s", rows, b)
			}
			row := lineStarting(b, stepNight)
			switch {
			case stepped && (!strings.Contains(row, "◆ shift -") || !strings.Contains(row, "regression") ||
				!strings.Contains(row, "Regressed (target Regressed)") || !strings.Contains(row, "11.8.4-MariaDB") ||
				!strings.Contains(row, "new version")):
				t.Errorf("the step night's row %q lacks the change point, the verdict or the new version", row)
			case stepped && strings.Count(b, changeMark) != 1:
				t.Errorf("block with %d change points, want 1:\n%s", strings.Count(b, changeMark), b)
			case !stepped && strings.Contains(b, changeMark+" shift"):
				t.Errorf("a change point in a flat series:\n%s", b)
			case !stepped && !strings.Contains(row, "Regressed (target NoChange)"):
				t.Errorf("row %q: want the run's verdict and the target's", row)
			}
		}
		if !strings.Contains(blocks[4], "(2 of 4 series; p-values adjusted over all 4") {
			t.Errorf("legend %q", blocks[4])
		}
	}

	t.Run("table", func(t *testing.T) {
		out, _, err := runPlugin(context.Background(), t, "-n", nsBench, "history", "nightly", "--database-dsn", dsn)
		if err != nil {
			t.Fatal(err)
		}
		checkTable(t, out)
		if row := lineStarting(out, night0.Format(time.DateOnly)); !strings.Contains(row, "nightly-00") || strings.Contains(row, "%") {
			t.Errorf("the first night %q: no change against a previous night", row)
		}
	})

	t.Run("environment, threads, json", func(t *testing.T) {
		t.Setenv(DSNEnv, dsn)
		out, _, err := runPlugin(context.Background(), t, "-n", nsBench, "history", "nightly", "--threads", "8", "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		var view historyView
		if err := json.Unmarshal([]byte(out), &view); err != nil {
			t.Fatal(err)
		}
		if len(view.Series) != 2 || view.Tested != 4 {
			t.Fatalf("%d series shown of %d tested, want 2 of 4 (--threads 8 only shows)", len(view.Series), view.Tested)
		}
		for _, s := range view.Series {
			if s.Threads != 8 || len(s.Points) != nights {
				t.Errorf("series %s@%d with %d points", s.Target, s.Threads, len(s.Points))
			}
			cp := s.ChangePoint
			if s.Target == "mariadb" && (cp == nil || cp.Index != step || cp.Run != fmt.Sprintf("nightly-%02d", step) ||
				cp.ChangePercent > -8 || cp.ChangePercent < -12 || !cp.Regressed) {
				t.Errorf("mariadb's change point %+v, want -10 %% at night %d", cp, step)
			}
			if s.Target == "mariadb-psoff" && cp != nil {
				t.Errorf("mariadb-psoff's change point %+v, want none", cp)
			}
		}
	})

	t.Run("target, since, limit, p95", func(t *testing.T) {
		out, _, err := runPlugin(context.Background(), t, "history", "--target", "mariadb", "--metric", "p95",
			"--since", night0.AddDate(0, 0, 2).Format(time.DateOnly), "--limit", "10", "--database-dsn", dsn)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(out, "target mariadb "); n != 2 || strings.Contains(out, "nightly-03 ") || !strings.Contains(out, "nightly-04 ") ||
			!strings.Contains(out, "P95 MS [CI]") || !strings.Contains(out, "2.222") {
			t.Errorf("want mariadb's two series of the last 10 nights' p95 (2.222 ms after the step)")
		}
	})

	t.Run("errors say what to fix", func(t *testing.T) {
		t.Setenv(DSNEnv, "")
		_, _, err := runPlugin(context.Background(), t, "-n", nsBench, "history", "nightly")
		checkError(t, "no database", err, "no results database given", "--database-secret", "--database-dsn", DSNEnv)
		_, _, err = runPlugin(context.Background(), t, "-n", nsBench, "history", "weekly", "--database-dsn", dsn)
		checkError(t, "unknown schedule", err, "no runs of schedule weekly in namespace bench", "127.0.0.1:"+strconv.Itoa(srv.Port),
			"nightly (14 runs, newest "+night0.AddDate(0, 0, nights-1).Format(time.DateOnly)+")")
		_, _, err = runPlugin(context.Background(), t, "-n", "prod", "history", "nightly", "--database-dsn", dsn)
		checkError(t, "unknown namespace", err, "no runs of namespace prod, only of bench")
		_, _, err = runPlugin(context.Background(), t, "-n", nsBench, "history", "nightly", "--metric", "tpmC", "--database-dsn", dsn)
		checkError(t, "no tpmC", err, "with tpmC", "nightly (14 runs")
		_, _, err = runPlugin(context.Background(), t, "-n", nsBench, "history", "nightly", "--threads", "64", "--database-dsn", dsn)
		checkError(t, "no such threads", err, "--threads 64", "threads 1, 8")
		closed := cfg.Clone()
		closed.Addr = "127.0.0.1:1"
		_, _, err = runPlugin(context.Background(), t, "history", "nightly", "--database-dsn", closed.FormatDSN())
		checkError(t, "nothing listens", err, "bench@127.0.0.1:1/results")
		if err != nil && strings.Contains(err.Error(), password) {
			t.Errorf("the error shows the password: %v", err)
		}
		srv.MustSQL(t, "CREATE DATABASE other; GRANT ALL ON other.* TO 'bench'@'127.0.0.1'")
		wrong := cfg.Clone()
		wrong.DBName = "other"
		_, _, err = runPlugin(context.Background(), t, "history", "nightly", "--database-dsn", wrong.FormatDSN())
		checkError(t, "another database", err, "database other has no mysqlbench schema", "is this the operator's results database?")
		for _, c := range []struct {
			args  []string
			wants []string
		}{
			{[]string{"history"}, []string{"needs SCHEDULE or --target NAME"}},
			{[]string{"history", "nightly", "-o", "csv"}, []string{`"csv"`, "table, json, yaml"}},
			{[]string{"history", "nightly", "--metric", "tps"}, []string{`"tps"`, "qps, tpmC or p95"}},
			{[]string{"history", "nightly", "--since", "soon"}, []string{`"soon"`, "90d"}},
			{[]string{"history", "nightly", "--database-dsn", dsn, "--database-secret", "x"}, []string{"not both"}},
			{[]string{"history", "nightly", "--database-dsn", "nonsense"}, []string{"--database-dsn", "user:password@tcp(host:3306)"}},
		} {
			_, _, err := runPlugin(context.Background(), t, c.args...)
			checkError(t, strings.Join(c.args, " "), err, c.wants...)
		}
	})

	t.Run("database secret", func(t *testing.T) {
		needCluster(t)
		ctx := context.Background()
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "results-db", Namespace: nsStuck},
			Data: map[string][]byte{"host": []byte("127.0.0.1"), "port": []byte(strconv.Itoa(srv.Port)), "user": []byte("bench"),
				"password": []byte(password), "database": []byte("results")}}
		if err := k8s.Create(ctx, secret); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k8s.Delete(ctx, secret) })
		out, _, err := kubectlMysqlbench(t, "history", "nightly", "--database-secret", nsStuck+"/results-db")
		if err != nil {
			t.Fatal(err)
		}
		checkTable(t, out)
		_, _, err = kubectlMysqlbench(t, "history", "nightly", "--database-secret", "results-db")
		checkError(t, "the Secret in -n's namespace", err, `Secret "results-db" not found in namespace "bench"`, "NAMESPACE/NAME")
		bad := secret.DeepCopy()
		bad.ObjectMeta = metav1.ObjectMeta{Name: "results-db-typo", Namespace: nsBench}
		bad.Data["hostname"] = []byte("x")
		if err := k8s.Create(ctx, bad); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k8s.Delete(ctx, bad) })
		_, _, err = kubectlMysqlbench(t, "history", "nightly", "--database-secret", "results-db-typo")
		checkError(t, "a Secret with an unknown key", err, "Secret bench/results-db-typo", "unknown keys hostname")
	})
}

// A Regressed night says what became of its confirmation; the same condition reason without a
// confirmation run (confirmation off) says nothing more. An Inconclusive night whose suspects
// were re-measured says what that found.
func TestVerdictOfSaysTheConfirmation(t *testing.T) {
	for _, tc := range []struct {
		p    resultsdb.Point
		want string
	}{
		{resultsdb.Point{}, ""},
		{resultsdb.Point{Verdict: "NoRegression", TargetVerdict: "NoChange"}, "NoRegression (target NoChange)"},
		{resultsdb.Point{Verdict: "Regressed", TargetVerdict: "Regressed", RegressedReason: v1.ReasonRegressed, Confirmed: true},
			"Regressed (target Regressed), confirmed"},
		{resultsdb.Point{Verdict: "Regressed", RegressedReason: v1.ReasonRegressed}, "Regressed"},
		{resultsdb.Point{Verdict: "Regressed", RegressedReason: v1.ReasonRegressionNotConfirmed}, "Regressed, not confirmed"},
		{resultsdb.Point{Verdict: "Regressed", RegressedReason: v1.ReasonAwaitingConfirmation}, "Regressed, awaiting confirmation"},
		{resultsdb.Point{Verdict: "Regressed", RegressedReason: v1.ReasonConfirmationInconclusive}, "Regressed, unconfirmed"},
		{resultsdb.Point{Verdict: "Regressed", RegressedReason: v1.ReasonRegressionUnconfirmed}, "Regressed, unconfirmed"},
		{resultsdb.Point{Verdict: "Inconclusive", RegressedReason: v1.ReasonInconclusive}, "Inconclusive"},
		{resultsdb.Point{Verdict: "Inconclusive", RegressedReason: v1.ReasonRegressed, Confirmed: true}, "Inconclusive, regression confirmed"},
		{resultsdb.Point{Verdict: "Inconclusive", RegressedReason: v1.ReasonRegressionNotConfirmed}, "Inconclusive, no regression found again"},
		{resultsdb.Point{Verdict: "Inconclusive", RegressedReason: v1.ReasonAwaitingConfirmation}, "Inconclusive, awaiting confirmation"},
	} {
		if got := verdictOf(tc.p); got != tc.want {
			t.Errorf("verdictOf(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}
