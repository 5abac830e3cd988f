package specs

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// ConnectionHeadroom is how many connections the operator asks for beyond the ladder's peak: the
// probe, a DBA's session, and the server's own replication or event threads.
const ConnectionHeadroom = 10

// ServerLockConnections are the connections a measuring step holds beside its threads: its
// server lock's, and the next step's client's, waiting for that lock (TargetLadderStep); a
// server snapshot's connection comes after the threads have gone.
const ServerLockConnections = 2

// serverDefaultMaxConnections is MySQL's and MariaDB's own default; the operator never lowers it.
const serverDefaultMaxConnections = 151

// SynchWaitsCnf is what a target's synchWaits adds: performance_schema on (MariaDB's default is
// off) with the synchronization wait instruments enabled and timed. loose-: MySQL 5.5 has no
// performance-schema-instrument option and must still start.
const SynchWaitsCnf = "# synchWaits: performance_schema with the wait/synch instruments (mutexes, rw-locks, conditions).\n" +
	"performance_schema = ON\n" +
	"loose-performance-schema-instrument = 'wait/synch/%=ON'\n"

// RequiredMaxConnections is the max_connections the operator sets: the ladder's peak plus
// headroom, and never below the servers' own default.
func RequiredMaxConnections(l v1.Ladder) int {
	return max(serverDefaultMaxConnections, int(l.PeakConnections())+ConnectionHeadroom)
}

// UserMyCnf returns the target's myCnf as a config file: a [mysqld] header is added when the
// text starts with options, so `performance_schema = OFF` alone is enough.
func UserMyCnf(t v1.Target) string {
	text := strings.TrimSpace(t.MyCnf)
	if text == "" {
		return ""
	}
	if first := firstSetting(text); first != "" && !strings.HasPrefix(first, "[") {
		text = "[mysqld]\n" + text
	}
	return text + "\n"
}

func firstSetting(text string) string {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, ";") {
			return line
		}
	}
	return ""
}

// The admission rules of targets[].myCnf, as the CRD's CEL rules state them (see the MyCnf field
// in api/v1alpha1): the same RE2 patterns, applied line by line instead of to the whole text.
// cnfBlank is what the servers' option file parser skips at the start of a line (my_isspace
// without the newline that ends it).
const cnfBlank = `[ \t\r\f\v]`

var (
	// serverGroupHeader is a header of a group only the server reads, alone on its line but for
	// blanks and a comment: [mysqld], [server], [mariadb], [mariadbd], [galera] (read by wsrep
	// builds of mariadbd) and the version groups [mysqld-8.4], [mariadb-11.8], [mariadbd-10.11].
	// mariadbd also reads [client-server], but so do the clients in the server's container (the
	// health checks), so it is refused. Blanks before the "]" are what the parser trims; a blank
	// after the "[" names another group, which no server reads.
	serverGroupHeader = regexp.MustCompile(`^[[](?i:mysqld|server|mariadb|mariadbd|galera|(?:mysqld|mariadb|mariadbd)-[0-9]+(?:[.][0-9]+)*)` +
		cnfBlank + `*]` + cnfBlank + `*(?:[#;].*)?$`)
	// ownedOption is a line setting a server option the operator sets and depends on: it connects
	// and health-checks the server through port, socket and bind-address (and needs networking
	// and the grant tables), and keeps the data on the run's volume. Dashes and underscores are
	// the same to the servers, loose- only turns an unknown option into a warning, and a # ends
	// the name (remove_end_comment), so `skip-networking # off` sets it too. Names that merely
	// contain one (report_port, innodb_data_home_dir) are not it.
	ownedOption = regexp.MustCompile(`(?i)^(?:loose[-_])?(port|socket|bind[-_]address|skip[-_]networking|skip[-_]grant[-_]tables|datadir)` +
		cnfBlank + `*(?:[=#]|$)`)
)

// ValidateMyCnf reports the first line of a target's myCnf that breaks an admission rule, with
// what to change; nil when the text is acceptable. The API server applies the same rules (CEL on
// the field), so this matters for objects stored before the rules existed, and it is the rules'
// one readable statement. A line, after leading blanks, may be empty, a # or ; comment, an
// option, or a server group header; it must not be
//   - a header of any other group ([client], [client-server], [mysqldump], [embedded], ...):
//     only [mysqld], [server], [mariadb], [mariadbd], [galera] and version groups;
//   - an !include or !includedir directive, also with blanks after the "!";
//   - an option the operator owns: port, socket, bind-address, skip-networking,
//     skip-grant-tables or datadir, with dashes or underscores, loose- or not.
func ValidateMyCnf(s string) error {
	for i, raw := range strings.Split(s, "\n") {
		n := i + 1
		line := strings.TrimLeft(raw, " \t\r\f\v")
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '!' && strings.HasPrefix(strings.TrimLeft(line[1:], " \t\r\f\v"), "include"):
			// The servers skip blanks after the "!" (mysys search_default_file).
			return fmt.Errorf("myCnf line %d: %q: !include and !includedir are not allowed (the server would read "+
				"files the run does not describe); put the options themselves in myCnf", n, strings.TrimSpace(line))
		case line[0] == '[':
			if serverGroupHeader.MatchString(line) {
				continue
			}
			name, _, closed := strings.Cut(line[1:], "]")
			switch {
			case !closed:
				return fmt.Errorf("myCnf line %d: %q: a group header needs its closing ]", n, strings.TrimSpace(line))
			case serverGroupHeader.MatchString("[" + strings.TrimRight(name, " \t\r\f\v") + "]"):
				return fmt.Errorf("myCnf line %d: %q: only blanks and a # or ; comment may follow a group header", n, strings.TrimSpace(line))
			case serverGroupHeader.MatchString("[" + strings.Trim(name, " \t\r\f\v") + "]"):
				return fmt.Errorf("myCnf line %d: [%s]: remove the blanks after the [ (the servers would read a group named %q, "+
					"which none of them reads)", n, name, name)
			}
			return fmt.Errorf("myCnf line %d: [%s] is not a server option group: use [mysqld], [server], [mariadb], "+
				"[mariadbd], [galera] or a version group such as [mysqld-8.4]; client options such as [client] password "+
				"belong to the client, not the server's my.cnf", n, name)
		default:
			if m := ownedOption.FindStringSubmatch(line); m != nil {
				name := strings.ReplaceAll(strings.ToLower(m[1]), "-", "_")
				return fmt.Errorf("myCnf line %d sets %s, which the operator owns (it connects and health-checks "+
					"the server through port, socket and bind-address, and keeps the data on the run's volume): remove it", n, name)
			}
		}
	}
	return nil
}

