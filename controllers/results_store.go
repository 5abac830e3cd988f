package controllers

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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/metrics"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/resultsdb"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// ResultsOutboxFinalizer holds a finished run whose rows are not in the results database yet, so
// that deleting it (by hand, or a schedule pruning its history) does not lose them: the deletion
// completes once they are written, or once the results outbox timeout has passed since it began
// (a Warning Event and mysqlbench_results_lost_total record the loss). Removing it by hand gives
// them up.
const ResultsOutboxFinalizer = "mysqlbench.io/results-outbox"

// DefaultResultsOutboxTimeout is how long a deleted run waits for the results database to take
// its rows: long enough to ride out a database's maintenance or a night's outage, short enough
// that a database gone for good (or one that refuses the run's rows) does not hold a run, and
// with it its namespace's deletion, for ever.
const DefaultResultsOutboxTimeout = 24 * time.Hour

// ResultsWriter writes finished runs into the results database.
type ResultsWriter interface {
	// Write stores run (finished, with its status) and its results.json (nil when the run has
	// none), replacing what the database held for it. A *ResultsConfigError says the database's
	// configuration is unusable; any other error that the database could not take the rows.
	Write(ctx context.Context, run *v1.BenchmarkRun, doc *results.Doc) (StoredResults, error)
}

// StoredResults is what a Write stored, for the condition's message.
type StoredResults struct {
	// Database names the database without its password (user@host:port/db).
	Database string
	Rows     int
}

// ResultsConfigError says the results database's Secret is missing or unusable.
type ResultsConfigError struct{ Message string }

func (e *ResultsConfigError) Error() string { return e.Message }

