#!/usr/bin/env bash
# Validates Kubernetes manifests (files, or stdin when none are given) against the strict
# Kubernetes schemas of hack/kube-schemas.sh, offline, with kubeconform: unknown fields and wrong
# types fail. Kinds without a built-in schema must be named in SKIP_KINDS (comma-separated), so a
# typo in apiVersion or kind fails instead of passing unchecked.
#
# env: KUBECONFORM (path to kubeconform), SKIP_KINDS (e.g. ServiceMonitor), KUBE_SCHEMA_VERSION.
set -euo pipefail
hack=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$hack/.." && pwd)
. "$hack/lib.sh"

KUBECONFORM=${KUBECONFORM:-$root/bin/kubeconform}
KUBE_SCHEMA_VERSION=${KUBE_SCHEMA_VERSION:-1.33}
[ -x "$KUBECONFORM" ] || die "kubeconform not found at $KUBECONFORM (make kubeconform)"
schemas=$(KUBE_SCHEMA_VERSION=$KUBE_SCHEMA_VERSION "$hack/kube-schemas.sh")

args=(-strict -summary -kubernetes-version "$KUBE_SCHEMA_VERSION.0"
	-schema-location "$schemas/{{.ResourceKind}}{{.KindSuffix}}.json")
[ -n "${SKIP_KINDS:-}" ] && args+=(-skip "$SKIP_KINDS")
if [ $# -eq 0 ]; then
	exec "$KUBECONFORM" "${args[@]}" -
fi
exec "$KUBECONFORM" "${args[@]}" "$@"
