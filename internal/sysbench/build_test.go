package sysbench

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
)

const testSecret = "bench-conn"

// A password that would be easy to spot anywhere it leaked.
const testPassword = "pw-Do-Not-Leak-7f3a"

func pointSelect(tables int32, extra ...string) v1alpha1.Workload {
	return v1alpha1.Workload{Script: "oltp_point_select", Tables: tables, TableSize: 100000, ExtraArgs: extra}
}

var connArgs = []string{
	ReporterPath,
	"--db-driver=mysql",
	"--mysql-host=$(MYSQLBENCH_HOST)",
	"--mysql-port=$(MYSQLBENCH_PORT)",
	"--mysql-user=$(MYSQLBENCH_USER)",
}

func with(base []string, more ...string) []string {
	return append(slices.Clone(base), more...)
}

func TestBuild(t *testing.T) {
	custom := v1alpha1.Workload{
		CustomScript: &v1alpha1.ConfigMapKeySelector{Name: "my-scripts", Key: "my_select.lua"},
		Tables:       2, TableSize: 500,
	}
	runArgs := func(threads, seconds string) []string {
		return []string{"--threads=" + threads, "--time=" + seconds, "--events=0", "--report-interval=1", "--percentile=95"}
	}
	tests := []struct {
		name            string
		w               v1alpha1.Workload
		step            load.Step
		wantArgs        []string
		wantScript      string
		wantServerStats bool
		// wantScriptSHA256 is the custom script's digest in the env, "-" for no such variable.
		wantScriptSHA256 string
	}{{
		name:       "run",
		w:          pointSelect(4),
		step:       load.Step{Phase: load.PhaseRun, Threads: 8, Duration: 300 * time.Second},
		wantArgs:   with(connArgs, with([]string{"--tables=4", "--table-size=100000"}, with(runArgs("8", "300"), "run")...)...),
		wantScript: "oltp_point_select",
	}, {
		name:            "a run with server snapshots",
		w:               pointSelect(4),
		step:            load.Step{Phase: load.PhaseRun, Threads: 8, Duration: 300 * time.Second, ServerStats: true},
		wantArgs:        with(connArgs, with([]string{"--tables=4", "--table-size=100000"}, with(runArgs("8", "300"), "run")...)...),
		wantScript:      "oltp_point_select",
		wantServerStats: true,
	}, {
		name:       "a warmup takes no server snapshots",
		w:          pointSelect(4),
		step:       load.Step{Phase: load.PhaseWarmup, Threads: 8, Duration: 300 * time.Second, ServerStats: true},
		wantArgs:   with(connArgs, with([]string{"--tables=4", "--table-size=100000"}, with(runArgs("8", "300"), "run")...)...),
		wantScript: "oltp_point_select",
	}, {
		name:       "prepare takes no server snapshots",
		w:          pointSelect(4),
		step:       load.Step{Phase: load.PhasePrepare, ServerStats: true},
		wantArgs:   with(connArgs, "--tables=4", "--table-size=100000", "--threads=4", "prepare"),
		wantScript: "oltp_point_select",
	}, {
		name:       "probe takes no server snapshots",
		w:          pointSelect(4),
		step:       load.Step{Phase: load.PhaseProbe, ServerStats: true},
		wantArgs:   with(connArgs, "--tables=4", "--table-size=100000", "probe"),
		wantScript: "oltp_point_select",
	}, {
		name:       "warmup is a run",
		w:          pointSelect(4),
		step:       load.Step{Phase: load.PhaseWarmup, Threads: 100, Duration: 5 * time.Minute},
		wantArgs:   with(connArgs, with([]string{"--tables=4", "--table-size=100000"}, with(runArgs("100", "300"), "run")...)...),
		wantScript: "oltp_point_select",
	}, {
		name:       "prepare is parallel over tables",
		w:          pointSelect(4),
		step:       load.Step{Phase: load.PhasePrepare, Threads: 99, Duration: time.Hour},
		wantArgs:   with(connArgs, "--tables=4", "--table-size=100000", "--threads=4", "prepare"),
		wantScript: "oltp_point_select",
	}, {
		name:       "prepare threads are capped",
		w:          pointSelect(100),
		step:       load.Step{Phase: load.PhasePrepare},
		wantArgs:   with(connArgs, "--tables=100", "--table-size=100000", "--threads=16", "prepare"),
		wantScript: "oltp_point_select",
	}, {
		name:       "zero tables and size mean the API defaults",
		w:          v1alpha1.Workload{Script: "oltp_read_write"},
		step:       load.Step{Phase: load.PhasePrepare},
		wantArgs:   with(connArgs, "--tables=1", "--table-size=10000", "--threads=1", "prepare"),
		wantScript: "oltp_read_write",
	}, {
		name:       "cleanup",
		w:          pointSelect(4),
		step:       load.Step{Phase: load.PhaseCleanup, Threads: 8},
		wantArgs:   with(connArgs, "--tables=4", "--table-size=100000", "cleanup"),
		wantScript: "oltp_point_select",
	}, {
		name:       "probe logs in and reports the version",
		w:          pointSelect(4),
		step:       load.Step{Phase: load.PhaseProbe, Threads: 8},
		wantArgs:   with(connArgs, "--tables=4", "--table-size=100000", "probe"),
		wantScript: "oltp_point_select",
	}, {
		name: "extra args go before the command, $ escaped for the kubelet",
		w:    pointSelect(4, "--rand-type=uniform", "--range-size=100", "--skip-trx=on", "--x=$(MYSQLBENCH_USER)"),
		step: load.Step{Phase: load.PhaseRun, Threads: 1, Duration: time.Second},
		wantArgs: with(connArgs, with([]string{"--tables=4", "--table-size=100000"}, with(runArgs("1", "1"),
			"--rand-type=uniform", "--range-size=100", "--skip-trx=on", "--x=$$(MYSQLBENCH_USER)", "run")...)...),
		wantScript: "oltp_point_select",
	}, {
		name:             "custom script from a ConfigMap",
		w:                custom,
		step:             load.Step{Phase: load.PhaseRun, Threads: 2, Duration: 10 * time.Second, ScriptSHA256: Digest([]byte("x"))},
		wantArgs:         with(connArgs, with([]string{"--tables=2", "--table-size=500"}, with(runArgs("2", "10"), "run")...)...),
		wantScript:       CustomScriptMountPath + "/my_select.lua",
		wantScriptSHA256: "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881",
	}, {
		// A printed plan knows no digest: the step then refuses to run the script.
		name:             "custom script prepare without its digest",
		w:                custom,
		step:             load.Step{Phase: load.PhasePrepare},
		wantArgs:         with(connArgs, "--tables=2", "--table-size=500", "--threads=2", "prepare"),
		wantScript:       CustomScriptMountPath + "/my_select.lua",
		wantScriptSHA256: "",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := Build(tc.w, testSecret, tc.step)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if !slices.Equal(inv.Command, launcher) {
				t.Errorf("command = %q, want %q", inv.Command, launcher)
			}
			if !slices.Equal(inv.Args, tc.wantArgs) {
				t.Errorf("args =\n%q\nwant\n%q", inv.Args, tc.wantArgs)
			}
			digest := tc.wantScriptSHA256
			if tc.w.CustomScript == nil {
				digest = "-"
			}
			assertEnv(t, inv.Env, tc.wantScript, tc.wantServerStats, digest)
			assertCredentialVolumes(t, inv)
			assertNoPassword(t, inv)
		})
	}
}

