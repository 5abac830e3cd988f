package resultsdb

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Tables of goose's bookkeeping in the results database: the applied versions, and the lock row
// that lets one migrator at a time (several operator replicas, a plugin) apply them.
const (
	VersionTable = "mysqlbench_schema_version"
	LockTable    = "mysqlbench_schema_lock"
)

// Migrations are the schema's migration files (goose's SQL format), oldest first.
func Migrations() fs.FS {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embedded directory is part of the binary
	}
	return sub
}

// Store is a results database: Open connects and brings the schema up to date, Write stores a
// run, the read methods answer the plugin's history.
type Store struct {
	db  *sql.DB
	cfg *mysql.Config
}

// OpenOptions tune Open; the zero value is what the operator uses.
type OpenOptions struct {
	// UpTo migrates up to this version only (tests of an older schema); 0 means the newest.
	UpTo int64
	// LockRetry is how often a migrator waiting for another one's lock retries (default 1 s), and
	// LockAttempts how many times (default 120).
	LockRetry    time.Duration
	LockAttempts uint64
	// ReadOnly opens the database as a reader (the plugin): no migrations and no CREATE
	// DATABASE, since a reader may lack the privileges and must not change a schema the operator
	// owns; it checks that the database holds the schema instead.
	ReadOnly bool
}

// Open connects to the database cfg names, creating the database when the server lacks it and
// the user may create it, and applies the migrations the database has not seen yet, under a lock
// so that concurrent openers apply each migration once. It never goes down: a database newer than
// this binary (a later operator migrated it) is written as it is, since migrations only add.
func Open(ctx context.Context, cfg *mysql.Config, o OpenOptions) (*Store, error) {
	if o.ReadOnly {
		return openReader(ctx, cfg)
	}
	db, err := connect(ctx, cfg, true)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, cfg: cfg}
	if err := s.migrate(ctx, o); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

func connect(ctx context.Context, cfg *mysql.Config, create bool) (*sql.DB, error) {
	cfg = cfg.Clone()
	// One round trip per statement: arguments are interpolated by the driver (utf8mb4 is safe),
	// not prepared on the server first.
	cfg.InterpolateParams = true
	db, err := open(ctx, cfg)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1049 { // ER_BAD_DB_ERROR: no such database
		if !create {
			return nil, fmt.Errorf("%s: %w", Describe(cfg), noSchema(cfg, "does not exist"))
		}
		if cerr := createDatabase(ctx, cfg); cerr != nil {
			return nil, fmt.Errorf("%s: database %s does not exist and could not be created: %w", Describe(cfg), cfg.DBName, cerr)
		}
		db, err = open(ctx, cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", Describe(cfg), err)
	}
	return db, nil
}

// ErrNoSchema is what opening a database for reading returns (wrapped) when the database lacks
// the schema: the reader was pointed at the wrong database, or the operator never wrote to it.
var ErrNoSchema = errors.New("no mysqlbench schema")

func noSchema(cfg *mysql.Config, why string) error {
	return fmt.Errorf("database %s %s: is this the operator's results database? (%w)", cfg.DBName, why, ErrNoSchema)
}

// ReadableVersion is the oldest schema the read methods understand: they join the comparisons.
const ReadableVersion = 2

// openReader connects without migrating, and checks that the schema is there and new enough.
func openReader(ctx context.Context, cfg *mysql.Config) (*Store, error) {
	db, err := connect(ctx, cfg, false)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, cfg: cfg}
	var n int
	err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
		VersionTable).Scan(&n)
	switch {
	case err != nil:
		err = fmt.Errorf("read the schema of %s: %w", Describe(cfg), err)
	case n == 0:
		err = fmt.Errorf("%s: %w", Describe(cfg), noSchema(cfg, "has no mysqlbench schema (no table "+VersionTable+")"))
	default:
		var v int64
		if v, err = s.Version(ctx); err != nil {
			err = fmt.Errorf("read the schema version of %s: %w", Describe(cfg), err)
		} else if v < ReadableVersion {
			err = fmt.Errorf("%s: schema version %d is older than this reader needs (%d): the operator migrates it when it next writes a run",
				Describe(cfg), v, ReadableVersion)
		}
	}
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

