package schedule

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/scheduled"
)

// ConfirmationName is the confirmation run of the scheduled run due at at:
// <schedule>-c<yymmddhhmm>, deterministic so a restarted manager finds the run it created, and
// at most 62 characters (a schedule's name has at most 50).
func ConfirmationName(schedule string, at time.Time) string {
	return schedule + "-c" + at.UTC().Format("0601021504")
}

// ConfirmationAttemptName is the name of the attempt-th confirmation run of the scheduled run due
// at at: ConfirmationName for the first, then a letter appended (b for the second, c for the
// third...), the one character a 50-character schedule name leaves within 63.
func ConfirmationAttemptName(schedule string, at time.Time, attempt int32) string {
	name := ConfirmationName(schedule, at)
	if attempt > 1 {
		name += string('a' + attempt - 1)
	}
	return name
}

// confirmationAttempt is which confirmation run of its regression conf is (1 when unrecorded).
func confirmationAttempt(conf *v1.BenchmarkRun) int32 {
	if n, err := strconv.Atoi(conf.Annotations[v1.AnnotationConfirmationAttempt]); err == nil && n > 1 {
		return int32(n)
	}
	return 1
}

// flagged are the cells to re-measure: thread counts by workload ("" in a run of one
// spec.workload) by target.
type flagged map[string]map[string]map[int32]bool

// flaggedCells are the cells to re-measure: every regressed cell that no acknowledgement
// covers, and every compared thread count of a target's workload whose geometric mean regressed;
// of an Inconclusive comparison, its suspects (a target's workload: all its thread counts).
func flaggedCells(res compare.Result) flagged {
	out := flagged{}
	add := func(target, workload string, threads int32) {
		if out[target] == nil {
			out[target] = map[string]map[int32]bool{}
		}
		if out[target][workload] == nil {
			out[target][workload] = map[int32]bool{}
		}
		out[target][workload][threads] = true
	}
	whole := func(target, workload string) {
		for _, c := range res.Cells {
			if c.Target == target && c.Workload == workload && !c.Acknowledged {
				add(c.Target, c.Workload, c.Threads)
			}
		}
	}
	for _, c := range res.Cells {
		if c.Regressed {
			add(c.Target, c.Workload, c.Threads)
		}
	}
	for _, t := range res.Targets {
		if t.Verdict == v1.CellRegressed {
			whole(t.Target, t.Workload)
		}
	}
	if res.Summary.Verdict == v1.VerdictInconclusive {
		// Suspects are named as compare names them: target[/workload][@threads] (target names
		// are DNS labels, without "/").
		for _, s := range res.Summary.Suspects {
			label, threads, cell := strings.Cut(s, "@")
			target, workload, _ := strings.Cut(label, "/")
			if !cell {
				whole(target, workload)
				continue
			}
			if n, err := strconv.ParseInt(threads, 10, 32); err == nil {
				add(target, workload, int32(n))
			}
		}
	}
	return out
}

// confirmationWorkloads narrows spec to the workloads named in flags (a run of one
// spec.workload is left as it is): a confirmation re-measures the flagged workloads only, so
// that it fits the step budget and judges nothing the comparison did not flag. A preset becomes
// the list of its flagged workloads, under the same names and in the same order.
func confirmationWorkloads(spec *v1.BenchmarkRunSpec, flags flagged) {
	if !spec.Suite() {
		return
	}
	wanted := map[string]bool{}
	for _, byWorkload := range flags {
		for w := range byWorkload {
			wanted[w] = true
		}
	}
	var named []v1.NamedWorkload
	if spec.Preset != nil {
		for _, w := range spec.OrderedWorkloads() {
			if wanted[w.Name] {
				named = append(named, v1.NamedWorkload{Name: w.Name, Client: w.Client, Script: w.Script, Tables: w.Tables,
					TableSize: w.TableSize, ExtraArgs: w.ExtraArgs})
			}
		}
	} else {
		for _, w := range spec.Workloads {
			if wanted[w.Name] {
				named = append(named, w)
			}
		}
	}
	spec.Preset, spec.Workloads = nil, named
}

