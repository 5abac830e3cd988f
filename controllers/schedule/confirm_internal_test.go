package schedule

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
)

// confirmTestRun is a finished run whose targets measured qps(target, threads) five times, with
// a ±0.4 % spread: enough for the U test to decide.
func confirmTestRun(name string, targets []v1.Target, threads []int32, qps func(target string, threads int32) float64) *v1.BenchmarkRun {
	r := &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns",
			Annotations: map[string]string{v1.AnnotationScheduledTime: "2026-11-22T01:00:00Z"}},
		Spec: v1.BenchmarkRunSpec{Targets: targets, Workload: v1.Workload{Script: "oltp_point_select"},
			Ladder: v1.Ladder{Threads: threads}, Repetitions: ptr.To[int32](5)},
	}
	for _, t := range targets {
		ts := v1.TargetStatus{Name: t.Name, Phase: v1.TargetSucceeded}
		for _, th := range threads {
			for k, f := range []float64{1, 1.002, 0.998, 1.004, 0.996} {
				q := qps(t.Name, th) * f
				ts.Steps = append(ts.Steps, v1.StepResult{Threads: th, Repetition: int32(k + 1), TPS: q, QPS: v1.QPS{Total: q},
					Latency: v1.Latency{P95Ms: 1 / f}, DurationSeconds: 10})
			}
		}
		r.Status.Targets = append(r.Status.Targets, ts)
	}
	return r
}

func flat(q float64) func(string, int32) float64 {
	return func(string, int32) float64 { return q }
}

// slower is 1000 QPS everywhere but the named cells ("target@threads"), which are 15 % slower.
func slower(cells ...string) func(string, int32) float64 {
	const q = 1000
	return func(target string, threads int32) float64 {
		for _, c := range cells {
			if c == fmt.Sprintf("%s@%d", target, threads) {
				return q * 0.85
			}
		}
		return q
	}
}

// flaggedResult is a Regressed comparison whose regressed cells are cells ("target@threads") and
// whose regressed targets (geometric mean) are targets.
func flaggedResult(all []v1.Target, threads []int32, cells []string, targets ...string) compare.Result {
	res := compare.Result{Summary: v1.Comparison{Verdict: v1.VerdictRegressed}}
	for _, t := range all {
		tc := v1.TargetChange{Target: t.Name, Verdict: v1.CellNoChange}
		for _, r := range targets {
			if r == t.Name {
				tc.Verdict = v1.CellRegressed
			}
		}
		res.Targets = append(res.Targets, tc)
		for _, th := range threads {
			c := compare.Cell{CellChange: v1.CellChange{Target: t.Name, Threads: th, Verdict: v1.CellNoChange}}
			for _, f := range cells {
				if f == fmt.Sprintf("%s@%d", t.Name, th) {
					c.Verdict, c.Regressed = v1.CellRegressed, true
				}
			}
			res.Cells = append(res.Cells, c)
		}
	}
	return res
}

func targetsNamed(names ...string) []v1.Target {
	var ts []v1.Target
	for _, n := range names {
		ts = append(ts, v1.Target{Name: n, Image: "mysql:8.4", MyCnf: "# " + n})
	}
	return ts
}

