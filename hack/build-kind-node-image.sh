#!/usr/bin/env bash
# Builds a kind node image for Kubernetes K8S_VERSION without any registry (`kind build
# node-image` needs the docker CLI and pulls its base image and every control-plane image), from
# the Go module proxy and Debian's apt mirrors alone:
#   - Kubernetes binaries (hack/build-k8s-binaries.sh, kubeadm included), etcd
#     (hack/build-etcd.sh), CoreDNS and crictl, cached under $MYSQLBENCH_CACHE by version;
#   - the node's root filesystem: `debootstrap --variant=minbase bookworm` plus systemd,
#     containerd, runc, the CNI plugins and the tools kubeadm and the kubelet call, all from
#     Debian, and the files of images/kind-node/files (entrypoint, systemd units,
#     containerd config) in the places kind's create flow uses them;
#   - the images kubeadm asks for (`kubeadm config images list`), built here from those binaries
#     and preloaded into the node's containerd content store under /var/lib/containerd, as kind
#     does: kind mounts a fresh volume on /var and podman fills it from the image;
#   - /kind/manifests/default-cni.yaml, this project's own small CNI (images/kind-node/cni) with
#     its image, because kindnetd cannot be fetched.
# The image is imported into podman as KIND_NODE_IMAGE and saved with `podman save` to
# $MYSQLBENCH_CACHE/kind-node/K8S_VERSION/kind-node.tar (docker load / podman load). Skipped when
# that tarball was built from the same inputs (kind-node.tar.stamp); then only reloaded into
# podman if podman lost the image.
#
# Not shipped: /kind/manifests/default-storage.yaml. kind then applies its built-in fallback, a
# "standard" StorageClass with provisioner kubernetes.io/host-path, which provisions nothing:
# PersistentVolumeClaims stay Pending (the operator's workloads use none).
#
# env: K8S_VERSION (v1.33.13), ETCD_VERSION (v3.5.21), COREDNS_VERSION (the tag kubeadm asks
#      for), CRICTL_VERSION (v1.34.0), KIND_NODE_IMAGE (localhost/mysqlbench/kind-node:K8S_VERSION),
#      DEBIAN_MIRROR, MYSQLBENCH_CACHE, CONTAINERS_CONF (see podman_env in hack/lib.sh)
# needs: root (debootstrap, chroot), podman, jq
set -euo pipefail
hack=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$hack/.." && pwd)
. "$hack/lib.sh"
"$hack/host-deps.sh" kind
podman_env

K8S_VERSION=${K8S_VERSION:-v1.33.13}
# kubeadm v1.33.13 asks for etcd 3.5.24-0, which the module proxy does not have (it has 3.5.21,
# 3.5.23, and 3.5.31 onwards): the etcd image carries ETCD_VERSION, the project's etcd, under the
# name kubeadm asks for.
ETCD_VERSION=${ETCD_VERSION:-v3.5.21}
CRICTL_VERSION=${CRICTL_VERSION:-v1.34.0}
KIND_NODE_IMAGE=${KIND_NODE_IMAGE:-localhost/mysqlbench/kind-node:$K8S_VERSION}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# The CNI DaemonSet's image: fixed tag, preloaded (the manifest says imagePullPolicy: Never).
CNI_IMAGE=localhost/mysqlbench/kind-cni:v1
SUITE=bookworm

# What the node needs from Debian: systemd and D-Bus (the systemd cgroup driver), the container
# runtime, the tools the kubelet and kubeadm call (mount, iptables, conntrack, ethtool, socat,
# nsenter from util-linux, kmod), and the small tools used when working on a node (jq, curl,
# procps; crictl comes from the module proxy).
NODE_PACKAGES="systemd dbus containerd runc containernetworking-plugins
	iptables nftables conntrack iproute2 ethtool socat util-linux mount kmod libseccomp2
	bash ca-certificates curl jq procps pigz"
# Base of the kube-proxy and CNI images: what kube-proxy's iptables mode and the CNI call.
NET_PACKAGES="iptables conntrack iproute2"

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot)"
command -v podman >/dev/null || die "needs podman"
command -v jq >/dev/null || die "needs jq"

