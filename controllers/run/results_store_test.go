package run_test

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/resultsdb"
	"github.com/mysqlbench/mysqlbench-operator/internal/sink"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
	"github.com/mysqlbench/mysqlbench-operator/internal/testmariadb"
)

// resultsDatabase starts a MariaDB on loopback and a Secret in ns naming a database on it that
// the operator may create; it returns the server, the Secret's name and a root-free connection
// for the test's queries.
func resultsDatabase(t *testing.T, ns string) (*testmariadb.Server, types.NamespacedName, *sql.DB) {
	t.Helper()
	srv := testmariadb.Start(t, testmariadb.Look(t))
	password := srv.User(t, "bench", "history")
	data := map[string]string{"host": "127.0.0.1", "port": strconv.Itoa(srv.Port), "user": "bench",
		"password": password, "database": "history"}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "results-db", Namespace: ns}, StringData: data}
	if err := k8s.Create(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	bytes := map[string][]byte{}
	for k, v := range data {
		bytes[k] = []byte(v)
	}
	cfg, err := resultsdb.Config(bytes)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return srv, client.ObjectKeyFromObject(secret), db
}

// storedRows counts a run's rows in runs and steps, by its UID.
func storedRows(t *testing.T, db *sql.DB, uid types.UID) (runs, steps int) {
	t.Helper()
	if err := db.QueryRow("SELECT COUNT(*) FROM runs WHERE uid = ?", string(uid)).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT COUNT(*) FROM steps WHERE run_uid = ?", string(uid)).Scan(&steps); err != nil {
		t.Fatal(err)
	}
	return runs, steps
}

func stepsOf(run *v1.BenchmarkRun) int {
	n := 0
	for _, t := range run.Status.Targets {
		n += len(t.Steps)
	}
	return n
}

func resultsStored(status metav1.ConditionStatus, reason string) func(*v1.BenchmarkRun) bool {
	return func(r *v1.BenchmarkRun) bool {
		c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionResultsStored)
		return c != nil && c.Status == status && c.Reason == reason
	}
}

// versions records every version of a run's status the API server serves through a watch:
// whether it had finished, and its ResultsStored condition.
type versions struct {
	mu   sync.Mutex
	seen []string
}

func watchVersions(t *testing.T, ns, name string) *versions {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: testenv.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, &v1.BenchmarkRunList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	v := &versions{}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			run, ok := ev.Object.(*v1.BenchmarkRun)
			if !ok || run.Name != name || ev.Type == watch.Deleted {
				continue
			}
			stored := "-"
			if c := meta.FindStatusCondition(run.Status.Conditions, v1.ConditionResultsStored); c != nil {
				stored = string(c.Status)
			}
			v.mu.Lock()
			v.seen = append(v.seen, string(run.Status.Phase)+"/"+stored)
			v.mu.Unlock()
		}
	}()
	return v
}

func (v *versions) list() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.seen...)
}

