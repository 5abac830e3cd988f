// Package schedule is the BenchmarkSchedule reconciler: it creates runs from a schedule's
// template at the times of its cron expression (cron.go), follows their comparisons with their
// baselines and the history of the schedule's runs, confirms a regression with a run of its own
// before it alarms (confirm.go; the confirmation run is built in confirm_run.go), and prunes old
// runs. Its runs, their status and their results belong to the BenchmarkRun reconciler
// (controllers/run); this one reads them.
package schedule

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
	"github.com/mysqlbench/mysqlbench-operator/internal/metrics"
	"github.com/mysqlbench/mysqlbench-operator/internal/scheduled"
	"github.com/mysqlbench/mysqlbench-operator/internal/statustx"
)

// Reconciler creates BenchmarkRuns from a schedule's template at the times of
// its cron expression, follows their comparisons with their baselines, and prunes old runs.
//
// The schedule's status is written in one place (Reconcile's commit of its scheduleUpdate, the
// status transaction the run's reconciler writes through too). Its runs, their status and their
// results belong to the BenchmarkRun controller, which also compares a scheduled run with its
// baseline (controllers/run/compare.go); this controller only reads them.
//
// Build it with New.
type Reconciler struct {
	kubeClient
	scheme   *runtime.Scheme
	recorder record.EventRecorder
	// clock decides which runs are due; injected so tests control time.
	clock clock.PassiveClock
}

// kubeClient is the embedded client under an unexported name: a reconciler cannot be built
// around the constructor.
type kubeClient = client.Client

// Dependencies are what a Reconciler cannot work without; each is
// required.
type Dependencies struct {
	// Client reads through the manager's cache and writes to the API server.
	Client   client.Client
	Scheme   *runtime.Scheme
	Recorder record.EventRecorder
	// Clock is clock.RealClock{} in the manager, a fake one in tests that move time.
	Clock clock.PassiveClock
}

