package plugin

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/exported"
	client "github.com/mysqlbench/mysqlbench-operator/internal/kubeclient"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

type logsOptions struct {
	allAttempts bool
	repetition  int32
	workload    string
	follow      bool
	from        []string
}

func newLogsCommand(e *env) *cobra.Command {
	o := &logsOptions{}
	cmd := &cobra.Command{
		Use:   "logs RUN TARGET STEP [--from BUNDLE]",
		Short: "Print the sysbench output of one step of a target",
		Long: "Prints the log of the sysbench pod of a step: STEP is a thread count of the ladder (8: the step at 8 " +
			"threads, of the first repetition unless --repetition says otherwise, and in a run of several workloads of " +
			"the workload --workload names), a step name as the operator names Jobs (s03, r2s03; in a run of several " +
			"workloads point-select-s03, and prepare-13 or warmup-13 where data is prepared again), or probe, prepare, " +
			"warmup or cleanup. The newest attempt's log is printed; " +
			"--all-attempts prints every attempt the cluster still has, oldest first.\n\n" +
			"The operator deletes the Jobs (and pods) of successful steps once their results are stored, and keeps " +
			"failed ones: the log of a successful step is normally gone. What remains then is the step's numbers in " +
			"the run's status (kubectl mysqlbench describe) and its per-second series in results.json " +
			"(kubectl mysqlbench export RUN -o json).\n\n" +
			"With --from BUNDLE the logs are read from a bundle (export --bundle), which holds the logs of the step " +
			"attempts the cluster still had at export: mostly failed attempts. RUN may be left out when the files " +
			"hold one run.",
		Example: "  kubectl mysqlbench logs pk-lookup-57 mysql57 8\n" +
			"  kubectl mysqlbench logs pk-lookup-57 mysql57 r2s03 --all-attempts\n" +
			"  kubectl mysqlbench logs pk-lookup-57 mysql57 prepare -f\n" +
			"  kubectl mysqlbench logs micro-suite mariadb105 4 --workload read-only\n" +
			"  kubectl mysqlbench logs mysql57 8 --from pk-lookup-57.tar.gz --all-attempts",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(o.from) > 0 && len(args) == 2 {
				return nil
			}
			return exactArgs("RUN", "TARGET", "STEP")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 {
				args = append([]string{""}, args...)
			}
			if len(o.from) > 0 {
				return e.logsFromFiles(cmd.Context(), args[0], args[1], args[2], o)
			}
			return e.logs(cmd.Context(), args[0], args[1], args[2], o)
		},
	}
	cmd.Flags().BoolVar(&o.allAttempts, "all-attempts", false, "Print every attempt of the step the cluster still has, oldest first.")
	cmd.Flags().Int32Var(&o.repetition, "repetition", 1, "With a thread count as STEP: which repetition of the ladder (spec.repetitions).")
	cmd.Flags().StringVar(&o.workload, "workload", "", "With a thread count as STEP in a run of several workloads: which workload's step.")
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "Stream the log while the step runs.")
	cmd.Flags().StringArrayVar(&o.from, "from", nil, "Read the logs from a bundle (export --bundle: its directory or .tar.gz) instead of the cluster.")
	return cmd
}

// stepRef is a step of a target as the operator labels its Jobs.
type stepRef struct {
	label string
	// ladder steps: the rung's thread count, the repetition and, in a run of several
	// workloads, the workload; zero otherwise.
	threads    int32
	repetition int32
	workload   string
}

func (s stepRef) String() string {
	if s.threads == 0 {
		return "step " + s.label
	}
	if s.workload != "" {
		return fmt.Sprintf("step %s (workload %s, %s, repetition %d)", s.label, s.workload, threadCount(s.threads), s.repetition)
	}
	return fmt.Sprintf("step %s (%s, repetition %d)", s.label, threadCount(s.threads), s.repetition)
}

var ladderLabel = regexp.MustCompile(`^(?:r([0-9]+))?s([0-9]{2,})$`)

