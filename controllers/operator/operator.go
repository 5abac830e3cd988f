// Package operator builds the manager as cmd/main.go runs it: flags, cache, metrics server,
// leader election and both controllers. Tests start this same wiring (test/helm runs it as the
// ServiceAccount the chart creates, with the chart's own arguments).
package operator

import (
	"crypto/tls"
	"flag"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	mysqlbenchv1alpha1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/controllers/run"
	"github.com/mysqlbench/mysqlbench-operator/controllers/schedule"
	"github.com/mysqlbench/mysqlbench-operator/internal/admission"
	"github.com/mysqlbench/mysqlbench-operator/internal/cachetrim"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/kubeletstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/sink"
	"github.com/mysqlbench/mysqlbench-operator/internal/stepjob"
)

// LeaderElectionID names the leader election Lease.
const LeaderElectionID = "mysqlbench-operator.mysqlbench.io"

// Options are the manager's command-line settings.
type Options struct {
	MetricsAddr      string
	SecureMetrics    bool
	ProbeAddr        string
	LeaderElect      bool
	LeaderElectionNS string
	WatchNamespaces  string
	EnableHTTP2      bool
	SysbenchImage    string
	ReadyTimeout     time.Duration
	SchedulingGrace  time.Duration
	// KubeletCPUInterval is how often the server containers' CPU is sampled from their kubelets;
	// 0 turns the sampler off.
	KubeletCPUInterval time.Duration
	// ResultsDatabaseSecret names the Secret ("namespace/name") of the results database every
	// finished run is written into; empty: none.
	ResultsDatabaseSecret string
	// ResultsOutboxTimeout bounds how long a deleted run waits for the results database.
	ResultsOutboxTimeout time.Duration

	// Not flags, for tests: ScheduleClock is the BenchmarkSchedule controller's clock (the real
	// one when nil), set ahead to make a schedule due at once; SkipNameValidation lets one process
	// start managers one after another (controller names are registered for their metrics).
	ScheduleClock      clock.PassiveClock
	SkipNameValidation bool
}

// BindFlags registers the manager's flags on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8080",
		"Address the metrics endpoint binds to, e.g. :8443 with --metrics-secure; 0 disables it.")
	fs.BoolVar(&o.SecureMetrics, "metrics-secure", false,
		"Serve metrics over HTTPS (a self-signed certificate), only to callers whose bearer token the API server "+
			"authenticates (TokenReview) and authorizes to get /metrics (SubjectAccessReview).")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz probes bind to.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", false,
		"Elect a leader so that only one of several manager replicas reconciles at a time.")
	fs.StringVar(&o.LeaderElectionNS, "leader-election-namespace", "",
		"Namespace of the leader election Lease; the manager's own namespace when empty.")
	fs.StringVar(&o.WatchNamespaces, "watch-namespaces", "",
		"Comma-separated namespaces whose BenchmarkRuns are reconciled; all namespaces when empty.")
	fs.BoolVar(&o.EnableHTTP2, "enable-http2", false,
		"Allow HTTP/2 on the metrics server (off by default: CVE-2023-44487, CVE-2023-39325).")
	fs.StringVar(&o.SysbenchImage, "sysbench-image", run.DefaultSysbenchImage,
		"sysbench 1.0.x image for runs whose spec names none.")
	fs.DurationVar(&o.ReadyTimeout, "server-ready-timeout", run.DefaultServerReadyTimeout,
		"How long a target's server may take to accept connections before the target fails.")
	fs.DurationVar(&o.SchedulingGrace, "scheduling-grace", run.DefaultSchedulingGrace,
		"How long a pod may stay unschedulable or a referenced ConfigMap/Secret missing before the run says so "+
			"(Stalled) or, for a missing reference, the target fails.")
	fs.DurationVar(&o.KubeletCPUInterval, "kubelet-cpu-interval", 0,
		"How often to sample the server containers' CPU usage from their kubelets (through the API server's node "+
			"proxy: needs get on nodes/proxy), for each ladder step's CPU seconds per query; 0 turns it off. "+
			"e.g. 2s: kubelets with a CRI stats provider (containerd) read the cgroup at each request.")
	fs.StringVar(&o.ResultsDatabaseSecret, "results-database-secret", "",
		"NAMESPACE/NAME of a Secret naming a MySQL-family database that every finished run is written into (keys host, "+
			"user, password, optional port, database, tls; or dsn alone); the tables are created and migrated on first use. "+
			"Empty: no results database.")
	fs.DurationVar(&o.ResultsOutboxTimeout, "results-outbox-timeout", sink.DefaultOutboxTimeout,
		"How long a deleted run waits for the results database to take its rows before it goes without them (a "+
			"ResultsLost Warning Event and mysqlbench_results_lost_total record the loss).")
}

// ResultsSecret parses --results-database-secret; a zero name when it is empty.
func ResultsSecret(s string) (types.NamespacedName, error) {
	if s == "" {
		return types.NamespacedName{}, nil
	}
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, fmt.Errorf("--results-database-secret %q: want NAMESPACE/NAME of a Secret, e.g. mysqlbench-system/results-db", s)
	}
	for _, part := range []string{ns, name} {
		if errs := validation.IsDNS1123Subdomain(part); len(errs) > 0 {
			return types.NamespacedName{}, fmt.Errorf("--results-database-secret %q: %q is not a valid name: %s", s, part, strings.Join(errs, "; "))
		}
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// Scheme knows the built-in kinds and the project's kinds.
var Scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(Scheme))
	utilruntime.Must(mysqlbenchv1alpha1.AddToScheme(Scheme))
}