// New is the one way to build the reconciler, for the manager and the
// tests alike. It refuses missing dependencies, naming each.
func New(d Dependencies) (*Reconciler, error) {
	var missing []string
	for _, dep := range []struct {
		name   string
		absent bool
	}{
		{"Client", d.Client == nil}, {"Clock", d.Clock == nil}, {"Recorder", d.Recorder == nil}, {"Scheme", d.Scheme == nil},
	} {
		if dep.absent {
			missing = append(missing, dep.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("BenchmarkSchedule reconciler: missing dependencies: %s", strings.Join(missing, ", "))
	}
	return &Reconciler{kubeClient: d.Client, scheme: d.Scheme, recorder: d.Recorder, clock: d.Clock}, nil
}

// RBAC: see the run reconciler (controllers/run). The schedule itself is only read (cache) and its status
// patched; its runs are created and pruned, never written otherwise.
// +kubebuilder:rbac:groups=mysqlbench.io,resources=benchmarkschedules,verbs=list;watch
// +kubebuilder:rbac:groups=mysqlbench.io,resources=benchmarkschedules/status,verbs=patch
// +kubebuilder:rbac:groups=mysqlbench.io,resources=benchmarkschedules/finalizers,verbs=update
// +kubebuilder:rbac:groups=mysqlbench.io,resources=benchmarkruns,verbs=list;watch;create;delete

// Reconcile updates the status from the runs (their comparisons included), prunes the history
// and creates the run that is due, then asks to be woken at the next scheduled time.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	sched := &v1.BenchmarkSchedule{}
	if err := r.Get(ctx, req.NamespacedName, sched); err != nil {
		if apierrors.IsNotFound(err) {
			metrics.ForgetSchedule(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !sched.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // its runs are owned by it: the garbage collector removes them
	}
	children, err := r.children(ctx, sched)
	if err != nil {
		return ctrl.Result{}, err
	}
	confs, err := r.confirmationsOf(ctx, sched)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := r.clock.Now()
	u := r.newScheduleUpdate(sched)
	r.summarize(u, children)
	r.analyseHistory(u, children)
	var result ctrl.Result
	confirmWait, err := r.confirm(ctx, u, children, confs, now)
	if err == nil {
		err = r.prune(ctx, u, children)
	}
	if err == nil {
		err = r.pruneConfirmations(ctx, u, confs, now)
	}
	if err == nil {
		result, err = r.schedule(ctx, u, children, now)
	}
	if confirmWait > 0 && (result.RequeueAfter == 0 || confirmWait < result.RequeueAfter) {
		result.RequeueAfter = confirmWait
	}
	// What was done so far is written even when a step failed; the Events follow the write.
	_, werr := u.Commit(ctx, r.Status(), r.recorder, nil)
	if werr == nil {
		for _, o := range u.outcomes {
			metrics.RecordConfirmation(sched.Namespace, sched.Name, o)
		}
		targets, cells := alarmingRegressions(sched)
		metrics.RecordRegressions(sched.Namespace, sched.Name, targets, cells)
	}
	return statustx.Reconciled(ctx, result, err, werr)
}

// scheduleUpdate is what one reconcile changes on a schedule: its status (sched; before is the
// status it started from) and the Events that explain the change, on the status transaction both
// reconcilers share (statustx). Reconcile commits it once, at the end.
type scheduleUpdate struct {
	statustx.Tx[*v1.BenchmarkSchedule]
	sched, before *v1.BenchmarkSchedule
	// outcomes are the confirmations this reconcile ended, counted once the status holds them.
	outcomes []v1.ConfirmationState
}

func (r *Reconciler) newScheduleUpdate(sched *v1.BenchmarkSchedule) *scheduleUpdate {
	u := &scheduleUpdate{Tx: statustx.New(scheduleStatus, r.clock, sched), sched: sched}
	u.before = u.Before()
	return u
}

// scheduleStatus is where a schedule keeps what the status transaction maintains.
var scheduleStatus = statustx.Fields[*v1.BenchmarkSchedule]{
	Status:             func(s *v1.BenchmarkSchedule) any { return &s.Status },
	ObservedGeneration: func(s *v1.BenchmarkSchedule) *int64 { return &s.Status.ObservedGeneration },
	Conditions:         func(s *v1.BenchmarkSchedule) *[]metav1.Condition { return &s.Status.Conditions },
}

// event queues an Event about a decision: recorded only once the status that holds it is written.
func (u *scheduleUpdate) event(kind, reason, message string) {
	u.Queue(kind, reason, message)
}

// did queues an Event about a write to the API server that has happened (a run created or
// deleted): recorded even when the status write after it fails.
func (u *scheduleUpdate) did(kind, reason, message string) { //nolint:unparam // event's shape: a Warning action is recorded alike
	u.QueueDone(kind, reason, message)
}

// SetupWithManager registers the controller; it owns the runs it creates.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1.BenchmarkSchedule{}).
		Owns(&v1.BenchmarkRun{}).
		Named("benchmarkschedule").
		Complete(r)
}

// children are the runs this schedule created, oldest scheduled time first.
func (r *Reconciler) children(ctx context.Context, sched *v1.BenchmarkSchedule) ([]*v1.BenchmarkRun, error) {
	list := &v1.BenchmarkRunList{}
	if err := r.List(ctx, list, client.InNamespace(sched.Namespace), client.MatchingLabels{v1.LabelSchedule: sched.Name}); err != nil {
		return nil, fmt.Errorf("list runs of schedule %s: %w", sched.Name, err)
	}
	var runs []*v1.BenchmarkRun
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], sched) {
			runs = append(runs, &list.Items[i])
		}
	}
	sort.SliceStable(runs, func(i, j int) bool {
		ti, tj := scheduled.Time(runs[i]), scheduled.Time(runs[j])
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return runs[i].Name < runs[j].Name
	})
	return runs, nil
}

