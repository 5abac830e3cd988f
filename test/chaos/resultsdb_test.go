//go:build chaos

package chaos

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/test/clustertest"
)

// TestResultsDatabaseKilledMidWrite kills the results database's server while the operator's
// write of a finished run is half done: a transaction of the test holds every row of steps, so
// the write stops after inserting the run and its targets; the server is killed (SIGKILL, as a
// crash or the OOM killer would) and restarted by its kubelet. The run Succeeds regardless, and
// once the database is back its rows arrive exactly once.
func TestResultsDatabaseKilledMidWrite(t *testing.T) {
	c := newClient(t)
	if !clustertest.HasResultsDatabase(t, c) {
		t.Skip("the operator has no results database (hack/local-operator.sh sets up the local cluster's)")
	}
	ns := namespace(t, c, "chaos-resultsdb")
	// The manager creates the tables when it starts; earlier runs of this test left rows of
	// their own runs of this name.
	waitSQL(t, "the results database's tables", func() bool {
		out, err := clustertest.ResultsSQL("SHOW TABLES LIKE 'steps'")
		return err == nil && out == "steps"
	})
	countRuns := func() string {
		return clustertest.MustResultsSQL(t, "SELECT COUNT(*) FROM runs WHERE namespace = '"+ns+"'")
	}
	before, _ := strconv.Atoi(countRuns())
	run := chaosRun(ns, "resultsdb")
	run.Spec.Ladder.Threads = []int32{1, 2}
	t0 := start(t, c, run)
	waitUntil(t, c, run, runBound, "the last step to run", inStep(c, 1))

	blocker := exec.Command(env("KUBECTL", "kubectl"), "exec", "-i", "-n", clustertest.ResultsNamespace, clustertest.ResultsPod,
		"-c", "mariadb", "--", "sh", "-c", `MYSQL_PWD="$MARIADB_PASSWORD" exec mariadb -ubench mysqlbench`)
	blocker.Stdin = strings.NewReader("BEGIN;\nSELECT COUNT(*) FROM steps FOR UPDATE;\nSELECT SLEEP(900);\n")
	var blockerOut bytes.Buffer
	blocker.Stdout, blocker.Stderr = &blockerOut, &blockerOut
	if err := blocker.Start(); err != nil {
		t.Fatal(err)
	}
	blockerDone := make(chan error, 1)
	go func() { blockerDone <- blocker.Wait() }()
	defer func() {
		_ = blocker.Process.Kill()
		err := <-blockerDone // killed, or ended with its server
		_ = err
	}()
	processes := func(like string) int {
		out, err := clustertest.ResultsSQL("SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE '" + like + "'")
		if err != nil {
			return 0
		}
		n, _ := strconv.Atoi(out)
		return n
	}
	waitSQL(t, "the blocker to hold steps", func() bool {
		select {
		case err := <-blockerDone:
			t.Fatalf("the blocker ended: %v: %s", err, blockerOut.String())
		default:
		}
		return processes("SELECT SLEEP(900)") == 1
	})

	done := waitUntil(t, c, run, runBound, "the run to finish", finished)
	uid := string(done.UID)
	waitSQL(t, "the operator's write to wait at steps", func() bool { return processes("INSERT INTO steps %"+uid+"%") == 1 })
	if got := clustertest.MustResultsSQL(t, "SELECT COUNT(*) FROM runs WHERE uid = '"+uid+"'"); got != "0" {
		t.Fatalf("the run is visible before its write committed: %s rows", got)
	}
	pid := resultsServerPID(t)
	killedAt := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the results database's server (pid %d): %v", pid, err)
	}
	t.Logf("killed mariadbd (pid %d) with the run's write in flight; blocker: %s", pid, strings.TrimSpace(blockerOut.String()))

	stored := clustertest.WaitStored(t, c, run, 5*time.Minute)
	storedAfter := time.Since(killedAt)
	if stored.Status.Phase != v1.RunSucceeded {
		t.Errorf("run %s, want Succeeded whatever became of its rows", stored.Status.Phase)
	}
	steps, _ := clustertest.CheckStoredRun(t, stored, false)
	if n := countRuns(); n != strconv.Itoa(before+1) {
		t.Errorf("%s runs of namespace %s stored, %d before the run: want exactly one more", n, ns, before)
	}
	cond := meta.FindStatusCondition(stored.Status.Conditions, v1.ConditionResultsStored)
	record(row{name: "results database killed mid-write", outcome: string(stored.Status.Phase) + ", rows once",
		clear: storedAfter, total: time.Since(t0),
		note: strconv.Itoa(steps) + " steps stored after the restart: " + cond.Message})
}

// waitSQL polls cond for up to two minutes.
func waitSQL(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 2m", what)
		}
	}
}

// resultsServerPID finds the results database's mariadbd among the host's processes (the local
// cluster's containers are processes of this host) by the option only it is started with.
func resultsServerPID(t *testing.T) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []int
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(string(data), "\x00")
		if len(args) == 0 || filepath.Base(args[0]) != "mariadbd" {
			continue
		}
		for _, a := range args {
			if a == "--log-basename=mysqlbench-results-db" {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
				found = append(found, pid)
			}
		}
	}
	if len(found) != 1 {
		t.Fatalf("results database server processes %v, want one (run as root on the local cluster's host)", found)
	}
	return found[0]
}
