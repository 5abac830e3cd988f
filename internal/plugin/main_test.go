package plugin

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	runcontroller "github.com/mysqlbench/mysqlbench-operator/controllers/run"
	"github.com/mysqlbench/mysqlbench-operator/internal/admission"
	"github.com/mysqlbench/mysqlbench-operator/internal/cachetrim"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// The commands run against a real API server (envtest) holding runs the operator's own
// reconciler wrote, with the fake kubelet of kubelet_test.go in place of nodes.
var (
	// noCluster says why the envtest tests skip (KUBEBUILDER_ASSETS unset outside CI).
	noCluster string
	k8s       client.Client
	// kubeconfig is a file for --kubeconfig, an admin of the envtest API server.
	kubeconfig string
	kubelet    *fakeKubelet
)

// Namespaces: the fake kubelet serves "bench"; nothing runs the servers of "stuck", whose run
// never gets past provisioning.
const (
	nsBench = "bench"
	nsStuck = "stuck"
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		if os.Getenv("CI") == "true" {
			fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set, and CI must run the plugin's envtest tests: run them with make test")
			return 1
		}
		noCluster = "KUBEBUILDER_ASSETS is not set: run make test for the plugin's tests against an API server"
		return m.Run()
	}
	env, cfg, err := testenv.Start(filepath.Join("..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop envtest:", err)
		}
	}()
	if k8s, err = client.New(cfg, client.Options{Scheme: testenv.Scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "kubectl-mysqlbench-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if kubeconfig, err = writeKubeconfig(env, dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, ns := range []string{nsBench, nsStuck} {
		if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	kubelet = startKubelet(k8s, failFirstAttempt, nsBench)
	defer kubelet.close()
	stop, err := startOperator(cfg, kubelet)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	if err := createRuns(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// failFirstAttempt fails the first attempt of run pk's target mariadb at step s02: the operator
// retries it in a new Job and keeps the failed one.
func failFirstAttempt(job *batchv1.Job) bool {
	return job.Labels[specs.LabelRun] == "pk" && job.Labels[specs.LabelTarget] == "mariadb" &&
		job.Labels[specs.LabelStep] == "s02" && strings.HasSuffix(job.Name, "-a0")
}

// writeKubeconfig provisions an admin user of the API server and writes its kubeconfig.
func writeKubeconfig(env *envtest.Environment, dir string) (string, error) {
	user, err := env.AddUser(envtest.User{Name: "plugin-user", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", fmt.Errorf("add user: %w", err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("kubeconfig: %w", err)
	}
	path := filepath.Join(dir, "kubeconfig")
	return path, os.WriteFile(path, data, 0o600)
}

// startOperator runs the BenchmarkRun controller as cmd/main.go wires it, with the fake
// kubelet's logs.
func startOperator(cfg *rest.Config, k *fakeKubelet) (func(), error) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:     testenv.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      cachetrim.Options(cache.Options{}),
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, err
	}
	r, err := runcontroller.New(runcontroller.Dependencies{
		Client:          mgr.GetClient(),
		APIReader:       mgr.GetAPIReader(),
		Scheme:          mgr.GetScheme(),
		Recorder:        mgr.GetEventRecorderFor("mysqlbench-operator"),
		Engines:         engine.All(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetScheme()),
		Logs:            k,
		Clock:           clock.RealClock{},
		AdmissionPolicy: &admission.Check{Reader: mgr.GetAPIReader()},
	}, runcontroller.Options{SysbenchImage: "sysbench:test"})
	if err != nil {
		return nil, err
	}
	r.CPU = kubeletCPU{}
	if err := r.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "manager stopped with", err)
		}
	}, nil
}

// newRun is a run of MariaDB with performance_schema at its default and OFF.
func newRun(ns, name string, repetitions int32, threads ...int32) *v1.BenchmarkRun {
	run := &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.BenchmarkRunSpec{
			Targets: []v1.Target{
				{Name: "mariadb", Image: "mariadb:10.11"},
				{Name: "mariadb-psoff", Image: "mariadb:10.11", MyCnf: "performance_schema = OFF"},
			},
			Workload: v1.Workload{Script: "oltp_point_select", Tables: 4, TableSize: 1000},
			Ladder:   v1.Ladder{Threads: threads, StepDuration: &metav1.Duration{Duration: 3 * time.Second}},
		},
	}
	if repetitions > 1 {
		run.Spec.Repetitions = ptr.To(repetitions)
	}
	return run
}

// createRuns creates the runs the tests read and waits until the operator has finished those of
// namespace bench: pk (4 thread counts, one failed attempt), base and cand (2 thread counts x 4
// repetitions; cand regressed at 2 threads), and stuck, which never gets a server.
func createRuns() error {
	ctx := context.Background()
	runs := []*v1.BenchmarkRun{
		newRun(nsBench, "pk", 1, 1, 2, 4, 8),
		newRun(nsBench, "base", 4, 1, 2),
		newRun(nsBench, "cand", 4, 1, 2),
		newRun(nsStuck, "stuck", 1, 1, 2),
	}
	for _, r := range runs {
		if err := k8s.Create(ctx, r); err != nil {
			return err
		}
	}
	for _, name := range []string{"pk", "base", "cand"} {
		if err := waitFinished(ctx, nsBench, name, 5*time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// waitFinished polls the run until it has succeeded or failed.
func waitFinished(ctx context.Context, ns, name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	run := &v1.BenchmarkRun{}
	for {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, run); err == nil && run.Status.Phase.Finished() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("run %s/%s not finished after %s: status %+v", ns, name, timeout, run.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// needCluster skips a test that needs the API server when there is none (never in CI).
func needCluster(t *testing.T) {
	t.Helper()
	if noCluster != "" {
		t.Skip(noCluster)
	}
}

// kubectlMysqlbench runs the plugin with args against the envtest API server, in namespace
// bench unless args name another.
func kubectlMysqlbench(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return runPlugin(context.Background(), t, append([]string{"--kubeconfig", kubeconfig, "-n", nsBench}, args...)...)
}

// runPlugin runs the root command with exactly args.
func runPlugin(ctx context.Context, t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	o := Options{Streams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}}
	if kubelet != nil {
		o.Logs = kubelet
	}
	cmd := NewCommand(o)
	cmd.SetArgs(args)
	err = cmd.ExecuteContext(ctx)
	t.Logf("kubectl mysqlbench %s\n%s%s", strings.Join(args, " "), out.String(), errOut.String())
	if err != nil {
		t.Logf("error: %v", err)
	}
	return out.String(), errOut.String(), err
}

// getRun reads a run as the operator left it.
func getRun(t *testing.T, ns, name string) *v1.BenchmarkRun {
	t.Helper()
	run := &v1.BenchmarkRun{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, run); err != nil {
		t.Fatal(err)
	}
	return run
}