// summarize derives the status fields that describe the runs: active runs, the newest finished
// run and the newest comparison (also exported as metrics, so a restarted manager shows them).
// A comparison newer than the status had is announced on the schedule with an Event (the run
// controller, which compared the run, announced it on the run).
func (r *Reconciler) summarize(u *scheduleUpdate, children []*v1.BenchmarkRun) {
	sched := u.sched
	st := &sched.Status
	st.Active = nil
	for _, run := range children {
		if !run.Status.Phase.Finished() {
			st.Active = append(st.Active, run.Name)
		}
	}
	for i := len(children) - 1; i >= 0; i-- {
		if run := children[i]; run.Status.Phase.Finished() {
			st.LastRun, st.LastRunPhase = run.Name, run.Status.Phase
			break
		}
	}
	for i := len(children) - 1; i >= 0; i-- {
		run := children[i]
		if run.Status.Phase != v1.RunSucceeded {
			continue
		}
		if st.LastSuccessfulTime == nil || (run.Status.CompletionTime != nil && run.Status.CompletionTime.After(st.LastSuccessfulTime.Time)) {
			st.LastSuccessfulTime = run.Status.CompletionTime
		}
		break
	}
	for i := len(children) - 1; i >= 0; i-- {
		c := children[i].Status.Comparison
		if children[i].Status.Phase != v1.RunSucceeded || c == nil {
			continue
		}
		// A Regressed comparison that is to be confirmed is announced by confirm instead.
		toConfirm := scheduled.Confirmable(c) && (sched.Spec.Regression.ConfirmEnabled() || awaitsConfirmation(children, c.Run))
		status, reason := scheduled.RegressedCondition(*c)
		refused := false
		if cond := meta.FindStatusCondition(children[i].Status.Conditions, v1.ConditionRegressed); cond != nil && cond.Reason == v1.ReasonBaselineRefused {
			// The run controller refused the pinned baseline: the schedule says so too, as only
			// its spec can fix it.
			reason, refused = v1.ReasonBaselineRefused, true
		}
		if prev := u.before.Status.LastComparison; (prev == nil || prev.Run != c.Run) && !toConfirm {
			kind := corev1.EventTypeNormal
			if c.Verdict == v1.VerdictRegressed || refused {
				kind = corev1.EventTypeWarning
			}
			u.event(kind, reason, c.Run+": "+c.Message)
		}
		st.LastComparison = c.DeepCopy()
		st.Verdict = compare.Short(*c)
		u.SetCondition(v1.ConditionRegressed, status, reason, c.Run+": "+c.Message)
		metrics.RecordComparison(sched.Namespace, sched.Name, *c)
		break
	}
}

// alarmingRegressions are the regressed targets and cells of the schedule's newest comparison
// that alarm: a confirmed regression's, as its confirmation run found them; the comparison's own
// when confirmation is off (it alarms at once); none while confirming, and none when the
// confirmation did not confirm it (not found again, or undecided: those alarm through the
// Regressed condition and confirmations_total, not as a confirmed regression).
func alarmingRegressions(sched *v1.BenchmarkSchedule) (targets, cells int32) {
	c, rec := sched.Status.LastComparison, sched.Status.Confirmation
	if !scheduled.Confirmable(c) {
		return 0, 0
	}
	ours := rec != nil && rec.Run == c.Run
	switch {
	case ours && rec.State == v1.ConfirmationConfirmed && rec.Result != nil:
		return regressedTargets(*rec.Result), rec.Result.RegressedCells
	case c.Verdict != v1.VerdictRegressed:
		return 0, 0 // an Inconclusive comparison's suspects alarm only once confirmed
	case !sched.Spec.Regression.ConfirmEnabled() && (!ours || rec.State == v1.ConfirmationSkipped):
		return regressedTargets(*c), c.RegressedCells
	}
	return 0, 0
}

// analyseHistory looks for change points across the retained successful runs once per newly
// compared run (status.history.run says which run it was done for), and raises a Warning Event
// for a harmful, unacknowledged shift.
func (r *Reconciler) analyseHistory(u *scheduleUpdate, children []*v1.BenchmarkRun) {
	sched := u.sched
	last := sched.Status.LastComparison
	if last == nil {
		return
	}
	if h := sched.Status.History; h == nil || h.Run != last.Run {
		var succeeded []*v1.BenchmarkRun
		for _, run := range children {
			if run.Status.Phase == v1.RunSucceeded {
				succeeded = append(succeeded, run)
			}
			if run.Name == last.Run {
				break
			}
		}
		h := compare.History(succeeded, sched.Spec.Regression)
		sched.Status.History = &h
		if h.RegressedCells > 0 {
			cp := h.ChangePoints[0]
			u.event(corev1.EventTypeWarning, v1.ReasonChangePoint, fmt.Sprintf(
				"%d cells shifted for the worse over the last %d runs; largest: %s at %d threads, %s %+.1f%% since %s (p=%.3g)",
				h.RegressedCells, h.Runs, compare.Label(cp.Target, cp.Workload), cp.Threads, cp.Metric, cp.ChangePercent, cp.Since, cp.P))
		}
	}
	metrics.RecordHistory(sched.Namespace, sched.Name, *sched.Status.History)
}

