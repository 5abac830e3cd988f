package builtin

import (
	"fmt"
	"strings"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// Config file names in the server's include directory. Include directories are read in
// alphabetical order and later settings win, so the user's overrides come after the operator's.
const (
	OperatorCnfKey = "10-mysqlbench-operator.cnf"
	UserCnfKey     = "90-mysqlbench-user.cnf"
)

// OperatorMyCnf is what the operator configures on every server it runs, so that the ladder can
// run without the user asking:
//   - max_connections above the ladder's peak (a 1000-thread step against the default 151 fails
//     with error 1040);
//   - skip-name-resolve, so a slow or missing reverse DNS never adds to connect latency;
//   - the datadir below the data volume's root (see DataDir), and the socket (with its lock
//     files; the images put their pid file there too) in SocketDir, both on writable volumes of
//     their own, as the server's root filesystem is read-only and its user (999) need not be
//     the image's (percona/percona-server's mysql is 1001, and its socket would be in a
//     directory only that user may write); [client] points the clients in the container at it;
//   - for MySQL 8.x, an authentication plugin that old sysbench client libraries speak without
//     TLS (sysbench issues #244/#341): 8.0 defaults to caching_sha2_password, and 8.4 disables
//     mysql_native_password unless it is turned on.
//
// What depends on the server's version goes into version-specific option groups, which each
// server reads only for its own major.minor: [mysqld-8.4] is read by MySQL and Percona Server
// 8.4.x and by nothing else (MariaDB reads [mysqld-10.11] or [mariadb-11.8], 9.x [mysqld-9.7]).
// So no server ever sees an option it rejects, whatever the image tag says: MySQL 9.x removed
// mysql_native_password, and an authentication-policy naming it makes `mysqld --initialize`
// abort (MY-013797). 9.x gets nothing here; its caching_sha2_password works with the default
// sysbench image (libmariadb 3.3) over plain TCP.
func OperatorMyCnf(run *v1.BenchmarkRun, target string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by mysqlbench-operator for BenchmarkRun %s/%s, target %s.\n", run.Namespace, run.Name, target)
	b.WriteString("# The target's myCnf overrides these in " + UserCnfKey + ".\n")
	b.WriteString("[mysqld]\n")
	fmt.Fprintf(&b, "max_connections = %d\n", specs.RequiredMaxConnections(run.Spec.Ladder))
	b.WriteString("skip-name-resolve\n")
	b.WriteString("datadir = " + DataDir + "\n")
	b.WriteString("socket = " + SocketPath + "\n")
	for _, t := range run.Spec.Targets {
		if t.Name == target && t.SynchWaits {
			b.WriteString(specs.SynchWaitsCnf)
		}
	}
	for _, g := range authGroups {
		b.WriteString("\n# " + g.why + "\n")
		for _, version := range g.versions {
			b.WriteString("[mysqld-" + version + "]\n")
			for _, opt := range g.options {
				b.WriteString(opt + "\n")
			}
		}
	}
	b.WriteString("\n# The clients in the server's container (kubectl exec ... mysql) use the server's socket.\n")
	b.WriteString("[client]\nsocket = " + SocketPath + "\n")
	return b.String()
}

// authGroups are the version-specific settings of OperatorMyCnf.
var authGroups = []struct {
	why      string
	versions []string
	options  []string
}{
	{
		why:      "MySQL 8.0-8.3: new accounts use mysql_native_password (default_authentication_plugin).",
		versions: []string{"8.0", "8.1", "8.2", "8.3"},
		options:  []string{"default-authentication-plugin = mysql_native_password"},
	},
	{
		why:      "MySQL 8.4: mysql_native_password is off by default and default_authentication_plugin is gone.",
		versions: []string{"8.4"},
		options:  []string{"mysql-native-password = ON", "authentication-policy = mysql_native_password,,"},
	},
}
