#!/usr/bin/env bash
# Sourced by the offline image builds (hack/build-image-offline.sh, hack/build-gotpc-image.sh):
# image_from_rootfs turns a directory of static binaries and /etc files into an image tarball on
# an empty base, without a Docker engine or any registry access. crane cannot set the platform of
# a local image, so the image passes through a throwaway in-memory registry (`crane registry
# serve`) bound to 127.0.0.1 only, stopped before it returns.
#
# image_from_rootfs ROOTFS ENTRYPOINT USER TITLE IMG OUT FORMAT PLATFORM
#   ROOTFS    directory whose entries become the image's one layer (owner root, mtime 0)
#   ENTRYPOINT the image's entrypoint (one path)
#   USER      numeric uid:gid (runAsNonRoot checks it)
#   TITLE     org.opencontainers.image.title
#   IMG       name:tag recorded in the tarball
#   OUT       tarball path; FORMAT docker or oci; PLATFORM e.g. linux/amd64
# needs: CRANE (path to crane), jq. A caller that may exit from inside it (die) calls
# image_cleanup from its EXIT trap, so that no registry outlives the script.
IMAGE_REGISTRY_PID=
image_cleanup() {
	if [ -n "$IMAGE_REGISTRY_PID" ]; then
		kill "$IMAGE_REGISTRY_PID" 2>/dev/null || true
		wait "$IMAGE_REGISTRY_PID" 2>/dev/null || true
		IMAGE_REGISTRY_PID=
	fi
}

image_from_rootfs() {
	local rootfs=$1 entrypoint=$2 user=$3 title=$4 img=$5 out=$6 format=$7 platform=$8
	local work registry_pid port repo config
	work=$(mktemp -d)
	# Reproducible layer: fixed owner, order and timestamps.
	(cd "$rootfs" && find . -mindepth 1 | LC_ALL=C sort | sed 's|^\./||') >"$work/entries"
	tar --create --file "$work/layer.tar" --directory "$rootfs" \
		--owner=0 --group=0 --numeric-owner --mtime=@0 --no-recursion --files-from "$work/entries"

	log "starting a loopback registry"
	"$CRANE" registry serve --address 127.0.0.1:0 >"$work/registry.log" 2>&1 &
	registry_pid=$!
	IMAGE_REGISTRY_PID=$registry_pid
	port=
	for _ in $(seq 100); do
		port=$(sed -n 's/.*serving on port \([0-9][0-9]*\).*/\1/p' "$work/registry.log")
		[ -n "$port" ] && break
		kill -0 "$registry_pid" 2>/dev/null || die "crane registry serve exited: $(cat "$work/registry.log")"
		sleep 0.1
	done
	[ -n "$port" ] || die "crane registry serve did not report its port: $(cat "$work/registry.log")"
	repo=127.0.0.1:$port/image

	"$CRANE" append --oci-empty-base --new_layer "$work/layer.tar" --new_tag "$repo:layer" >/dev/null
	"$CRANE" mutate "$repo:layer" --tag "$repo:image" \
		--set-platform "$platform" \
		--entrypoint "$entrypoint" \
		--user "$user" \
		--workdir / \
		--label "org.opencontainers.image.title=$title" \
		--label "org.opencontainers.image.version=${img##*:}" >/dev/null

	# Check what the image will run as before writing it out.
	config=$("$CRANE" config "$repo:image")
	want() { jq -e "$1" >/dev/null <<<"$config" || die "image config: expected $1, got $config"; }
	want ".config.Entrypoint == [\"$entrypoint\"]"
	want ".config.User == \"$user\""
	want ".os == \"${platform%%/*}\" and .architecture == \"${platform#*/}\""

	mkdir -p "$(dirname "$out")"
	rm -rf "$out"
	if [ "$format" = docker ]; then
		# Tagged $img inside the tarball, so loading it yields the name the manifests use.
		"$CRANE" mutate "$repo:image" --tag "$img" --output "$out" >/dev/null
	else
		"$CRANE" pull --format oci "$repo:image" "$work/layout"
		tar --create --file "$out" --directory "$work/layout" --sort=name .
	fi
	log "wrote $out ($format archive of $img, $platform, $(du -h "$out" | cut -f1))"
	image_cleanup
	rm -rf "$work"
}