// TestResultsDatabase runs the outbox for real: a run finishing while the database is up is
// stored in the status write that ends it (no write more); runs finishing while it is down
// still succeed, say why their rows are missing, and hold their deletion; after a manager restart
// and the database's return every one of them is stored once.
func TestResultsDatabase(t *testing.T) {
	ns := newNamespace(t)
	srv, secret, db := resultsDatabase(t, ns)
	startKubelet(t, ns, succeedAll(t))
	op := startOperator(t, ns, operatorOptions{resultsSecret: &secret})
	ctx := context.Background()

	// Up: stored with the final status, in the same write.
	seen := watchVersions(t, ns, "up")
	if err := k8s.Create(ctx, baseRun(ns, "up", 1, 2)); err != nil {
		t.Fatal(err)
	}
	up := waitFor(t, ns, "up", time.Minute, "the run to finish", finished)
	if up.Status.Phase != v1.RunSucceeded || !resultsStored(metav1.ConditionTrue, v1.ReasonStored)(up) {
		t.Fatalf("finished run: phase %s, conditions %+v", up.Status.Phase, up.Status.Conditions)
	}
	if runs, steps := storedRows(t, db, up.UID); runs != 1 || steps != stepsOf(up) {
		t.Fatalf("rows of the run: runs %d, steps %d, want 1 and %d", runs, steps, stepsOf(up))
	}
	time.Sleep(2 * time.Second) // any write after the final one would show by now
	versions := seen.list()
	first := -1
	for i, s := range versions {
		if strings.HasPrefix(s, string(v1.RunSucceeded)+"/") {
			first = i
			break
		}
	}
	if first < 0 || versions[first] != "Succeeded/True" || first != len(versions)-1 {
		t.Fatalf("status versions %v: want the first Succeeded version to carry ResultsStored True and be the last", versions)
	}

	// Down: the runs succeed, their rows wait, and so does a deletion.
	srv.Stop()
	for _, name := range []string{"down", "deleted"} {
		if err := k8s.Create(ctx, baseRun(ns, name, 1)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"down", "deleted"} {
		run := waitFor(t, ns, name, time.Minute, "the run to say its rows are not stored",
			resultsStored(metav1.ConditionFalse, v1.ReasonDatabaseUnavailable))
		c := meta.FindStatusCondition(run.Status.Conditions, v1.ConditionResultsStored)
		if run.Status.Phase != v1.RunSucceeded || !strings.Contains(c.Message, "127.0.0.1:"+strconv.Itoa(srv.Port)) {
			t.Fatalf("%s: phase %s, ResultsStored %q: want Succeeded and a message naming the database", name, run.Status.Phase, c.Message)
		}
		waitFor(t, ns, name, 30*time.Second, "the outbox finalizer", func(r *v1.BenchmarkRun) bool {
			return controllerutil.ContainsFinalizer(r, sink.OutboxFinalizer)
		})
	}
	assertEvent(t, ns, "down", corev1.EventTypeWarning, "ResultsNotStored", "not in the results database yet")
	deleted := waitFor(t, ns, "deleted", time.Second, "the run", func(*v1.BenchmarkRun) bool { return true })
	if err := k8s.Delete(ctx, deleted); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	waitFor(t, ns, "deleted", time.Second, "the deleted run to wait for its rows", func(r *v1.BenchmarkRun) bool {
		return !r.DeletionTimestamp.IsZero()
	})

	// A new manager, then the database back: everything arrives once.
	op.stop()
	startOperator(t, ns, operatorOptions{resultsSecret: &secret})
	srv.Start()
	down := waitFor(t, ns, "down", time.Minute, "the rows stored after the database came back",
		resultsStored(metav1.ConditionTrue, v1.ReasonStored))
	waitFor(t, ns, "down", 30*time.Second, "the outbox finalizer to go", func(r *v1.BenchmarkRun) bool {
		return !controllerutil.ContainsFinalizer(r, sink.OutboxFinalizer)
	})
	assertEvent(t, ns, "down", corev1.EventTypeNormal, "ResultsStored", "they were not before")
	deadline := time.Now().Add(time.Minute)
	for {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(deleted), &v1.BenchmarkRun{})
		if client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the deleted run is still there a minute after the database came back")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, run := range []*v1.BenchmarkRun{up, down, deleted} {
		if runs, steps := storedRows(t, db, run.UID); runs != 1 || steps != stepsOf(run) {
			t.Errorf("%s: runs %d, steps %d stored, want 1 and %d", run.Name, runs, steps, stepsOf(run))
		}
	}
	var total int
	if err := db.QueryRow("SELECT COUNT(*) FROM runs").Scan(&total); err != nil || total != 3 {
		t.Errorf("%d runs in the database (%v), want 3", total, err)
	}
}

// TestResultsDatabaseMisconfigured: a Secret that is missing is named in the condition, and the
// run still succeeds.
func TestResultsDatabaseMisconfigured(t *testing.T) {
	ns := newNamespace(t)
	startKubelet(t, ns, succeedAll(t))
	missing := types.NamespacedName{Namespace: ns, Name: "no-such-secret"}
	startOperator(t, ns, operatorOptions{resultsSecret: &missing})
	if err := k8s.Create(context.Background(), baseRun(ns, "run", 1)); err != nil {
		t.Fatal(err)
	}
	run := waitFor(t, ns, "run", time.Minute, "the condition", resultsStored(metav1.ConditionFalse, v1.ReasonDatabaseMisconfigured))
	c := meta.FindStatusCondition(run.Status.Conditions, v1.ConditionResultsStored)
	if run.Status.Phase != v1.RunSucceeded || !strings.Contains(c.Message, missing.String()+" naming the results database does not exist") {
		t.Fatalf("phase %s, message %q", run.Status.Phase, c.Message)
	}
}