// prune deletes the oldest finished runs beyond the history limits. The pinned baseline is never
// deleted, and neither is the newest successful run (the next run's baseline).
func (r *Reconciler) prune(ctx context.Context, u *scheduleUpdate, children []*v1.BenchmarkRun) error {
	sched := u.sched
	var succeeded, failed []*v1.BenchmarkRun
	for _, run := range children {
		switch run.Status.Phase {
		case v1.RunSucceeded:
			succeeded = append(succeeded, run)
		case v1.RunFailed:
			failed = append(failed, run)
		}
	}
	var doomed []*v1.BenchmarkRun
	if n := len(succeeded) - sched.Spec.SuccessfulHistory(); n > 0 {
		doomed = append(doomed, succeeded[:n]...)
	}
	if n := len(failed) - sched.Spec.FailedHistory(); n > 0 {
		doomed = append(doomed, failed[:n]...)
	}
	for _, run := range doomed {
		if run.Name == sched.Spec.Regression.BaselineRun || !run.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Delete(ctx, run, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete old run %s: %w", run.Name, err)
		}
		logf.FromContext(ctx).Info("deleted run beyond the history limit", "run", run.Name, "phase", run.Status.Phase)
		u.did(corev1.EventTypeNormal, "Pruned", fmt.Sprintf("deleted %s run %s: beyond the history limit", run.Status.Phase, run.Name))
	}
	return nil
}