cache=$MYSQLBENCH_CACHE
k8s_dir=$cache/k8s/$K8S_VERSION
out_dir=$cache/kind-node/$K8S_VERSION
out=$out_dir/kind-node.tar
files=$root/images/kind-node

work=$(mktemp -d)
chmod 755 "$work" # apt's _apt user writes downloads here
trap 'rm -rf "$work"' EXIT

# stage NAME: logs how long the previous stage took, for the cold/warm timings in test/kind/README.md.
stage_start=$SECONDS stage_name=
stage() {
	[ -z "$stage_name" ] || log "$stage_name: $((SECONDS - stage_start)) s"
	stage_start=$SECONDS stage_name=$1
	[ -z "$1" ] || log "$1"
}

# --- Debian root filesystems ---------------------------------------------------------------------
candidates() { apt-cache policy "$@" | awk '/^[^ ]/ {sub(":$", "", $1); p = $1} /^  Candidate:/ {print p "=" $2}'; }
rootfs_cache=$cache/debian-images/rootfs

# debootstrap from its Debian package, unpacked (not installed), shared with
# hack/build-debian-images.sh, as is the minbase tarball below.
debootstrap_version=$(candidates debootstrap | cut -d= -f2)
debootstrap_dir=$cache/debian-images/tools/debootstrap-$debootstrap_version
in_private_mounts() { unshare --mount --propagation private -- "$@"; }
pack() {
	tar --create --numeric-owner --file "$2.tmp" --directory "$1" \
		--exclude=./proc/* --exclude=./sys/* --exclude=./dev/* --exclude=./run/* --exclude=./tmp/* \
		--exclude=./var/cache/apt/* --exclude=./var/lib/apt/lists/* --exclude=./var/log/* .
	mv "$2.tmp" "$2"
}
unpack() { mkdir -p "$2" && tar --extract --numeric-owner --file "$1" --directory "$2"; }

# minbase_tar: bookworm minbase plus its updates and security suites, cached.
minbase_tar() {
	local tarball=$rootfs_cache/$SUITE-minbase-debootstrap-$debootstrap_version.tar dir=$work/minbase
	if [ ! -f "$tarball" ]; then
		if [ ! -x "$debootstrap_dir/usr/sbin/debootstrap" ]; then
			(cd "$work" && apt-get download debootstrap >/dev/null)
			mkdir -p "$debootstrap_dir"
			dpkg-deb -x "$work"/debootstrap_*.deb "$debootstrap_dir"
		fi
		log "debootstrap --variant=minbase $SUITE"
		mkdir -p "$rootfs_cache"
		in_private_mounts bash -c 'DEBOOTSTRAP_DIR=$1 "$2" --variant=minbase "$3" "$4" "$5" >"$6" 2>&1' _ \
			"$debootstrap_dir/usr/share/debootstrap" "$debootstrap_dir/usr/sbin/debootstrap" \
			"$SUITE" "$dir" "$DEBIAN_MIRROR" "$work/debootstrap.log" ||
			die "debootstrap $SUITE failed: $(tail -20 "$work/debootstrap.log")"
		cat >"$dir/etc/apt/sources.list" <<EOF
deb $DEBIAN_MIRROR $SUITE main
deb $DEBIAN_MIRROR $SUITE-updates main
deb ${DEBIAN_MIRROR%/debian}/debian-security $SUITE-security main
EOF
		pack "$dir" "$tarball"
		rm -rf "$dir"
	fi
	echo "$tarball"
}

# chroot_run DIR SCRIPT: SCRIPT in a chroot with /proc and /dev, in a mount namespace of its own
# so that nothing stays mounted on the host, even when it fails.
chroot_run() {
	in_private_mounts bash -euc 'mount -t proc proc "$1/proc"; mount --rbind /dev "$1/dev"; chroot "$1" /bin/bash -euc "$2"' _ "$1" "$2"
}

# installed_tar NAME PACKAGES: minbase plus PACKAGES (no recommends, services never started),
# cached by the exact versions apt picks for them, so a point release gives a new tarball.
installed_tar() {
	local name=$1 packages versions key tarball dir=$work/$1
	packages=$(tr -s '[:space:]' ' ' <<<"$2")
	# shellcheck disable=SC2086 # a list of package names
	versions=$(candidates $packages)
	! grep -q '=(none)$\|=$' <<<"$versions" ||
		die "apt has no candidate for: $(grep '=(none)$\|=$' <<<"$versions" | tr '\n' ' ') (apt-get update?)"
	key=$(sha256sum <<<"$versions" | cut -c1-12)
	tarball=$rootfs_cache/$name-$SUITE-$key.tar
	if [ ! -f "$tarball" ]; then
		unpack "$(minbase_tar)" "$dir"
		log "installing into the $name root filesystem: $packages"
		cp /etc/resolv.conf "$dir/etc/resolv.conf"
		printf '#!/bin/sh\n# Image build: never start services.\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
		chmod 755 "$dir/usr/sbin/policy-rc.d"
		chroot_run "$dir" "export DEBIAN_FRONTEND=noninteractive
			apt-get update -qq
			apt-get install -y -qq --no-install-recommends $packages
			apt-get clean
			rm -rf /usr/share/doc/* /usr/share/man/* /usr/share/locale/*" \
			>"$work/$name.log" 2>&1 || die "$name install failed: $(tail -20 "$work/$name.log")"
		rm -f "$dir/usr/sbin/policy-rc.d" "$dir/etc/resolv.conf"
		pack "$dir" "$tarball"
		rm -rf "$dir"
	fi
	echo "$tarball"
}

stage "Debian root filesystems"
node_tar=$(installed_tar kind-node "$NODE_PACKAGES")
net_tar=$(installed_tar kind-net "$NET_PACKAGES")

# --- binaries ------------------------------------------------------------------------------------
stage "binaries (Go module proxy)"
nice "$hack/build-k8s-binaries.sh" "$K8S_VERSION" "$k8s_dir" \
	kubeadm kubelet kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy
nice "$hack/build-etcd.sh" "$ETCD_VERSION" "$cache/etcd/$ETCD_VERSION"

# The images kubeadm will ask for, from kubeadm itself (no network with an explicit version).
images=$("$k8s_dir/kubeadm" config images list --kubernetes-version "$K8S_VERSION")
image_named() { grep -E "^registry\.k8s\.io/($1):" <<<"$images" || die "kubeadm lists no $1 image: $images"; }
pause_ref=$(image_named pause)
etcd_ref=$(image_named etcd)
coredns_ref=$(image_named coredns/coredns)
COREDNS_VERSION=${COREDNS_VERSION:-${coredns_ref##*:}}

go_install_into "$cache/coredns/$COREDNS_VERSION" coredns "github.com/coredns/coredns@$COREDNS_VERSION"
go_install_into "$cache/crictl/$CRICTL_VERSION" crictl "sigs.k8s.io/cri-tools/cmd/crictl@$CRICTL_VERSION"
pause_bin=$work/pause
(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$pause_bin" ./test/localcluster/pause)

# --- skip when nothing changed -------------------------------------------------------------------
stage "checking the cache"
stamp=$( (
	echo "$KIND_NODE_IMAGE $K8S_VERSION $ETCD_VERSION $COREDNS_VERSION $CRICTL_VERSION $CNI_IMAGE"
	echo "$images"
	ls -l --time-style=+%s "$node_tar" "$net_tar" | awk '{print $5, $6, $7}'
	cd "$root" && find hack/build-kind-node-image.sh hack/lib.sh images/kind-node test/localcluster/pause -type f | LC_ALL=C sort | xargs sha256sum
	sha256sum "$k8s_dir"/kube* "$cache/etcd/$ETCD_VERSION/etcd" "$cache/coredns/$COREDNS_VERSION/coredns" \
		"$cache/crictl/$CRICTL_VERSION/crictl" | sed 's|  .*/|  |'
) | sha256sum | cut -c1-16)
if [ -f "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$stamp" ]; then
	if ! podman image exists "$KIND_NODE_IMAGE"; then
		log "loading $out into podman"
		podman load --input "$out" >/dev/null
	fi
	stage ""
	log "$KIND_NODE_IMAGE is up to date ($out)"
	echo "$out"
	exit 0
