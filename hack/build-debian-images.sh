#!/usr/bin/env bash
# Builds the images the local cluster's end-to-end runs and the demo need, from Debian packages
# alone (no image registry is reachable from these machines):
#   server images, each named like the official image whose env and config contract it follows
#   (images/mysql-server/), so the same BenchmarkRun works here and on kind; only the local
#   cluster's registry serves them under those names:
#     mysql:9.7      Oracle's MySQL 9.7 from Debian sid (mysql-server-core, mysql-client)
#     mariadb:10.5   MariaDB 10.5 from Debian bullseye
#     mariadb:10.11  MariaDB 10.11 from Debian bookworm
#     mariadb:11.8   MariaDB 11.8 from Debian trixie
#   SYSBENCH_IMG (default ghcr.io/mysqlbench/sysbench:1.0.20): the packages of
#                images/sysbench/packages.txt (bookworm), user 10001, entrypoint sysbench, as its
#                Dockerfile.
# Each image starts from a `debootstrap --variant=minbase <suite>` root filesystem. Root
# filesystems are cached under $MYSQLBENCH_CACHE/debian-images: bookworm's keyed by the package
# versions the host's apt picks, the other suites' by suite and package list (a snapshot: delete
# the cache directory to take newer packages). Only the first run downloads and installs (about 5
# minutes per suite); the image tarballs are written to OUT_DIR (default bin/images), where
# test/localcluster/cluster.sh picks them up.
#
# env: SERVER_IMAGES (default: all four above), CRANE, OUT_DIR, SYSBENCH_IMG, DEBIAN_MIRROR,
#      MYSQLBENCH_CACHE
set -euo pipefail
hack=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$hack/.." && pwd)
. "$hack/lib.sh"

CRANE=${CRANE:-$root/bin/crane}
OUT_DIR=${OUT_DIR:-$root/bin/images}
SERVER_IMAGES=${SERVER_IMAGES:-mysql:9.7 mariadb:10.5 mariadb:10.11 mariadb:11.8}
SYSBENCH_IMG=${SYSBENCH_IMG:-ghcr.io/mysqlbench/sysbench:1.0.20}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=$MYSQLBENCH_CACHE/debian-images

# server_image NAME: sets suite, packages, server (the server binary) and family for one of the
# server images this script knows.
server_image() {
	case $1 in
	mysql:9.7) suite=sid packages="mysql-server-core mysql-client" server=mysqld family=mysql ;;
	mariadb:10.5) suite=bullseye packages="mariadb-server mariadb-client" server=mariadbd family=mariadb ;;
	mariadb:10.11) suite=bookworm packages="mariadb-server mariadb-client" server=mariadbd family=mariadb ;;
	mariadb:11.8) suite=trixie packages="mariadb-server mariadb-client" server=mariadbd family=mariadb ;;
	*) die "unknown server image $1: this script builds mysql:9.7, mariadb:10.5, mariadb:10.11 and mariadb:11.8" ;;
	esac
}
for img in $SERVER_IMAGES; do server_image "$img"; done # unknown names fail before any work

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

# debootstrap from its Debian package, unpacked (not installed) into the cache. Bookworm's
# debootstrap knows bullseye, trixie and sid.
debootstrap_version=$(candidate debootstrap)
debootstrap_dir=$cache/tools/debootstrap-$debootstrap_version
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

# base_tar SUITE: minbase SUITE plus its updates and security suites (sid has neither), cached.
base_tar() {
	local suite=$1 tarball=$cache/rootfs/$1-minbase-debootstrap-$debootstrap_version.tar dir=$work/base-$1
	if [ ! -f "$tarball" ]; then
		log "debootstrap --variant=minbase $suite (first time: about 5 minutes)"
		mkdir -p "$cache/rootfs"
		in_private_mounts bash -c 'DEBOOTSTRAP_DIR=$1 "$2" --variant=minbase "$3" "$4" "$5" >"$6" 2>&1' _ \
			"$debootstrap_dir/usr/share/debootstrap" "$debootstrap_dir/usr/sbin/debootstrap" \
			"$suite" "$dir" "$DEBIAN_MIRROR" "$work/debootstrap-$suite.log" ||
			die "debootstrap $suite failed: $(tail -20 "$work/debootstrap-$suite.log")"
		echo "deb $DEBIAN_MIRROR $suite main" >"$dir/etc/apt/sources.list"
		if [ "$suite" != sid ]; then
			cat >>"$dir/etc/apt/sources.list" <<EOF
deb $DEBIAN_MIRROR $suite-updates main
deb ${DEBIAN_MIRROR%/debian}/debian-security $suite-security main
EOF
		fi
		pack "$dir" "$tarball"
		rm -rf "$dir"
	fi
	echo "$tarball"
}

