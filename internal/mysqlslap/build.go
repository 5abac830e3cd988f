// Package mysqlslap runs mysqlslap (MySQL's) or mariadb-slap (MariaDB's) as a benchmark client:
// Build is the container's command line, ParseOutput reads what it printed into the Output every
// client fills (internal/client/load), and Classify says why a step failed, so the controller's
// pipeline treats every client alike. internal/client/mysqlslap adapts it to the operator's
// Client.
//
// What mysqlslap does with its schema (--create-schema), measured with the servers' general log
// against MariaDB 10.11.19 (mariadb-slap 10.11) and MySQL 9.7.4 (mysqlslap 9.7): when it has
// create statements (--auto-generate-sql, or --create), every iteration runs DROP SCHEMA IF
// EXISTS, CREATE SCHEMA, its CREATE TABLE, the load, and DROP SCHEMA IF EXISTS again. So it drops
// the schema at the start whether or not it created it; it must never be a database that holds
// anything. With --no-drop it skips both drops, and the next run's CREATE SCHEMA fails ("database
// exists", exit 1). With --query and no --create it creates nothing, and every client fails to
// connect to the missing schema (error 1049) while mysqlslap still exits 0. Build therefore gives
// mysqlslap a dedicated schema (Schema), adds a create statement that does nothing when args give
// --query alone, and refuses --no-drop.
package mysqlslap

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// Schema is the database mysqlslap drops, creates and drops again at every step (--create-schema).
// It is never the connection Secret's database, which holds sysbench's tables or a user's data:
// the launcher refuses to run when that database is Schema. The benchmark account needs
// sysbench.Privileges on it (sysbench.GrantSQL grants them).
const Schema = sysbench.MysqlslapSchema

// OptionFile is the MySQL option file the launcher writes the password into, on the memory-backed
// emptyDir; mysqlslap and the snapshots' client read it with --defaults-extra-file.
const OptionFile = sysbench.OptionsMountPath + "/mysqlslap.cnf"

// MaxPasswordBytes is the longest password the launcher writes into the option file. The
// servers' option-file parsers read lines into a 4096-byte buffer; escaped, a password of this
// length always fits.
const MaxPasswordBytes = 1024

// createNothing is the create statement Build adds when args give --query without --create: with
// a create statement mysqlslap creates its schema (and drops it afterwards), which its clients
// connect to. DO 0 returns no result set on MySQL and MariaDB alike.
const createNothing = "--create=DO 0"

// Step is one mysqlslap container's work: PhaseRun (a ladder step) or PhaseWarmup (result
// discarded).
type Step struct {
	Phase load.Phase
	// Concurrency is the ladder step's thread count: mysqlslap's --concurrency.
	Concurrency int32
	// ServerStats makes a PhaseRun step snapshot the server's counters before mysqlslap starts
	// and after it ended (Output.Server); a snapshot that fails never fails the step.
	ServerStats bool
}

// Lines of the launcher's server snapshots in the log, which ParseOutput reads:
//
//	mysqlbench-server-begin start|end
//	mysqlbench-server-clock begin|status|done <unix seconds>   (date +%s.%N)
//	mysqlbench-server-section variables|status|innodbMetrics|waits
//	<the client's --batch --skip-column-names rows, tab-separated>
//	mysqlbench-server-error <section>: <the client's error line>
//	mysqlbench-server-end start|end
const (
	markBegin   = "mysqlbench-server-begin "
	markClock   = "mysqlbench-server-clock "
	markSection = "mysqlbench-server-section "
	markError   = "mysqlbench-server-error "
	markEnd     = "mysqlbench-server-end "
)

