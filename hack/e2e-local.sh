#!/usr/bin/env bash
# make test-e2e-local (hack/e2e-local.sh [e2e]): test/e2e on the local cluster (test/localcluster)
# with the operator installed by its Helm chart and the images built offline (MySQL 9.7, MariaDB
# 10.5, 10.11 and 11.8, and the project's sysbench image; E2E_IMAGES picks which servers run).
# make test-chaos (hack/e2e-local.sh chaos): test/chaos there instead, which kills the manager,
# the server and sysbench pods and restarts the API server under real runs.
# make test-multinode (hack/e2e-local.sh multinode): the cluster with two database nodes
# (LOCALCLUSTER_DATABASE_NODES=2) and the multi-node cases of test/e2e and test/chaos
# (MULTINODE_CASES=ci runs only the parallel-vs-sequential one).
# hack/e2e-local.sh all (make test-cluster-all): the three on ONE cluster with two database nodes
# (one bring-up instead of three): the second database node is cordoned while test/e2e and
# test/chaos run (they assume one database node: the queue case needs the pool to hold one
# server), then uncordoned for the multi-node cases.
# hack/e2e-local.sh ci (make test-cluster-ci): the same with one case per capability, as CI runs
# it (CI_E2E_RUN, CI_CHAOS_RUN and MULTINODE_CASES=ci below; E2E_RUN, CHAOS_RUN override them):
# the others vary a capability CI already runs on the cluster, and are what keeps CI within its
# hour on a cold machine.
# A cluster this script started is stopped at the end, also on failure or Ctrl-C
# (KEEP_CLUSTER=1 keeps it); a cluster that was already running is left running.
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh

export KUBECONFIG=$PWD/test/localcluster/.state/kubeconfig
kubedir=$MYSQLBENCH_CACHE/k8s/${K8S_BUILD_VERSION:-v1.33.13}
phase() { printf '\n==> [%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

started=0
if ! "$kubedir/kubectl" get --raw /readyz >/dev/null 2>&1; then
	started=1
fi
stop() {
	rc=$?
	if [ "$started" = 1 ] && [ "${KEEP_CLUSTER:-0}" != 1 ]; then
		phase "stopping the local cluster (KEEP_CLUSTER=1 keeps it)"
		make --no-print-directory cluster-down || rc=1
	fi
	exit $rc
}
trap stop EXIT
trap 'exit 130' INT TERM

suite=${1:-e2e}
case $suite in multinode | ci | all) two_nodes=1 ;; *) two_nodes=0 ;; esac
if [ "$two_nodes" = 1 ]; then
	# Two database nodes: a cluster already up must have them (cluster.sh reads the counts at up).
	export LOCALCLUSTER_DATABASE_NODES=${LOCALCLUSTER_DATABASE_NODES:-2}
	if [ "$started" = 0 ]; then
		n=$("$kubedir/kubectl" get nodes -l mysqlbench.io/pool=database -o name | wc -l)
		[ "$n" -ge 2 ] || die "the running local cluster has $n database node(s); the multi-node cases need 2: make cluster-down, then run this again"
	fi
fi
phases=5
case $suite in e2e) phases=6 ;; ci | all) phases=8 ;; esac
PHASES=$phases hack/local-operator.sh
export KUBECTL=$kubedir/kubectl E2E_SYSBENCH_IMAGE=${E2E_SYSBENCH_IMAGE:-ghcr.io/mysqlbench/sysbench:1.0.20} E2E_KUBELET_CPU=${E2E_KUBELET_CPU:-1}

run_e2e() { # $1 $2: phase numbers of test/e2e and of its security part
	phase "$1/$phases test/e2e: ${E2E_IMAGES:=mysql:9.7,mariadb:10.5,mariadb:10.11,mariadb:11.8} on the database node, sysbench Jobs on the client node; the per-step overhead"
	# With them, the per-step overhead is measured and printed (test/e2e/overhead_test.go: 8 steps
	# of 20 s; a measurement, no threshold unless E2E_MAX_STEP_OVERHEAD_SECONDS is set).
	# A real Prometheus (Debian's package, unpacked beside containerd) scrapes the manager for the
	# whole suite; at its end every query of the chart's Grafana dashboard must return series.
	# Called as `run_e2e || rc=$?`, where set -e does not hold: every step says its own status.
	local rc=0 deb_root
	deb_root=$(hack/build-cluster-binaries.sh | sed -n 's/^DEB_ROOT=//p') || return
	E2E_PROMETHEUS=${E2E_PROMETHEUS:-$deb_root/usr/bin/prometheus} \
		E2E_OVERHEAD=${E2E_OVERHEAD:-1} E2E_OVERHEAD_REPETITIONS=${E2E_OVERHEAD_REPETITIONS:-2} \
		E2E_IMAGES=$E2E_IMAGES make --no-print-directory test-e2e || rc=$?
	# The same chart installed for one namespace only (watchNamespaces: RoleBindings there, no
	# access elsewhere), which enforces the restricted Pod Security Standard.
	secns=${E2E_SECURITY_NAMESPACE:-mysqlbench-e2e-restricted}
	phase "$2/$phases test/e2e security: the operator for namespace $secns only (restricted Pod Security), credentials, accounts, a planted reporter"
	"$KUBECTL" create namespace "$secns" --dry-run=client -o yaml | "$KUBECTL" apply -f - >/dev/null || return
	"$KUBECTL" label namespace "$secns" --overwrite pod-security.kubernetes.io/enforce=restricted \
		pod-security.kubernetes.io/enforce-version=latest >/dev/null || return
	WATCH_NAMESPACES=$secns hack/local-operator.sh --operator-only || return
	E2E_SECURITY=1 E2E_SECURITY_NAMESPACE=$secns CLUSTER_SH=$PWD/test/localcluster/cluster.sh \
		go test -tags e2e -count=1 -v -run '^TestSecurityOnARealCluster$' -timeout 30m ./test/e2e/... || rc=$?
	# Back to the cluster-wide install, for a kept cluster and for the suites after this one.
	hack/local-operator.sh --operator-only || rc=$?
	return $rc
}