// confirmationRun builds attempt (1 for the first) of the confirmation run of run, compared
// Regressed against baseline (res): for each regressed target T, in the run's order, T-base with
// the baseline's server (its engine, image, my.cnf and resources as written, its image pinned to
// the digest the baseline's server ran where the status recorded one) and T with the run's
// (pinned likewise); the run's workload, placement and other settings; the flagged thread counts;
// order Interleaved with a new server instance per round on both sides when every target is
// engine builtin, else Sequential. Its repetitions are reps, or for the first attempt (reps 0)
// policy's or the run's, whichever is more, lowered to fit 512 steps but never below the run's.
// It returns the run without owner and the cells it re-measures, or an error saying why no
// confirmation run fits.
//
// Nothing the confirmation mounts or runs comes from the baseline's spec but the server it
// re-creates: the Secrets and ConfigMaps it names, its sysbench image and its workload are the
// compared run's, whose spec named them together (the schedule created it from its template). A
// baseline target's secretRef is never copied: an external server cannot be brought back as the
// baseline measured it, so a regressed external target is not confirmed at all; that also means a
// confirmation never pairs another user's Secret with this schedule's code.
func confirmationRun(sched *v1.BenchmarkSchedule, run, baseline *v1.BenchmarkRun, res compare.Result, decided time.Time,
	attempt, reps int32) (*v1.BenchmarkRun, []string, error) {
	flags := flaggedCells(res)
	if len(flags) == 0 {
		return nil, nil, fmt.Errorf("the comparison flags no cell to re-measure")
	}
	var news []v1.Target
	for _, t := range run.Spec.Targets {
		if flags[t.Name] != nil {
			news = append(news, t)
		}
	}
	if len(news) > maxConfirmTargets {
		return nil, nil, fmt.Errorf("%d targets regressed; a confirmation run re-measures at most %d (two servers each, 16 targets a run)",
			len(news), maxConfirmTargets)
	}
	taken := map[string]bool{}
	for _, t := range news {
		taken[t.Name] = true
	}
	threadSet := map[int32]bool{}
	var cells []string
	var targets []v1.Target
	interleaved := true
	for i, t := range news {
		var base *v1.Target
		for j := range baseline.Spec.Targets {
			if baseline.Spec.Targets[j].Name == t.Name {
				base = baseline.Spec.Targets[j].DeepCopy()
			}
		}
		if base == nil {
			return nil, nil, fmt.Errorf("baseline %s has no target %s", baseline.Name, t.Name)
		}
		if base.EngineOrDefault() == v1.EngineExternal || t.EngineOrDefault() == v1.EngineExternal {
			return nil, nil, fmt.Errorf("target %s is engine external: a confirmation cannot bring back the server the baseline "+
				"measured (it would measure the run's server on both sides), so the regression is not re-measured", t.Name)
		}
		base.SecretRef = nil // external only, refused above: never the baseline's
		base.Name = baseTargetName(t.Name, i, taken)
		taken[base.Name] = true
		// Each side's image as it ran, by digest where the kubelet reported one: a tag that
		// moved since must not swap either server.
		base.Image = engine.PinnedImage(base.Image, imageDigest(baseline, t.Name))
		cand := t.DeepCopy()
		cand.Image = engine.PinnedImage(cand.Image, imageDigest(run, t.Name))
		targets = append(targets, *base, *cand)
		if !engine.FactsOf(base.Engine).OwnPod || !engine.FactsOf(t.Engine).OwnPod {
			interleaved = false
		}
		for _, w := range run.Spec.OrderedWorkloads() {
			var ths []int32
			for th := range flags[t.Name][w.Name] {
				ths = append(ths, th)
				threadSet[th] = true
			}
			sort.Slice(ths, func(a, b int) bool { return ths[a] < ths[b] })
			for _, th := range ths {
				cells = append(cells, fmt.Sprintf("%s@%d", compare.Label(t.Name, w.Name), th))
			}
		}
	}
	var threads []int32
	for th := range threadSet {
		threads = append(threads, th)
	}
	sort.Slice(threads, func(a, b int) bool { return threads[a] < threads[b] })

	spec := run.Spec.DeepCopy()
	confirmationWorkloads(spec, flags)
	if reps == 0 {
		var err error
		if reps, err = firstConfirmationRepetitions(sched.Spec.Regression, run, len(targets), spec.WorkloadCount(), len(threads)); err != nil {
			return nil, nil, err
		}
	}

	spec.Targets = targets
	spec.BaseTarget = "" // the sides' names are the confirmation's own
	spec.Ladder.Threads = threads
	spec.Repetitions = &reps
	spec.Order = v1.OrderSequential
	spec.Parallelism = nil // only read with order Parallel, which a confirmation never has
	spec.ServerInstance = ""
	if interleaved {
		// Each round measures both sides on new server instances: what differs between two
		// instances, or two nights, then varies from round to round and shows in the paired
		// ratios, instead of hiding in one shared instance per side.
		spec.Order = v1.OrderInterleaved
		spec.ServerInstance = v1.ServerInstancePerRepetition
	}
	conf := &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{
			Name:        ConfirmationAttemptName(sched.Name, scheduled.Time(run), attempt),
			Namespace:   sched.Namespace,
			Labels:      map[string]string{},
			Annotations: map[string]string{},
		},
		Spec: *spec,
	}
	for k, v := range sched.Spec.Template.Metadata.Labels {
		conf.Labels[k] = v
	}
	delete(conf.Labels, v1.LabelSchedule) // not a scheduled run: no baseline, no history
	conf.Labels[v1.LabelConfirmationOf] = sched.Name
	conf.Labels[v1.LabelConfirms] = run.Name
	conf.Annotations[v1.AnnotationConfirmationBaseline] = baseline.Name
	conf.Annotations[v1.AnnotationConfirmationTime] = decided.UTC().Format(time.RFC3339)
	if attempt > 1 {
		conf.Annotations[v1.AnnotationConfirmationAttempt] = strconv.Itoa(int(attempt))
	}
	return conf, cells, nil
}