// launcherScript is the fixed /bin/sh program every mysqlslap container runs; its arguments
// ("$@") are mysqlslap's options, which it never parses. It
//   - writes the password into OptionFile (mode 0600) as [client] password="...", with \ and "
//     escaped as the servers' option-file parsers read them, using shell builtins only (read,
//     case, parameter expansion, printf), so the password is never an argument or an
//     environment variable of any process; it refuses a password with a line break or longer
//     than MaxPasswordBytes;
//   - refuses to run when the connection Secret's database is Schema, which mysqlslap drops;
//   - picks mariadb-slap, else mysqlslap, and for snapshots mariadb, else mysql;
//   - with MYSQLBENCH_SERVER_STATS=1, prints a server snapshot before mysqlslap starts and, when
//     it exited 0, after it ended;
//   - runs mysqlslap with OptionFile as its first option, its output to the log as it is, and
//     writes the termination message from it when mysqlslap ended: the error lines (at most
//     about 3 kB of them, a failed query's text left out) and then the Benchmark block, always
//     below the kubelet's 4096 bytes (kept in shell variables: the emptyDir is small);
//   - exits with mysqlslap's exit code.
//
// It must not contain "$(": the kubelet expands that in commands too (so there is no command
// substitution and no arithmetic; lengths are counted with ${#var}). The host, port and user are
// the env vars the kubelet set from the Secret; the shell quotes them.
var launcherScript = `umask 077
f='` + sysbench.PasswordFile + `' d='` + sysbench.OptionsMountPath + `' o='` + OptionFile + `'
t=${` + sysbench.EnvResultFile + `:-` + sysbench.TerminationMessagePath + `}
fatal() {
  printf 'FATAL: %s\n' "$1" >&2
  printf 'FATAL: %s\n' "$1" >"$t" 2>/dev/null
  exit 1
}
if [ "${` + sysbench.EnvDatabase + `:-}" = '` + Schema + `' ]; then
  fatal "the connection Secret's database is ` + Schema + `, the schema mysqlslap drops and re-creates at every step: keep your data in another database"
fi
if ! [ -r "$f" ]; then
  fatal "cannot read the connection password at $f (the connection Secret's password key)"
fi
if IFS= read -r p <"$f"; then
  fatal "the connection Secret's password contains a line break, which mysqlslap's option file cannot hold: remove it (a trailing newline too)"
fi
if [ ${#p} -gt ` + strconv.Itoa(MaxPasswordBytes) + ` ]; then
  fatal "the connection Secret's password is ${#p} bytes long; mysqlslap's option file holds at most ` + strconv.Itoa(MaxPasswordBytes) + `"
fi
e= r=$p
while :; do
  case $r in
  *[\\\"]*)
    h=${r%%[\\\"]*}
    r=${r#"$h"}
    e=$e$h\\${r%"${r#?}"}
    r=${r#?}
    ;;
  *) e=$e$r; break ;;
  esac
done
printf '[client]\npassword="%s"\n' "$e" >"$o" || fatal "cannot write mysqlslap's option file $o"
p= e= r= h=
if command -v mariadb-slap >/dev/null 2>&1; then s=mariadb-slap
elif command -v mysqlslap >/dev/null 2>&1; then s=mysqlslap
else fatal "the image has neither mysqlslap nor mariadb-slap on its PATH: set workload.mysqlslap.image to an image with one, e.g. mysql:8.4 or mariadb:11"
fi
c=
if command -v mariadb >/dev/null 2>&1; then c=mariadb
elif command -v mysql >/dev/null 2>&1; then c=mysql
fi
lines() {
  while IFS= read -r l || [ -n "$l" ]; do printf '%s%s\n' "$1" "$l"; done <"$2"
}
section() {
  echo "` + markSection + `$1"
  "$c" --defaults-extra-file="$o" --host="$` + sysbench.EnvHost + `" --port="$` + sysbench.EnvPort + `" --user="$` + sysbench.EnvUser + `" \
    --batch --skip-column-names -e "$2" >"$d/rows" 2>"$d/errors" </dev/null
  lines '' "$d/rows"
  lines "` + markError + `$1: " "$d/errors"
}
snapshot() {
  echo "` + markBegin + `$1"
  date '+` + markClock + `begin %s.%N' 2>/dev/null
  if [ -z "$c" ]; then
    echo "` + markError + `client: the image has neither mariadb nor mysql (the command-line client) on its PATH"
  else
    section variables "` + variablesSQL + `"
    v= ps=
    while IFS='	' read -r k val; do
      case $k in version) v=$val ;; performance_schema) ps=$val ;; esac
    done <"$d/rows"
    date '+` + markClock + `status %s.%N' 2>/dev/null
    section status "` + statusSQL + `"
    m="STATUS = 'enabled'"
    case $v in *MariaDB*) case $v in [0-9].*|10.[0-4].*) ;; *) m='ENABLED = 1' ;; esac ;; esac
    section innodbMetrics "` + metricsSQL + `"
    case $ps in ON|1) section waits "` + waitsSQL + `" ;; esac
  fi
  date '+` + markClock + `done %s.%N' 2>/dev/null
  echo "` + markEnd + `$1"
}
if [ "${` + sysbench.EnvServerStats + `:-}" = 1 ]; then snapshot ` + serverstats.AtStart + `; fi
{ "$s" --defaults-extra-file="$o" "$@" 2>&1; echo $? >"$d/rc"; } | {
  LC_ALL=C
  a= b= x=
  while IFS= read -r l || [ -n "$l" ]; do
    printf '%s\n' "$l"
    case $l in
    '') ;;
    Benchmark|'	'*) if [ ${#b} -lt 1000 ]; then b="$b$l
"
      fi ;;
    *)
      case $l in
      *': Cannot run query '*' ERROR : '*) l="${l%%: Cannot run query *}: Cannot run query (the query is in the pod log) ERROR : ${l##* ERROR : }" ;;
      esac
      if [ ${#a} -lt 2000 ] && [ ${#l} -lt 1000 ]; then a="$a$l
"
      else x=1
      fi ;;
    esac
  done
  {
    printf '%s' "$a"
    if [ -n "$x" ]; then echo "mysqlslap: more error lines, or longer ones, are in the pod log"; fi
    printf '%s' "$b"
  } >"$t"
}
rc=1
read -r rc <"$d/rc" 2>/dev/null
if [ "$rc" = 0 ] && [ "${` + sysbench.EnvServerStats + `:-}" = 1 ]; then snapshot ` + serverstats.AtEnd + `; fi
exit "$rc"`