fi
rm -f "$out.stamp"

# --- control-plane, pause, CoreDNS and CNI images ------------------------------------------------
# layer_from DIR TAR: DIR as an image layer (owner root, fixed order and mtime).
layer_from() {
	tar --create --file "$2" --directory "$1" --owner=0 --group=0 --numeric-owner --mtime=@0 --sort=name .
}

# docker_archive OUT REF CONFIG LAYER...: a `docker save` style archive (manifest.json, config,
# uncompressed layers), which `ctr images import` reads. CONFIG is the image's runtime config
# (Entrypoint, Env, ...) as JSON. Layers shared between images are stored once by containerd.
docker_archive() {
	local out=$1 ref=$2 config=$3 dir layer sum diff_ids=() layers=()
	shift 3
	dir=$(mktemp -d "$work/archive.XXXXXX")
	for layer in "$@"; do
		sum=$(sha256sum "$layer" | cut -d' ' -f1)
		ln -f "$layer" "$dir/$sum.tar" 2>/dev/null || cp "$layer" "$dir/$sum.tar"
		diff_ids+=("sha256:$sum")
		layers+=("$sum.tar")
	done
	jq -n --argjson config "$config" '{architecture: "amd64", os: "linux", config: $config,
		rootfs: {type: "layers", diff_ids: $ARGS.positional}}' --args "${diff_ids[@]}" >"$dir/config.json"
	sum=$(sha256sum "$dir/config.json" | cut -d' ' -f1)
	mv "$dir/config.json" "$dir/$sum.json"
	jq -n --arg config "$sum.json" --arg ref "$ref" '[{Config: $config, RepoTags: [$ref],
		Layers: $ARGS.positional}]' --args "${layers[@]}" >"$dir/manifest.json"
	# Names without "./": what docker save writes.
	tar --create --file "$out" --directory "$dir" manifest.json "$sum.json" "${layers[@]}"
	rm -rf "$dir"
}

