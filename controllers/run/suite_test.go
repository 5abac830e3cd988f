package run_test

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	runctrl "github.com/mysqlbench/mysqlbench-operator/controllers/run"
	"github.com/mysqlbench/mysqlbench-operator/controllers/schedule"
	"github.com/mysqlbench/mysqlbench-operator/internal/admission"
	"github.com/mysqlbench/mysqlbench-operator/internal/cachetrim"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	perconadriver "github.com/mysqlbench/mysqlbench-operator/internal/engine/percona/driver"
	"github.com/mysqlbench/mysqlbench-operator/internal/sink"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

var (
	env    *envtest.Environment
	cfg    *rest.Config
	k8s    client.Client
	nsSeq  int
	nsLock sync.Mutex
)

func TestMain(m *testing.M) {
	var err error
	env, cfg, err = testenv.Start(filepath.Join("..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	k8s, err = client.New(cfg, client.Options{Scheme: testenv.Scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := checkManagerRBAC(code); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: the manager's RBAC differs from its API calls:", err)
		code = 1
	}
	stopPerconaEnv()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop envtest:", err)
	}
	os.Exit(code)
}

// Captured from real sysbench 1.0.20 runs through the reporter against MariaDB 10.11 (the
// sysbench package's real tests write these files).
const capturedDir = "../../internal/sysbench/testdata/reporter"

func captured(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(capturedDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// withServerSnapshots puts the reporter's server snapshot lines of a real run (MySQL 9.7,
// internal/sysbench/testdata/server) around a captured log: what a ladder step's log holds with
// spec.serverStats on (the default).
func withServerSnapshots(t testing.TB, log string) string {
	t.Helper()
	b, err := os.ReadFile("../../internal/sysbench/testdata/server/mysql97_read_write.txt")
	if err != nil {
		t.Fatal(err)
	}
	var start, end []string
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, `{"type":"serverBegin","version":1,"at":"start"}`), strings.HasPrefix(line, `{"type":"server","version":1,"at":"start"`):
			start = append(start, line)
		case strings.HasPrefix(line, `{"type":"serverBegin","version":1,"at":"end"}`), strings.HasPrefix(line, `{"type":"server","version":1,"at":"end"`):
			end = append(end, line)
		}
	}
	if len(start) != 2 || len(end) != 2 {
		t.Fatalf("the MySQL 9.7 capture has %d start and %d end snapshot lines, want 2 of each", len(start), len(end))
	}
	return strings.Join(start, "\n") + "\n" + log + strings.Join(end, "\n") + "\n"
}

// probeMessage is the reporter's probe line, as the real probe test prints it against MariaDB.
const probeMessage = `{"type":"final","version":1,"command":"probe","sysbench":"1.0.20","threads":1,"durationSeconds":0,"server":"10.11.14-MariaDB-0+deb12u2"}` + "\n"

// newNamespace gives each test its own namespace.
func newNamespace(t *testing.T) string {
	t.Helper()
	nsLock.Lock()
	nsSeq++
	name := fmt.Sprintf("t%d-%s", nsSeq, strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())))
	nsLock.Unlock()
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.TrimRight(name, "-")
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// operator is a running manager with the BenchmarkRun controller, as cmd/main.go wires it.
type operator struct {
	cancel context.CancelFunc
	done   chan error
	logs   *fakeLogs
}

type operatorOptions struct {
	readyTimeout    time.Duration
	schedulingGrace time.Duration
	// log is what the fake kubelet serves as every sysbench pod's log.
	log string
	// restConfig is the API server to run against; the suite's envtest when nil.
	restConfig *rest.Config
	// schedules also runs the BenchmarkSchedule controller, with scheduleClock (real when nil).
	schedules     bool
	scheduleClock clock.PassiveClock
	// noRuns leaves the BenchmarkRun controller out: the test writes the runs' status itself.
	noRuns bool
	// metricsAddr serves /metrics there (host:port); off when empty.
	metricsAddr string
	// namespaces the operator watches; only the test's namespace when empty.
	namespaces []string
	// stuckDeletionGrace is the Percona engines' StuckDeletionGrace; their default when 0.
	stuckDeletionGrace time.Duration
	// resultsSecret, when set, names the results database's Secret (sink.Database).
	resultsSecret *types.NamespacedName
	// outboxTimeout is the reconciler's ResultsOutboxTimeout; its default when 0.
	outboxTimeout time.Duration
}

