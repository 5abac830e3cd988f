#!/usr/bin/env bash
# The kind cluster of test/kind/cluster.yaml (control plane, a database-pool and a client-pool
# worker), for make kind-up, kind-load, kind-down and test-e2e-kind:
#   hack/kind.sh up     kind create cluster (KIND_NODE_IMAGE, when set, is the node image)
#   hack/kind.sh load   put the images into every node: KIND_LOAD=docker (the default) loads
#                       KIND_IMAGES from the local Docker (or podman) with kind load docker-image;
#                       KIND_LOAD=archives loads the image archives KIND_ARCHIVES (make
#                       cluster-images writes them to bin/images) with kind load image-archive
#   hack/kind.sh down   kind delete cluster
#   hack/kind.sh preflight  with podman: check that podman can create a network and run a
#                       container on it (up does this before kind), installing nothing
#   hack/kind.sh e2e    the whole offline path from nothing (make test-e2e-kind): the node image
#                       and the images built offline, make kind-up kind-load kind-deploy with
#                       podman, README's first run until it succeeds, make test-e2e, make kind-down
#
# With Docker and internet access, up/load/down are plain kind commands. With
# KIND_EXPERIMENTAL_PROVIDER=podman, as root, the host is prepared the way the project's build
# machines need (cgroup v1, no CAP_SYS_RESOURCE, no /lib/modules), and put back by down:
#   - podman runs with test/kind/containers.conf (runc, rlimits within the hard limits, netavark
#     so that nodes resolve each other's names) and keeps its images, volumes and networks in the
#     project's cache, unless CONTAINERS_CONF is set (podman_env in hack/lib.sh);
#   - /lib/modules, which kind mounts into every node, is created if missing (down removes it);
#   - the kernel-wide sysctls every kubelet rewrites at start (kernel.panic, vm.overcommit_memory,
#     ...: a privileged node shares the host's kernel) are saved before the cluster starts and
#     put back once it runs, and again by down;
#   - down also puts back IP forwarding, which podman's network turns on, removes the kind
#     network kind leaves behind, and netavark's base iptables chains once they are idle.
#
# env: KIND (the kind binary; make sets it), KIND_CLUSTER (mysqlbench), KIND_NODE_IMAGE,
#      KIND_EXPERIMENTAL_PROVIDER, KIND_LOAD, KIND_IMAGES, KIND_ARCHIVES, KUBECONFIG (kind writes
#      the cluster's context there; default ~/.kube/config), KEEP_CLUSTER=1 (e2e: keep the cluster)
set -euo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh

KIND=${KIND:?KIND must name the kind binary (make sets it)}
cluster=${KIND_CLUSTER:-mysqlbench}
provider=${KIND_EXPERIMENTAL_PROVIDER:-}
# kind picks podman by itself when there is no docker; so does this script then.
if [ -z "$provider" ] && ! command -v docker >/dev/null && command -v podman >/dev/null; then
	provider=podman
fi
state=$PWD/test/kind/.state/$cluster
# The sysctls the kubelet sets at start (setupKernelTunables), as test/localcluster/cluster.sh.
SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
	kernel.keys.root_maxkeys kernel.keys.root_maxbytes)
# podman's network turns on forwarding on the host (netavark, like CNI's bridge plugin); the
# nodes need it while they run, so down puts it back.
NET_SYSCTLS=(net.ipv4.ip_forward net.ipv6.conf.all.forwarding)

is_root() { [ "$(id -u)" = 0 ]; }
exists() { "$KIND" get clusters 2>/dev/null | grep -qx "$cluster"; }

prepare_podman() {
	[ "$provider" = podman ] || return 0
	hack/host-deps.sh kind
	local own=${CONTAINERS_CONF:-}
	podman_env
	[ -n "$own" ] || log "podman: the project's settings ($CONTAINERS_CONF); set CONTAINERS_CONF to use your own"
}

