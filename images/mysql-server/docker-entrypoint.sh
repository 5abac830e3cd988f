#!/bin/bash
# Entrypoint of the local cluster's MySQL-family server images (hack/build-debian-images.sh):
# Oracle's MySQL from Debian sid, MariaDB from Debian bullseye, bookworm and trixie. It follows the
# env contract of the official images, so the operator's builtin engine treats these images and
# the official mysql and mariadb images alike:
#   MYSQL_ROOT_PASSWORD, or MYSQL_ALLOW_EMPTY_PASSWORD, or MYSQL_RANDOM_ROOT_PASSWORD
#   MYSQL_ROOT_HOST (default %), MYSQL_DATABASE, MYSQL_USER + MYSQL_PASSWORD
#   each also as NAME_FILE (read from that file; setting both is an error);
#   MariaDB images also read the MARIADB_* names first (MARIADB_ALLOW_EMPTY_ROOT_PASSWORD);
#   /docker-entrypoint-initdb.d/*.sql and *.sh, run once after initialization;
#   config from /etc/mysql/conf.d, read last (see the images' my.cnf), datadir included;
#   user mysql (uid/gid 999), socket /var/run/mysqld/mysqld.sock.
# The server listens on TCP only once the database, users and config are in place: the temporary
# server that creates them runs with --skip-networking. When initialization fails, the data
# directory is emptied again, so a restart repeats the first error instead of failing later on a
# half-initialized data directory with a symptom ("Table 'mysql.user' doesn't exist").
set -euo pipefail

log() { printf '%s [Entrypoint] %s\n' "$(date -u +%FT%TZ)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# `docker run image --option` means the server with that option.
if [ "${1:0:1}" = - ]; then set -- mysqld "$@"; fi
case $1 in
mariadbd | mysqld) ;;
*) exec "$@" ;;
esac
for arg; do
	case $arg in
	-'?' | --help | --print-defaults | -V | --version) exec "$@" ;;
	esac
done

if command -v mariadb-install-db >/dev/null; then
	family=MariaDB prefixes=(MARIADB_ MYSQL_) client=mariadb
else
	family=MySQL prefixes=(MYSQL_) client=mysql
fi

# setting NAME [ALIAS...]: the first of <prefix>NAME (or ALIAS) that is set, or the contents of the
# file its _FILE variant names; empty if none is set.
setting() {
	local var prefix names=()
	for prefix in "${prefixes[@]}"; do names+=("$prefix$1"); done
	for var in "${names[@]}" "${@:2}"; do
		local file=${var}_FILE
		if [ -n "${!var:-}" ] && [ -n "${!file:-}" ]; then die "both $var and $file are set: set one of them"; fi
		if [ -n "${!var:-}" ]; then printf '%s' "${!var}"; return; fi
		if [ -n "${!file:-}" ]; then
			[ -r "${!file}" ] || die "$file names ${!file}, which cannot be read"
			cat "${!file}"
			return
		fi
	done
}

