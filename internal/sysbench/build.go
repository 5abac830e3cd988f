package sysbench

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
)

// Keys every connection Secret has. The builtin engine writes them; users of engine external
// provide them. SecretKeyDatabase is optional and defaults to DefaultDatabase.
//
// The password reaches sysbench through its --config-file (see launcherScript), whose parser
// (sysbench 1.0.20's read_config) cannot hold every string: the launcher writes the value in
// double quotes, or in single quotes when it contains a double quote, and a quoted value ends at
// the next quote of its kind or at the end of its line, which is at most 255 bytes. So a password
// may hold any byte but NUL (spaces, #, =, commas, backslashes, $, UTF-8, one kind of quote), at
// most MaxPasswordBytes of them. The launcher refuses, with a FATAL line that says which rule the
// password breaks and never the password:
//   - a line break, a trailing newline too (as `echo pw > file` leaves one);
//   - both ' and ";
//   - more than MaxPasswordBytes bytes.
//
// A NUL byte cannot be in a MySQL password; the shell drops it, and the login fails with 1045. The
// builtin engine generates alphanumeric passwords, which always fit.
const (
	SecretKeyHost     = "host"
	SecretKeyPort     = "port"
	SecretKeyUser     = "user"
	SecretKeyPassword = "password"
	SecretKeyDatabase = "database"
)

// DefaultDatabase is the schema used when the connection Secret has no database key (sysbench's
// own default too).
const DefaultDatabase = "sbtest"

// MaxPasswordBytes is the longest password sysbench's option file holds: read_config reads lines
// of at most 255 bytes, and `mysql-password="` and the closing quote take 17 of them.
const MaxPasswordBytes = 238

// Environment variables of a sysbench container. The connection ones come from the Secret through
// secretKeyRef and reach sysbench as $(VAR) references in the args, which the kubelet expands when
// it starts the container, so the Job spec never holds a credential. The password is not among
// them: it would be in the container's environment and, expanded, in sysbench's argv, both of
// which anyone who can inspect the node's containers or processes reads. It is a file instead
// (PasswordFile).
const (
	EnvHost     = "MYSQLBENCH_HOST"
	EnvPort     = "MYSQLBENCH_PORT"
	EnvUser     = "MYSQLBENCH_USER"
	EnvDatabase = "MYSQLBENCH_DATABASE"
	// EnvScript tells the reporter which script to wrap: a stock script name or a path.
	EnvScript = "MYSQLBENCH_SCRIPT"
	// EnvResultFile tells the reporter where to write the final result.
	EnvResultFile = "MYSQLBENCH_RESULT_FILE"
	// EnvServerStats set to "1" makes the reporter print a server snapshot (ServerSnapshot)
	// before and after a run.
	EnvServerStats = "MYSQLBENCH_SERVER_STATS"
	// EnvServerLock and EnvServerLockWait make a run take the server lock Step.ServerLock in
	// its init, waiting up to Step.ServerLockWait (whole seconds), and hold it until its done.
	EnvServerLock     = "MYSQLBENCH_SERVER_LOCK"
	EnvServerLockWait = "MYSQLBENCH_SERVER_LOCK_WAIT"
	// EnvReporterSHA256 and EnvScriptSHA256 are the sha256 digests (hex) of the reporter and of
	// the custom script as the operator checked them; the launcher runs only content with these
	// digests (see launcherScript).
	EnvReporterSHA256 = "MYSQLBENCH_REPORTER_SHA256"
	EnvScriptSHA256   = "MYSQLBENCH_SCRIPT_SHA256"
)

// DigestMismatch starts the line the launcher prints when a mounted script is not the content
// the operator checked (Classify recognises it).
const DigestMismatch = "FATAL: mysqlbench: content digest mismatch"

// VerifiedDir is where the launcher copies the mounted Lua before it checks the copies' digests:
// sysbench runs the copies, which nothing outside the container can change (the kubelet updates
// a mounted ConfigMap in place when the ConfigMap changes, and sysbench loads the scripts again
// in every thread it starts).
const VerifiedDir = OptionsMountPath + "/lua"