# PODMAN_HELPER_DIR is where podman finds netavark and aardvark-dns (Debian's helper_binaries_dir).
PODMAN_HELPER_DIR=${PODMAN_HELPER_DIR:-/usr/lib/podman}

# podman_preflight proves, before kind starts, that podman can create a network and run a
# container on it: kind's nodes need both, and when a helper of podman's network backend is
# missing kind only reports "Preparing nodes" and netavark's "No such file or directory". The
# failure names what is missing and how to install it.
podman_preflight() {
	[ "$provider" = podman ] || return 0
	local missing=() packages=() tool
	command -v podman >/dev/null || { missing+=("podman"); packages+=(podman); }
	for tool in netavark aardvark-dns; do
		[ -x "$PODMAN_HELPER_DIR/$tool" ] || { missing+=("$PODMAN_HELPER_DIR/$tool (podman's network backend)"); packages+=("$tool"); }
	done
	# netavark runs them from podman's PATH, which is this one.
	for tool in iptables ip6tables; do
		command -v "$tool" >/dev/null || missing+=("$tool (netavark sets up every network's NAT and forwarding with it)")
	done
	if ! command -v iptables >/dev/null || ! command -v ip6tables >/dev/null; then packages+=(iptables); fi
	[ ${#missing[@]} -eq 0 ] ||
		die "podman cannot give kind's nodes a network on this host: missing $(printf '%s; ' "${missing[@]}")install with: apt-get install ${packages[*]} (or make kind-up as root, which installs them)"

	local net=mysqlbench-preflight-$$ out image=${KIND_NODE_IMAGE:-}
	out=$(podman network create "$net" 2>&1) || die "podman cannot create a network: $out$(network_hint "$out")"
	if [ -z "$image" ] || ! podman image exists "$image" 2>/dev/null; then
		podman network rm -f "$net" >/dev/null 2>&1 || true
		[ -n "$image" ] || image="kind's default"
		log "podman created a network; no container run on it: the node image ($image) is not in podman yet"
		return 0
	fi
	local rc=0
	out=$(podman run --rm --network "$net" --entrypoint /bin/true "$image" 2>&1) || rc=$?
	podman network rm -f "$net" >/dev/null 2>&1 || true
	[ "$rc" = 0 ] || die "podman cannot run a container on a network (exit $rc): $out$(network_hint "$out")"
	log "podman runs containers on a network: ready for kind"
}

# network_hint names the usual cause of a podman network error.
network_hint() {
	case $1 in
	*netavark*"No such file"* | *iptables*)
		printf '%s' "; netavark could not run iptables or ip6tables: apt-get install iptables (PATH=$PATH)" ;;
	*aardvark*) printf '%s' "; apt-get install aardvark-dns" ;;
	esac
}

save_sysctls() {
	is_root || return 0
	[ -f "$state/sysctls" ] && return 0
	local s
	for s in "${SYSCTLS[@]}"; do echo "$s=$(sysctl -n "$s")"; done >"$state/sysctls.tmp"
	mv "$state/sysctls.tmp" "$state/sysctls"
	if [ "$provider" = podman ]; then
		for s in "${NET_SYSCTLS[@]}"; do echo "$s=$(sysctl -n "$s")"; done >"$state/net-sysctls"
	fi
}

