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

# go_install_into DIR BINARY PKG@VERSION: `go install` into a scratch GOBIN, then move the binary
# into the cache only once it is complete, so an interrupted build never leaves a broken binary.
# lock_file FILE: takes an exclusive lock on FILE (created) for the rest of the calling process,
# or until `exec {LOCK_FD}>&-` releases it. Two scripts building one cache entry at once (CI
# builds the local cluster's binaries in the background while make test wants kube-apiserver and
# etcd for envtest) then build it once: the second waits, then finds it built.
lock_file() {
	mkdir -p "$(dirname "$1")"
	exec {LOCK_FD}>"$1"
	flock "$LOCK_FD"
}

go_install_into() {
	local dir=$1 bin=$2 pkg=$3 gobin
	lock_file "$dir/.$bin.lock"
	if [ -x "$dir/$bin" ]; then
		exec {LOCK_FD}>&-
		return 0
	fi
	log "go install $pkg (first time: a few minutes)"
	gobin=$(mktemp -d)
	CGO_ENABLED=0 GOBIN=$gobin nice go install -trimpath -ldflags "-s -w" "$pkg"
	mkdir -p "$dir"
	mv -f "$gobin/$bin" "$dir/$bin"
	rm -rf "$gobin"
	exec {LOCK_FD}>&-
}

# go_build_into DIR BINARY MODULE_DIR: go_install_into for a main package of a module of the
# repository's own (built from its go.mod and go.sum, outside the project's module).
go_build_into() {
	local dir=$1 bin=$2 mod=$3 out
	lock_file "$dir/.$bin.lock"
	if [ -x "$dir/$bin" ]; then
		exec {LOCK_FD}>&-
		return 0
	fi
	log "go build $mod (first time: a few minutes)"
	out=$(mktemp -d)
	(cd "$mod" && CGO_ENABLED=0 nice go build -trimpath -ldflags "-s -w" -o "$out/$bin" .)
	mkdir -p "$dir"
	mv -f "$out/$bin" "$dir/$bin"
	rm -rf "$out"
	exec {LOCK_FD}>&-
}

# podman_env points podman at the project's settings for kind nodes (test/kind/containers.conf)
# and keeps everything podman stores for the project in the cache: images and volumes in
# $MYSQLBENCH_CACHE/podman/storage, networks in .../networks, run-time state in the temp
# directory. A CONTAINERS_CONF set by the caller wins (then podman's storage is the caller's too).
podman_env() {
	[ -z "${CONTAINERS_CONF:-}" ] || return 0
	local dir=$MYSQLBENCH_CACHE/podman run
	# One run-time directory per storage: two caches must not share podman's locks and mount state.
	run=${TMPDIR:-/tmp}/mysqlbench-podman-$(id -u)-$(printf %s "$dir" | md5sum | cut -c1-8)
	mkdir -p "$dir/networks" "$run"
	sed -e "s|@RUN@|$run|g" -e "s|@NETWORKS@|$dir/networks|g" \
		"$(dirname "${BASH_SOURCE[0]}")/../test/kind/containers.conf" >"$dir/containers.conf"
	printf '[storage]\ndriver = "overlay"\ngraphroot = "%s"\nrunroot = "%s"\n' "$dir/storage" "$run/storage" >"$dir/storage.conf"
	export CONTAINERS_CONF=$dir/containers.conf CONTAINERS_STORAGE_CONF=$dir/storage.conf
}
