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
// The account needs nothing on other databases (the server's own included) and no global
// privilege. A custom script that needs more (ALTER, CREATE VIEW, ...) fails with error 1142.
var Privileges = []string{"SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "INDEX"}

// GrantSQL narrows the account user@host, which the server images' entrypoints create with ALL
// PRIVILEGES on database (MYSQL_USER, MYSQL_DATABASE), down to Privileges. It is SQL that MySQL
// 5.5 to 9.x, Percona Server and MariaDB all accept; the account must already have a grant on
// database (REVOKE of a grant that does not exist fails with error 1141). The names must not
// contain a backslash.
func GrantSQL(user, host, database string) string {
	account := sqlString(user) + "@" + sqlString(host)
	on := sqlIdent(database) + ".*"
	return fmt.Sprintf("-- The benchmark account gets only what sysbench needs on its database (mysqlbench-operator).\n"+
		"REVOKE ALL PRIVILEGES ON %s FROM %s;\nGRANT %s ON %s TO %s;\n",
		on, account, strings.Join(Privileges, ", "), on, account)
}

// sqlString quotes s as a SQL string literal. A quote is doubled, which every sql_mode reads
// alike; a backslash is not escaped, as NO_BACKSLASH_ESCAPES would read the escape literally, so
// s must not contain one (GrantSQL's callers pass the operator's own names).
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// sqlIdent quotes s as a SQL identifier.
func sqlIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
