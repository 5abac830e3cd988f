#!/usr/bin/env bash
# Builds the images the local cluster's end-to-end runs need, from Debian packages alone (no image
# registry is reachable from these machines):
#   MARIADB_IMG  (default docker.io/library/mariadb:10.11): Debian bookworm's MariaDB 10.11 with an
#                entrypoint honouring the official images' env contract (images/mariadb/).
#                It carries the official name so that the same BenchmarkRun works here and on
#                kind; only the local cluster's registry serves it under that name.
#   SYSBENCH_IMG (default ghcr.io/mysqlbench/sysbench:1.0.20): the packages of
#                images/sysbench/packages.txt, user 10001, entrypoint sysbench, as its Dockerfile.
# Both start from one `debootstrap --variant=minbase bookworm` root filesystem. Root filesystems
# are cached under $MYSQLBENCH_CACHE/debian-images, keyed by the package versions they hold, so
# only the first run downloads and installs (about 10 minutes); the image tarballs are written
# to OUT_DIR (default bin/images), where test/localcluster/cluster.sh picks them up.
#
# env: CRANE, OUT_DIR, MARIADB_IMG, SYSBENCH_IMG, DEBIAN_MIRROR, MYSQLBENCH_CACHE
set -euo pipefail
hack=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$hack/.." && pwd)
. "$hack/lib.sh"

CRANE=${CRANE:-$root/bin/crane}
OUT_DIR=${OUT_DIR:-$root/bin/images}
MARIADB_IMG=${MARIADB_IMG:-docker.io/library/mariadb:10.11}
SYSBENCH_IMG=${SYSBENCH_IMG:-ghcr.io/mysqlbench/sysbench:1.0.20}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
cache=$MYSQLBENCH_CACHE/debian-images

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot)"
[ -x "$CRANE" ] || die "crane not found at $CRANE (make crane)"

