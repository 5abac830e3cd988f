package sysbench

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
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/testmariadb"
)

// This file runs the real thing for the real tests and the benchmark: a private MariaDB on
// loopback (internal/testmariadb) and sysbench executing exactly what Build returns.

// lookTools finds the binaries the real tests need: testmariadb's server, installer and client,
// and sysbench and sh. When one is missing the test is skipped, unless MYSQLBENCH_REQUIRE_REAL=1
// (CI) makes that a failure.
func lookTools(tb testing.TB) testmariadb.Tools {
	tb.Helper()
	tools := testmariadb.Look(tb)
	for _, name := range []string{"sysbench", "sh"} {
		p, err := exec.LookPath(name)
		if err != nil {
			msg := fmt.Sprintf("real tests need %s: apt-get install sysbench, or make test as root", name)
			if os.Getenv("MYSQLBENCH_REQUIRE_REAL") == "1" {
				tb.Fatal(msg)
			}
			tb.Skip(msg)
		}
		tools[name] = p
	}
	return tools
}

// dbSecret returns the connection Secret's data for user sbtest with password on db, without a
// database key.
func dbSecret(db *testmariadb.Server, password string) map[string]string {
	return map[string]string{
		SecretKeyHost: "127.0.0.1", SecretKeyPort: strconv.Itoa(db.Port),
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
	// scripts are the custom scripts by key, as their ConfigMap holds them: run gives a step
	// that runs one the digest of its content, as the operator does from the ConfigMap it read,
	// unless the Invocation carries one already.
	scripts map[string]string
}

// newContainer writes the reporter, as the operator's ConfigMap would hold it, and the custom
// scripts (key -> source) where the mounts would put them.
func newContainer(tb testing.TB, customScripts map[string]string) *container {
	tb.Helper()
	root := tb.TempDir()
	c := &container{root: root, scripts: customScripts}
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

// mountPaths are the container paths that mounts provide; path relocates them.
var mountPaths = []string{ReporterMountPath, PasswordMountPath, OptionsMountPath}

// path maps a path inside the container to the test's directory. Only the mount paths are
// relocated; everything else (/usr/share/sysbench, /bin/sh) is the real one.
func (c *container) path(p string) string {
	if p == TerminationMessagePath {
		return filepath.Join(c.root, "termination-log")
	}
	for _, m := range mountPaths {
		if p == m || strings.HasPrefix(p, m+"/") {
			return filepath.Join(c.root, "mounts", p)
		}
	}
	return p
}

// relocate rewrites the container paths in an Invocation to the test's directory: in the args
// and env values, and the mount paths the launcher line names. Nothing else of the launcher
// changes.
func (c *container) relocate(inv load.Invocation) load.Invocation {
	out := load.Invocation{Volumes: inv.Volumes, VolumeMounts: inv.VolumeMounts}
	for _, s := range inv.Command {
		for _, m := range mountPaths {
			s = strings.ReplaceAll(s, m, c.path(m))
		}
		out.Command = append(out.Command, s)
	}
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

// pinScript sets an empty EnvScriptSHA256 of inv to the digest of the custom script it runs.
func (c *container) pinScript(inv load.Invocation) load.Invocation {
	script := ""
	for _, e := range inv.Env {
		if e.Name == EnvScript {
			script = strings.TrimPrefix(e.Value, CustomScriptMountPath+"/")
		}
	}
	src, ok := c.scripts[script]
	if !ok {
		return inv
	}
	env := append([]corev1.EnvVar(nil), inv.Env...)
	for i, e := range env {
		if e.Name == EnvScriptSHA256 && e.Value == "" {
			env[i].Value = Digest([]byte(src))
		}
	}
	inv.Env = env
	return inv
}

// result is what the kubelet would know after the container finished, and what /proc showed
// while it ran.
type result struct {
	log         []byte // stdout and stderr, as in the Pod log
	exitCode    int32
	termination string // the termination message file, "" when not written
	argv        []string
	env         map[string]string
	// cmdlines are the distinct argvs /proc/<pid>/cmdline showed: the launcher's, then
	// sysbench's once the launcher exec'd it (the same process).
	cmdlines [][]string
	// sysbenchEnviron is /proc/<pid>/environ once the process was sysbench; nil when the
	// process ended before it was seen as sysbench.
	sysbenchEnviron []string
	// optionFileMode is the mode of the option file the launcher wrote, 0 when it wrote none.
	optionFileMode os.FileMode
}

// sawSysbench reports whether /proc showed the container's process as sysbench itself.
func (r result) sawSysbench() bool { return r.sysbenchEnviron != nil }

// run executes inv the way the kubelet would: env resolved from the Secret's data, $(VAR)
// expanded in command and args, the mounts in place (the Secret volume's files with their mode,
// fresh emptyDirs), a fresh termination message file. While it runs, /proc/<pid>/cmdline and
// environ are read as anyone on the node who may read them would.
func (c *container) run(tb testing.TB, inv load.Invocation, secret map[string]string) result {
	tb.Helper()
	_ = os.Remove(c.path(TerminationMessagePath))
	files, emptyDirs, err := containerMounts(inv, secret)
	if err != nil {
		tb.Fatal(err)
	}
	for _, d := range emptyDirs {
		if err := os.RemoveAll(c.path(d)); err != nil {
			tb.Fatal(err)
		}
		if err := os.MkdirAll(c.path(d), 0o777); err != nil {
			tb.Fatal(err)
		}
	}
	for _, f := range files {
		p := c.path(f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		_ = os.Remove(p)
		if err := os.WriteFile(p, []byte(f.content), f.mode); err != nil {
			tb.Fatal(err)
		}
	}
	inv = c.pinScript(inv)
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
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %q: %v", argv, err)
	}
	r := result{argv: argv, env: env}
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		r.cmdlines, r.sysbenchEnviron = watchProc(cmd.Process.Pid, done)
	}()
	err = cmd.Wait()
	close(done)
	<-watched
	r.log = log.Bytes()
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
	if st, err := os.Stat(c.path(OptionFile)); err == nil {
		r.optionFileMode = st.Mode().Perm()
	}
	return r
}

// watchProc reads /proc/<pid>/cmdline until done, collecting each distinct argv, and the
// environment once the process is sysbench (the launcher exec'd it).
func watchProc(pid int, done <-chan struct{}) (cmdlines [][]string, environ []string) {
	dir := "/proc/" + strconv.Itoa(pid)
	for {
		if b, err := os.ReadFile(dir + "/cmdline"); err == nil && len(b) > 0 {
			argv := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
			if n := len(cmdlines); n == 0 || !slices.Equal(cmdlines[n-1], argv) {
				cmdlines = append(cmdlines, argv)
			}
			if filepath.Base(argv[0]) == "sysbench" {
				if e, err := os.ReadFile(dir + "/environ"); err == nil {
					environ = strings.Split(strings.TrimSuffix(string(e), "\x00"), "\x00")
					return cmdlines, environ
				}
			}
		}
		select {
		case <-done:
			return cmdlines, environ
		case <-time.After(time.Millisecond):
		}
	}
}
