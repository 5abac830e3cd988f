#!/usr/bin/env bash
# Checks the kind node image from hack/build-kind-node-image.sh without creating a cluster: boots
# one node container the way kind's podman provider runs it (privileged, private cgroup namespace,
# tmpfs /tmp and /run, a fresh volume on /var, /lib/modules read-only), but with --network none so
# that nothing on the host's network changes, then checks that
#   - systemd reaches running (or degraded), containerd is active, the kubelet waits for kubeadm;
#   - containerd's CRI is ready, with the sandbox image and restrict_oom_score_adj configured;
#   - every image `kubeadm config images list` names inside the node is preloaded, and the CNI's;
#   - a host-network pod sandbox and a container from a preloaded image run (runc, systemd cgroup
#     driver, unpacking of the preloaded content);
#   - the host's kernel-wide sysctls (everything but net.*) are unchanged.
# Removes its container and volume at the end, also on failure.
#
# env: KIND_NODE_IMAGE (localhost/mysqlbench/kind-node:v1.33.13), K8S_VERSION (v1.33.13),
#      CONTAINERS_CONF (default: test/kind/containers.conf, the podman settings these hosts need,
#      with storage in the cache; see podman_env in hack/lib.sh)
set -euo pipefail
hack=$(cd "$(dirname "$0")" && pwd)
. "$hack/lib.sh"
"$hack/host-deps.sh" kind
podman_env

K8S_VERSION=${K8S_VERSION:-v1.33.13}
KIND_NODE_IMAGE=${KIND_NODE_IMAGE:-localhost/mysqlbench/kind-node:$K8S_VERSION}
name=mysqlbench-kind-node-check
volume=$name-var

[ "$(id -u)" = 0 ] || die "needs root (privileged podman)"
podman image exists "$KIND_NODE_IMAGE" || die "no $KIND_NODE_IMAGE in podman (make kind-node-image)"
podman container exists "$name" && die "container $name exists: remove it first (podman rm -f $name)"

work=$(mktemp -d)
cleanup() {
	podman rm --force --time 10 "$name" >/dev/null 2>&1 || true
	podman volume rm --force "$volume" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

# Kernel-wide settings, which a privileged node could change for the whole host (counters left
# out). Only meaningful while nothing else changes them: a kubelet running on the host itself
# (test/localcluster) sets kernel.panic, kernel.panic_on_oops and vm.overcommit_memory when it starts.
host_sysctls() {
	sysctl -a 2>/dev/null | grep -v -e '^net\.' -e '^fs\.\(dentry-state\|file-nr\|inode-\|aio-nr\)' -e '^kernel\.pty\.nr' \
		-e '^kernel\.ns_last_pid' -e '^kernel\.random\.' -e '^fs\.quota\.' || true
}
host_sysctls >"$work/sysctl.before"

# kind always mounts the host's /lib/modules; an empty directory stands in where the host has none.
modules=/lib/modules
[ -d "$modules" ] || { modules=$work/modules && mkdir -p "$modules"; }

log "starting $name from $KIND_NODE_IMAGE"
start=$SECONDS
podman run --detach --name "$name" --hostname "$name" --privileged --cgroupns=private --network none \
	--tty -e container=podman --tmpfs /tmp --tmpfs /run \
	--volume "$volume:/var:suid,exec,dev" --volume "$modules:/lib/modules:ro" "$KIND_NODE_IMAGE" >/dev/null
node() { podman exec "$name" "$@"; }
node_stdin() { podman exec --interactive "$name" "$@"; }

# What kind waits for (provision.go: up to 30 s for this line).
for _ in $(seq 60); do
	podman logs "$name" 2>&1 | grep -q 'Reached target .*Multi-User System' && break
	sleep 0.5
done
podman logs "$name" 2>&1 | grep -q 'Reached target .*Multi-User System' ||
	die "systemd did not reach multi-user: $(podman logs "$name" 2>&1 | tail -20)"
log "multi-user.target after $((SECONDS - start)) s"
podman logs "$name" 2>&1 | grep '^INFO:' >&2

state=$(node systemctl is-system-running --wait || true)
log "systemctl is-system-running: $state"
case $state in running | degraded) ;; *) die "system state $state" ;; esac
[ "$state" = running ] || log "failed units: $(node systemctl --failed --no-legend)"
[ "$(node systemctl is-active containerd)" = active ] || die "containerd is not active"
kubelet=$(node systemctl status kubelet --no-pager 2>&1 || true) # inactive: exit status 3
grep -q 'ConditionPathExists=/var/lib/kubelet/config.yaml was not met' <<<"$kubelet" ||
	die "kubelet should wait for kubeadm's config: $kubelet"
