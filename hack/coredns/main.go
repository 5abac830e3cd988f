// Command coredns is CoreDNS with only the plugins the local cluster's Corefile uses
// (test/localcluster/cluster.sh): errors, health, ready, kubernetes, cache, loop and reload.
// Upstream's main links every plugin, and with them the SDKs of three clouds, which cost a cold
// CI run minutes of compiling for a DNS server that answers cluster.local only.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

// linked are the plugins imported above. Directives keeps upstream's order (plugins run in it,
// whatever the Corefile's order), without the plugins this binary lacks.
var linked = map[string]bool{"cache": true, "errors": true, "health": true, "kubernetes": true,
	"loop": true, "ready": true, "reload": true}

func main() {
	var directives []string
	for _, d := range dnsserver.Directives {
		if linked[d] {
			directives = append(directives, d)
		}
	}
	dnsserver.Directives = directives
	coremain.Run()
}
