#!/usr/bin/env bash
# Checks that the host has the Debian packages of hack/host-packages.txt that GROUP needs, and
# installs the missing ones with apt-get when allowed, before anything long starts.
#
# usage: hack/host-deps.sh [--install|--check] GROUP...     GROUP: test, cluster, kind or all
#   (all is test and cluster; kind, the offline kind node image, only when named)
#   --install  install what is missing (root; apt-get update first when apt has no candidate)
#   --check    only name what is missing and fail (the default when not root)
#   --optional install as root; otherwise only warn (for make test, whose real-server tests skip
#              without these packages unless MYSQLBENCH_REQUIRE_REAL=1)
# Without either flag it installs as root and checks otherwise. MYSQLBENCH_NO_INSTALL=1 makes the
# default --check.
set -euo pipefail
hack=$(cd "$(dirname "$0")" && pwd)
. "$hack/lib.sh"

mode=auto optional=0
case ${1:-} in
--install) mode=install; shift ;;
--check) mode=check; shift ;;
--optional) optional=1; shift ;;
esac
[ $# -gt 0 ] || die "usage: $0 [--install|--check] test|cluster|kind|all..."
if [ "$mode" = auto ]; then
	mode=check
	if [ "$(id -u)" = 0 ] && [ "${MYSQLBENCH_NO_INSTALL:-0}" != 1 ]; then mode=install; fi
fi

# present CHECK: the command exists, (python3:MODULE) python3 can run that module, or (/PATH) that
# file is executable (helpers installed outside PATH, such as podman's).
present() {
	case $1 in
	/*) [ -x "$1" ] ;;
	python3:*) command -v python3 >/dev/null && python3 -m "${1#python3:}" --version >/dev/null 2>&1 ;;
	*) command -v "$1" >/dev/null ;;
	esac
}

missing=() why=()
while read -r package check groups _; do
	case $package in '' | '#'*) continue ;; esac
	want=0
	for g in "$@"; do
		case $g in
		all) [ "$groups" = kind ] || want=1 ;;
		test | cluster | kind) case ",$groups," in *",$g,"*) want=1 ;; esac ;;
		*) die "unknown group $g: test, cluster, kind or all" ;;
		esac
	done
	if [ "$want" = 1 ] && ! present "$check"; then
		missing+=("$package")
		why+=("${check#python3:} (package $package)")
	fi
done <"$hack/host-packages.txt"

[ ${#missing[@]} -gt 0 ] || exit 0
if [ "$mode" = check ] && [ "$optional" = 1 ] && [ "${MYSQLBENCH_REQUIRE_REAL:-0}" != 1 ]; then
	log "warning: missing on this host: ${why[*]}; the tests that need them will skip (as root: apt-get install ${missing[*]})"
	exit 0
fi
if [ "$mode" = check ]; then
	die "missing on this host: ${why[*]}; install with: apt-get install ${missing[*]}"
fi
command -v apt-get >/dev/null || die "missing on this host: ${why[*]}, and there is no apt-get to install them"
log "installing Debian packages: ${missing[*]}"
# A fresh machine may have no package lists yet, or stale ones that name versions the mirror no
# longer serves.
if apt-cache policy "${missing[@]}" | grep -q 'Candidate: (none)' || [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v '^lock$\|^partial$\|^auxfiles$')" ]; then
	apt-get update -qq
fi
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
for p in "${missing[@]}"; do
	check=$(awk -v p="$p" '$1 == p {print $2}' "$hack/host-packages.txt")
	present "$check" || die "installed $p, but ${check#python3:} is still missing"
done