func startOperator(t *testing.T, ns string, o operatorOptions) *operator {
	t.Helper()
	restConfig := cfg
	if o.restConfig != nil {
		restConfig = o.restConfig
	}
	// Every request of the manager is recorded for the RBAC check (rbac_test.go); the tests' own
	// clients (k8s, the fake kubelet) are not.
	restConfig = managerCalls.Wrap(restConfig)
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:     testenv.Scheme,
		Metrics:    metricsserver.Options{BindAddress: cmp.Or(o.metricsAddr, "0")},
		Cache:      cachetrim.Options(cacheFor(append([]string{ns}, o.namespaces...)...)),
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	logs := &fakeLogs{log: o.log}
	engines := engine.All(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetScheme())
	for _, e := range []v1.Engine{v1.EnginePerconaServer, v1.EnginePerconaXtraDBCluster} {
		engines[e].(*perconadriver.Engine).StuckDeletionGrace = o.stuckDeletionGrace
	}
	var results sink.Writer
	if o.resultsSecret != nil {
		results = &sink.Database{Secret: *o.resultsSecret, Reader: mgr.GetAPIReader(), Clock: clock.RealClock{}}
	}
	// As the manager has it (controllers/operator): a Runnable, and the run reconciler's source.
	policy := &admission.Check{Reader: mgr.GetAPIReader(), Log: ctrl.Log.WithName("admission-policy")}
	if err := mgr.Add(policy); err != nil {
		t.Fatal(err)
	}
	r, err := runctrl.New(runctrl.Dependencies{
		Client:          mgr.GetClient(),
		APIReader:       mgr.GetAPIReader(),
		Scheme:          mgr.GetScheme(),
		Recorder:        mgr.GetEventRecorderFor("mysqlbench-operator"),
		Engines:         engines,
		Logs:            logs,
		Clock:           clock.RealClock{},
		Results:         results,
		AdmissionPolicy: policy,
	}, runctrl.Options{
		SysbenchImage:        "sysbench:test",
		ServerReadyTimeout:   o.readyTimeout,
		SchedulingGrace:      o.schedulingGrace,
		ResultsOutboxTimeout: o.outboxTimeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !o.noRuns {
		if err := r.SetupWithManager(mgr); err != nil {
			t.Fatal(err)
		}
	}
	if o.schedules {
		var scheduleClock clock.PassiveClock = clock.RealClock{}
		if o.scheduleClock != nil {
			scheduleClock = o.scheduleClock
		}
		sr, err := schedule.New(schedule.Dependencies{
			Client:   mgr.GetClient(),
			Scheme:   mgr.GetScheme(),
			Recorder: mgr.GetEventRecorderFor("mysqlbench-operator"),
			Clock:    scheduleClock,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := sr.SetupWithManager(mgr); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	op := &operator{cancel: cancel, done: make(chan error, 1), logs: logs}
	go func() { op.done <- mgr.Start(ctx) }()
	t.Cleanup(op.stop)
	return op
}

func (o *operator) stop() {
	if o.cancel == nil {
		return
	}
	o.cancel()
	if err := <-o.done; err != nil {
		fmt.Fprintln(os.Stderr, "manager stopped with", err)
	}
	o.cancel = nil
}

// fakeLogs plays the kubelet's log endpoint: every sysbench pod's log is the captured output of a
// real 4-thread run.
type fakeLogs struct {
	mu    sync.Mutex
	reads int
	log   string
}

func (f *fakeLogs) Logs(_ context.Context, _, _, _ string) (io.ReadCloser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.log == "" {
		return nil, fmt.Errorf("the kubelet is not serving logs")
	}
	return io.NopCloser(strings.NewReader(f.log)), nil
}