// ResultsDatabase is the ResultsWriter of the manager: the database a Secret names, read from the
// API server at each write (a rotated password or a moved server is picked up without a restart),
// opened and migrated once per version of the Secret's data.
type ResultsDatabase struct {
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
func (d *ResultsDatabase) Write(ctx context.Context, run *v1.BenchmarkRun, doc *results.Doc) (StoredResults, error) {
	rec, err := resultsdb.Build(run, doc)
	if err != nil {
		return StoredResults{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, d.timeout())
	defer cancel()
	d.mu.Lock()
	store, where, err := d.open(ctx)
	d.mu.Unlock()
	if err != nil {
		return StoredResults{}, err
	}
	w, err := store.Write(ctx, rec)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		if cause := unreachable(err); cause != nil {
			return StoredResults{}, d.fail(&UnreachableError{Database: where, Cause: cause})
		}
		return StoredResults{}, err
	}
	d.lastErr = nil
	return StoredResults{Database: where, Rows: w.Rows}, nil
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

func (d *ResultsDatabase) timeout() time.Duration {
	if d.Timeout > 0 {
		return d.Timeout
	}
	return time.Minute
}

// open reads the Secret and returns the store it names, opened (and migrated) when the Secret's
// data changed since the last open. The caller holds d.mu.
func (d *ResultsDatabase) open(ctx context.Context) (*resultsdb.Store, string, error) {
	secret := &corev1.Secret{}
	if err := d.Reader.Get(ctx, d.Secret, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", &ResultsConfigError{Message: fmt.Sprintf(
				"Secret %s naming the results database does not exist: create it (keys host, user, password and optionally port, database, tls; or dsn)", d.Secret)}
		}
		return nil, "", fmt.Errorf("read Secret %s of the results database: %w", d.Secret, err)
	}
	cfg, err := resultsdb.Config(secret.Data)
	if err != nil {
		return nil, "", &ResultsConfigError{Message: fmt.Sprintf("Secret %s of the results database: %v", d.Secret, err)}
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
func (d *ResultsDatabase) Start(ctx context.Context) error {
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
func (d *ResultsDatabase) NeedLeaderElection() bool { return true }

// startRetry is how often Start tries again.
const startRetry = 30 * time.Second

func (d *ResultsDatabase) fail(err error) error {
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

// resultsRetry is how soon a run whose rows could not be stored is tried again: often at first
// (a database restarting), then every few minutes (a database down for a while), so that a long
// outage costs the reconciler little.
func resultsRetry(since time.Duration) time.Duration {
	switch {
	case since < 2*time.Minute:
		return 15 * time.Second
	case since < 30*time.Minute:
		return time.Minute
	default:
		return 5 * time.Minute
	}
}

// storeResults writes the finished run of tx into the results database, when there is one, and
// records the outcome as the ResultsStored condition of the same status write: storing the rows
// adds no write to the API server. doc is the run's results.json (nil when it has none). It
// returns how soon to retry a failed write (0 when stored or there is no database).
func (r *BenchmarkRunReconciler) storeResults(ctx context.Context, tx *transition, doc *results.Doc) time.Duration {
	if r.results == nil {
		return 0
	}
	run := tx.run
	was := meta.FindStatusCondition(run.Status.Conditions, v1.ConditionResultsStored)
	stored, err := r.results.Write(ctx, run, doc)
	if err == nil {
		msg := fmt.Sprintf("%d rows stored in results database %s", stored.Rows, stored.Database)
		tx.setCondition(v1.ConditionResultsStored, metav1.ConditionTrue, v1.ReasonStored, msg)
		if was != nil && was.Status != metav1.ConditionTrue {
			tx.event(normal, "ResultsStored", "%s (they were not before: %s)", msg, was.Message)
		}
		logf.FromContext(ctx).V(1).Info("results stored", "database", stored.Database, "rows", stored.Rows)
		return 0
	}
	reason := v1.ReasonDatabaseUnavailable
	var ce *ResultsConfigError
	if errors.As(err, &ce) {
		reason = v1.ReasonDatabaseMisconfigured
	}
	msg := "the run's rows are not in the results database yet, they are written once it can take them: " + err.Error()
	tx.setCondition(v1.ConditionResultsStored, metav1.ConditionFalse, reason, msg)
	if was == nil || was.Status != metav1.ConditionFalse || was.Reason != reason {
		tx.event(warning, "ResultsNotStored", "%s", msg)
	}
	since := time.Duration(0)
	if was != nil && was.Status == metav1.ConditionFalse {
		since = r.clock.Since(was.LastTransitionTime.Time)
	}
	logf.FromContext(ctx).Info("results not stored, will retry", "reason", reason, "error", err.Error())
	return resultsRetry(since)
}

// flushResults is the outbox of a finished run: when the results database does not hold the
// run's current rows (its ResultsStored condition is not True, or the run changed since, e.g.
// its regression's confirmation ended), it writes them with its results.json from the results
// ConfigMap. While they are missing, the run holds ResultsOutboxFinalizer; it goes once they are
// written. The result says when to try again.
func (r *BenchmarkRunReconciler) flushResults(ctx context.Context, run *v1.BenchmarkRun) (ctrl.Result, error) {
	pending := r.results != nil && !meta.IsStatusConditionTrue(run.Status.Conditions, v1.ConditionResultsStored)
	if !pending {
		return ctrl.Result{}, r.removeOutboxFinalizer(ctx, run)
	}
	var left time.Duration // of the deadline of a deleted run; 0 while the run is not deleted
	if !run.DeletionTimestamp.IsZero() {
		left = r.outboxTimeout - r.clock.Since(run.DeletionTimestamp.Time)
		if left <= 0 {
			return ctrl.Result{}, r.giveUpResults(ctx, run)
		}
	}
	doc, err := r.resultsDoc(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	tx := newTransition(r, run)
	retry := r.storeResults(ctx, tx, doc)
	if err := tx.commit(ctx); err != nil {
		return reconciled(ctx, ctrl.Result{}, nil, err)
	}
	if retry > 0 && left > 0 {
		retry = min(retry, left)
	}
	if retry > 0 {
		if run.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(run, ResultsOutboxFinalizer) {
			if err := r.patchFinalizer(ctx, run, controllerutil.AddFinalizer); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	return ctrl.Result{}, r.removeOutboxFinalizer(ctx, run)
}

// giveUpResults lets a deleted run go without its rows in the results database: its deletion
// has waited the results outbox timeout. The loss is a Warning Event on the run (kept by the
// API server after the run is gone, for the Events' lifetime), a log line and a count in
// mysqlbench_results_lost_total.
func (r *BenchmarkRunReconciler) giveUpResults(ctx context.Context, run *v1.BenchmarkRun) error {
	why := "never tried"
	if c := meta.FindStatusCondition(run.Status.Conditions, v1.ConditionResultsStored); c != nil {
		why = c.Message
	}
	logf.FromContext(ctx).Info("results outbox timeout passed: the deleted run goes without its rows in the results database",
		"timeout", r.outboxTimeout.String(), "lastAttempt", why)
	r.recorder.Event(run, warning, "ResultsLost", r.eventRedactor(ctx, run)(fmt.Sprintf(
		"the run was deleted %s ago and its rows are still not in the results database (the results outbox timeout, "+
			"--results-outbox-timeout, has passed): they are lost; the last attempt: %s", r.outboxTimeout, why)))
	metrics.RecordResultsLost(run.Namespace)
	return r.removeOutboxFinalizer(ctx, run)
}

func (r *BenchmarkRunReconciler) removeOutboxFinalizer(ctx context.Context, run *v1.BenchmarkRun) error {
	if !controllerutil.ContainsFinalizer(run, ResultsOutboxFinalizer) {
		return nil
	}
	return r.patchFinalizer(ctx, run, controllerutil.RemoveFinalizer)
}

func (r *BenchmarkRunReconciler) patchFinalizer(ctx context.Context, run *v1.BenchmarkRun, edit func(client.Object, string) bool) error {
	patch := client.MergeFromWithOptions(run.DeepCopy(), client.MergeFromWithOptimisticLock{})
	edit(run, ResultsOutboxFinalizer)
	if err := r.Patch(ctx, run, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("finalizer %s: %w", ResultsOutboxFinalizer, err)
	}
	r.written.Store(client.ObjectKeyFromObject(run), run.ResourceVersion)
	return nil
}

// resultsDoc reads the run's results.json from its results ConfigMap, from the API server (the
// cache keeps no ConfigMap data); nil when the run has none (its results could not be written,
// or the ConfigMap is gone with a deleted namespace): the rows then come from the status alone.
func (r *BenchmarkRunReconciler) resultsDoc(ctx context.Context, run *v1.BenchmarkRun) (*results.Doc, error) {
	if run.Status.ResultsConfigMap == "" {
		return nil, nil
	}
	cm := &corev1.ConfigMap{}
	err := r.apiReader().Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: specs.ResultsConfigMapName(run)}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the results ConfigMap: %w", err)
	}
	if !metav1.IsControlledBy(cm, run) {
		return nil, nil
	}
	raw, ok := cm.Data[report.KeyResultsJSON]
	if !ok {
		return nil, nil
	}
	doc, err := results.Decode([]byte(raw))
	if err != nil {
		// The run's own results, unreadable: its status still holds every step.
		logf.FromContext(ctx).Info("results.json unreadable, storing the run from its status", "error", err.Error())
		return nil, nil
	}
	return doc, nil
}