// assertEnv checks the env: connection settings only through secretKeyRef, database optional,
// the reporter's settings as literals, MYSQLBENCH_SERVER_STATS=1 only when serverStats.
// The reporter's digest is always there; scriptSHA256 is the custom script's, "-" for none.
func assertEnv(t *testing.T, env []corev1.EnvVar, wantScript string, serverStats bool, scriptSHA256 string) {
	t.Helper()
	wantRefs := map[string]string{EnvHost: SecretKeyHost, EnvPort: SecretKeyPort, EnvUser: SecretKeyUser,
		EnvDatabase: SecretKeyDatabase}
	wantValues := map[string]string{EnvScript: wantScript, EnvResultFile: TerminationMessagePath,
		EnvReporterSHA256: ReporterSHA256}
	if scriptSHA256 != "-" {
		wantValues[EnvScriptSHA256] = scriptSHA256
	}
	if serverStats {
		wantValues[EnvServerStats] = "1"
	}
	if len(env) != len(wantRefs)+len(wantValues) {
		t.Errorf("env has %d entries, want %d: %+v", len(env), len(wantRefs)+len(wantValues), env)
	}
	for _, e := range env {
		if key, ok := wantRefs[e.Name]; ok {
			if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				t.Errorf("env %s must come from secretKeyRef only: %+v", e.Name, e)
				continue
			}
			ref := e.ValueFrom.SecretKeyRef
			if ref.Name != testSecret || ref.Key != key {
				t.Errorf("env %s reads %s/%s, want %s/%s", e.Name, ref.Name, ref.Key, testSecret, key)
			}
			optional := ref.Optional != nil && *ref.Optional
			if optional != (e.Name == EnvDatabase) {
				t.Errorf("env %s optional = %v; only the database key is optional", e.Name, optional)
			}
			continue
		}
		if want, ok := wantValues[e.Name]; !ok || e.Value != want || e.ValueFrom != nil {
			t.Errorf("env %s = %+v, want literal %q", e.Name, e, want)
		}
	}
}

