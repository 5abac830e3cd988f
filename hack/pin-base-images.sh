#!/usr/bin/env bash
# Pins every registry base image of the Dockerfiles to the digest its tag names now:
# FROM name:tag[@sha256:old] becomes FROM name:tag@sha256:new (the tag stays, for the reader and
# for the next run). Needs the registries (crane digest); run it, review the diff, update the
# dated comment above each FROM, commit. scratch and build stages are left alone.
#
# env: CRANE (path to crane), DOCKERFILES (default: every Dockerfile git knows)
set -euo pipefail
hack=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$hack/.." && pwd)
. "$hack/lib.sh"

CRANE=${CRANE:-$root/bin/crane}
[ -x "$CRANE" ] || die "crane not found at $CRANE (make crane)"
cd "$root"
DOCKERFILES=${DOCKERFILES:-$(git ls-files 'Dockerfile' '*/Dockerfile' '*.Dockerfile')}

for f in $DOCKERFILES; do
	stages=" scratch "
	while read -r kw ref rest; do
		[ "${kw^^}" = FROM ] || continue
		name=${ref%@sha256:*}
		case $rest in [Aa][Ss]\ *) stages+="${rest#* } " ;; esac
		case "$stages" in *" $name "*) continue ;; esac
		digest=$("$CRANE" digest "$name") || die "$f: cannot resolve $name (is the registry reachable?)"
		if [ "$ref" != "$name@$digest" ]; then
			log "$f: $name -> $digest"
			sed -i "s#^\(FROM[[:space:]]\+\)$(printf '%s' "$ref" | sed 's/[.[\*^$]/\\&/g')\([[:space:]]\|$\)#\1$name@$digest\2#" "$f"
		fi
	done <"$f"
done