// resolveStep turns STEP into the operator's step label. In a run of several workloads a
// thread count needs the workload (--workload), and the steps' own names carry it
// ("point-select-s03"); the prepares and warm-ups of data prepared again are "prepare-13" and
// "warmup-13".
func resolveStep(run *v1.BenchmarkRun, target, step string, repetition int32, workload string) (stepRef, error) {
	threads := run.Spec.Ladder.Threads
	reps := int32(run.Spec.RepetitionsOrDefault())
	suite := run.Spec.Suite()
	var workloads []string
	for _, w := range run.Spec.OrderedWorkloads() {
		workloads = append(workloads, w.Name)
	}
	list := make([]string, 0, len(threads))
	for _, t := range threads {
		list = append(list, strconv.Itoa(int(t)))
	}
	first, second := specs.LadderStep(0, 1), specs.LadderStep(0, 2)
	if suite {
		first, second = workloads[0]+"-"+first, workloads[0]+"-"+second
	}
	forms := fmt.Sprintf("a thread count of the ladder (%s), a step name such as %s or %s, or %s, %s, %s or %s",
		strings.Join(list, ", "), first, second,
		load.PhaseProbe, load.PhasePrepare, load.PhaseWarmup, load.PhaseCleanup)
	if suite {
		forms += fmt.Sprintf(" (with a thread count, --workload names one of %s)", strings.Join(workloads, ", "))
	}
	switch {
	case workload != "" && !suite:
		return stepRef{}, fmt.Errorf("--workload %s: benchmarkrun %s measures one workload (spec.workload); leave --workload out", workload, run.Name)
	case workload != "" && !slices.Contains(workloads, workload):
		return stepRef{}, fmt.Errorf("--workload %s: benchmarkrun %s has no such workload; its workloads are %s", workload, run.Name, strings.Join(workloads, ", "))
	}
	switch load.Phase(step) {
	case load.PhaseProbe, load.PhasePrepare, load.PhaseWarmup, load.PhaseCleanup:
		return stepRef{label: step}, nil
	}
	if repetition < 1 || repetition > reps {
		return stepRef{}, fmt.Errorf("--repetition %d: benchmarkrun %s measures %d repetition(s)", repetition, run.Name, reps)
	}
	if n, err := strconv.Atoi(step); err == nil {
		i := slices.Index(threads, int32(n))
		if i < 0 {
			return stepRef{}, fmt.Errorf("benchmarkrun %s has no step at %d threads; STEP is %s", run.Name, n, forms)
		}
		label := specs.LadderStep(i, repetition)
		if suite {
			if workload == "" {
				return stepRef{}, fmt.Errorf("benchmarkrun %s measures %d workloads at %d threads (%s): say which with --workload",
					run.Name, len(workloads), n, strings.Join(workloads, ", "))
			}
			label = workload + "-" + label
		}
		return stepRef{label: label, threads: int32(n), repetition: repetition, workload: workload}, nil
	}
	name, w := step, ""
	if suite {
		for _, cand := range workloads {
			if rest, ok := strings.CutPrefix(step, cand+"-"); ok && ladderLabel.MatchString(rest) {
				name, w = rest, cand
			}
		}
	}
	if m := ladderLabel.FindStringSubmatch(name); m != nil && (w != "") == suite {
		rep := int32(1)
		if m[1] != "" {
			r, _ := strconv.Atoi(m[1])
			rep = int32(r)
		}
		i, _ := strconv.Atoi(m[2])
		if i >= 1 && i <= len(threads) && rep >= 1 && rep <= reps && specs.LadderStep(i-1, rep) == name {
			return stepRef{label: step, threads: threads[i-1], repetition: rep, workload: w}, nil
		}
	}
	// The prepares and warm-ups in the middle of a suite's ladder, by the names its Jobs have.
	if suite && (strings.HasPrefix(step, string(load.PhasePrepare)+"-") || strings.HasPrefix(step, string(load.PhaseWarmup)+"-")) &&
		hasStep(run, target, step) {
		return stepRef{label: step}, nil
	}
	return stepRef{}, fmt.Errorf("benchmarkrun %s has no step %q; STEP is %s", run.Name, step, forms)
}

