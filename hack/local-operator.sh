#!/usr/bin/env bash
# Brings the local cluster (test/localcluster) up with the operator running in it, installed by its
# Helm chart: builds what is missing (cached by version, so the second time costs seconds), starts
# the cluster or reloads the images into a running one, then installs or upgrades the chart.
# Used by `make demo` and `make test-e2e-local`; prints a progress line per phase (1-4 of $PHASES).
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh

NAMESPACE=${NAMESPACE:-mysqlbench-system}
HELM=${HELM:?HELM must name the helm binary (make sets it)}
PHASES=${PHASES:-4}
export KUBECONFIG=$PWD/test/localcluster/.state/kubeconfig
kubectl=("$MYSQLBENCH_CACHE/k8s/${K8S_BUILD_VERSION:-v1.33.13}/kubectl")
phase() { printf '\n==> [%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# results_db: the results database every finished run is written into (test/localcluster/
# results-db.yaml) and the Secrets naming it, one random password kept across reinstalls.
results_db() {
	"${kubectl[@]}" apply -f test/localcluster/results-db.yaml >/dev/null
	"${kubectl[@]}" create namespace "$NAMESPACE" --dry-run=client -o yaml | "${kubectl[@]}" apply -f - >/dev/null
	if ! "${kubectl[@]}" -n "$NAMESPACE" get secret results-db >/dev/null 2>&1; then
		local pw root
		pw=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
		root=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
		"${kubectl[@]}" -n mysqlbench-results delete secret results-db --ignore-not-found >/dev/null
		"${kubectl[@]}" -n mysqlbench-results create secret generic results-db \
			--from-literal=password="$pw" --from-literal=root-password="$root" >/dev/null
		"${kubectl[@]}" -n "$NAMESPACE" create secret generic results-db --from-literal=host=results-db.mysqlbench-results.svc \
			--from-literal=user=bench --from-literal=password="$pw" --from-literal=database=mysqlbench >/dev/null
		# A server initialized with another password would refuse the new one.
		"${kubectl[@]}" -n mysqlbench-results delete pod results-db-0 --ignore-not-found --wait=false >/dev/null
	fi
}

# install NAMESPACES: helm upgrade --install, watching NAMESPACES (comma-separated; empty: all).
install() {
	local watch=()
	if [ -n "$1" ]; then watch=(--set "watchNamespaces={$1}"); fi
	"$HELM" upgrade --install mysqlbench-operator charts/mysqlbench-operator --namespace "$NAMESPACE" --create-namespace \
		-f test/localcluster/values.yaml "${watch[@]}" --wait --timeout 5m >/dev/null
	"${kubectl[@]}" -n "$NAMESPACE" rollout restart deployment >/dev/null # pick up a rebuilt image or new flags
	"${kubectl[@]}" -n "$NAMESPACE" rollout status deployment --timeout 3m >/dev/null
}

# --operator-only: the cluster runs; (re)install the operator only, for WATCH_NAMESPACES.
if [ "${1:-}" = --operator-only ]; then
	install "${WATCH_NAMESPACES:-}"
	exit
fi

phase "1/$PHASES Kubernetes, etcd, CoreDNS, containerd binaries (cached; first time 10-20 min on 2 cores)"
make --no-print-directory cluster-binaries
phase "2/$PHASES images without a registry: manager (go build + crane), MariaDB and sysbench (debootstrap; first time a few minutes)"
make --no-print-directory cluster-images
phase "3/$PHASES local cluster: control plane + a database node and a client node, in network namespaces"
if "${kubectl[@]}" get --raw /readyz >/dev/null 2>&1; then
	make --no-print-directory cluster-load
else
	make --no-print-directory cluster-up
fi
phase "4/$PHASES the operator, installed by its Helm chart, and its results database (MariaDB 11.8)"
results_db
install "${WATCH_NAMESPACES:-}"
"${kubectl[@]}" -n mysqlbench-results rollout status statefulset/results-db --timeout 3m >/dev/null
