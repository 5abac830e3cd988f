#!/usr/bin/env bash
# A real Kubernetes cluster of two or more nodes on this machine, without Docker, kind or any registry outside
# the machine: on the machines it was written for (measured 2026-11) no container registry, GitHub
# or dl.k8s.io is reachable, only the Go module proxy and Debian's apt, so everything is built
# from those.
#
#   test/localcluster/cluster.sh up       start it (builds missing binaries into the cache first)
#   test/localcluster/cluster.sh down     stop it and remove everything up created (idempotent)
#   test/localcluster/cluster.sh status   what is running
#   test/localcluster/cluster.sh load TARBALL...  serve new images to the running cluster
#   test/localcluster/cluster.sh check    pods on both nodes talk to each other, DNS and Services work
#   test/localcluster/cluster.sh snapshot print the host state that up/down must leave unchanged
#   test/localcluster/cluster.sh restart-apiserver  stop the API server and start it again (chaos tests)
#
# Layout: four network namespaces, bound to files under the state dir (not /run/netns, so even
# `ip netns` on the host stays as it was):
#   sw  a bridge joining the others by veths (10.241.0.0/24)
#   cp  etcd, kube-apiserver, kube-controller-manager, kube-scheduler, an image registry (.2)
#   n1  containerd + kubelet + kube-proxy, pool "database", pods 10.242.1.0/24 (.11)
#   n2  containerd + kubelet + kube-proxy, pool "client",   pods 10.242.2.0/24 (.12)
#   n3… with LOCALCLUSTER_DATABASE_NODES=2|3 and LOCALCLUSTER_CLIENT_NODES=2|3, more nodes of
#       each pool (database ones first), each another namespace like n1 (node k: .1k, 10.242.k.0/24)
# Services are 10.243.0.0/24 (kube-dns at .10). Each node namespace routes the other's pod range
# to it, so pod traffic needs no masquerade and no rule in the host's iptables. The host reaches
# the API server through 127.0.0.1:$LOCALCLUSTER_API_PORT, relayed by socat over a unix socket
# (a filesystem path works across network namespaces; a veth into the host would change the host's
# interfaces).
#
# Processes run in the host's mount namespace (nsenter --net only): the kubelet must see the
# cgroup mounts, and containerd must see the volumes the kubelet mounts.
#
# env: LOCALCLUSTER_STATE (state dir, default test/localcluster/.state), LOCALCLUSTER_API_PORT
#      (default 16443), LOCALCLUSTER_DATABASE_NODES and LOCALCLUSTER_CLIENT_NODES (nodes per
#      pool, default 1 each; read at up only), LOCALCLUSTER_IMAGES (image tarballs to serve, default bin/images/*.tar),
#      CRANE, K8S_VERSION, ETCD_VERSION, COREDNS_VERSION, MYSQLBENCH_CACHE.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/hack/lib.sh"

STATE=${LOCALCLUSTER_STATE:-$here/.state}
API_PORT=${LOCALCLUSTER_API_PORT:-16443}
CRANE=${CRANE:-$root/bin/crane}
# Versions of what hack/build-cluster-binaries.sh builds; kubelet never newer than the API server.
export K8S_VERSION=${K8S_VERSION:-v1.33.13} ETCD_VERSION=${ETCD_VERSION:-v3.5.21}
export COREDNS_VERSION=${COREDNS_VERSION:-v1.12.4}
NAME=mbl # prefix of cgroups and node names; also the CNI network name

NETNS=$STATE/netns
PIDS=$STATE/pids
LOGS=$STATE/logs
PKI=$STATE/pki
HOST=$STATE/host # what the host looked like before up, for down to restore

LINK_NET=10.241.0
CP_IP=$LINK_NET.2
SERVICE_CIDR=10.243.0.0/24
API_SERVICE_IP=10.243.0.1
DNS_IP=10.243.0.10
CLUSTER_CIDR=10.242.0.0/16
REGISTRY=$CP_IP:5000
# Registries whose images the in-cluster registry serves; the names in manifests stay unchanged.
MIRRORED=(localcluster.mysqlbench.io ghcr.io docker.io registry.k8s.io)
PAUSE_IMAGE=localcluster.mysqlbench.io/pause:1
BUSYBOX_IMAGE=localcluster.mysqlbench.io/busybox:1
# The nodes: n1 is the database pool's, n2 the client pool's, then the further database nodes,
# then the further client nodes (node k: $LINK_NET.(10+k), pods 10.242.k.0/24). up records the
# counts in the state dir, so down, load and status see the cluster that runs whatever the
# environment says now.
TOPOLOGY=$STATE/topology
if [ -f "$TOPOLOGY" ] && [ "${1:-}" != up ]; then
	. "$TOPOLOGY"
else
	DATABASE_NODES=${LOCALCLUSTER_DATABASE_NODES:-1} CLIENT_NODES=${LOCALCLUSTER_CLIENT_NODES:-1}
fi
for v in DATABASE_NODES CLIENT_NODES; do
	case ${!v} in 1 | 2 | 3) ;; *) die "LOCALCLUSTER_$v=${!v}: want 1, 2 or 3 (every node is a containerd and a kubelet on this machine)" ;; esac
