package mysqlslap

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
	"github.com/mysqlbench/mysqlbench-operator/internal/testmariadb"
)

// TestReal runs Build's launcher itself, through /bin/sh (and bash, the shell of the mysql:8.4
// image, when there is one), with a real password file against a private MariaDB 10.11 and its
// mariadb-slap, as the kubelet would run the container: env from the Secret, $(VAR) expanded in
// the args, the mounts in a directory.
func TestReal(t *testing.T) {
	if testing.Short() {
		t.Skip("real mysqlslap runs skipped in -short mode")
	}
	tools := lookTools(t)
	db := testmariadb.Start(t, tools, "--performance-schema=ON")
	password := ` a#b "c" 'd' \e\\ $(MYSQLBENCH_USER) $$ é€ ` + randomPassword(t) + ` `
	// The account as the builtin engine leaves it: ALL on its database narrowed by GrantSQL,
	// which also grants mysqlslap's schema.
	db.MustSQL(t, "CREATE DATABASE sbtest; CREATE TABLE sbtest.keep (id INT); INSERT INTO sbtest.keep VALUES (1);"+
		"CREATE USER sbtest@'%' IDENTIFIED BY "+sqlLiteral(password)+"; GRANT ALL ON sbtest.* TO sbtest@'%';"+
		sysbench.GrantSQL("sbtest", "%", "sbtest"))
	secret := secretFor(db, "sbtest", password)
	secret[sysbench.SecretKeyDatabase] = "sbtest"
	shells := []string{tools["sh"]}
	if bash, err := exec.LookPath("bash"); err == nil {
		shells = append(shells, bash)
	}
	w := v1alpha1.Workload{Client: v1alpha1.ClientMysqlslap, Mysqlslap: &v1alpha1.MysqlslapWorkload{Queries: 2000, Iterations: 2}}

	for _, shell := range shells {
		for _, tc := range []struct {
			concurrency int32
			stats       bool
		}{{1, false}, {4, false}, {1, true}, {4, true}} {
			step := Step{Phase: load.PhaseRun, Concurrency: tc.concurrency, ServerStats: tc.stats}
			t.Run(fmt.Sprintf("%s concurrency %d server stats %v", filepath.Base(shell), tc.concurrency, tc.stats), func(t *testing.T) {
				r := run(t, shell, build(t, w, step), secret)
				out := succeeded(t, r, password)
				f := out.Final
				if f.Threads != tc.concurrency || f.Queries.Total != 2000 {
					t.Errorf("final %+v, want %d clients and 2000 queries", f, tc.concurrency)
				}
				if want := float64(f.Queries.Total) / f.DurationSeconds; f.QPS.Total != want {
					t.Errorf("QPS %v, want clients*queries/avg = %v", f.QPS.Total, want)
				}
				if !tc.stats {
					if len(out.Server) != 0 || bytes.Contains(r.log, []byte(markBegin)) {
						t.Errorf("snapshots without ServerStats")
					}
					t.Logf("%.0f qps over %.3f s", f.QPS.Total, f.DurationSeconds)
					return
				}
				start, end, err := serverstats.Pair(out.Server)
				if err != nil {
					t.Fatalf("%v\n%s", err, r.log)
				}
				for _, s := range []serverstats.Snapshot{start, end} {
					if len(s.Errors) != 0 || !s.PerformanceSchema || s.Waits == nil || s.InnoDBMetrics == nil ||
						!strings.Contains(s.Server, "MariaDB") || s.UnixTime == float64(int64(s.UnixTime)) {
						t.Errorf("%s snapshot: errors %q, ps %v, %d waits, %d metrics, server %q, time %.6f",
							s.At, s.Errors, s.PerformanceSchema, len(s.Waits), len(s.InnoDBMetrics), s.Server, s.UnixTime)
					}
				}
				// Every iteration's queries reach the server, with mysqlslap's own DDL and
				// the snapshots' few statements on top.
				all := uint64(f.Queries.Total) * 2
				if d := end.Status["Questions"] - start.Status["Questions"]; d < all || d > all+all/2 {
					t.Errorf("Questions +%d over 2 iterations of %d queries", d, f.Queries.Total)
				}
				st, err := serverstats.Delta(start, end, float64(f.Queries.Total), 5)
				if err != nil {
					t.Fatal(err)
				}
				if st.Seconds < f.DurationSeconds || len(st.Waits) == 0 || len(st.Counters) < 20 {
					t.Errorf("step %.3f s for mysqlslap's %.3f s, %d counters, %d waits", st.Seconds, f.DurationSeconds, len(st.Counters), len(st.Waits))
				}
				t.Logf("%.0f qps over %.3f s; snapshots %.1f and %.1f ms, %.3f s apart", f.QPS.Total, f.DurationSeconds,
					start.DurationMs, end.DurationMs, st.Seconds)
			})
		}
	}

	run1 := Step{Phase: load.PhaseRun, Concurrency: 2}
	t.Run("the connection database is untouched and mysqlslap's schema is gone", func(t *testing.T) {
		if got := db.MustSQL(t, "SELECT COUNT(*) FROM sbtest.keep"); got != "1" {
			t.Errorf("sbtest.keep has %s rows", got)
		}
		if got := db.MustSQL(t, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'mysqlslap'"); got != "0" {
			t.Errorf("mysqlslap's schema is left after its steps")
		}
	})

	t.Run("passwords", func(t *testing.T) {
		for name, pw := range map[string]string{
			"only quotes and backslashes": `"\"'\\'"` + `\`,
			"empty":                       "",
			"long":                        strings.Repeat(`#"\`, MaxPasswordBytes/3),
		} {
			t.Run(name, func(t *testing.T) {
				db.MustSQL(t, "DROP USER IF EXISTS pw@'%'; CREATE USER pw@'%' IDENTIFIED BY "+sqlLiteral(pw)+";"+
					"GRANT "+strings.Join(sysbench.Privileges, ", ")+" ON mysqlslap.* TO pw@'%'")
				succeeded(t, run(t, tools["sh"], build(t, w, run1), secretFor(db, "pw", pw)), pw)
			})
		}
	})

	for name, tc := range map[string]struct {
		secret map[string]string
		code   int
		phrase string
	}{
		"wrong password":        {secret: secretFor(db, "sbtest", randomPassword(t)), code: 1045, phrase: "access denied for the benchmark user"},
		"no grant on mysqlslap": {secret: secretFor(db, "nogrant", password), code: 1044, phrase: "access denied to the schema mysqlslap"},
		"a trailing newline":    {secret: secretFor(db, "sbtest", password+"\n"), phrase: "contains a line break"},
		"too long":              {secret: secretFor(db, "sbtest", strings.Repeat("x", MaxPasswordBytes+1)), phrase: "at most 1024"},
		"database mysqlslap":    {secret: withDatabase(secretFor(db, "sbtest", password), Schema), phrase: "keep your data in another database"},
		// mysqlslap exits 0 after failed queries; each of 40 clients prints its error with the
		// query, more than the termination message holds.
		"a failing query at 40 clients": {secret: secret, code: 1064, phrase: "SQL syntax error"},
	} {
		t.Run(name, func(t *testing.T) {
			db.MustSQL(t, "CREATE USER IF NOT EXISTS nogrant@'%' IDENTIFIED BY "+sqlLiteral(password))
			ww, step := w, run1
			if tc.code == 1064 {
				ww = v1alpha1.Workload{Client: v1alpha1.ClientMysqlslap, Mysqlslap: &v1alpha1.MysqlslapWorkload{
					Args: []string{"--query=SELEC " + strings.Repeat("x", 2000)}}}
				step.Concurrency = 40
			}
			r := run(t, tools["sh"], build(t, ww, step), tc.secret)
			if len(r.termination) == 0 || len(r.termination) >= 4096 {
				t.Errorf("termination message of %d bytes, want 1..4095", len(r.termination))
			}
			assertNoLeak(t, r, tc.secret[sysbench.SecretKeyPassword])
			assertNoLeak(t, r, password)
			for _, text := range []string{string(r.log), r.termination} {
				out, err := ParseOutput(strings.NewReader(text))
				if err != nil {
					t.Fatal(err)
				}
				f := Classify(r.exitCode, out)
				if (r.exitCode == 0) != (tc.code == 1064) || f == nil || f.Code != tc.code || !strings.Contains(f.Reason, tc.phrase) {
					t.Errorf("exit %d, classified as %+v, want code %d saying %q\n%s", r.exitCode, f, tc.code, tc.phrase, text)
				}
			}
		})
	}
}

