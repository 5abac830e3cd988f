// Package testmariadb starts a private MariaDB (or MySQL) server on loopback for the real tests:
// its own datadir, socket and free port, root over the socket. A missing server binary skips the
// test, unless MYSQLBENCH_REQUIRE_REAL=1 (CI) makes that a failure.
package testmariadb

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Tools are the binaries a Server needs, by role: server, install, client.
type Tools map[string]string

// Look finds the server, its installer and the command-line client, or skips tb.
func Look(tb testing.TB) Tools {
	tb.Helper()
	tools := Tools{}
	for role, names := range map[string][]string{
		"server":  {"mariadbd", "mysqld"},
		"install": {"mariadb-install-db", "mysql_install_db"},
		"client":  {"mariadb", "mysql"},
	} {
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				tools[role] = p
				break
			}
			// mariadbd lives in /usr/sbin, which is not always on a test's PATH.
			if p := filepath.Join("/usr/sbin", n); executable(p) {
				tools[role] = p
				break
			}
		}
		if tools[role] == "" {
			msg := fmt.Sprintf("real tests need %s (one of %v): apt-get install mariadb-server-core mariadb-client-core, or make test as root", role, names)
			if os.Getenv("MYSQLBENCH_REQUIRE_REAL") == "1" {
				tb.Fatal(msg)
			}
			tb.Skip(msg)
		}
	}
	return tools
}

func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// Server is a private server. Stop and Start stop and start it again on the same datadir and
// port, as a database that goes away and comes back.
type Server struct {
	tb      testing.TB
	tools   Tools
	dir     string
	options []string
	// Port is the TCP port on 127.0.0.1; Socket the Unix socket root connects through.
	Port   int
	Socket string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan error
}

// Start installs a datadir and starts a server with options (more server options, e.g.
// --performance-schema=ON); it is stopped when the test ends.
func Start(tb testing.TB, tools Tools, options ...string) *Server {
	tb.Helper()
	dir, err := os.MkdirTemp("", "mysqlbench-mariadb-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = os.RemoveAll(dir) })
	// A temporary directory of its own: the bootstrap's temporary tables are named by process
	// id, and in a /tmp shared with other servers (parallel test packages, other users) one
	// server's cleanup has removed another's, failing the bootstrap.
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		tb.Fatal(err)
	}
	install := exec.Command(tools["install"], "--no-defaults", "--user=root", "--datadir="+filepath.Join(dir, "data"),
		"--auth-root-authentication-method=socket", "--skip-test-db", "--tmpdir="+tmp)
	install.Env = append(os.Environ(), "TMPDIR="+tmp)
	if out, err := install.CombinedOutput(); err != nil {
		tb.Fatalf("%s: %v\n%s", tools["install"], err, out)
	}
	s := &Server{tb: tb, tools: tools, dir: dir, options: options, Port: FreePort(tb), Socket: filepath.Join(dir, "mysqld.sock")}
	tb.Cleanup(s.Stop)
	s.Start()
	return s
}

// Start starts the server (again) and waits until it accepts connections.
func (s *Server) Start() {
	s.tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		s.tb.Fatal("testmariadb: Start of a running server")
	}
	errLog := filepath.Join(s.dir, "error.log")
	args := append([]string{"--no-defaults", "--user=root", "--datadir=" + filepath.Join(s.dir, "data"),
		"--bind-address=127.0.0.1", "--port=" + strconv.Itoa(s.Port), "--socket=" + s.Socket,
		"--pid-file=" + s.PIDFile(), "--log-error=" + errLog, "--skip-log-bin",
		"--innodb-buffer-pool-size=128M", "--innodb-flush-log-at-trx-commit=0", "--skip-name-resolve",
		"--tmpdir=" + filepath.Join(s.dir, "tmp")}, s.options...)
	cmd := exec.Command(s.tools["server"], args...)
	if err := cmd.Start(); err != nil {
		s.tb.Fatalf("start %s: %v", s.tools["server"], err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	s.cmd, s.exited = cmd, exited
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := s.SQL("SELECT 1"); err == nil {
			return
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(errLog)
			s.cmd = nil
			s.tb.Fatalf("mariadbd exited during start-up: %v\n%s", err, log)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(errLog)
			s.tb.Fatalf("mariadbd did not accept connections within 60s\n%s", log)
		}
	}
}

// PIDFile is the server's pid file, written while it runs.
func (s *Server) PIDFile() string { return filepath.Join(s.dir, "mysqld.pid") }

// Stop stops the server (SIGTERM, then SIGKILL after 30 s) and waits for it to exit; a stopped
// server's Stop does nothing.
func (s *Server) Stop() { s.stop(syscall.SIGTERM) }

// Kill kills the server at once (SIGKILL), as a crash would: transactions in flight are lost.
func (s *Server) Kill() { s.stop(syscall.SIGKILL) }

func (s *Server) stop(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(sig)
	// The exit status after a signal says nothing about the test.
	select {
	case err := <-s.exited:
		_ = err
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		err := <-s.exited
		_ = err
	}
	s.cmd = nil
}

// FreePort is a TCP port on 127.0.0.1 nobody listens on.
func FreePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// SQL runs statements as root over the socket and returns the output, tab-separated, without
// column names.
func (s *Server) SQL(stmts string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, s.tools["client"], "--no-defaults", "--socket="+s.Socket,
		"--user=root", "--batch", "--skip-column-names", "-e", stmts).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s: %w: %s", stmts, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// MustSQL is SQL failing the test on an error.
func (s *Server) MustSQL(tb testing.TB, stmts string) string {
	tb.Helper()
	out, err := s.SQL(stmts)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// User creates a user with every privilege on database db (which need not exist yet: the
// grant lets the user create it) and returns its password.
func (s *Server) User(tb testing.TB, user, db string) string {
	tb.Helper()
	password := fmt.Sprintf("pw-%d-%d", time.Now().UnixNano(), os.Getpid())
	s.MustSQL(tb, fmt.Sprintf("CREATE USER '%s'@'127.0.0.1' IDENTIFIED BY '%s'; GRANT ALL ON `%s`.* TO '%s'@'127.0.0.1';",
		user, password, db, user))
	return password
}