# SQL string literal and identifier quoting.
sql_string() { local s=${1//\\/\\\\}; printf "'%s'" "${s//\'/\\\'}"; }
sql_ident() { printf '`%s`' "${1//\`/\`\`}"; }

# Started as root, the server switches to the mysql user itself.
if [ "$(id -u)" = 0 ]; then set -- "$@" --user=mysql; fi

# Config check, and datadir/socket as the server will see them (config files, conf.d included,
# plus arguments). Only the server's error output goes into the failure message, as the official
# images do: the help text on stdout would bury the one line that says what is wrong.
errors=$(mktemp)
help=$("$@" --verbose --help 2>"$errors") || die "the server rejects its configuration: $(cat "$errors")"
rm -f "$errors"
# The values are in the table after the option descriptions (whose wrapped lines can start with
# the same words).
value() { awk -v k="$1" '/^Variables \(--variable-name=value\)/ {table = 1} table && $1 == k {print $2; exit}' <<<"$help"; }
datadir=$(value datadir)
datadir=${datadir%/}
socket=$(value socket)
files=$(value secure-file-priv)
[ -n "$datadir" ] && [ -n "$socket" ] || die "no datadir or socket in the server's configuration"

dirs=("$datadir" "$(dirname "$socket")")
case $files in /*) dirs+=("$files") ;; esac
mkdir -p "${dirs[@]}"
if [ "$(id -u)" = 0 ]; then chown mysql:mysql "${dirs[@]}"; fi

if [ -d "$datadir/mysql" ]; then
	log "$family data directory $datadir exists; starting the server"
	exec "$@"
fi

if [ -n "$(ls -A "$datadir")" ]; then
	die "$datadir is not empty but holds no database (no mysql/ directory): empty it or point datadir elsewhere"
fi
root_password=$(setting ROOT_PASSWORD)
if [ -z "$root_password" ]; then
	if [ -n "$(setting RANDOM_ROOT_PASSWORD)" ]; then
		root_password=$(tr -dc 'A-Za-z0-9' </dev/urandom | head -c 32)
		log "GENERATED ROOT PASSWORD: $root_password"
	elif [ -z "$(setting ALLOW_EMPTY_PASSWORD MARIADB_ALLOW_EMPTY_ROOT_PASSWORD)" ]; then
		die "database is uninitialized and no root password is set: set ${prefixes[0]}ROOT_PASSWORD, ${prefixes[0]}ALLOW_EMPTY_PASSWORD or ${prefixes[0]}RANDOM_ROOT_PASSWORD"
	fi
fi
root_host=$(setting ROOT_HOST)
root_host=${root_host:-%}
database=$(setting DATABASE)
user=$(setting USER)
password=$(setting PASSWORD)
[ "$user" != root ] || die "${prefixes[0]}USER=root: the root account is configured by ${prefixes[0]}ROOT_PASSWORD"
if [ -n "$user" ] && [ -z "$password" ]; then die "${prefixes[0]}USER is set but ${prefixes[0]}PASSWORD is not"; fi

# From here on a failure empties the data directory again (see the header).
pid=
initialized=0
undo() {
	if [ "$initialized" != 1 ]; then
		if [ -n "$pid" ]; then kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; fi
		find "$datadir" -mindepth 1 -delete 2>/dev/null || true
	fi
}
trap undo EXIT

log "initializing the $family data directory $datadir"
if [ "$family" = MariaDB ]; then
	# --rpm skips its host name lookup (a pod's name may not resolve yet), as the official
	# image does; it prints its errors on stdout, among much advice for interactive installs.
	if ! out=$(mariadb-install-db --datadir="$datadir" --user=mysql --rpm --skip-test-db \
		--auth-root-authentication-method=normal --skip-name-resolve 2>&1); then
		printf '%s\n' "$out" >&2
		die "mariadb-install-db failed (its errors are above)"
	fi
else
	# The server's own errors (e.g. an option value this version rejects) are on stderr above.
	"$@" --initialize-insecure || die "mysqld --initialize-insecure failed (its errors are above)"
fi

# A temporary server on the socket only, to create the accounts and the database.
init_socket=$(dirname "$socket")/init.sock
temp=("$@" --skip-networking --socket="$init_socket")
[ "$family" = MariaDB ] || temp+=(--mysqlx=OFF)
"${temp[@]}" &
pid=$!
sql=("$client" --protocol=socket --socket="$init_socket" -uroot --skip-column-names)
for _ in $(seq 240); do
	if "${sql[@]}" -e 'SELECT 1' >/dev/null 2>&1; then break; fi
	kill -0 "$pid" 2>/dev/null || die "the temporary server exited during initialization (its errors are above)"
	sleep 0.5
done
"${sql[@]}" -e 'SELECT 1' >/dev/null || die "the temporary server did not accept connections within 2 minutes"

{
	echo "SET @@SESSION.SQL_LOG_BIN = 0;"
	if [ "$family" = MariaDB ]; then
		# mariadb-install-db also creates root@<hostname>, root@127.0.0.1 and root@::1 (and
		# anonymous accounts): root is root@localhost plus root@ROOT_HOST only, as in the
		# official images.
		echo "DELETE FROM mysql.global_priv WHERE (Host <> 'localhost' AND User <> 'mariadb.sys') OR User = '';"
		echo "DELETE FROM mysql.proxies_priv WHERE Host <> 'localhost';"
		echo "FLUSH PRIVILEGES;"
	fi
	if [ -n "$root_password" ]; then
		echo "ALTER USER 'root'@'localhost' IDENTIFIED BY $(sql_string "$root_password");"
	fi
	if [ "$root_host" != localhost ]; then
		echo "CREATE USER 'root'@$(sql_string "$root_host") IDENTIFIED BY $(sql_string "$root_password");"
		echo "GRANT ALL ON *.* TO 'root'@$(sql_string "$root_host") WITH GRANT OPTION;"
	fi
	if [ -n "$database" ]; then echo "CREATE DATABASE IF NOT EXISTS $(sql_ident "$database");"; fi
	if [ -n "$user" ]; then
		echo "CREATE USER $(sql_string "$user")@'%' IDENTIFIED BY $(sql_string "$password");"
		if [ -n "$database" ]; then
			echo "GRANT ALL ON $(sql_ident "$database").* TO $(sql_string "$user")@'%';"
		fi
	fi
	echo "FLUSH PRIVILEGES;"
} | "${sql[@]}" || die "creating the accounts and the database failed"
# The client reads the root password from its environment, not from its command line.
export MYSQL_PWD=$root_password

shopt -s nullglob
for f in /docker-entrypoint-initdb.d/*; do
	case $f in
	*.sh) log "running $f"; . "$f" ;;
	*.sql) log "running $f"; "${sql[@]}" ${database:+"$database"} <"$f" ;;
	*.sql.gz) log "running $f"; gunzip -c "$f" | "${sql[@]}" ${database:+"$database"} ;;
	*) log "ignoring $f" ;;
	esac
done

"${sql[@]}" -e 'SHUTDOWN' || die "stopping the temporary server failed"
wait "$pid" || true
pid=
unset MYSQL_PWD
initialized=1
trap - EXIT
log "initialized; starting the server"
exec "$@"