// VerifiedReporterPath is the checked copy of the reporter that sysbench runs.
const VerifiedReporterPath = VerifiedDir + "/" + ReporterConfigMapKey

// Digest is the hex sha256 of content, as sha256sum prints it.
func Digest(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// ReporterSHA256 is the digest of ReporterScript().
var ReporterSHA256 = Digest([]byte(reporterScript))

// PrepareMaxThreads caps prepare's parallelism: each thread fills whole tables, and more than
// this mostly contends on the server's redo log.
const PrepareMaxThreads = 16

// Where the password travels inside a sysbench container: the connection Secret's password key is
// mounted as PasswordFile (a Secret volume, readable by the pod's fsGroup only), and the launcher
// copies it into OptionFile, sysbench's --config-file, on a memory-backed emptyDir, so it is never
// on disk, in an argv or in an environment.
const (
	PasswordMountPath = "/etc/mysqlbench/credentials"
	PasswordFile      = PasswordMountPath + "/" + SecretKeyPassword
	OptionsMountPath  = "/run/mysqlbench"
	OptionFile        = OptionsMountPath + "/sysbench.cfg"

	passwordVolume = "credentials"
	optionsVolume  = "sysbench-options"
)

// launcherScript is the fixed /bin/sh line every sysbench container runs. It
//   - writes the password into OptionFile (mode 0600) using shell builtins only (read, case,
//     printf), so it is never an argument of any process, and refuses a password the option file
//     cannot hold (see SecretKeyPassword);
//   - applies the one default Kubernetes cannot express: the database key of the Secret is
//     optional, an env var from a missing optional key is simply not set, and a $(VAR) reference
//     to an unset variable is left unexpanded;
//   - execs sysbench with the args untouched ("$@", the first replaced by the checked copy of
//     the reporter), so nothing from the spec is ever parsed by the shell.
//
// Before that it copies the mounted reporter, and the custom script when the step runs one, into
// VerifiedDir and checks each copy's sha256 against the digest the operator put in the Job
// (EnvReporterSHA256, EnvScriptSHA256): a ConfigMap swapped between the operator's check and
// the kubelet's mount (or changed while the step runs) must not run with the database's
// credentials. A mismatch, or a custom script without a digest, ends the container with a
// DigestMismatch line. sysbench gets the checked copy of the reporter in place of the first
// argument (ReporterPath, which the printed command lines show). This needs cp, mkdir and
// sha256sum in the image (coreutils or busybox).
//
// It must not contain "$(": the kubelet expands that in commands too; the digest is read with
// backquotes. read returns non-zero at the end of the file without a newline; it succeeds only
// when the file holds a line break. dash (the sysbench image's /bin/sh), bash and busybox sh all
// have these builtins.
var launcherScript = `umask 077
verified() {
  if ! cp "$1" "$2"; then echo "FATAL: mysqlbench: cannot copy $3 from $1" >&2; exit 1; fi
  if ! d=` + "`sha256sum \"$2\"`" + `; then
    echo "FATAL: mysqlbench: cannot compute the sha256 of $3: the image needs sha256sum (coreutils or busybox)" >&2; exit 1
  fi
  d=${d%% *}
  if [ "$d" != "$4" ]; then
    echo "` + DigestMismatch + `: $3 at $1 has sha256 $d, not the content the operator checked (sha256 $4): its ConfigMap changed after the check, so this step does not run it" >&2; exit 1
  fi
}
if [ "$1" != '` + ReporterPath + `' ]; then
  echo "FATAL: mysqlbench: the first argument is $1, not the reporter ` + ReporterPath + `" >&2; exit 1
fi
mkdir -p '` + VerifiedDir + `' || { echo "FATAL: mysqlbench: cannot create ` + VerifiedDir + `" >&2; exit 1; }
verified '` + ReporterPath + `' '` + VerifiedReporterPath + `' 'the reporter' "$` + EnvReporterSHA256 + `"
case $` + EnvScript + ` in
'` + CustomScriptMountPath + `'/*)
  k=${` + EnvScript + `#'` + CustomScriptMountPath + `/'}
  if [ -z "$` + EnvScriptSHA256 + `" ]; then
    echo "` + DigestMismatch + `: the custom script ${k} has no digest to check it against (the Job sets no ` + EnvScriptSHA256 + `): only the operator's Jobs, which set it, run custom scripts" >&2; exit 1
  fi
  verified "$` + EnvScript + `" '` + VerifiedDir + `/'"$k" "the custom script $k" "$` + EnvScriptSHA256 + `"
  ` + EnvScript + `='` + VerifiedDir + `/'"$k"; export ` + EnvScript + `
  ;;
esac
f='` + PasswordFile + `' o='` + OptionFile + `'
if ! [ -r "$f" ]; then
  echo "FATAL: cannot read the connection password at $f (the connection Secret's password key)" >&2; exit 1
fi
if IFS= read -r p <"$f"; then
  echo "FATAL: the connection Secret's password contains a line break, which sysbench's option file cannot hold: remove it (a trailing newline too)" >&2; exit 1
fi
case $p in
*\"*\'*|*\'*\"*) echo "FATAL: the connection Secret's password contains both ' and \", which sysbench's option file cannot quote: use at most one kind of quote" >&2; exit 1 ;;
*\"*) q="'" ;;
*) q='"' ;;
esac
if [ ${#p} -gt ` + strconv.Itoa(MaxPasswordBytes) + ` ]; then
  echo "FATAL: the connection Secret's password is ${#p} bytes long; sysbench's option file holds at most ` + strconv.Itoa(MaxPasswordBytes) + `" >&2; exit 1
fi
printf 'mysql-password=%s%s%s\n' "$q" "$p" "$q" >"$o" || {
  echo "FATAL: cannot write sysbench's option file $o" >&2; exit 1
}
p=
shift
exec sysbench --config-file="$o" --mysql-db="${` + EnvDatabase + `:-` + DefaultDatabase + `}" '` + VerifiedReporterPath + `' "$@"`

var launcher = []string{"/bin/sh", "-c", launcherScript, "sysbench"}

// Options the operator sets itself or that would break the contract, refused in extraArgs. The
// API rejects most of them already; this also catches sysbench's deprecated aliases
// (--num-threads, --max-time, --max-requests) and options that end the run without a report.
var ownedOption = regexp.MustCompile(`^--(threads|num-threads|time|max-time|events|max-requests|` +
	`tables|table-size|percentile|report-interval|report-checkpoints|db-driver|config-file|` +
	`help|version|mysql-[a-z0-9-]*|pgsql-[a-z0-9-]*)(=|$)`)

var optionSyntax = regexp.MustCompile(`^--[a-z][a-z0-9-]*(=.*)?$`)

// serverLockName is what the reporter accepts as a lock name: it is spliced into GET_LOCK's SQL,
// and MySQL refuses names of more than 64 characters.
var serverLockName = regexp.MustCompile(`^[A-Za-z0-9_:-]{1,64}$`)

var stockScriptName = regexp.MustCompile(`^[a-z0-9_]+$`)

// Build returns what one sysbench container runs for a step of workload w. secretName is the
// connection Secret (keys SecretKey*). The container must mount ReporterScript() at ReporterPath,
// the custom script's ConfigMap (if any) at CustomScriptMountPath, and keep the default
// TerminationMessagePath.
func Build(w v1alpha1.Workload, secretName string, step load.Step) (load.Invocation, error) {
	if errs := validation.IsDNS1123Subdomain(secretName); len(errs) > 0 {
		return load.Invocation{}, fmt.Errorf("connection secret name %q: %s", secretName, strings.Join(errs, "; "))
	}
	script, err := scriptEnv(w)
	if err != nil {
		return load.Invocation{}, err
	}
	// Zero means the API default, as the API server would have filled it in.
	tables := w.Tables
	if tables == 0 {
		tables = 1
	}
	if tables < 0 {
		return load.Invocation{}, fmt.Errorf("workload.tables is %d: it must be at least 1", tables)
	}
	tableSize := w.TableSize
	if tableSize == 0 {
		tableSize = 10000
	}
	if tableSize < 0 {
		return load.Invocation{}, fmt.Errorf("workload.tableSize is %d: it must be at least 1", tableSize)
	}

	args := []string{
		ReporterPath,
		"--db-driver=mysql",
		"--mysql-host=$(" + EnvHost + ")",
		"--mysql-port=$(" + EnvPort + ")",
		"--mysql-user=$(" + EnvUser + ")",
		"--tables=" + strconv.Itoa(int(tables)),
		"--table-size=" + strconv.FormatInt(tableSize, 10),
	}

	var command string
	switch step.Phase {
	case load.PhasePrepare:
		command = "prepare"
		args = append(args, "--threads="+strconv.Itoa(int(min(tables, PrepareMaxThreads))))
	case load.PhaseCleanup:
		command = "cleanup"
	case load.PhaseProbe:
		command = "probe"
	case load.PhaseRun, load.PhaseWarmup:
		command = "run"
		if step.Threads < 1 {
			return load.Invocation{}, fmt.Errorf("%s step: threads is %d, it must be at least 1", step.Phase, step.Threads)
		}
		seconds, err := wholeSeconds(step.Duration)
		if err != nil {
			return load.Invocation{}, fmt.Errorf("%s step: %w", step.Phase, err)
		}
		args = append(args,
			"--threads="+strconv.Itoa(int(step.Threads)),
			"--time="+strconv.FormatInt(seconds, 10),
			"--events=0",
			"--report-interval=1",
			"--percentile="+strconv.Itoa(load.Percentile),
		)
	default:
		return load.Invocation{}, fmt.Errorf("unknown sysbench phase %q: use probe, prepare, warmup, run or cleanup", step.Phase)
	}

	for i, a := range w.ExtraArgs {
		if !optionSyntax.MatchString(a) {
			return load.Invocation{}, fmt.Errorf("workload.extraArgs[%d] %q: write each option as --name=value", i, a)
		}
		if ownedOption.MatchString(a) {
			return load.Invocation{}, fmt.Errorf("workload.extraArgs[%d] %q: the operator sets this option itself "+
				"(threads and time come from spec.ladder, tables from spec.workload, connections from the target)", i, a)
		}
		// The kubelet expands $(VAR) in args; doubling every $ makes it hand the option to
		// sysbench literally, so an extra arg can never pull the password out of the env.
		args = append(args, strings.ReplaceAll(a, "$", "$$"))
	}
	args = append(args, command)

	env := []corev1.EnvVar{
		secretEnv(EnvHost, secretName, SecretKeyHost, false),
		secretEnv(EnvPort, secretName, SecretKeyPort, false),
		secretEnv(EnvUser, secretName, SecretKeyUser, false),
		secretEnv(EnvDatabase, secretName, SecretKeyDatabase, true),
		{Name: EnvScript, Value: script},
		{Name: EnvResultFile, Value: TerminationMessagePath},
		{Name: EnvReporterSHA256, Value: ReporterSHA256},
	}
	if w.CustomScript != nil {
		env = append(env, corev1.EnvVar{Name: EnvScriptSHA256, Value: step.ScriptSHA256})
	}
	if step.ServerStats && step.Phase == load.PhaseRun {
		env = append(env, corev1.EnvVar{Name: EnvServerStats, Value: "1"})
	}
	if step.ServerLock != "" && step.Phase == load.PhaseRun {
		if !serverLockName.MatchString(step.ServerLock) {
			return load.Invocation{}, fmt.Errorf("server lock %q: want at most 64 letters, digits, '_', ':' or '-'", step.ServerLock)
		}
		wait := int64(math.Ceil(step.ServerLockWait.Seconds()))
		if wait < 1 {
			return load.Invocation{}, fmt.Errorf("server lock %s: wait %s, want at least a second", step.ServerLock, step.ServerLockWait)
		}
		env = append(env, corev1.EnvVar{Name: EnvServerLock, Value: step.ServerLock},
			corev1.EnvVar{Name: EnvServerLockWait, Value: strconv.FormatInt(wait, 10)})
	}
	return load.Invocation{
		Command:      append([]string(nil), launcher...),
		Args:         args,
		Env:          env,
		Volumes:      credentialVolumes(secretName),
		VolumeMounts: credentialMounts(),
	}, nil
}

// credentialVolumes are the password file, the Secret's password key alone (the builtin engine's
// Secret also holds the root password, which sysbench must not see), and the option file's
// directory: in memory, so the password is never written to the node's disk, and small.
func credentialVolumes(secretName string) []corev1.Volume {
	return []corev1.Volume{{
		Name: passwordVolume,
		VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  secretName,
			Items:       []corev1.KeyToPath{{Key: SecretKeyPassword, Path: SecretKeyPassword}},
			DefaultMode: ptr.To[int32](0o440),
		}},
	}, {
		Name: optionsVolume,
		VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
			Medium: corev1.StorageMediumMemory,
			// The option file and the checked copies of the Lua (a custom script may be
			// up to a ConfigMap's 1 MiB).
			SizeLimit: ptr.To(resource.MustParse("3Mi")),
		}},
	}}
}

