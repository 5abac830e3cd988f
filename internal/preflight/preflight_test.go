package preflight_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/preflight"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// What a target may do, from what its run names: a missing reference is waited for within the
// grace and then fails the target; a Secret the user did not consent to fails it at once; a
// Secret deleted during the run fails it (the operator's own at once, the user's after the grace).
func TestTarget(t *testing.T) {
	started := time.Date(2026, 11, 5, 2, 0, 0, 0, time.UTC)
	const grace = time.Minute
	script := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "lua"}, Data: map[string]string{"bench.lua": "-- x"}}
	consented := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "team-db",
		Labels: map[string]string{v1.LabelAllowBenchmark: v1.AllowBenchmark}}}
	unlabelled := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other-db"}}
	generated := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "run-db-credentials"}}
	run := func(customScript bool) *v1.BenchmarkRun {
		r := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "run"}}
		r.Status.StartTime = &metav1.Time{Time: started}
		if customScript {
			r.Spec.Workload.CustomScript = &v1.ConfigMapKeySelector{Name: "lua", Key: "bench.lua"}
		}
		return r
	}
	builtin := v1.Target{Name: "db"}
	external := v1.Target{Name: "db", Engine: v1.EngineExternal}
	pending := &v1.TargetStatus{Name: "db", Phase: v1.TargetPending}
	measuring := &v1.TargetStatus{Name: "db", Phase: v1.TargetRunning}
	for _, tc := range []struct {
		name      string
		objs      []client.Object
		run       *v1.BenchmarkRun
		target    v1.Target
		status    *v1.TargetStatus
		secret    string
		engineErr error
		after     time.Duration // since the run started
		fail      string        // a part of Fail; "" for none
		wait      string        // a part of Wait; "" for none
		requeue   time.Duration
	}{
		{name: "nothing named", run: run(false), target: builtin, status: pending, secret: "run-db-credentials"},
		{name: "the script is there", objs: []client.Object{script}, run: run(true), target: builtin, status: pending},
		{name: "the script is missing", run: run(true), target: builtin, status: pending, after: 10 * time.Second,
			wait: "target db waits up to 50s for a reference: ConfigMap lua not found in namespace ns", requeue: preflight.Recheck},
		{name: "the script is missing past the grace", run: run(true), target: builtin, status: pending, after: grace,
			fail: "ConfigMap lua not found in namespace ns: create it with the key bench.lua"},
		{name: "the script's key is missing", objs: []client.Object{&corev1.ConfigMap{ObjectMeta: script.ObjectMeta}}, run: run(true),
			target: builtin, status: pending, after: grace, fail: "ConfigMap lua in namespace ns has no key bench.lua"},
		{name: "no engine", run: run(false), target: builtin, status: pending, engineErr: errors.New("engine x is not available"),
			fail: "engine x is not available"},
		{name: "the user's Secret with its owner's consent", objs: []client.Object{consented}, run: run(false), target: external,
			status: pending, secret: "team-db"},
		{name: "the user's Secret without consent", objs: []client.Object{unlabelled}, run: run(false), target: external,
			status: pending, secret: "other-db", fail: "then start a new run"},
		{name: "the user's Secret missing before the target starts", run: run(false), target: external, status: pending,
			secret: "team-db"},
		{name: "the user's Secret deleted during the run", run: run(false), target: external, status: measuring, secret: "team-db",
			wait:    "target db: Secret ns/team-db named by target db was deleted during the run; its next sysbench Job waits for it",
			requeue: preflight.Recheck},
		{name: "the operator's Secret deleted during the run", run: run(false), target: builtin, status: measuring,
			secret: "run-db-credentials", fail: "with the credentials the operator generated for target db was deleted during the run"},
		{name: "the operator's Secret there", objs: []client.Object{generated}, run: run(false), target: builtin, status: measuring,
			secret: "run-db-credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := preflight.Checks{Reader: fake.NewClientBuilder().WithScheme(testenv.Scheme).WithObjects(tc.objs...).Build(),
				Clock: clocktesting.NewFakePassiveClock(started.Add(tc.after)), Grace: grace}
			v, err := c.Target(context.Background(), tc.run, tc.target, tc.status, tc.secret, tc.engineErr)
			if err != nil {
				t.Fatal(err)
			}
			if (tc.fail == "") != (v.Fail == "") || !strings.Contains(v.Fail, tc.fail) ||
				(tc.wait == "") != (v.Wait == "") || !strings.Contains(v.Wait, tc.wait) || v.Requeue != tc.requeue {
				t.Errorf("verdict %+v, want fail %q, wait %q, requeue %s", v, tc.fail, tc.wait, tc.requeue)
			}
		})
	}
}

// A custom script's digest is the digest of its content as its ConfigMap holds it now.
func TestScriptDigest(t *testing.T) {
	r := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "run"}}
	c := preflight.Checks{Reader: fake.NewClientBuilder().WithScheme(testenv.Scheme).WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "lua"}, Data: map[string]string{"bench.lua": "-- x"}}).Build()}
	if d, err := c.ScriptDigest(context.Background(), r); err != nil || d != "" {
		t.Errorf("no script: %q, %v", d, err)
	}
	r.Spec.Workload.CustomScript = &v1.ConfigMapKeySelector{Name: "lua", Key: "bench.lua"}
	d, err := c.ScriptDigest(context.Background(), r)
	if err != nil || len(d) != 64 {
		t.Errorf("digest %q, %v; want a sha256", d, err)
	}
	r.Spec.Workload.CustomScript.Key = "other.lua"
	if _, err := c.ScriptDigest(context.Background(), r); err == nil || !strings.Contains(err.Error(), "has no key other.lua") {
		t.Errorf("a missing key: %v", err)
	}
}
