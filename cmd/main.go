// Command manager runs the mysqlbench-operator controllers.
package main

import (
	// Time zone data in the binary: the distroless image has none, and spec.timeZone needs it.
	_ "time/tzdata"

	"flag"
	"os"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/mysqlbench/mysqlbench-operator/internal/operator"
)

func main() {
	var o operator.Options
	o.BindFlags(flag.CommandLine)
	klog.InitFlags(nil) // -v, -vmodule, ...: Kubernetes-style structured logs
	flag.Parse()
	ctrl.SetLogger(klog.NewKlogr())
	log := ctrl.Log.WithName("setup")

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