# restore_sysctls FILE WHO: put back the host sysctls saved in FILE that WHO changed.
restore_sysctls() {
	[ -f "$state/$1" ] || return 0
	local line changed=()
	while IFS= read -r line; do
		[ "$(sysctl -n "${line%%=*}")" = "${line#*=}" ] && continue
		if sysctl -qw "$line"; then changed+=("$line"); else log "could not restore $line"; fi
	done <"$state/$1"
	[ ${#changed[@]} -eq 0 ] || log "host sysctls put back ($2 had changed them): ${changed[*]}"
}

up() {
	prepare_podman
	podman_preflight
	mkdir -p "$state"
	if exists; then
		log "kind cluster $cluster exists already (make kind-down removes it)"
		return 0
	fi
	if [ "$provider" = podman ] && [ ! -e /lib/modules ]; then
		# kind mounts it read-only into every node and podman refuses a missing source
		# ("statfs /lib/modules: no such file or directory"); kind offers no way to leave it out.
		is_root || die "kind mounts /lib/modules, which this host lacks: create it as root (mkdir -p /lib/modules)"
		mkdir /lib/modules
		: >"$state/created-lib-modules"
	fi
	save_sysctls
	local image=()
	[ -z "${KIND_NODE_IMAGE:-}" ] || image=(--image "$KIND_NODE_IMAGE")
	local rc=0
	"$KIND" create cluster --name "$cluster" --config test/kind/cluster.yaml "${image[@]}" --wait 3m || rc=$?
	restore_sysctls sysctls "the kubelets"
	[ "$rc" = 0 ] || die "kind create cluster failed (exit $rc); make kind-down cleans up what it left"
}

load() {
	prepare_podman
	exists || die "no kind cluster $cluster: make kind-up first"
	case ${KIND_LOAD:-docker} in
	docker)
		# shellcheck disable=SC2086 # a list of image names
		"$KIND" load docker-image --name "$cluster" ${KIND_IMAGES:?KIND_IMAGES names the images to load}
		;;
	archives)
		local a
		# shellcheck disable=SC2086 # a list of paths
		for a in ${KIND_ARCHIVES:?KIND_ARCHIVES names the image archives to load}; do
			[ -f "$a" ] || die "no image archive $a (make cluster-images builds them)"
			log "kind load image-archive $a"
			"$KIND" load image-archive --name "$cluster" "$a"
		done
		;;
	*) die "KIND_LOAD=$KIND_LOAD: docker (kind load docker-image) or archives (kind load image-archive)" ;;
	esac
}

# netavark leaves its base chains in the host's iptables after its last network is gone. Once
# none of them holds a rule of its own (no port forwarded, no network's forwarding rules) they
# serve nothing, and they go with the jumps to them; netavark adds them again when needed.
remove_idle_netavark_chains() {
	is_root || return 0
	local ipt table line chain
	for ipt in iptables ip6tables; do
		command -v "$ipt" >/dev/null || continue
		"$ipt" -t nat -S NETAVARK-HOSTPORT-DNAT >/dev/null 2>&1 || "$ipt" -S NETAVARK_FORWARD >/dev/null 2>&1 || continue
		[ -z "$("$ipt" -t nat -S NETAVARK-HOSTPORT-DNAT 2>/dev/null | grep -v '^-N')" ] || continue
		[ -z "$("$ipt" -S NETAVARK_FORWARD 2>/dev/null | grep -v '^-N')" ] || continue
		for table in nat filter; do
			while IFS= read -r line; do
				eval "\"\$ipt\" -t $table ${line/#-A/-D}"
			done < <("$ipt" -t "$table" -S | grep -E '^-A (PREROUTING|INPUT|OUTPUT|POSTROUTING|FORWARD) .*-j NETAVARK')
			for chain in $("$ipt" -t "$table" -S | sed -n 's/^-N \(NETAVARK[-_A-Z]*\)$/\1/p'); do
				"$ipt" -t "$table" -F "$chain" && "$ipt" -t "$table" -X "$chain"
			done
		done
		log "$ipt: removed netavark's idle chains"
	done
}

down() {
	prepare_podman
	if exists; then "$KIND" delete cluster --name "$cluster"; fi
	if [ "$provider" = podman ]; then
		# kind leaves its network behind; it lives in the project's cache (podman_env).
		if podman network exists kind && [ -z "$(podman ps -aq --filter network=kind)" ]; then
			podman network rm kind >/dev/null
		fi
		remove_idle_netavark_chains
	fi
	restore_sysctls sysctls "the kubelets"
	restore_sysctls net-sysctls "podman's kind network"
	if [ -f "$state/created-lib-modules" ]; then
		rmdir /lib/modules 2>/dev/null || log "left /lib/modules in place: it is not empty any more"
	fi
	rm -rf "$state"
}

