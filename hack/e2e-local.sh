#!/usr/bin/env bash
# make test-e2e-local (hack/e2e-local.sh [e2e]): test/e2e on the local cluster (test/localcluster)
# with the operator installed by its Helm chart and the images built offline (MySQL 9.7, MariaDB
# 10.5, 10.11 and 11.8, and the project's sysbench image; E2E_IMAGES picks which servers run).
# make test-chaos (hack/e2e-local.sh chaos): test/chaos there instead, which kills the manager,
# the server and sysbench pods and restarts the API server under real runs.
# make test-multinode (hack/e2e-local.sh multinode): the cluster with two database nodes
# (LOCALCLUSTER_DATABASE_NODES=2) and the multi-node cases of test/e2e and test/chaos
# (MULTINODE_CASES=ci runs only the parallel-vs-sequential one).
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
if [ "$suite" = multinode ]; then
	# Two database nodes: a cluster already up must have them (cluster.sh reads the counts at up).
	export LOCALCLUSTER_DATABASE_NODES=${LOCALCLUSTER_DATABASE_NODES:-2}
	if [ "$started" = 0 ]; then
		n=$("$kubedir/kubectl" get nodes -l mysqlbench.io/pool=database -o name | wc -l)
		[ "$n" -ge 2 ] || die "the running local cluster has $n database node(s); the multi-node cases need 2: make cluster-down, then run this again"
	fi
fi
phases=5
[ "$suite" = e2e ] && phases=6
PHASES=$phases hack/local-operator.sh
export KUBECTL=$kubedir/kubectl E2E_SYSBENCH_IMAGE=${E2E_SYSBENCH_IMAGE:-ghcr.io/mysqlbench/sysbench:1.0.20} E2E_KUBELET_CPU=${E2E_KUBELET_CPU:-1}
case $suite in
e2e)
	phase "5/6 test/e2e: ${E2E_IMAGES:=mysql:9.7,mariadb:10.5,mariadb:10.11,mariadb:11.8} on the database node, sysbench Jobs on the client node; the per-step overhead"
	# With them, the per-step overhead is measured and printed (test/e2e/overhead_test.go: 8 steps
	# of 20 s; a measurement, no threshold unless E2E_MAX_STEP_OVERHEAD_SECONDS is set).
	# A real Prometheus (Debian's package, unpacked beside containerd) scrapes the manager for the
	# whole suite; at its end every query of the chart's Grafana dashboard must return series.
	deb_root=$(hack/build-cluster-binaries.sh | sed -n 's/^DEB_ROOT=//p')
	E2E_PROMETHEUS=${E2E_PROMETHEUS:-$deb_root/usr/bin/prometheus} \
		E2E_OVERHEAD=${E2E_OVERHEAD:-1} E2E_OVERHEAD_REPETITIONS=${E2E_OVERHEAD_REPETITIONS:-2} \
		E2E_IMAGES=$E2E_IMAGES make --no-print-directory test-e2e
	# The same chart installed for one namespace only (watchNamespaces: RoleBindings there, no
	# access elsewhere), which enforces the restricted Pod Security Standard.
	secns=${E2E_SECURITY_NAMESPACE:-mysqlbench-e2e-restricted}
	phase "6/6 test/e2e security: the operator for namespace $secns only (restricted Pod Security), credentials, accounts, a planted reporter"
	"$KUBECTL" create namespace "$secns" --dry-run=client -o yaml | "$KUBECTL" apply -f - >/dev/null
	"$KUBECTL" label namespace "$secns" --overwrite pod-security.kubernetes.io/enforce=restricted \
		pod-security.kubernetes.io/enforce-version=latest >/dev/null
	WATCH_NAMESPACES=$secns hack/local-operator.sh --operator-only
	rc=0
	E2E_SECURITY=1 E2E_SECURITY_NAMESPACE=$secns CLUSTER_SH=$PWD/test/localcluster/cluster.sh \
		go test -tags e2e -count=1 -v -run '^TestSecurityOnARealCluster$' -timeout 30m ./test/e2e/... || rc=$?
	# Back to the cluster-wide install, for a kept cluster.
	hack/local-operator.sh --operator-only
	exit $rc
	;;
chaos)
	phase "5/5 test/chaos: the manager, the server, a sysbench pod and the API server broken under real runs"
	CLUSTER_SH=$PWD/test/localcluster/cluster.sh go test -tags chaos -count=1 -v -timeout 60m -run "${CHAOS_RUN:-.}" ./test/chaos/...
	;;
multinode)
	# MULTINODE_CASES=ci: the one multi-node case CI runs (parallel targets vs sequential wall
	# time); all (the default): also three runs from two namespaces sharing the pool, and a server
	# killed on one node while the other measures.
	cases=${MULTINODE_CASES:-all}
	phase "5/5 multi-node cases ($cases) on $LOCALCLUSTER_DATABASE_NODES database nodes"
	export E2E_MULTINODE=1
	case $cases in
	ci) go test -tags e2e -count=1 -v -timeout 30m -run '^TestMultiNodeParallelTargets$' ./test/e2e/... ;;
	all)
		rc=0
		go test -tags e2e -count=1 -v -timeout 60m -run '^TestMultiNode' ./test/e2e/... || rc=$?
		CLUSTER_SH=$PWD/test/localcluster/cluster.sh go test -tags chaos -count=1 -v -timeout 30m -run '^TestMultiNode' ./test/chaos/... || rc=$?
		exit $rc
		;;
	*) die "MULTINODE_CASES=$cases: want ci or all" ;;
	esac
	;;
*) echo "usage: $0 [e2e|chaos|multinode]" >&2; exit 2 ;;
esac
