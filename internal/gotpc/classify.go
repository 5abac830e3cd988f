package gotpc

import (
	"regexp"
	"strconv"
	"strings"
)

// Failure is why a go-tpc step failed, said so the user knows what to fix.
type Failure struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Retryable failures may pass on a new attempt (the server was not up yet, or died).
	Retryable bool `json:"retryable,omitempty"`
}

// Reasons of Classify.
const (
	ReasonConnect        = "ConnectFailed"
	ReasonConnectionLost = "ConnectionLost"
	ReasonAccessDenied   = "AccessDenied"
	ReasonUnknownDB      = "UnknownDatabase"
	ReasonTablesMissing  = "TablesMissing"
	ReasonKilled         = "Killed"
	ReasonNothing        = "MeasuredNothing"
	ReasonFailed         = "Failed"
)

// How go-tpc v1.0.7 fails (see testdata). It swallows the driver's error when the first ping
// fails, so a refused connection, a wrong password and a database the user may not use all
// print the same panic; only the data phases carry the server's message.
//
//	panic: failed to connect to database when loading data
//	panic: Error 1146: Table 'tpcc.customer' doesn't exist
//	Got signal [terminated] to exit.
var (
	connectPanic   = regexp.MustCompile(`(?m)^panic: failed to connect to database`)
	tableMissing   = regexp.MustCompile(`Error 1146: Table '[^']*' doesn't exist`)
	accessDenied   = regexp.MustCompile(`Error 104[45]: Access denied`)
	unknownDB      = regexp.MustCompile(`Error 1049: Unknown database`)
	connectionLost = regexp.MustCompile(`invalid connection|driver: bad connection|connection refused|broken pipe|connection reset by peer|Error 2013|Error 1053`)
	gotSignal      = regexp.MustCompile(`(?m)^Got signal \[`)
)

// Classify says why a go-tpc step with this output and exit code failed; failed is false when it
// succeeded (exit code 0 and, for a run, a parsable result).
func Classify(phase Phase, output string, exitCode int) (f Failure, failed bool) {
	switch {
	case connectPanic.MatchString(output):
		return Failure{ReasonConnect, "go-tpc could not connect: the server is not up on that host and port, " +
			"or the user, password or database of the connection Secret are wrong (go-tpc does not say which)", true}, true
	case tableMissing.MatchString(output):
		return Failure{ReasonTablesMissing, "the TPC-C tables are missing: " + tableMissing.FindString(output) +
			" (run go-tpc tpcc prepare with the same warehouses first)", false}, true
	case accessDenied.MatchString(output):
		return Failure{ReasonAccessDenied, "access denied: " + firstLine(output, accessDenied) +
			" (check user and password in the connection Secret and the user's grants on the database)", false}, true
	case unknownDB.MatchString(output):
		return Failure{ReasonUnknownDB, "unknown database: " + firstLine(output, unknownDB), false}, true
	case gotSignal.MatchString(output) || exitCode == 137 || exitCode == 143 || exitCode < 0:
		return Failure{ReasonKilled, "go-tpc was stopped by a signal before it finished (deadline, eviction or OOM kill)", true}, true
	case connectionLost.MatchString(output) && !completedRun(phase, output, exitCode):
		return Failure{ReasonConnectionLost, "lost the connection to the server during the step: it probably died or " +
			"restarted (check its logs and memory limit): " + firstLine(output, connectionLost), true}, true
	}
	if exitCode != 0 {
		return Failure{ReasonFailed, "go-tpc exited with code " + strconv.Itoa(exitCode) + ": " + lastLines(output, 3), false}, true
	}
	if phase == PhaseRun {
		if _, err := Parse(output); err != nil {
			return Failure{ReasonNothing, "go-tpc run measured nothing: " + err.Error(), true}, true
		}
	}
	return Failure{}, false
}

// completedRun says whether a run ended on its own with a result. At its deadline go-tpc cancels
// the transactions in flight, and the driver may log "invalid connection" for one of them (seen
// on MariaDB 10.11, 1 run in 5): the run still prints its summary and exits 0, the cancelled
// transactions counted in the *_ERR lines. A server that went away mid-run is the operator's to
// notice (its restart watch), and without --ignore-error go-tpc exits non-zero.
func completedRun(phase Phase, output string, exitCode int) bool {
	if phase != PhaseRun || exitCode != 0 {
		return false
	}
	_, err := Parse(output)
	return err == nil
}

func firstLine(output string, re *regexp.Regexp) string {
	for _, l := range strings.Split(output, "\n") {
		if re.MatchString(l) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

func lastLines(output string, n int) string {
	lines := strings.Split(strings.TrimSpace(output), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
