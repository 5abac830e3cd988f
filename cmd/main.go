// Command manager runs the mysqlbench-operator controllers.
package main

import (
	// Time zone data in the binary: the distroless image has none, and spec.timeZone needs it.
	_ "time/tzdata"

	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	mysqlbenchv1alpha1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/controllers"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
)

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(mysqlbenchv1alpha1.AddToScheme(scheme))
}

// options are the manager's command-line settings.
type options struct {
	metricsAddr      string
	secureMetrics    bool
	probeAddr        string
	leaderElect      bool
	leaderElectionNS string
	watchNamespaces  string
	enableHTTP2      bool
	sysbenchImage    string
	readyTimeout     time.Duration
	schedulingGrace  time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080",
		"Address the metrics endpoint binds to, e.g. :8443 with --metrics-secure; 0 disables it.")
	flag.BoolVar(&o.secureMetrics, "metrics-secure", false,
		"Serve metrics over HTTPS, authenticated and authorized through the API server.")
	flag.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz probes bind to.")
	flag.BoolVar(&o.leaderElect, "leader-elect", false,
		"Elect a leader so that only one of several manager replicas reconciles at a time.")
	flag.StringVar(&o.leaderElectionNS, "leader-election-namespace", "",
		"Namespace of the leader election Lease; the manager's own namespace when empty.")
	flag.StringVar(&o.watchNamespaces, "watch-namespaces", "",
		"Comma-separated namespaces whose BenchmarkRuns are reconciled; all namespaces when empty.")
	flag.BoolVar(&o.enableHTTP2, "enable-http2", false,
		"Allow HTTP/2 on the metrics server (off by default: CVE-2023-44487, CVE-2023-39325).")
	flag.StringVar(&o.sysbenchImage, "sysbench-image", controllers.DefaultSysbenchImage,
		"sysbench 1.0.x image for runs whose spec names none.")
	flag.DurationVar(&o.readyTimeout, "server-ready-timeout", controllers.DefaultServerReadyTimeout,
		"How long a target's server may take to accept connections before the target fails.")
	flag.DurationVar(&o.schedulingGrace, "scheduling-grace", controllers.DefaultSchedulingGrace,
		"How long a pod may stay unschedulable or a referenced ConfigMap/Secret missing before the run says so "+
			"(Stalled) or, for a missing reference, the target fails.")
	klog.InitFlags(nil) // -v, -vmodule, ...: Kubernetes-style structured logs
	flag.Parse()
	ctrl.SetLogger(klog.NewKlogr())
	log := ctrl.Log.WithName("setup")

	if err := run(o); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}

func run(o options) error {
	log := ctrl.Log.WithName("setup")
	var tlsOpts []func(*tls.Config)
	if !o.enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metricsOpts := metricsserver.Options{
		BindAddress:   o.metricsAddr,
		SecureServing: o.secureMetrics,
		TLSOpts:       tlsOpts,
	}
	if o.secureMetrics {
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	cacheOpts := controllers.CacheOptions(cache.Options{})
	if ns := splitNamespaces(o.watchNamespaces); len(ns) > 0 {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, n := range ns {
			cacheOpts.DefaultNamespaces[n] = cache.Config{}
		}
	}

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsOpts,
		HealthProbeBindAddress:  o.probeAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        "mysqlbench-operator.mysqlbench.io",
		LeaderElectionNamespace: o.leaderElectionNS,
		Cache:                   cacheOpts,
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	clientset, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("create clientset: %w", err)
	}
	reconciler := &controllers.BenchmarkRunReconciler{
		Client:             mgr.GetClient(),
		APIReader:          mgr.GetAPIReader(),
		Scheme:             mgr.GetScheme(),
		Recorder:           mgr.GetEventRecorderFor("mysqlbench-operator"),
		Engines:            engine.All(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetScheme()),
		Logs:               controllers.ClientsetLogs{Clientset: clientset},
		SysbenchImage:      o.sysbenchImage,
		ServerReadyTimeout: o.readyTimeout,
		SchedulingGrace:    o.schedulingGrace,
	}
	if err := reconciler.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the BenchmarkRun controller: %w", err)
	}
	if err := (&controllers.BenchmarkScheduleReconciler{
		Client:   mgr.GetClient(),
		Scheme:   mgr.GetScheme(),
		Recorder: mgr.GetEventRecorderFor("mysqlbench-operator"),
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the BenchmarkSchedule controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("add ready check: %w", err)
	}

	log.Info("starting manager", "watchNamespaces", o.watchNamespaces, "leaderElection", o.leaderElect)
	return mgr.Start(ctrl.SetupSignalHandler())
}

// splitNamespaces turns "a, b,," into [a b].
func splitNamespaces(s string) []string {
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}
