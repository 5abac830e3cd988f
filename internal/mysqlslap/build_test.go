package mysqlslap

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

func TestValidateArgs(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		phrase string // "" when valid
	}{
		{args: nil},
		{args: []string{"--engine=innodb", "--commit=10", "--auto-generate-sql-secondary-indexes=2", "--query=SELECT 1"}},
		{args: []string{"--auto-generate-sql-add-autoincrement", "--query=SELECT '$(MYSQLBENCH_USER)'"}},
		{args: []string{"-c5"}, phrase: "args[0] \"-c5\": write each option as --name=value"},
		{args: []string{"--engine=innodb", "--Engine=x"}, phrase: "args[1]"},
		{args: []string{"--concurrency=5"}, phrase: "not an option workload.mysqlslap.args may set"},
		// The option parsers' other spellings of refused options (review finding): never through.
		{args: []string{"--loose-create-schema=appdb"}, phrase: "args[0]"},
		{args: []string{"--create-s=appdb"}, phrase: "args[0]"},
		{args: []string{"--loose-post-system=cat /run/mysqlbench/mysqlslap.cnf"}, phrase: "args[0]"},
		{args: []string{"--enable-no-drop"}, phrase: "args[0]"},
		{args: []string{"--loose-iterations=5"}, phrase: "args[0]"},
		{args: []string{"--skip-auto-generate-sql-add-autoincrement"}, phrase: "args[0]"},
		{args: []string{"--engine-x=innodb"}, phrase: "args[0]"},
		// SQL options whose value mysqlslap could read as a file (it runs and echoes the file).
		{args: []string{"--query=/etc/mysqlbench/credentials/password"}, phrase: "not a file's path"},
		{args: []string{"--query=etc/mysqlbench/credentials/password"}, phrase: "not a file's path"},
		{args: []string{"--query=./x y"}, phrase: "not a file's path"},
		{args: []string{"--pre-query=COMMIT"}, phrase: "not a file's path"},
		{args: []string{"--create=CREATE TABLE t (a INT)"}, phrase: "--create without --query"},
		{args: []string{"--create=CREATE TABLE t (a INT)", "--query=SELECT a FROM t", "--post-query=DROP TABLE t"}},
		{args: []string{"--password=x"}, phrase: "args[0]"},
		{args: []string{"--defaults-extra-file=/x"}, phrase: "args[0]"},
		{args: []string{"--print-defaults"}, phrase: "args[0]"},
		{args: []string{"--create-schema=sbtest"}, phrase: "args[0]"},
		{args: []string{"--debug-info"}, phrase: "args[0]"},
		{args: []string{"--verbose"}, phrase: "args[0]"},
		{args: []string{"--pre-system=rm -rf /"}, phrase: "args[0]"},
		{args: []string{"--no-drop"}, phrase: "args[0]"},
		{args: []string{"--engine=innodb,myisam"}, phrase: "name one, e.g. --engine=innodb"},
	} {
		err := ValidateArgs(tc.args)
		switch {
		case tc.phrase == "" && err != nil:
			t.Errorf("ValidateArgs(%q) = %v, want nil", tc.args, err)
		case tc.phrase != "" && (err == nil || !strings.Contains(err.Error(), tc.phrase) ||
			!strings.Contains(err.Error(), "workload.mysqlslap.args[")):
			t.Errorf("ValidateArgs(%q) = %v, want an error naming the field and saying %q", tc.args, err, tc.phrase)
		}
	}
}

