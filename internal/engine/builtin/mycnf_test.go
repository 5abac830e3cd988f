package builtin

import (
	"strings"
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

func TestOperatorMyCnf(t *testing.T) {
	run := newRun()
	got := OperatorMyCnf(run, "mysql57")
	lines := strings.Split(got, "\n")
	for _, want := range []string{
		"[mysqld]",
		"max_connections = 1010",
		"skip-name-resolve",
		"datadir = /var/lib/mysql-data/mysql",
		"socket = /var/run/mysqld/mysqld.sock",
	} {
		found := false
		for _, l := range lines {
			if l == want {
				found = true
			}
		}
		if !found {
			t.Errorf("OperatorMyCnf lacks the line %q:\n%s", want, got)
		}
	}
	if !strings.HasPrefix(got, "#") || !strings.Contains(got, "bench/pk-lookup") || !strings.Contains(got, "mysql57") {
		t.Errorf("OperatorMyCnf should start with a comment naming the run and target:\n%s", got)
	}
	// Everything after the header is in [mysqld].
	if i, j := strings.Index(got, "[mysqld]"), strings.Index(got, "max_connections"); i < 0 || j < i {
		t.Errorf("max_connections is not under [mysqld]:\n%s", got)
	}
	// The clients in the server's container find the server's socket.
	if !strings.HasSuffix(got, "[client]\nsocket = "+SocketPath+"\n") {
		t.Errorf("OperatorMyCnf does not end with the clients' socket:\n%s", got)
	}
	// The operator's own file passes the user's check, except for the datadir and socket it
	// owns and the [client] group users may not write.
	server, _, _ := strings.Cut(got, "\n# The clients")
	own := strings.Replace(strings.Replace(server, "datadir = "+DataDir+"\n", "", 1), "socket = "+SocketPath+"\n", "", 1)
	if err := specs.CheckMyCnf(run.Spec, v1.Target{Name: "self", MyCnf: own}); err != nil {
		t.Errorf("CheckMyCnf rejects the operator's own my.cnf: %v", err)
	}
	for _, owned := range []string{"datadir", "socket"} {
		line := owned + " = " + map[string]string{"datadir": DataDir, "socket": SocketPath}[owned]
		if err := specs.CheckMyCnf(run.Spec, v1.Target{Name: "self", MyCnf: line}); err == nil || !strings.Contains(err.Error(), owned) {
			t.Errorf("CheckMyCnf with the operator's %s = %v, want it refused", line, err)
		}
	}
}

// optionsReadBy returns the options a server reads from a my.cnf text, in order: those of the
// groups it reads ([mysqld], [server], [mysqld-<major.minor>], and for MariaDB [mariadb],
// [mariadbd], [mariadb-<major.minor>], [mariadbd-<major.minor>], [client-server]).
func optionsReadBy(cnf, family, version string) []string {
	groups := map[string]bool{"mysqld": true, "server": true, "mysqld-" + version: true}
	if family == "mariadb" {
		for _, g := range []string{"mariadb", "mariadbd", "client-server", "mariadb-" + version, "mariadbd-" + version} {
			groups[g] = true
		}
	}
	var out []string
	group := ""
	for _, line := range strings.Split(cnf, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#':
		case line[0] == '[':
			group = strings.Trim(line, "[]")
		case groups[group]:
			out = append(out, line)
		}
	}
	return out
}

func TestOperatorMyCnfByServerVersion(t *testing.T) {
	cnf := OperatorMyCnf(newRun(), "t")
	common := []string{"max_connections = 1010", "skip-name-resolve", "datadir = /var/lib/mysql-data/mysql",
		"socket = /var/run/mysqld/mysqld.sock"}
	tests := []struct {
		family, version string
		auth            []string
	}{
		// 9.x removed mysql_native_password: any option naming it breaks --initialize.
		{"mysql", "9.7", nil},
		{"mysql", "9.1", nil},
		{"mysql", "8.4", []string{"mysql-native-password = ON", "authentication-policy = mysql_native_password,,"}},
		{"mysql", "8.0", []string{"default-authentication-plugin = mysql_native_password"}},
		{"mysql", "8.3", []string{"default-authentication-plugin = mysql_native_password"}},
		{"mysql", "5.7", nil},
		{"mysql", "5.5", nil},
		{"mariadb", "10.5", nil},
		{"mariadb", "10.11", nil},
		{"mariadb", "11.8", nil},
	}
	for _, tc := range tests {
		t.Run(tc.family+"-"+tc.version, func(t *testing.T) {
			got := optionsReadBy(cnf, tc.family, tc.version)
			want := append(append([]string{}, common...), tc.auth...)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s %s reads\n%s\nwant\n%s\nfrom:\n%s", tc.family, tc.version,
					strings.Join(got, "\n"), strings.Join(want, "\n"), cnf)
			}
		})
	}
}

// synchWaits adds the wait/synch instruments to the file of its own target only.
func TestSynchWaits(t *testing.T) {
	run := newRun()
	run.Spec.Targets[0].MyCnf = ""
	run.Spec.Targets = append(run.Spec.Targets, v1.Target{Name: "plain", Image: "mariadb:10.11"})
	run.Spec.Targets[0].SynchWaits = true
	with, without := OperatorMyCnf(run, run.Spec.Targets[0].Name), OperatorMyCnf(run, "plain")
	for _, line := range []string{"performance_schema = ON\n", "loose-performance-schema-instrument = 'wait/synch/%=ON'\n"} {
		if !strings.Contains(with, line) {
			t.Errorf("OperatorMyCnf with synchWaits lacks %q:\n%s", line, with)
		}
		if strings.Contains(without, line) {
			t.Errorf("OperatorMyCnf of the other target has %q", line)
		}
	}
}
