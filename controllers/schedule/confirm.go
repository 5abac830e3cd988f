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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
	"github.com/mysqlbench/mysqlbench-operator/internal/scheduled"
)

// A Regressed comparison is re-measured before it alarms, the way perf sheriffs re-trigger an
// alert before anyone is paged: one nightly comparison pits two server instances measured hours
// (or a day) apart, and noise between instances or nights that the repetitions do not see can
// pass for a change. The confirmation run brings up the baseline's server and the run's side by
// side, interleaved where the engines allow, each on a new server instance every round, and
// measures only the flagged cells, with at least the run's repetitions. Its comparison, paired
// round by round (compare.PairedByRound), decides; when it cannot (Inconclusive), the regression
// stays unconfirmed and is measured again with twice the repetitions, within spec.regression.
// confirm.maxRuns, 10 repetitions and 512 steps.
//
// The schedule controller writes the decision (status.confirmation), creates the confirmation
// run in a later reconcile, and reads its result when it ends; the run controller only runs it
// and, for the compared run, records that its Regressed condition awaits the confirmation.

// Bounds of a confirmation run: a run holds at most 16 targets, two per regressed target, 512
// steps and 10 repetitions.
const (
	maxConfirmTargets = 8
	maxRunSteps       = 512
	maxRepetitions    = 10
	// keepConfirmations is how many finished confirmation runs are kept beyond the last 24 hours
	// (maxPerDay counts those of the last 24 hours, so they are kept anyway).
	keepConfirmations = 3
	// confirmationGrace is how long a confirmation run the schedule created may be missing from
	// its cache before it counts as deleted.
	confirmationGrace = time.Minute
)

// confirmationsOf are the confirmation runs this schedule created, oldest decision first.
func (r *Reconciler) confirmationsOf(ctx context.Context, sched *v1.BenchmarkSchedule) ([]*v1.BenchmarkRun, error) {
	list := &v1.BenchmarkRunList{}
	if err := r.List(ctx, list, client.InNamespace(sched.Namespace), client.MatchingLabels{v1.LabelConfirmationOf: sched.Name}); err != nil {
		return nil, fmt.Errorf("list confirmation runs of schedule %s: %w", sched.Name, err)
	}
	var runs []*v1.BenchmarkRun
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], sched) {
			runs = append(runs, &list.Items[i])
		}
	}
	sort.SliceStable(runs, func(i, j int) bool { return confirmationTime(runs[i]).Before(confirmationTime(runs[j])) })
	return runs, nil
}

// confirmationTime is when the schedule decided to create conf (its creation time if unreadable).
func confirmationTime(conf *v1.BenchmarkRun) time.Time {
	if t, err := time.Parse(time.RFC3339, conf.Annotations[v1.AnnotationConfirmationTime]); err == nil {
		return t
	}
	return conf.CreationTimestamp.Time
}

// confirm follows the confirmation of the newest comparison when it is Regressed: decides it
// (or skips it, beyond the bounds), creates its run in the next reconcile, reads the run's result,
// and sets the schedule's Regressed condition and verdict from it. It returns how soon to look
// again (0: a watch brings the next reconcile).
func (r *Reconciler) confirm(ctx context.Context, u *scheduleUpdate, children, confs []*v1.BenchmarkRun, now time.Time) (time.Duration, error) {
	sched := u.sched
	st := &sched.Status
	c := st.LastComparison
	flagged := scheduled.Confirmable(c)
	rec := st.Confirmation
	if flagged && (rec == nil || rec.Run != c.Run) && !sched.Spec.Regression.ConfirmEnabled() && awaitsConfirmation(children, c.Run) {
		// Turned off after the run controller deferred the run's alarm: record why it was not
		// confirmed, so the run's condition does not wait for ever.
		start := metav1.NewTime(now.Truncate(time.Second))
		rec = &v1.Confirmation{Run: c.Run, Baseline: c.Baseline, Verdict: c.Verdict, State: v1.ConfirmationSkipped, StartTime: &start,
			CompletionTime: &start}
		rec.Message = fmt.Sprintf("%s, %s: spec.regression.confirm.enabled is false", flaggedText(c), unconfirmedText(rec))
		st.Confirmation = rec
		r.concluded(u, rec)
	}
	if flagged && (rec == nil || rec.Run != c.Run) && sched.Spec.Regression.ConfirmEnabled() {
		// A newer regression supersedes an unfinished confirmation (possible with Allow or
		// Replace): its run goes on and is pruned later, but no longer decides anything.
		var err error
		if rec, err = r.decideConfirmation(ctx, sched, children, confs, c, now); err != nil {
			return 0, err
		}
		st.Confirmation = rec
		if rec.State == v1.ConfirmationSkipped {
			r.concluded(u, rec)
		} else {
			u.event(corev1.EventTypeNormal, v1.ReasonAwaitingConfirmation, fmt.Sprintf(
				"%s %s; confirming before alarming: %s re-measures %s",
				c.Run, flaggedText(c), rec.ConfirmationRun, cellsText(rec.Cells)))
		}
	}
	if rec == nil {
		return 0, nil // nothing to confirm: the comparison alarms as it is (summarize)
	}

	// An unfinished confirmation is followed to its end even when a newer comparison (Allow)
	// is not Regressed, so its record never stays Running.
	var wait time.Duration
	var err error
	switch rec.State {
	case v1.ConfirmationPending:
		err = r.startConfirmation(ctx, u, rec, children)
	case v1.ConfirmationRunning:
		wait, err = r.followConfirmation(ctx, u, rec, confs, now)
	}
	if !rec.State.Final() && rec.ConfirmationRun != "" && !contains(st.Active, rec.ConfirmationRun) {
		// Forbid waits for it like for a scheduled run: the next night must not measure on the
		// nodes the confirmation uses, nor become the baseline of an undecided alarm.
		st.Active = append(st.Active, rec.ConfirmationRun)
	}

	if flagged && rec.Run == c.Run {
		status, reason, suffix := confirmationCondition(*rec)
		st.Verdict = compare.Short(*c) + ", " + suffix
		u.SetCondition(v1.ConditionRegressed, status, reason, c.Run+": "+rec.Message)
	}
	return wait, err
}