// assertCredentialVolumes checks how the password reaches the container: the Secret's password
// key alone, as a file only its owner and group may read, and the option file's directory in
// memory, small.
func assertCredentialVolumes(t *testing.T, inv load.Invocation) {
	t.Helper()
	wantMounts := []corev1.VolumeMount{
		{Name: "credentials", MountPath: PasswordMountPath, ReadOnly: true},
		{Name: "sysbench-options", MountPath: OptionsMountPath},
	}
	if !reflect.DeepEqual(inv.VolumeMounts, wantMounts) {
		t.Errorf("mounts %+v, want %+v", inv.VolumeMounts, wantMounts)
	}
	if len(inv.Volumes) != 2 {
		t.Fatalf("volumes %+v, want the password and the option file's directory", inv.Volumes)
	}
	secret := inv.Volumes[0].Secret
	if inv.Volumes[0].Name != "credentials" || secret == nil {
		t.Fatalf("volume %+v, want the Secret volume credentials", inv.Volumes[0])
	}
	if secret.SecretName != testSecret || secret.Optional != nil {
		t.Errorf("Secret volume reads %q (optional %v), want %q, not optional", secret.SecretName, secret.Optional, testSecret)
	}
	if want := []corev1.KeyToPath{{Key: SecretKeyPassword, Path: SecretKeyPassword}}; !reflect.DeepEqual(secret.Items, want) {
		t.Errorf("items %+v, want the password key alone (the builtin Secret also holds root's)", secret.Items)
	}
	if secret.DefaultMode == nil || *secret.DefaultMode != 0o440 {
		t.Errorf("defaultMode %v, want 0440: owner root and the pod's fsGroup only", secret.DefaultMode)
	}
	if PasswordMountPath+"/"+secret.Items[0].Path != PasswordFile {
		t.Errorf("the password lands at %s/%s, the launcher reads %s", PasswordMountPath, secret.Items[0].Path, PasswordFile)
	}
	dir := inv.Volumes[1]
	if dir.Name != "sysbench-options" || dir.EmptyDir == nil || dir.EmptyDir.Medium != corev1.StorageMediumMemory ||
		dir.EmptyDir.SizeLimit == nil || dir.EmptyDir.SizeLimit.Cmp(resource.MustParse("3Mi")) != 0 {
		t.Errorf("volume %+v, want an in-memory emptyDir of 3Mi (the option file and the checked Lua)", dir)
	}
	if filepath.Dir(OptionFile) != OptionsMountPath {
		t.Errorf("the option file %s is not in the emptyDir %s", OptionFile, OptionsMountPath)
	}
}

