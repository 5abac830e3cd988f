// Package sink is where a finished run's results go: its results ConfigMap (the per-second
// series and server counters stored batch by batch while it runs, then results.json, results.csv,
// report.md and comparison.md rendered from its status) and the results database (Database), into
// which the run's reconciler writes through an outbox. The reconciler decides when; this package
// writes, and says how soon a failed database write is tried again (Retry).
package sink

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/resultsdb"
)

// OutboxFinalizer holds a finished run whose rows are not in the results database yet, so
// that deleting it (by hand, or a schedule pruning its history) does not lose them: the deletion
// completes once they are written, or once the results outbox timeout has passed since it began
// (a Warning Event and mysqlbench_results_lost_total record the loss). Removing it by hand gives
// them up.
const OutboxFinalizer = "mysqlbench.io/results-outbox"

// DefaultOutboxTimeout is how long a deleted run waits for the results database to take
// its rows: long enough to ride out a database's maintenance or a night's outage, short enough
// that a database gone for good (or one that refuses the run's rows) does not hold a run, and
// with it its namespace's deletion, for ever.
const DefaultOutboxTimeout = 24 * time.Hour

// Writer writes finished runs into the results database.
type Writer interface {
	// Write stores run (finished, with its status) and its results.json (nil when the run has
	// none), replacing what the database held for it. A *ConfigError says the database's
	// configuration is unusable; any other error that the database could not take the rows.
	Write(ctx context.Context, run *v1.BenchmarkRun, doc *results.Doc) (Stored, error)
}

// Stored is what a Write stored, for the condition's message.
type Stored struct {
	// Database names the database without its password (user@host:port/db).
	Database string
	Rows     int
}

// ConfigError says the results database's Secret is missing or unusable.
type ConfigError struct{ Message string }

func (e *ConfigError) Error() string { return e.Message }

// Database is the Writer of the manager: the database a Secret names, read from the
// API server at each write (a rotated password or a moved server is picked up without a restart),
// opened and migrated once per version of the Secret's data.
type Database struct {
	// Secret names the Secret (resultsdb.Config's keys).
	Secret types.NamespacedName
	// Reader reads the Secret from the API server (the manager's cache holds no such Secret).
	Reader client.Reader
	Clock  clock.PassiveClock
	// Timeout bounds one Write: connecting, migrating and writing (default 1 minute).
	Timeout time.Duration

	// mu guards the fields below; it is held to open the store, never during a run's write, so
	// that one run's slow write does not hold up another's.
	mu    sync.Mutex
	store *resultsdb.Store
	key   [32]byte // of the Secret data store was opened with
	// lastErr is the last failure to reach the database, failed when it happened: writes within
	// failFast of it return it at once rather than each waiting for a connection timeout while
	// the database is down (every finished run retries). Only failures to reach the database
	// count, and only in words that name no run: a write the database refused is that run's
	// alone, and must neither fail another run's nor show it that run's names.
	lastErr error
	failed  time.Time
}

// failFast is how long a failure to reach the database stands for the next writes.
const failFast = 5 * time.Second

// UnreachableError is a failure to reach the results database, as every write within failFast
// of it is told: the database and the cause, never a run.
type UnreachableError struct {
	Database string
	Cause    error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("results database %s cannot be reached: %v", e.Database, e.Cause)
}

func (e *UnreachableError) Unwrap() error { return e.Cause }

// Write stores run into the database.
func (d *Database) Write(ctx context.Context, run *v1.BenchmarkRun, doc *results.Doc) (Stored, error) {
	rec, err := resultsdb.Build(run, doc)
	if err != nil {
		return Stored{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, d.timeout())
	defer cancel()
	d.mu.Lock()
	store, where, err := d.open(ctx)
	d.mu.Unlock()
	if err != nil {
		return Stored{}, err
	}
	w, err := store.Write(ctx, rec)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		if cause := unreachable(err); cause != nil {
			return Stored{}, d.fail(&UnreachableError{Database: where, Cause: cause})
		}
		return Stored{}, err
	}
	d.lastErr = nil
	return Stored{Database: where, Rows: w.Rows}, nil
}