func TestBuild(t *testing.T) {
	conn := []string{"--host=$(MYSQLBENCH_HOST)", "--port=$(MYSQLBENCH_PORT)", "--user=$(MYSQLBENCH_USER)", "--create-schema=mysqlslap"}
	for _, tc := range []struct {
		name string
		m    *v1alpha1.MysqlslapWorkload
		step Step
		args []string // after conn
	}{
		{name: "defaults", step: Step{Phase: load.PhaseRun, Concurrency: 8},
			args: []string{"--concurrency=8", "--iterations=1", "--number-of-queries=10000", "--auto-generate-sql", "--auto-generate-sql-load-type=mixed"}},
		{name: "key gets a primary key", m: &v1alpha1.MysqlslapWorkload{LoadType: "key", Queries: 500, Iterations: 3},
			step: Step{Phase: load.PhaseWarmup, Concurrency: 2},
			args: []string{"--concurrency=2", "--iterations=3", "--number-of-queries=500", "--auto-generate-sql",
				"--auto-generate-sql-load-type=key", "--auto-generate-sql-add-autoincrement"}},
		{name: "update keeps the user's guid key", m: &v1alpha1.MysqlslapWorkload{LoadType: "update", Args: []string{"--auto-generate-sql-guid-primary"}},
			step: Step{Phase: load.PhaseRun, Concurrency: 1},
			args: []string{"--concurrency=1", "--iterations=1", "--number-of-queries=10000", "--auto-generate-sql",
				"--auto-generate-sql-load-type=update", "--auto-generate-sql-guid-primary"}},
		{name: "queries below concurrency", m: &v1alpha1.MysqlslapWorkload{Queries: 10},
			step: Step{Phase: load.PhaseRun, Concurrency: 64},
			args: []string{"--concurrency=64", "--iterations=1", "--number-of-queries=64", "--auto-generate-sql", "--auto-generate-sql-load-type=mixed"}},
		{name: "a query alone gets a create statement", m: &v1alpha1.MysqlslapWorkload{Args: []string{"--query=SELECT '$(MYSQLBENCH_USER)' $x"}},
			step: Step{Phase: load.PhaseRun, Concurrency: 4},
			args: []string{"--concurrency=4", "--iterations=1", "--number-of-queries=10000", "--create=DO 0", "--query=SELECT '$$(MYSQLBENCH_USER)' $$x"}},
		{name: "query and create", m: &v1alpha1.MysqlslapWorkload{Args: []string{"--create=CREATE TABLE t (a INT)", "--query=SELECT * FROM t"}},
			step: Step{Phase: load.PhaseRun, Concurrency: 4},
			args: []string{"--concurrency=4", "--iterations=1", "--number-of-queries=10000", "--create=CREATE TABLE t (a INT)", "--query=SELECT * FROM t"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := Build(v1alpha1.Workload{Client: v1alpha1.ClientMysqlslap, Mysqlslap: tc.m}, "conn", tc.step)
			if err != nil {
				t.Fatal(err)
			}
			if want := append(slices.Clone(conn), tc.args...); !slices.Equal(inv.Args, want) {
				t.Errorf("args\n%q\nwant\n%q", inv.Args, want)
			}
			if len(inv.Command) != 4 || inv.Command[0] != "/bin/sh" || inv.Command[1] != "-c" || inv.Command[3] != "mysqlslap" {
				t.Errorf("command %q", inv.Command)
			}
			if strings.Contains(inv.Command[2], "$(") {
				t.Errorf("the launcher contains \"$(\", which the kubelet would expand")
			}
			env := map[string]string{}
			for _, e := range inv.Env {
				if e.ValueFrom != nil {
					ref := e.ValueFrom.SecretKeyRef
					env[e.Name] = "secret:" + ref.Name + "/" + ref.Key
				} else {
					env[e.Name] = e.Value
				}
				if strings.Contains(strings.ToLower(e.Name), "password") {
					t.Errorf("env %s: the password is a file, never an env var", e.Name)
				}
			}
			want := map[string]string{
				"MYSQLBENCH_HOST": "secret:conn/host", "MYSQLBENCH_PORT": "secret:conn/port", "MYSQLBENCH_USER": "secret:conn/user",
				"MYSQLBENCH_DATABASE": "secret:conn/database", "MYSQLBENCH_RESULT_FILE": sysbench.TerminationMessagePath,
			}
			if tc.step.Phase == load.PhaseRun && tc.step.ServerStats {
				want["MYSQLBENCH_SERVER_STATS"] = "1"
			}
			for k, v := range want {
				if env[k] != v {
					t.Errorf("env %s = %q, want %q", k, env[k], v)
				}
			}
			if len(env) != len(want) {
				t.Errorf("env %v, want %v", env, want)
			}
			if len(inv.Volumes) != 2 || len(inv.VolumeMounts) != 2 {
				t.Errorf("volumes %+v mounts %+v: want the credential volumes", inv.Volumes, inv.VolumeMounts)
			}
		})
	}

	t.Run("server stats on run steps only", func(t *testing.T) {
		for _, phase := range []load.Phase{load.PhaseRun, load.PhaseWarmup} {
			inv, err := Build(v1alpha1.Workload{}, "conn", Step{Phase: phase, Concurrency: 1, ServerStats: true})
			if err != nil {
				t.Fatal(err)
			}
			on := slices.ContainsFunc(inv.Env, func(e corev1.EnvVar) bool { return e.Name == sysbench.EnvServerStats && e.Value == "1" })
			if on != (phase == load.PhaseRun) {
				t.Errorf("%s: server stats %v", phase, on)
			}
		}
	})

	for name, tc := range map[string]struct {
		w      v1alpha1.Workload
		secret string
		step   Step
		phrase string
	}{
		"prepare":          {step: Step{Phase: load.PhasePrepare, Concurrency: 1}, phrase: "warmup and run steps only"},
		"zero concurrency": {step: Step{Phase: load.PhaseRun}, phrase: "concurrency is 0"},
		"bad secret":       {secret: "Bad_Name", step: Step{Phase: load.PhaseRun, Concurrency: 1}, phrase: "connection secret name"},
		"bad arg": {w: v1alpha1.Workload{Mysqlslap: &v1alpha1.MysqlslapWorkload{Args: []string{"--iterations=5"}}},
			step: Step{Phase: load.PhaseRun, Concurrency: 1}, phrase: "workload.mysqlslap.args[0]"},
		"load type with query": {w: v1alpha1.Workload{Mysqlslap: &v1alpha1.MysqlslapWorkload{LoadType: "read", Args: []string{"--query=SELECT 1"}}},
			step: Step{Phase: load.PhaseRun, Concurrency: 1}, phrase: "remove it when args give --query"},
		"create alone": {w: v1alpha1.Workload{Mysqlslap: &v1alpha1.MysqlslapWorkload{Args: []string{"--create=CREATE TABLE t (a INT)"}}},
			step: Step{Phase: load.PhaseRun, Concurrency: 1}, phrase: "--create without --query"},
		"negative queries": {w: v1alpha1.Workload{Mysqlslap: &v1alpha1.MysqlslapWorkload{Queries: -1}},
			step: Step{Phase: load.PhaseRun, Concurrency: 1}, phrase: "queries is -1"},
	} {
		t.Run(name, func(t *testing.T) {
			secret := tc.secret
			if secret == "" {
				secret = "conn"
			}
			if _, err := Build(tc.w, secret, tc.step); err == nil || !strings.Contains(err.Error(), tc.phrase) {
				t.Errorf("Build error %v, want one saying %q", err, tc.phrase)
			}
		})
	}
}

func TestLauncherScript(t *testing.T) {
	if strings.Contains(launcherScript, "$(") {
		t.Fatal("the launcher contains \"$(\", which the kubelet would expand")
	}
	for _, want := range []string{
		`"$s" --defaults-extra-file="$o" "$@"`, // the option file first, the args untouched
		"command -v mariadb-slap", "command -v mysqlslap",
		"neither mysqlslap nor mariadb-slap on its PATH: set workload.mysqlslap.image",
		"contains a line break", OptionFile, sysbench.PasswordFile,
		"ENABLED = 1", "STATUS = 'enabled'", "'Questions'", "'trx_rseg_history_len'",
		`exit "$rc"`,
	} {
		if !strings.Contains(launcherScript, want) {
			t.Errorf("the launcher lacks %q", want)
		}
	}
}