work=$(mktemp -d)
chmod 755 "$work" # apt's _apt user writes downloads here
registry_pid=
cleanup() {
	if [ -n "$registry_pid" ]; then kill "$registry_pid" 2>/dev/null || true; wait "$registry_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

candidate() { apt-cache policy "$1" | sed -n 's/^  Candidate: //p'; }

# debootstrap from its Debian package, unpacked (not installed) into the cache.
debootstrap_dir=$cache/tools/debootstrap-$(candidate debootstrap)
if [ ! -x "$debootstrap_dir/usr/sbin/debootstrap" ]; then
	log "fetching debootstrap"
	(cd "$work" && apt-get download debootstrap >/dev/null)
	mkdir -p "$debootstrap_dir"
	dpkg-deb -x "$work"/debootstrap_*.deb "$debootstrap_dir"
fi

# in_private_mounts COMMAND...: a mount namespace of its own, so whatever /proc and /dev mounts the
# chroot work needs disappear with it and never show on the host, even when the build fails.
in_private_mounts() { unshare --mount --propagation private -- "$@"; }

# chroot_run ROOTFS SCRIPT: run a shell script inside ROOTFS with /proc and /dev mounted.
chroot_run() {
	in_private_mounts bash -euc 'mount -t proc proc "$1/proc"; mount --rbind /dev "$1/dev"; chroot "$1" /bin/bash -euc "$2"' _ "$1" "$2"
}

# unpack TAR DIR / pack DIR TAR: root filesystems keep numeric owners (the mysql user's files).
unpack() { mkdir -p "$2" && tar --extract --numeric-owner --file "$1" --directory "$2"; }
pack() {
	tar --create --numeric-owner --file "$2.tmp" --directory "$1" \
		--exclude=./proc/* --exclude=./sys/* --exclude=./dev/* --exclude=./run/* --exclude=./tmp/* \
		--exclude=./var/cache/apt/* --exclude=./var/lib/apt/lists/* --exclude=./var/log/* .
	mv "$2.tmp" "$2"
}

# The base: minbase bookworm plus the security and updates suites (packages.txt pins versions
# that come from bookworm-security).
base_tar=$cache/rootfs/$SUITE-minbase-debootstrap-$(candidate debootstrap).tar
if [ ! -f "$base_tar" ]; then
	log "debootstrap --variant=minbase $SUITE (first time: about 5 minutes)"
	mkdir -p "$cache/rootfs"
	in_private_mounts bash -c 'DEBOOTSTRAP_DIR=$1 "$2" --variant=minbase "$3" "$4" "$5" >"$6" 2>&1' _ \
		"$debootstrap_dir/usr/share/debootstrap" "$debootstrap_dir/usr/sbin/debootstrap" \
		"$SUITE" "$work/base" "$DEBIAN_MIRROR" "$work/debootstrap.log" ||
		die "debootstrap failed: $(tail -20 "$work/debootstrap.log")"
	cat >"$work/base/etc/apt/sources.list" <<EOF
deb $DEBIAN_MIRROR $SUITE main
deb $DEBIAN_MIRROR $SUITE-updates main
deb ${DEBIAN_MIRROR%/debian}/debian-security $SUITE-security main
EOF
	pack "$work/base" "$base_tar"
	rm -rf "$work/base"
fi

# install_tar NAME KEY SCRIPT: the base plus what SCRIPT installs (run in a chroot with network,
# services blocked by a policy-rc.d), cached as rootfs/NAME-KEY.tar.
install_tar() {
	local name=$1 key=$2 script=$3 dir=$work/$1
	local tarball=$cache/rootfs/$name-$key.tar
	if [ ! -f "$tarball" ]; then
		log "building the $name root filesystem (first time: a few minutes)"
		unpack "$base_tar" "$dir"
		cp /etc/resolv.conf "$dir/etc/resolv.conf"
		printf '#!/bin/sh\n# Image build: never start services.\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
		chmod 755 "$dir/usr/sbin/policy-rc.d"
		chroot_run "$dir" "export DEBIAN_FRONTEND=noninteractive; apt-get update -qq; $script; apt-get clean" \
			>"$work/$name.log" 2>&1 || die "$name install failed: $(tail -20 "$work/$name.log")"
		rm -f "$dir/usr/sbin/policy-rc.d" "$dir/etc/resolv.conf"
		pack "$dir" "$tarball"
		rm -rf "$dir"
	fi
	echo "$tarball"
}

mariadb_version=$(candidate mariadb-server)
mariadb_tar=$(install_tar mariadb "$mariadb_version" "
	apt-get install -y -qq --no-install-recommends mariadb-server=$mariadb_version mariadb-client
	rm -rf /var/lib/mysql/* && mkdir -p /var/lib/mysql /run/mysqld && chown mysql:mysql /var/lib/mysql /run/mysqld")

packages=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$root/images/sysbench/packages.txt" | tr '\n' ' ')
sysbench_tar=$(install_tar sysbench "$(sha256sum <<<"$packages" | cut -c1-12)" "
	apt-get install -y -qq --no-install-recommends $packages
	sysbench --version && test -f /usr/share/sysbench/oltp_point_select.lua
	useradd --uid 10001 --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin sysbench")

# The images' own files on top: the entrypoint and the container defaults of MariaDB.
mkdir -p "$work/mariadb-extra/usr/local/bin" "$work/mariadb-extra/etc/mysql/mariadb.conf.d" "$work/mariadb-extra/etc/mysql/conf.d"
install -m 0755 "$root/images/mariadb/entrypoint.sh" "$work/mariadb-extra/usr/local/bin/docker-entrypoint.sh"
install -m 0644 "$root/images/mariadb/99-container.cnf" "$work/mariadb-extra/etc/mysql/mariadb.conf.d/99-container.cnf"
install -m 0644 "$root/images/mariadb/my.cnf" "$work/mariadb-extra/etc/mysql/my.cnf"
tar --create --file "$work/mariadb-extra.tar" --directory "$work/mariadb-extra" --owner=0 --group=0 --numeric-owner --mtime=@0 .

# crane sets the platform only through a registry: a throwaway one on loopback.
"$CRANE" registry serve --address 127.0.0.1:0 >"$work/registry.log" 2>&1 &
registry_pid=$!
port=
for _ in $(seq 100); do
	port=$(sed -n 's/.*serving on port \([0-9][0-9]*\).*/\1/p' "$work/registry.log")
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || die "crane registry serve did not start: $(cat "$work/registry.log")"
reg=127.0.0.1:$port
crane_q() { "$CRANE" "$@" >>"$work/crane.log" 2>&1 || die "crane $1 failed: $(tail -5 "$work/crane.log")"; }

mkdir -p "$OUT_DIR"
log "writing $MARIADB_IMG (MariaDB $mariadb_version)"
crane_q append --oci-empty-base --new_layer "$mariadb_tar" --new_layer "$work/mariadb-extra.tar" --new_tag "$reg/mariadb:layers"
crane_q mutate "$reg/mariadb:layers" --tag "$reg/mariadb:image" --set-platform linux/amd64 \
	--entrypoint /usr/local/bin/docker-entrypoint.sh --cmd mariadbd \
	--env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env LANG=C.UTF-8 \
	--label "org.opencontainers.image.version=$mariadb_version"
crane_q mutate "$reg/mariadb:image" --tag "$MARIADB_IMG" --output "$OUT_DIR/mariadb.tar"

log "writing $SYSBENCH_IMG"
crane_q append --oci-empty-base --new_layer "$sysbench_tar" --new_tag "$reg/sysbench:layers"
crane_q mutate "$reg/sysbench:layers" --tag "$reg/sysbench:image" --set-platform linux/amd64 \
	--entrypoint sysbench --cmd=--version --user 10001:10001 --workdir / \
	--env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
crane_q mutate "$reg/sysbench:image" --tag "$SYSBENCH_IMG" --output "$OUT_DIR/sysbench.tar"
log "wrote $OUT_DIR/mariadb.tar ($(du -h "$OUT_DIR/mariadb.tar" | cut -f1)) and $OUT_DIR/sysbench.tar ($(du -h "$OUT_DIR/sysbench.tar" | cut -f1))"
