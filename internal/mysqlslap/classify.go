package mysqlslap

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// How mysqlslap reports errors (see testdata): mostly without a MySQL error code, so the code
// comes from the server's or the client library's (English) message; a connection error
// sometimes has one.
//
//	mariadb-slap: Error when connecting to server: Access denied for user 'u'@'127.0.0.1' (using password: YES)
//	mysqlslap: Error when connecting to server: 1049 Unknown database 'mysqlslap'
//	mysqlslap: Cannot drop database 'mysqlslap' ERROR : Access denied for user 'nop'@'%' to database 'mysqlslap'
//	mysqlslap: Cannot run query INSERT INTO t1 VALUES (...) ERROR : INSERT command denied to user ...
//	mysqlslap: [ERROR] unknown variable 'foo=1'.
var explicitCode = regexp.MustCompile(`server: (\d{4,5}) (.*)$`)

// messageCodes map the messages mysqlslap prints without a code to the code. Both flavours'
// texts: MariaDB's client says "server" where MySQL's says "MySQL server".
var messageCodes = []struct {
	re   *regexp.Regexp
	code int
}{
	{regexp.MustCompile(`Access denied for user '.*'@'.*' \(using password: `), 1045},
	{regexp.MustCompile(`Access denied for user '.*'@'.*' to database `), 1044},
	{regexp.MustCompile(` command denied to user `), 1142},
	{regexp.MustCompile(`Unknown (MySQL )?server host `), 2005},
	{regexp.MustCompile(`Can't connect to (MySQL )?server on `), 2003},
	{regexp.MustCompile(`Can't connect to local (MySQL )?server through socket`), 2002},
	{regexp.MustCompile(`Too many connections`), 1040},
	{regexp.MustCompile(`has exceeded the 'max_user_connections' resource`), 1203},
	{regexp.MustCompile(`Unknown database `), 1049},
	{regexp.MustCompile(`Table '.*' doesn't exist`), 1146},
	{regexp.MustCompile(`You have an error in your SQL syntax`), 1064},
	{regexp.MustCompile(`The table '.*' is full`), 1114},
	{regexp.MustCompile(`Lock wait timeout exceeded`), 1205},
	{regexp.MustCompile(`Deadlock found when trying to get lock`), 1213},
	{regexp.MustCompile(`running with the --read-only option`), 1290},
	{regexp.MustCompile(`Lost connection to (MySQL )?server`), 2013},
	{regexp.MustCompile(`(MySQL )?server has gone away`), 2006},
	{regexp.MustCompile(`Authentication plugin '.*' cannot be loaded|Plugin .* could not be loaded`), 2059},
	{regexp.MustCompile(`Can't create database '.*'; database exists`), 1007},
}

// privilegeList names sysbench.Privileges for the user.
var privilegeList = strings.Join(sysbench.Privileges[:len(sysbench.Privileges)-1], ", ") + " and " +
	sysbench.Privileges[len(sysbench.Privileges)-1]

// meanings are the errors a mysqlslap step runs into, said so the user knows what to fix.
var meanings = map[int]string{
	1007: "the schema " + Schema + " already exists and mysqlslap would not drop it",
	1040: "too many connections: the server's max_connections is below the step's concurrency (raise max_connections above the ladder's largest thread count)",
	1044: "access denied to the schema " + Schema + ", which mysqlslap drops and re-creates at every step: grant the benchmark user " +
		privilegeList + " on `" + Schema + "`.* (the servers the operator runs have them)",
	1045: "access denied for the benchmark user (check user and password in the connection Secret)",
	1049: "unknown database: mysqlslap's clients connect to the schema " + Schema + ", which mysqlslap creates only with create statements " +
		"(Build adds one; was the schema dropped during the step?)",
	1064: "SQL syntax error in a --query or --create of workload.mysqlslap.args",
	1114: "a table is full: the server ran out of storage (raise spec.storage.size)",
	1142: "a privilege is missing: the benchmark user needs " + privilegeList + " on `" + Schema + "`.*, the schema mysqlslap " +
		"runs in (the operator's servers grant exactly these)",
	1146: "table missing: a --query of workload.mysqlslap.args names a table that is not in the schema " + Schema +
		" (mysqlslap runs the queries there: create the table with --create, or name the table with its database)",
	1203: "the benchmark user exceeded max_user_connections: raise it above the ladder's largest thread count",
	1205: "lock wait timeout exceeded",
	1213: "deadlock",
	1290: "the server runs with --read-only",
	2002: "cannot connect to the server: it is not running or not listening on that host and port",
	2003: "cannot connect to the server: it is not running or not listening on that host and port",
	2005: "unknown server host: check the host key of the connection Secret",
	2006: "the server has gone away during the step: it probably died or restarted (check its logs and memory limit)",
	2013: "lost connection to the server during the step: it probably died or restarted (check its logs and memory limit)",
	2059: "the server's authentication plugin cannot be loaded by mysqlslap's client library: use an image whose client matches the server (workload.mysqlslap.image)",
}