stage "image archives"
mkdir -p "$work/images" "$work/layers"
path_env='"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"'

# static_image REF BINARY ENTRYPOINT: one static binary at ENTRYPOINT, with a passwd naming root
# and nobody (what distroless-style bases carry), on an empty base.
static_image() {
	local ref=$1 bin=$2 entrypoint=$3 name dir
	name=$(basename "$entrypoint")
	dir=$work/layers/$name
	mkdir -p "$dir/etc" "$dir/tmp" "$dir$(dirname "$entrypoint")"
	install -m 0755 "$bin" "$dir$entrypoint"
	printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' 'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' >"$dir/etc/passwd"
	printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' >"$dir/etc/group"
	chmod 1777 "$dir/tmp"
	layer_from "$dir" "$dir.tar"
	docker_archive "$work/images/$name.tar" "$ref" \
		"{\"Entrypoint\": [\"$entrypoint\"], \"Env\": [$path_env], \"WorkingDir\": \"/\"}" "$dir.tar"
}

for component in kube-apiserver kube-controller-manager kube-scheduler; do
	static_image "registry.k8s.io/$component:$K8S_VERSION" "$k8s_dir/$component" "/usr/local/bin/$component"
done
static_image "$etcd_ref" "$cache/etcd/$ETCD_VERSION/etcd" /usr/local/bin/etcd
static_image "$coredns_ref" "$cache/coredns/$COREDNS_VERSION/coredns" /coredns
static_image "$pause_ref" "$pause_bin" /pause

# kube-proxy and the CNI: Debian's iptables, conntrack and iproute2, with iptables-wrapper in
# front of the iptables names so they use the node's backend.
wrap=$work/layers/iptables-wrapper
mkdir -p "$wrap/usr/sbin"
install -m 0755 "$files/iptables-wrapper" "$wrap/usr/sbin/iptables-wrapper"
for cmd in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
	ln -s iptables-wrapper "$wrap/usr/sbin/$cmd"
done
layer_from "$wrap" "$wrap.tar"
proxy=$work/layers/kube-proxy-bin
install -D -m 0755 "$k8s_dir/kube-proxy" "$proxy/usr/local/bin/kube-proxy"
layer_from "$proxy" "$proxy.tar"
docker_archive "$work/images/kube-proxy.tar" "registry.k8s.io/kube-proxy:$K8S_VERSION" \
	"{\"Entrypoint\": [\"/usr/local/bin/kube-proxy\"], \"Env\": [$path_env]}" "$net_tar" "$wrap.tar" "$proxy.tar"
