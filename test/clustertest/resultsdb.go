package clustertest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
)

// The local cluster's results database (test/localcluster/results-db.yaml): its namespace and
// pod, and the Secret in the operator's namespace that names it to the operator.
const (
	ResultsNamespace = "mysqlbench-results"
	ResultsPod       = "results-db-0"
	ResultsSecret    = "results-db"
)

// HasResultsDatabase says whether the operator was installed with the local cluster's results
// database (a cluster set up otherwise, e.g. kind by hand, may have none).
func HasResultsDatabase(t testing.TB, c client.Client) bool {
	t.Helper()
	err := c.Get(context.Background(), client.ObjectKey{Namespace: Env("E2E_OPERATOR_NAMESPACE", "mysqlbench-system"),
		Name: ResultsSecret}, &corev1.Secret{})
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// ResultsSQL runs statements in the results database as the operator's user, with the client and
// password inside its pod (never on a command line here), and returns the rows: tab-separated,
// without column names.
func ResultsSQL(stmts string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, Env("KUBECTL", "kubectl"), "exec", "-n", ResultsNamespace, ResultsPod, "-c", "mariadb",
		"--", "sh", "-c", `MYSQL_PWD="$MARIADB_PASSWORD" exec mariadb -ubench -N -B mysqlbench -e "$0"`, stmts)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("results database: %s: %w: %s", stmts, err, errOut.String())
	}
	return strings.TrimSpace(out.String()), nil
}

// MustResultsSQL is ResultsSQL failing the test on an error.
func MustResultsSQL(t testing.TB, stmts string) string {
	t.Helper()
	out, err := ResultsSQL(stmts)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// WaitStored waits until the run's ResultsStored condition is True and returns the run.
func WaitStored(t testing.TB, c client.Client, run *v1.BenchmarkRun, d time.Duration) *v1.BenchmarkRun {
	t.Helper()
	deadline := time.Now().Add(d)
	got := &v1.BenchmarkRun{}
	for {
		err := c.Get(context.Background(), client.ObjectKeyFromObject(run), got)
		if err == nil && meta.IsStatusConditionTrue(got.Status.Conditions, v1.ConditionResultsStored) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s: its rows not stored within %s; conditions %+v", run.Name, d, got.Status.Conditions)
		}
		time.Sleep(time.Second)
	}
}

// CheckStoredRun compares what the results database holds for a finished run with its status,
// by SQL: one row in runs, its targets with their phases and server versions, every step with its
// throughput, its cells, and server counters for steps that recorded them (wantCounters). It
// returns how many rows the run has in steps and step_counters.
func CheckStoredRun(t testing.TB, run *v1.BenchmarkRun, wantCounters bool) (steps, counters int) {
	t.Helper()
	uid := string(run.UID)
	if got := MustResultsSQL(t, "SELECT COUNT(*), MAX(phase), MAX(namespace), MAX(name) FROM runs WHERE uid = '"+uid+"'"); got !=
		strings.Join([]string{"1", string(run.Status.Phase), run.Namespace, run.Name}, "\t") {
		t.Errorf("runs row of %s: %q", run.Name, got)
	}
	var wantTargets []string
	wantCells := 0
	for _, ts := range run.Status.Targets {
		version := ts.ServerVersion
		if version == "" {
			version = "NULL"
		}
		wantTargets = append(wantTargets, strings.Join([]string{ts.Name, string(ts.Phase), version}, "\t"))
		wantCells += len(cells.Status(ts.Steps))
	}
	if got := MustResultsSQL(t, "SELECT name, phase, server_version FROM targets WHERE run_uid = '"+uid+"' ORDER BY position"); got !=
		strings.Join(wantTargets, "\n") {
		t.Errorf("targets of %s:\n%s\nwant\n%s", run.Name, got, strings.Join(wantTargets, "\n"))
	}
	rows := MustResultsSQL(t, "SELECT target, seq, threads, qps, tps FROM steps WHERE run_uid = '"+uid+"' ORDER BY target, seq")
	stored := map[string][]string{}
	for _, line := range strings.Split(rows, "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		stored[f[0]] = append(stored[f[0]], line)
		steps++
	}
	for _, ts := range run.Status.Targets {
		if len(stored[ts.Name]) != len(ts.Steps) {
			t.Errorf("target %s: %d steps stored, %d in the status", ts.Name, len(stored[ts.Name]), len(ts.Steps))
			continue
		}
		for i, s := range ts.Steps {
			f := strings.Split(stored[ts.Name][i], "\t")
			qps, _ := strconv.ParseFloat(f[3], 64)
			tps, _ := strconv.ParseFloat(f[4], 64)
			if f[2] != strconv.Itoa(int(s.Threads)) || !near(qps, s.QPS.Total) || !near(tps, s.TPS) {
				t.Errorf("target %s step %d: stored %q, status threads %d qps %v tps %v", ts.Name, i, stored[ts.Name][i], s.Threads, s.QPS.Total, s.TPS)
			}
		}
	}
	if got := MustResultsSQL(t, "SELECT COUNT(*) FROM cells WHERE run_uid = '"+uid+"'"); got != strconv.Itoa(wantCells) {
		t.Errorf("cells of %s: %s stored, want %d", run.Name, got, wantCells)
	}
	counters, _ = strconv.Atoi(MustResultsSQL(t, "SELECT COUNT(*) FROM step_counters WHERE run_uid = '"+uid+"'"))
	if wantCounters && counters == 0 {
		t.Errorf("%s: no server counters stored", run.Name)
	}
	return steps, counters
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// ResultsDSN is a DSN for the results database from this machine, as a user outside the cluster
// reaches it: through `kubectl port-forward` to its pod (stopped when the test ends), with the
// operator's account from the Secret that names the database to the operator.
func ResultsDSN(t testing.TB, c client.Client) string {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: Env("E2E_OPERATOR_NAMESPACE", "mysqlbench-system"),
		Name: ResultsSecret}, s); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, Env("KUBECTL", "kubectl"), "port-forward", "-n", ResultsNamespace, "pod/"+ResultsPod, ":3306")
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	// "Forwarding from 127.0.0.1:PORT -> 3306"
	ports := make(chan string, 1)
	go func() {
		buf := make([]byte, 4096)
		var seen string
		for {
			n, err := out.Read(buf)
			seen += string(buf[:n])
			if i := strings.Index(seen, "127.0.0.1:"); i >= 0 {
				if j := strings.Index(seen[i:], " "); j > 0 {
					ports <- seen[i+len("127.0.0.1:") : i+j]
					_, _ = io.Copy(io.Discard, out)
					return
				}
			}
			if err != nil {
				close(ports)
				return
			}
		}
	}()
	select {
	case port, ok := <-ports:
		if !ok {
			t.Fatalf("kubectl port-forward to the results database ended: %s", errOut.String())
		}
		return fmt.Sprintf("%s:%s@tcp(127.0.0.1:%s)/%s", s.Data["user"], s.Data["password"], port, s.Data["database"])
	case <-time.After(30 * time.Second):
		t.Fatalf("kubectl port-forward to the results database said no port in 30 s: %s", errOut.String())
	}
	return ""
}
