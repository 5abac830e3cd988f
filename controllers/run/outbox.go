package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/metrics"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/sink"
	"github.com/mysqlbench/mysqlbench-operator/internal/statustx"
)

// storeResults writes the finished run of tx into the results database, when there is one, and
// records the outcome as the ResultsStored condition of the same status write: storing the rows
// adds no write to the API server. doc is the run's results.json (nil when it has none). It
// returns how soon to retry a failed write (0 when stored or there is no database).
func (r *Reconciler) storeResults(ctx context.Context, tx *transition, doc *results.Doc) time.Duration {
	if r.results == nil {
		return 0
	}
	run := tx.run
	// A copy: SetCondition below changes the condition in place, and the Events compare with
	// what it was before.
	var was *metav1.Condition
	if c := meta.FindStatusCondition(run.Status.Conditions, v1.ConditionResultsStored); c != nil {
		was = c.DeepCopy()
	}
	stored, err := r.results.Write(ctx, run, doc)
	if err == nil {
		msg := fmt.Sprintf("%d rows stored in results database %s", stored.Rows, stored.Database)
		tx.SetCondition(v1.ConditionResultsStored, metav1.ConditionTrue, v1.ReasonStored, msg)
		if was != nil && was.Status != metav1.ConditionTrue {
			tx.event(normal, "ResultsStored", "%s (they were not before: %s)", msg, was.Message)
		}
		logf.FromContext(ctx).V(1).Info("results stored", "database", stored.Database, "rows", stored.Rows)
		return 0
	}
	reason := v1.ReasonDatabaseUnavailable
	var ce *sink.ConfigError
	if errors.As(err, &ce) {
		reason = v1.ReasonDatabaseMisconfigured
	}
	msg := "the run's rows are not in the results database yet, they are written once it can take them: " + err.Error()
	tx.SetCondition(v1.ConditionResultsStored, metav1.ConditionFalse, reason, msg)
	if was == nil || was.Status != metav1.ConditionFalse || was.Reason != reason {
		tx.event(warning, "ResultsNotStored", "%s", msg)
	}
	since := time.Duration(0)
	if was != nil && was.Status == metav1.ConditionFalse {
		since = r.clock.Since(was.LastTransitionTime.Time)
	}
	logf.FromContext(ctx).Info("results not stored, will retry", "reason", reason, "error", err.Error())
	return sink.Retry(since)
}

// flushResults is the outbox of a finished run: when the results database does not hold the
// run's current rows (its ResultsStored condition is not True, or the run changed since, e.g.
// its regression's confirmation ended), it writes them with its results.json from the results
// ConfigMap. While they are missing, the run holds sink.OutboxFinalizer; it goes once they are
// written. The result says when to try again.
func (r *Reconciler) flushResults(ctx context.Context, run *v1.BenchmarkRun) (ctrl.Result, error) {
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
	doc, err := r.resultsConfigMap().Doc(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	tx := newTransition(r, run)
	retry := r.storeResults(ctx, tx, doc)
	if err := tx.commit(ctx); err != nil {
		return statustx.Reconciled(ctx, ctrl.Result{}, nil, err)
	}
	if retry > 0 && left > 0 {
		retry = min(retry, left)
	}
	if retry > 0 {
		if run.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(run, sink.OutboxFinalizer) {
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
func (r *Reconciler) giveUpResults(ctx context.Context, run *v1.BenchmarkRun) error {
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

func (r *Reconciler) removeOutboxFinalizer(ctx context.Context, run *v1.BenchmarkRun) error {
	if !controllerutil.ContainsFinalizer(run, sink.OutboxFinalizer) {
		return nil
	}
	return r.patchFinalizer(ctx, run, controllerutil.RemoveFinalizer)
}

func (r *Reconciler) patchFinalizer(ctx context.Context, run *v1.BenchmarkRun, edit func(client.Object, string) bool) error {
	patch := client.MergeFromWithOptions(run.DeepCopy(), client.MergeFromWithOptimisticLock{})
	edit(run, sink.OutboxFinalizer)
	if err := r.Patch(ctx, run, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("finalizer %s: %w", sink.OutboxFinalizer, err)
	}
	r.written.Store(client.ObjectKeyFromObject(run), run.ResourceVersion)
	return nil
}
