package gotpc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestArgs(t *testing.T) {
	conn := "--driver=mysql --host=$(MYSQLBENCH_HOST) --port=$(MYSQLBENCH_PORT) --user=$(MYSQLBENCH_USER) " +
		"--password=$(MYSQLBENCH_PASSWORD) --db=$(MYSQLBENCH_DATABASE)"
	for _, tc := range []struct {
		name string
		step Step
		want string
		err  string
	}{
		{name: "prepare", step: Step{Phase: PhasePrepare, Warehouses: 4, Threads: 2},
			want: "tpcc prepare " + conn + " --warehouses=4 --threads=2 --no-check"},
		{name: "run", step: Step{Phase: PhaseRun, Warehouses: 1, Threads: 8, Duration: 5 * time.Minute, Interval: 10 * time.Second, IgnoreError: true},
			want: "tpcc run " + conn + " --warehouses=1 --threads=8 --time=300s --ignore-error --interval=10s"},
		{name: "check", step: Step{Phase: PhaseCheck, Warehouses: 10000},
			want: "tpcc check " + conn + " --warehouses=10000"},
		{name: "fits storage", step: Step{Phase: PhasePrepare, Warehouses: 7, Threads: 1, StorageBytes: 1 << 30},
			want: "tpcc prepare " + conn + " --warehouses=7 --threads=1 --no-check"},
		{name: "phase", step: Step{Phase: "cleanup", Warehouses: 1, Threads: 1}, err: `go-tpc phase "cleanup": want prepare, run or check`},
		{name: "no warehouses", step: Step{Phase: PhasePrepare, Threads: 1}, err: "go-tpc warehouses 0: want 1 to 10000"},
		{name: "too many warehouses", step: Step{Phase: PhaseCheck, Warehouses: 10001}, err: "go-tpc warehouses 10001: want 1 to 10000"},
		{name: "no threads", step: Step{Phase: PhaseRun, Warehouses: 1, Duration: time.Minute}, err: "go-tpc threads 0: want at least 1"},
		{name: "short run", step: Step{Phase: PhaseRun, Warehouses: 1, Threads: 1, Duration: 500 * time.Millisecond}, err: "go-tpc run duration 500ms: want at least 1s"},
		{name: "fractional run", step: Step{Phase: PhaseRun, Warehouses: 1, Threads: 1, Duration: 1500 * time.Millisecond}, err: "want whole seconds"},
		{name: "bad interval", step: Step{Phase: PhaseRun, Warehouses: 1, Threads: 1, Duration: time.Second, Interval: -time.Second}, err: "go-tpc interval -1s"},
		{name: "too big for storage", step: Step{Phase: PhasePrepare, Warehouses: 8, Threads: 1, StorageBytes: 1 << 30},
			err: "go-tpc warehouses 8 need about 1088 MiB (128 MiB each) but the server's storage is 1024 MiB: lower the warehouses to 7 or raise spec.storage.size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, err := Args(tc.step)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(args, " "); got != tc.want {
				t.Errorf("args\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// fixture is the output and exit code of a real go-tpc v1.0.7 against MariaDB 10.11 (see capture.sh).
func fixture(t *testing.T, name string) (string, int) {
	t.Helper()
	out, err := os.ReadFile(filepath.Join("testdata", "mariadb-10.11-"+name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	code, err := os.ReadFile(filepath.Join("testdata", "mariadb-10.11-"+name+".exit"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := strconv.Atoi(strings.TrimSpace(string(code)))
	if err != nil {
		t.Fatal(err)
	}
	return string(out), c
}

func TestParseRunFixture(t *testing.T) {
	out, code := fixture(t, "run")
	if f, failed := Classify(PhaseRun, out, code); failed {
		t.Fatalf("a successful run classified as %+v", f)
	}
	r, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.TpmC != 22316.6 || r.Efficiency != 173535.1 {
		t.Errorf("tpmC %v efficiency %v, want 22316.6 and 173535.1", r.TpmC, r.Efficiency)
	}
	no := r.Summary[NewOrder]
	want := Stats{Takes: 6, Count: 2227, TPM: 22316.9, SumMs: 6684.9, AvgMs: 3, P50Ms: 2.6, P90Ms: 4.7, P95Ms: 6.3, P99Ms: 9.4, P999Ms: 41.9, MaxMs: 46.1}
	if no != want {
		t.Errorf("NEW_ORDER %+v, want %+v", no, want)
	}
	for _, name := range []string{NewOrder, Payment, OrderStatus, Delivery, StockLevel, NewOrder + ErrSuffix, Payment + ErrSuffix} {
		if r.Summary[name].Count == 0 {
			t.Errorf("no summary for %s", name)
		}
	}
	if len(r.Summary) != 7 {
		t.Errorf("%d summary types, want 7: %v", len(r.Summary), r.Summary)
	}
	if r.Errors() != 2 {
		t.Errorf("errors %d, want 2", r.Errors())
	}
	// 1755.3 + 22316.9 + 1844.2 + 21377.6 + 1926.0, the *_ERR lines left out.
	if d := r.TpmTotal - 49220.0; d > 0.01 || d < -0.01 {
		t.Errorf("tpmTotal %v, want 49220.0", r.TpmTotal)
	}
	// --time=6s --interval=2s: reports at 2 s and 4 s (the one at 6 s races with the end).
	if len(r.Intervals) < 2 || len(r.Intervals) > 3 {
		t.Fatalf("%d intervals, want 2 or 3", len(r.Intervals))
	}
	for i, iv := range r.Intervals {
		if iv.Types[NewOrder].Count == 0 || iv.Types[Payment].Count == 0 {
			t.Errorf("interval %d has no new-order or payment: %+v", i, iv.Types)
		}
	}
	last := r.Intervals[len(r.Intervals)-1].Types[NewOrder]
	if last.Count != 719 || last.TPM != 21578.7 || last.Takes != 2 {
		t.Errorf("last interval NEW_ORDER %+v, want Count 719, TPM 21578.7", last)
	}
}

func TestClassifyFixtures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		phase     Phase
		reason    string
		retryable bool
		message   string
	}{
		{"prepare", PhasePrepare, "", false, ""},
		{"run", PhaseRun, "", false, ""},
		{"run-missing-tables", PhaseRun, ReasonTablesMissing, false, "Table 'tpcc.customer' doesn't exist (run go-tpc tpcc prepare"},
		{"wrong-password", PhaseRun, ReasonConnect, true, "user, password or database"},
		{"refused", PhaseRun, ReasonConnect, true, "not up on that host and port"},
		{"unknown-database", PhaseRun, ReasonConnect, true, "database"},
		{"check", PhaseCheck, ReasonKilled, true, "stopped by a signal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := fixture(t, tc.name)
			f, failed := Classify(tc.phase, out, code)
			if tc.reason == "" {
				if failed {
					t.Fatalf("classified as %+v, want success", f)
				}
				return
			}
			if !failed || f.Reason != tc.reason || f.Retryable != tc.retryable || !strings.Contains(f.Message, tc.message) {
				t.Errorf("classified as %+v (failed %v), want %s retryable %v with %q", f, failed, tc.reason, tc.retryable, tc.message)
			}
			if tc.phase == PhaseRun {
				if _, err := Parse(out); err == nil {
					t.Errorf("Parse of a failed run succeeded")
				}
			}
		})
	}
}

func TestClassifySynthetic(t *testing.T) {
	for _, tc := range []struct {
		name   string
		out    string
		code   int
		reason string
	}{
		{"oom killed", "[Current] NEW_ORDER - Takes(s): 1.0", 137, ReasonKilled},
		{"lost", "[2026-11-25 01:00:00] execute run failed, err invalid connection\n", 0, ReasonConnectionLost},
		{"denied mid-run", "panic: Error 1044: Access denied for user 'u'@'%' to database 'tpcc'\n", 2, ReasonAccessDenied},
		{"nothing", "Finished\n", 0, ReasonNothing},
		{"other", "Error: unknown flag: --bogus\n", 1, ReasonFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, failed := Classify(PhaseRun, tc.out, tc.code)
			if !failed || f.Reason != tc.reason {
				t.Errorf("classified as %+v (failed %v), want %s", f, failed, tc.reason)
			}
		})
	}
}

func TestParseCheckFixture(t *testing.T) {
	out, _ := fixture(t, "check")
	r, err := ParseCheck(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Conditions) < 2 || r.Conditions[0] != "warehouse 1 3.3.2.1" && !strings.HasPrefix(r.Conditions[0], "warehouse 1 ") {
		t.Errorf("conditions %v", r.Conditions)
	}
	if !strings.Contains(r.Failure, "condition 3.3.2.10 failed") || !strings.HasSuffix(r.Failure, "WHERE c1<>sm-smh failed context canceled") {
		t.Errorf("failure %q, want condition 3.3.2.10's", r.Failure)
	}
	out, code := fixture(t, "check-full")
	if f, failed := Classify(PhaseCheck, out, code); failed {
		t.Errorf("a passed check classified as %+v", f)
	}
	if r, err := ParseCheck(out); err != nil || r.Failure != "" || len(r.Conditions) != 11 {
		t.Errorf("full check: %+v, %v; want 11 conditions and no failure", r, err)
	}
	if _, err := ParseCheck("Finished\n"); err == nil {
		t.Error("ParseCheck of an output without conditions succeeded")
	}
	if _, err := ParseCheck("begin to check warehouse 1 at condition 3.3.2.1\n"); err == nil {
		t.Error("ParseCheck of an unfinished check succeeded")
	}
}

// A run that ended at its deadline with its summary is a success even when the driver logged a
// lost connection for a transaction the deadline cancelled (real go-tpc on MariaDB 10.11 does in
// about 1 run of 5).
func TestClassifyCancelledAtTheDeadline(t *testing.T) {
	out, code := fixture(t, "run")
	i := strings.Index(out, "Finished")
	if i < 0 {
		t.Fatal("the run fixture has no Finished line")
	}
	out = out[:i] + "[mysql] 2026/11/25 04:09:30 statement.go:96: invalid connection\n" + out[i:]
	if f, failed := Classify(PhaseRun, out, code); failed {
		t.Errorf("classified as %+v, want success", f)
	}
	// The same line with no summary after it is a lost connection.
	if f, failed := Classify(PhaseRun, out[:i+80], code); !failed || f.Reason != ReasonConnectionLost {
		t.Errorf("without a summary: %+v (failed %v), want %s", f, failed, ReasonConnectionLost)
	}
}