// CheckMyCnf rejects target overrides that would break the run, with a message that says what
// to change: what ValidateMyCnf rejects, and a max_connections below the ladder's peak thread
// count plus ServerLockConnections, which would fail the top steps with error 1040.
func CheckMyCnf(spec v1.BenchmarkRunSpec, t v1.Target) error {
	if err := ValidateMyCnf(t.MyCnf); err != nil {
		return fmt.Errorf("target %s: %w", t.Name, err)
	}
	peak := int(spec.Ladder.PeakConnections())
	// The server keeps the last max_connections it reads, so only that one matters.
	last, set := 0, false
	psOff := 0 // the line of the last performance_schema setting when it turns it off
	// Read the user's text itself, so line numbers match what they wrote; options before any
	// header are in [mysqld], as UserMyCnf makes them.
	sc := bufio.NewScanner(strings.NewReader(t.MyCnf))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' || line[0] == '[' || line[0] == '!' {
			continue
		}
		name, value, _ := strings.Cut(line, "=")
		name = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
		name = strings.TrimPrefix(name, "loose_")
		if name == "performance_schema" || name == "skip_performance_schema" {
			psOff = 0
			if off := optionOff(name, removeEndComment(value)); off {
				psOff = n
			}
			continue
		}
		if name != "max_connections" {
			continue
		}
		value = strings.Trim(strings.TrimSpace(removeEndComment(value)), `"'`)
		v, err := parseOptionInt(value)
		if err != nil {
			return fmt.Errorf("target %s: myCnf line %d sets max_connections to %q, which is not a number", t.Name, n, value)
		}
		last, set = v, true
	}
	if t.SynchWaits && psOff > 0 {
		return fmt.Errorf("target %s: synchWaits needs performance_schema, which myCnf line %d turns off: "+
			"remove that line or synchWaits", t.Name, psOff)
	}
	if need := peak + ServerLockConnections; set && last < need {
		return fmt.Errorf("target %s: myCnf sets max_connections = %d, but the ladder opens up to %d connections "+
			"and %d more besides (error 1040, too many connections, at the top steps): raise it to at least %d or remove it "+
			"(the operator sets %d)", t.Name, last, peak, ServerLockConnections, need, RequiredMaxConnections(spec.Ladder))
	}
	return nil
}

// optionOff says whether a performance_schema (or skip-performance-schema) line turns
// performance_schema off: OFF, 0 or FALSE, or skip- with no value or a true one.
func optionOff(name, value string) bool {
	v := strings.ToLower(strings.Trim(strings.TrimSpace(value), `"'`))
	isFalse := v == "off" || v == "0" || v == "false"
	if name == "skip_performance_schema" {
		return !isFalse
	}
	return isFalse
}

// removeEndComment cuts a value at a "#" outside quotes, as the servers' option file parser
// does (mysys remove_end_comment): `max_connections = 2000  # for the ladder` is 2000.
func removeEndComment(s string) string {
	var quote byte
	escape := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c == '\'' || c == '"') && !escape {
			switch quote {
			case 0:
				quote = c
			case c:
				quote = 0
			}
		}
		if quote == 0 && c == '#' {
			return s[:i]
		}
		escape = quote != 0 && c == '\\' && !escape
	}
	return s
}

// parseOptionInt reads an integer option value with the K, M and G suffixes the servers accept.
func parseOptionInt(s string) (int, error) {
	mult := 1
	if s != "" {
		switch s[len(s)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			s = s[:len(s)-1]
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, err
	}
	return v * mult, nil
}

// ConfiguredRedoBytes is the redo log a myCnf configures, 0 when it leaves the default: the
// larger of innodb_redo_log_capacity (MySQL 8.0.30 and later) and innodb_log_file_size ×
// innodb_log_files_in_group (2 unless set; MariaDB 10.5 and later keep one file, so this may
// count twice what MariaDB allocates, which only makes the limit roomier). The last setting of an
// option wins, as in the servers; values that are not numbers are ignored (the server rejects
// them itself).
func ConfiguredRedoBytes(myCnf string) int64 {
	var capacity, fileSize int64
	files := int64(2)
	sc := bufio.NewScanner(strings.NewReader(myCnf))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' || line[0] == '[' || line[0] == '!' {
			continue
		}
		name, value, _ := strings.Cut(line, "=")
		name = strings.TrimPrefix(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_"), "loose_")
		v, err := parseOptionInt(strings.Trim(strings.TrimSpace(removeEndComment(value)), `"'`))
		if err != nil || v < 0 {
			continue
		}
		switch name {
		case "innodb_redo_log_capacity":
			capacity = int64(v)
		case "innodb_log_file_size":
			fileSize = int64(v)
		case "innodb_log_files_in_group":
			files = int64(v)
		}
	}
	return max(capacity, fileSize*files)
}