// attempt is one Job of a step and the pods it has left.
type attempt struct {
	name    string
	job     *batchv1.Job // nil when only its pod is left
	pods    []corev1.Pod // newest last
	created time.Time
	// target and step are the Job's (or pod's) labels.
	target, step string
}

func (e *env) logs(ctx context.Context, runName, target, step string, o *logsOptions) error {
	run, err := e.getRun(ctx, runName)
	if err != nil {
		return err
	}
	if err := checkTarget(run, target); err != nil {
		return err
	}
	ref, err := resolveStep(run, target, step, o.repetition, o.workload)
	if err != nil {
		return err
	}
	attempts, err := e.attempts(ctx, run, target, ref)
	if err != nil {
		return err
	}
	ts := targetStatus(run, target)
	measured := measuredStep(ts, ref)
	// The attempt that produced the recorded result is deleted once the result is stored; any
	// Job still here for a measured step is an earlier attempt (failed, or discarded by a
	// server restart), kept for its log.
	latestGone := measured != nil && !slices.ContainsFunc(attempts, func(a attempt) bool { return succeeded(a.job) })
	if len(attempts) == 0 || (latestGone && !o.allAttempts) {
		return gone(run, target, ref, ts, measured, len(attempts))
	}
	chosen := attempts
	if !o.allAttempts {
		chosen = attempts[len(attempts)-1:]
	}
	logs, err := e.podLogs()
	if err != nil {
		return err
	}
	for i, a := range chosen {
		if o.allAttempts {
			_, _ = fmt.Fprintf(e.Out, "==> %s, Job %s (%s) <==\n", ref, a.name, attemptState(a))
		}
		if err := e.printAttempt(ctx, logs, run, a, o.follow); err != nil {
			return err
		}
		if o.allAttempts && i < len(chosen)-1 {
			_, _ = fmt.Fprintln(e.Out)
		}
	}
	if latestGone {
		_, _ = fmt.Fprintf(e.ErrOut, "\nThe attempt whose result the status holds is gone: %s\n", whatRemains(run, target, ref, measured))
	}
	return nil
}

// attempts are the step's Jobs the run controls and the pods they left, oldest first. A pod whose
// Job is already deleted (its garbage collection pending) still counts.
func (e *env) attempts(ctx context.Context, run *v1.BenchmarkRun, target string, ref stepRef) ([]attempt, error) {
	return e.listAttempts(ctx, run, ref.String(), client.MatchingLabels{specs.LabelTarget: target, specs.LabelStep: ref.label})
}

// listAttempts are the Jobs of the run that match sel and the pods they left, oldest first;
// what names them in errors.
func (e *env) listAttempts(ctx context.Context, run *v1.BenchmarkRun, what string, sel client.MatchingLabels) ([]attempt, error) {
	c, err := e.clients()
	if err != nil {
		return nil, err
	}
	sel[specs.LabelManagedBy] = specs.ManagedBy
	sel[specs.LabelRun] = specs.LabelValue(run.Name)
	jobs := &batchv1.JobList{}
	if err := c.List(ctx, jobs, client.InNamespace(run.Namespace), sel); err != nil {
		return nil, fmt.Errorf("list the Jobs of %s: %w", what, err)
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(run.Namespace), sel); err != nil {
		return nil, fmt.Errorf("list the pods of %s: %w", what, err)
	}
	byName := map[string]*attempt{}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if !metav1.IsControlledBy(job, run) {
			continue // not the run's: the operator ignores it, and so does this
		}
		byName[job.Name] = &attempt{name: job.Name, job: job, created: job.CreationTimestamp.Time,
			target: job.Labels[specs.LabelTarget], step: job.Labels[specs.LabelStep]}
	}
	for _, pod := range pods.Items {
		owner := metav1.GetControllerOf(&pod)
		if owner == nil || owner.Kind != "Job" {
			continue
		}
		a := byName[owner.Name]
		if a == nil {
			a = &attempt{name: owner.Name, created: pod.CreationTimestamp.Time,
				target: pod.Labels[specs.LabelTarget], step: pod.Labels[specs.LabelStep]}
			byName[owner.Name] = a
		}
		if a.job != nil && owner.UID != a.job.UID {
			continue // a pod of an earlier Job of that name
		}
		a.pods = append(a.pods, pod)
	}
	out := make([]attempt, 0, len(byName))
	for _, a := range byName {
		slices.SortFunc(a.pods, func(x, y corev1.Pod) int { return x.CreationTimestamp.Compare(y.CreationTimestamp.Time) })
		out = append(out, *a)
	}
	slices.SortFunc(out, func(x, y attempt) int {
		if c := x.created.Compare(y.created); c != 0 {
			return c
		}
		return strings.Compare(x.name, y.name)
	})
	return out, nil
}