// assertNoPassword proves the password is not part of the Invocation and that, once the kubelet
// has expanded it, it is in no argument and no env value of the container: not through an
// extra arg that names a variable, not anywhere.
func assertNoPassword(t *testing.T, inv load.Invocation) {
	t.Helper()
	spec, err := json.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(spec), testPassword) {
		t.Fatalf("the Invocation contains the password: %s", spec)
	}
	data := map[string]string{
		SecretKeyHost: "db.example", SecretKeyPort: "3306", SecretKeyUser: "sbtest", SecretKeyPassword: testPassword,
	}
	argv, env, err := containerProcess(inv, data)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range argv {
		if strings.Contains(a, testPassword) {
			t.Errorf("after expansion the password is in argument %q", a)
		}
	}
	for name, v := range env {
		if strings.Contains(v, testPassword) {
			t.Errorf("env %s holds the password", name)
		}
	}
	for _, e := range inv.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Key == SecretKeyPassword {
			t.Errorf("env %s reads the password key", e.Name)
		}
	}
	if _, set := env[EnvDatabase]; set {
		t.Errorf("%s is set although the Secret has no database key", EnvDatabase)
	}
	files, _, err := containerMounts(inv, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].path != PasswordFile || files[0].content != testPassword {
		t.Errorf("mounted files %+v, want the password alone at %s", files, PasswordFile)
	}
}

