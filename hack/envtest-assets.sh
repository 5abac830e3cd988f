#!/usr/bin/env bash
# Prints a directory holding kube-apiserver, etcd and kubectl for envtest (KUBEBUILDER_ASSETS).
#
# In order: an existing $KUBEBUILDER_ASSETS; assets setup-envtest already installed; assets this
# script built before; a download by setup-envtest (skipped when MYSQLBENCH_OFFLINE=1); and last a
# build from the Go module proxy (hack/build-k8s-binaries.sh, hack/build-etcd.sh), cached by
# version under $MYSQLBENCH_CACHE so later runs cost seconds. Nothing comes from outside the
# registries unless setup-envtest can reach its download site.
#
# env: SETUP_ENVTEST (path to setup-envtest, optional), ENVTEST_K8S_VERSION (e.g. 1.33.x, for
# setup-envtest), K8S_BUILD_VERSION (e.g. v1.33.13, for the build), ETCD_BUILD_VERSION (v3.5.21).
set -euo pipefail
hack=$(cd "$(dirname "$0")" && pwd)
. "$hack/lib.sh"

ENVTEST_K8S_VERSION=${ENVTEST_K8S_VERSION:-1.33.x}
K8S_BUILD_VERSION=${K8S_BUILD_VERSION:-v1.33.13}
ETCD_BUILD_VERSION=${ETCD_BUILD_VERSION:-v3.5.21}
store="$MYSQLBENCH_CACHE/envtest"

complete() { [ -x "$1/kube-apiserver" ] && [ -x "$1/etcd" ] && [ -x "$1/kubectl" ]; }

if [ -n "${KUBEBUILDER_ASSETS:-}" ] && complete "$KUBEBUILDER_ASSETS"; then
	echo "$KUBEBUILDER_ASSETS"
	exit 0
fi

built="$MYSQLBENCH_CACHE/envtest-built/$K8S_BUILD_VERSION-etcd-$ETCD_BUILD_VERSION"
if [ -n "${SETUP_ENVTEST:-}" ] && [ -x "$SETUP_ENVTEST" ]; then
	if dir=$("$SETUP_ENVTEST" use "$ENVTEST_K8S_VERSION" --bin-dir "$store" -i -p path 2>/dev/null) && complete "$dir"; then
		echo "$dir"
		exit 0
	fi
fi
if complete "$built"; then
	echo "$built"
	exit 0
fi
if [ -n "${SETUP_ENVTEST:-}" ] && [ -x "$SETUP_ENVTEST" ] && [ "${MYSQLBENCH_OFFLINE:-0}" != 1 ]; then
	log "setup-envtest: downloading envtest assets $ENVTEST_K8S_VERSION"
	if dir=$(timeout 120 "$SETUP_ENVTEST" use "$ENVTEST_K8S_VERSION" --bin-dir "$store" -p path 2>/dev/null) && complete "$dir"; then
		echo "$dir"
		exit 0
	fi
	log "setup-envtest could not download the assets; building them from the Go module proxy instead"
fi

"$hack/build-k8s-binaries.sh" "$K8S_BUILD_VERSION" "$MYSQLBENCH_CACHE/k8s/$K8S_BUILD_VERSION" kube-apiserver kubectl
"$hack/build-etcd.sh" "$ETCD_BUILD_VERSION" "$MYSQLBENCH_CACHE/etcd/$ETCD_BUILD_VERSION"
mkdir -p "$built"
ln -sf "$MYSQLBENCH_CACHE/k8s/$K8S_BUILD_VERSION/kube-apiserver" "$built/kube-apiserver"
ln -sf "$MYSQLBENCH_CACHE/k8s/$K8S_BUILD_VERSION/kubectl" "$built/kubectl"
ln -sf "$MYSQLBENCH_CACHE/etcd/$ETCD_BUILD_VERSION/etcd" "$built/etcd"
echo "$built"
