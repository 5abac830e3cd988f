package controllers

import (
	"os"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	mysqlslapclient "github.com/mysqlbench/mysqlbench-operator/internal/client/mysqlslap"
	sysbenchclient "github.com/mysqlbench/mysqlbench-operator/internal/client/sysbench"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
)

// decide is the step path's whole judgement: each row is what was observed of an attempt and
// what must follow, without an API server.
func TestDecide(t *testing.T) {
	const runFinal = `{"type":"final","version":1,"command":"run","threads":4,"percentile":95,"durationSeconds":10,` +
		`"events":1000,"tps":100,"qps":{"total":1000,"read":1000,"write":0,"other":0},` +
		`"queries":{"total":10000,"read":10000,"write":0,"other":0},"latencyMs":{"min":1,"avg":2,"pct":3,"max":4,"sum":5},` +
		`"errors":0,"reconnects":0}` + "\n"
	const nothingFinal = `{"type":"final","version":1,"command":"run","threads":4,"percentile":95,"durationSeconds":10,` +
		`"events":1000,"tps":100,"qps":{"total":0,"read":0,"write":0,"other":0},` +
		`"queries":{"total":0,"read":0,"write":0,"other":0},"latencyMs":{"min":1,"avg":2,"pct":3,"max":4,"sum":5},` +
		`"errors":0,"reconnects":0}` + "\n"
	const lost = "FATAL: mysql_stmt_execute() returned error 2013 (Lost connection to server during query) for query 'SELECT 1'\n"
	const denied = "FATAL: error 1045: Access denied for user 'sbtest'@'10.0.0.1' (using password: YES)\n"
	slapOK, err := os.ReadFile("../internal/mysqlslap/testdata/mariadb-10.11-ok.term")
	if err != nil {
		t.Fatal(err)
	}
	slapRefused, err := os.ReadFile("../internal/mysqlslap/testdata/mariadb-10.11-refused.term")
	if err != nil {
		t.Fatal(err)
	}

	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "r-t-s01"}}
	pod := &corev1.Pod{}
	run := load.Step{Phase: load.PhaseRun, Threads: 4, Duration: 10 * time.Second}
	sb, slap := sysbenchclient.Client{}, mysqlslapclient.Client{}
	done := func(exit int32, msg string) observed {
		return observed{exists: true, job: job, pod: pod, finished: true, failed: exit != 0,
			why: "BackoffLimitExceeded", sinceFinished: time.Minute, terminated: true, exitCode: exit, message: msg}
	}
	running := observed{exists: true, job: job, pod: pod}
	loadOver := observed{exists: true, job: job, pod: pod, terminated: true, message: runFinal}
	imagePull := observed{exists: true, job: job, pod: pod,
		podState: engine.State{Failed: true, Reason: v1.ReasonImagePull, Message: "image x cannot be pulled"}}
	justLost := done(1, lost)
	justLost.sinceFinished = 3 * time.Second
	refusedNow := done(0, string(slapRefused))
	refusedNow.sinceFinished = 2 * time.Second
	noResultYet := observed{exists: true, job: job, finished: true, sinceFinished: 5 * time.Second}
	gone := observed{exists: true, job: job, finished: true, sinceFinished: time.Hour}
	failedNoPod := observed{exists: true, job: job, finished: true, failed: true, why: "DeadlineExceeded", sinceFinished: time.Hour}

	cases := []struct {
		name     string
		o        observed
		c        loadclient.Client
		hasNext  bool
		failed   int32
		want     actionKind
		after    time.Duration
		failure  string // a part of the failure
		determin bool
	}{
		{name: "no Job yet", o: observed{}, c: sb, want: actCreate},
		{name: "running", o: running, c: sb, want: actWatch},
		{name: "running, next step waits", o: running, c: sb, hasNext: true, want: actWatch},
		{name: "load over, next starts early", o: loadOver, c: sb, hasNext: true, want: actStartNext},
		{name: "load over, no next step", o: loadOver, c: sb, want: actWatch},
		{name: "image not pullable", o: imagePull, c: sb, hasNext: true, want: actAbandon, failure: "sysbench image x cannot be pulled"},
		{name: "finished, result not in the cache yet", o: noResultYet, c: sb, want: actWait, after: 25 * time.Second},
		{name: "finished, pod and result gone", o: gone, c: sb, want: actRetry, failure: "completed but its pod and result are gone"},
		{name: "deadline, no pod", o: failedNoPod, c: sb, want: actRetry, failure: "Job failed: DeadlineExceeded"},
		{name: "measured", o: done(0, runFinal), c: sb, want: actRecord},
		{name: "measured nothing: not retried", o: done(0, nothingFinal), c: sb, want: actFail, failure: "measured nothing", determin: true},
		{name: "connection lost, server status may lag", o: justLost, c: sb, want: actWait, after: 7 * time.Second},
		{name: "connection lost, settled", o: done(1, lost), c: sb, want: actRetry, failure: "error 2013"},
		{name: "access denied, retried", o: done(1, denied), c: sb, failed: 1, want: actRetry, failure: "error 1045"},
		{name: "access denied, retries spent", o: done(1, denied), c: sb, failed: 2, want: actFail, failure: "error 1045"},
		{name: "unreadable result", o: done(0, `{"type":"final","version":2,"command":"run"}`+"\n"), c: sb, want: actRetry,
			failure: "unreadable result"},
		{name: "exit 0 but the Job failed", o: observed{exists: true, job: job, pod: pod, finished: true, failed: true,
			why: "DeadlineExceeded", sinceFinished: time.Minute, terminated: true, message: runFinal}, c: sb,
			want: actRetry, failure: "Job failed: DeadlineExceeded"},
		{name: "mysqlslap measured", o: done(0, string(slapOK)), c: slap, want: actRecord},
		{name: "mysqlslap's report read as sysbench's is no result", o: done(0, string(slapOK)), c: sb, want: actRetry,
			failure: "without a final report"},
		{name: "mysqlslap refused (it exits 0)", o: done(0, string(slapRefused)), c: slap, want: actRetry, failure: "error 2003"},
		{name: "mysqlslap refused just now", o: refusedNow, c: slap, want: actWait, after: 8 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := decide(tc.o, tc.c, run, tc.hasNext, tc.failed, 2)
			if a.kind != tc.want {
				t.Fatalf("kind %d (failure %q), want %d", a.kind, a.failure, tc.want)
			}
			if a.after != tc.after {
				t.Errorf("after %s, want %s", a.after, tc.after)
			}
			if !strings.Contains(a.failure, tc.failure) || (tc.failure == "" && a.failure != "") {
				t.Errorf("failure %q, want it to say %q", a.failure, tc.failure)
			}
			if a.deterministic != tc.determin {
				t.Errorf("deterministic %v, want %v", a.deterministic, tc.determin)
			}
			if a.kind == actRecord && a.output.Final == nil {
				t.Error("a recorded step without its final report")
			}
		})
	}
}