// awaitsConfirmation says whether the child run named name has its Regressed condition waiting
// for a confirmation.
func awaitsConfirmation(children []*v1.BenchmarkRun, name string) bool {
	for _, run := range children {
		if run.Name == name {
			cond := meta.FindStatusCondition(run.Status.Conditions, v1.ConditionRegressed)
			return cond != nil && cond.Reason == v1.ReasonAwaitingConfirmation
		}
	}
	return false
}

// confirmationCondition is the schedule's Regressed condition and the verdict's suffix for a
// confirmation. Only Confirmed is a confirmed alarm; for a regression, a confirmation that could
// not decide (Skipped, Failed, Inconclusive) alarms too, saying it is unconfirmed, so that no
// regression is swallowed; an Inconclusive comparison's suspects stay Inconclusive then. Only
// Confirmed counts in the regressed metrics and sends the Regressed Warning.
func confirmationCondition(rec v1.Confirmation) (metav1.ConditionStatus, string, string) {
	status, reason := scheduled.ConfirmedCondition(rec)
	suffix := map[v1.ConfirmationState]string{
		v1.ConfirmationConfirmed: "confirmed", v1.ConfirmationNotConfirmed: "not confirmed",
		v1.ConfirmationSkipped: "unconfirmed", v1.ConfirmationFailed: "unconfirmed", v1.ConfirmationInconclusive: "unconfirmed",
	}[rec.State]
	if rec.OfSuspects() {
		suffix = map[v1.ConfirmationState]string{
			v1.ConfirmationConfirmed: "regression confirmed", v1.ConfirmationNotConfirmed: "no regression found again",
			v1.ConfirmationSkipped: "not re-measured", v1.ConfirmationFailed: "not re-measured", v1.ConfirmationInconclusive: "still undecided",
		}[rec.State]
	}
	if suffix == "" {
		suffix = "confirming"
	}
	return status, reason, suffix
}

