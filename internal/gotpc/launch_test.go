package gotpc

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// LauncherArgs and ParseLauncherArgs agree on every step the client builds, and the launcher's
// arguments never carry the connection.
func TestLauncherArgsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Step
		want []string
	}{
		{"prepare", Step{Phase: PhasePrepare, Warehouses: 10, Threads: 10},
			[]string{"--phase=prepare", "--warehouses=10", "--threads=10"}},
		{"warm-up", Step{Phase: PhaseWarmup, Warehouses: 2, Threads: 8, Duration: 30 * time.Second, IgnoreError: true},
			[]string{"--phase=warmup", "--warehouses=2", "--threads=8", "--duration=30s", "--ignore-error"}},
		{"run", Step{Phase: PhaseRun, Warehouses: 2, Threads: 64, Duration: 5 * time.Minute, Interval: 5 * time.Second, IgnoreError: true},
			[]string{"--phase=run", "--warehouses=2", "--threads=64", "--duration=5m0s", "--interval=5s", "--ignore-error"}},
		{"check on a kept server", Step{Phase: PhaseCheck, Warehouses: 3, CleanupAfterCheck: true, IgnoreError: true},
			[]string{"--phase=check", "--warehouses=3", "--cleanup-after-check"}},
		{"cleanup", Step{Phase: PhaseCleanup, Warehouses: 3},
			[]string{"--phase=cleanup", "--warehouses=3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, err := LauncherArgs(tc.s)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(args, tc.want) {
				t.Errorf("args %q, want %q", args, tc.want)
			}
			got, err := ParseLauncherArgs(args)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.s
			if want.Phase == PhaseCheck || want.Phase == PhaseCleanup || want.Phase == PhasePrepare {
				want.IgnoreError = false // only runs take it
			}
			if got != want {
				t.Errorf("parsed %+v, want %+v", got, want)
			}
		})
	}
}

func TestLauncherArgsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"no phase", []string{"--warehouses=1"}, `go-tpc phase ""`},
		{"unknown phase", []string{"--phase=drop", "--warehouses=1"}, `go-tpc phase "drop"`},
		{"a run without threads", []string{"--phase=run", "--warehouses=1", "--duration=10s"}, "threads 0"},
		{"a run of half seconds", []string{"--phase=run", "--warehouses=1", "--threads=1", "--duration=1500ms"}, "whole seconds"},
		{"a warm-up without a duration", []string{"--phase=warmup", "--warehouses=1", "--threads=1"}, "duration 0s"},
		{"too many warehouses", []string{"--phase=prepare", "--warehouses=20000", "--threads=1"}, "out of range"},
		{"an unknown flag", []string{"--phase=run", "--password=x"}, "flag provided but not defined"},
		{"a stray argument", []string{"--phase=cleanup", "--warehouses=1", "tpcc"}, `unexpected argument "tpcc"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseLauncherArgs(tc.args); err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %v, want one that says %q", err, tc.says)
			}
		})
	}
}

func TestReadConnection(t *testing.T) {
	dir := t.TempDir()
	file := func(content string) string {
		p := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+"-"+string(rune('a'+len(content)%26)))
		if err := os.WriteFile(p, []byte(content), 0o400); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := map[string]string{sysbench.EnvHost: "db.ns.svc", sysbench.EnvPort: "3306", sysbench.EnvUser: "sbtest"}
	getenv := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := ReadConnection(getenv(env), file("s3cr#t pw"))
	if err != nil || c != (Connection{Host: "db.ns.svc", Port: "3306", User: "sbtest", Database: sysbench.DefaultDatabase, Password: "s3cr#t pw"}) {
		t.Fatalf("connection %+v, %v", c, err)
	}
	for _, tc := range []struct {
		name     string
		env      map[string]string
		password string
		says     string
	}{
		{"no host", map[string]string{sysbench.EnvPort: "3306", sysbench.EnvUser: "u"}, "pw", sysbench.EnvHost + " is empty"},
		{"a port that is not one", map[string]string{sysbench.EnvHost: "h", sysbench.EnvPort: "mysql", sysbench.EnvUser: "u"}, "pw", "not a port number"},
		{"an empty password", env, "", "is empty"},
		{"a trailing newline", env, "pw\n", "line break"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadConnection(getenv(tc.env), file(tc.password))
			if err == nil || !strings.Contains(err.Error(), tc.says) || (tc.password != "" && strings.Contains(err.Error(), tc.password)) {
				t.Errorf("error %v, want one that says %q and not the password", err, tc.says)
			}
		})
	}
	if _, err := ReadConnection(getenv(env), filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "cannot read the password file") {
		t.Errorf("missing file: %v", err)
	}
}

// go-tpc's argv: the connection's values, the password as one argument whatever it holds, no
// $(VAR) left for anything to expand.
func TestCommandArgs(t *testing.T) {
	c := Connection{Host: "h", Port: "3307", User: "u", Database: "tpcc", Password: "p $(X) 'q' \"r\""}
	args, err := commandArgs(Step{Phase: PhaseWarmup, Warehouses: 2, Threads: 4, Duration: 10 * time.Second, IgnoreError: true}, PhaseRun, c)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"tpcc", "run", "--driver=mysql", "--host=h", "--port=3307", "--user=u", "--password=" + c.Password,
		"--db=tpcc", "--warehouses=2", "--threads=4", "--time=10s", "--ignore-error"}
	if !slices.Equal(args, want) {
		t.Errorf("args %q, want %q", args, want)
	}
	args, err = commandArgs(Step{Phase: PhaseCheck, Warehouses: 2, CleanupAfterCheck: true}, PhaseCleanup, c)
	if err != nil || !slices.Equal(args[:2], []string{"tpcc", "cleanup"}) || !slices.Contains(args, "--warehouses=2") {
		t.Errorf("cleanup args %q, %v", args, err)
	}
}

// A long output keeps its head and its tail, cut at whole lines.
func TestBoundedBuffer(t *testing.T) {
	b := &boundedBuffer{limit: 64}
	_, _ = b.Write([]byte("panic: first\n"))
	for range 20 {
		_, _ = b.Write([]byte("[Current] NEW_ORDER\n"))
	}
	_, _ = b.Write([]byte("tpmC: 1.0, efficiency: 2.0%\n"))
	got := b.String()
	if !strings.HasPrefix(got, "panic: first\n") || !strings.HasSuffix(got, "tpmC: 1.0, efficiency: 2.0%\n") || len(got) > 64+1 {
		t.Errorf("kept %q", got)
	}
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		if line != "panic: first" && line != "[Current] NEW_ORDER" && !strings.HasPrefix(line, "tpmC") && line != "[Current] NEW_ORD" {
			t.Errorf("a cut line %q in %q", line, got)
		}
	}
}
