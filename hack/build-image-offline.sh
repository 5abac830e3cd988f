#!/usr/bin/env bash
# Builds the manager image without a Docker engine or any registry access: a static binary at
# /manager plus an /etc/passwd naming the nonroot user (65532), on an empty base, with the
# platform, entrypoint and user set. Writes an image tarball that `docker load`,
# `kind load image-archive` and `ctr images import` accept (FORMAT=oci: an OCI image layout tar).
#
# crane cannot set the platform of a local image, so the image passes through a throwaway
# in-memory registry (`crane registry serve`) bound to 127.0.0.1 only, stopped on exit.
#
# env: CRANE (path to crane), IMG (name:tag recorded in the tarball), OUT (tarball path),
#      GOARCH (default amd64), FORMAT (docker | oci).
set -euo pipefail
hack=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$hack/.." && pwd)
. "$hack/lib.sh"

CRANE=${CRANE:-$root/bin/crane}
IMG=${IMG:-ghcr.io/mysqlbench/mysqlbench-operator:dev}
OUT=${OUT:-$root/bin/images/manager.tar}
GOARCH=${GOARCH:-amd64}
FORMAT=${FORMAT:-docker}
platform=linux/$GOARCH

[ -x "$CRANE" ] || die "crane not found at $CRANE (make crane)"
case $FORMAT in docker | oci) ;; *) die "FORMAT must be docker or oci, not $FORMAT" ;; esac

work=$(mktemp -d)
registry_pid=
cleanup() {
	if [ -n "$registry_pid" ]; then
		kill "$registry_pid" 2>/dev/null || true
		wait "$registry_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

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
# Reproducible layer: fixed owner, order and timestamps.
tar --create --file "$work/layer.tar" --directory "$work/rootfs" \
	--owner=0 --group=0 --numeric-owner --mtime=@0 --no-recursion \
	etc etc/group etc/passwd manager

log "starting a loopback registry"
"$CRANE" registry serve --address 127.0.0.1:0 >"$work/registry.log" 2>&1 &
registry_pid=$!
port=
for _ in $(seq 100); do
	port=$(sed -n 's/.*serving on port \([0-9][0-9]*\).*/\1/p' "$work/registry.log")
	[ -n "$port" ] && break
	kill -0 "$registry_pid" 2>/dev/null || die "crane registry serve exited: $(cat "$work/registry.log")"
	sleep 0.1
done
[ -n "$port" ] || die "crane registry serve did not report its port: $(cat "$work/registry.log")"
repo=127.0.0.1:$port/mysqlbench-operator

"$CRANE" append --oci-empty-base --new_layer "$work/layer.tar" --new_tag "$repo:layer" >/dev/null
"$CRANE" mutate "$repo:layer" --tag "$repo:image" \
	--set-platform "$platform" \
	--entrypoint /manager \
	--user 65532:65532 \
	--workdir / \
	--label org.opencontainers.image.title=mysqlbench-operator \
	--label "org.opencontainers.image.version=${IMG##*:}" >/dev/null

# Check what the image will run as before writing it out.
config=$("$CRANE" config "$repo:image")
want() { jq -e "$1" >/dev/null <<<"$config" || die "image config: expected $1, got $config"; }
want '.config.Entrypoint == ["/manager"]'
want '.config.User == "65532:65532"'
want ".os == \"linux\" and .architecture == \"$GOARCH\""

mkdir -p "$(dirname "$OUT")"
rm -rf "$OUT"
if [ "$FORMAT" = docker ]; then
	# Tagged $IMG inside the tarball, so loading it yields the name the manifests use.
	"$CRANE" mutate "$repo:image" --tag "$IMG" --output "$OUT" >/dev/null
else
	"$CRANE" pull --format oci "$repo:image" "$work/layout"
	tar --create --file "$OUT" --directory "$work/layout" --sort=name .
fi
log "wrote $OUT ($FORMAT archive of $IMG, $platform, $(du -h "$OUT" | cut -f1))"
echo "$OUT"