func withDatabase(secret map[string]string, db string) map[string]string {
	secret[sysbench.SecretKeyDatabase] = db
	return secret
}

func build(t *testing.T, w v1alpha1.Workload, step Step) load.Invocation {
	t.Helper()
	inv, err := Build(w, "conn", step)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// succeeded checks what every successful step gives: no password where it could leak, a clean
// classification from the log and from the termination message, the same report in both.
func succeeded(t *testing.T, r result, password string) load.Output {
	t.Helper()
	assertNoLeak(t, r, password)
	out, err := ParseOutput(bytes.NewReader(r.log))
	if err != nil {
		t.Fatalf("ParseOutput: %v\n%s", err, r.log)
	}
	if f := Classify(r.exitCode, out); f != nil {
		t.Fatalf("step failed: %s (exit %d)\n%s", f.Reason, r.exitCode, r.log)
	}
	if len(out.ServerErrors) != 0 {
		t.Errorf("server errors %q", out.ServerErrors)
	}
	if len(r.termination) == 0 || len(r.termination) >= 4096 {
		t.Fatalf("termination message is %d bytes, want 1..4095", len(r.termination))
	}
	term, err := ParseOutput(strings.NewReader(r.termination))
	if err != nil || term.Final == nil || *term.Final != *out.Final || Classify(r.exitCode, term) != nil {
		t.Errorf("termination message %q: %+v, %v; log's final %+v", r.termination, term.Final, err, out.Final)
	}
	if r.optionFileMode != 0o600 {
		t.Errorf("option file mode %o, want 600", r.optionFileMode)
	}
	return out
}

func assertNoLeak(t *testing.T, r result, password string) {
	t.Helper()
	if strings.TrimSpace(password) == "" {
		return
	}
	if bytes.Contains(r.log, []byte(password)) || strings.Contains(r.termination, password) {
		t.Errorf("the password appears in the container's output")
	}
	for _, a := range r.argv {
		if strings.Contains(a, password) {
			t.Errorf("the password is in the container's argument %q", a)
		}
	}
	for k, v := range r.env {
		if strings.Contains(v, password) {
			t.Errorf("the password is in the container's env %s", k)
		}
	}
}

// lookTools finds the binaries the real tests need: testmariadb's server, installer and client,
// and mariadb-slap (or mysqlslap) and sh. When one is missing the test is skipped, unless
// MYSQLBENCH_REQUIRE_REAL=1 (CI) makes that a failure.
func lookTools(tb testing.TB) testmariadb.Tools {
	tb.Helper()
	tools := testmariadb.Look(tb)
	for role, names := range map[string][]string{"slap": {"mariadb-slap", "mysqlslap"}, "sh": {"sh"}} {
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				tools[role] = p
				break
			}
		}
		if tools[role] == "" {
			msg := fmt.Sprintf("real tests need %s (one of %v): apt-get install mariadb-client, or make test as root", role, names)
			if os.Getenv("MYSQLBENCH_REQUIRE_REAL") == "1" {
				tb.Fatal(msg)
			}
			tb.Skip(msg)
		}
	}
	return tools
}

