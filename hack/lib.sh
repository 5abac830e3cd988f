#!/usr/bin/env bash
# Shared settings for the hack/ scripts. Sourced, not executed.

# Where binaries built from the Go module proxy are cached, keyed by component and version, so a
# second run costs seconds. Override with MYSQLBENCH_CACHE.
MYSQLBENCH_CACHE=${MYSQLBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mysqlbench-operator}

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# go_mod_file MODULE@VERSION prints the path of that module's go.mod in the module cache.
go_mod_file() {
	(cd "$(mktemp -d)" && GOFLAGS=-mod=mod go mod download -json "$1") |
		sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p'
}
