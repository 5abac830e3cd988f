package gotpc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
	"github.com/mysqlbench/mysqlbench-operator/internal/testmariadb"
)

// TestReal runs Args' command lines with the real go-tpc against a private MariaDB, with the
// connection in the environment and $(VAR) expanded as the kubelet does: prepare 1 warehouse,
// run it for 5 s, check it, and a run before prepare.
func TestReal(t *testing.T) {
	if testing.Short() {
		t.Skip("real go-tpc runs skipped in -short mode")
	}
	gotpc := os.Getenv("GOTPC")
	if gotpc == "" {
		gotpc = filepath.Join("..", "..", "bin", "go-tpc-"+Version)
	}
	if !fileExists(gotpc) {
		msg := fmt.Sprintf("real go-tpc tests need go-tpc (%q): make bin/go-tpc-%s", gotpc, Version)
		if os.Getenv("MYSQLBENCH_REQUIRE_REAL") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	tools := testmariadb.Look(t)
	tools["go-tpc"] = gotpc
	db := testmariadb.Start(t, tools)
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	password := "p#" + hex.EncodeToString(b)
	db.MustSQL(t, "CREATE DATABASE tpcc; CREATE USER tpcc@'%' IDENTIFIED BY '"+password+"'; GRANT ALL ON tpcc.* TO tpcc@'%';")
	env := map[string]string{sysbench.EnvHost: "127.0.0.1", sysbench.EnvPort: strconv.Itoa(db.Port),
		sysbench.EnvUser: "tpcc", EnvPassword: password, sysbench.EnvDatabase: "tpcc"}

	t.Run("run before prepare", func(t *testing.T) {
		out, code := runStep(t, tools["go-tpc"], env, Step{Phase: PhaseRun, Warehouses: 1, Threads: 1, Duration: 2 * time.Second}, time.Minute)
		f, failed := Classify(PhaseRun, out, code)
		if !failed || f.Reason != ReasonTablesMissing || f.Retryable {
			t.Errorf("classified as %+v (failed %v), want %s, not retryable\n%s", f, failed, ReasonTablesMissing, out)
		}
	})

	start := time.Now()
	out, code := runStep(t, tools["go-tpc"], env, Step{Phase: PhasePrepare, Warehouses: 1, Threads: 1}, 5*time.Minute)
	if f, failed := Classify(PhasePrepare, out, code); failed {
		t.Fatalf("prepare failed: %+v\n%s", f, out)
	}
	t.Logf("prepare of 1 warehouse took %s", time.Since(start).Round(100*time.Millisecond))
	if n := db.MustSQL(t, "SELECT COUNT(*) FROM tpcc.warehouse"); n != "1" {
		t.Fatalf("%s warehouses after prepare, want 1", n)
	}

	out, code = runStep(t, tools["go-tpc"], env, Step{Phase: PhaseRun, Warehouses: 1, Threads: 2, Duration: 5 * time.Second, Interval: 2 * time.Second, IgnoreError: true}, time.Minute)
	if f, failed := Classify(PhaseRun, out, code); failed {
		t.Fatalf("run failed: %+v\n%s", f, out)
	}
	r, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	orders, err := strconv.ParseInt(db.MustSQL(t, "SELECT COUNT(*) - 30000 FROM tpcc.orders"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	// Each committed new-order transaction inserts one order over the 3000 × 10 of prepare;
	// go-tpc also counts the 1 % that TPC-C rolls back on purpose (an unused item number).
	if no := r.Summary[NewOrder]; no.Count < 1 || orders > no.Count || float64(orders) < 0.97*float64(no.Count) {
		t.Errorf("NEW_ORDER count %d, but the server has %d new orders (want 97 to 100 %%)", no.Count, orders)
	}
	if r.TpmC <= 0 || r.TpmTotal <= r.TpmC || len(r.Intervals) < 1 {
		t.Errorf("result %+v", r)
	}
	for _, name := range []string{NewOrder, Payment, OrderStatus, Delivery, StockLevel} {
		if s := r.Summary[name]; s.Count < 1 || s.P50Ms > s.P99Ms || s.P99Ms > s.MaxMs || s.Takes < 4.5 {
			t.Errorf("%s summary %+v", name, s)
		}
	}

	// Condition 3.3.2.10 can take minutes on MariaDB, so the check gets 20 s: it either finishes
	// with all conditions holding or is stopped with none failed on its own.
	out, code = runStep(t, tools["go-tpc"], env, Step{Phase: PhaseCheck, Warehouses: 1}, 20*time.Second)
	c, err := ParseCheck(out)
	f, failed := Classify(PhaseCheck, out, code)
	switch {
	case len(c.Conditions) == 0:
		t.Errorf("check printed no condition: %v\n%s", err, out)
	case !failed && err == nil && c.Failure == "":
	case failed && f.Reason == ReasonKilled && (c.Failure == "" || strings.HasSuffix(c.Failure, "context canceled")):
		t.Logf("check stopped after %d conditions", len(c.Conditions))
	default:
		t.Errorf("check: %+v, classified %+v (failed %v), parse error %v\n%s", c, f, failed, err, out)
	}

	// The image's launcher, built from cmd/gotpc-launcher, over the same server: the connection
	// from its environment, the password from a file, the record in the result file.
	launcher := filepath.Join(t.TempDir(), "gotpc-launcher")
	if out, err := exec.Command("go", "build", "-o", launcher, "../../cmd/gotpc-launcher").CombinedOutput(); err != nil {
		t.Fatalf("build the launcher: %v\n%s", err, out)
	}
	secret := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(secret, []byte(password), 0o400); err != nil {
		t.Fatal(err)
	}
	launch := func(t *testing.T, passwordFile string, s Step) (Record, string, int) {
		t.Helper()
		args, err := LauncherArgs(s)
		if err != nil {
			t.Fatal(err)
		}
		result := filepath.Join(t.TempDir(), "termination-log")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, launcher, args...)
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.Env = []string{sysbench.EnvHost + "=127.0.0.1", sysbench.EnvPort + "=" + strconv.Itoa(db.Port),
			sysbench.EnvUser + "=tpcc", sysbench.EnvDatabase + "=tpcc", sysbench.EnvResultFile + "=" + result,
			"MYSQLBENCH_PASSWORD_FILE=" + passwordFile, "MYSQLBENCH_GOTPC=" + tools["go-tpc"]}
		out, _ := cmd.CombinedOutput()
		msg, err := os.ReadFile(result)
		if err != nil {
			t.Fatalf("no result file: %v\n%s", err, out)
		}
		rec, ok, err := FindRecord(string(msg))
		if !ok || err != nil {
			t.Fatalf("result file %q: %v", msg, err)
		}
		if strings.Contains(string(msg), password) {
			t.Error("the record holds the password")
		}
		return rec, string(out), cmd.ProcessState.ExitCode()
	}
	t.Run("launcher run", func(t *testing.T) {
		rec, out, code := launch(t, secret, Step{Phase: PhaseRun, Warehouses: 1, Threads: 2, Duration: 3 * time.Second, IgnoreError: true})
		if code != 0 || rec.Failure != nil || rec.Result == nil || rec.Result.TpmC <= 0 || rec.Threads != 2 || rec.Seconds < 3 ||
			len(rec.Result.Intervals) != 0 || rec.Result.Summary[NewOrder].Takes < 2.5 {
			t.Fatalf("exit %d, record %+v\n%s", code, rec, out)
		}
		// go-tpc's own output is in the log, for people and the series.
		if !strings.Contains(out, "[Summary] NEW_ORDER") {
			t.Errorf("the log lacks go-tpc's summary:\n%s", out)
		}
	})
	t.Run("launcher with a wrong password", func(t *testing.T) {
		wrong := filepath.Join(t.TempDir(), "password")
		if err := os.WriteFile(wrong, []byte("not-"+password), 0o400); err != nil {
			t.Fatal(err)
		}
		rec, out, code := launch(t, wrong, Step{Phase: PhaseRun, Warehouses: 1, Threads: 1, Duration: 2 * time.Second})
		if code == 0 || rec.Failure == nil || rec.Failure.Reason != ReasonConnect || rec.Tail == "" {
			t.Fatalf("exit %d, record %+v\n%s", code, rec, out)
		}
	})
	t.Run("launcher with a password file ending in a newline", func(t *testing.T) {
		nl := filepath.Join(t.TempDir(), "password")
		if err := os.WriteFile(nl, []byte(password+"\n"), 0o400); err != nil {
			t.Fatal(err)
		}
		rec, _, code := launch(t, nl, Step{Phase: PhaseRun, Warehouses: 1, Threads: 1, Duration: 2 * time.Second})
		if code != 2 || rec.Failure == nil || !strings.Contains(rec.Failure.Message, "line break") {
			t.Fatalf("exit %d, record %+v", code, rec)
		}
	})
	t.Run("launcher cleanup drops the tables", func(t *testing.T) {
		// The check stopped above left its query running in the server (a client that goes away
		// does not end it), and its locks would hold the DROP TABLEs.
		db.MustSQL(t, "SELECT GROUP_CONCAT(CONCAT('KILL ', id) SEPARATOR '; ') INTO @k FROM information_schema.processlist "+
			"WHERE user = 'tpcc'; SET @k = COALESCE(@k, 'DO 0'); PREPARE s FROM @k; EXECUTE s")
		rec, out, code := launch(t, secret, Step{Phase: PhaseCleanup, Warehouses: 1})
		if code != 0 || rec.Failure != nil {
			t.Fatalf("exit %d, record %+v\n%s", code, rec, out)
		}
		if n := db.MustSQL(t, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'tpcc'"); n != "0" {
			t.Errorf("%s TPC-C tables left after cleanup", n)
		}
	})
}

var envRef = regexp.MustCompile(`\$\(([A-Z_]+)\)`)

// runStep runs go-tpc with Args(s), $(VAR) expanded from env, stopping it with SIGTERM (as the
// kubelet does) after timeout.
func runStep(t *testing.T, gotpc string, env map[string]string, s Step, timeout time.Duration) (string, int) {
	t.Helper()
	args, err := Args(s)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		args[i] = envRef.ReplaceAllStringFunc(a, func(ref string) string { return env[ref[2:len(ref)-1]] })
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, gotpc, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	case cmd.ProcessState != nil: // stopped at the deadline: Wait reports the context's error
		return string(out), cmd.ProcessState.ExitCode()
	default:
		t.Fatalf("%s %v: %v", gotpc, args[:2], err)
		return "", 0
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
