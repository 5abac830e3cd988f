#!/usr/bin/env bash
# make demo: the whole product on this machine. Builds what is missing (cached by version, so the
# second time costs seconds), starts the local two-node cluster (test/localcluster), installs the
# operator with its Helm chart, runs config/samples/mysqlbench_v1alpha1_benchmarkrun_local.yaml
# and prints the report table from the results ConfigMap. `make demo-down` removes everything.
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh

SAMPLE=config/samples/mysqlbench_v1alpha1_benchmarkrun_local.yaml
RUN=demo
NAMESPACE=${NAMESPACE:-mysqlbench-system}
HELM=${HELM:?HELM must name the helm binary (make demo sets it)}
export KUBECONFIG=$PWD/test/localcluster/.state/kubeconfig
kubectl=("$MYSQLBENCH_CACHE/k8s/${K8S_BUILD_VERSION:-v1.33.13}/kubectl")
phase() { printf '\n==> [%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

PHASES=6 HELM=$HELM NAMESPACE=$NAMESPACE hack/local-operator.sh
phase "5/6 BenchmarkRun $RUN: two MariaDB targets (defaults vs performance_schema=OFF), 1/2/4/8 threads"
"${kubectl[@]}" delete benchmarkrun "$RUN" --ignore-not-found --wait >/dev/null
"${kubectl[@]}" apply -f "$SAMPLE" >/dev/null
last=""
deadline=$(($(date +%s) + 1200))
while :; do
	now=$("${kubectl[@]}" get benchmarkrun "$RUN" -o jsonpath='{.status.phase} {.status.currentTarget} {.status.currentStep}')
	if [ "$now" != "$last" ]; then
		printf '    %s  %s\n' "$(date +%H:%M:%S)" "${now:-Pending}"
		last=$now
	fi
	case "$now" in Succeeded* | Failed*) break ;; esac
	[ "$(date +%s)" -lt "$deadline" ] || die "the run did not finish in 20 minutes: kubectl describe benchmarkrun $RUN"
	sleep 2
done
"${kubectl[@]}" get benchmarkrun "$RUN"
phase "6/6 report (ConfigMap $RUN-results, key report.md)"
"${kubectl[@]}" get configmap "$RUN-results" -o jsonpath='{.data.report\.md}'
echo
printf '\nKUBECONFIG=%s kubectl get benchmarkrun %s -o yaml   # everything in status\n' "$KUBECONFIG" "$RUN"
printf 'make demo-down                                        # remove the cluster\n'