func credentialMounts() []corev1.VolumeMount {
	return []corev1.VolumeMount{
		{Name: passwordVolume, MountPath: PasswordMountPath, ReadOnly: true},
		{Name: optionsVolume, MountPath: OptionsMountPath},
	}
}

// scriptEnv returns the reporter's MYSQLBENCH_SCRIPT: a stock script's name, which the reporter
// finds on sysbench's Lua path (its data directory differs between packages), or the mounted
// custom script's path.
func scriptEnv(w v1alpha1.Workload) (string, error) {
	switch {
	case w.Script != "" && w.CustomScript != nil:
		return "", fmt.Errorf("workload sets both script %q and customScript: set exactly one", w.Script)
	case w.Script != "":
		if !stockScriptName.MatchString(string(w.Script)) {
			return "", fmt.Errorf("workload.script %q is not a stock sysbench script name such as oltp_point_select", w.Script)
		}
		return string(w.Script), nil
	case w.CustomScript != nil:
		cs := w.CustomScript
		if cs.Name == "" {
			return "", fmt.Errorf("workload.customScript.name is empty: name the ConfigMap that holds the Lua script")
		}
		// A ConfigMap key becomes a file name in the mounted volume; the API server allows only
		// these characters in keys, which also keeps "$(" out of the env value.
		if errs := validation.IsConfigMapKey(cs.Key); len(errs) > 0 {
			return "", fmt.Errorf("workload.customScript.key %q: %s", cs.Key, strings.Join(errs, "; "))
		}
		return CustomScriptMountPath + "/" + cs.Key, nil
	default:
		return "", fmt.Errorf("workload sets neither script nor customScript: set exactly one, e.g. script: oltp_point_select")
	}
}

// wholeSeconds converts a step duration to sysbench's --time, which takes whole seconds.
func wholeSeconds(d time.Duration) (int64, error) {
	if d < time.Second {
		return 0, fmt.Errorf("duration %s is too short: it must be at least 1s", d)
	}
	if d > 24*time.Hour {
		return 0, fmt.Errorf("duration %s is too long: it must be at most 24h", d)
	}
	if d%time.Second != 0 {
		return 0, fmt.Errorf("duration %s is not a whole number of seconds (sysbench --time takes seconds), e.g. use %s",
			d, d.Round(time.Second))
	}
	return int64(d / time.Second), nil
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
