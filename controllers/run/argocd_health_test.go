package run_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// The Argo CD health checks of docs/gitops.md, run the way Argo CD runs them (gopher-lua, the
// object as the global obj, only the package, base and table libraries) against the objects the
// controllers write into a real API server. The scripts are read from the page itself, so the
// documentation cannot drift from what is tested. The same objects are also given to kstatus
// (what Flux uses), to pin what docs/gitops.md says Flux sees.

const gitopsDoc = "../../docs/gitops.md"

// argoHealthKey is the argocd-cm key of kind's health check.
func argoHealthKey(kind string) string {
	return "resource.customizations.health." + v1.GroupVersion.Group + "_" + kind
}

// argoHealthScripts reads the argocd-cm ConfigMap from the one ```yaml block of docs/gitops.md
// that holds health checks, and returns its data.
func argoHealthScripts(t testing.TB) map[string]string {
	t.Helper()
	doc, err := os.ReadFile(gitopsDoc)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur *strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```yaml":
			cur = &strings.Builder{}
		case cur != nil && strings.TrimSpace(line) == "```":
			if strings.Contains(cur.String(), "resource.customizations.health.") {
				blocks = append(blocks, cur.String())
			}
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 1 {
		t.Fatalf("%s has %d ```yaml blocks with Argo CD health checks, want exactly 1", gitopsDoc, len(blocks))
	}
	cm := &corev1.ConfigMap{}
	if err := yaml.UnmarshalStrict([]byte(blocks[0]), cm); err != nil {
		t.Fatalf("the argocd-cm block of %s: %v", gitopsDoc, err)
	}
	if cm.Kind != "ConfigMap" || cm.Name != "argocd-cm" {
		t.Fatalf("the health checks of %s are in %s %s, want ConfigMap argocd-cm", gitopsDoc, cm.Kind, cm.Name)
	}
	return cm.Data
}

// argoHealth is the health Argo CD gives obj (of kind BenchmarkRun or BenchmarkSchedule) with
// the health check of docs/gitops.md.
func argoHealth(t testing.TB, kind string, obj client.Object) (status, message string) {
	t.Helper()
	script, ok := argoHealthScripts(t)[argoHealthKey(kind)]
	if !ok {
		t.Fatalf("%s has no %s", gitopsDoc, argoHealthKey(kind))
	}
	status, message, err := runArgoHealthLua(script, asUnstructured(t, kind, obj))
	if err != nil {
		t.Fatalf("%s on %s %s: %v", argoHealthKey(kind), kind, obj.GetName(), err)
	}
	return status, message
}