// firstConfirmationRepetitions are the repetitions of a regression's first confirmation run of
// targets x workloads x threads steps per repetition: policy's or the compared run's, whichever
// is more (a confirmation that measured less than the run it confirms would decide less well
// than the comparison it overrules), lowered to fit maxRunSteps, but never below the run's nor
// below 2.
func firstConfirmationRepetitions(policy v1.RegressionPolicy, run *v1.BenchmarkRun, targets, workloads, threads int) (int32, error) {
	floor := max(int32(run.Spec.RepetitionsOrDefault()), 2)
	reps := min(max(policy.ConfirmRepetitions(), floor), maxRepetitions)
	if perRep := int32(targets * workloads * threads); reps*perRep > maxRunSteps {
		reps = maxRunSteps / perRep
	}
	if reps < floor {
		what := fmt.Sprintf("%d targets (both sides of each regressed one) x %d thread counts", targets, threads)
		if workloads > 1 {
			what = fmt.Sprintf("%d targets (both sides of each regressed one) x %d workloads x %d thread counts", targets, workloads, threads)
		}
		return 0, fmt.Errorf("%s leave fewer than the %d repetitions of %s within a run's %d steps", what, floor, run.Name, maxRunSteps)
	}
	return reps, nil
}

// nextConfirmationRepetitions are the repetitions of the confirmation run after conf, which was
// Inconclusive: twice conf's, within 10 and maxRunSteps; 0 when that is not more than conf's.
func nextConfirmationRepetitions(conf *v1.BenchmarkRun) int32 {
	prev := int32(conf.Spec.RepetitionsOrDefault())
	perRep := max(int32(len(conf.Spec.Targets)*conf.Spec.WorkloadCount()*len(conf.Spec.Ladder.Threads)), 1)
	next := min(2*prev, maxRepetitions, maxRunSteps/perRep)
	if next <= prev {
		return 0
	}
	return next
}

// baseTargetName names the baseline's side of target name in a confirmation run: name-base when
// that fits a target name (40 characters) and is free, else base-<i>.
func baseTargetName(name string, i int, taken map[string]bool) string {
	if n := name + "-base"; len(n) <= 40 && !taken[n] {
		return n
	}
	for k := i; ; k++ {
		if n := fmt.Sprintf("base-%d", k); !taken[n] {
			return n
		}
	}
}

// confirmationPairs are the (baseline side, run side) target names of a confirmation run: its
// targets in pairs, as confirmationRun builds them.
func confirmationPairs(conf *v1.BenchmarkRun) [][2]string {
	var pairs [][2]string
	for i := 0; i+1 < len(conf.Spec.Targets); i += 2 {
		pairs = append(pairs, [2]string{conf.Spec.Targets[i].Name, conf.Spec.Targets[i+1].Name})
	}
	return pairs
}