// MetricsOptions is the metrics server of o: plain HTTP, or with --metrics-secure HTTPS whose
// every request is authenticated (TokenReview) and authorized (SubjectAccessReview for get on
// the path) by the API server, with the manager's own credentials.
func MetricsOptions(o Options) metricsserver.Options {
	var tlsOpts []func(*tls.Config)
	if !o.EnableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	opts := metricsserver.Options{
		BindAddress:   o.MetricsAddr,
		SecureServing: o.SecureMetrics,
		TLSOpts:       tlsOpts,
	}
	if o.SecureMetrics {
		opts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	return opts
}

// CacheOptions is the manager's cache: the operator's own objects (cachetrim.Options), in
// the watched namespaces only when some are named. Cluster-scoped kinds (Nodes) are cached
// cluster-wide either way: controller-runtime gives them a cache of their own.
func CacheOptions(watchNamespaces string) cache.Options {
	opts := cachetrim.Options(cache.Options{})
	if ns := SplitNamespaces(watchNamespaces); len(ns) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, n := range ns {
			opts.DefaultNamespaces[n] = cache.Config{}
		}
	}
	return opts
}

// New builds the manager with both controllers and the health checks; mgr.Start runs it.
func New(cfg *rest.Config, o Options) (ctrl.Manager, error) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  Scheme,
		Metrics:                 MetricsOptions(o),
		HealthProbeBindAddress:  o.ProbeAddr,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: o.LeaderElectionNS,
		Cache:                   CacheOptions(o.WatchNamespaces),
		Controller:              config.Controller{SkipNameValidation: ptr.To(o.SkipNameValidation)},
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	resultsSecret, err := ResultsSecret(o.ResultsDatabaseSecret)
	if err != nil {
		return nil, err
	}
	var resultsDB sink.Writer
	if resultsSecret.Name != "" {
		db := &sink.Database{Secret: resultsSecret, Reader: mgr.GetAPIReader(), Clock: clock.RealClock{}}
		if err := mgr.Add(db); err != nil {
			return nil, fmt.Errorf("add the results database: %w", err)
		}
		resultsDB = db
		mgr.GetLogger().WithName("setup").Info("writing finished runs into the results database", "secret", resultsSecret.String())
	}
	clientset, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("create clientset: %w", err)
	}
	// Says once in the log, and in the Events of every run that starts meanwhile, when the
	// admission policy is not in force.
	policy := &admission.Check{Reader: mgr.GetAPIReader(), Log: mgr.GetLogger().WithName("admission-policy")}
	if err := mgr.Add(policy); err != nil {
		return nil, fmt.Errorf("add the admission policy check: %w", err)
	}
	reconciler, err := run.New(run.Dependencies{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    mgr.GetScheme(),
		Recorder:  mgr.GetEventRecorderFor("mysqlbench-operator"),
		Engines:   engine.All(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetScheme()),
		Logs:      stepjob.ClientsetLogs{Clientset: clientset},
		Clock:     clock.RealClock{},
		Results:   resultsDB,
		// The same check as the Runnable above: its first finding serves both.
		AdmissionPolicy: policy,
	}, run.Options{
		SysbenchImage:        o.SysbenchImage,
		ServerReadyTimeout:   o.ReadyTimeout,
		SchedulingGrace:      o.SchedulingGrace,
		ResultsOutboxTimeout: o.ResultsOutboxTimeout,
	})
	if err != nil {
		return nil, err
	}
	if o.KubeletCPUInterval > 0 {
		sampler, err := kubeletstats.New(mgr.GetClient(), mgr.GetAPIReader(),
			kubeletstats.APIServerProxy{Client: clientset.CoreV1().RESTClient()}, clock.RealClock{}, mgr.GetLogger(),
			kubeletstats.Config{Interval: o.KubeletCPUInterval})
		if err != nil {
			return nil, err
		}
		if err := mgr.Add(sampler); err != nil {
			return nil, fmt.Errorf("add the kubelet CPU sampler: %w", err)
		}
		reconciler.CPU = sampler
	}
	if err := reconciler.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up the BenchmarkRun controller: %w", err)
	}
	var scheduleClock clock.PassiveClock = clock.RealClock{}
	if o.ScheduleClock != nil {
		scheduleClock = o.ScheduleClock
	}
	schedules, err := schedule.New(schedule.Dependencies{
		Client:   mgr.GetClient(),
		Scheme:   mgr.GetScheme(),
		Recorder: mgr.GetEventRecorderFor("mysqlbench-operator"),
		Clock:    scheduleClock,
	})
	if err != nil {
		return nil, err
	}
	if err := schedules.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up the BenchmarkSchedule controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("add ready check: %w", err)
	}
	return mgr, nil
}

// SplitNamespaces turns "a, b,," into [a b].
func SplitNamespaces(s string) []string {
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}
