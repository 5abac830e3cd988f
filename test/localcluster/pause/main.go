// Command pause is the sandbox ("pause") container of the local test cluster: containerd needs an
// image for every pod sandbox and no registry that serves registry.k8s.io/pause is reachable here.
// It holds the pod's namespaces open, reaps children that end up parented to it, and exits on
// SIGTERM or SIGINT.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			return
		}
		// Reap every exited child: with a shared PID namespace this process is PID 1.
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
