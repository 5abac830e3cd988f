package stepjob

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/sink"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/steplog"
)

// seriesBatch is how many finished ladder steps wait, their Jobs and pods kept, before their
// per-second series are stored in the results ConfigMap with one write and the Jobs deleted
// with one more: two writes per batch of steps instead of two per step (issue #16: at most 3
// API writes per ladder step, with the Job's creation and the status write that records it).
const seriesBatch = 8

// Release stores the per-second series of the target's finished ladder steps and then
// deletes the finished Jobs (their pods go with them): at once when all is set (the target has
// ended), else only once seriesBatch ladder steps wait. Only Jobs whose result the status holds
// go: a completed ladder step not recorded yet keeps its Job (the next step may start before the
// status records the current one), and the probe, prepare and warm-up Jobs of a target that is
// running its ladder are done. Failed Jobs are kept for their logs; so is anything the run does
// not control.
//
// A crash between the two writes stores the same series again next time (the bytes are a
// function of the logs), so the step can be repeated. A log that cannot be read costs the
// series, never the step: its numbers come from the termination message, and an Event says
// what is missing. The Events come with the error too: what happened before it stands.
func (j Jobs) Release(ctx context.Context, run *v1.BenchmarkRun, t v1.Target, ts *v1.TargetStatus, all bool) ([]Event, error) {
	jobs := &batchv1.JobList{}
	sel := specs.TargetLabels(run, t.Name)
	sel[specs.LabelComponent] = specs.ComponentClient
	if err := j.Objects.Client.List(ctx, jobs, client.InNamespace(run.Namespace), client.MatchingLabels(sel)); err != nil {
		return nil, fmt.Errorf("list jobs of target %s: %w", t.Name, err)
	}
	// The recorded result of each ladder step by its label, for its series key. A ladder step
	// not recorded yet (its Job completed, the status write that records it to come) keeps its
	// Job; so does every Job of the step other than the one whose result was recorded.
	recorded := map[string]*v1.StepResult{}
	ladderSteps := map[string]bool{}
	for i := range run.Spec.StepCount() {
		label := specs.LadderStepAt(run, i).Name
		ladderSteps[label] = true
		if i < len(ts.Steps) {
			recorded[label] = &ts.Steps[i]
		}
	}
	var done []*batchv1.Job
	var keep []string
	ladder := 0
	for i := range jobs.Items {
		job := &jobs.Items[i]
		finished, failed, _ := Finished(job)
		label := job.Labels[specs.LabelStep]
		if !metav1.IsControlledBy(job, run) || !finished || failed || !job.DeletionTimestamp.IsZero() ||
			(ladderSteps[label] && !recordedFrom(recorded[label], job)) {
			// Failed, running, not the run's, or a ladder Job the status does not hold the result
			// of: not recorded yet, or a completed attempt whose result did not count (a failed
			// attempt, or one a server restart discarded), kept for its log like a failed one.
			keep = append(keep, job.Name)
			continue
		}
		done = append(done, job)
		if ladderSteps[label] {
			ladder++
		}
	}
	if len(done) == 0 || (!all && ladder < seriesBatch) {
		return nil, nil
	}
	var events []Event

	series := map[string]string{}
	steps := map[string]bool{}
	// The steps whose server counters could not be stored, and why the first could not: one
	// Event per batch, not one per step (the write budget).
	var noServer []int32
	noServerWhy := ""
	budget := 0 // each series' bytes (report.SeriesBudget)
	for _, job := range done {
		step := job.Labels[specs.LabelStep]
		steps[step] = true
		s := recorded[step]
		if s == nil {
			continue // probe, prepare, warm-up, cleanup: no series
		}
		rep := max(s.Repetition, 1)
		if budget == 0 {
			// Once per batch: it renders the run's worst case (milliseconds to a third of a
			// second for the largest runs).
			budget = report.SeriesBudget(run.Spec)
		}
		encoded, server, why, unavailable := j.readStepLog(ctx, run, t.Name, job, s.Threads, budget)
		if unavailable != nil {
			events = append(events, *unavailable)
		}
		if encoded != "" {
			series[report.SeriesKey(t.Name, s.Threads, rep)] = encoded
		}
		if server != "" {
			series[report.ServerKey(t.Name, s.Threads, rep)] = server
		}
		if why != "" {
			noServer = append(noServer, s.Threads)
			noServerWhy = cmp.Or(noServerWhy, why)
		}
	}
	if len(noServer) > 0 {
		slices.Sort(noServer)
		events = append(events, event(corev1.EventTypeWarning, "ServerStatsUnavailable",
			"target %s: the server's counters of %d step(s) (threads %s) are not stored: %s",
			t.Name, len(noServer), joinThreads(noServer), noServerWhy))
	}
	if len(series) > 0 {
		// The server keys left out: the ConfigMap would pass its budget.
		full, err := sink.ConfigMap{Objects: j.Objects}.StoreBatch(ctx, run, series)
		if err != nil {
			return events, err
		}
		if len(full) > 0 {
			events = append(events, event(corev1.EventTypeWarning, "ServerStatsUnavailable", "target %s: the server's counters "+
				"of %d step(s) are not stored: the results ConfigMap is at its %d-byte budget (fewer steps, or a lower "+
				"spec.serverStats.topWaits, make room): %s", t.Name, len(full), report.MaxConfigMapBytes, strings.Join(full, ", ")))
		}
	}
	if err := j.deleteJobs(ctx, run, sel, steps, keep); err != nil {
		if !engine.IsPermanentAPIError(err) {
			return events, err
		}
		// Refused for good (RBAC, an admission policy): the Jobs stay until the run is deleted,
		// which is no reason to stop measuring.
		events = append(events, event(corev1.EventTypeWarning, "JobsNotDeleted",
			"target %s: the finished sysbench Jobs were not deleted: %v", t.Name, err))
	}
	return events, nil
}

