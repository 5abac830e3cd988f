// Package kind checks hack/kind.sh's podman preflight without podman or root: stand-ins for
// podman and its helpers on a PATH that lacks what a fresh machine lacks.
package kind

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// podmanStub behaves like podman 4.3 with netavark: network create and rm succeed, the image
// exists, and run fails as netavark does without iptables when STUB_RUN_ERROR is set.
const podmanStub = `#!/bin/bash
echo "$*" >>"$STUB_LOG"
case $1 in
network) exit 0 ;;
image) exit 0 ;;
run) if [ -n "${STUB_RUN_ERROR:-}" ]; then echo "$STUB_RUN_ERROR" >&2; exit 126; fi; exit 0 ;;
esac
exit 0
`

type host struct {
	bin, helpers, log string
}

// newHost is a PATH directory and a helper directory; tools are the commands on that PATH
// besides the basic ones of /usr/bin and /bin, helpers those in podman's helper directory.
func newHost(t *testing.T, tools, helpers []string) host {
	t.Helper()
	dir := t.TempDir()
	h := host{bin: filepath.Join(dir, "bin"), helpers: filepath.Join(dir, "libexec"), log: filepath.Join(dir, "podman.log")}
	for _, d := range []string{h.bin, h.helpers} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, body string) {
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range tools {
		body := "#!/bin/sh\nexit 0\n"
		if tool == "podman" {
			body = podmanStub
		}
		write(filepath.Join(h.bin, tool), body)
	}
	for _, tool := range helpers {
		write(filepath.Join(h.helpers, tool), "#!/bin/sh\nexit 0\n")
	}
	return h
}

// preflight runs hack/kind.sh preflight on h, with PATH holding only h's tools and the basic
// commands (no /usr/sbin or /sbin, where Debian installs iptables).
func preflight(t *testing.T, h host, env ...string) (string, error) {
	t.Helper()
	for _, dir := range []string{"/usr/bin", "/bin"} {
		if _, err := os.Stat(filepath.Join(dir, "iptables")); err == nil {
			t.Skipf("%s/iptables exists: a PATH without it cannot be made here", dir)
		}
	}
	cmd := exec.Command("bash", "../../hack/kind.sh", "preflight")
	cmd.Env = append([]string{
		"PATH=" + h.bin + ":/usr/bin:/bin",
		"HOME=" + t.TempDir(),
		"MYSQLBENCH_CACHE=" + t.TempDir(),
		"TMPDIR=" + t.TempDir(),
		"KIND=/bin/true",
		"KIND_EXPERIMENTAL_PROVIDER=podman",
		"KIND_NODE_IMAGE=localhost/mysqlbench/kind-node:v1.33.13",
		"PODMAN_HELPER_DIR=" + h.helpers,
		"STUB_LOG=" + h.log,
	}, env...)
	out, err := cmd.CombinedOutput()
	t.Logf("hack/kind.sh preflight:\n%s", out)
	return string(out), err
}

func podmanCalls(t *testing.T, h host) string {
	b, err := os.ReadFile(h.log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// A machine with podman and netavark but no iptables, as a fresh Debian with
// --no-install-recommends: the check fails before kind, naming iptables and its package.
func TestPreflightNamesMissingIptables(t *testing.T) {
	h := newHost(t, []string{"podman"}, []string{"netavark", "aardvark-dns"})
	out, err := preflight(t, h)
	if err == nil {
		t.Fatal("preflight passed without iptables")
	}
	for _, want := range []string{"missing iptables (netavark", "ip6tables", "apt-get install iptables"} {
		if !strings.Contains(out, want) {
			t.Errorf("message lacks %q", want)
		}
	}
	if strings.Contains(out, "missing podman") || strings.Contains(out, "netavark (podman's") {
		t.Errorf("message names podman or netavark, which are there")
	}
	if calls := podmanCalls(t, h); calls != "" {
		t.Errorf("podman ran although its network could not work: %s", calls)
	}
}

// No podman and no helpers at all: each is named with its package.
func TestPreflightNamesEveryMissingPackage(t *testing.T) {
	out, err := preflight(t, newHost(t, nil, nil))
	if err == nil {
		t.Fatal("preflight passed without podman")
	}
	if !strings.Contains(out, "apt-get install podman netavark aardvark-dns iptables") {
		t.Errorf("message does not name the packages to install")
	}
}

// The tools are there but netavark still fails when the container joins the network: the
// live check reports podman's error with the cause and removes its network.
func TestPreflightReportsNetavarkFailure(t *testing.T) {
	h := newHost(t, []string{"podman", "iptables", "ip6tables"}, []string{"netavark", "aardvark-dns"})
	out, err := preflight(t, h, "STUB_RUN_ERROR=Error: netavark: No such file or directory (os error 2)")
	if err == nil {
		t.Fatal("preflight passed although podman could not run a container on a network")
	}
	for _, want := range []string{"cannot run a container on a network", "netavark: No such file or directory", "apt-get install iptables"} {
		if !strings.Contains(out, want) {
			t.Errorf("message lacks %q", want)
		}
	}
	calls := podmanCalls(t, h)
	if !strings.Contains(calls, "network create mysqlbench-preflight-") || !strings.Contains(calls, "network rm -f mysqlbench-preflight-") ||
		!strings.Contains(calls, "run --rm --network mysqlbench-preflight-") {
		t.Errorf("podman calls:\n%s\nwant network create, run on it, network rm", calls)
	}
}

// Everything in place: the check passes, and leaves no network behind.
func TestPreflightPasses(t *testing.T) {
	h := newHost(t, []string{"podman", "iptables", "ip6tables"}, []string{"netavark", "aardvark-dns"})
	out, err := preflight(t, h)
	if err != nil {
		t.Fatalf("preflight failed: %v", err)
	}
	if !strings.Contains(out, "ready for kind") || !strings.Contains(podmanCalls(t, h), "network rm -f") {
		t.Errorf("no container run, or the network left behind")
	}
}