// Classify decides a finished mysqlslap container from its exit code and output (a log, or its
// termination message, read with ParseOutput): sysbench.Classify's counterpart for mysqlslap's
// formats. It returns nil when the step succeeded: exit 0, a Benchmark report with queries and a
// measurable time, and no error lines (mysqlslap exits 0 after a failed query). Anything else is
// a Failure whose reason quotes mysqlslap's line (which never holds the password) and carries
// the MySQL error code when the line has one or its message is a known one.
func Classify(exitCode int32, out load.Output) *load.Failure {
	f := out.Final
	if exitCode == 0 && f != nil && len(out.Fatal) == 0 && f.Queries.Total > 0 && f.DurationSeconds > 0 {
		return nil
	}
	if code, line, ok := mysqlError(out.Fatal); ok {
		line = shortQuery(line)
		reason := fmt.Sprintf("error %d: %s; mysqlslap reported: %s", code, meanings[code], line)
		if _, known := meanings[code]; !known {
			reason = fmt.Sprintf("error %d: mysqlslap reported: %s", code, line)
		}
		return &load.Failure{Code: code, Reason: reason}
	}
	for _, line := range out.Fatal {
		if strings.Contains(line, "unknown variable") || strings.Contains(line, "unknown option") ||
			strings.Contains(line, "ambiguous option") {
			return &load.Failure{Reason: "mysqlslap rejected an option (check workload.mysqlslap.args): " + line}
		}
	}
	if len(out.Fatal) > 0 {
		line := strings.TrimSpace(strings.TrimPrefix(out.Fatal[0], "FATAL:"))
		return &load.Failure{Reason: fmt.Sprintf("mysqlslap failed (exit code %d): %s", exitCode, line)}
	}
	switch {
	case exitCode != 0:
		return &load.Failure{Reason: fmt.Sprintf("mysqlslap exited with code %d (%s)%s", exitCode, exitMeaning(exitCode), reported(f))}
	case f == nil:
		return &load.Failure{Reason: "mysqlslap exited 0 without its Benchmark report"}
	// The last two measured nothing, and the options decide that: another attempt would too.
	case f.Queries.Total == 0:
		return &load.Failure{Deterministic: true, Reason: fmt.Sprintf("the step measured nothing: mysqlslap ran no queries "+
			"(%d clients, 0 each, in %.3f s): raise workload.mysqlslap.queries to at least the step's concurrency",
			f.Threads, f.DurationSeconds)}
	default:
		return &load.Failure{Deterministic: true, Reason: fmt.Sprintf("the step measured nothing: mysqlslap ran its %d "+
			"queries in under a millisecond, too short to measure (it reports seconds with three decimals): raise "+
			"workload.mysqlslap.queries", f.Queries.Total)}
	}
}

// shortQuery cuts the query out of a "Cannot run query <query> ERROR : <message>" line to its
// first 60 bytes, so that a reason has room for the message.
func shortQuery(line string) string {
	const mark, sep = "Cannot run query ", " ERROR : "
	i, j := strings.Index(line, mark), strings.LastIndex(line, sep)
	if i < 0 || j < i+len(mark) {
		return line
	}
	query := line[i+len(mark) : j]
	if len(query) <= 60 {
		return line
	}
	return line[:i+len(mark)] + bounded.Head(query, 60) + line[j:]
}

func reported(f *load.Final) string {
	if f == nil {
		return " without a Benchmark report"
	}
	return " after its Benchmark report"
}

// mysqlError returns the first MySQL error code in mysqlslap's error lines, with the line: the
// first failure is the cause, later ones are usually its consequences.
func mysqlError(lines []string) (int, string, bool) {
	for _, line := range lines {
		if m := explicitCode.FindStringSubmatch(line); m != nil {
			if code, err := strconv.Atoi(m[1]); err == nil {
				return code, line, true
			}
		}
		for _, mc := range messageCodes {
			if mc.re.MatchString(line) {
				return mc.code, line, true
			}
		}
	}
	return 0, "", false
}

func exitMeaning(code int32) string {
	switch code {
	case 1:
		return "failure"
	case 7:
		return "bad options"
	case 126, 127:
		return "/bin/sh or mysqlslap not found in the image"
	case 137:
		return "killed, SIGKILL: often the container's memory limit or the step's deadline"
	case 139:
		return "crashed, SIGSEGV"
	case 143:
		return "terminated, SIGTERM"
	}
	if code > 128 && code < 160 {
		return fmt.Sprintf("killed by signal %d", code-128)
	}
	return "failure"
}
