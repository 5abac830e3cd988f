#!/usr/bin/env bash
# Builds the go-tpc client image without a Docker engine or any registry access (what
# images/go-tpc/Dockerfile builds with one): go-tpc (GOTPC_VERSION, from the Go module proxy) at
# /go-tpc and the operator's launcher (cmd/gotpc-launcher) at /gotpc-launcher, both static, and an
# /etc/passwd naming the client user (10001, the uid the operator's client pods run as), on an
# empty base. Skipped when OUT was built from the same go-tpc version and launcher sources
# (OUT.stamp).
#
# env: CRANE, IMG (default ghcr.io/mysqlbench/go-tpc:$GOTPC_VERSION), OUT (default
#      bin/images/go-tpc.tar), GOTPC_VERSION (v1.0.7), GOARCH (amd64), FORMAT (docker | oci).
set -euo pipefail
hack=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$hack/.." && pwd)
. "$hack/lib.sh"
. "$hack/image-from-rootfs.sh"

CRANE=${CRANE:-$root/bin/crane}
GOTPC_VERSION=${GOTPC_VERSION:-v1.0.7}
IMG=${IMG:-ghcr.io/mysqlbench/go-tpc:$GOTPC_VERSION}
OUT=${OUT:-$root/bin/images/go-tpc.tar}
GOARCH=${GOARCH:-amd64}
FORMAT=${FORMAT:-docker}
platform=linux/$GOARCH

[ -x "$CRANE" ] || die "crane not found at $CRANE (make crane)"
case $FORMAT in docker | oci) ;; *) die "FORMAT must be docker or oci, not $FORMAT" ;; esac

# What the image is made of: go-tpc's version, the launcher's sources and what they import.
stamp=$( (
	echo "$IMG $GOTPC_VERSION $GOARCH $FORMAT"
	cd "$root" && cat go.sum cmd/gotpc-launcher/*.go internal/gotpc/*.go internal/sysbench/*.go hack/image-from-rootfs.sh "$0"
) | sha256sum | cut -c1-16)
if [ -f "$OUT" ] && [ "$(cat "$OUT.stamp" 2>/dev/null)" = "$stamp" ]; then
	log "$OUT is up to date ($IMG)"
	echo "$OUT"
	exit 0
fi

work=$(mktemp -d)
trap 'image_cleanup; rm -rf "$work"' EXIT
mkdir -p "$work/rootfs/etc" "$work/mod"

log "building go-tpc $GOTPC_VERSION for $platform"
# In a throw-away module, so go-tpc's own dependencies resolve as its go.mod says.
(cd "$work/mod" && go mod init build >/dev/null 2>&1 &&
	GOFLAGS=-mod=mod go get "github.com/pingcap/go-tpc/cmd/go-tpc@$GOTPC_VERSION" >/dev/null 2>&1 &&
	CGO_ENABLED=0 GOOS=linux GOARCH="$GOARCH" GOFLAGS=-mod=mod \
		go build -trimpath -ldflags="-s -w" -o "$work/rootfs/go-tpc" github.com/pingcap/go-tpc/cmd/go-tpc) ||
	die "cannot build go-tpc $GOTPC_VERSION from the Go module proxy"
log "building the launcher"
(cd "$root" && CGO_ENABLED=0 GOOS=linux GOARCH="$GOARCH" \
	go build -trimpath -ldflags="-s -w" -o "$work/rootfs/gotpc-launcher" ./cmd/gotpc-launcher)
printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' 'gotpc:x:10001:10001:gotpc:/:/sbin/nologin' >"$work/rootfs/etc/passwd"
printf '%s\n' 'root:x:0:' 'gotpc:x:10001:' >"$work/rootfs/etc/group"
chmod 0755 "$work/rootfs/go-tpc" "$work/rootfs/gotpc-launcher"
chmod 0644 "$work/rootfs/etc/passwd" "$work/rootfs/etc/group"

rm -f "$OUT.stamp"
image_from_rootfs "$work/rootfs" /gotpc-launcher 10001:10001 mysqlbench-go-tpc "$IMG" "$OUT" "$FORMAT" "$platform"
echo "$stamp" >"$OUT.stamp"
echo "$OUT"
