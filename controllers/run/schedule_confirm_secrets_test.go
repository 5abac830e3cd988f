package run_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// secretsIn creates Secrets with a server's connection keys.
func secretsIn(t *testing.T, ns string, names ...string) {
	t.Helper()
	for _, n := range names {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: ns},
			StringData: map[string]string{"host": n, "port": "3306", "user": "u", "password": "p"}}
		if err := k8s.Create(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
}

// A pinned baseline is read on behalf of the schedule's author, whom the admission policy checked
// only for the template's Secrets and ConfigMaps: a baseline that names another Secret (another
// user's external run) is refused, neither compared with nor re-measured, with a condition and a
// Warning that name the baseline, the Secret, the target and what to do.
func TestPinnedBaselineNamingAnotherSecretIsRefused(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())
	secretsIn(t, ns, "prod-db")
	theirs := baseRun(ns, "theirs", 1, 2)
	theirs.Spec.Targets[0] = v1.Target{Name: "mariadb", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "prod-db"}}
	if err := k8s.Create(context.Background(), theirs); err != nil {
		t.Fatal(err)
	}
	finish(t, ns, "theirs", v1.RunSucceeded, cellsOf(20000, 1.0))

	sched := nightly(ns, "pin", "0 * * * *")
	sched.Spec.Regression.BaselineRun = "theirs"
	sched.Spec.Regression.Confirm = v1.ConfirmPolicy{}
	createSchedule(t, sched)
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	name := "pin-" + h1.UTC().Format("200601021504")
	s.at("pin", h1.Add(time.Second))
	waitRuns(t, ns, "pin", name)
	finish(t, ns, name, v1.RunSucceeded, cellsOf(8000, 1.0)) // far slower: a regression, were it compared

	const want = "spec.regression.baselineRun theirs names Secret prod-db (target mariadb's secretRef), which spec.template does not name"
	run := waitFor(t, ns, name, 20*time.Second, "comparison", func(r *v1.BenchmarkRun) bool { return r.Status.Comparison != nil })
	if c := run.Status.Comparison; c.Verdict != v1.VerdictNoBaseline || c.Baseline != "" || c.ComparedCells != 0 ||
		!strings.Contains(c.Message, want) || !strings.Contains(c.Message, "pin a run whose Secrets and ConfigMaps the template names too") {
		t.Errorf("comparison %+v", c)
	}
	if cond := condition(run.Status.Conditions, v1.ConditionRegressed); cond.Status != metav1.ConditionFalse || cond.Reason != v1.ReasonBaselineRefused {
		t.Errorf("run Regressed %+v", cond)
	}
	assertWarning(t, ns, name, v1.ReasonBaselineRefused, want)
	got := waitSchedule(t, ns, "pin", "refused", func(s *v1.BenchmarkSchedule) bool {
		return hasCondition(s.Status.Conditions, v1.ConditionRegressed, metav1.ConditionFalse, v1.ReasonBaselineRefused)
	})
	if !strings.Contains(condition(got.Status.Conditions, v1.ConditionRegressed).Message, want) || got.Status.Confirmation != nil {
		t.Errorf("schedule Regressed %+v, confirmation %+v", condition(got.Status.Conditions, v1.ConditionRegressed), got.Status.Confirmation)
	}
	assertWarning(t, ns, "pin", v1.ReasonBaselineRefused, want)
	regressedGauges(t, ns, "pin", 0, 0)
}

// A confirmation runs the compared run's code: it never pairs it with a Secret that run's spec
// did not name. The baseline's external target names prod-db where the run's names team-db
// (both named by the template, so the baseline is not refused): re-creating the baseline's side
// would mount prod-db into the run's sysbench. An external server cannot be brought back as the
// baseline measured it anyway, so no confirmation run is made: the regression alarms
// unconfirmed, saying why.
func TestConfirmationNeverBorrowsTheBaselinesSecret(t *testing.T) {
	ns := newNamespace(t)
	s := startScheduler(t, ns, time.Now())
	secretsIn(t, ns, "team-db", "prod-db")
	external := func(a, b string) []v1.Target {
		return []v1.Target{
			{Name: "mariadb", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: a}},
			{Name: "mariadb-psoff", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: b}},
		}
	}
	baseline := baseRun(ns, "release", 1, 2)
	baseline.Spec.Targets = external("prod-db", "prod-db")
	if err := k8s.Create(context.Background(), baseline); err != nil {
		t.Fatal(err)
	}
	finish(t, ns, "release", v1.RunSucceeded, cellsOf(10000, 1.0))

	sched := nightly(ns, "ext", "0 * * * *")
	sched.Spec.Template.Spec.Targets = external("team-db", "prod-db")
	sched.Spec.Regression.BaselineRun = "release"
	sched.Spec.Regression.Confirm = v1.ConfirmPolicy{}
	createSchedule(t, sched)
	h1 := sched.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
	name := "ext-" + h1.UTC().Format("200601021504")
	s.at("ext", h1.Add(time.Second))
	waitRuns(t, ns, "ext", name)
	finish(t, ns, name, v1.RunSucceeded, slowMariadb(0.85))

	got := waitSchedule(t, ns, "ext", "skipped", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.Confirmation != nil && s.Status.Confirmation.State.Final()
	})
	if c := got.Status.Confirmation; c.State != v1.ConfirmationSkipped || c.ConfirmationRun != "" ||
		!strings.Contains(c.Message, "target mariadb is engine external: a confirmation cannot bring back the server the baseline measured") {
		t.Errorf("confirmation %+v", c)
	}
	list := &v1.BenchmarkRunList{}
	if err := k8s.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels{v1.LabelConfirmationOf: "ext"}); err != nil {
		t.Fatal(err)
	}
	for _, conf := range list.Items {
		for _, tg := range conf.Spec.Targets {
			if tg.SecretRef != nil {
				t.Errorf("confirmation run %s: target %s mounts Secret %s", conf.Name, tg.Name, tg.SecretRef.Name)
			}
		}
	}
	if len(list.Items) != 0 {
		t.Errorf("%d confirmation runs of external targets, want none", len(list.Items))
	}
	assertWarning(t, ns, "ext", v1.ReasonRegressionUnconfirmed, "engine external")
}
