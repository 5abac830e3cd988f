#!/usr/bin/env bash
# Builds Kubernetes binaries (kube-apiserver, kubectl, kubelet, ...) from the Go module proxy alone,
# for machines that cannot reach dl.k8s.io. `go install k8s.io/kubernetes/cmd/...` refuses because
# kubernetes' go.mod replaces its staging modules with local paths, so this builds through a
# throwaway wrapper module that points each staging module at its published v0.Y.Z version.
#
# usage: hack/build-k8s-binaries.sh VERSION OUT_DIR COMMAND...
#   e.g. hack/build-k8s-binaries.sh v1.33.13 "$cache/k8s/v1.33.13" kube-apiserver kubectl
#   COMMAND is any k8s.io/kubernetes/cmd/ command: the local cluster uses the control plane,
#   kubelet, kube-proxy and kubectl; the kind node image (hack/build-kind-node-image.sh) adds kubeadm.
# Binaries already present in OUT_DIR are not rebuilt.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 3 ] || die "usage: $0 VERSION OUT_DIR COMMAND..."
version=$1 out=$2
shift 2
[[ $version =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || die "version must look like v1.33.13, got $version"
minor=${BASH_REMATCH[1]} staging="v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"

missing=()
for cmd in "$@"; do [ -x "$out/$cmd" ] || missing+=("$cmd"); done
[ ${#missing[@]} -gt 0 ] || exit 0

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log "building ${missing[*]} $version from the Go module proxy (first time: several minutes)"

kmod=$(go_mod_file "k8s.io/kubernetes@$version")
[ -n "$kmod" ] || die "cannot download k8s.io/kubernetes@$version from the module proxy"
{
	echo "module mysqlbench.local/k8s-binaries"
	echo
	echo "go $(sed -n 's/^go //p' "$kmod")"
	echo
	echo "require k8s.io/kubernetes $version"
	echo
	echo "replace ("
	sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\t\1 => \1 '"$staging"'#p' "$kmod"
	echo ")"
} >"$work/go.mod"
{
	echo "//go:build tools"
	echo
	echo "package tools"
	echo
	echo "import ("
	for cmd in "${missing[@]}"; do echo "	_ \"k8s.io/kubernetes/cmd/$cmd\""; done
	echo ")"
} >"$work/tools.go"

cd "$work"
GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || GOFLAGS=-mod=mod go mod tidy
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
	ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
mkdir -p "$out"
for cmd in "${missing[@]}"; do
	# One lock per binary, released after it: another build of the same binaries (envtest's and
	# the cluster's at once in CI) waits for this one binary, not for the whole list.
	lock_file "$out/.$cmd.lock"
	if [ -x "$out/$cmd" ]; then
		log "$cmd: built meanwhile by another build"
	else
		log "go build k8s.io/kubernetes/cmd/$cmd"
		CGO_ENABLED=0 go build -trimpath -tags tools -ldflags "$ldflags" -o "$work/$cmd" "k8s.io/kubernetes/cmd/$cmd"
		mv -f "$work/$cmd" "$out/$cmd"
	fi
	exec {LOCK_FD}>&-
done
log "built ${missing[*]} into $out"
