package sysbench

import (
	"fmt"
	"strings"
)

// Privileges are what the benchmark account needs on its database for every phase Build runs,
// and no more:
//   - prepare (the stock oltp_common cmd_prepare, wrapped by the reporter): DROP TABLE IF EXISTS
//     of the tables it is about to fill (DROP), CREATE TABLE (CREATE), the INSERTs (INSERT), and
//     CREATE INDEX k_N of the secondary index (INDEX);
//   - run and warm-up, every stock OLTP script: SELECT, UPDATE, DELETE and INSERT on the sbtest
//     tables (transactions need no privilege);
//   - cleanup: DROP TABLE IF EXISTS (DROP);
//   - probe: SELECT VERSION() needs nothing, and counting the sbtest tables in
//     information_schema.tables shows the tables the account has any privilege on.
//
// The account needs nothing else on its database and, to run sysbench, no global privilege. A
// custom script that needs more (ALTER, CREATE VIEW, ...) fails with error 1142.
var Privileges = []string{"SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "INDEX"}

// ServerStatsGrants are what a run's server snapshots (Step.ServerStats) need beyond Privileges,
// as GRANT clauses: SELECT on performance_schema for the wait events
// (events_waits_summary_global_by_event_name), and the global PROCESS privilege for
// information_schema.INNODB_METRICS. SHOW GLOBAL STATUS and SHOW GLOBAL VARIABLES need nothing.
// An account without them (an external server's) still runs every step; its snapshots then say
// which sections they could not read.
var ServerStatsGrants = []string{"SELECT ON `performance_schema`.*", "PROCESS ON *.*"}

// MysqlslapSchema is the schema mysqlslap (workload.client mysqlslap, internal/mysqlslap) runs in:
// at every step it drops it, creates it with its table, runs the load and drops it again, so it
// must never be the account's own database. GrantSQL gives the account Privileges on it: what
// mysqlslap needs (measured with MariaDB 10.11's mariadb-slap and MySQL 9.7's mysqlslap: DROP and
// CREATE for DROP/CREATE SCHEMA and its table, INSERT, SELECT and UPDATE for the load types; an
// account with SELECT alone fails with error 1044 at the first DROP SCHEMA), and DELETE and INDEX
// for a --query of workload.mysqlslap.args, as sysbench's custom scripts get. The schema holds
// nothing but mysqlslap's own table.
const MysqlslapSchema = "mysqlslap"

// GrantSQL narrows the account user@host, which the server images' entrypoints create with ALL
// PRIVILEGES on database (MYSQL_USER, MYSQL_DATABASE), down to Privileges, and adds
// ServerStatsGrants and Privileges on MysqlslapSchema (for runs whose client is mysqlslap). It is
// SQL that MySQL 5.5 to 9.x, Percona Server and MariaDB all accept; the account must already have
// a grant on database (REVOKE of a grant that does not exist fails with error 1141). The names
// must not contain a backslash.
//
// ServerStatsGrants and the grant on MysqlslapSchema are given whether or not a run takes
// snapshots or runs mysqlslap, so that the server, whose init script runs once, never depends on
// those options; a grant on a schema that does not exist yet is valid on every flavour. They are
// safe on the operator's own servers, each a run's throwaway server with no other data and no
// other clients:
//   - PROCESS shows every session's current statement (SHOW PROCESSLIST) and InnoDB's internals;
//     the only sessions are sysbench's own and root's over the socket inside the pod. It does not
//     allow killing them or changing anything.
//   - SELECT on performance_schema reads its tables, statement texts included, but changes no
//     instrument (that takes UPDATE). The tables live in memory, and the images' entrypoints
//     create the accounts, passwords included, in a temporary server that they stop before the
//     real one starts, so no statement with a password is there to read.
func GrantSQL(user, host, database string) string {
	account := sqlString(user) + "@" + sqlString(host)
	on := sqlIdent(database) + ".*"
	var b strings.Builder
	fmt.Fprintf(&b, "-- The benchmark account gets only what sysbench needs on its database and mysqlslap on its own schema, and reads the server's counters (mysqlbench-operator).\n"+
		"REVOKE ALL PRIVILEGES ON %s FROM %s;\nGRANT %s ON %s TO %s;\n",
		on, account, strings.Join(Privileges, ", "), on, account)
	for _, g := range ServerStatsGrants {
		fmt.Fprintf(&b, "GRANT %s TO %s;\n", g, account)
	}
	fmt.Fprintf(&b, "GRANT %s ON %s.* TO %s;\n", strings.Join(Privileges, ", "), sqlIdent(MysqlslapSchema), account)
	return b.String()
}

// sqlString quotes s as a SQL string literal. A quote is doubled, which every sql_mode reads
// alike; a backslash is not escaped, as NO_BACKSLASH_ESCAPES would read the escape literally, so
// s must not contain one (GrantSQL's callers pass the operator's own names).
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// sqlIdent quotes s as a SQL identifier.
func sqlIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