func open(ctx context.Context, cfg *mysql.Config) (*sql.DB, error) {
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(2)
	db.SetConnMaxIdleTime(time.Minute)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

func createDatabase(ctx context.Context, cfg *mysql.Config) error {
	server := cfg.Clone()
	server.DBName = ""
	db, err := open(ctx, server)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	_, err = db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteIdent(cfg.DBName)+" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
	return err
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func (s *Store) migrate(ctx context.Context, o OpenOptions) error {
	retry, attempts := o.LockRetry, o.LockAttempts
	if retry <= 0 {
		retry = time.Second
	}
	if attempts == 0 {
		attempts = 120
	}
	quiet := slog.New(slog.DiscardHandler)
	locker, err := lock.NewMySQLTableLocker(lock.WithTableName(LockTable), lock.WithTableLockTimeout(retry, attempts),
		lock.WithTableLogger(quiet))
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectMySQL, s.db, Migrations(), goose.WithTableName(VersionTable),
		goose.WithLocker(locker), goose.WithDisableGlobalRegistry(true), goose.WithSlog(quiet))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if o.UpTo > 0 {
		_, err = p.UpTo(ctx, o.UpTo)
	} else {
		_, err = p.Up(ctx)
	}
	if err != nil {
		return fmt.Errorf("migrate %s: %w", Describe(s.cfg), err)
	}
	return nil
}

// Version is the newest migration the database has applied.
func (s *Store) Version(ctx context.Context) (int64, error) {
	var v sql.NullInt64
	err := s.db.QueryRowContext(ctx, "SELECT MAX(version_id) FROM "+VersionTable+" WHERE is_applied").Scan(&v)
	return v.Int64, err
}

// DB is the connection pool, for queries of tests and tools.
func (s *Store) DB() *sql.DB { return s.db }

// Close closes the connections.
func (s *Store) Close() error { return s.db.Close() }

// Written is what a Write did.
type Written struct {
	// Changed is false when the database held this very record already (a retried write).
	Changed bool
	// Rows is how many rows the record has.
	Rows int
}

// maxPlaceholders bounds one INSERT's arguments (the server's limit is 65535).
const maxPlaceholders = 20000

// Write stores a run's record, replacing whatever the database held for its UID, in one
// transaction: a write interrupted anywhere leaves the run's old rows or its new ones, never a
// mix, and repeating a write changes nothing. Concurrent writers of one run are serialized by its
// row in runs (a deadlock or lock timeout between them is retried).
func (s *Store) Write(ctx context.Context, rec *Record) (Written, error) {
	const attempts = 5
	for i := 1; ; i++ {
		w, err := s.writeOnce(ctx, rec)
		if err == nil || i == attempts || !retryable(err) || ctx.Err() != nil {
			if err != nil {
				err = fmt.Errorf("store run %s in %s: %w", rec.UID, Describe(s.cfg), err)
			}
			return w, err
		}
		select {
		case <-ctx.Done():
			return w, ctx.Err()
		case <-time.After(time.Duration(i) * 50 * time.Millisecond):
		}
	}
}

// retryable: a deadlock, a lock wait timeout, or another writer's insert of the same run first.
func retryable(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Number {
	case 1213, 1205, 1062:
		return true
	}
	return false
}

func (s *Store) writeOnce(ctx context.Context, rec *Record) (w Written, err error) {
	w.Rows = rec.Rows()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return w, err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var hash string
	err = tx.QueryRowContext(ctx, "SELECT content_hash FROM runs WHERE uid = ? FOR UPDATE", rec.UID).Scan(&hash)
	switch {
	case err == nil && hash == rec.Hash:
		return w, tx.Commit()
	case err == nil:
		// The children go with it (ON DELETE CASCADE).
		if _, err = tx.ExecContext(ctx, "DELETE FROM runs WHERE uid = ?", rec.UID); err != nil {
			return w, err
		}
	case errors.Is(err, sql.ErrNoRows):
	default:
		return w, err
	}
	stored := time.Now().UTC().Truncate(time.Microsecond)
	for i, t := range rec.Tables {
		cols, rows := t.Columns, t.Rows
		if i == 0 {
			cols = append(append([]string(nil), cols...), "stored_at")
			rows = [][]any{append(append([]any(nil), rows[0]...), stored)}
		}
		if err = insert(ctx, tx, t.Name, cols, rows); err != nil {
			return w, err
		}
	}
	if err = tx.Commit(); err != nil {
		return w, err
	}
	w.Changed = true
	return w, nil
}

// insert writes rows with multi-row INSERTs of at most maxPlaceholders arguments each.
func insert(ctx context.Context, tx *sql.Tx, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	per := max(1, maxPlaceholders/len(cols))
	head := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES "
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	for start := 0; start < len(rows); start += per {
		chunk := rows[start:min(len(rows), start+per)]
		var q strings.Builder
		q.Grow(len(head) + len(chunk)*(len(one)+2))
		q.WriteString(head)
		args := make([]any, 0, len(chunk)*len(cols))
		for i, r := range chunk {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString(one)
			args = append(args, r...)
		}
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			return fmt.Errorf("insert into %s: %w", table, err)
		}
	}
	return nil
}