// The confirmation run pairs, for each regressed target, the baseline's server (its spec, as the
// baseline ran it) with the run's, at the flagged thread counts only, interleaved when every
// engine is builtin; bounds it cannot meet are errors that say why.
func TestConfirmationRunIsBuiltFromTheFlaggedCells(t *testing.T) {
	sched := &v1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ns"}}
	sched.Spec.Template.Metadata.Labels = map[string]string{"team": "db", v1.LabelSchedule: "nightly"}
	decided := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	threads := []int32{1, 2, 4, 8}

	t.Run("regressed cells of two targets", func(t *testing.T) {
		baseTargets := targetsNamed("a", "b", "c")
		baseTargets[0].Image = "mysql:8.4.2"
		baseline := confirmTestRun("nightly-202611210100", baseTargets, threads, flat(1000))
		run := confirmTestRun("nightly-202611220100", targetsNamed("a", "b", "c"), threads, slower("a@8", "c@2"))
		run.Spec.Order, run.Spec.Parallelism = v1.OrderParallel, ptr.To[int32](2)
		res := flaggedResult(run.Spec.Targets, threads, []string{"a@8", "c@2"})
		conf, cells, err := confirmationRun(sched, run, baseline, res, decided, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tg := range conf.Spec.Targets {
			names = append(names, tg.Name+"="+tg.Image)
		}
		if want := []string{"a-base=mysql:8.4.2", "a=mysql:8.4", "c-base=mysql:8.4", "c=mysql:8.4"}; !reflect.DeepEqual(names, want) {
			t.Errorf("targets %v, want %v", names, want)
		}
		if conf.Spec.Targets[0].MyCnf != "# a" {
			t.Errorf("baseline side's my.cnf %q", conf.Spec.Targets[0].MyCnf)
		}
		if want := []string{"a@8", "c@2"}; !reflect.DeepEqual(cells, want) {
			t.Errorf("cells %v, want %v", cells, want)
		}
		if want := []int32{2, 8}; !reflect.DeepEqual(conf.Spec.Ladder.Threads, want) {
			t.Errorf("threads %v, want %v", conf.Spec.Ladder.Threads, want)
		}
		if *conf.Spec.Repetitions != 5 || conf.Spec.Order != v1.OrderInterleaved || conf.Spec.Workload.Script != "oltp_point_select" ||
			conf.Spec.Parallelism != nil {
			t.Errorf("repetitions %d, order %s, workload %+v", *conf.Spec.Repetitions, conf.Spec.Order, conf.Spec.Workload)
		}
		if conf.Name != "nightly-c2611220100" || conf.Labels[v1.LabelSchedule] != "" || conf.Labels[v1.LabelConfirms] != run.Name ||
			conf.Labels[v1.LabelConfirmationOf] != "nightly" || conf.Labels["team"] != "db" ||
			conf.Annotations[v1.AnnotationConfirmationBaseline] != baseline.Name ||
			conf.Annotations[v1.AnnotationConfirmationTime] != "2026-11-22T06:00:00Z" {
			t.Errorf("metadata %+v", conf.ObjectMeta)
		}
	})

	t.Run("each side's image pinned to the digest its server ran; a new instance per round on both sides", func(t *testing.T) {
		old, cur := "sha256:"+strings.Repeat("a", 64), "sha256:"+strings.Repeat("b", 64)
		baseline := confirmTestRun("old", targetsNamed("a", "b"), threads, flat(1000))
		baseline.Status.Targets[0].ServerImageDigest = old
		run := confirmTestRun("new", targetsNamed("a", "b"), threads, slower("a@8", "b@8"))
		run.Status.Targets[0].ServerImageDigest = cur
		res := flaggedResult(run.Spec.Targets, threads, []string{"a@8", "b@8"})
		conf, _, err := confirmationRun(sched, run, baseline, res, decided, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		var images []string
		for _, tg := range conf.Spec.Targets {
			images = append(images, tg.Name+"="+tg.Image)
		}
		// b's digests were not recorded (a run from before they were): its tag as written.
		want := []string{"a-base=mysql:8.4@" + old, "a=mysql:8.4@" + cur, "b-base=mysql:8.4", "b=mysql:8.4"}
		if !reflect.DeepEqual(images, want) {
			t.Errorf("images %v, want %v", images, want)
		}
		if conf.Spec.Order != v1.OrderInterleaved || conf.Spec.ServerInstance != v1.ServerInstancePerRepetition {
			t.Errorf("order %s, serverInstance %q: want Interleaved on new instances every round", conf.Spec.Order, conf.Spec.ServerInstance)
		}
	})

	t.Run("a target's geometric mean re-measures all its thread counts", func(t *testing.T) {
		baseline := confirmTestRun("old", targetsNamed("a", "b"), threads, flat(1000))
		run := confirmTestRun("new", targetsNamed("a", "b"), threads, flat(900))
		res := flaggedResult(run.Spec.Targets, threads, []string{"a@2"}, "a")
		res.Cells[0].Acknowledged = true // a@1: covered by an acknowledgement, not re-measured
		conf, cells, err := confirmationRun(sched, run, baseline, res, decided, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"a@2", "a@4", "a@8"}; !reflect.DeepEqual(cells, want) || !reflect.DeepEqual(conf.Spec.Ladder.Threads, threads[1:]) {
			t.Errorf("cells %v threads %v, want %v", cells, conf.Spec.Ladder.Threads, want)
		}
	})

	t.Run("an engine that is not builtin measures sequentially", func(t *testing.T) {
		ts := targetsNamed("a")
		ts[0].Engine, ts[0].Image = v1.EnginePerconaServer, ""
		baseline := confirmTestRun("old", ts, threads, flat(1000))
		run := confirmTestRun("new", ts, threads, slower("a@1"))
		conf, _, err := confirmationRun(sched, run, baseline, flaggedResult(ts, threads, []string{"a@1"}), decided, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if conf.Spec.Order != v1.OrderSequential || conf.Spec.ServerInstance != "" {
			t.Errorf("order %s, serverInstance %q: want Sequential on shared instances (only builtin servers are replaced)",
				conf.Spec.Order, conf.Spec.ServerInstance)
		}
	})

	t.Run("a long name's baseline side", func(t *testing.T) {
		long := strings.Repeat("x", 38)
		baseline := confirmTestRun("old", targetsNamed(long), threads, flat(1000))
		run := confirmTestRun("new", targetsNamed(long), threads, slower(long+"@1"))
		conf, _, err := confirmationRun(sched, run, baseline, flaggedResult(run.Spec.Targets, threads, []string{long + "@1"}), decided, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := conf.Spec.Targets[0].Name; got != "base-0" {
			t.Errorf("baseline side %q", got)
		}
	})

	t.Run("repetitions lowered to fit 512 steps, not below the run's", func(t *testing.T) {
		var many []int32
		for i := int32(1); i <= 40; i++ {
			many = append(many, i)
		}
		baseline := confirmTestRun("old", targetsNamed("a", "b"), many, flat(1000))
		run := confirmTestRun("new", targetsNamed("a", "b"), many, flat(800))
		run.Spec.Repetitions = ptr.To[int32](2)
		s := sched.DeepCopy()
		s.Spec.Regression.Confirm.Repetitions = ptr.To[int32](10)
		conf, _, err := confirmationRun(s, run, baseline, flaggedResult(run.Spec.Targets, many, nil, "a", "b"), decided, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := *conf.Spec.Repetitions; got != 3 { // 4 targets x 40 threads x 3 = 480 <= 512
			t.Errorf("repetitions %d, want 3", got)
		}
		run.Spec.Repetitions = ptr.To[int32](5)
		_, _, err = confirmationRun(s, run, baseline, flaggedResult(run.Spec.Targets, many, nil, "a", "b"), decided, 1, 0)
		if err == nil || !strings.Contains(err.Error(), "4 targets (both sides of each regressed one) x 40 thread counts leave fewer than the 5 repetitions of new within a run's 512 steps") {
			t.Errorf("error %v: a confirmation with fewer repetitions than the run must not be built", err)
		}
	})

	t.Run("at least the run's repetitions; a later attempt's as decided", func(t *testing.T) {
		baseline := confirmTestRun("old", targetsNamed("a"), threads, flat(1000))
		run := confirmTestRun("new", targetsNamed("a"), threads, slower("a@1"))
		run.Spec.Repetitions = ptr.To[int32](8)
		res := flaggedResult(run.Spec.Targets, threads, []string{"a@1"})
		conf, _, err := confirmationRun(sched, run, baseline, res, decided, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := *conf.Spec.Repetitions; got != 8 {
			t.Errorf("repetitions %d, want the run's 8 (the policy says 5)", got)
		}
		conf, _, err = confirmationRun(sched, run, baseline, res, decided, 2, 10)
		if err != nil {
			t.Fatal(err)
		}
		if *conf.Spec.Repetitions != 10 || conf.Name != "nightly-c2611220100b" || conf.Annotations[v1.AnnotationConfirmationAttempt] != "2" {
			t.Errorf("second attempt: %s with %d repetitions, annotations %v", conf.Name, *conf.Spec.Repetitions, conf.Annotations)
		}
	})

	t.Run("no secretRef from the baseline: external targets are not confirmed", func(t *testing.T) {
		ext := []v1.Target{{Name: "a", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "team-db"}}}
		theirs := []v1.Target{{Name: "a", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "prod-db"}}}
		baseline := confirmTestRun("old", theirs, threads, flat(1000))
		run := confirmTestRun("new", ext, threads, slower("a@1"))
		_, _, err := confirmationRun(sched, run, baseline, flaggedResult(ext, threads, []string{"a@1"}), decided, 1, 0)
		if err == nil || !strings.Contains(err.Error(), "target a is engine external: a confirmation cannot bring back the server") {
			t.Errorf("error %v", err)
		}
		// A builtin baseline target that carried a secretRef (stored before the API refused it)
		// does not pass it on either.
		base := targetsNamed("a")
		base[0].SecretRef = &v1.LocalObjectReference{Name: "prod-db"}
		baseline = confirmTestRun("old", base, threads, flat(1000))
		run = confirmTestRun("new", targetsNamed("a"), threads, slower("a@1"))
		conf, _, err := confirmationRun(sched, run, baseline, flaggedResult(run.Spec.Targets, threads, []string{"a@1"}), decided, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, tg := range conf.Spec.Targets {
			if tg.SecretRef != nil {
				t.Errorf("target %s carries secretRef %s, which the run's spec does not name", tg.Name, tg.SecretRef.Name)
			}
		}
	})

	for _, tc := range []struct {
		name    string
		targets int
		threads []int32
		want    string
	}{
		{"more than 8 regressed targets", 9, threads, "9 targets regressed; a confirmation run re-measures at most 8"},
		{"fewer than 2 repetitions fit", 8, func() []int32 {
			var ts []int32
			for i := int32(1); i <= 17; i++ {
				ts = append(ts, i)
			}
			return ts
		}(), "16 targets (both sides of each regressed one) x 17 thread counts leave fewer than the 5 repetitions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var names []string
			for i := 0; i < tc.targets; i++ {
				names = append(names, fmt.Sprintf("t%d", i))
			}
			baseline := confirmTestRun("old", targetsNamed(names...), tc.threads, flat(1000))
			run := confirmTestRun("new", targetsNamed(names...), tc.threads, flat(800))
			_, _, err := confirmationRun(sched, run, baseline, flaggedResult(run.Spec.Targets, tc.threads, nil, names...), decided, 1, 0)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// The confirmation's verdict is the comparison, inside the confirmation run, of each target's run
// side with its baseline side: a difference found again confirms, none does not.
func TestConfirmationDecidesOnThePairsInsideTheRun(t *testing.T) {
	// The fake servers have no instance of their own: nothing differs between the two sides but
	// the repetitions' noise (compare's tests cover the per-target allowance).
	sched := &v1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ns"},
		Spec: v1.BenchmarkScheduleSpec{Regression: v1.RegressionPolicy{RunToRunCVPercent: new(float64)}}}
	threads := []int32{1, 2, 4, 8}
	baseline := confirmTestRun("nightly-202611210100", targetsNamed("a", "b"), threads, flat(1000))
	run := confirmTestRun("nightly-202611220100", targetsNamed("a", "b"), threads, flat(850))
	conf, cells, err := confirmationRun(sched, run, baseline, flaggedResult(run.Spec.Targets, threads, nil, "a", "b"), time.Now(), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	rec := &v1.Confirmation{Run: run.Name, Baseline: baseline.Name, Cells: cells}
	for _, tc := range []struct {
		name  string
		qps   func(string, int32) float64
		want  v1.ConfirmationState
		words []string
	}{
		{"found again", slower("a@1", "a@2", "a@4", "a@8"), v1.ConfirmationConfirmed,
			[]string{"regression against nightly-202611210100 confirmed", "nightly-c2611220100 measured", "interleaved on one node",
				"a: QPS x0.850", "a at 8 threads: QPS -15.0%", "8 cell(s) (a@1, a@2, a@4, a@8, b@1, b@2, b@4, b@8)"}},
		{"both sides alike", flat(1000), v1.ConfirmationNotConfirmed,
			[]string{"not confirmed", "found OK 0/8"}},
		{"the baseline side slower", slower("a-base@1", "a-base@2", "a-base@4", "a-base@8"), v1.ConfirmationNotConfirmed,
			[]string{"not confirmed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			finished := confirmTestRun(conf.Name, conf.Spec.Targets, conf.Spec.Ladder.Threads, tc.qps)
			done := conf.DeepCopy()
			done.Status = finished.Status
			res := confirmationResult(done, sched.Spec.Regression)
			if res.Summary.Run != run.Name || res.Summary.Baseline != baseline.Name {
				t.Errorf("compared %s with %s", res.Summary.Run, res.Summary.Baseline)
			}
			state, msg := concludeConfirmation(rec, done, res)
			if state != tc.want {
				t.Errorf("state %s, want %s: %s", state, tc.want, msg)
			}
			for _, w := range tc.words {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
}

// A confirmation of an Inconclusive night's suspects ends not confirmed once it names no suspect
// of its own, though it cannot rule the minimum effect out either; a suspect still harmful, or a
// Regressed night's confirmation, measures again.
func TestSuspicionNotFoundAgain(t *testing.T) {
	sched := &v1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ns"}}
	threads := []int32{1, 4}
	baseline := confirmTestRun("nightly-202611210100", targetsNamed("a", "b"), threads, flat(1000))
	run := confirmTestRun("nightly-202611220100", targetsNamed("a", "b"), threads, flat(940))
	conf, cells, err := confirmationRun(sched, run, baseline, flaggedResult(run.Spec.Targets, threads, nil, "a"), time.Now(), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Each round's noise on the run's side only: a ratio spread of about 7 %, as the local
	// cluster's rounds show, so 5 rounds cannot rule out a 5 % drop.
	rounds := []float64{1.10, 0.92, 1.06, 0.95, 1.02}
	measured := func(level float64) *v1.BenchmarkRun {
		done := conf.DeepCopy()
		done.Status = confirmTestRun(conf.Name, conf.Spec.Targets, threads, flat(1000)).Status
		for i := range done.Status.Targets {
			ts := &done.Status.Targets[i]
			if ts.Name != "a" {
				continue
			}
			for k := range ts.Steps {
				f := level * rounds[ts.Steps[k].Repetition-1]
				ts.Steps[k].QPS.Total *= f
				ts.Steps[k].TPS *= f
				ts.Steps[k].Latency.P95Ms /= f
			}
		}
		return done
	}
	for _, tc := range []struct {
		name  string
		of    v1.Verdict
		level float64
		want  v1.ConfirmationState
		words []string
	}{
		{"suspect not harmful again", v1.VerdictInconclusive, 1, v1.ConfirmationNotConfirmed,
			[]string{"suspicion against nightly-202611210100 not found again", "Inconclusive", "a drop of the minimum effect cannot be ruled out"}},
		{"suspect harmful again", v1.VerdictInconclusive, 0.93, v1.ConfirmationInconclusive, []string{"unconfirmed", "could not decide"}},
		{"a Regressed night's", v1.VerdictRegressed, 1, v1.ConfirmationInconclusive, []string{"unconfirmed", "could not decide"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &v1.Confirmation{Run: run.Name, Baseline: baseline.Name, Cells: cells, Verdict: tc.of}
			done := measured(tc.level)
			res := confirmationResult(done, sched.Spec.Regression)
			if res.Summary.Verdict != v1.VerdictInconclusive {
				t.Fatalf("the confirmation's comparison is %s, want Inconclusive (the rounds' noise too small?): %s", res.Summary.Verdict, res.Summary.Message)
			}
			state, msg := concludeConfirmation(rec, done, res)
			if state != tc.want {
				t.Errorf("state %s, want %s (suspects %v): %s", state, tc.want, res.Summary.Suspects, msg)
			}
			for _, w := range tc.words {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
}

// Only a confirmed regression is an alarm without qualification; one that could not be confirmed
// (skipped or failed) still alarms, under its own reason, and one not confirmed does not. An
// Inconclusive comparison's suspects alarm only when confirmed, and otherwise stay Inconclusive.
func TestConfirmationCondition(t *testing.T) {
	for _, tc := range []struct {
		of     v1.Verdict
		state  v1.ConfirmationState
		status metav1.ConditionStatus
		reason string
		suffix string
	}{
		{"", v1.ConfirmationPending, metav1.ConditionUnknown, v1.ReasonAwaitingConfirmation, "confirming"},
		{"", v1.ConfirmationRunning, metav1.ConditionUnknown, v1.ReasonAwaitingConfirmation, "confirming"},
		{"", v1.ConfirmationConfirmed, metav1.ConditionTrue, v1.ReasonRegressed, "confirmed"},
		{v1.VerdictRegressed, v1.ConfirmationConfirmed, metav1.ConditionTrue, v1.ReasonRegressed, "confirmed"},
		{"", v1.ConfirmationNotConfirmed, metav1.ConditionFalse, v1.ReasonRegressionNotConfirmed, "not confirmed"},
		{"", v1.ConfirmationSkipped, metav1.ConditionTrue, v1.ReasonRegressionUnconfirmed, "unconfirmed"},
		{"", v1.ConfirmationFailed, metav1.ConditionTrue, v1.ReasonConfirmationFailed, "unconfirmed"},
		{"", v1.ConfirmationInconclusive, metav1.ConditionTrue, v1.ReasonConfirmationInconclusive, "unconfirmed"},
		{v1.VerdictInconclusive, v1.ConfirmationRunning, metav1.ConditionUnknown, v1.ReasonAwaitingConfirmation, "confirming"},
		{v1.VerdictInconclusive, v1.ConfirmationConfirmed, metav1.ConditionTrue, v1.ReasonRegressed, "regression confirmed"},
		{v1.VerdictInconclusive, v1.ConfirmationNotConfirmed, metav1.ConditionFalse, v1.ReasonRegressionNotConfirmed, "no regression found again"},
		{v1.VerdictInconclusive, v1.ConfirmationSkipped, metav1.ConditionFalse, v1.ReasonInconclusive, "not re-measured"},
		{v1.VerdictInconclusive, v1.ConfirmationFailed, metav1.ConditionFalse, v1.ReasonInconclusive, "not re-measured"},
		{v1.VerdictInconclusive, v1.ConfirmationInconclusive, metav1.ConditionFalse, v1.ReasonInconclusive, "still undecided"},
	} {
		status, reason, suffix := confirmationCondition(v1.Confirmation{Verdict: tc.of, State: tc.state})
		if status != tc.status || reason != tc.reason || suffix != tc.suffix {
			t.Errorf("%s of %q: %s %s %q, want %s %s %q", tc.state, tc.of, status, reason, suffix, tc.status, tc.reason, tc.suffix)
		}
		if final := tc.state.Final(); final != (tc.status != metav1.ConditionUnknown) {
			t.Errorf("%s: Final() = %v", tc.state, final)
		}
	}
}

// A re-measurement doubles the repetitions within 10 and 512 steps, and is named after the
// first with its attempt's letter.
func TestNextConfirmationRepetitionsAndNames(t *testing.T) {
	conf := func(reps int32, targets, threads int) *v1.BenchmarkRun {
		r := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "nightly-c2611220100"}}
		r.Spec.Repetitions = &reps
		for i := 0; i < targets; i++ {
			r.Spec.Targets = append(r.Spec.Targets, v1.Target{Name: fmt.Sprint("t", i)})
		}
		for i := 1; i <= threads; i++ {
			r.Spec.Ladder.Threads = append(r.Spec.Ladder.Threads, int32(i))
		}
		return r
	}
	for _, tc := range []struct {
		reps             int32
		targets, threads int
		want             int32
	}{
		{5, 2, 2, 10}, {3, 2, 2, 6}, {6, 2, 2, 10}, {10, 2, 2, 0},
		{2, 16, 10, 3}, // 160 steps a repetition: 3 fit 512
		{3, 16, 10, 0},
	} {
		if got := nextConfirmationRepetitions(conf(tc.reps, tc.targets, tc.threads)); got != tc.want {
			t.Errorf("%d repetitions of %d targets x %d threads: next %d, want %d", tc.reps, tc.targets, tc.threads, got, tc.want)
		}
	}
	at := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	first := conf(5, 2, 2)
	if got := nextAttemptName(first, 2); got != "nightly-c2611220100b" || got != ConfirmationAttemptName("nightly", at, 2) {
		t.Errorf("second attempt %q", got)
	}
	second := conf(10, 2, 2)
	second.Name, second.Annotations = "nightly-c2611220100b", map[string]string{v1.AnnotationConfirmationAttempt: "2"}
	if got := nextAttemptName(second, 3); got != "nightly-c2611220100c" || len(ConfirmationAttemptName(strings.Repeat("s", 50), at, 4)) > 63 {
		t.Errorf("third attempt %q", got)
	}
}

// An Inconclusive comparison's suspects are re-measured as named: a target's workload whole, a
// single cell alone, and nothing of the other workloads.
func TestFlaggedCellsOfSuspects(t *testing.T) {
	var cells []compare.Cell
	for _, w := range []string{"points", "rw"} {
		for _, tg := range []string{"a", "b"} {
			for _, th := range []int32{1, 8} {
				cells = append(cells, compare.Cell{CellChange: v1.CellChange{Target: tg, Workload: w, Threads: th}})
			}
		}
	}
	res := compare.Result{Cells: cells}
	res.Summary.Verdict = v1.VerdictInconclusive
	res.Summary.Suspects = []string{"a/rw", "b/points@8"}
	got := flaggedCells(res)
	want := flagged{"a": {"rw": {1: true, 8: true}}, "b": {"points": {8: true}}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("flaggedCells = %v, want %v", got, want)
	}
}
