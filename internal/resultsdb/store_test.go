package resultsdb_test

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/resultsdb"
	"github.com/mysqlbench/mysqlbench-operator/internal/testmariadb"
)

// These tests run a private MariaDB on loopback (internal/testmariadb).

// database starts a server and returns it with the configuration of a user who may create and
// fill database "history" (not created yet: Open creates it).
func database(tb testing.TB) (*testmariadb.Server, *mysql.Config) {
	tb.Helper()
	const name = "history"
	srv := testmariadb.Start(tb, testmariadb.Look(tb))
	password := srv.User(tb, "bench", name)
	cfg, err := resultsdb.Config(map[string][]byte{"host": []byte("127.0.0.1"), "port": []byte(strconv.Itoa(srv.Port)),
		"user": []byte("bench"), "password": []byte(password), "database": []byte(name)})
	if err != nil {
		tb.Fatal(err)
	}
	return srv, cfg
}

func open(tb testing.TB, cfg *mysql.Config, o resultsdb.OpenOptions) *resultsdb.Store {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := resultsdb.Open(ctx, cfg, o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

var childTables = []string{"targets", "steps", "cells", "step_counters", "step_gauges", "step_waits",
	"comparisons", "comparison_targets", "comparison_cells"}

// stored counts a run's rows per table as the database holds them (0 rows are left out).
func stored(tb testing.TB, db *sql.DB, uid string, tables ...string) map[string]int {
	tb.Helper()
	if len(tables) == 0 {
		tables = childTables
	}
	out := map[string]int{}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM runs WHERE uid = ?", uid).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	if n > 0 {
		out["runs"] = n
	}
	for _, t := range tables {
		if err := db.QueryRow("SELECT COUNT(*) FROM "+t+" WHERE run_uid = ?", uid).Scan(&n); err != nil {
			tb.Fatal(err)
		}
		if n > 0 {
			out[t] = n
		}
	}
	return out
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func build(tb testing.TB, n int, sh shape, qps float64) *resultsdb.Record {
	tb.Helper()
	run, doc := fixture(tb, uid(n), sh, qps)
	rec, err := resultsdb.Build(run, doc)
	if err != nil {
		tb.Fatal(err)
	}
	return rec
}

func TestMigrationsFromEmpty(t *testing.T) {
	srv, cfg := database(t)
	s := open(t, cfg, resultsdb.OpenOptions{})
	v, err := s.Version(context.Background())
	if err != nil || v != 3 {
		t.Fatalf("schema version %d (%v), want 3", v, err)
	}
	tables := srv.MustSQL(t, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'history' ORDER BY 1")
	for _, want := range append([]string{"runs", resultsdb.VersionTable, resultsdb.LockTable}, childTables...) {
		if !strings.Contains("\n"+tables+"\n", "\n"+want+"\n") {
			t.Errorf("table %s missing after the migrations; tables:\n%s", want, tables)
		}
	}
	// A second opener finds nothing to do.
	again := open(t, cfg, resultsdb.OpenOptions{})
	if v, _ := again.Version(context.Background()); v != 3 {
		t.Fatalf("version %d after a second open", v)
	}
	if n := srv.MustSQL(t, "SELECT COUNT(*) FROM history."+resultsdb.VersionTable+" WHERE version_id > 0"); n != "3" {
		t.Fatalf("%s migrations recorded, want 3 (each once)", n)
	}
}

// TestMigrationFromPreviousVersion stores a run as the first schema's writer did, then migrates
// to the newest schema: the old rows stay, and a new write of the same run replaces them whole.
func TestMigrationFromPreviousVersion(t *testing.T) {
	srv, cfg := database(t)
	old := open(t, cfg, resultsdb.OpenOptions{UpTo: 1})
	if v, _ := old.Version(context.Background()); v != 1 {
		t.Fatalf("version %d, want 1", v)
	}
	id := uid(7)
	srv.MustSQL(t, fmt.Sprintf(`USE history;
INSERT INTO runs (uid, namespace, name, schedule, phase, client, workload, metric, repetitions, step_seconds,
  warmup_seconds, run_order, server_instance, start_time, spec, content_hash, stored_at)
VALUES ('%[1]s', 'bench', 'nightly-old', 'nightly', 'Succeeded', 'sysbench', 'oltp_read_write', 'qps', 1, 60, 0,
  'Sequential', 'Shared', '2026-10-01 22:00:00', '{}', 'old', NOW(6));
INSERT INTO targets (run_uid, name, position, engine, phase) VALUES ('%[1]s', 'mariadb-0', 0, 'builtin', 'Succeeded');
INSERT INTO steps (run_uid, target, seq, repetition, threads, tps, qps, qps_read, qps_write, qps_other, latency_min_ms,
  latency_avg_ms, latency_p95_ms, latency_max_ms, errors, reconnects, duration_seconds, over_duration)
VALUES ('%[1]s', 'mariadb-0', 0, 1, 1, 50, 1000, 700, 200, 100, 0.2, 1, 2, 30, 0, 0, 60, FALSE);
INSERT INTO cells (run_uid, target, threads, n, noisy, qps_median, tps_median, tps_cv, p95_ms_median, p95_ms_ci_low,
  p95_ms_ci_high, p95_ms_cv, ci_confidence) VALUES ('%[1]s', 'mariadb-0', 1, 1, FALSE, 1000, 50, 0, 2, 2, 2, 0, 0);`, id))

	s := open(t, cfg, resultsdb.OpenOptions{})
	if v, _ := s.Version(context.Background()); v != 3 {
		t.Fatalf("version %d after migrating, want 3", v)
	}
	got := stored(t, s.DB(), id)
	if want := map[string]int{"runs": 1, "targets": 1, "steps": 1, "cells": 1}; !equalCounts(got, want) {
		t.Fatalf("the old run's rows after migrating: %v, want %v", got, want)
	}
	var restarts int
	var cpu sql.NullFloat64
	if err := s.DB().QueryRow("SELECT t.server_restarts, s.server_cpu_seconds FROM targets t JOIN steps s ON s.run_uid = t.run_uid WHERE t.run_uid = ?", id).
		Scan(&restarts, &cpu); err != nil || restarts != 0 || cpu.Valid {
		t.Fatalf("new columns of old rows: restarts %d, cpu %v (%v), want 0 and NULL", restarts, cpu, err)
	}
	// The same run written by the new writer replaces the old rows.
	rec := build(t, 7, shape{targets: 1, threads: 2, reps: 1, server: true}, 1)
	if _, err := s.Write(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if got := stored(t, s.DB(), id, "steps"); got["steps"] != 2 {
		t.Fatalf("steps after the rewrite: %v, want 2", got)
	}
}

func TestWriteIsIdempotent(t *testing.T) {
	_, cfg := database(t)
	s := open(t, cfg, resultsdb.OpenOptions{})
	ctx := context.Background()
	run, doc := fixture(t, uid(1), shape{targets: 2, threads: 3, reps: 2, server: true}, 1)
	rec, err := resultsdb.Build(run, doc)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Write(ctx, rec)
	if err != nil || !w.Changed {
		t.Fatalf("first write: %+v %v", w, err)
	}
	want := rowsOf(rec)
	for k, v := range want {
		if v == 0 {
			delete(want, k)
		}
	}
	if got := stored(t, s.DB(), rec.UID); !equalCounts(got, want) {
		t.Fatalf("rows stored %v, want %v", got, want)
	}
	var storedAt time.Time
	_ = s.DB().QueryRow("SELECT stored_at FROM runs WHERE uid = ?", rec.UID).Scan(&storedAt)

	w, err = s.Write(ctx, rec)
	if err != nil || w.Changed {
		t.Fatalf("the retried write changed the database: %+v %v", w, err)
	}
	var again time.Time
	_ = s.DB().QueryRow("SELECT stored_at FROM runs WHERE uid = ?", rec.UID).Scan(&again)
	if !again.Equal(storedAt) {
		t.Fatalf("stored_at moved from %v to %v on a write that changed nothing", storedAt, again)
	}

	// The run's confirmation settled later: the whole record is replaced, nothing doubles.
	run.Status.Comparison = &v1.Comparison{Run: run.Name, Baseline: "nightly-prev", Verdict: v1.VerdictNoRegression,
		Targets: []v1.TargetChange{{Target: "mariadb-0", Verdict: v1.CellNoChange, QPSRatio: 1.01}}}
	rec2, _ := resultsdb.Build(run, doc)
	if w, err := s.Write(ctx, rec2); err != nil || !w.Changed {
		t.Fatalf("write of the changed run: %+v %v", w, err)
	}
	want["comparisons"], want["comparison_targets"] = 1, 1
	if got := stored(t, s.DB(), rec.UID); !equalCounts(got, want) {
		t.Fatalf("rows after the rewrite %v, want %v", got, want)
	}
	var verdict string
	if err := s.DB().QueryRow("SELECT verdict FROM comparisons WHERE run_uid = ?", rec.UID).Scan(&verdict); err != nil || verdict != "NoRegression" {
		t.Fatalf("verdict %q (%v)", verdict, err)
	}
}

// TestWriteAfterTheServerCameBack is the store's part of the outbox: a write while the server
// is down fails and names it, and the same Store writes once the server is back.
func TestWriteAfterTheServerCameBack(t *testing.T) {
	srv, cfg := database(t)
	s := open(t, cfg, resultsdb.OpenOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec := build(t, 1, shape{targets: 1, threads: 4, reps: 1, server: true}, 1)
	srv.Stop()
	_, err := s.Write(ctx, rec)
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:"+strconv.Itoa(srv.Port)) {
		t.Fatalf("write to a stopped server: %v, want an error naming the server", err)
	}
	srv.Start()
	if w, err := s.Write(ctx, rec); err != nil || !w.Changed {
		t.Fatalf("write after the restart: %+v %v", w, err)
	}
	if got := stored(t, s.DB(), rec.UID, "steps"); got["steps"] != 4 {
		t.Fatalf("rows after the restart: %v", got)
	}
}

// TestWriteKilledMidTransaction kills the server while a write holds its transaction open: the
// run has no rows (never half of them), and the retry stores it once.
func TestWriteKilledMidTransaction(t *testing.T) {
	srv, cfg := database(t)
	s := open(t, cfg, resultsdb.OpenOptions{})
	rec := build(t, 1, shape{targets: 2, threads: 4, reps: 2, server: true}, 1)
	// A transaction holding every row and gap of step_waits makes the write wait there, after
	// inserting into the tables before it. (LOCK TABLES would stop it at runs: writing a parent
	// row takes a metadata lock on its children.)
	blocker, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = blocker.Close() }()
	conn, err := blocker.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "SELECT COUNT(*) FROM step_waits FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := s.Write(ctx, rec)
		done <- err
	}()
	waitFor(t, func() bool {
		out, _ := srv.SQL("SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE 'INSERT INTO step_waits%'")
		return out == "1"
	})
	srv.Kill()
	if err := <-done; err == nil {
		t.Fatal("a write whose server was killed under it succeeded")
	}
	_ = conn.Close()
	srv.Start()
	if got := stored(t, s.DB(), rec.UID); len(got) != 0 {
		t.Fatalf("rows of the interrupted write survived the crash: %v", got)
	}
	if w, err := s.Write(context.Background(), rec); err != nil || !w.Changed {
		t.Fatalf("retry: %+v %v", w, err)
	}
	if got := stored(t, s.DB(), rec.UID); got["runs"] != 1 || got["step_waits"] != rowsOf(rec)["step_waits"] {
		t.Fatalf("rows after the retry: %v", got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestConcurrentWriters has several stores (as several operator replicas and a backfill would)
// open an empty database at once, then write the same runs at once, rewrite them, and write
// runs of their own: every migration applied once, every run stored exactly once.
func TestConcurrentWriters(t *testing.T) {
	_, cfg := database(t)
	const writers, shared = 4, 3
	stores := make([]*resultsdb.Store, writers)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			s, err := resultsdb.Open(ctx, cfg, resultsdb.OpenOptions{LockRetry: 100 * time.Millisecond})
			if err != nil {
				errs <- err
				return
			}
			stores[i] = s
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, s := range stores {
		defer func() { _ = s.Close() }()
	}
	var applied int
	if err := stores[0].DB().QueryRow("SELECT COUNT(*) FROM " + resultsdb.VersionTable + " WHERE version_id > 0").Scan(&applied); err != nil || applied != 3 {
		t.Fatalf("%d migrations recorded (%v), want 3", applied, err)
	}

	sh := shape{targets: 2, threads: 3, reps: 2, server: true}
	recs := map[string]*resultsdb.Record{}
	for n := 1; n <= shared+writers; n++ {
		recs[uid(n)] = build(t, n, sh, float64(n))
	}
	errs = make(chan error, 256)
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for round := range 3 {
				for n := 1; n <= shared; n++ {
					if _, err := s.Write(ctx, recs[uid(n)]); err != nil {
						errs <- fmt.Errorf("writer %d round %d run %d: %w", i, round, n, err)
					}
				}
			}
			if _, err := s.Write(ctx, recs[uid(shared+1+i)]); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for id, rec := range recs {
		want := map[string]int{}
		for k, v := range rowsOf(rec) {
			if v > 0 {
				want[k] = v
			}
		}
		if got := stored(t, stores[0].DB(), id); !equalCounts(got, want) {
			t.Errorf("run %s: rows %v, want %v", id, got, want)
		}
	}
	var runs int
	_ = stores[0].DB().QueryRow("SELECT COUNT(*) FROM runs").Scan(&runs)
	if runs != len(recs) {
		t.Errorf("%d runs stored, want %d", runs, len(recs))
	}
}
