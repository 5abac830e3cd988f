#!/bin/bash
# Entrypoint of the local cluster's MariaDB image (Debian bookworm's mariadb-server, built by
# hack/build-debian-images.sh). It follows the env contract of the official mariadb image, so the
# operator's builtin engine treats both alike:
#   MARIADB_ROOT_PASSWORD / MYSQL_ROOT_PASSWORD, or MARIADB_ALLOW_EMPTY_ROOT_PASSWORD /
#   MYSQL_ALLOW_EMPTY_PASSWORD, or MARIADB_RANDOM_ROOT_PASSWORD / MYSQL_RANDOM_ROOT_PASSWORD
#   MARIADB_ROOT_HOST / MYSQL_ROOT_HOST (default %)
#   MARIADB_DATABASE / MYSQL_DATABASE, MARIADB_USER / MYSQL_USER, MARIADB_PASSWORD / MYSQL_PASSWORD
#   each also as NAME_FILE (read from that file); /docker-entrypoint-initdb.d/*.sql and *.sh
#   config from /etc/mysql/conf.d, read last (see my.cnf), including datadir.
# The server listens on TCP only once the database, users and config are in place: the temporary
# server that initializes them runs with --skip-networking.
set -euo pipefail

log() { printf '%s [entrypoint] %s\n' "$(date -u +%FT%TZ)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# setting NAME [ALIAS...]: the first of MARIADB_NAME, MYSQL_NAME (or MYSQL_ALIAS), or the contents
# of the file their _FILE variant names; empty if none is set.
setting() {
	local var
	for var in "MARIADB_$1" "MYSQL_$1" "${@:2}"; do
		if [ -n "${!var:-}" ]; then printf '%s' "${!var}"; return; fi
		var=${var}_FILE
		if [ -n "${!var:-}" ]; then cat "${!var}"; return; fi
	done
}

# SQL string literal and identifier quoting.
sql_string() { local s=${1//\\/\\\\}; printf "'%s'" "${s//\'/\\\'}"; }
sql_ident() { printf '`%s`' "${1//\`/\`\`}"; }

# `docker run image --option` means the server with that option.
if [ "${1:0:1}" = - ]; then set -- mariadbd "$@"; fi
case $1 in
mariadbd | mysqld) ;;
*) exec "$@" ;;
esac
# Started as root, the server switches to the mysql user itself.
if [ "$(id -u)" = 0 ]; then set -- "$@" --user=mysql; fi

# datadir and socket as the server will see them: config files (conf.d included) plus arguments.
# Only the server's error output goes into the failure message (as the official images do): the
# help text on stdout would bury the one line that says what is wrong.
errors=$(mktemp)
help=$("$@" --verbose --help 2>"$errors") || die "the server rejects its configuration: $(cat "$errors")"
rm -f "$errors"
# The values are in the table after the option descriptions (whose wrapped lines can start with
# the same words).
value() { awk -v k="$1" '/^Variables \(--variable-name=value\)/ {table = 1} table && $1 == k {print $2; exit}' <<<"$help"; }
datadir=$(value datadir)
socket=$(value socket)
[ -n "$datadir" ] && [ -n "$socket" ] || die "no datadir or socket in the server's configuration"

mkdir -p "$datadir" "$(dirname "$socket")"
if [ "$(id -u)" = 0 ]; then chown mysql:mysql "$datadir" "$(dirname "$socket")"; fi

if [ ! -d "$datadir/mysql" ]; then
	root_password=$(setting ROOT_PASSWORD)
	if [ -z "$root_password" ]; then
		if [ -n "$(setting RANDOM_ROOT_PASSWORD)" ]; then
			root_password=$(tr -dc 'A-Za-z0-9' </dev/urandom | head -c 32)
			log "GENERATED ROOT PASSWORD: $root_password"
		elif [ -z "$(setting ALLOW_EMPTY_ROOT_PASSWORD MYSQL_ALLOW_EMPTY_PASSWORD)" ]; then
			die "database is uninitialized and no root password is set: set MARIADB_ROOT_PASSWORD, MARIADB_ALLOW_EMPTY_ROOT_PASSWORD or MARIADB_RANDOM_ROOT_PASSWORD"
		fi
	fi
	root_host=$(setting ROOT_HOST)
	root_host=${root_host:-%}
	database=$(setting DATABASE)
	user=$(setting USER)
	password=$(setting PASSWORD)
	[ "$user" != root ] || die "MARIADB_USER=root: the root account is configured by MARIADB_ROOT_PASSWORD"
	if [ -n "$user" ] && [ -z "$password" ]; then die "MARIADB_USER is set but MARIADB_PASSWORD is not"; fi

	log "initializing $datadir"
	mariadb-install-db --datadir="$datadir" --user=mysql --skip-test-db \
		--auth-root-authentication-method=normal --skip-name-resolve >/dev/null

	# A temporary server on the socket only, to create the accounts and the database.
	init_socket=$(dirname "$socket")/init.sock
	"$@" --skip-networking --socket="$init_socket" &
	pid=$!
	client=(mariadb --protocol=socket --socket="$init_socket" -uroot --skip-column-names)
	for _ in $(seq 120); do
		if "${client[@]}" -e 'SELECT 1' >/dev/null 2>&1; then break; fi
		kill -0 "$pid" 2>/dev/null || die "the temporary server exited during initialization"
		sleep 0.5
	done
	"${client[@]}" -e 'SELECT 1' >/dev/null || die "the temporary server did not accept connections"

	{
		echo "SET @@SESSION.SQL_LOG_BIN = 0;"
		# mariadb-install-db also creates root@<hostname>, root@127.0.0.1 and root@::1 (and
		# anonymous accounts): root is root@localhost plus root@ROOT_HOST only, as in the
		# official images.
		echo "DELETE FROM mysql.global_priv WHERE Host <> 'localhost' OR User = '';"
		echo "DELETE FROM mysql.proxies_priv WHERE Host <> 'localhost';"
		echo "FLUSH PRIVILEGES;"
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
	} | "${client[@]}" || die "creating the accounts failed"
	[ -z "$root_password" ] || client+=("-p$root_password")

	shopt -s nullglob
	for f in /docker-entrypoint-initdb.d/*; do
		case $f in
		*.sh) log "running $f"; . "$f" ;;
		*.sql) log "running $f"; "${client[@]}" ${database:+"$database"} <"$f" ;;
		*) log "ignoring $f" ;;
		esac
	done

	mariadb-admin --socket="$init_socket" -uroot ${root_password:+"-p$root_password"} shutdown
	wait "$pid" || true
	log "initialized; starting the server"
fi

exec "$@"