// confirmationResult compares, inside a finished confirmation run, each target's run side with
// its baseline side, round by round, each target named as in the compared run, so
// acknowledgements apply as they did.
func confirmationResult(conf *v1.BenchmarkRun, policy v1.RegressionPolicy) compare.Result {
	var pairs []compare.TargetPair
	for _, p := range confirmationPairs(conf) {
		pairs = append(pairs, compare.TargetPair{Name: p[1], Base: p[0], Cand: p[1]})
	}
	return compare.PairedByRound(conf, pairs, policy, conf.Labels[v1.LabelConfirms], conf.Annotations[v1.AnnotationConfirmationBaseline])
}

// confirmedNames are the targets and cells a confirmation's comparison found regressed.
func confirmedNames(res compare.Result) []string {
	var names []string
	for _, t := range res.Targets {
		if t.Verdict == v1.CellRegressed {
			names = append(names, compare.DescribeTarget(res.Summary.Metric, t))
		}
	}
	for _, c := range res.Cells {
		if c.Regressed {
			names = append(names, compare.Describe(res.Summary.Metric, c.CellChange))
		}
	}
	return names
}

// concludeConfirmation is the state and message of a confirmation whose run succeeded:
// Confirmed, NotConfirmed, or Inconclusive (which followConfirmation measures again while the
// bounds allow). The suspects of an Inconclusive night are not confirmed once the confirmation
// names none of its own.
func concludeConfirmation(rec *v1.Confirmation, conf *v1.BenchmarkRun, res compare.Result) (v1.ConfirmationState, string) {
	order := map[v1.RunOrder]string{v1.OrderInterleaved: "interleaved on one node", v1.OrderSequential: "one after another"}[conf.Spec.Order]
	if conf.Spec.InstancePerRepetition() {
		order += ", on new server instances every round"
	}
	how := fmt.Sprintf("%s measured the baseline's servers and the run's %s, %d repetitions, %s", conf.Name, order,
		conf.Spec.RepetitionsOrDefault(), cellsText(rec.Cells))
	switch res.Summary.Verdict {
	case v1.VerdictRegressed:
		return v1.ConfirmationConfirmed, fmt.Sprintf("regression against %s confirmed: %s, and found again %s: %s",
			rec.Baseline, how, regressedCount(res.Summary), strings.Join(confirmedNames(res), "; "))
	case v1.VerdictInconclusive, v1.VerdictNoBaseline:
		// A suspect is an estimate harmful by the minimum effect that one pair of nights could
		// not decide. Re-measured side by side and paired by round, an estimate no longer harmful
		// by that much (and no cell beyond it) is the suspicion not found again. Measuring on
		// until the minimum effect is ruled out outright would prove a negative at up to ten
		// repetitions of every suspect cell: on the local cluster, half an hour of confirmations
		// for an A/A night of four minutes. A Regressed night's confirmation still measures again.
		if rec.OfSuspects() && res.Summary.Verdict == v1.VerdictInconclusive && len(res.Summary.Suspects) == 0 {
			return v1.ConfirmationNotConfirmed, fmt.Sprintf("suspicion against %s not found again: %s, and no target's estimate "+
				"is harmful by the minimum effect nor any cell beyond it: %s (%s)", rec.Baseline, how, compare.Short(res.Summary), res.Summary.Message)
		}
		return v1.ConfirmationInconclusive, fmt.Sprintf("regression against %s unconfirmed: %s, and could not decide: %s (%s)",
			rec.Baseline, how, compare.Short(res.Summary), res.Summary.Message)
	}
	return v1.ConfirmationNotConfirmed, fmt.Sprintf("regression against %s not confirmed: %s, and found %s (%s)",
		rec.Baseline, how, compare.Short(res.Summary), res.Summary.Message)
}

// regressedCount says how many targets (by their geometric mean) and cells a comparison found
// regressed, e.g. "1 target(s) and 2 cell(s) regressed".
func regressedCount(c v1.Comparison) string {
	return fmt.Sprintf("%d target(s) and %d cell(s) regressed", regressedTargets(c), c.RegressedCells)
}

// regressedTargets counts the targets whose geometric mean regressed.
func regressedTargets(c v1.Comparison) int32 {
	var n int32
	for _, t := range c.Targets {
		if t.Verdict == v1.CellRegressed {
			n++
		}
	}
	return n
}

func cellsText(cells []string) string {
	return fmt.Sprintf("%d cell(s) (%s)", len(cells), strings.Join(cells, ", "))
}