// The snapshot queries: the same bounded sets as the sysbench reporter's server_snapshot.
// metricsSQL's $m is the shell's: MariaDB 10.5 and later have an ENABLED column where MySQL and
// older MariaDB have STATUS.
var (
	variablesSQL = "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('performance_schema', 'version')"
	statusSQL    = "SHOW GLOBAL STATUS WHERE Variable_name IN (" + sqlNames(serverstats.StatusNames) + ")"
	metricsSQL   = "SELECT NAME, COUNT FROM information_schema.INNODB_METRICS WHERE $m AND NAME IN (" +
		sqlNames(serverstats.InnoDBMetricNames) + ")"
	waitsSQL = "SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT " +
		"FROM performance_schema.events_waits_summary_global_by_event_name " +
		"WHERE COUNT_STAR > 0 AND EVENT_NAME <> 'idle'"
)

// sqlNames lists names (identifier characters only) as SQL string literals.
func sqlNames(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "'" + n + "'"
	}
	return strings.Join(quoted, ", ")
}

var launcher = []string{"/bin/sh", "-c", launcherScript, "mysqlslap"}

// Build returns what a mysqlslap container runs for step of workload w (workload.mysqlslap with
// the API defaults, MysqlslapOrDefault); secretName is the connection Secret (sysbench.SecretKey*
// keys). Like sysbench.Build's container, it must keep the default TerminationMessagePath, run as
// a non-root user with the fsGroup that may read the password file, and have /bin/sh; its image
// needs mariadb-slap or mysqlslap, and for ServerStats the mariadb or mysql client.
//
// mysqlslap gets --concurrency from the step, --iterations from the workload and
// --number-of-queries = max(queries, concurrency): mysqlslap gives each client queries /
// concurrency of them, rounded down, and a client with 0 runs nothing (measured). Without --query
// in args it generates the SQL (--auto-generate-sql, --auto-generate-sql-load-type = loadType or
// mixed; key and update get --auto-generate-sql-add-autoincrement, since mysqlslap refuses a key
// test without a primary key). Its schema is always Schema.
func Build(w v1alpha1.Workload, secretName string, step Step) (load.Invocation, error) {
	if errs := validation.IsDNS1123Subdomain(secretName); len(errs) > 0 {
		return load.Invocation{}, fmt.Errorf("connection secret name %q: %s", secretName, strings.Join(errs, "; "))
	}
	if step.Phase != load.PhaseRun && step.Phase != load.PhaseWarmup {
		return load.Invocation{}, fmt.Errorf("mysqlslap runs warmup and run steps only, not %q", step.Phase)
	}
	if step.Concurrency < 1 {
		return load.Invocation{}, fmt.Errorf("%s step: concurrency is %d, it must be at least 1", step.Phase, step.Concurrency)
	}
	m := w.MysqlslapOrDefault()
	if m.Queries < 1 {
		return load.Invocation{}, fmt.Errorf("workload.mysqlslap.queries is %d: it must be at least 1", m.Queries)
	}
	if m.Iterations < 1 {
		return load.Invocation{}, fmt.Errorf("workload.mysqlslap.iterations is %d: it must be at least 1", m.Iterations)
	}
	if err := ValidateArgs(m.Args); err != nil {
		return load.Invocation{}, err
	}
	query, create := !m.GeneratesSQL(), hasOption(m.Args, "create")
	switch {
	case m.LoadType != "" && (query || create):
		return load.Invocation{}, fmt.Errorf("workload.mysqlslap.loadType generates the SQL: remove it when args give --query or --create")
	case create && !query:
		return load.Invocation{}, fmt.Errorf("workload.mysqlslap.args give --create without --query: add the --query to run, or remove --create to let mysqlslap generate the SQL")
	}

	args := []string{
		"--host=$(" + sysbench.EnvHost + ")",
		"--port=$(" + sysbench.EnvPort + ")",
		"--user=$(" + sysbench.EnvUser + ")",
		"--create-schema=" + Schema,
		"--concurrency=" + strconv.Itoa(int(step.Concurrency)),
		"--iterations=" + strconv.Itoa(int(m.Iterations)),
		"--number-of-queries=" + strconv.FormatInt(max(m.Queries, int64(step.Concurrency)), 10),
	}
	switch {
	case !query:
		loadType := m.LoadTypeOrDefault()
		args = append(args, "--auto-generate-sql", "--auto-generate-sql-load-type="+string(loadType))
		if (loadType == "key" || loadType == "update") &&
			!hasOption(m.Args, "auto-generate-sql-add-autoincrement") && !hasOption(m.Args, "auto-generate-sql-guid-primary") {
			args = append(args, "--auto-generate-sql-add-autoincrement")
		}
	case !create:
		args = append(args, createNothing)
	}
	for _, a := range m.Args {
		// The kubelet expands $(VAR) in args; doubling every $ makes it hand the option to
		// mysqlslap literally, so an arg can never pull a variable out of the env.
		args = append(args, strings.ReplaceAll(a, "$", "$$"))
	}

	env := []corev1.EnvVar{
		secretEnv(sysbench.EnvHost, secretName, sysbench.SecretKeyHost, false),
		secretEnv(sysbench.EnvPort, secretName, sysbench.SecretKeyPort, false),
		secretEnv(sysbench.EnvUser, secretName, sysbench.SecretKeyUser, false),
		secretEnv(sysbench.EnvDatabase, secretName, sysbench.SecretKeyDatabase, true),
		{Name: sysbench.EnvResultFile, Value: sysbench.TerminationMessagePath},
	}
	if step.ServerStats && step.Phase == load.PhaseRun {
		env = append(env, corev1.EnvVar{Name: sysbench.EnvServerStats, Value: "1"})
	}
	return load.Invocation{
		Command:      append([]string(nil), launcher...),
		Args:         args,
		Env:          env,
		Volumes:      sysbench.CredentialVolumes(secretName),
		VolumeMounts: sysbench.CredentialMounts(),
	}, nil
}