// schedule creates the run that is due, if any, and says when to look again.
func (r *Reconciler) schedule(ctx context.Context, u *scheduleUpdate,
	children []*v1.BenchmarkRun, now time.Time) (ctrl.Result, error) {
	sched := u.sched
	cronSched, reason, err := v1.ParseSchedule(sched.Spec)
	if err != nil {
		sched.Status.NextScheduleTime = nil
		r.stall(u, reason, err.Error())
		return ctrl.Result{}, nil // only a spec change can fix it; that brings a reconcile
	}
	next := cronSched.Next(now)
	if next.IsZero() {
		sched.Status.NextScheduleTime = nil
		r.stall(u, v1.ReasonNeverFires, fmt.Sprintf("spec.schedule %q never fires (no such date within five years): fix the day and month fields", sched.Spec.Schedule))
		return ctrl.Result{}, nil
	}
	// A run that could not be created (a foreign run holds its name, or the API server refused
	// the template) keeps the schedule Stalled until a later run is created or the spec changes.
	stuck := false
	if c := meta.FindStatusCondition(sched.Status.Conditions, v1.ConditionStalled); c != nil && c.Status == metav1.ConditionTrue &&
		c.ObservedGeneration == sched.Generation && (c.Reason == v1.ReasonRunNameTaken || c.Reason == v1.ReasonInvalidTemplate) {
		stuck = true
	}
	ready := func(reason, message string) {
		if !stuck {
			u.SetCondition(v1.ConditionReady, metav1.ConditionTrue, reason, message)
		}
	}
	if !stuck {
		u.SetCondition(v1.ConditionStalled, metav1.ConditionFalse, v1.ReasonValid, "the schedule is valid")
	}

	if sched.Spec.IsSuspended() {
		sched.Status.NextScheduleTime = nil
		ready(v1.ReasonSuspended, fmt.Sprintf("suspended: no new runs (%d active)", len(sched.Status.Active)))
		return ctrl.Result{}, nil
	}
	nextTime := metav1.NewTime(next)
	sched.Status.NextScheduleTime = &nextTime
	wake := ctrl.Result{RequeueAfter: next.Sub(now)}

	due, err := lastDue(cronSched, handledUntil(sched, children), now)
	if err != nil {
		// Not expected with robfig/cron's schedules; due is still a scheduled time not yet
		// handled, so the schedule moves on and the next reconcile searches from there.
		logf.FromContext(ctx).Error(err, "newest scheduled time not found; acting on an older one", "due", due.UTC().Format(time.RFC3339))
	}
	if due.IsZero() {
		ready(v1.ReasonScheduled, "next run at "+next.UTC().Format(time.RFC3339))
		return wake, nil
	}
	if d := sched.Spec.StartingDeadlineSeconds; d != nil && now.Sub(due) > time.Duration(*d)*time.Second {
		missed := metav1.NewTime(due)
		sched.Status.LastMissedTime = &missed
		u.event(corev1.EventTypeWarning, v1.ReasonMissedSchedule, fmt.Sprintf(
			"the run due at %s did not start within startingDeadlineSeconds (%d s): it would be %s late; skipped",
			due.UTC().Format(time.RFC3339), *d, now.Sub(due).Round(time.Second)))
		ready(v1.ReasonScheduled, "next run at "+next.UTC().Format(time.RFC3339))
		return wake, nil
	}

	switch sched.Spec.ConcurrencyPolicyOrDefault() {
	case v1.ConcurrencyForbid:
		if len(sched.Status.Active) > 0 {
			ready(v1.ReasonWaitingForRun,
				fmt.Sprintf("the run due at %s waits for %s to finish (concurrencyPolicy Forbid)",
					due.UTC().Format(time.RFC3339), sched.Status.Active[0]))
			// The active run's completion brings a reconcile; the deadline may pass before that.
			if d := sched.Spec.StartingDeadlineSeconds; d != nil {
				if expiry := due.Add(time.Duration(*d)*time.Second + time.Second).Sub(now); expiry < wake.RequeueAfter {
					wake.RequeueAfter = expiry
				}
			}
			return wake, nil
		}
	case v1.ConcurrencyReplace:
		for _, run := range children {
			if run.Status.Phase.Finished() || !run.DeletionTimestamp.IsZero() {
				continue
			}
			if err := r.Delete(ctx, run, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, fmt.Errorf("replace active run %s: %w", run.Name, err)
			}
			u.did(corev1.EventTypeNormal, "Replaced", fmt.Sprintf(
				"deleted active run %s to start the run due at %s (concurrencyPolicy Replace)", run.Name, due.UTC().Format(time.RFC3339)))
		}
	}

	if err := r.createRun(ctx, u, due, lastCompared(sched, children)); err != nil {
		return ctrl.Result{}, err
	}
	return wake, nil
}

// handledUntil is the newest time the schedule has acted on: a run created or a time skipped,
// or its creation. A restart reads it from the status and from the runs themselves, so a run
// created just before a crash (status not yet written) is not created again.
func handledUntil(sched *v1.BenchmarkSchedule, children []*v1.BenchmarkRun) time.Time {
	t := sched.CreationTimestamp.Time
	for _, mt := range []*metav1.Time{sched.Status.LastScheduleTime, sched.Status.LastMissedTime} {
		if mt != nil && mt.After(t) {
			t = mt.Time
		}
	}
	for _, run := range children {
		if st := scheduled.Time(run); st.After(t) {
			t = st
		}
	}
	return t
}

// createRun creates the run for scheduled time due from the template.
// lastCompared is the newest compared run (status.lastComparison's), or nil.
func lastCompared(sched *v1.BenchmarkSchedule, children []*v1.BenchmarkRun) *v1.BenchmarkRun {
	c := sched.Status.LastComparison
	if c == nil {
		return nil
	}
	for _, run := range children {
		if run.Name == c.Run {
			return run
		}
	}
	return nil
}

