#!/usr/bin/env bash
# Prints config/default (CRDs, RBAC, manager) built with kustomize, the manager image set to $IMG,
# without editing any file in the tree: the image is set in a throwaway overlay.
#
# env: KUSTOMIZE (path to kustomize), IMG (manager image, name:tag).
set -euo pipefail
hack=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$hack/.." && pwd)
. "$hack/lib.sh"

KUSTOMIZE=${KUSTOMIZE:-$root/bin/kustomize}
IMG=${IMG:-ghcr.io/mysqlbench/mysqlbench-operator:dev}
[ -x "$KUSTOMIZE" ] || die "kustomize not found at $KUSTOMIZE (make kustomize)"

# kustomize refuses absolute paths to bases: the overlay lives in bin/ (ignored by git) and refers
# to config/default relatively.
mkdir -p "$root/bin"
overlay=$(mktemp -d "$root/bin/kustomize-overlay.XXXXXX")
trap 'rm -rf "$overlay"' EXIT
# The name config/manager gives the image; the overlay retags it.
(cd "$overlay" &&
	"$KUSTOMIZE" create --resources ../../config/default &&
	"$KUSTOMIZE" edit set image "ghcr.io/mysqlbench/mysqlbench-operator=$IMG")
"$KUSTOMIZE" build "$overlay"