// maxBundledLog bounds a log a bundle keeps: sysbench's output of a step is a few kilobytes, a
// log far larger is runaway output whose tail says what happened.
const maxBundledLog = 1 << 20

// stepLogs are the logs of the run's step attempts the cluster still has, for a bundle; a log
// that cannot be read is said on stderr and left out.
func (e *env) stepLogs(ctx context.Context, run *v1.BenchmarkRun) ([]exported.StepLog, error) {
	attempts, err := e.listAttempts(ctx, run, "run "+run.Name, client.MatchingLabels{})
	if err != nil {
		return nil, err
	}
	reader, err := e.podLogs()
	if err != nil {
		return nil, err
	}
	var out []exported.StepLog
	for _, a := range attempts {
		if len(a.pods) == 0 || a.target == "" || a.step == "" {
			continue
		}
		pod := a.pods[len(a.pods)-1]
		rc, err := reader.Stream(ctx, run.Namespace, pod.Name, specs.SysbenchContainer, false)
		if err != nil {
			_, _ = fmt.Fprintf(e.ErrOut, "Note: the log of pod %s (Job %s) could not be read (%v): the bundle leaves it out\n", pod.Name, a.name, err)
			continue
		}
		text, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			_, _ = fmt.Fprintf(e.ErrOut, "Note: the log of pod %s (Job %s) could not be read (%v): the bundle leaves it out\n", pod.Name, a.name, err)
			continue
		}
		if len(text) > maxBundledLog {
			text = append([]byte(fmt.Sprintf("[the first %d bytes are left out: the bundle keeps the last %d]\n",
				len(text)-maxBundledLog, maxBundledLog)), text[len(text)-maxBundledLog:]...)
		}
		out = append(out, exported.StepLog{Target: a.target, Step: a.step, Job: a.name, State: attemptState(a), Text: string(text)})
	}
	// A step's attempts together, oldest first, steps in the order their first attempt ran.
	slices.SortStableFunc(out, func(x, y exported.StepLog) int {
		return strings.Compare(x.Target+"/"+x.Step, y.Target+"/"+y.Step)
	})
	return out, nil
}

// logsFromFiles is logs with --from: the attempts' logs a bundle holds.
func (e *env) logsFromFiles(ctx context.Context, runName, target, step string, o *logsOptions) error {
	if o.follow {
		return fmt.Errorf("-f follows a running step in the cluster; --from reads files, which do not change")
	}
	src, err := e.source(o.from)
	if err != nil {
		return err
	}
	fs := src.(*fileSource)
	run, err := src.getRun(ctx, runName, "")
	if err != nil {
		return err
	}
	if err := checkTarget(run, target); err != nil {
		return err
	}
	ref, err := resolveStep(run, target, step, o.repetition, o.workload)
	if err != nil {
		return err
	}
	r := fs.run(run)
	var logs []exported.StepLog
	for _, lg := range r.Logs {
		if lg.Target == target && lg.Step == ref.label {
			logs = append(logs, lg)
		}
	}
	if len(logs) == 0 {
		held := "a bundle holds the logs of the attempts the cluster still had at export, and the operator deletes a " +
			"successful step's Job once its result is stored"
		if r.Bundle == nil {
			held = "only a bundle (export --bundle) holds step logs"
		}
		return fmt.Errorf("the files hold no log of %s of target %s (%s): %s; its numbers are in the run's status "+
			"(kubectl mysqlbench describe --from %s)", ref, target, strings.Join(r.From, ", "), held, o.from[0])
	}
	if !o.allAttempts {
		logs = logs[len(logs)-1:]
	}
	for i, lg := range logs {
		if o.allAttempts {
			_, _ = fmt.Fprintf(e.Out, "==> %s, Job %s (%s) <==\n", ref, lg.Job, lg.State)
		}
		if _, err := io.WriteString(e.Out, lg.Text); err != nil {
			return err
		}
		if o.allAttempts && i < len(logs)-1 {
			_, _ = fmt.Fprintln(e.Out)
		}
	}
	return nil
}