# install_tar NAME KEY SUITE SCRIPT: SUITE's base plus what SCRIPT installs (run in a chroot with
# network, services blocked by a policy-rc.d), cached as rootfs/NAME-KEY.tar.
install_tar() {
	local name=$1 key=$2 suite=$3 script=$4 dir=$work/$1 base tarball
	tarball=$cache/rootfs/$name-$key.tar
	if [ ! -f "$tarball" ]; then
		base=$(base_tar "$suite")
		log "building the $name root filesystem from $suite (first time: a few minutes)"
		unpack "$base" "$dir"
		cp /etc/resolv.conf "$dir/etc/resolv.conf"
		printf '#!/bin/sh\n# Image build: never start services.\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
		chmod 755 "$dir/usr/sbin/policy-rc.d"
		# sid's Release file is signed with a Valid-Until that has passed by these machines'
		# clock; the other suites' files are checked as usual.
		local apt_opts=
		[ "$suite" != sid ] || apt_opts="-o Acquire::Check-Valid-Until=false"
		chroot_run "$dir" "export DEBIAN_FRONTEND=noninteractive
			apt-get $apt_opts update -qq
			$script
			apt-get clean" \
			>"$work/$name.log" 2>&1 || die "$name install failed: $(tail -20 "$work/$name.log")"
		rm -f "$dir/usr/sbin/policy-rc.d" "$dir/etc/resolv.conf"
		pack "$dir" "$tarball"
		rm -rf "$dir"
	fi
	echo "$tarball"
}

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

# extra_layer FAMILY: the server images' own files (the shared entrypoint and the family's config
# files) as a layer tarball; prints its path.
extra_layer() {
	local family=$1 d=$work/extra-$1
	mkdir -p "$d/usr/local/bin" "$d/etc/mysql/conf.d" "$d/docker-entrypoint-initdb.d"
	install -m 0755 "$root/images/mysql-server/docker-entrypoint.sh" "$d/usr/local/bin/docker-entrypoint.sh"
	if [ "$family" = mariadb ]; then
		mkdir -p "$d/etc/mysql/mariadb.conf.d"
		install -m 0644 "$root/images/mysql-server/mariadb/my.cnf" "$d/etc/mysql/my.cnf"
		install -m 0644 "$root/images/mysql-server/mariadb/99-container.cnf" "$d/etc/mysql/mariadb.conf.d/99-container.cnf"
	else
		install -m 0644 "$root/images/mysql-server/mysql/my.cnf" "$d/etc/my.cnf"
		# Debian's /etc/mysql/my.cnf (mysql-common) would read conf.d a second time and
		# mysql.conf.d after it: the image's config is /etc/my.cnf alone.
		printf '# The configuration is /etc/my.cnf, which reads /etc/mysql/conf.d.\n' >"$d/etc/mysql/my.cnf"
	fi
	tar --create --file "$work/extra-$family.tar" --directory "$d" --owner=0 --group=0 --numeric-owner --mtime=@0 .
	echo "$work/extra-$family.tar"
}

