#!/usr/bin/env bash
# hack/e2e-overhead.sh: the per-step overhead measurement (test/e2e/overhead_test.go,
# TestStepOverheadOnARealCluster) alone on the local cluster (test/localcluster; needs root).
# hack/local-operator.sh does the rest as for `make test-e2e-local`: builds the manager image from
# the current code (make image-offline, part of cluster-images) and the cached cluster binaries and
# server/sysbench images, starts the cluster (or reloads the images into a running one) and
# installs the operator by its Helm chart. Then only this test runs.
# A cluster this script started is stopped at the end, also on failure or Ctrl-C
# (KEEP_CLUSTER=1 keeps it); a cluster that was already running is left running.
#
# env: E2E_OVERHEAD_IMAGE (mariadb:10.11), E2E_OVERHEAD_STEP (20s), E2E_OVERHEAD_REPETITIONS (3:
#      1,2,4,8 threads x 3 = 12 steps), E2E_MAX_STEP_OVERHEAD_SECONDS and E2E_MAX_STEP_IDLE_SECONDS (fail above them; unset: only
#      measure), E2E_SYSBENCH_IMAGE, HELM (default: the Makefile's).
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh

# The Makefile's own helm (its path carries the pinned version), built when missing.
HELM=${HELM:-$(make -s --no-print-directory --eval 'e2e-overhead-helm: ; @echo $(HELM)' e2e-overhead-helm)}
export HELM K8S_BUILD_VERSION=${K8S_BUILD_VERSION:-v1.33.13}
make --no-print-directory host-deps-cluster "$HELM"

export KUBECONFIG=$PWD/test/localcluster/.state/kubeconfig
kubedir=$MYSQLBENCH_CACHE/k8s/$K8S_BUILD_VERSION
started=0
if ! "$kubedir/kubectl" get --raw /readyz >/dev/null 2>&1; then
	started=1
fi
stop() {
	rc=$?
	if [ "$started" = 1 ] && [ "${KEEP_CLUSTER:-0}" != 1 ]; then
		printf '\n==> [%s] stopping the local cluster (KEEP_CLUSTER=1 keeps it)\n' "$(date +%H:%M:%S)"
		make --no-print-directory cluster-down || rc=1
	fi
	exit $rc
}
trap stop EXIT
trap 'exit 130' INT TERM

PHASES=5 hack/local-operator.sh
printf '\n==> [%s] 5/5 test/e2e TestStepOverheadOnARealCluster: %s, %s steps x %s, no warm-up\n' "$(date +%H:%M:%S)" \
	"${E2E_OVERHEAD_IMAGE:-mariadb:10.11}" "${E2E_OVERHEAD_STEP:-20s}" "$((4 * ${E2E_OVERHEAD_REPETITIONS:-3}))"
E2E_OVERHEAD=1 KUBECTL=$kubedir/kubectl E2E_SYSBENCH_IMAGE=${E2E_SYSBENCH_IMAGE:-ghcr.io/mysqlbench/sysbench:1.0.20} \
	go test -tags e2e -count=1 -v -run '^TestStepOverheadOnARealCluster$' -timeout 60m ./test/e2e/