// printAttempt streams the log of the attempt's newest pod; when the log cannot be read it says
// so and prints the termination message the kubelet kept in the pod's status, if any.
func (e *env) printAttempt(ctx context.Context, logs PodLogs, run *v1.BenchmarkRun, a attempt, follow bool) error {
	if len(a.pods) == 0 {
		return fmt.Errorf("job %s has no pod left (deleted, or not created yet: %s): no log to show", a.name, attemptState(a))
	}
	pod := a.pods[len(a.pods)-1]
	rc, err := logs.Stream(ctx, run.Namespace, pod.Name, specs.SysbenchContainer, follow)
	if err == nil {
		defer func() { _ = rc.Close() }()
		_, err = io.Copy(e.Out, rc)
		return err
	}
	msg := terminationMessage(&pod)
	if msg == "" {
		return fmt.Errorf("cannot read the log of pod %s (Job %s): %w", pod.Name, a.name, err)
	}
	_, _ = fmt.Fprintf(e.ErrOut, "cannot read the log of pod %s (Job %s): %v\nThe container's termination message, as the kubelet kept it in the pod's status:\n",
		pod.Name, a.name, err)
	_, err = io.WriteString(e.Out, strings.TrimSuffix(msg, "\n")+"\n")
	return err
}

// threadCount is "1 thread", "8 threads".
func threadCount(n int32) string {
	if n == 1 {
		return "1 thread"
	}
	return fmt.Sprintf("%d threads", n)
}

func terminationMessage(pod *corev1.Pod) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == specs.SysbenchContainer && cs.State.Terminated != nil {
			return cs.State.Terminated.Message
		}
	}
	return ""
}

// attemptState is how a Job ended, or that it runs.
func attemptState(a attempt) string {
	if a.job == nil {
		return "Job deleted, pod left"
	}
	for _, c := range a.job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return "completed"
		case batchv1.JobFailed:
			if c.Message != "" {
				return "failed: " + c.Message
			}
			return "failed"
		}
	}
	return "running"
}

