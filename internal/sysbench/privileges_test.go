package sysbench

import (
	"strings"
	"testing"
)

func TestGrantSQL(t *testing.T) {
	got := GrantSQL("sb'test", "%", "sb`db")
	want := "-- The benchmark account gets only what sysbench needs on its database and mysqlslap on its own schema, and reads the server's counters (mysqlbench-operator).\n" +
		"REVOKE ALL PRIVILEGES ON `sb``db`.* FROM 'sb''test'@'%';\n" +
		"GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX ON `sb``db`.* TO 'sb''test'@'%';\n" +
		"GRANT SELECT ON `performance_schema`.* TO 'sb''test'@'%';\n" +
		"GRANT PROCESS ON *.* TO 'sb''test'@'%';\n" +
		"GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX ON `mysqlslap`.* TO 'sb''test'@'%';\n"
	if got != want {
		t.Errorf("GrantSQL:\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(got, "ALL PRIVILEGES ON `mysqlslap`") || strings.Contains(got, "GRANT ALL") {
		t.Errorf("GrantSQL grants ALL: %s", got)
	}
}
