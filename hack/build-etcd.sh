#!/usr/bin/env bash
# Builds etcd from the Go module proxy (go.etcd.io/etcd/server/v3 is etcd's main package in 3.5).
# usage: hack/build-etcd.sh VERSION OUT_DIR     e.g. hack/build-etcd.sh v3.5.21 "$cache/etcd/v3.5.21"
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || die "usage: $0 VERSION OUT_DIR"
version=$1 out=$2
lock_file "$out/.etcd.lock" # held until this script exits
[ -x "$out/etcd" ] && exit 0

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log "building etcd $version from the Go module proxy (first time: about two minutes)"
cat >"$work/go.mod" <<MOD
module mysqlbench.local/etcd-binary

go 1.23

require go.etcd.io/etcd/server/v3 $version
MOD
printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >"$work/tools.go"
cd "$work"
GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || GOFLAGS=-mod=mod go mod tidy
mkdir -p "$out"
CGO_ENABLED=0 go build -trimpath -tags tools -ldflags "-s -w" -o "$work/etcd" go.etcd.io/etcd/server/v3
mv -f "$work/etcd" "$out/etcd"
log "built etcd into $out"
