// Command kubectl-mysqlbench is the kubectl plugin of the mysqlbench operator (kubectl mysqlbench
// get, describe, compare, export, logs, plot, server, create). The commands live in internal/plugin.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mysqlbench/mysqlbench-operator/internal/plugin"
)

func main() {
	// The clients log nothing a user needs; errors come back as errors.
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := plugin.Execute(ctx, plugin.Options{
		Streams: genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr},
	}, os.Args[1:])
	stop()
	os.Exit(code)
}