// recordedFrom says whether the recorded step result s came from job: the status copies the
// Job's start and completion times into the step, and two attempts of a step never share both.
func recordedFrom(s *v1.StepResult, job *batchv1.Job) bool {
	return s != nil && s.StartTime != nil && s.FinishTime != nil && job.Status.StartTime != nil &&
		job.Status.CompletionTime != nil && s.StartTime.Equal(job.Status.StartTime) &&
		s.FinishTime.Equal(job.Status.CompletionTime)
}

// deleteJobs deletes, with one request, the Jobs with labels sel whose step label is one of
// steps, except those named in keep (the cache showed them failed, unfinished or not the run's).
// The garbage collector deletes their pods.
func (j Jobs) deleteJobs(ctx context.Context, run *v1.BenchmarkRun, sel map[string]string, steps map[string]bool, keep []string) error {
	ls := labels.SelectorFromSet(sel)
	values := make([]string, 0, len(steps))
	for s := range steps {
		values = append(values, s)
	}
	sort.Strings(values)
	req, err := labels.NewRequirement(specs.LabelStep, selection.In, values)
	if err != nil {
		return fmt.Errorf("select the finished jobs: %w", err)
	}
	ls = ls.Add(*req)
	opts := []client.DeleteAllOfOption{client.InNamespace(run.Namespace), client.MatchingLabelsSelector{Selector: ls},
		client.PropagationPolicy(metav1.DeletePropagationBackground)}
	if len(keep) > 0 {
		sort.Strings(keep)
		terms := make([]fields.Selector, 0, len(keep))
		for _, name := range keep {
			terms = append(terms, fields.OneTermNotEqualSelector("metadata.name", name))
		}
		opts = append(opts, client.MatchingFieldsSelector{Selector: fields.AndSelectors(terms...)})
	}
	if err := j.Objects.Client.DeleteAllOf(ctx, &batchv1.Job{}, opts...); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the finished jobs of %s: %w", run.Name, err)
	}
	logf.FromContext(ctx).V(1).Info("deleted finished sysbench jobs", "steps", values, "kept", keep)
	return nil
}