done
NODES=()
declare -A NODE_IP POD_CIDR POOL
add_node() {
	local k=$((${#NODES[@]} + 1))
	NODES+=("n$k")
	NODE_IP[n$k]=$LINK_NET.$((10 + k))
	POD_CIDR[n$k]=10.242.$k.0/24
	POOL[n$k]=$1
}
add_node database
add_node client
for ((i = 1; i < DATABASE_NODES; i++)); do add_node database; done
for ((i = 1; i < CLIENT_NODES; i++)); do add_node client; done

# Host sysctls the kubelet rewrites at start (kubelet's setupKernelTunables); down puts them back.
SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
	kernel.keys.root_maxkeys kernel.keys.root_maxbytes)
# Host directories that containerd 1.6, libcni and the kubelet create at fixed paths whatever
# their configuration says; down removes them only if up found them absent.
FIXED_DIRS=(/run/containerd /var/lib/cni /var/log/containers)

in_ns() { local ns=$1; shift; nsenter --net="$NETNS/$ns" -- "$@"; }
kubectl() { "$K8S_BIN/kubectl" --kubeconfig "$STATE/kubeconfig" "$@"; }

# wait_for SECONDS DESCRIPTION COMMAND...: poll until COMMAND succeeds.
wait_for() {
	local timeout=$1 what=$2 start=$SECONDS
	shift 2
	until "$@" >/dev/null 2>&1; do
		[ $((SECONDS - start)) -lt "$timeout" ] || die "timed out after ${timeout}s waiting for $what"
		sleep 0.5
	done
}

binaries() {
	local line
	while IFS= read -r line; do
		case $line in K8S_BIN=* | ETCD_BIN=* | COREDNS_BIN=* | DEB_ROOT=*) eval "${line%%=*}=\${line#*=}" ;; esac
	done < <("$root/hack/build-cluster-binaries.sh")
	# iptables and its libraries come unpacked from Debian packages (the host has no iptables):
	# kube-proxy finds them through PATH, LD_LIBRARY_PATH and XTABLES_LIBDIR.
	TOOLS=$STATE/tools
	mkdir -p "$TOOLS"
	for t in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
		ln -sfn "$DEB_ROOT/usr/sbin/xtables-nft-multi" "$TOOLS/$t"
	done
	NODE_ENV=(PATH="$TOOLS:$DEB_ROOT/usr/bin:$DEB_ROOT/usr/sbin:$PATH"
		LD_LIBRARY_PATH="$DEB_ROOT/usr/lib/x86_64-linux-gnu"
		XTABLES_LIBDIR="$DEB_ROOT/usr/lib/x86_64-linux-gnu/xtables")
}

# start NAME NETNS COMMAND...: run COMMAND in the namespace, detached into its own session (so a
# Ctrl-C of make does not reach it), logging to $LOGS/NAME.log; its pid goes to $PIDS/NAME.
start() {
	local name=$1 ns=$2
	shift 2
	nsenter --net="$NETNS/$ns" -- env "${NODE_ENV[@]}" setsid "$@" >"$LOGS/$name.log" 2>&1 </dev/null &
	echo $! >"$PIDS/$name"
}

# ours PIDFILE: succeeds when the pid in the file is still the process up started (same start
# time as recorded), so a recycled pid is never signalled.
ours() {
	local pid
	pid=$(cat "$1" 2>/dev/null) || return 1
	[ -n "$pid" ] && [ -d "/proc/$pid" ] || return 1
	# setsid and nsenter exec into the real command, so the pid is the daemon itself.
	[ "$(awk '{print $22}' "/proc/$pid/stat" 2>/dev/null)" = "$(cat "$1.start" 2>/dev/null || echo x)" ]
}
record_start() {
	local name=$1 pid
	pid=$(cat "$PIDS/$name")
	# nsenter, env and setsid all exec, so the pid is the daemon's from the start; its start time
	# (field 22) tells it apart from a later process that reuses the pid.
	awk '{print $22}' "/proc/$pid/stat" >"$PIDS/$name.start" 2>/dev/null || die "$name exited at once: $(tail -5 "$LOGS/$name.log")"
}

# stop NAME...: SIGTERM to each process up started under these names, all at once (the API server
# alone takes seconds to drain), then SIGKILL whatever is left after 20 s.
stop() {
	local name pid pids=()
	for name in "$@"; do
		if ours "$PIDS/$name"; then
			pid=$(cat "$PIDS/$name")
			kill -TERM "$pid" 2>/dev/null || true
			pids+=("$pid")
		fi
		rm -f "$PIDS/$name" "$PIDS/$name.start"
	done
	for _ in $(seq 200); do
		local alive=()
		for pid in "${pids[@]}"; do [ -d "/proc/$pid" ] && alive+=("$pid"); done
		[ ${#alive[@]} -gt 0 ] || return 0
		sleep 0.1
	done
	log "still running 20s after SIGTERM, killing: ${alive[*]}"
	kill -KILL "${alive[@]}" 2>/dev/null || true
}

### Network ##########################################################################################

network_up() {
	mkdir -p "$NETNS"
	local ns
	for ns in sw cp "${NODES[@]}"; do
		touch "$NETNS/$ns"
		unshare --net="$NETNS/$ns" true
		in_ns "$ns" ip link set lo up
	done
	in_ns sw ip link add br0 type bridge
	in_ns sw ip link set br0 up
	# veth: the end named after the namespace stays on the bridge, eth0 moves into the namespace.
	local -A addr=([cp]=$CP_IP)
	for ns in "${NODES[@]}"; do addr[$ns]=${NODE_IP[$ns]}; done
	for ns in cp "${NODES[@]}"; do
		in_ns sw ip link add "$ns" type veth peer name eth0 netns "$NETNS/$ns"
		in_ns sw ip link set "$ns" master br0 up
		in_ns "$ns" ip addr add "${addr[$ns]}/24" dev eth0
		in_ns "$ns" ip link set eth0 up
	done
	# Each node reaches the other node's pods through that node; the control plane reaches all
	# pods (webhooks, kubectl port-forward's target checks, metrics).
	for ns in "${NODES[@]}"; do
		local other
		for other in "${NODES[@]}"; do
			[ "$other" = "$ns" ] || in_ns "$ns" ip route add "${POD_CIDR[$other]}" via "${NODE_IP[$other]}"
		done
		in_ns cp ip route add "${POD_CIDR[$ns]}" via "${NODE_IP[$ns]}"
		# Nodes route pod traffic, and Service DNAT must also see bridged (same-node) traffic.
		in_ns "$ns" sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
	done
}

### Certificates and credentials #####################################################################

pki_up() {
	mkdir -p "$PKI"
	cd "$PKI"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 30 \
		-subj "/CN=mysqlbench-localcluster-ca" 2>/dev/null
	# The API server's serving certificate: reached as the Service IP by pods, as the control
	# plane's address by the nodes, and as 127.0.0.1 through the relay by the host.
	openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver" 2>/dev/null
	printf 'subjectAltName=%s\n' "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:$API_SERVICE_IP,IP:$CP_IP,IP:127.0.0.1" >apiserver.ext
	openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 \
		-extfile apiserver.ext -out apiserver.crt 2>/dev/null
	# The API server's client certificate towards the kubelets (logs, exec): system:masters, so
	# the kubelets' webhook authorization allows it.
	openssl req -newkey rsa:2048 -nodes -keyout kubelet-client.key -out kubelet-client.csr \
		-subj "/O=system:masters/CN=kube-apiserver-kubelet-client" 2>/dev/null
	openssl x509 -req -in kubelet-client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 \
		-out kubelet-client.crt 2>/dev/null
	openssl genrsa -out sa.key 2048 2>/dev/null
	openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
	# Static tokens, one identity per component (token,user,uid,"groups").
	local tok
	tok() { head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
	{
		echo "$(tok),admin,admin,\"system:masters\""
		echo "$(tok),system:kube-controller-manager,kcm"
		echo "$(tok),system:kube-scheduler,scheduler"
		echo "$(tok),system:kube-proxy,kube-proxy"
		local n
		for n in "${NODES[@]}"; do echo "$(tok),system:node:$NAME-$n,node-$n,\"system:nodes\""; done
	} >tokens.csv
	chmod 600 ./*.key tokens.csv
	cd - >/dev/null
}

token_of() { awk -F, -v u="$1" '$2 == u {print $1}' "$PKI/tokens.csv"; }

# kubeconfig FILE SERVER USER
kubeconfig() {
	cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $NAME
  cluster:
    server: $2
    certificate-authority: $PKI/ca.crt
users:
- name: $3
  user:
    token: $(token_of "$3")
contexts:
- name: $NAME
  context: {cluster: $NAME, user: $3}
current-context: $NAME
EOF
}

### Control plane ####################################################################################

# apiserver_start starts the API server in cp (control_plane_up, restart-apiserver).
apiserver_start() {
	start kube-apiserver cp "$K8S_BIN/kube-apiserver" \
		--etcd-servers http://127.0.0.1:2379 \
		--bind-address "$CP_IP" --advertise-address "$CP_IP" --secure-port 6443 \
		--tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
		--client-ca-file "$PKI/ca.crt" --token-auth-file "$PKI/tokens.csv" \
		--authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
		--service-cluster-ip-range "$SERVICE_CIDR" --allow-privileged=true \
		--kubelet-client-certificate "$PKI/kubelet-client.crt" --kubelet-client-key "$PKI/kubelet-client.key" \
		--kubelet-preferred-address-types InternalIP \
		--cert-dir "$STATE/apiserver"
	record_start kube-apiserver
}

control_plane_up() {
	local api=https://$CP_IP:6443
	start etcd cp "$ETCD_BIN/etcd" --name cp --data-dir "$STATE/etcd" \
		--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster cp=http://127.0.0.1:2380 --unsafe-no-fsync=true
	record_start etcd

	apiserver_start

	# The host's way in: 127.0.0.1:$API_PORT -> unix socket -> the API server in cp.
	rm -f "$STATE/apiserver.sock"
	start relay-cp cp socat "UNIX-LISTEN:$STATE/apiserver.sock,fork,unlink-early" "TCP:$CP_IP:6443"
	record_start relay-cp
	socat_host
	kubeconfig "$STATE/kubeconfig" "https://127.0.0.1:$API_PORT" admin
	for c in kube-controller-manager kube-scheduler kube-proxy; do
		kubeconfig "$STATE/$c.kubeconfig" "$api" "system:$c"
	done
	wait_for 60 "kube-apiserver /readyz" kubectl get --raw /readyz

	start kube-controller-manager cp "$K8S_BIN/kube-controller-manager" \
		--kubeconfig "$STATE/kube-controller-manager.kubeconfig" \
		--authentication-kubeconfig "$STATE/kube-controller-manager.kubeconfig" \
		--authorization-kubeconfig "$STATE/kube-controller-manager.kubeconfig" \
		--bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
		--service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
		--controllers '*,-nodeipam' --service-cluster-ip-range "$SERVICE_CIDR"
	record_start kube-controller-manager
	start kube-scheduler cp "$K8S_BIN/kube-scheduler" \
		--kubeconfig "$STATE/kube-scheduler.kubeconfig" \
		--authentication-kubeconfig "$STATE/kube-scheduler.kubeconfig" \
		--authorization-kubeconfig "$STATE/kube-scheduler.kubeconfig" \
		--bind-address 127.0.0.1 --leader-elect=false
	record_start kube-scheduler
}

# restart_apiserver stops the API server and starts it again, as an upgrade or a crash would:
# for the chaos tests (make test-chaos), which check that no run loses or repeats a step.
restart_apiserver() {
	[ -f "$STATE/kubeconfig" ] || die "no local cluster is up"
	binaries # cached: only the paths
	local t0=$SECONDS
	stop kube-apiserver # a no-op when it is not running (a restart that failed half-way)
	apiserver_start
	wait_for 60 "kube-apiserver /readyz" kubectl get --raw /readyz
	log "API server restarted in $((SECONDS - t0))s"
}

# The host side of the API relay runs in the host's network namespace, on loopback only.
socat_host() {
	if (exec 3<>"/dev/tcp/127.0.0.1/$API_PORT") 2>/dev/null; then
		die "127.0.0.1:$API_PORT is in use (set LOCALCLUSTER_API_PORT)"
	fi
	setsid socat "TCP-LISTEN:$API_PORT,bind=127.0.0.1,reuseaddr,fork" "UNIX-CONNECT:$STATE/apiserver.sock" \
		>"$LOGS/relay-host.log" 2>&1 </dev/null &
	echo $! >"$PIDS/relay-host"
	record_start relay-host
}

### Images ###########################################################################################

# image_from_dir NAME DIR ENTRYPOINT: an image of DIR's contents, built without any registry
# outside the machine and pushed into the in-cluster registry under its mirrored name.
image_from_dir() {
	local name=$1 dir=$2 entrypoint=$3 repo tar
	repo=$REGISTRY/${name#*/}
	tar=$STATE/images/$(basename "${name%%:*}").tar
	tar --create --file "$tar" --directory "$dir" --owner=0 --group=0 --numeric-owner --mtime=@0 .
	crane_cp append --oci-empty-base --new_layer "$tar" --new_tag "$repo"
	crane_cp mutate "$repo" --tag "$repo" --set-platform linux/amd64 --entrypoint "$entrypoint"
	rm -f "$tar"
}

# crane, run inside the control-plane namespace where the registry listens (plain HTTP).
crane_cp() {
	in_ns cp "$CRANE" --insecure "$@" >>"$LOGS/images.log" 2>&1 ||
		die "crane $1 failed: $(tail -3 "$LOGS/images.log")"
}

images_up() {
	[ -x "$CRANE" ] || die "crane not found at $CRANE (make crane)"
	mkdir -p "$STATE/images" "$STATE/registry"
	start registry cp "$CRANE" registry serve --address "$REGISTRY" --disk "$STATE/registry"
	record_start registry
	wait_for 20 "the image registry" in_ns cp "$CRANE" --insecure catalog "$REGISTRY"

	local d=$STATE/images/pause
	mkdir -p "$d"
	(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$d/pause" ./test/localcluster/pause)
	image_from_dir "$PAUSE_IMAGE" "$d" /pause

	d=$STATE/images/coredns
	mkdir -p "$d"
	cp "$COREDNS_BIN/coredns" "$d/coredns"
	image_from_dir "localcluster.mysqlbench.io/coredns:$COREDNS_VERSION" "$d" /coredns

	# busybox (Debian's static build) for test pods: sh, wget, nc, nslookup, httpd.
	d=$STATE/images/busybox
	mkdir -p "$d/bin" "$d/tmp" "$d/etc"
	cp "$DEB_ROOT/bin/busybox" "$d/bin/busybox"
	local applet
	for applet in $("$d/bin/busybox" --list); do [ "$applet" = busybox ] || ln -sf busybox "$d/bin/$applet"; done
	echo 'root:x:0:0:root:/root:/bin/sh' >"$d/etc/passwd"
	image_from_dir "$BUSYBOX_IMAGE" "$d" /bin/sh
	rm -rf "$STATE/images/pause" "$STATE/images/coredns" "$STATE/images/busybox"

	# Image tarballs of the project (make image-offline, hack/build-debian-images.sh).
	local tarball
	for tarball in ${LOCALCLUSTER_IMAGES-$root/bin/images/*.tar}; do
		[ -f "$tarball" ] && push_tarball "$tarball"
	done
	return 0
}

# push_tarball TARBALL: serve a docker image tarball under the name recorded in it; prints that name.
push_tarball() {
	local tag
	tag=$(tar -xOf "$1" manifest.json 2>/dev/null | jq -r '.[0].RepoTags[0] // empty')
	[ -n "$tag" ] || die "$1: no image name recorded in it (a docker image tarball with a tag?)"
	case ${tag%%/*} in
	*.*) ;;
	*) tag=docker.io/$tag ;; # a name without a registry host means Docker Hub
	esac
	crane_cp push "$1" "$REGISTRY/${tag#*/}"
	log "serving $tag from $1"
	LOADED=$tag
}

# load TARBALL...: serve new images in a running cluster, like `kind load image-archive`. The nodes
# forget their copy of each name, so the next pod start pulls the new one even with
# imagePullPolicy IfNotPresent.
load() {
	ours "$PIDS/registry" || die "the cluster is not up"
	binaries_quiet
	local tarball n
	for tarball in "$@"; do
		push_tarball "$tarball"
		for n in "${NODES[@]}"; do
			in_ns "$n" "$DEB_ROOT/usr/bin/ctr" --address "$STATE/$n/containerd.sock" --namespace k8s.io \
				images rm "$LOADED" >/dev/null 2>&1 || true
		done
	done
}

### Nodes ############################################################################################

# Every cgroup hierarchy, v1 controllers, name=systemd and the unified one alike: the kubelet
# refuses a cgroupRoot missing from any of them.
cgroup_hierarchies() { awk '$3 == "cgroup" || $3 == "cgroup2" {print $2}' /proc/self/mounts; }

node_up() {
	local n=$1 ip=${NODE_IP[$1]} s=$STATE/$1
	mkdir -p "$s/cni/net.d" "$s/cni/ipam" "$s/certs.d" "$s/kubelet" "$s/pod-logs" "$s/volume-plugins"

	# Its own cgroup root in every hierarchy; cpuset children start empty, so copy the parent's.
	local h
	for h in $(cgroup_hierarchies); do
		mkdir -p "$h/$NAME-$n"
		if [ -f "$h/cpuset.cpus" ]; then
			cat "$h/cpuset.cpus" >"$h/$NAME-$n/cpuset.cpus"
			cat "$h/cpuset.mems" >"$h/$NAME-$n/cpuset.mems"
		fi
	done

	cat >"$s/cni/net.d/10-$NAME.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "$NAME",
  "plugins": [{
    "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {"type": "host-local", "dataDir": "$s/cni/ipam",
             "ranges": [[{"subnet": "${POD_CIDR[$n]}"}]], "routes": [{"dst": "0.0.0.0/0"}]}
  }]
}
EOF
	local r
	for r in "${MIRRORED[@]}"; do
		mkdir -p "$s/certs.d/$r"
		cat >"$s/certs.d/$r/hosts.toml" <<EOF
# Served by the registry in the control-plane namespace, over plain HTTP.
server = "http://$REGISTRY"
[host."http://$REGISTRY"]
  capabilities = ["pull", "resolve"]
EOF
	done
	cat >"$s/containerd.toml" <<EOF
version = 2
root = "$s/containerd/root"
state = "$s/containerd/state"
oom_score = 0
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$s/containerd.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$s/containerd/opt"
[plugins."io.containerd.runtime.v1.linux"]
  runtime_root = "$s/runc-v1"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # Lowering oom_score_adj needs CAP_SYS_RESOURCE, which this machine lacks: without this every
  # sandbox fails in runc ("can't get final child's PID from pipe: EOF").
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$DEB_ROOT/usr/lib/cni"
    conf_dir = "$s/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$DEB_ROOT/usr/bin/runc"
        Root = "$s/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$s/certs.d"
EOF
	start "containerd-$n" "$n" containerd --config "$s/containerd.toml"
	record_start "containerd-$n"

	kubeconfig "$s/kubelet.kubeconfig" "https://$CP_IP:6443" "system:node:$NAME-$n"
	cat >"$s/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://$s/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: /$NAME-$n
failSwapOn: false
oomScoreAdj: 0
makeIPTablesUtilChains: false
podLogsDir: $s/pod-logs
volumePluginDir: $s/volume-plugins
address: $ip
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
clusterDNS: [$DNS_IP]
clusterDomain: cluster.local
resolvConf: ""
serializeImagePulls: false
registerWithTaints:
- {key: mysqlbench.io/dedicated, value: ${POOL[$n]}, effect: NoSchedule}
# A shared development disk: only evict when it is really full.
evictionHard: {memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2%, nodefs.inodesFree: 2%}
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
EOF
	wait_for 30 "containerd on $n" test -S "$s/containerd.sock"
	start "kubelet-$n" "$n" "$K8S_BIN/kubelet" --config "$s/kubelet.yaml" \
		--kubeconfig "$s/kubelet.kubeconfig" --root-dir "$s/kubelet" \
		--hostname-override "$NAME-$n" --node-ip "$ip" \
		--node-labels "mysqlbench.io/pool=${POOL[$n]}"
	record_start "kubelet-$n"

	# kube-proxy: its rules live in this namespace only. Conntrack sysctls are global here, so
	# leave them alone (max-per-core and the timeouts at 0); oom_score_adj cannot be lowered.
	start "kube-proxy-$n" "$n" "$K8S_BIN/kube-proxy" --kubeconfig "$STATE/kube-proxy.kubeconfig" \
		--hostname-override "$NAME-$n" --bind-address "$ip" --proxy-mode iptables \
		--cluster-cidr "$CLUSTER_CIDR" --oom-score-adj 0 \
		--conntrack-max-per-core 0 --conntrack-tcp-timeout-established 0 --conntrack-tcp-timeout-close-wait 0 \
		--metrics-bind-address 127.0.0.1:10249 --healthz-bind-address 127.0.0.1:10256
	record_start "kube-proxy-$n"
}

coredns_up() {
	cat >"$STATE/coredns.yaml" <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- {apiGroups: [""], resources: [endpoints, services, pods, namespaces], verbs: [list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  # No forward plugin: nothing upstream is reachable from here. hack/coredns links only the
  # plugins used here: a plugin added here is added there too.
  Corefile: |
    .:53 {
        errors
        health :8080
        ready :8181
        kubernetes cluster.local in-addr.arpa ip6.arpa {
            pods insecure
            fallthrough in-addr.arpa ip6.arpa
        }
        cache 30
        loop
        reload
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      dnsPolicy: Default
      # The client pool: the database node is kept for the server under test.
      nodeSelector: {mysqlbench.io/pool: client}
      tolerations: [{key: mysqlbench.io/dedicated, operator: Exists, effect: NoSchedule}]
      containers:
      - name: coredns
        image: localcluster.mysqlbench.io/coredns:$COREDNS_VERSION
        args: [-conf, /etc/coredns/Corefile]
        ports:
        - {name: dns, containerPort: 53, protocol: UDP}
        - {name: dns-tcp, containerPort: 53, protocol: TCP}
        readinessProbe: {httpGet: {path: /ready, port: 8181}, periodSeconds: 2}
        livenessProbe: {httpGet: {path: /health, port: 8080}, periodSeconds: 10}
        resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 170Mi}}
        volumeMounts: [{name: config, mountPath: /etc/coredns}]
      volumes: [{name: config, configMap: {name: coredns}}]
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: $DNS_IP
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
EOF
	kubectl apply -f "$STATE/coredns.yaml" >/dev/null
}

### Host state #######################################################################################

save_host() {
	mkdir -p "$HOST"
	local s d
	for s in "${SYSCTLS[@]}"; do echo "$s=$(sysctl -n "$s")"; done >"$HOST/sysctls"
	: >"$HOST/absent-dirs"
	for d in "${FIXED_DIRS[@]}"; do [ -e "$d" ] || echo "$d" >>"$HOST/absent-dirs"; done
}

restore_host() {
	[ -d "$HOST" ] || return 0
	local line d
	if [ -f "$HOST/sysctls" ]; then
		while IFS= read -r line; do sysctl -qw "$line" || log "could not restore $line"; done <"$HOST/sysctls"
	fi
	# The kubelet's symlinks to our pod logs; libcni's cache of our network; containerd 1.6's
	# shim sockets (it ignores its configured state dir for them).
	find /var/log/containers -maxdepth 1 -type l -lname "$STATE/*" -delete 2>/dev/null || true
	rm -rf "/var/lib/cni/results/$NAME-"* 2>/dev/null || true
	if [ -f "$HOST/absent-dirs" ]; then
		while IFS= read -r d; do
			# Only empty directories: anything else in them belongs to someone else.
			if [ -d "$d" ]; then find "$d" -depth -type d -empty -delete 2>/dev/null || true; fi
			if [ -e "$d" ]; then log "left $d in place: not empty ($(find "$d" | head -5 | tr '\n' ' '))"; fi
		done <"$HOST/absent-dirs"
	fi
}

### up / down / status ###############################################################################

up() {
	[ "$(id -u)" = 0 ] || die "needs root (network namespaces, cgroups, mounts)"
	# Host commands (socat) first: the binaries may take many minutes to build.
	"$root/hack/host-deps.sh" cluster
	if [ -d "$PIDS" ] && [ -n "$(ls -A "$PIDS" 2>/dev/null)" ]; then
		die "a cluster is already up under $STATE (cluster.sh down first)"
	fi
	# Cgroup roots are host-wide names: a second cluster (another state dir) would share them.
	local h
	for h in $(cgroup_hierarchies); do
		[ ! -d "$h/$NAME-n1" ] || die "$h/$NAME-n1 exists: another local cluster is up (or was not taken down)"
	done
	local t0=$SECONDS
	trap '[ $? = 0 ] || log "up failed; logs in $LOGS; \"$0 down\" removes what was started"' EXIT
	binaries
	log "binaries ready ($((SECONDS - t0))s)"
	mkdir -p "$PIDS" "$LOGS"
	printf 'DATABASE_NODES=%s CLIENT_NODES=%s\n' "$DATABASE_NODES" "$CLIENT_NODES" >"$TOPOLOGY"
	save_host
	network_up
	pki_up
	control_plane_up
	log "control plane ready ($((SECONDS - t0))s)"
	images_up
	log "images served ($((SECONDS - t0))s)"
	local n
	for n in "${NODES[@]}"; do node_up "$n"; done
	for n in "${NODES[@]}"; do
		wait_for 120 "node $NAME-$n Ready" \
			kubectl wait --for=condition=Ready "node/$NAME-$n" --timeout=2s
	done
	coredns_up
	wait_for 120 "CoreDNS ready" kubectl -n kube-system wait --for=condition=Available deployment/coredns --timeout=2s
	log "cluster up in $((SECONDS - t0))s; KUBECONFIG=$STATE/kubeconfig"
	kubectl get nodes -o wide
}

unmount_under() {
	# Deepest first, so nested mounts (volumes inside the kubelet's root) go before their parents.
	local m
	for m in $(awk -v p="$1/" 'index($5, p) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m" || log "could not unmount $m"
	done
}

down() {
	[ -d "$STATE" ] || return 0
	K8S_BIN=${K8S_BIN:-} DEB_ROOT=${DEB_ROOT:-}
	local n
	# 1. Pods first, while the kubelets still run, so each sandbox is torn down properly (CNI DEL,
	# netns and shm unmounted). The controllers go first so nothing replaces the deleted pods.
	stop kube-scheduler kube-controller-manager
	if ours "$PIDS/kube-apiserver" && [ -f "$STATE/kubeconfig" ]; then
		binaries_quiet
		log "deleting all pods"
		kubectl delete pods --all --all-namespaces --grace-period=1 --timeout=60s >/dev/null 2>&1 ||
			log "some pods did not go away through the API; removing them through containerd"
	fi
	log "stopping the nodes"
	stop $(for n in "${NODES[@]}"; do echo "kube-proxy-$n" "kubelet-$n"; done)
	# 2. Whatever containerd still runs (crash leftovers): kill and delete through its own client.
	for n in "${NODES[@]}"; do
		local sock=$STATE/$n/containerd.sock ctr
		if ours "$PIDS/containerd-$n" && [ -S "$sock" ]; then
			[ -n "$DEB_ROOT" ] || binaries_quiet
			ctr=("$DEB_ROOT/usr/bin/ctr" --address "$sock" --namespace k8s.io)
			local id
			for id in $("${ctr[@]}" tasks ls -q 2>/dev/null); do
				"${ctr[@]}" tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
			done
			sleep 0.5
			for id in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks delete -f "$id" >/dev/null 2>&1 || true; done
			for id in $("${ctr[@]}" containers ls -q 2>/dev/null); do "${ctr[@]}" containers delete "$id" >/dev/null 2>&1 || true; done
		fi
		stop "containerd-$n"
		# Shims outlive containerd by design; ours are the ones started for this node's socket.
		local pid
		for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $sock( |$)" 2>/dev/null || true); do
			kill -KILL "$pid" 2>/dev/null || true
		done
	done
	# 3. The control plane and the relays.
	log "stopping the control plane"
	stop registry relay-host relay-cp kube-apiserver
	stop etcd
	# 4. Mounts (kubelet's root-dir bind mount, volumes, overlay rootfs, sandbox netns and shm, the
	# namespaces themselves), then cgroups bottom-up, then the host's settings.
	unmount_under "$STATE"
	local h
	for h in $(cgroup_hierarchies); do
		for n in "${NODES[@]}"; do
			[ -d "$h/$NAME-$n" ] || continue
			find "$h/$NAME-$n" -depth -type d -exec rmdir {} \; 2>/dev/null ||
				log "could not remove cgroup $h/$NAME-$n (processes left in it?)"
		done
	done
	restore_host
	if awk -v p="$STATE/" 'index($5, p) == 1 {found=1} END {exit !found}' /proc/self/mountinfo; then
		die "mounts remain under $STATE; not deleting it (see /proc/self/mountinfo)"
	fi
	# Keep the logs of the last run for diagnosis; everything else goes.
	find "$STATE" -mindepth 1 -maxdepth 1 ! -name logs -exec rm -rf {} +
	log "cluster down; logs of the last run in $LOGS"
}

# binaries_quiet: the cached binaries' paths without building anything new.
binaries_quiet() {
	local cache=$MYSQLBENCH_CACHE
	K8S_BIN=$cache/k8s/$K8S_VERSION
	DEB_ROOT=$(ls -d "$cache"/debian/*/root 2>/dev/null | head -1)
}

status() {
	local f
	[ -d "$PIDS" ] || { echo "down"; return 0; }
	for f in "$PIDS"/*; do
		[ -f "$f" ] && [ "${f%.start}" = "$f" ] || continue
		if ours "$f"; then echo "running  $(basename "$f") (pid $(cat "$f"))"; else echo "stopped  $(basename "$f")"; fi
	done
	if ours "$PIDS/kube-apiserver"; then
		binaries_quiet
		kubectl get nodes -o wide 2>/dev/null || true
	fi
}

# check: the proof that the cluster works as the end-to-end tests need it: a pod on each pool's
# node (tolerating its taint), pod-to-pod traffic across nodes, a Service by its DNS name, and
# CoreDNS answering for kubernetes.default.
check() {
	binaries_quiet
	local t0=$SECONDS pool
	for pool in database client; do
		kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: probe-$pool, namespace: default, labels: {app: probe-$pool}}
spec:
  nodeSelector: {mysqlbench.io/pool: $pool}
  tolerations: [{key: mysqlbench.io/dedicated, value: $pool, effect: NoSchedule}]
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: $BUSYBOX_IMAGE
    command: [sh, -c, 'echo "hello from \$(hostname)" >/tmp/index.html && exec httpd -f -p 8080 -h /tmp']
    readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: probe-$pool, namespace: default}
spec:
  selector: {app: probe-$pool}
  ports: [{port: 80, targetPort: 8080}]
EOF
	done
	kubectl wait --for=condition=Ready pod/probe-database pod/probe-client --timeout=120s >/dev/null
	kubectl get pods -o wide
	local db_ip client_ip
	db_ip=$(kubectl get pod probe-database -o jsonpath='{.status.podIP}')
	client_ip=$(kubectl get pod probe-client -o jsonpath='{.status.podIP}')
	# busybox nc rather than wget: Debian's static busybox wget segfaults (exit 139) in a pod here.
	get() { kubectl exec "$1" -- sh -c "printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 5 $2 $3"; }
	echo "client pod -> database pod ($db_ip), across nodes:"
	expect "hello from probe-database" get probe-client "$db_ip" 8080
	echo "database pod -> client pod ($client_ip), across nodes:"
	expect "hello from probe-client" get probe-database "$client_ip" 8080
	echo "CoreDNS (on the client node) answers the database node for kubernetes.default:"
	expect "Address: *$API_SERVICE_IP" kubectl exec probe-database -- nslookup kubernetes.default.svc.cluster.local
	echo "a Service by its DNS name, through kube-proxy, across nodes:"
	expect "hello from probe-database" get probe-client probe-database.default.svc.cluster.local 80
	echo "the API server through the kubernetes Service, from a pod:"
	expect "HTTPS server" get probe-database kubernetes.default.svc.cluster.local 443
	kubectl delete pod/probe-database pod/probe-client svc/probe-database svc/probe-client --wait=true >/dev/null
	log "check passed in $((SECONDS - t0))s"
}

# expect WANT COMMAND...: run COMMAND, show its output, fail unless the output matches WANT.
expect() {
	local want=$1 out
	shift
	out=$("$@" 2>&1) || true
	printf '%s\n' "$out" | grep -v '^[[:space:]]*$' | tail -3 | sed 's/^/    /'
	grep -q -- "$want" <<<"$out" || die "expected '$want' from: $*"
}

# snapshot: the host state up and down must leave unchanged (diff two snapshots).
# node_ctr NODE ARGS...: containerd's ctr against a node's containerd, in its k8s.io namespace
# (what crictl would show: tests read a container's spec and process id with it). NODE is a
# Kubernetes node name ($NAME-n1) or the short one (n1).
node_ctr() {
	local n=${1:?usage: ctr NODE ARGS...}
	shift
	n=${n#"$NAME-"}
	ours "$PIDS/registry" || die "the cluster is not up"
	binaries_quiet
	[ -S "$STATE/$n/containerd.sock" ] || die "no node $n (nodes: ${NODES[*]})"
	in_ns "$n" "$DEB_ROOT/usr/bin/ctr" --address "$STATE/$n/containerd.sock" --namespace k8s.io "$@"
}

snapshot() {
	local deb
	deb=$(ls -d "$MYSQLBENCH_CACHE"/debian/*/root 2>/dev/null | head -1)
	echo "## ip link"; ip -o link | sed 's/ qlen [0-9]*//'
	echo "## ip addr"; ip -o addr
	echo "## ip route"; ip route
	echo "## ip netns"; ip netns list 2>&1
	echo "## iptables"
	if [ -n "$deb" ]; then
		LD_LIBRARY_PATH=$deb/usr/lib/x86_64-linux-gnu XTABLES_LIBDIR=$deb/usr/lib/x86_64-linux-gnu/xtables \
			"$deb/usr/sbin/xtables-nft-multi" iptables-save 2>&1 | grep -v '^#' || true
		LD_LIBRARY_PATH=$deb/usr/lib/x86_64-linux-gnu XTABLES_LIBDIR=$deb/usr/lib/x86_64-linux-gnu/xtables \
			"$deb/usr/sbin/xtables-legacy-multi" iptables-save 2>&1 | grep -v '^#' || true
	fi
	echo "## mounts"; awk '{print $5, $9, $10}' /proc/self/mountinfo | sort
	echo "## sysctls"
	local s
	for s in "${SYSCTLS[@]}" net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables; do echo "$s=$(sysctl -n "$s")"; done
	echo "## cgroups"; for h in $(cgroup_hierarchies); do find "$h" -maxdepth 1 -type d -name "$NAME-*"; done
	echo "## fixed dirs"; for d in "${FIXED_DIRS[@]}"; do [ -e "$d" ] && find "$d" | sort; done; true
}

case ${1:-} in
up) up ;;
down) down ;;
status) status ;;
check) check ;;
load) shift; load "$@" ;;
snapshot) snapshot ;;
restart-apiserver) restart_apiserver ;;
ctr) shift; node_ctr "$@" ;;
*) die "usage: $0 up|down|status|check|load TARBALL...|snapshot|restart-apiserver|ctr NODE ARGS..." ;;
esac
