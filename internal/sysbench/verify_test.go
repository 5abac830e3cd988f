package sysbench

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
)

// The launcher runs only the Lua the operator checked. These run the real launcher line under
// /bin/sh with the mounts played by files (no database: a refused step ends before sysbench
// starts), each with one mounted file that is not what the Job's digests say.
func TestLauncherRunsOnlyTheCheckedLua(t *testing.T) {
	for _, tool := range []string{"sh", "sha256sum", "cp", "mkdir"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to run the launcher: %v", tool, err)
		}
	}
	const original = "function event() db_query('SELECT 1') end\n"
	const swapped = "function event() os.execute('cat /etc/mysqlbench/credentials/password') end\n"
	secret := map[string]string{SecretKeyHost: "127.0.0.1", SecretKeyPort: "1", SecretKeyUser: "sbtest",
		SecretKeyPassword: "pw-never-used"}
	custom := v1alpha1.Workload{Tables: 1, TableSize: 1,
		CustomScript: &v1alpha1.ConfigMapKeySelector{Name: "scripts", Key: "mine.lua"}}
	step := load.Step{Phase: load.PhaseRun, Threads: 1, Duration: time.Second}
	for _, tc := range []struct {
		name string
		// tamper changes the container's mounted files after the operator's check.
		tamper func(t *testing.T, c *container)
		digest string // the custom script's digest in the Job; "" for none
		want   string // in the failure's reason
	}{
		{"a swapped reporter", func(t *testing.T, c *container) {
			write(t, c.path(ReporterPath), "-- not the operator's reporter\n"+ReporterScript())
		}, Digest([]byte(original)), "the reporter at "},
		{"a swapped custom script", func(t *testing.T, c *container) {
			write(t, c.path(CustomScriptMountPath+"/mine.lua"), swapped)
		}, Digest([]byte(original)), "the custom script mine.lua at "},
		{"a custom script without a digest", func(*testing.T, *container) {}, "",
			"the custom script mine.lua has no digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newContainer(t, map[string]string{"mine.lua": original})
			c.scripts = nil // the digest is the test's
			tc.tamper(t, c)
			s := step
			s.ScriptSHA256 = tc.digest
			inv, err := Build(custom, testSecret, s)
			if err != nil {
				t.Fatal(err)
			}
			r := c.run(t, inv, secret)
			if r.exitCode != 1 || r.sawSysbench() {
				t.Fatalf("exit code %d, sysbench started: %v; log:\n%s", r.exitCode, r.sawSysbench(), r.log)
			}
			out, err := ParseOutput(strings.NewReader(string(r.log)))
			if err != nil {
				t.Fatal(err)
			}
			f := Classify(r.exitCode, out)
			if f == nil || !f.Deterministic || !strings.Contains(f.Reason, "not the content the operator checked") ||
				!strings.Contains(f.Reason, tc.want) {
				t.Fatalf("classified as %+v, want a deterministic failure saying the script is not the checked content (%q)", f, tc.want)
			}
		})
	}

	// The same mounts untouched pass the check and reach sysbench's exec: the copies it runs are
	// the checked ones (what sysbench then does needs a database, the real tests run it).
	t.Run("the checked content", func(t *testing.T) {
		c := newContainer(t, map[string]string{"mine.lua": original})
		inv, err := Build(custom, testSecret, load.Step{Phase: load.PhaseRun, Threads: 1, Duration: time.Second, ScriptSHA256: Digest([]byte(original))})
		if err != nil {
			t.Fatal(err)
		}
		r := c.run(t, inv, secret)
		if strings.Contains(string(r.log), DigestMismatch) {
			t.Fatalf("the checked content was refused:\n%s", r.log)
		}
		for path, want := range map[string]string{VerifiedReporterPath: ReporterScript(), VerifiedDir + "/mine.lua": original} {
			got, err := os.ReadFile(c.path(path))
			if err != nil || string(got) != want {
				t.Errorf("the checked copy %s: %v, want the mounted content", path, err)
			}
		}
	})
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
