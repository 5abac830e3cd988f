package sysbench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// This file runs the real thing for the real tests and the benchmark: a private MariaDB on
// loopback and sysbench executing exactly what Build returns.

// lookTools finds the binaries the real tests need. When one is missing the test is skipped,
// unless MYSQLBENCH_REQUIRE_REAL=1 (CI) makes that a failure.
func lookTools(tb testing.TB) map[string]string {
	tb.Helper()
	tools := map[string]string{}
	for role, names := range map[string][]string{
		"server":   {"mariadbd", "mysqld"},
		"install":  {"mariadb-install-db", "mysql_install_db"},
		"client":   {"mariadb", "mysql"},
		"sysbench": {"sysbench"},
		"sh":       {"sh"},
	} {
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				tools[role] = p
				break
			}
			// mariadbd lives in /usr/sbin, which is not always on a test's PATH.
			if p := filepath.Join("/usr/sbin", n); isExecutable(p) {
				tools[role] = p
				break
			}
		}
		if tools[role] == "" {
			msg := fmt.Sprintf("real tests need %s (one of %v): apt-get install sysbench mariadb-server-core mariadb-client-core, or make test as root", role, names)
			if os.Getenv("MYSQLBENCH_REQUIRE_REAL") == "1" {
				tb.Fatal(msg)
			}
			tb.Skip(msg)
		}
	}
	return tools
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

type mariaDB struct {
	tools  map[string]string
	port   int
	socket string
}

// startMariaDB starts a private server on 127.0.0.1 with its own datadir, socket and a free port,
// and stops it when the test ends.
func startMariaDB(tb testing.TB, tools map[string]string) *mariaDB {
	tb.Helper()
	dir, err := os.MkdirTemp("", "mysqlbench-mariadb-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = os.RemoveAll(dir) })
	datadir := filepath.Join(dir, "data")
	install := exec.Command(tools["install"], "--no-defaults", "--user=root", "--datadir="+datadir,
		"--auth-root-authentication-method=socket", "--skip-test-db")
	if out, err := install.CombinedOutput(); err != nil {
		tb.Fatalf("%s: %v\n%s", tools["install"], err, out)
	}
	port := freePort(tb)
	db := &mariaDB{tools: tools, port: port, socket: filepath.Join(dir, "mysqld.sock")}
	errLog := filepath.Join(dir, "error.log")
	server := exec.Command(tools["server"], "--no-defaults", "--user=root", "--datadir="+datadir,
		"--bind-address=127.0.0.1", "--port="+strconv.Itoa(port), "--socket="+db.socket,
		"--pid-file="+filepath.Join(dir, "mysqld.pid"), "--log-error="+errLog, "--skip-log-bin",
		"--innodb-buffer-pool-size=128M", "--innodb-flush-log-at-trx-commit=0", "--skip-name-resolve")
	if err := server.Start(); err != nil {
		tb.Fatalf("start %s: %v", tools["server"], err)
	}
	exited := make(chan error, 1)
	go func() { exited <- server.Wait() }()
	tb.Cleanup(func() {
		_ = server.Process.Signal(syscall.SIGTERM)
		// The server's exit status after SIGTERM/SIGKILL says nothing about the test.
		select {
		case err := <-exited:
			_ = err
		case <-time.After(30 * time.Second):
			_ = server.Process.Kill()
			err := <-exited
			_ = err
		}
	})

	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := db.sql("SELECT 1"); err == nil {
			break
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(errLog)
			tb.Fatalf("mariadbd exited during start-up: %v\n%s", err, log)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(errLog)
			tb.Fatalf("mariadbd did not accept connections within 60s\n%s", log)
		}
	}
	return db
}

func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// sql runs statements as root over the server's socket.
func (db *mariaDB) sql(stmts string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, db.tools["client"], "--no-defaults", "--socket="+db.socket,
		"--user=root", "--batch", "--skip-column-names", "-e", stmts).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s: %w: %s", stmts, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

func (db *mariaDB) mustSQL(tb testing.TB, stmts string) string {
	tb.Helper()
	out, err := db.sql(stmts)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// secret returns the connection Secret's data for user sbtest with password, without a
// database key.
func (db *mariaDB) secret(password string) map[string]string {
	return map[string]string{
		SecretKeyHost: "127.0.0.1", SecretKeyPort: strconv.Itoa(db.port),
		SecretKeyUser: "sbtest", SecretKeyPassword: password,
	}
}

func randomPassword(tb testing.TB) string {
	tb.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	return "pw-" + hex.EncodeToString(b)
}

// container stands in for the sysbench container: a directory playing the mounts.
type container struct {
	root string
}

// newContainer writes the reporter, as the operator's ConfigMap would hold it, and the custom
// scripts (key -> source) where the mounts would put them.
func newContainer(tb testing.TB, customScripts map[string]string) *container {
	tb.Helper()
	root := tb.TempDir()
	c := &container{root: root}
	if err := os.MkdirAll(c.path(CustomScriptMountPath), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(c.path(ReporterPath), []byte(ReporterScript()), 0o644); err != nil {
		tb.Fatal(err)
	}
	for key, src := range customScripts {
		if err := os.WriteFile(c.path(CustomScriptMountPath+"/"+key), []byte(src), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return c
}

// path maps a path inside the container to the test's directory. Only the mount paths are
// relocated; everything else (/usr/share/sysbench, /bin/sh) is the real one.
func (c *container) path(p string) string {
	switch {
	case p == TerminationMessagePath:
		return filepath.Join(c.root, "termination-log")
	case p == ReporterMountPath || strings.HasPrefix(p, ReporterMountPath+"/"):
		return filepath.Join(c.root, "mounts", p)
	}
	return p
}

// relocate rewrites the container paths in an Invocation to the test's directory.
func (c *container) relocate(inv Invocation) Invocation {
	out := Invocation{Command: inv.Command}
	for _, a := range inv.Args {
		out.Args = append(out.Args, c.path(a))
	}
	for _, e := range inv.Env {
		if e.ValueFrom == nil {
			e.Value = c.path(e.Value)
		}
		out.Env = append(out.Env, e)
	}
	return out
}

// result is what the kubelet would know after the container finished.
type result struct {
	log         []byte // stdout and stderr, as in the Pod log
	exitCode    int32
	termination string // the termination message file, "" when not written
	argv        []string
}

// run executes inv the way the kubelet would: env resolved from the Secret's data, $(VAR)
// expanded in command and args, the mounts in place, a fresh termination message file.
func (c *container) run(tb testing.TB, inv Invocation, secret map[string]string) result {
	tb.Helper()
	_ = os.Remove(c.path(TerminationMessagePath))
	argv, env, err := containerProcess(c.relocate(inv), secret)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = c.root
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + c.root}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	err = cmd.Run()
	r := result{log: log.Bytes(), argv: argv}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.exitCode = int32(exit.ExitCode())
	case err != nil:
		tb.Fatalf("run %q: %v", argv, err)
	}
	if b, err := os.ReadFile(c.path(TerminationMessagePath)); err == nil {
		r.termination = string(b)
	}
	return r
}