// One run whose rows the database refuses fails only its own write: the next run's write, at
// once after it, is stored, and no error another run is shown names the refused run. Before,
// the refusal stood for every write for five seconds, with the refused run's UID in it.
func TestResultsRefusedRunFailsOnlyItself(t *testing.T) {
	ns := newNamespace(t)
	srv, secret, db := resultsDatabase(t, ns)
	d := &sink.Database{Secret: secret, Reader: k8s, Clock: clock.RealClock{}}
	ctx := context.Background()
	finished := func(name, uid string) *v1.BenchmarkRun {
		run := baseRun(ns, name, 1)
		run.UID = types.UID(uid)
		run.Status = v1.BenchmarkRunStatus{Phase: v1.RunSucceeded, Targets: []v1.TargetStatus{{Name: "mariadb", Phase: v1.TargetSucceeded}}}
		return run
	}
	// A first write opens (and migrates) the database.
	if _, err := d.Write(ctx, finished("first", "00000000-0000-4000-8000-00000000f157"), nil); err != nil {
		t.Fatal(err)
	}
	// The database refuses the rows of one run (a constraint standing in for any refusal).
	srv.MustSQL(t, "ALTER TABLE history.runs ADD CONSTRAINT not_this_one CHECK (name <> 'refused')")
	const refusedUID = "00000000-0000-4000-8000-0000000bad00"
	if _, err := d.Write(ctx, finished("refused", refusedUID), nil); err == nil || !strings.Contains(err.Error(), "not_this_one") {
		t.Fatalf("the refused run's write: %v, want the database's refusal", err)
	}
	other := finished("other", "00000000-0000-4000-8000-0000000600d0")
	stored, err := d.Write(ctx, other, nil)
	if err != nil {
		if strings.Contains(err.Error(), refusedUID) {
			t.Fatalf("another run's write failed with the refused run's error: %v", err)
		}
		t.Fatalf("another run's write: %v", err)
	}
	if runs, _ := storedRows(t, db, other.UID); runs != 1 || stored.Rows == 0 {
		t.Fatalf("the other run: %d rows in runs (%d written), want it stored", runs, stored.Rows)
	}
	// A database that cannot be reached is another matter: every write is told at once, in
	// words that name the database and the cause, not a run.
	srv.Stop()
	_, err = d.Write(ctx, finished("during-outage", "00000000-0000-4000-8000-00000000d0e1"), nil)
	var unreachable *sink.UnreachableError
	if !errors.As(err, &unreachable) {
		t.Fatalf("a write while the database is down: %v, want an UnreachableError", err)
	}
	start := time.Now()
	_, err = d.Write(ctx, finished("next", "00000000-0000-4000-8000-0000000e0e1d"), nil)
	if !errors.As(err, &unreachable) || strings.Contains(err.Error(), "00000000d0e1") || time.Since(start) > time.Second {
		t.Fatalf("the next write within the fail-fast window: %v after %s, want the unreachable error at once, naming no run",
			err, time.Since(start))
	}
}

// A deleted run whose rows the database never takes goes once the results outbox timeout has
// passed since its deletion, with a ResultsLost Warning and a count in
// mysqlbench_results_lost_total: a database down for good does not hold the run (nor its
// namespace's deletion) for ever.
func TestResultsOutboxEndsByItsDeadline(t *testing.T) {
	ns := newNamespace(t)
	srv, secret, _ := resultsDatabase(t, ns)
	srv.Stop()
	startKubelet(t, ns, succeedAll(t))
	startOperator(t, ns, operatorOptions{resultsSecret: &secret, outboxTimeout: 3 * time.Second})
	ctx := context.Background()
	if err := k8s.Create(ctx, baseRun(ns, "lost", 1)); err != nil {
		t.Fatal(err)
	}
	run := waitFor(t, ns, "lost", time.Minute, "the outbox finalizer", func(r *v1.BenchmarkRun) bool {
		return controllerutil.ContainsFinalizer(r, sink.OutboxFinalizer)
	})
	before := resultsLostCounted(t, ns)
	if err := k8s.Delete(ctx, run); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(run), &v1.BenchmarkRun{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deleted run is still there 30 s after its 3 s outbox timeout (%v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := resultsLostCounted(t, ns); got != before+1 {
		t.Errorf("mysqlbench_results_lost_total{namespace=%q} = %v, want %v", ns, got, before+1)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		events := &corev1.EventList{}
		if err := k8s.List(ctx, events, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			if e.Reason == "ResultsLost" && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, "--results-outbox-timeout") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no ResultsLost Warning Event")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// resultsLostCounted reads mysqlbench_results_lost_total of namespace ns from the registry the
// suite's managers serve.
func resultsLostCounted(t *testing.T, ns string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "mysqlbench_results_lost_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "namespace" && l.GetValue() == ns {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