// decideConfirmation records what to do about the Regressed comparison c: a Pending confirmation
// naming its run, or a Skipped one saying why none can run.
func (r *Reconciler) decideConfirmation(ctx context.Context, sched *v1.BenchmarkSchedule,
	children, confs []*v1.BenchmarkRun, c *v1.Comparison, now time.Time) (*v1.Confirmation, error) {
	start := metav1.NewTime(now.Truncate(time.Second))
	rec := &v1.Confirmation{Run: c.Run, Baseline: c.Baseline, Verdict: c.Verdict, StartTime: &start}
	skip := func(why string) *v1.Confirmation {
		rec.State, rec.CompletionTime = v1.ConfirmationSkipped, &start
		rec.Message = fmt.Sprintf("%s, %s: %s", flaggedText(c), unconfirmedText(rec), why)
		return rec
	}
	maxPerDay := sched.Spec.Regression.ConfirmMaxPerDay()
	recent := 0
	for _, conf := range confs {
		// A re-measurement belongs to its regression's confirmation: maxRuns bounds those.
		if t := confirmationTime(conf); now.Sub(t) < 24*time.Hour && confirmationAttempt(conf) == 1 {
			recent++
		}
	}
	if recent >= maxPerDay {
		return skip(fmt.Sprintf("%d regression(s) set out to confirm in the last 24 hours, the most spec.regression.confirm.maxPerDay (%d) allows",
			recent, maxPerDay)), nil
	}
	rec.Attempt = 1
	conf, cells, why, err := r.buildConfirmation(ctx, sched, children, rec)
	if err != nil {
		return nil, err
	}
	if why != "" {
		return skip(why), nil
	}
	rec.State, rec.ConfirmationRun, rec.Cells, rec.Order = v1.ConfirmationPending, conf.Name, cells, conf.Spec.Order
	rec.Repetitions = *conf.Spec.Repetitions
	rec.Message = fmt.Sprintf("%s; awaiting confirmation by %s, which re-measures %s with %d repetitions",
		flaggedText(c), conf.Name, cellsText(cells), rec.Repetitions)
	if conf.Spec.Order == v1.OrderSequential {
		rec.Message += " one target after another (a target's engine is not builtin, so they cannot be interleaved)"
	}
	return rec, nil
}

// buildConfirmation builds rec's confirmation run from the compared run and its baseline, as they
// are now: the same inputs give the same run, so a repeated reconcile creates the same one. why
// says why no confirmation run can be built; err is an error of the API server's.
func (r *Reconciler) buildConfirmation(ctx context.Context, sched *v1.BenchmarkSchedule,
	children []*v1.BenchmarkRun, rec *v1.Confirmation) (conf *v1.BenchmarkRun, cells []string, why string, err error) {
	var run *v1.BenchmarkRun
	for _, child := range children {
		if child.Name == rec.Run {
			run = child
		}
	}
	if run == nil {
		return nil, nil, fmt.Sprintf("run %s no longer exists", rec.Run), nil
	}
	if rec.Baseline == "" {
		return nil, nil, fmt.Sprintf("run %s has no baseline", rec.Run), nil
	}
	baseline := &v1.BenchmarkRun{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: sched.Namespace, Name: rec.Baseline}, baseline); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, fmt.Sprintf("baseline %s no longer exists", rec.Baseline), nil
		}
		return nil, nil, "", fmt.Errorf("get baseline %s: %w", rec.Baseline, err)
	}
	if why := scheduled.PinnedBaselineRefusal(sched, baseline); why != "" {
		return nil, nil, why, nil
	}
	// The comparison the run recorded, with the same history, so the same cells are flagged.
	res := compare.CompareWith(run, baseline, sched.Spec.Regression, compare.Options{History: compare.HistoryOf(run, children)})
	attempt, reps := max(rec.Attempt, 1), rec.Repetitions
	if attempt == 1 {
		reps = 0 // the first attempt's rule; a record from before attempts were counted has none
	}
	conf, cells, berr := confirmationRun(sched, run, baseline, res, rec.StartTime.Time, attempt, reps)
	if berr != nil {
		return nil, nil, berr.Error(), nil
	}
	return conf, cells, "", nil
}

// startConfirmation creates the Pending confirmation's run. A run of its name that this schedule
// created for the same compared run is taken as created (a restart after the create); anything
// else under the name fails the confirmation.
func (r *Reconciler) startConfirmation(ctx context.Context, u *scheduleUpdate, rec *v1.Confirmation, children []*v1.BenchmarkRun) error {
	sched := u.sched
	conf, _, why, err := r.buildConfirmation(ctx, sched, children, rec)
	if err != nil {
		return err
	}
	if why != "" {
		r.fail(u, rec, "could not create "+rec.ConfirmationRun+": "+why)
		return nil
	}
	if err := controllerutil.SetControllerReference(sched, conf, r.scheme); err != nil {
		return err
	}
	err = r.Create(ctx, conf)
	switch {
	case apierrors.IsAlreadyExists(err):
		existing := &v1.BenchmarkRun{}
		if gerr := r.Get(ctx, client.ObjectKeyFromObject(conf), existing); gerr != nil {
			return gerr
		}
		if !metav1.IsControlledBy(existing, sched) || existing.Labels[v1.LabelConfirms] != rec.Run {
			r.fail(u, rec, fmt.Sprintf("a BenchmarkRun named %s exists that is not this schedule's confirmation of %s: delete or rename it",
				conf.Name, rec.Run))
			return nil
		}
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		r.fail(u, rec, fmt.Sprintf("the API server refused confirmation run %s: %v", conf.Name, err))
		return nil
	case err != nil:
		return fmt.Errorf("create confirmation run %s: %w", conf.Name, err)
	default:
		logf.FromContext(ctx).Info("created confirmation run", "run", conf.Name, "confirms", rec.Run, "baseline", rec.Baseline)
		u.did(corev1.EventTypeNormal, "Created", fmt.Sprintf("created BenchmarkRun %s to confirm the regression of %s against %s (%s, %s)",
			conf.Name, rec.Run, rec.Baseline, conf.Spec.Order, cellsText(rec.Cells)))
	}
	rec.State = v1.ConfirmationRunning
	rec.Message = strings.Replace(rec.Message, "awaiting confirmation by", "confirming with", 1)
	return nil
}