cni=$work/layers/kind-cni
install -D -m 0755 "$files/cni/kind-cni" "$cni/usr/local/bin/kind-cni"
install -D -m 0755 "$k8s_dir/kubectl" "$cni/usr/local/bin/kubectl"
layer_from "$cni" "$cni.tar"
docker_archive "$work/images/kind-cni.tar" "$CNI_IMAGE" \
	"{\"Entrypoint\": [\"/usr/local/bin/kind-cni\"], \"Env\": [$path_env]}" "$net_tar" "$wrap.tar" "$cni.tar"

# --- the node's root filesystem ------------------------------------------------------------------
stage "node root filesystem"
node=$work/node
unpack "$node_tar" "$node"
# The files this project writes (0755 for scripts, 0644 for the rest), then the binaries.
(cd "$files/files" && find . -type d) | while read -r d; do mkdir -p "$node/$d"; done
(cd "$files/files" && find . -type f) | while read -r f; do
	mode=0644
	[ ! -x "$files/files/$f" ] || mode=0755
	install -m "$mode" "$files/files/$f" "$node/$f"
done
sed -i "s|@SANDBOX_IMAGE@|$pause_ref|" "$node/etc/containerd/config.toml"
sed -i "s|@CNI_IMAGE@|$CNI_IMAGE|" "$node/kind/manifests/default-cni.yaml"
for bin in kubeadm kubelet kubectl; do install -m 0755 "$k8s_dir/$bin" "$node/usr/bin/$bin"; done
install -m 0755 "$cache/crictl/$CRICTL_VERSION/crictl" "$node/usr/local/bin/crictl"
# kind reads the Kubernetes version from here to pick its kubeadm config.
printf '%s' "$K8S_VERSION" >"$node/kind/version"
# containerd looks for CNI plugins in /opt/cni/bin; Debian installs them in /usr/lib/cni.
mkdir -p "$node/opt/cni"
ln -sfn /usr/lib/cni "$node/opt/cni/bin"
mkdir -p "$node/etc/kubernetes/manifests" "$node/etc/cni/net.d"
chmod 0755 "$node/kind" "$node/kind/bin"