var optionSyntax = regexp.MustCompile(`^--[a-z][a-z0-9-]*(=.*)?$`)

// AllowedOptions are the mysqlslap options workload.mysqlslap.args may set, by their full names
// (the API's CEL rule on MysqlslapWorkload.Args holds the same list). An allow-list, not a
// deny-list: the MySQL and MariaDB option parsers also accept --loose-NAME, --enable-/--disable-/
// --skip-/--maximum-NAME and (MariaDB) any unambiguous shortening of a name, so refusing names
// could never be complete, and one missed name could set the schema mysqlslap drops
// (--create-schema), run shell commands (--pre-system), skew the counts (--iterations,
// --concurrency) or print the password (--print-defaults). Everything the operator sets
// (concurrency, iterations, query count, generated SQL and its load type, schema, connection,
// option files) and everything that changes what is measured or printed is left out.
var AllowedOptions = []string{
	"auto-generate-sql-add-autoincrement", "auto-generate-sql-execute-number",
	"auto-generate-sql-guid-primary", "auto-generate-sql-secondary-indexes",
	"auto-generate-sql-unique-query-number", "auto-generate-sql-unique-write-number",
	"auto-generate-sql-write-number", "commit", "compress", "create", "delimiter", "engine",
	"number-char-cols", "number-int-cols", "post-query", "pre-query", "query",
	"ssl", "ssl-ca", "ssl-capath", "ssl-cert", "ssl-cipher", "ssl-crl", "ssl-crlpath", "ssl-key",
	"ssl-mode", "ssl-verify-server-cert", "tls-version",
}