// followConfirmation reads the Running confirmation's run: its result once it ended, a failure
// when it failed, vanished or ran past the timeout (then it is deleted).
func (r *Reconciler) followConfirmation(ctx context.Context, u *scheduleUpdate, rec *v1.Confirmation,
	confs []*v1.BenchmarkRun, now time.Time) (time.Duration, error) {
	sched := u.sched
	var conf *v1.BenchmarkRun
	for _, c := range confs {
		if c.Name == rec.ConfirmationRun {
			conf = c
		}
	}
	since := now.Sub(rec.StartTime.Time)
	switch {
	case conf == nil && since < confirmationGrace:
		return confirmationGrace - since, nil // just created: the cache may not have it yet
	case conf == nil:
		r.fail(u, rec, fmt.Sprintf("confirmation run %s no longer exists (deleted before it finished)", rec.ConfirmationRun))
		return 0, nil
	case conf.Status.Phase == v1.RunFailed:
		why := "a target failed"
		if cond := meta.FindStatusCondition(conf.Status.Conditions, v1.ConditionFailed); cond != nil && cond.Message != "" {
			why = cond.Message
		}
		r.fail(u, rec, fmt.Sprintf("confirmation run %s failed: %s", conf.Name, why))
		return 0, nil
	case conf.Status.Phase == v1.RunSucceeded:
		res := confirmationResult(conf, sched.Spec.Regression)
		summary := res.Summary
		rec.Result = &summary
		state, msg := concludeConfirmation(rec, conf, res)
		if state == v1.ConfirmationInconclusive {
			again, why := r.measureAgain(u, rec, conf, msg, now)
			if again {
				return 0, nil
			}
			msg += "; " + why
		}
		r.end(u, rec, state, msg)
		return 0, nil
	}
	// Each confirmation run has the whole timeout: StartTime is when it was decided.
	timeout := sched.Spec.Regression.ConfirmTimeout()
	if since < timeout {
		return timeout - since, nil
	}
	if conf.DeletionTimestamp.IsZero() {
		if err := r.Delete(ctx, conf, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return 0, fmt.Errorf("delete confirmation run %s past its timeout: %w", conf.Name, err)
		}
		u.did(corev1.EventTypeNormal, "Deleted", fmt.Sprintf("deleted confirmation run %s: not finished within spec.regression.confirm.timeoutMinutes (%s)",
			conf.Name, timeout))
	}
	r.fail(u, rec, fmt.Sprintf("confirmation run %s did not finish within spec.regression.confirm.timeoutMinutes (%s)", conf.Name, timeout))
	return 0, nil
}

// measureAgain decides, for a confirmation whose run conf was Inconclusive (msg says how), the
// next confirmation run: twice the repetitions, recorded Pending for startConfirmation to create.
// It returns false, with what bound stopped it and what to change, when maxRuns, 10 repetitions or
// 512 steps leave no room for more.
func (r *Reconciler) measureAgain(u *scheduleUpdate, rec *v1.Confirmation, conf *v1.BenchmarkRun,
	msg string, now time.Time) (bool, string) {
	sched := u.sched
	attempt := max(rec.Attempt, confirmationAttempt(conf))
	if maxRuns := sched.Spec.Regression.ConfirmMaxRuns(); attempt >= maxRuns {
		return false, fmt.Sprintf("no confirmation run left: %d of spec.regression.confirm.maxRuns (%d) ran; raise maxRuns, or lower the noise "+
			"(dedicated nodes, equal requests and limits)", attempt, maxRuns)
	}
	reps := nextConfirmationRepetitions(conf)
	if reps == 0 {
		return false, fmt.Sprintf("no room for more repetitions: %s measured %d, and a run has at most %d repetitions and %d steps; "+
			"flag fewer cells (spec.regression.acknowledged) or lower the noise", conf.Name, conf.Spec.RepetitionsOrDefault(),
			maxRepetitions, maxRunSteps)
	}
	start := metav1.NewTime(now.Truncate(time.Second))
	rec.Attempt, rec.Repetitions, rec.StartTime = attempt+1, reps, &start
	rec.State = v1.ConfirmationPending
	rec.ConfirmationRun = nextAttemptName(conf, rec.Attempt)
	rec.Message = fmt.Sprintf("%s; measuring again with %d repetitions: awaiting confirmation by %s", msg, reps, rec.ConfirmationRun)
	u.event(corev1.EventTypeNormal, v1.ReasonConfirmationInconclusive, rec.Run+": "+rec.Message)
	return true, ""
}