run_chaos() { # $1: phase number
	phase "$1/$phases test/chaos: the manager, the server, a sysbench pod and the API server broken under real runs"
	CLUSTER_SH=$PWD/test/localcluster/cluster.sh go test -tags chaos -count=1 -v -timeout 60m -run "${CHAOS_RUN:-.}" ./test/chaos/...
}

run_multinode() { # $1: phase number
	# MULTINODE_CASES=ci: the one multi-node case CI runs (parallel targets vs sequential wall
	# time); all (the default): also three runs from two namespaces sharing the pool, and a server
	# killed on one node while the other measures.
	local cases=${MULTINODE_CASES:-all}
	phase "$1/$phases multi-node cases ($cases) on $LOCALCLUSTER_DATABASE_NODES database nodes"
	export E2E_MULTINODE=1
	case $cases in
	ci) go test -tags e2e -count=1 -v -timeout 30m -run '^TestMultiNodeParallelTargets$' ./test/e2e/... ;;
	all)
		local rc=0
		go test -tags e2e -count=1 -v -timeout 60m -run '^TestMultiNode' ./test/e2e/... || rc=$?
		CLUSTER_SH=$PWD/test/localcluster/cluster.sh go test -tags chaos -count=1 -v -timeout 30m -run '^TestMultiNode' ./test/chaos/... || rc=$?
		return $rc
		;;
	*) die "MULTINODE_CASES=$cases: want ci or all" ;;
	esac
}

# database_nodes cordon|uncordon: every database node but the first (by name).
database_nodes() {
	local n
	for n in $("$KUBECTL" get nodes -l mysqlbench.io/pool=database -o name | sort | tail -n +2); do
		"$KUBECTL" "$1" "$n" >/dev/null
	done
}

case $suite in
e2e) run_e2e 5 6 ;;
chaos) run_chaos 5 ;;
multinode) run_multinode 5 ;;
ci | all)
	if [ "$suite" = ci ]; then
		# One case per capability: the run (two server families, the dashboard against
		# Prometheus), go-tpc, the interleaved A/A verdict over real runs, the schedule, server
		# counters, replication, admission, a suite (the preset's ten workloads on MariaDB 11.8 at
		# one thread count: the run case has both server families), and security in its own
		# phase; the manager killed across a ladder for recovery; Parallel against Sequential for
		# the node pool. Left to
		# make test-cluster-all: repetitions (the interleaved case has them), the server, a
		# sysbench pod, the API server and the results database broken mid-run, three runs
		# queued for one node, and the other multi-node cases.
		export E2E_RUN=${E2E_RUN:-${CI_E2E_RUN:-^Test(AdmissionPolicy|BenchmarkRun|GoTPC|InterleavedAA|Schedule|ServerCounters|Replication|Suite)OnARealCluster\$}}
		export E2E_SUITE_IMAGES=${E2E_SUITE_IMAGES:-mariadb:11.8} E2E_SUITE_THREADS=${E2E_SUITE_THREADS:-1} \
			E2E_SUITE_STEP=${E2E_SUITE_STEP:-3s}
		# The interleaved A/A case at one rung (4 threads): the verdict over rounds is what it
		# checks, and make test-cluster-all runs its two.
		export E2E_INTERLEAVED_THREADS=${E2E_INTERLEAVED_THREADS:-4}
		export CHAOS_RUN=${CHAOS_RUN:-${CI_CHAOS_RUN:-^TestManagerKilledAcrossTheLadder\$}}
		export MULTINODE_CASES=${MULTINODE_CASES:-ci}
		# The selection above still runs every kind of run the dashboard shows.
		export E2E_DASHBOARD_CHECK=${E2E_DASHBOARD_CHECK:-1}
	fi
	# Each suite runs even when one before it failed, so one log shows every failure.
	rc=0
	database_nodes cordon
	run_e2e 5 6 || rc=$?
	run_chaos 7 || rc=$?
	database_nodes uncordon
	run_multinode 8 || rc=$?
	exit $rc
	;;
*) echo "usage: $0 [e2e|chaos|multinode|ci|all]" >&2; exit 2 ;;
esac
