#!/usr/bin/env bash
# make demo: the whole product on this machine. Builds what is missing (cached by version, so the
# second time costs seconds), starts the local two-node cluster (test/localcluster), installs the
# operator with its Helm chart, runs config/samples/mysqlbench_v1alpha1_benchmarkrun_local.yaml,
# prints the report table from the results ConfigMap and draws the run's charts as PNG files with
# the kubectl plugin (bin/kubectl-mysqlbench, which make demo builds) into demo-charts/; then runs
# the small suite config/samples/mysqlbench_v1alpha1_benchmarkrun_suite_small.yaml (three workloads
# over four servers) and prints its relative-QPS table and heat map. `make demo-down` removes
# everything.
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh

SAMPLE=config/samples/mysqlbench_v1alpha1_benchmarkrun_local.yaml
RUN=demo
SUITE_SAMPLE=config/samples/mysqlbench_v1alpha1_benchmarkrun_suite_small.yaml
SUITE=demo-suite
NAMESPACE=${NAMESPACE:-mysqlbench-system}
HELM=${HELM:?HELM must name the helm binary (make demo sets it)}
PLUGIN=${PLUGIN:-bin/kubectl-mysqlbench}
[ -x "$PLUGIN" ] || die "$PLUGIN is missing: make plugin builds it (make demo does)"
CHARTS=$PWD/demo-charts
export KUBECONFIG=$PWD/test/localcluster/.state/kubeconfig
kubectl=("$MYSQLBENCH_CACHE/k8s/${K8S_BUILD_VERSION:-v1.33.13}/kubectl")
phase() { printf '\n==> [%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# apply_and_wait SAMPLE RUN MINUTES: (re)creates the run of the sample and prints its progress
# until it finished.
apply_and_wait() {
	local sample=$1 run=$2 minutes=$3 now last="" deadline
	"${kubectl[@]}" delete benchmarkrun "$run" --ignore-not-found --wait >/dev/null
	"${kubectl[@]}" apply -f "$sample" >/dev/null
	deadline=$(($(date +%s) + minutes * 60))
	while :; do
		now=$("${kubectl[@]}" get benchmarkrun "$run" -o jsonpath='{.status.phase} {.status.currentTarget} {.status.currentStep}')
		if [ "$now" != "$last" ]; then
			printf '    %s  %s\n' "$(date +%H:%M:%S)" "${now:-Pending}"
			last=$now
		fi
		case "$now" in Succeeded* | Failed*) break ;; esac
		[ "$(date +%s)" -lt "$deadline" ] || die "the run $run did not finish in $minutes minutes: kubectl describe benchmarkrun $run"
		sleep 2
	done
	"${kubectl[@]}" get benchmarkrun "$run"
}

PHASES=7 HELM=$HELM NAMESPACE=$NAMESPACE hack/local-operator.sh
phase "5/7 BenchmarkRun $RUN: MySQL 9.7, MariaDB 10.11 and 11.8, each with performance_schema ON and OFF, 1/2/4/8 threads"
apply_and_wait "$SAMPLE" "$RUN" 20
phase "6/7 report (ConfigMap $RUN-results, key report.md)"
"${kubectl[@]}" get configmap "$RUN-results" -o jsonpath='{.data.report\.md}'
echo
# Per-step overhead, medians over every step of the run that has a next step in its target, from
# the steps' finish times in status (the Jobs', whole seconds): what a user feels is one step's
# finish to the next one's, minus stepDuration (the next step's Job starts while the step before
# still measures, and waits for it on the server: well under a second). A Job's own wall time
# minus stepDuration is longer: the seconds the kubelet and the Job controller take to report it
# complete, which the next step does not wait for, and the early Job's wait for the step before.
"${kubectl[@]}" get benchmarkrun "$RUN" -o json | jq -r '
	def secs: sub("\\.[0-9]+"; "") | fromdateiso8601;
	def median: sort | if length == 0 then "n/a" else .[(length - 1) / 2 | floor] end;
	(.spec.ladder.stepDuration | rtrimstr("s") | tonumber) as $d
	| [.status.targets[].steps // [] | (map(select(.startTime and .finishTime))) as $s
		| {felt: [range(1; $s | length) as $i | ($s[$i].finishTime | secs) - ($s[$i - 1].finishTime | secs) - $d],
		   wall: [$s[] | (.finishTime | secs) - (.startTime | secs) - $d]}] as $t
	| "per-step overhead (step finish to next step finish, minus stepDuration): median \([$t[].felt[]] | median) s over "
	  + "\([$t[].felt[]] | length) steps; Job wall time minus stepDuration (includes reporting the Job complete, "
	  + "which the next step does not wait for, and a Job started early waiting for the step before): median \([$t[].wall[]] | median) s"'
# The charts, drawn by the plugin from the results ConfigMap: what a database engineer publishes.
rm -rf "$CHARTS"
mkdir -p "$CHARTS"
baseline=$("${kubectl[@]}" get benchmarkrun "$RUN" -o jsonpath='{.spec.targets[0].name}')
"$PLUGIN" plot "$RUN" --metric qps --output-file "$CHARTS/qps-by-threads.png"
"$PLUGIN" plot "$RUN" --metric qps --relative-to "$baseline" --output-file "$CHARTS/qps-relative-to-$baseline.png"
"$PLUGIN" plot "$RUN" --metric p95 --output-file "$CHARTS/p95-by-threads.png"
"$PLUGIN" plot "$RUN" --metric qps --timeline --output-file "$CHARTS/qps-timeline.png"

phase "7/7 a small suite, BenchmarkRun $SUITE: point-select, read-only and update-index on MariaDB 10.5, 10.11, 11.8 and MySQL 9.7, 1/2 threads"
apply_and_wait "$SUITE_SAMPLE" "$SUITE" 15
# The relative table: every server's QPS over MariaDB 10.5's (spec.baseTarget), a row per
# workload and thread count, as report.md and the plugin's describe show it.
"${kubectl[@]}" get configmap "$SUITE-results" -o jsonpath='{.data.report\.md}' |
	awk '/^## QPS relative to/ {on = 1} on && /^## / && !/relative/ {exit} on {print}'
"$PLUGIN" plot "$SUITE" --heatmap --output-file "$CHARTS/suite-heatmap.png"
printf '\ncharts (PNG):\n'
for f in "$CHARTS"/*.png; do printf '    %s\n' "$f"; done
printf '\nKUBECONFIG=%s kubectl get benchmarkrun %s -o yaml   # everything in status\n' "$KUBECONFIG" "$RUN"
printf 'KUBECONFIG=%s %s describe %s                     # the plugin: tables, intervals, logs, compare\n' "$KUBECONFIG" "$PLUGIN" "$RUN"
printf 'make demo-down                                        # remove the cluster\n'