// nextAttemptName is the name of confirmation run attempt after conf (ConfirmationAttemptName):
// conf's own name without its attempt's letter, and the next letter.
func nextAttemptName(conf *v1.BenchmarkRun, attempt int32) string {
	name := conf.Name
	if confirmationAttempt(conf) > 1 {
		name = name[:len(name)-1]
	}
	return name + string('a'+attempt-1)
}

// fail ends rec as Failed: the regression alarms unconfirmed.
func (r *Reconciler) fail(u *scheduleUpdate, rec *v1.Confirmation, why string) {
	what := "regressed"
	if rec.OfSuspects() {
		what = "possibly regressed"
	}
	r.end(u, rec, v1.ConfirmationFailed, fmt.Sprintf("%s against %s, %s: %s", what, rec.Baseline, unconfirmedText(rec), why))
}

// flaggedText says why comparison c is confirmed: "regressed against B (Regressed 2/4)", or for
// an Inconclusive one "possibly regressed against B (Inconclusive ...; suspects: ...)".
func flaggedText(c *v1.Comparison) string {
	if c.Verdict == v1.VerdictRegressed {
		return fmt.Sprintf("regressed against %s (%s)", c.Baseline, compare.Short(*c))
	}
	return fmt.Sprintf("possibly regressed against %s (%s; suspects: %s)", c.Baseline, compare.Short(*c), strings.Join(c.Suspects, ", "))
}

// unconfirmedText says what an unconfirmed rec leads to: a regression alarms without
// confirmation, an Inconclusive comparison's suspects stay undecided.
func unconfirmedText(rec *v1.Confirmation) string {
	if rec.OfSuspects() {
		return "left Inconclusive without confirmation"
	}
	return "alarming without confirmation"
}

// end records rec's final state and announces it.
func (r *Reconciler) end(u *scheduleUpdate, rec *v1.Confirmation, state v1.ConfirmationState, message string) {
	done := metav1.NewTime(r.clock.Now().Truncate(time.Second))
	rec.State, rec.Message, rec.CompletionTime = state, message, &done
	r.concluded(u, rec)
}

// concluded queues the Event of a final confirmation and counts it once the status is written.
func (r *Reconciler) concluded(u *scheduleUpdate, rec *v1.Confirmation) {
	status, reason, _ := confirmationCondition(*rec)
	kind := corev1.EventTypeWarning
	if status != metav1.ConditionTrue {
		kind = corev1.EventTypeNormal
	}
	u.event(kind, reason, rec.Run+": "+rec.Message)
	u.outcomes = append(u.outcomes, rec.State)
}

// pruneConfirmations deletes finished confirmation runs decided more than 24 hours ago beyond the
// newest few; the current record's run stays.
func (r *Reconciler) pruneConfirmations(ctx context.Context, u *scheduleUpdate, confs []*v1.BenchmarkRun, now time.Time) error {
	current := ""
	if rec := u.sched.Status.Confirmation; rec != nil {
		current = rec.ConfirmationRun
	}
	for i, conf := range confs {
		if len(confs)-i <= keepConfirmations || conf.Name == current || !conf.Status.Phase.Finished() ||
			now.Sub(confirmationTime(conf)) < 24*time.Hour || !conf.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Delete(ctx, conf, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete old confirmation run %s: %w", conf.Name, err)
		}
		u.did(corev1.EventTypeNormal, "Pruned", fmt.Sprintf("deleted confirmation run %s: beyond the history limit", conf.Name))
	}
	return nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// imageDigest is the digest of the image target's server ran in run, "" when not recorded.
func imageDigest(run *v1.BenchmarkRun, target string) string {
	for _, ts := range run.Status.Targets {
		if ts.Name == target {
			return ts.ServerImageDigest
		}
	}
	return ""
}