log "kubelet: waiting for /var/lib/kubelet/config.yaml (kubeadm writes it)"

ids=$(node sh -c 'cat /etc/machine-id; cat /kind/version')
log "machine-id, /kind/version: $(echo $ids)"

info=$(node crictl info)
jq -e '.status.conditions[] | select(.type == "RuntimeReady") | .status' <<<"$info" >/dev/null || die "CRI not ready: $info"
log "CRI: $(jq -c '{runtimeReady: (.status.conditions[] | select(.type == "RuntimeReady") | .status),
	sandboxImage: .config.sandboxImage, restrictOOMScoreAdj: .config.restrictOOMScoreAdj,
	systemdCgroup: .config.containerd.runtimes.runc.options.SystemdCgroup}' <<<"$info")"

wanted=$(node kubeadm config images list --kubernetes-version "$K8S_VERSION" 2>/dev/null)
cni_image=$(node sed -n 's/^ *image: *//p' /kind/manifests/default-cni.yaml)
preloaded=$(node ctr --namespace k8s.io images ls --quiet | grep -v '@sha256:\|^sha256:' | sort)
missing=$(comm -23 <(printf '%s\n' "$wanted" "$cni_image" | sort -u) <(echo "$preloaded"))
[ -z "$missing" ] || die "not preloaded: $missing"
log "preloaded, all that kubeadm $K8S_VERSION asks for plus the CNI: $(echo $preloaded)"

# A pod the way the kubelet makes one (host network: the node has none to give it here).
node sh -c ': >>/etc/resolv.conf' # podman adds none with --network none; containerd copies it
node_stdin sh -c 'cat >/tmp/pod.json' <<'EOF'
{"metadata": {"name": "check", "namespace": "default", "uid": "check"}, "log_directory": "/tmp/pod",
 "linux": {"cgroup_parent": "kubelet.slice", "security_context": {"namespace_options": {"network": 2}}}}
EOF
node_stdin sh -c 'cat >/tmp/container.json' <<EOF
{"metadata": {"name": "version"}, "image": {"image": "registry.k8s.io/kube-apiserver:$K8S_VERSION"},
 "command": ["kube-apiserver", "--version"], "log_path": "version.log", "linux": {}}
EOF
pod=$(node crictl runp /tmp/pod.json)
container=$(node crictl create "$pod" /tmp/container.json /tmp/pod.json)
node crictl start "$container" >/dev/null
for _ in $(seq 20); do
	[ "$(node crictl inspect -o go-template --template '{{.status.state}}' "$container")" = CONTAINER_EXITED ] && break
	sleep 0.5
done
version=$(node crictl logs "$container" 2>&1)
[ "$version" = "Kubernetes $K8S_VERSION" ] || die "kube-apiserver --version in a pod printed: $version"
log "pod sandbox and container from the preloaded images: $version"
node crictl stopp "$pod" >/dev/null
node crictl rmp "$pod" >/dev/null

start=$SECONDS
podman stop --time 30 "$name" >/dev/null
log "stopped (SIGRTMIN+3) in $((SECONDS - start)) s: $(podman logs "$name" 2>&1 | tail -1)"

host_sysctls >"$work/sysctl.after"
diff "$work/sysctl.before" "$work/sysctl.after" >&2 || die "the node changed host sysctls (above)"
log "host sysctls outside net.* unchanged"
log "$KIND_NODE_IMAGE: all checks passed"
