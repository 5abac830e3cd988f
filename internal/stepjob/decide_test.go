package stepjob

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

// Decide is the step path's whole judgement: each row is what was Observed of an attempt and
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
	slapOK, err := os.ReadFile("../mysqlslap/testdata/mariadb-10.11-ok.term")
	if err != nil {
		t.Fatal(err)
	}
	slapRefused, err := os.ReadFile("../mysqlslap/testdata/mariadb-10.11-refused.term")
	if err != nil {
		t.Fatal(err)
	}

	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "r-t-s01"}}
	pod := &corev1.Pod{}
	run := load.Step{Phase: load.PhaseRun, Threads: 4, Duration: 10 * time.Second}
	sb, slap := sysbenchclient.Client{}, mysqlslapclient.Client{}
	done := func(exit int32, msg string) Observed {
		return Observed{Exists: true, Job: job, Pod: pod, Finished: true, Failed: exit != 0,
			Why: "BackoffLimitExceeded", SinceFinished: time.Minute, Terminated: true, ExitCode: exit, Message: msg}
	}
	running := Observed{Exists: true, Job: job, Pod: pod}
	loadOver := Observed{Exists: true, Job: job, Pod: pod, Terminated: true, Message: runFinal}
	imagePull := Observed{Exists: true, Job: job, Pod: pod,
		PodState: engine.State{Failed: true, Reason: v1.ReasonImagePull, Message: "image x cannot be pulled"}}
	justLost := done(1, lost)
	justLost.SinceFinished = 3 * time.Second
	refusedNow := done(0, string(slapRefused))
	refusedNow.SinceFinished = 2 * time.Second
	noResultYet := Observed{Exists: true, Job: job, Finished: true, SinceFinished: 5 * time.Second}
	gone := Observed{Exists: true, Job: job, Finished: true, SinceFinished: time.Hour}
	failedNoPod := Observed{Exists: true, Job: job, Finished: true, Failed: true, Why: "DeadlineExceeded", SinceFinished: time.Hour}
	runningFor := func(d time.Duration) Observed {
		return Observed{Exists: true, Job: job, Pod: pod, Running: true, RunningFor: d}
	}
	exitedFailed := Observed{Exists: true, Job: job, Pod: pod, Terminated: true, ExitCode: 1, Message: denied}

	cases := []struct {
		name         string
		o            Observed
		c            loadclient.Client
		hasNext      bool
		locked       bool // the step holds a server lock, and so does the next one unless nextUnlocked
		nextUnlocked bool
		failed       int32
		want         Kind
		after        time.Duration
		failure      string // a part of the failure
		determin     bool
		cancel       bool // a next step started early must go
	}{
		{name: "no Job yet", o: Observed{}, c: sb, want: Create},
		{name: "running", o: running, c: sb, want: Watch},
		{name: "running, next step waits", o: running, c: sb, hasNext: true, want: Watch},
		{name: "load over, next starts early", o: loadOver, c: sb, hasNext: true, want: StartNext},
		{name: "load over, no next step", o: loadOver, c: sb, want: Watch},
		{name: "image not pullable", o: imagePull, c: sb, hasNext: true, want: Abandon, failure: "sysbench image x cannot be pulled"},
		{name: "finished, result not in the cache yet", o: noResultYet, c: sb, want: Wait, after: 25 * time.Second},
		{name: "finished, pod and result gone", o: gone, c: sb, want: Retry, failure: "completed but its pod and result are gone", cancel: true},
		{name: "deadline, no pod", o: failedNoPod, c: sb, want: Retry, failure: "Job failed: DeadlineExceeded", cancel: true},
		{name: "measured", o: done(0, runFinal), c: sb, want: Record},
		{name: "measured nothing: not retried", o: done(0, nothingFinal), c: sb, want: Fail, failure: "measured nothing", determin: true, cancel: true},
		{name: "connection lost, server status may lag", o: justLost, c: sb, want: Wait, after: 7 * time.Second, cancel: true},
		{name: "connection lost, settled", o: done(1, lost), c: sb, want: Retry, failure: "error 2013", cancel: true},
		{name: "access denied, retried", o: done(1, denied), c: sb, failed: 1, want: Retry, failure: "error 1045", cancel: true},
		{name: "access denied, retries spent", o: done(1, denied), c: sb, failed: 2, want: Fail, failure: "error 1045", cancel: true},
		{name: "unreadable result", o: done(0, `{"type":"final","version":2,"command":"run"}`+"\n"), c: sb, want: Retry,
			failure: "unreadable result", cancel: true},
		{name: "exit 0 but the Job failed", o: Observed{Exists: true, Job: job, Pod: pod, Finished: true, Failed: true,
			Why: "DeadlineExceeded", SinceFinished: time.Minute, Terminated: true, Message: runFinal}, c: sb,
			want: Retry, failure: "Job failed: DeadlineExceeded"},
		{name: "mysqlslap measured", o: done(0, string(slapOK)), c: slap, want: Record},
		{name: "mysqlslap's report read as sysbench's is no result", o: done(0, string(slapOK)), c: sb, want: Retry,
			failure: "without a final report", cancel: true},
		{name: "mysqlslap refused (it exits 0)", o: done(0, string(slapRefused)), c: slap, want: Retry, failure: "error 2003", cancel: true},
		{name: "mysqlslap refused just now", o: refusedNow, c: slap, want: Wait, after: 8 * time.Second, cancel: true},
		// With a server lock the next step's Job starts while this one measures, once this
		// one's client has run long enough to hold the lock.
		{name: "locked, just started: next looked at again then", o: runningFor(500 * time.Millisecond), c: sb, hasNext: true,
			locked: true, want: Watch, after: 2500 * time.Millisecond},
		{name: "locked, holds the lock: next starts early", o: runningFor(3 * time.Second), c: sb, hasNext: true, locked: true, want: StartNext},
		{name: "locked, long running: next starts early", o: runningFor(time.Minute), c: sb, hasNext: true, locked: true, want: StartNext},
		{name: "locked, no next step", o: runningFor(time.Minute), c: sb, locked: true, want: Watch},
		{name: "locked, pod not running yet", o: running, c: sb, hasNext: true, locked: true, want: Watch},
		{name: "no lock: next waits for the load to end", o: runningFor(time.Minute), c: sb, hasNext: true, want: Watch},
		{name: "a client that takes no lock", o: runningFor(time.Minute), c: slap, hasNext: true, locked: true, want: Watch},
		{name: "a next step that waits for no lock (another client's)", o: runningFor(time.Minute), c: sb, hasNext: true, locked: true,
			nextUnlocked: true, want: Watch},
		{name: "a next step without the lock starts after the load", o: loadOver, c: sb, hasNext: true, locked: true,
			nextUnlocked: true, want: StartNext},
		{name: "locked, load over: next starts", o: loadOver, c: sb, hasNext: true, locked: true, want: StartNext},
		{name: "client failed, Job not reported yet", o: exitedFailed, c: sb, hasNext: true, locked: true, want: Watch, cancel: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			step := run
			if tc.locked {
				step.ServerLock, step.ServerLockWait = "mysqlbench:0123", time.Minute
			}
			var next *load.Step
			if tc.hasNext {
				n := step
				if tc.nextUnlocked {
					n.ServerLock = ""
				}
				next = &n
			}
			a := Decide(tc.o, tc.c, step, next, tc.failed, 2)
			if a.Kind != tc.want {
				t.Fatalf("kind %d (failure %q), want %d", a.Kind, a.Failure, tc.want)
			}
			if a.After != tc.after {
				t.Errorf("after %s, want %s", a.After, tc.after)
			}
			if !strings.Contains(a.Failure, tc.failure) || (tc.failure == "" && a.Failure != "") {
				t.Errorf("failure %q, want it to say %q", a.Failure, tc.failure)
			}
			if a.CancelNext != tc.cancel {
				t.Errorf("cancel next %v, want %v", a.CancelNext, tc.cancel)
			}
			if a.Deterministic != tc.determin {
				t.Errorf("deterministic %v, want %v", a.Deterministic, tc.determin)
			}
			if a.Kind == Record && a.Output.Final == nil {
				t.Error("a recorded step without its final report")
			}
		})
	}
}
