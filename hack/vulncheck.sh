#!/usr/bin/env bash
# Runs govulncheck on the module: the vulnerabilities the code reaches (call graph), in the Go
# standard library of the toolchain that builds it and in the required modules.
#
# The vulnerability database is vuln.go.dev's when that answers. Where it does not (these
# machines reach the Go module proxy and nothing else), the same database is built offline from
# the golang.org/x/vulndb module (its data/osv, the OSV files vuln.go.dev serves, indexed by its
# cmd/indexdb) at VULNDB_VERSION, fetched from the Go module proxy: as fresh as that pinned
# version, which the output names. Where neither can be had, it says so and that nothing was
# checked, and exits 0: a missing network is no finding.
#
# Exit status: govulncheck's (3 when the code reaches a vulnerability), or 0 with ADVISORY=1,
# which prints the findings and says that they do not fail the run.
#
# env: GOVULNCHECK, INDEXDB (binaries, from the Makefile), VULNDB_VERSION, VULNDB_DIR (where the
#      offline database is kept), ADVISORY
set -euo pipefail
hack=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$hack/.." && pwd)
. "$hack/lib.sh"

GOVULNCHECK=${GOVULNCHECK:?the govulncheck binary (make vulncheck installs it)}
INDEXDB=${INDEXDB:-}
VULNDB_VERSION=${VULNDB_VERSION:?a golang.org/x/vulndb version}
VULNDB_DIR=${VULNDB_DIR:-$root/bin/vulndb-$VULNDB_VERSION}
ADVISORY=${ADVISORY:-0}

if curl -sfI --max-time 10 https://vuln.go.dev/index/db.json >/dev/null 2>&1; then
	db=https://vuln.go.dev
	log "vulnerability database: $db"
else
	if [ ! -f "$VULNDB_DIR/index/modules.json" ]; then
		if ! src=$(cd "$(mktemp -d)" && go mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" 2>&1 |
			sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') || [ -z "$src" ] || [ ! -d "$src/data/osv" ]; then
			log "govulncheck NOT run: vuln.go.dev does not answer and golang.org/x/vulndb@$VULNDB_VERSION cannot be" \
				"fetched from the Go module proxy, so there is no vulnerability database to check against; nothing was checked"
			exit 0
		fi
		[ -x "$INDEXDB" ] || die "indexdb not found at '$INDEXDB' (make vulncheck installs it)"
		log "building the vulnerability database from golang.org/x/vulndb@$VULNDB_VERSION ($(ls "$src/data/osv" | wc -l) reports)"
		rm -rf "$VULNDB_DIR.tmp"
		"$INDEXDB" -vulns "$src/data/osv" -out "$VULNDB_DIR.tmp"
		rm -rf "$VULNDB_DIR"
		mv "$VULNDB_DIR.tmp" "$VULNDB_DIR"
	fi
	db=file://$VULNDB_DIR
	# The version's timestamp is the database's: the newest report it can hold.
	stamp=${VULNDB_VERSION#v0.0.0-}
	log "vulnerability database: golang.org/x/vulndb@$VULNDB_VERSION (reports up to ${stamp:0:4}-${stamp:4:2}-${stamp:6:2}), built offline: vuln.go.dev does not answer here"
fi

cd "$root"
log "govulncheck $("$GOVULNCHECK" -version 2>/dev/null | sed -n 's/^Scanner: govulncheck@//p'), $(go version | cut -d' ' -f3)"
rc=0
"$GOVULNCHECK" -db "$db" ./... || rc=$?
case $rc in
0) log "govulncheck: the code reaches no known vulnerability" ;;
3)
	if [ "$ADVISORY" = 1 ]; then
		log "govulncheck found vulnerabilities the code reaches (above); advisory run (ADVISORY=1): not failing on them." \
			"Fix: upgrade each module to its 'Fixed in' version (go get MODULE@VERSION; go mod tidy), and for the standard" \
			"library build with the Go release it names"
		rc=0
	fi
	;;
esac
exit "$rc"