func succeeded(job *batchv1.Job) bool {
	if job == nil {
		return false
	}
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// measuredStep is the recorded result of a ladder step, or nil.
func measuredStep(ts *v1.TargetStatus, ref stepRef) *v1.StepResult {
	if ts == nil || ref.threads == 0 {
		return nil
	}
	for i := range ts.Steps {
		if s := &ts.Steps[i]; s.Threads == ref.threads && s.RepetitionOrDefault() == ref.repetition && s.Workload == ref.workload {
			return s
		}
	}
	return nil
}

// gone explains why a step has no Job to read: deleted after its result was stored, or not run
// yet. It never makes up log text.
func gone(run *v1.BenchmarkRun, target string, ref stepRef, ts *v1.TargetStatus, measured *v1.StepResult, kept int) error {
	if measured != nil {
		msg := fmt.Sprintf("the log of %s of target %s is gone: %s", ref, target, whatRemains(run, target, ref, measured))
		if kept > 0 {
			msg += fmt.Sprintf("; %d earlier attempt(s) of the step failed or were discarded and are kept: see them with --all-attempts", kept)
		}
		return fmt.Errorf("%s", msg)
	}
	if ref.threads == 0 && !hasStep(run, target, ref.label) {
		names := stepNames(run, target)
		list := strings.Join(names, ", ")
		if len(names) > 8 {
			list = strings.Join(names[:8], ", ") + fmt.Sprintf(", ... (%d steps)", len(names))
		}
		return fmt.Errorf("benchmarkrun %s has no %s step for target %s: its steps are %s", run.Name, ref.label, target, list)
	}
	if ran(run, ts, ref) {
		return fmt.Errorf("the log of %s of target %s is gone: the operator deletes the Jobs and pods of steps that succeeded "+
			"once the target has moved on (failed ones are kept), and this step succeeded; `kubectl mysqlbench describe %s` "+
			"shows what the target recorded", ref, target, run.Name)
	}
	if ts != nil && ts.Phase == v1.TargetFailed {
		return fmt.Errorf("target %s failed before %s ran (%s): no log to show; the Jobs of its failed attempts are kept, "+
			"see `kubectl mysqlbench describe %s` for the step that failed", target, ref, ts.Message, run.Name)
	}
	phase := v1.TargetPending
	if ts != nil && ts.Phase != "" {
		phase = ts.Phase
	}
	return fmt.Errorf("%s of target %s has not run yet (target phase %s; run %s): no log to show", ref, target, phase, progress(run))
}

// whatRemains says where a measured step's numbers live once its pod is gone.
func whatRemains(run *v1.BenchmarkRun, target string, ref stepRef, s *v1.StepResult) string {
	when := "and, once the run has finished, "
	if run.Status.Phase.Finished() {
		when = "and "
	}
	return fmt.Sprintf("the operator deleted its Job and pod once it had stored the result (it keeps only failed Jobs). "+
		"What remains: the step's numbers in the run's status (%s %.2f, TPS %.2f, p95 %.3f ms, %d attempt(s); "+
		"`kubectl mysqlbench describe %s`) %sits per-second series in results.json "+
		"(`kubectl mysqlbench export %s -o json`: targets[%s].steps at %s)",
		loadclient.For(primaryWorkload(run)).Capabilities().Metric.Name, s.Throughput(), s.TPS, s.Latency.P95Ms, max(s.Attempts, 1),
		run.Name, when, run.Name, target, stepPlace(ref))
}

// stepPlace is where a ladder step sits in results.json's steps: its thread count, and its
// workload in a run of several.
func stepPlace(ref stepRef) string {
	if ref.workload != "" {
		return fmt.Sprintf("workload %s, %s", ref.workload, threadCount(ref.threads))
	}
	return threadCount(ref.threads)
}

// hasStep says whether the operator's step sequence for the target (specs.TargetSteps: probe,
// prepare unless skipPrepare, a warm-up when configured, the ladder, cleanup only where it drops
// the tables) has a step of that name.
func hasStep(run *v1.BenchmarkRun, target, name string) bool {
	return slices.Contains(stepNames(run, target), name)
}

// stepNames are the names of the target's steps, in order.
func stepNames(run *v1.BenchmarkRun, target string) []string {
	var names []string
	for _, t := range run.Spec.Targets {
		if t.Name == target {
			for _, s := range specs.TargetSteps(run, t) {
				names = append(names, s.Name)
			}
		}
	}
	return names
}

// ran says whether the target got past a step other than a rung of the ladder (probe, prepare,
// warm-up, cleanup), judged from its status.
func ran(run *v1.BenchmarkRun, ts *v1.TargetStatus, ref stepRef) bool {
	if ts == nil {
		return false
	}
	measuring := len(ts.Steps) > 0 || ts.Phase == v1.TargetRunning || ts.Phase == v1.TargetCleaningUp || ts.Phase == v1.TargetSucceeded
	switch load.Phase(ref.label) {
	case load.PhaseProbe:
		return ts.ServerVersion != ""
	case load.PhasePrepare:
		return loadclient.Prepares(primaryWorkload(run)) && (measuring || ts.Phase == v1.TargetWarmingUp)
	case load.PhaseWarmup:
		return run.Spec.Ladder.WarmupDuration() > 0 && measuring
	case load.PhaseCleanup:
		return loadclient.Prepares(primaryWorkload(run)) && ts.Phase == v1.TargetSucceeded
	}
	return false
}
