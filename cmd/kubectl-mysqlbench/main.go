// Command kubectl-mysqlbench is the kubectl plugin of the mysqlbench operator (kubectl mysqlbench
// get, describe, compare, export, logs, plot, server, create, history). The commands live in
// internal/plugin.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/mysqlbench/mysqlbench-operator/internal/plugin"
)

func main() {
	// Errors come back as errors; what client-go logs goes to stderr through klog, so -v (--v)
	// shows the API requests as it does in kubectl. Nothing the plugin links logs through
	// controller-runtime (it links none of its clients: internal/kubeclient).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := plugin.Execute(ctx, plugin.Options{
		Streams: genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr},
	}, os.Args[1:])
	stop()
	os.Exit(code)
}