// readStepLog reads a finished step's pod log (steplog.Read, in bounded memory whatever it holds):
// its per-second series, encoded and compacted to budget bytes (its share of the ConfigMap), and
// what the server did during the step (the reporter's server snapshots, spec.serverStats),
// encoded. Either is "" when there is none to store (unavailable, an Event, says why when the log
// could not be read); noServer says why the server's counters are not stored when they should be.
func (j Jobs) readStepLog(ctx context.Context, run *v1.BenchmarkRun, target string, job *batchv1.Job, threads int32,
	budget int) (series, server, noServer string, unavailable *Event) {
	log := logf.FromContext(ctx)
	pod, err := j.jobPod(ctx, job)
	if err != nil || pod == nil {
		log.Info("per-second series unavailable: the step's pod is gone", "job", job.Name)
		return "", "", "", ptr.To(event(corev1.EventTypeWarning, "SeriesUnavailable",
			"target %s, %d threads: the pod of Job %s is gone, its per-second series with it", target, threads, job.Name))
	}
	rc, err := j.Logs.Logs(ctx, pod.Namespace, pod.Name, specs.SysbenchContainer)
	if err != nil {
		log.Info("per-second series unavailable: cannot read the step's log", "pod", pod.Name, "err", err.Error())
		return "", "", "", ptr.To(event(corev1.EventTypeWarning, "SeriesUnavailable",
			"target %s, %d threads: cannot read pod %s's log: %v", target, threads, pod.Name, err))
	}
	defer func() { _ = rc.Close() }()
	w := specs.WorkloadOfLabel(run, job.Labels[specs.LabelStep]).Workload
	c, step := loadclient.For(w), labelledStep(job).Load
	opts := steplog.Options{
		Parse:        func(r io.Reader) (load.Output, error) { return c.Parse(step, r) },
		SeriesAbsent: !c.Capabilities().Series,
		Budget:       budget,
		ServerStats:  run.Spec.ServerStatsEnabled() && c.Capabilities().ServerSnapshots,
		Iterations:   c.SnapshotRepeats(w),
		TopWaits:     run.Spec.TopWaitsOrDefault(),
	}
	st, err := steplog.Read(rc, opts)
	if err != nil {
		log.Info("per-second series unavailable: unreadable step log", "pod", pod.Name, "err", err.Error())
		return "", "", "", ptr.To(event(corev1.EventTypeWarning, "SeriesUnavailable", "target %s, %d threads: the per-second "+
			"series and server counters of pod %s are not stored: %v", target, threads, pod.Name, err))
	}
	if st.NoSeries != "" {
		log.Info("per-second series not stored", "pod", pod.Name, "reason", st.NoSeries)
	}
	if opts.ServerStats {
		server, noServer = j.serverStats(ctx, run, target, pod.Name, st)
	}
	return st.Series, server, noServer, nil
}

// serverStats encodes what the server did during the step (st.Server), with the server
// container's CPU over the same interval from the kubelet (j.CPU), for the results ConfigMap, or
// says why the snapshots do not add up.
func (j Jobs) serverStats(ctx context.Context, run *v1.BenchmarkRun, target, pod string,
	st steplog.Step) (encoded, why string) {
	if st.Server == nil {
		why = st.NoServer
	} else {
		step := *st.Server
		j.stepCPU(ctx, run, target, st.Start, st.End, &step)
		var err error
		if encoded, err = report.EncodeServer(step); err != nil {
			why = err.Error()
		}
	}
	if why != "" {
		logf.FromContext(ctx).Info("server counters not stored", "pod", pod, "reason", why)
	}
	return encoded, why
}

// stepCPU fills step's CPU (or CPUMissing) with the server container's CPU time between the
// step's snapshots: the kubelet's samples inside that interval, over the queries per second the
// snapshots' interval saw.
func (j Jobs) stepCPU(ctx context.Context, run *v1.BenchmarkRun, target string,
	start, end serverstats.Snapshot, step *serverstats.Step) {
	if j.CPU == nil {
		step.CPUMissing = CPUOff
		return
	}
	cpu, missing := j.CPU.StepCPU(ctx, run, target, unixTime(start.UnixTime), unixTime(end.UnixTime))
	if cpu == nil {
		step.CPUMissing = cmp.Or(missing, "the kubelet's samples did not cover the step")
		return
	}
	if step.Queries > 0 && step.Seconds > 0 {
		cpu.PerQuery = cpu.PerSecond / (step.Queries / step.Seconds)
	}
	step.CPU = cpu
}

// unixTime is a snapshot's UnixTime (seconds since the epoch, microseconds) as a time.
func unixTime(s float64) time.Time {
	sec, frac := math.Modf(s)
	return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1e3)
}

// joinThreads lists thread counts as "1, 2, 4".
func joinThreads(ts []int32) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = strconv.Itoa(int(t))
	}
	return strings.Join(parts, ", ")
}