// asUnstructured is obj as Argo CD and kstatus see it: the API object as JSON values, ints as
// int64, with apiVersion and kind.
func asUnstructured(t testing.TB, kind string, obj client.Object) map[string]any {
	t.Helper()
	gvk, err := apiutil.GVKForObject(obj, testenv.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	if gvk.Kind != kind {
		t.Fatalf("object %s is a %s, not a %s", obj.GetName(), gvk.Kind, kind)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u["apiVersion"], u["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return u
}

// runArgoHealthLua runs a health script as Argo CD's util/lua does: no standard libraries but
// package, base and table (Argo CD adds a reduced os library, which these scripts do not use),
// a one-second budget, obj as a global, and the returned table read as {status, message}.
func runArgoHealthLua(script string, obj map[string]any) (status, message string, err error) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
	} {
		if err := L.CallByParam(lua.P{Fn: L.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return "", "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	L.SetContext(ctx)
	value, err := toLua(L, obj)
	if err != nil {
		return "", "", err
	}
	L.SetGlobal("obj", value)
	if err := L.DoString(script); err != nil {
		return "", "", err
	}
	hs, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		return "", "", fmt.Errorf("the script returned a %s, want a table", L.Get(-1).Type())
	}
	st, ok := hs.RawGetString("status").(lua.LString)
	if !ok {
		return "", "", fmt.Errorf("hs.status is a %s, want a string", hs.RawGetString("status").Type())
	}
	switch string(st) {
	case "Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown":
	default:
		return "", "", fmt.Errorf("hs.status %q is not an Argo CD health status (Argo CD would show Unknown)", st)
	}
	msg, ok := hs.RawGetString("message").(lua.LString)
	if !ok {
		return "", "", fmt.Errorf("hs.message is a %s, want a string", hs.RawGetString("message").Type())
	}
	return string(st), string(msg), nil
}

// toLua converts JSON values as Argo CD's decodeValue does: objects and arrays become tables,
// arrays 1-based.
func toLua(L *lua.LState, v any) (lua.LValue, error) {
	switch v := v.(type) {
	case nil:
		return lua.LNil, nil
	case bool:
		return lua.LBool(v), nil
	case string:
		return lua.LString(v), nil
	case int64:
		return lua.LNumber(v), nil
	case int:
		return lua.LNumber(v), nil
	case int32:
		return lua.LNumber(v), nil
	case float64:
		return lua.LNumber(v), nil
	case []any:
		tbl := L.CreateTable(len(v), 0)
		for _, item := range v {
			lv, err := toLua(L, item)
			if err != nil {
				return nil, err
			}
			tbl.Append(lv)
		}
		return tbl, nil
	case map[string]any:
		tbl := L.CreateTable(0, len(v))
		for k, item := range v {
			lv, err := toLua(L, item)
			if err != nil {
				return nil, err
			}
			tbl.RawSetString(k, lv)
		}
		return tbl, nil
	}
	return nil, fmt.Errorf("no Lua value for %T", v)
}

// kstatusOf is what kstatus (Flux's health checks, kubectl-style waits) computes for obj.
func kstatusOf(t testing.TB, kind string, obj client.Object) *kstatus.Result {
	t.Helper()
	res, err := kstatus.Compute(&unstructured.Unstructured{Object: asUnstructured(t, kind, obj)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func wantArgo(t *testing.T, kind string, obj client.Object, wantStatus string, wantMessage ...string) string {
	t.Helper()
	status, message := argoHealth(t, kind, obj)
	if status != wantStatus {
		t.Errorf("Argo CD health of %s %s: %s %q, want %s", kind, obj.GetName(), status, message, wantStatus)
	}
	for _, w := range wantMessage {
		if !strings.Contains(message, w) {
			t.Errorf("Argo CD health message of %s %s: %q lacks %q", kind, obj.GetName(), message, w)
		}
	}
	return message
}

func wantKstatus(t *testing.T, kind string, obj client.Object, want kstatus.Status) *kstatus.Result {
	t.Helper()
	res := kstatusOf(t, kind, obj)
	if res.Status != want {
		t.Errorf("kstatus of %s %s: %s %q, want %s", kind, obj.GetName(), res.Status, res.Message, want)
	}
	return res
}

func TestArgoCDHealthScriptsInTheDocs(t *testing.T) {
	scripts := argoHealthScripts(t)
	for _, kind := range []string{"BenchmarkRun", "BenchmarkSchedule"} {
		script := scripts[argoHealthKey(kind)]
		if script == "" {
			t.Fatalf("%s lacks %s", gitopsDoc, argoHealthKey(kind))
		}
		L := lua.NewState()
		if _, err := L.LoadString(script); err != nil {
			t.Errorf("%s does not compile: %v", argoHealthKey(kind), err)
		}
		L.Close()
	}

	// Orders the controllers do not reach quickly: what wins when several conditions hold.
	sched := func(suspend bool, conds ...metav1.Condition) *v1.BenchmarkSchedule {
		s := &v1.BenchmarkSchedule{
			ObjectMeta: metav1.ObjectMeta{Name: "s", Generation: 3},
			Spec:       v1.BenchmarkScheduleSpec{Schedule: "@daily", Suspend: ptr.To(suspend)},
			Status:     v1.BenchmarkScheduleStatus{ObservedGeneration: 3, Conditions: conds},
		}
		return s
	}
	cond := func(typ string, status metav1.ConditionStatus, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: "R", Message: msg}
	}
	for _, tc := range []struct {
		name        string
		obj         *v1.BenchmarkSchedule
		status, msg string
	}{
		{"regressed beats suspended", sched(true, cond("Ready", "True", "suspended: no new runs (0 active)"),
			cond("Regressed", "True", "n-202501020200: 1 of 4 cells regressed")), "Degraded", "regressed: n-202501020200: 1 of 4 cells regressed"},
		{"stalled beats regressed", sched(false, cond("Stalled", "True", "bad cron"), cond("Regressed", "True", "x")), "Degraded", "bad cron"},
		{"no regression is healthy", sched(false, cond("Ready", "True", "next run at X"), cond("Regressed", "False", "0 of 4")), "Healthy", "next run at X"},
		{"ready false without stalled", sched(false, cond("Ready", "False", "name taken"), cond("Stalled", "False", "valid")), "Progressing", "name taken"},
		{"no conditions", sched(false), "Progressing", "waiting for the operator"},
	} {
		status, msg := argoHealth(t, "BenchmarkSchedule", tc.obj)
		if status != tc.status || msg != tc.msg {
			t.Errorf("%s: %s %q, want %s %q", tc.name, status, msg, tc.status, tc.msg)
		}
	}
}

// A run created before any operator runs, while it runs, once it succeeded, and once its
// schedule found it regressed.
func TestArgoCDHealthOfARunThroughItsLife(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	run := baseRun(ns, "life", 1, 2)
	run.Spec.Targets = run.Spec.Targets[:1]
	if err := k8s.Create(ctx, run); err != nil {
		t.Fatal(err)
	}

	// No operator yet: no status at all.
	got := &v1.BenchmarkRun{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
		t.Fatal(err)
	}
	wantArgo(t, "BenchmarkRun", got, "Progressing", "waiting for the operator to observe generation 1")
	// The documented kstatus gap: without observedGeneration or conditions it calls it Current.
	wantKstatus(t, "BenchmarkRun", got, kstatus.CurrentStatus)

	// Running: every Job waits until released.
	startOperator(t, ns, operatorOptions{log: captured(t, "run_point_select_t4.txt")})
	var released atomic.Bool
	succeed := succeedAll(t)
	startKubelet(t, ns, func(job *batchv1.Job) outcome {
		if !released.Load() {
			return outcome{pending: true}
		}
		return succeed(job)
	})
	got = waitFor(t, ns, "life", 30*time.Second, "the run to provision", func(r *v1.BenchmarkRun) bool {
		return r.Status.Phase == v1.RunProvisioning && r.Status.ObservedGeneration == r.Generation &&
			meta.IsStatusConditionTrue(r.Status.Conditions, v1.ConditionReconciling)
	})
	progressing := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionProgressing)
	if progressing == nil || progressing.Message == "" {
		t.Fatalf("a provisioning run without a Progressing message: %+v", got.Status.Conditions)
	}
	if msg := wantArgo(t, "BenchmarkRun", got, "Progressing"); msg != progressing.Message {
		t.Errorf("Argo CD message of a running run %q, want the Progressing condition's %q", msg, progressing.Message)
	}
	wantKstatus(t, "BenchmarkRun", got, kstatus.InProgressStatus)

	// Succeeded.
	released.Store(true)
	got = waitFor(t, ns, "life", 60*time.Second, "the run to finish", finished)
	if got.Status.Phase != v1.RunSucceeded {
		t.Fatalf("phase %s, want Succeeded; conditions %+v", got.Status.Phase, got.Status.Conditions)
	}
	wantArgo(t, "BenchmarkRun", got, "Healthy", "all 1 targets measured", "results in ConfigMap life-results")
	wantKstatus(t, "BenchmarkRun", got, kstatus.CurrentStatus)

	// Regressed, as the schedule controller writes it onto a succeeded run.
	before := got.DeepCopy()
	regression := "1 of 2 cells regressed against life-base (QPS drop > 5%, p95 rise > 10%); worst: mariadb at 2 threads: QPS -12.3%, p95 +15.0%"
	meta.SetStatusCondition(&got.Status.Conditions, metav1.Condition{
		Type: v1.ConditionRegressed, Status: metav1.ConditionTrue, Reason: v1.ReasonRegressed,
		Message: regression, ObservedGeneration: got.Generation,
	})
	if err := k8s.Status().Patch(ctx, got, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the run controller sees the change and must leave a finished run alone
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
		t.Fatal(err)
	}
	if msg := wantArgo(t, "BenchmarkRun", got, "Degraded"); msg != "regressed: "+regression {
		t.Errorf("Argo CD message of a regressed run %q, want %q", msg, "regressed: "+regression)
	}
	// kstatus (Flux) ignores Regressed: the run finished, nothing to reconcile.
	wantKstatus(t, "BenchmarkRun", got, kstatus.CurrentStatus)
}

func TestArgoCDHealthOfAFailedRun(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns, operatorOptions{})
	startKubelet(t, ns, succeedAll(t))
	run := baseRun(ns, "maxconn", 1, 2, 200)
	run.Spec.Targets = run.Spec.Targets[:1]
	run.Spec.Targets[0].MyCnf = "max_connections = 100"
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "maxconn", 30*time.Second, "the run to finish", finished)
	if got.Status.Phase != v1.RunFailed {
		t.Fatalf("phase %s, want Failed", got.Status.Phase)
	}
	msg := wantArgo(t, "BenchmarkRun", got, "Degraded", "target mariadb: ", "max_connections = 100", "raise it to at least 202")
	if stalled := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionStalled); stalled == nil || stalled.Message != msg {
		t.Errorf("Argo CD message %q, want the Stalled condition's: %+v", msg, stalled)
	}
	res := wantKstatus(t, "BenchmarkRun", got, kstatus.FailedStatus)
	if res.Message != msg {
		t.Errorf("kstatus message %q, want %q", res.Message, msg)
	}
}

// waitArgoSchedule polls schedule name until the controller has written the status of its
// current generation.
func waitArgoSchedule(t *testing.T, ns, name string) *v1.BenchmarkSchedule {
	t.Helper()
	return waitScheduleFor(t, ns, name, 30*time.Second, "the status of its current generation", func(s *v1.BenchmarkSchedule) bool {
		return s.Status.ObservedGeneration == s.Generation && meta.FindStatusCondition(s.Status.Conditions, v1.ConditionReady) != nil
	})
}

func TestArgoCDHealthOfSchedules(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	op := startOperator(t, ns, operatorOptions{schedules: true, noRuns: true})
	schedule := func(name, cron string, suspend bool) {
		s := &v1.BenchmarkSchedule{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: v1.BenchmarkScheduleSpec{
				Schedule: cron,
				Template: v1.BenchmarkRunTemplate{Spec: baseRun(ns, "unused", 1, 2).Spec},
			},
		}
		if suspend {
			s.Spec.Suspend = ptr.To(true)
		}
		if err := k8s.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	const yearly = "0 2 1 1 *" // valid, and never due while the test runs (but on 1 January at 02:00 UTC)
	schedule("broken", "not a cron", false)
	schedule("paused", yearly, true)
	schedule("good", yearly, false)

	broken := waitArgoSchedule(t, ns, "broken")
	stalled := meta.FindStatusCondition(broken.Status.Conditions, v1.ConditionStalled)
	if stalled == nil || stalled.Status != metav1.ConditionTrue || stalled.Reason != v1.ReasonInvalidSchedule {
		t.Fatalf("an invalid cron expression: Stalled %+v, want True InvalidSchedule", stalled)
	}
	if msg := wantArgo(t, "BenchmarkSchedule", broken, "Degraded", `spec.schedule "not a cron"`, "write five fields"); msg != stalled.Message {
		t.Errorf("Argo CD message %q, want the InvalidSchedule message %q", msg, stalled.Message)
	}
	wantKstatus(t, "BenchmarkSchedule", broken, kstatus.FailedStatus)

	paused := waitArgoSchedule(t, ns, "paused")
	wantArgo(t, "BenchmarkSchedule", paused, "Suspended", "suspended: no new runs")
	wantKstatus(t, "BenchmarkSchedule", paused, kstatus.CurrentStatus)

	good := waitArgoSchedule(t, ns, "good")
	wantArgo(t, "BenchmarkSchedule", good, "Healthy", "next run at ")
	wantKstatus(t, "BenchmarkSchedule", good, kstatus.CurrentStatus)

	// The newest compared run regressed, as the controller writes it onto the schedule.
	before := good.DeepCopy()
	regression := "good-202501010200: 1 of 2 cells regressed against good-202401010200 (QPS drop > 5%, p95 rise > 10%); worst: mariadb at 2 threads: QPS -12.3%"
	meta.SetStatusCondition(&good.Status.Conditions, metav1.Condition{
		Type: v1.ConditionRegressed, Status: metav1.ConditionTrue, Reason: v1.ReasonRegressed,
		Message: regression, ObservedGeneration: good.Generation,
	})
	if err := k8s.Status().Patch(ctx, good, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the controller reconciles the change; it has no compared run to replace it with
	good = waitArgoSchedule(t, ns, "good")
	if msg := wantArgo(t, "BenchmarkSchedule", good, "Degraded"); msg != "regressed: "+regression {
		t.Errorf("Argo CD message of a regressed schedule %q, want %q", msg, "regressed: "+regression)
	}
	wantKstatus(t, "BenchmarkSchedule", good, kstatus.CurrentStatus)

	// A spec change the operator has not seen yet (it is stopped): Progressing, whatever the
	// conditions of the old generation say.
	op.stop()
	broken.Spec.Schedule = yearly
	if err := k8s.Update(ctx, broken); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(broken), broken); err != nil {
		t.Fatal(err)
	}
	if broken.Generation != 2 || broken.Status.ObservedGeneration != 1 {
		t.Fatalf("generation %d observed %d, want 2 and 1", broken.Generation, broken.Status.ObservedGeneration)
	}
	wantArgo(t, "BenchmarkSchedule", broken, "Progressing", "waiting for the operator to observe generation 2")
	wantKstatus(t, "BenchmarkSchedule", broken, kstatus.InProgressStatus)

	startOperator(t, ns, operatorOptions{schedules: true, noRuns: true})
	fixed := waitArgoSchedule(t, ns, "broken")
	wantArgo(t, "BenchmarkSchedule", fixed, "Healthy", "next run at ")
	wantKstatus(t, "BenchmarkSchedule", fixed, kstatus.CurrentStatus)
}