// unreachable is the cause of err when err says the database could not be reached (no answer
// from the server, as opposed to an answer refusing the run's rows), nil otherwise. The cause is
// the innermost error, which the store's wrapping (naming the run) does not reach.
func unreachable(err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) || errors.Is(err, context.Canceled) {
		return nil
	}
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

func (d *Database) timeout() time.Duration {
	if d.Timeout > 0 {
		return d.Timeout
	}
	return time.Minute
}

// open reads the Secret and returns the store it names, opened (and migrated) when the Secret's
// data changed since the last open. The caller holds d.mu.
func (d *Database) open(ctx context.Context) (*resultsdb.Store, string, error) {
	secret := &corev1.Secret{}
	if err := d.Reader.Get(ctx, d.Secret, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", &ConfigError{Message: fmt.Sprintf(
				"Secret %s naming the results database does not exist: create it (keys host, user, password and optionally port, database, tls; or dsn)", d.Secret)}
		}
		return nil, "", fmt.Errorf("read Secret %s of the results database: %w", d.Secret, err)
	}
	cfg, err := resultsdb.Config(secret.Data)
	if err != nil {
		return nil, "", &ConfigError{Message: fmt.Sprintf("Secret %s of the results database: %v", d.Secret, err)}
	}
	where := resultsdb.Describe(cfg)
	key := dataKey(secret.Data)
	if d.lastErr != nil && key == d.key && d.Clock.Since(d.failed) < failFast {
		return nil, where, d.lastErr
	}
	if d.store != nil && key == d.key {
		return d.store, where, nil
	}
	if d.store != nil {
		_ = d.store.Close()
		d.store = nil
	}
	d.key = key
	store, err := resultsdb.Open(ctx, cfg, resultsdb.OpenOptions{})
	if err != nil {
		if cause := unreachable(err); cause != nil {
			return nil, where, d.fail(&UnreachableError{Database: where, Cause: cause})
		}
		return nil, where, err
	}
	d.store = store
	return store, where, nil
}

// Start opens the database as soon as the manager leads, so that its tables exist and a database
// that cannot be reached or a Secret that is wrong shows in the log at once rather than when the
// first run ends; it retries every startRetry until it succeeds. Writes open it themselves too.
func (d *Database) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("results-database")
	for {
		err := func() error {
			octx, cancel := context.WithTimeout(ctx, d.timeout())
			defer cancel()
			d.mu.Lock()
			defer d.mu.Unlock()
			store, where, err := d.open(octx)
			if err != nil {
				return err
			}
			version, err := store.Version(octx)
			if err != nil {
				if cause := unreachable(err); cause != nil {
					return d.fail(&UnreachableError{Database: where, Cause: cause})
				}
				return err
			}
			log.Info("results database ready", "database", where, "schemaVersion", version)
			return nil
		}()
		if err == nil {
			return nil
		}
		log.Error(err, "results database not ready; finished runs wait for it", "retryIn", startRetry.String())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(startRetry):
		}
	}
}

// NeedLeaderElection: only the leader writes, so only the leader migrates.
func (d *Database) NeedLeaderElection() bool { return true }

// startRetry is how often Start tries again.
const startRetry = 30 * time.Second

func (d *Database) fail(err error) error {
	d.lastErr, d.failed = err, d.Clock.Now()
	return err
}

// dataKey identifies a Secret's data.
func dataKey(data map[string][]byte) [32]byte {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		_, _ = fmt.Fprintf(h, "%d:%s=%d:", len(k), k, len(data[k]))
		h.Write(data[k])
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// Retry is how soon a run whose rows could not be stored is tried again: often at first
// (a database restarting), then every few minutes (a database down for a while), so that a long
// outage costs the reconciler little.
func Retry(since time.Duration) time.Duration {
	switch {
	case since < 2*time.Minute:
		return 15 * time.Second
	case since < 30*time.Minute:
		return time.Minute
	default:
		return 5 * time.Minute
	}
}