// secretFor returns a connection Secret's data for user with password on db, without a
// database key.
func secretFor(db *testmariadb.Server, user, password string) map[string]string {
	return map[string]string{
		sysbench.SecretKeyHost: "127.0.0.1", sysbench.SecretKeyPort: strconv.Itoa(db.Port),
		sysbench.SecretKeyUser: user, sysbench.SecretKeyPassword: password,
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

// sqlLiteral quotes s as a string literal for MariaDB's default sql_mode (backslash escapes on).
func sqlLiteral(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// result is what the kubelet would know after the container finished.
type result struct {
	log            []byte
	exitCode       int32
	termination    string
	argv           []string
	env            map[string]string
	optionFileMode os.FileMode
}

// run executes inv with shell the way the kubelet would: env resolved from the Secret's data
// (optional keys skipped), $(VAR) expanded in the args, the Secret volume's password file with
// mode 0440 and a fresh emptyDir, both under a test directory that the launcher's mount paths
// are relocated to.
func run(t *testing.T, shell string, inv load.Invocation, secret map[string]string) result {
	t.Helper()
	root := t.TempDir()
	relocate := strings.NewReplacer(sysbench.PasswordMountPath, root+"/credentials", sysbench.OptionsMountPath, root+"/options")
	for _, d := range []string{"credentials", "options"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "credentials", sysbench.SecretKeyPassword), []byte(secret[sysbench.SecretKeyPassword]), 0o440); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, e := range inv.Env {
		switch {
		case e.ValueFrom != nil:
			v, ok := secret[e.ValueFrom.SecretKeyRef.Key]
			if !ok {
				continue // an optional key the Secret does not have
			}
			env[e.Name] = v
		case e.Name == sysbench.EnvResultFile:
			env[e.Name] = filepath.Join(root, "termination-log")
		default:
			env[e.Name] = e.Value
		}
	}
	if inv.Command[0] != "/bin/sh" {
		t.Fatalf("command %q", inv.Command)
	}
	argv := []string{shell, inv.Command[1], relocate.Replace(inv.Command[2])}
	argv = append(argv, inv.Command[3:]...)
	for _, a := range inv.Args {
		argv = append(argv, expandK8s(a, env))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = root
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	err := cmd.Run()
	r := result{log: log.Bytes(), argv: argv, env: env}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.exitCode = int32(exit.ExitCode())
	case err != nil:
		t.Fatalf("run %q: %v", argv, err)
	}
	if b, err := os.ReadFile(env[sysbench.EnvResultFile]); err == nil {
		r.termination = string(b)
	}
	if st, err := os.Stat(filepath.Join(root, "options", filepath.Base(OptionFile))); err == nil {
		r.optionFileMode = st.Mode().Perm()
	}
	return r
}

// expandK8s implements Kubernetes' $(VAR) expansion: $$ is an escaped $, $(NAME) becomes the
// variable's value when it is defined and stays as written when it is not, any other $ is kept.
func expandK8s(s string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			if v, ok := vars[s[i+2:i+2+end]]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}