# systemd as a container's init: no udev, consoles, fstab mounts or anything else a real machine
# boots, only containerd and the kubelet (kubelet.service waits for kubeadm's config). Nothing that
# writes kernel-wide state either: the node shares the host's kernel, so binfmt_misc stays
# untouched and Debian's sysctl.d files that set kernel.* and fs.* keys go (the node keeps only
# its network namespace's settings, images/kind-node/files/etc/sysctl.d).
chroot_run "$node" '
	rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \
		/lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/basic.target.wants/* \
		/lib/systemd/system/sockets.target.wants/*udev* /lib/systemd/system/sockets.target.wants/*initctl* \
		/lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service
	rm -f /usr/lib/sysctl.d/50-pid-max.conf /usr/lib/sysctl.d/99-protect-links.conf /usr/lib/sysctl.d/50-default.conf \
		/etc/sysctl.d/99-sysctl.conf
	echo ReadKMsg=no >>/etc/systemd/journald.conf
	ln -sf /lib/systemd/systemd /sbin/init
	systemctl enable containerd.service kubelet.service 2>&1
	systemctl mask systemd-binfmt.service proc-sys-fs-binfmt_misc.automount 2>&1
	# containerd default spec minus its RLIMIT_NOFILE 1024 (see /etc/containerd/config.toml).
	ctr oci spec | jq "del(.process.rlimits)" >/etc/containerd/cri-base.json
	# The image is built without an identity; the entrypoint makes one per node. D-Bus keeps
	# its own copy, which systemd-machine-id-setup would otherwise copy into every node.
	: >/etc/machine-id
	ln -sf /etc/machine-id /var/lib/dbus/machine-id
' >"$work/node-setup.log" 2>&1 || die "node setup failed: $(tail -20 "$work/node-setup.log")"
leftover=$(find "$node/usr/lib/sysctl.d" "$node/etc/sysctl.d" ! -type d ! -name 10-kind-node.conf ! -name 'README*')
[ -z "$leftover" ] || die "sysctl.d files left that may set kernel-wide keys: $leftover"

# --- preload: the images into the node's containerd content store -------------------------------
# Runs the node's own containerd in a chroot on the node's /var/lib/containerd (CRI plugin off:
# nothing but the content and image stores), imports each archive the way `kind build node-image`
# does (k8s.io namespace, content only: containerd's CRI unpacks on first use), then stops it.
stage "preloading images"
mkdir -p "$node/build-images"
cp "$work/images"/*.tar "$node/build-images/"
cat >"$node/build-images/containerd.toml" <<'EOF'
version = 2
root = "/var/lib/containerd"
state = "/run/containerd-build"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "/run/containerd-build/containerd.sock"
EOF
in_private_mounts bash -euc '
	node=$1
	mount -t proc proc "$node/proc"
	mount --rbind /dev "$node/dev"
	mount -t tmpfs tmpfs "$node/run"
	chroot "$node" /usr/bin/containerd --config /build-images/containerd.toml >"$2" 2>&1 &
	pid=$!
	trap "kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true" EXIT
	for _ in $(seq 100); do
		chroot "$node" ctr --address /run/containerd-build/containerd.sock version >/dev/null 2>&1 && break
		kill -0 $pid 2>/dev/null || { echo "containerd exited: $(tail -5 "$2")" >&2; exit 1; }
		sleep 0.2
	done
	for archive in "$node"/build-images/*.tar; do
		chroot "$node" ctr --address /run/containerd-build/containerd.sock --namespace k8s.io \
			images import --all-platforms --no-unpack --digests "/build-images/${archive##*/}"
	done
	chroot "$node" ctr --address /run/containerd-build/containerd.sock --namespace k8s.io images ls -q
' _ "$node" "$work/containerd-build.log" >"$work/preload.log" 2>&1 ||
	die "preloading images failed: $(tail -20 "$work/preload.log")"
rm -rf "$node/build-images" "${node:?}/run/containerd-build"
want=$(printf '%s\n' "$images" "registry.k8s.io/kube-proxy:$K8S_VERSION" "$CNI_IMAGE" | sort -u)
missing=$(comm -23 <(echo "$want") <(grep -v '@sha256:' "$work/preload.log" | sort -u))
[ -z "$missing" ] || die "not preloaded: $missing ($(cat "$work/preload.log"))"
log "preloaded: $(grep -vc '@sha256:' "$work/preload.log") image names"

# --- the podman image and its tarball ------------------------------------------------------------
# kind runs the node with `--privileged ... /usr/local/bin/entrypoint /sbin/init` in effect; systemd
# stops cleanly on SIGRTMIN+3 (SIGTERM makes it re-execute) and reads the container type from
# $container (kind's podman provider sets container=podman on the command line as well).
stage "podman import and save"
previous=$(podman image inspect --format '{{.Id}}' "$KIND_NODE_IMAGE" 2>/dev/null || true)
tar --create --numeric-owner --directory "$node" . |
	podman import --quiet \
		--change 'ENV container=docker' \
		--change 'STOPSIGNAL SIGRTMIN+3' \
		--change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' \
		--message "kind node $K8S_VERSION built by hack/build-kind-node-image.sh" \
		- "$KIND_NODE_IMAGE" >/dev/null
# The image this one replaces is left without a name: drop it unless a container still uses it.
if [ -n "$previous" ] && [ "$previous" != "$(podman image inspect --format '{{.Id}}' "$KIND_NODE_IMAGE")" ]; then
	podman rmi "$previous" >/dev/null 2>&1 || true
fi
mkdir -p "$out_dir"
rm -f "$out"
podman save --quiet --format docker-archive --output "$out.tmp" "$KIND_NODE_IMAGE"
mv "$out.tmp" "$out"
echo "$stamp" >"$out.stamp"
stage ""
log "built $KIND_NODE_IMAGE ($out, $(du -h "$out" | cut -f1))"
echo "$out"
