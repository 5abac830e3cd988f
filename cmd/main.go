// Command manager runs the mysqlbench-operator controllers.
package main

import (
	// Time zone data in the binary: the distroless image has none, and spec.timeZone needs it.
	_ "time/tzdata"

	"flag"
	"os"
	"runtime/debug"
	"strconv"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/mysqlbench/mysqlbench-operator/controllers/operator"
)

func main() {
	var o operator.Options
	o.BindFlags(flag.CommandLine)
	klog.InitFlags(nil) // -v, -vmodule, ...: Kubernetes-style structured logs
	flag.Parse()
	ctrl.SetLogger(klog.NewKlogr())
	log := ctrl.Log.WithName("setup")

	if limit, ok := memoryLimit(os.Getenv("MYSQLBENCH_MEMORY_LIMIT"), os.Getenv("GOMEMLIMIT")); ok {
		debug.SetMemoryLimit(limit)
		log.Info("soft memory limit for the garbage collector", "bytes", limit)
	}
	mgr, err := operator.New(ctrl.GetConfigOrDie(), o)
	if err != nil {
		log.Error(err, "manager not started")
		os.Exit(1)
	}
	log.Info("starting manager", "watchNamespaces", o.WatchNamespaces, "leaderElection", o.LeaderElect,
		"secureMetrics", o.SecureMetrics)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}

// memoryLimit is the Go garbage collector's soft limit for a container whose memory limit is
// container (bytes, as the downward API gives limits.memory): 90 % of it, leaving room for
// what the Go runtime does not count as heap. An explicit GOMEMLIMIT wins; no usable limit, no
// soft limit.
func memoryLimit(container, gomemlimit string) (int64, bool) {
	if gomemlimit != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(container, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n / 10 * 9, true
}