mkdir -p "$OUT_DIR"
# The mysql user and group are 999, as in the official images, created before the packages so that
# their maintainer scripts find them. Initialization happens when a container starts, so the
# image's data directory is empty.
for img in $SERVER_IMAGES; do
	server_image "$img"
	name=${img%%:*}-${img#*:}
	key=$suite-$(sha256sum <<<"$packages" | cut -c1-12)
	install=$packages
	if [ "$suite" = bookworm ]; then
		# The host is bookworm: key by the exact version, so a point release gives a new image.
		key=$(candidate mariadb-server)
		install="mariadb-server=$key mariadb-client"
	fi
	tarball=$(install_tar "$name" "$key" "$suite" "
		groupadd --system --gid 999 mysql
		useradd --system --uid 999 --gid 999 --no-create-home --home-dir /nonexistent --shell /bin/false mysql
		apt-get install -y -qq --no-install-recommends $install
		rm -rf /var/lib/mysql && mkdir -p /var/lib/mysql /var/lib/mysql-files /var/run/mysqld
		chown mysql:mysql /var/lib/mysql /var/lib/mysql-files /var/run/mysqld
		$server --version | tee /SERVER_VERSION")
	# The image is a function of its root filesystem and the project's files on top: skip the
	# crane work (tens of seconds per image) when neither changed since the tarball was written.
	stamp=$(cat "$root/images/mysql-server/docker-entrypoint.sh" "$root/images/mysql-server/$family"/* - <<<"$img $(ls -l --time-style=+%s "$tarball")" |
		sha256sum | cut -c1-16)
	if [ -f "$OUT_DIR/$name.tar" ] && [ "$(cat "$OUT_DIR/$name.tar.stamp" 2>/dev/null)" = "$stamp" ]; then
		log "$img: $OUT_DIR/$name.tar is current"
		continue
	fi
	rm -f "$OUT_DIR/$name.tar.stamp"
	version=$(tar -xOf "$tarball" ./SERVER_VERSION | sed -n 's/.*Ver \([0-9][0-9.]*[0-9]\).*/\1/p')
	[ -n "$version" ] || die "$img: cannot read the server version from its root filesystem"
	log "writing $img ($family $version from Debian $suite)"
	crane_q append --oci-empty-base --new_layer "$tarball" --new_layer "$(extra_layer "$family")" --new_tag "$reg/$name:layers"
	crane_q mutate "$reg/$name:layers" --tag "$reg/$name:image" --set-platform linux/amd64 \
		--entrypoint /usr/local/bin/docker-entrypoint.sh --cmd "$server" \
		--env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env LANG=C.UTF-8 \
		--label "org.opencontainers.image.version=$version" \
		--label "org.opencontainers.image.description=$family $version from Debian $suite with the official image's env contract"
	crane_q mutate "$reg/$name:image" --tag "docker.io/library/$img" --output "$OUT_DIR/$name.tar"
	echo "$stamp" >"$OUT_DIR/$name.tar.stamp"
	log "wrote $OUT_DIR/$name.tar ($(du -h "$OUT_DIR/$name.tar" | cut -f1))"
done

packages=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$root/images/sysbench/packages.txt" | tr '\n' ' ')
sysbench_tar=$(install_tar sysbench "$(sha256sum <<<"$packages" | cut -c1-12)" bookworm "
	apt-get install -y -qq --no-install-recommends $packages
	sysbench --version && test -f /usr/share/sysbench/oltp_point_select.lua
	useradd --uid 10001 --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin sysbench")

stamp=$(sha256sum <<<"$SYSBENCH_IMG $(ls -l --time-style=+%s "$sysbench_tar")" | cut -c1-16)
if [ -f "$OUT_DIR/sysbench.tar" ] && [ "$(cat "$OUT_DIR/sysbench.tar.stamp" 2>/dev/null)" = "$stamp" ]; then
	log "$SYSBENCH_IMG: $OUT_DIR/sysbench.tar is current"
	exit 0
fi
rm -f "$OUT_DIR/sysbench.tar.stamp"
log "writing $SYSBENCH_IMG"
crane_q append --oci-empty-base --new_layer "$sysbench_tar" --new_tag "$reg/sysbench:layers"
crane_q mutate "$reg/sysbench:layers" --tag "$reg/sysbench:image" --set-platform linux/amd64 \
	--entrypoint sysbench --cmd=--version --user 10001:10001 --workdir / \
	--env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
crane_q mutate "$reg/sysbench:image" --tag "$SYSBENCH_IMG" --output "$OUT_DIR/sysbench.tar"
echo "$stamp" >"$OUT_DIR/sysbench.tar.stamp"
log "wrote $OUT_DIR/sysbench.tar ($(du -h "$OUT_DIR/sysbench.tar" | cut -f1))"