// createRun creates the run due at due from the template. With spec.regression.maxRepetitions
// its repetitions follow the newest compared run (last): raised after an Inconclusive verdict.
// They are a function of what the schedule's runs say, so a reconcile repeated after a crash
// creates the same run.
func (r *Reconciler) createRun(ctx context.Context, u *scheduleUpdate, due time.Time, last *v1.BenchmarkRun) error {
	sched := u.sched
	tmpl := sched.Spec.Template
	run := &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{
			Name:        v1.RunName(sched.Name, due),
			Namespace:   sched.Namespace,
			Labels:      map[string]string{},
			Annotations: map[string]string{},
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
	for k, v := range tmpl.Metadata.Labels {
		run.Labels[k] = v
	}
	for k, v := range tmpl.Metadata.Annotations {
		run.Annotations[k] = v
	}
	var raised string
	if reps := compare.NextRepetitions(tmpl.Spec, sched.Spec.Regression, last); int(reps) != tmpl.Spec.RepetitionsOrDefault() {
		run.Spec.Repetitions = &reps
		raised = fmt.Sprintf(" with %d repetitions (the template has %d; %s was compared %s)",
			reps, tmpl.Spec.RepetitionsOrDefault(), last.Name, compare.Short(*sched.Status.LastComparison))
	}
	run.Spec.ServerInstance = scheduled.ServerInstance(run.Spec)
	run.Labels[v1.LabelSchedule] = sched.Name
	run.Annotations[v1.AnnotationScheduledTime] = due.UTC().Format(time.RFC3339)
	if err := controllerutil.SetControllerReference(sched, run, r.scheme); err != nil {
		return err
	}
	dueTime := metav1.NewTime(due)
	err := r.Create(ctx, run)
	switch {
	case apierrors.IsAlreadyExists(err):
		existing := &v1.BenchmarkRun{}
		if gerr := r.Get(ctx, client.ObjectKeyFromObject(run), existing); gerr != nil {
			return gerr
		}
		if !metav1.IsControlledBy(existing, sched) {
			sched.Status.LastMissedTime = &dueTime
			r.stall(u, v1.ReasonRunNameTaken, fmt.Sprintf(
				"the run due at %s is named %s, but a BenchmarkRun of that name exists that this schedule does not own: delete or rename it",
				due.UTC().Format(time.RFC3339), run.Name))
			return nil
		}
		// Created before a restart: the deterministic name makes this a no-op.
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		sched.Status.LastMissedTime = &dueTime
		r.stall(u, v1.ReasonInvalidTemplate, fmt.Sprintf("the API server refused the run due at %s: %v: fix spec.template",
			due.UTC().Format(time.RFC3339), err))
		return nil
	case err != nil:
		return fmt.Errorf("create run %s: %w", run.Name, err)
	default:
		logf.FromContext(ctx).Info("created scheduled run", "run", run.Name, "scheduledTime", due.UTC().Format(time.RFC3339))
		u.did(corev1.EventTypeNormal, "Created", fmt.Sprintf("created BenchmarkRun %s for %s%s", run.Name, due.UTC().Format(time.RFC3339), raised))
		sched.Status.Active = append(sched.Status.Active, run.Name)
	}
	sched.Status.LastScheduleTime = &dueTime
	u.SetCondition(v1.ConditionStalled, metav1.ConditionFalse, v1.ReasonValid, "the schedule is valid")
	u.SetCondition(v1.ConditionReady, metav1.ConditionTrue, v1.ReasonScheduled,
		fmt.Sprintf("created %s; next run at %s", run.Name, sched.Status.NextScheduleTime.UTC().Format(time.RFC3339)))
	return nil
}

// stall marks the schedule as unable to go on until its spec changes, with an Event the first
// time: when the status this reconcile started from was not stalled with this message.
func (r *Reconciler) stall(u *scheduleUpdate, reason, message string) {
	old := meta.FindStatusCondition(u.before.Status.Conditions, v1.ConditionStalled)
	if old == nil || old.Status != metav1.ConditionTrue || old.Message != bounded.Head(message, bounded.Condition) {
		u.event(corev1.EventTypeWarning, reason, message)
	}
	u.SetCondition(v1.ConditionStalled, metav1.ConditionTrue, reason, message)
	u.SetCondition(v1.ConditionReady, metav1.ConditionFalse, reason, message)
}
