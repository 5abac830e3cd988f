#!/usr/bin/env bash
# Builds the manager image without a Docker engine or any registry access: a static binary at
# /manager plus an /etc/passwd naming the nonroot user (65532), on an empty base, with the
# platform, entrypoint and user set. Writes an image tarball that `docker load`,
# `kind load image-archive` and `ctr images import` accept (FORMAT=oci: an OCI image layout tar).
#
# hack/image-from-rootfs.sh makes the image (see there why through a loopback registry).
#
# env: CRANE (path to crane), IMG (name:tag recorded in the tarball), OUT (tarball path),
#      GOARCH (default amd64), FORMAT (docker | oci).
set -euo pipefail
hack=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$hack/.." && pwd)
. "$hack/lib.sh"
. "$hack/image-from-rootfs.sh"

CRANE=${CRANE:-$root/bin/crane}
IMG=${IMG:-ghcr.io/mysqlbench/mysqlbench-operator:dev}
OUT=${OUT:-$root/bin/images/manager.tar}
GOARCH=${GOARCH:-amd64}
FORMAT=${FORMAT:-docker}
platform=linux/$GOARCH

[ -x "$CRANE" ] || die "crane not found at $CRANE (make crane)"
case $FORMAT in docker | oci) ;; *) die "FORMAT must be docker or oci, not $FORMAT" ;; esac

work=$(mktemp -d)
trap 'image_cleanup; rm -rf "$work"' EXIT

log "building /manager for $platform"
mkdir -p "$work/rootfs/etc"
(cd "$root" && CGO_ENABLED=0 GOOS=linux GOARCH="$GOARCH" \
	go build -trimpath -ldflags="-s -w" -o "$work/rootfs/manager" ./cmd)
# The same nonroot user as distroless: readable names for `id`, ps and logs; the numeric USER
# below is what runAsNonRoot checks.
printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
	'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' >"$work/rootfs/etc/passwd"
printf '%s\n' 'root:x:0:' 'nonroot:x:65532:' >"$work/rootfs/etc/group"
chmod 0755 "$work/rootfs/manager"
chmod 0644 "$work/rootfs/etc/passwd" "$work/rootfs/etc/group"

image_from_rootfs "$work/rootfs" /manager 65532:65532 mysqlbench-operator "$IMG" "$OUT" "$FORMAT" "$platform"
echo "$OUT"