var allowedOption = regexp.MustCompile(`^--(` + strings.Join(AllowedOptions, "|") + `)(=|$)`)

// sqlOptions take SQL, or a file of SQL: mysqlslap reads the value as a file's path when a file
// of that name exists, and echoes what it ran in its errors. So their values must read as SQL,
// never as a path: with a blank in them, not starting with /, . or ~ (the password file is
// /etc/mysqlbench/credentials/password, the option file /run/mysqlbench/mysqlslap.cnf).
var sqlOptions = regexp.MustCompile(`^--(create|query|pre-query|post-query)=`)

var sqlValue = regexp.MustCompile(`^[^/.~\s][^\n]*\s`)

// ValidateArgs checks workload.mysqlslap.args: each one --name=value with a name of
// AllowedOptions (the API refuses the others too), SQL values that cannot be read as a file's
// path, and, beyond the API, no --no-drop (every step needs a fresh schema: mysqlslap does not
// drop it then, and the next step's CREATE SCHEMA fails), one engine per --engine (mysqlslap
// benchmarks each engine of a list separately, printing one report each) and no --create without
// --query.
func ValidateArgs(args []string) error {
	for i, a := range args {
		field := fmt.Sprintf("workload.mysqlslap.args[%d] %q", i, a)
		switch {
		case !optionSyntax.MatchString(a):
			return fmt.Errorf("%s: write each option as --name=value", field)
		case !allowedOption.MatchString(a):
			return fmt.Errorf("%s: not an option workload.mysqlslap.args may set, by its full name (the operator sets "+
				"concurrency from spec.ladder.threads, iterations, queries and loadType from workload.mysqlslap, the "+
				"connection from the target; --loose-, --skip-, --enable- forms and shortened names are refused too): "+
				"use one of --%s", field, strings.Join(AllowedOptions, ", --"))
		case sqlOptions.MatchString(a) && !sqlValue.MatchString(a[strings.Index(a, "=")+1:]):
			return fmt.Errorf("%s: write the SQL itself (with a blank, e.g. --query=SELECT 1), not a file's path: "+
				"mysqlslap runs a file of that name if one exists", field)
		case strings.HasPrefix(a, "--engine=") && strings.Contains(a, ","):
			return fmt.Errorf("%s: a step measures one engine (mysqlslap reports each engine of a list separately): "+
				"name one, e.g. --engine=innodb", field)
		}
	}
	if !hasOption(args, "query") {
		for i, a := range args {
			if a == "--create" || strings.HasPrefix(a, "--create=") {
				return fmt.Errorf("workload.mysqlslap.args[%d] %q: --create without --query: add the --query to run, "+
					"or remove --create to let mysqlslap generate the SQL", i, a)
			}
		}
	}
	return nil
}

// hasOption reports whether args set --name (as --name or --name=value).
func hasOption(args []string, name string) bool {
	for _, a := range args {
		if a == "--"+name || strings.HasPrefix(a, "--"+name+"=") {
			return true
		}
	}
	return false
}

func secretEnv(name, secret, key string, optional bool) corev1.EnvVar {
	ref := &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret},
		Key:                  key,
	}
	if optional {
		ref.Optional = &optional
	}
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: ref}}
}