func TestBuildErrors(t *testing.T) {
	run := load.Step{Phase: load.PhaseRun, Threads: 4, Duration: time.Minute}
	tests := []struct {
		name   string
		w      v1alpha1.Workload
		secret string
		step   load.Step
		want   string // a phrase the error must contain, so it says what to fix
	}{
		{"zero threads", pointSelect(1), testSecret, load.Step{Phase: load.PhaseRun, Duration: time.Minute}, "threads is 0, it must be at least 1"},
		{"negative warmup threads", pointSelect(1), testSecret, load.Step{Phase: load.PhaseWarmup, Threads: -1, Duration: time.Minute}, "at least 1"},
		{"no duration", pointSelect(1), testSecret, load.Step{Phase: load.PhaseRun, Threads: 1}, "at least 1s"},
		{"sub-second", pointSelect(1), testSecret, load.Step{Phase: load.PhaseRun, Threads: 1, Duration: 500 * time.Millisecond}, "at least 1s"},
		{"fractional seconds", pointSelect(1), testSecret, load.Step{Phase: load.PhaseRun, Threads: 1, Duration: 1500 * time.Millisecond}, "whole number of seconds"},
		{"too long", pointSelect(1), testSecret, load.Step{Phase: load.PhaseRun, Threads: 1, Duration: 25 * time.Hour}, "at most 24h"},
		{"unknown phase", pointSelect(1), testSecret, load.Step{Phase: "prewarm"}, "use probe, prepare, warmup, run or cleanup"},
		{"no script", v1alpha1.Workload{Tables: 1}, testSecret, run, "set exactly one"},
		{"both scripts", v1alpha1.Workload{Script: "oltp_insert", CustomScript: &v1alpha1.ConfigMapKeySelector{Name: "c", Key: "k"}}, testSecret, run, "set exactly one"},
		{"script with a path", v1alpha1.Workload{Script: "../../tmp/x"}, testSecret, run, "not a stock sysbench script"},
		{"custom script without ConfigMap", v1alpha1.Workload{CustomScript: &v1alpha1.ConfigMapKeySelector{Key: "k.lua"}}, testSecret, run, "name the ConfigMap"},
		{"custom script key with a slash", v1alpha1.Workload{CustomScript: &v1alpha1.ConfigMapKeySelector{Name: "c", Key: "../k.lua"}}, testSecret, run, "customScript.key"},
		{"negative tables", v1alpha1.Workload{Script: "oltp_insert", Tables: -1}, testSecret, run, "at least 1"},
		{"negative table size", v1alpha1.Workload{Script: "oltp_insert", TableSize: -5}, testSecret, run, "at least 1"},
		{"no secret", pointSelect(1), "", run, "connection secret name"},
		{"bad secret name", pointSelect(1), "Not_A_Name", run, "connection secret name"},
		{"extra arg without dashes", pointSelect(1, "rand-type=uniform"), testSecret, run, "--name=value"},
		{"extra arg that is a command", pointSelect(1, "run"), testSecret, run, "--name=value"},
		{"extra arg sets threads", pointSelect(1, "--threads=64"), testSecret, run, "sets this option itself"},
		{"deprecated threads alias", pointSelect(1, "--num-threads=64"), testSecret, run, "sets this option itself"},
		{"deprecated time alias", pointSelect(1, "--max-time=5"), testSecret, run, "sets this option itself"},
		{"deprecated events alias", pointSelect(1, "--max-requests=5"), testSecret, run, "sets this option itself"},
		{"extra arg sets percentile", pointSelect(1, "--percentile=99"), testSecret, run, "sets this option itself"},
		{"mysql-debug would print the password", pointSelect(1, "--mysql-debug=on"), testSecret, run, "sets this option itself"},
		{"mysql option", pointSelect(1, "--mysql-host=evil"), testSecret, run, "sets this option itself"},
		{"config file", pointSelect(1, "--config-file=/etc/passwd"), testSecret, run, "sets this option itself"},
		{"help ends without a report", pointSelect(1, "--help"), testSecret, run, "sets this option itself"},
		{"checkpoints", pointSelect(1, "--report-checkpoints=10"), testSecret, run, "sets this option itself"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := Build(tc.w, tc.secret, tc.step)
			if err == nil {
				t.Fatalf("Build succeeded with %+v", inv)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// Options that merely look like owned ones stay allowed.
func TestBuildAllowsLookalikeOptions(t *testing.T) {
	for _, a := range []string{"--threads-extra=1", "--rate=100", "--rand-seed=42", "--db-ps-mode=disable", "--histogram=on"} {
		if _, err := Build(pointSelect(1, a), testSecret, load.Step{Phase: load.PhaseRun, Threads: 1, Duration: time.Second}); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
}

// The launcher line runs under the kubelet's $(VAR) expansion too, so it must not contain one,
// and it names no variable the spec could set.
func TestLauncherSurvivesExpansion(t *testing.T) {
	vars := map[string]string{EnvDatabase: "x", EnvHost: "h", EnvUser: "u", EnvScript: "s", "MYSQLBENCH_PASSWORD": testPassword}
	for _, s := range launcher {
		if strings.Contains(s, "$(") {
			t.Errorf("the launcher contains \"$(\": %q", s)
		}
		if got := expandK8s(s, vars); got != s {
			t.Errorf("the kubelet would rewrite %q to %q", s, got)
		}
	}
}

// The launcher's limit is the one sysbench's parser has, written into the line.
func TestLauncherPasswordLimit(t *testing.T) {
	if !strings.Contains(launcherScript, "-gt "+strconv.Itoa(MaxPasswordBytes)+" ]") {
		t.Errorf("the launcher does not check the %d-byte limit", MaxPasswordBytes)
	}
	// read_config's line buffer is 256 bytes: 255 and the NUL.
	if line := len(`mysql-password="`) + MaxPasswordBytes + len(`"`); line != 255 {
		t.Errorf("a password of %d bytes makes a %d-byte line, want 255", MaxPasswordBytes, line)
	}
}

func TestExpandK8s(t *testing.T) {
	vars := map[string]string{"A": "1", "B": "two"}
	for in, want := range map[string]string{
		"$(A)":           "1",
		"x$(A)y$(B)z":    "x1ytwoz",
		"$$(A)":          "$(A)",
		"$(MISSING)":     "$(MISSING)",
		"$A":             "$A",
		"cost: $":        "cost: $",
		"$$$$":           "$$",
		"$(unterminated": "$(unterminated",
	} {
		if got := expandK8s(in, vars); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}