phase() { printf '\n==> [%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# The README's first run (its first yaml block), applied as written; waits for its phase.
first_run() {
	local kubectl=$1 yaml phase deadline=$((SECONDS + 30 * 60))
	yaml=$(awk '/^```yaml$/ {on = 1; next} on && /^```$/ {exit} on' README.md)
	grep -q '^  name: first-run$' <<<"$yaml" || die "README.md's first yaml block is not the first-run BenchmarkRun"
	"$kubectl" delete benchmarkrun first-run --ignore-not-found --wait >/dev/null
	"$kubectl" apply -f - <<<"$yaml"
	while :; do
		phase=$("$kubectl" get benchmarkrun first-run -o jsonpath='{.status.phase}')
		case $phase in
		Succeeded) break ;;
		Failed) "$kubectl" describe benchmarkrun first-run >&2; die "first-run failed" ;;
		esac
		[ "$SECONDS" -lt "$deadline" ] || die "first-run still ${phase:-pending} after 30 min"
		sleep 10
	done
	"$kubectl" get benchmarkrun first-run
	"$kubectl" get configmap first-run-results -o jsonpath='{.data.report\.md}'
	echo
	"$kubectl" delete benchmarkrun first-run --wait >/dev/null
}

e2e() {
	is_root || die "the offline kind path needs root (debootstrap, privileged podman)"
	export KIND_EXPERIMENTAL_PROVIDER=podman KIND_LOAD=archives
	export KIND_NODE_IMAGE=${KIND_NODE_IMAGE:-localhost/mysqlbench/kind-node:${K8S_BUILD_VERSION:-v1.33.13}}
	# The cluster's context goes to a kubeconfig of its own, not the user's ~/.kube/config.
	export KUBECONFIG=${KIND_KUBECONFIG:-$state/kubeconfig}
	# The server images test/e2e uses by default.
	export SERVER_IMAGES=${SERVER_IMAGES:-mysql:9.7 mariadb:10.11 mariadb:11.8}
	local kubectl=$MYSQLBENCH_CACHE/k8s/${K8S_BUILD_VERSION:-v1.33.13}/kubectl start=$SECONDS
	provider=podman
	trap 'rc=$?; if [ "${KEEP_CLUSTER:-0}" != 1 ]; then phase "make kind-down (KEEP_CLUSTER=1 keeps the cluster)"; make --no-print-directory kind-down || rc=1; fi; exit $rc' EXIT
	trap 'exit 130' INT TERM

	phase "1/6 the kind node image, built offline (cached; first time ~10 min on 2 cores)"
	make --no-print-directory kind-node-image
	phase "2/6 make kind-up: $KIND_NODE_IMAGE with podman"
	make --no-print-directory kind-up
	phase "3/6 make kind-load: manager, sysbench, go-tpc and server images built offline (first time ~5 min)"
	make --no-print-directory kind-load
	phase "4/6 make kind-deploy"
	make --no-print-directory kind-deploy
	"$kubectl" get nodes -L mysqlbench.io/pool
	phase "5/6 README's first run"
	first_run "$kubectl"
	phase "6/6 make test-e2e on kind: ${E2E_IMAGES:-mysql:9.7,mariadb:11.8}"
	KUBECTL=$kubectl make --no-print-directory test-e2e
	phase "the kind path passed in $((SECONDS - start)) s"
}

preflight() {
	[ "$provider" = podman ] || die "preflight checks podman: set KIND_EXPERIMENTAL_PROVIDER=podman"
	podman_env
	podman_preflight
}

case ${1:-} in
up | load | down | e2e | preflight) "$1" ;;
*) die "usage: $0 up|load|down|e2e|preflight" ;;
esac
