package run_test

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// A step's output that carries the connection password (a FATAL line, a script that prints its
// option file) reaches neither the run's status, nor its conditions, nor its Events: whoever can
// read the run need not be able to read the Secret.
func TestStepFailureNeverCarriesThePassword(t *testing.T) {
	const password = "Pw-7Kq9-only-in-the-secret"
	ns := newNamespace(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "external-db", Namespace: ns,
		Labels: map[string]string{v1.LabelAllowBenchmark: v1.AllowBenchmark}},
		StringData: map[string]string{"host": "db.example", "port": "3306", "user": "sbtest", "password": password}}
	if err := k8s.Create(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	startOperator(t, ns, operatorOptions{})
	ok := succeedAll(t)
	startKubelet(t, ns, func(job *batchv1.Job) outcome {
		if job.Labels[specs.LabelStep] == "prepare" {
			return outcome{exitCode: 1, message: "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n" +
				"FATAL: unable to connect to MySQL server on host 'db.example', port 3306, aborting...\n" +
				"FATAL: error 1045: Access denied for user 'sbtest'@'10.0.0.7' (using password: " + password + ")\n"}
		}
		return ok(job)
	})
	run := baseRun(ns, "leaky", 1)
	run.Spec.Targets = []v1.Target{{Name: "ext", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "external-db"}}}
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, ns, "leaky", 60*time.Second, "the target to fail", func(r *v1.BenchmarkRun) bool {
		return len(r.Status.Targets) == 1 && r.Status.Targets[0].Phase == v1.TargetFailed
	})
	msg := got.Status.Targets[0].Message
	if strings.Contains(msg, password) || !strings.Contains(msg, "(using password: [redacted])") || !strings.Contains(msg, "error 1045") {
		t.Errorf("target message %q: want the MySQL error with the password redacted", msg)
	}
	for _, c := range got.Status.Conditions {
		if strings.Contains(c.Message, password) {
			t.Errorf("condition %s carries the password: %q", c.Type, c.Message)
		}
	}
	// Events are recorded asynchronously after the status write.
	deadline := time.Now().Add(10 * time.Second)
	for {
		events := &corev1.EventList{}
		if err := k8s.List(context.Background(), events, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		redacted := false
		for _, e := range events.Items {
			if strings.Contains(e.Message, password) {
				t.Fatalf("Event %s carries the password: %q", e.Reason, e.Message)
			}
			redacted = redacted || strings.Contains(e.Message, "[redacted]")
		}
		if redacted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Event with the redacted failure")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Every Event is redacted, not only the step failures: a step's log the operator cannot read
// (here a mysqlslap report line that quotes the password where a number belongs) is quoted by the
// SeriesUnavailable Warning, which must show the line without the password.
func TestSeriesUnavailableEventIsRedacted(t *testing.T) {
	const password = "Pw-series-9Zk-only-in-the-secret"
	ns := newNamespace(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "external-db", Namespace: ns,
		Labels: map[string]string{v1.LabelAllowBenchmark: "true"}},
		StringData: map[string]string{"host": "db.example", "port": "3306", "user": "sbtest", "password": password}}
	if err := k8s.Create(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	log := "Benchmark\n\tAverage number of seconds to run all queries: 0.944 seconds\n" +
		"\tAverage number of queries per client: " + password + "\n"
	startOperator(t, ns, operatorOptions{log: log})
	slap := mysqlslapCapture(t, "mysql-9.7-stats.term")
	startKubelet(t, ns, func(job *batchv1.Job) outcome {
		if job.Labels[specs.LabelStep] == "probe" {
			return outcome{message: probeMessage}
		}
		return outcome{message: slap}
	})
	run := baseRun(ns, "slapleak", 1)
	run.Spec.Targets = []v1.Target{{Name: "ext", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "external-db"}}}
	run.Spec.Workload = v1.Workload{Client: v1.ClientMysqlslap,
		Mysqlslap: &v1.MysqlslapWorkload{LoadType: "key", Queries: 2000, Image: "mysql:9.7"}}
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ns, "slapleak", 60*time.Second, "the run to finish", finished)
	deadline := time.Now().Add(10 * time.Second)
	for {
		events := &corev1.EventList{}
		if err := k8s.List(context.Background(), events, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		var series []string
		for _, e := range events.Items {
			if strings.Contains(e.Message, password[:8]) {
				t.Fatalf("Event %s carries the password: %q", e.Reason, e.Message)
			}
			if e.Reason == "SeriesUnavailable" {
				series = append(series, e.Message)
			}
		}
		if len(series) > 0 {
			if !strings.Contains(series[0], "Average number of queries per client: [redacted]") {
				t.Errorf("SeriesUnavailable %q, want the line quoted with the password redacted", series[0])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no SeriesUnavailable Event")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
