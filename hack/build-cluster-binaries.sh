#!/usr/bin/env bash
# Builds (or fetches) everything test/localcluster/cluster.sh runs, into the version-keyed cache
# shared with the other hack/ scripts, so only the first run is slow:
#   k8s/$K8S_VERSION/        kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl
#   etcd/$ETCD_VERSION/      etcd
#   coredns/$COREDNS_VERSION-local/coredns   CoreDNS with the plugins the cluster's Corefile uses
#                                             (hack/coredns, whose go.mod pins the version)
#   debian/<hash of package versions>/root/   containerd, runc, CNI plugins, iptables (+ the shared
#                                             libraries iptables needs), busybox-static and
#                                             prometheus (the e2e suite's scraper), unpacked
#                                             with dpkg-deb -x: nothing is installed on the host, no
#                                             service is started, no dpkg database is touched.
# Everything comes from the Go module proxy or Debian's apt mirrors: nothing else is reachable here.
# Builds run one at a time (nice'd) because the machine has two cores, often shared with CI.
#
# usage: hack/build-cluster-binaries.sh        prints the cache paths as shell assignments at the end
# env:   K8S_VERSION ETCD_VERSION COREDNS_VERSION MYSQLBENCH_CACHE
#
# No crictl: cluster.sh removes pods through the API server and falls back to containerd's own
# ctr. (The proxy refused sigs.k8s.io/cri-tools v1.30.1-v1.33.0; v1.34.0 downloads and verifies
# as of 2026-11, and hack/build-kind-node-image.sh builds it for the kind node.)
set -euo pipefail
hack=$(cd "$(dirname "$0")" && pwd)
. "$hack/lib.sh"

K8S_VERSION=${K8S_VERSION:-v1.33.13}
ETCD_VERSION=${ETCD_VERSION:-v3.5.21}
COREDNS_VERSION=${COREDNS_VERSION:-v1.12.4}
# containerd: Debian's 1.6.20 works with Kubernetes 1.33 and costs a download, where building
# containerd 2.x from its Go module takes about five minutes on two cores (measured 2026-11).
# Kubernetes 1.36 drops containerd 1.x: moving past 1.35 means building containerd 2.x instead.
DEBS=(containerd runc containernetworking-plugins busybox-static prometheus
	iptables libxtables12 libip4tc2 libip6tc2 libnftnl11 libnetfilter-conntrack3 libnfnetlink0 libmnl0)

k8s_dir=$MYSQLBENCH_CACHE/k8s/$K8S_VERSION
etcd_dir=$MYSQLBENCH_CACHE/etcd/$ETCD_VERSION
coredns_dir=$MYSQLBENCH_CACHE/coredns/$COREDNS_VERSION-local
coredns_pinned=$(awk '$1 == "require" && $2 == "github.com/coredns/coredns" {print $3}' "$hack/coredns/go.mod")
[ "$COREDNS_VERSION" = "$coredns_pinned" ] ||
	die "COREDNS_VERSION=$COREDNS_VERSION, but hack/coredns/go.mod builds $coredns_pinned: change it there (cd hack/coredns && go get github.com/coredns/coredns@$COREDNS_VERSION && go mod tidy)"

# The Debian packages are keyed by the exact versions apt would pick, so a point release in the
# mirror gives a new directory instead of silently changing binaries under a running cluster.
debian_root() {
	local versions key dir work
	# One apt-cache call for all packages (one each costs seconds on every cluster start).
	versions=$(apt-cache policy "${DEBS[@]}" | awk '/^[^ ]/ {sub(":$", "", $1); p = $1} /^  Candidate:/ {print p "=" $2}')
	[ "$(wc -l <<<"$versions")" = "${#DEBS[@]}" ] || die "apt-cache policy did not list all of: ${DEBS[*]}"
	grep -q '=(none)$\|=$' <<<"$versions" && die "apt has no candidate for: $(grep '=(none)$\|=$' <<<"$versions" | tr '\n' ' ') (apt-get update?)"
	key=$(sha256sum <<<"$versions" | cut -c1-12)
	dir=$MYSQLBENCH_CACHE/debian/$key
	if [ ! -d "$dir/root" ]; then
		log "fetching Debian packages: ${DEBS[*]}"
		work=$(mktemp -d)
		chmod 755 "$work" # apt's _apt user writes the downloads
		# apt-get download only fetches .deb files into the current directory.
		(cd "$work" && apt-get download $(tr '\n' ' ' <<<"$versions") >/dev/null)
		mkdir -p "$work/root"
		for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
		printf '%s\n' "$versions" >"$work/root/VERSIONS"
		mkdir -p "$dir"
		mv "$work/root" "$dir/root"
		rm -rf "$work"
	fi
	echo "$dir/root"
}

deb_root=$(debian_root)
go_build_into "$coredns_dir" coredns "$hack/coredns"
nice "$hack/build-etcd.sh" "$ETCD_VERSION" "$etcd_dir"
nice "$hack/build-k8s-binaries.sh" "$K8S_VERSION" "$k8s_dir" \
	kube-apiserver kubectl kube-controller-manager kube-scheduler kubelet kube-proxy

cat <<EOF
K8S_BIN=$k8s_dir
ETCD_BIN=$etcd_dir
COREDNS_BIN=$coredns_dir
DEB_ROOT=$deb_root
EOF
