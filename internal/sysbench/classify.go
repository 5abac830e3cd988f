package sysbench

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
)

// How sysbench 1.0.20 prints MySQL errors in FATAL lines (see the fixtures):
//
//	FATAL: error 1045: Access denied for user ...
//	FATAL: MySQL error: 1146 "Table 'sbfresh.sbtest1' doesn't exist"
//	FATAL: mysql_stmt_execute() returned error 2013 (Lost connection ...) for query '...'
//	FATAL: `thread_run' function failed: ...: SQL error, errno = 2013, state = 'HY000': Lost ...
var errorPatterns = []*regexp.Regexp{
	regexp.MustCompile(`\berror (\d{4,5}): (.*)$`),
	regexp.MustCompile(`MySQL error: (\d{4,5}) "(.*)"`),
	regexp.MustCompile(`returned error (\d{4,5}) \((.*?)\)(?: for query|$)`),
	regexp.MustCompile(`errno = (\d{4,5}), state = '[^']*': (.*)$`),
}

// privilegeList names Privileges for the user.
var privilegeList = strings.Join(Privileges[:len(Privileges)-1], ", ") + " and " + Privileges[len(Privileges)-1]

// meanings are the errors a benchmark step runs into, said so the user knows what to fix.
var meanings = map[int]string{
	1040: "too many connections: the server's max_connections is below the step's thread count (raise max_connections above the ladder's largest thread count)",
	1044: "access denied to the database: grant the benchmark user " + privilegeList + " on it",
	1045: "access denied for the benchmark user (check user and password in the connection Secret)",
	1049: "unknown database: create it, or fix the database key of the connection Secret (default sbtest)",
	1050: "the sbtest tables already exist: drop them, or set workload.skipPrepare to benchmark the existing data",
	1114: "a table is full: the server ran out of storage (raise spec.storage.size)",
	1142: "a privilege is missing: the benchmark user needs " + privilegeList + " on its database (the servers the " +
		"operator runs grant exactly these, so a custom script that needs more cannot run on them)",
	1146: "table missing: the sbtest tables are not prepared (let the operator run prepare, or load them before using workload.skipPrepare)",
	1203: "the benchmark user exceeded max_user_connections: raise it above the ladder's largest thread count",
	1205: "lock wait timeout exceeded",
	1213: "deadlock",
	1251: "the server's authentication method is not supported by sysbench's client library: create the benchmark user with mysql_native_password",
	1290: "the server runs with --read-only",
	2002: "cannot connect to the server: it is not running or not listening on that host and port",
	2003: "cannot connect to the server: it is not running or not listening on that host and port",
	2005: "unknown server host: check the host key of the connection Secret",
	2006: "the server has gone away during the step: it probably died or restarted (check its logs and memory limit)",
	2013: "lost connection to the server during the step: it probably died or restarted (check its logs and memory limit)",
	2059: "the server's authentication plugin (e.g. caching_sha2_password) cannot be loaded by sysbench's client library: create the benchmark user with mysql_native_password",
}

// Lines that only say "something above failed"; the line before them says what.
var genericFatal = []string{
	"Thread initialization failed",
	"unable to connect to MySQL server",
	"mysql_stmt_prepare() failed",
	"connection creation failed",
	"SQL API error",
}

// MaxReason keeps a reason readable in a condition message. Classify does not cut its reasons
// (they quote the client's lines, which a custom script may fill with anything): whoever shows
// one hides the credentials first and cuts it to MaxReason after, so that no credential is cut
// in half and half shown.
const MaxReason = 480

// Classify decides a finished sysbench container from its exit code and output (a log, or a
// termination message read with ParseOutput). It returns nil when the step succeeded: exit 0, a
// final report, and no error lines. Anything else is a Failure with a human reason.
func Classify(exitCode int32, out load.Output) *load.Failure {
	if exitCode == 0 && out.Final != nil && len(out.Fatal) == 0 {
		return nil
	}
	for _, line := range out.Fatal {
		if strings.HasPrefix(line, DigestMismatch) {
			// The Lua mounted in the pod is not what the operator checked: someone changed a
			// ConfigMap under the run. Another attempt would mount the same, so it is not retried.
			return &load.Failure{Deterministic: true, Reason: "the step did not run: a script mounted into its pod is not the " +
				"content the operator checked (its ConfigMap was changed or replaced after the check; find out who changed it, " +
				"restore it and start a new run): " + strings.TrimSpace(strings.TrimPrefix(line, "FATAL: mysqlbench: "))}
		}
	}
	if code, detail, ok := mysqlError(out.Fatal); ok {
		meaning, known := meanings[code]
		if !known {
			meaning = detail
			detail = ""
		}
		reason := fmt.Sprintf("error %d: %s", code, meaning)
		if detail != "" {
			reason += "; sysbench reported: " + detail
		}
		return &load.Failure{Code: code, Reason: reason}
	}
	for _, line := range out.Fatal {
		if strings.HasPrefix(line, "invalid option") {
			return &load.Failure{Reason: "sysbench rejected an option (check workload.extraArgs and the script's options): " + line}
		}
	}
	if line := firstSpecific(out.Fatal); line != "" {
		return &load.Failure{Reason: fmt.Sprintf("sysbench failed (exit code %d): %s", exitCode, line)}
	}
	switch {
	case exitCode == 0 && out.Final == nil:
		return &load.Failure{Reason: "sysbench exited 0 without a final report: the mysqlbench reporter did not run " +
			"(is the reporter ConfigMap mounted at " + ReporterMountPath + " and the image a sysbench 1.0.x?)"}
	case out.Final != nil:
		return &load.Failure{Reason: fmt.Sprintf("sysbench exited with code %d (%s) after its final report", exitCode, exitMeaning(exitCode))}
	default:
		return &load.Failure{Reason: fmt.Sprintf("sysbench exited with code %d (%s) without a final report", exitCode, exitMeaning(exitCode))}
	}
}

// mysqlError returns the first MySQL error code in the error lines: the first failure is the
// cause, later ones are usually its consequences.
func mysqlError(lines []string) (int, string, bool) {
	for _, line := range lines {
		for _, re := range errorPatterns {
			m := re.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			code, err := strconv.Atoi(m[1])
			if err != nil {
				continue
			}
			return code, strings.TrimSpace(m[2]), true
		}
	}
	return 0, "", false
}

func firstSpecific(lines []string) string {
	first := ""
	for _, line := range lines {
		msg := strings.TrimSpace(strings.TrimPrefix(line, "FATAL:"))
		if first == "" {
			first = msg
		}
		generic := false
		for _, g := range genericFatal {
			if strings.Contains(msg, g) {
				generic = true
				break
			}
		}
		if !generic {
			return msg
		}
	}
	return first
}

func exitMeaning(code int32) string {
	switch code {
	case 1:
		return "failure"
	case 2:
		return "forced shutdown after --time"
	case 126, 127:
		return "sysbench or /bin/sh not found in the image"
	case 134:
		return "aborted, SIGABRT"
	case 137:
		return "killed, SIGKILL: often the container's memory limit"
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
