// Package testenv starts a real API server (envtest) with the project's CRDs for tests.
package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// Scheme knows the built-in kinds and the project's kinds.
var Scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(Scheme))
	utilruntime.Must(v1.AddToScheme(Scheme))
}

// Start starts etcd and kube-apiserver from $KUBEBUILDER_ASSETS with the CRDs of
// <root>/config/crd/bases and of extraCRDPaths installed.
func Start(root string, extraCRDPaths ...string) (*envtest.Environment, *rest.Config, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return nil, nil, fmt.Errorf("KUBEBUILDER_ASSETS is not set: run the tests with `make test`, " +
			"which provides kube-apiserver and etcd (downloaded by setup-envtest or built from the Go module proxy)")
	}
	ctrl.SetLogger(klog.NewKlogr())
	env := &envtest.Environment{
		CRDDirectoryPaths:     append([]string{filepath.Join(root, "config", "crd", "bases")}, extraCRDPaths...),
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("start envtest API server from %s: %w", assets, err)
	}
	if err := createDatabasePool(cfg); err != nil {
		_ = env.Stop()
		return nil, nil, err
	}
	return env, cfg, nil
}

// DatabasePoolNodes is how many Ready nodes of the default database pool (mysqlbench.io/pool=
// database, the label a cluster prepared for the operator gives them) Start creates: the
// operator provisions a server only where its pool has a node, and envtest has no nodes of its
// own. Enough that the runs a test starts at once do not queue behind each other; tests of the
// queue make pools of their own.
const DatabasePoolNodes = 8

// DatabasePoolNode is the name of the i-th node Start creates (0-based).
func DatabasePoolNode(i int) string { return fmt.Sprintf("envtest-database-%d", i+1) }

func createDatabasePool(cfg *rest.Config) error {
	c, err := client.New(cfg, client.Options{Scheme: Scheme})
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	ctx := context.Background()
	for i := range DatabasePoolNodes {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: DatabasePoolNode(i),
			Labels: map[string]string{"mysqlbench.io/pool": "database", "kubernetes.io/hostname": DatabasePoolNode(i)}}}
		if err := c.Create(ctx, node); err != nil {
			return fmt.Errorf("create node %s: %w", node.Name, err)
		}
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}
		if err := c.Status().Update(ctx, node); err != nil {
			return fmt.Errorf("make node %s Ready: %w", node.Name, err)
		}
	}
	return nil
}

// Run is a TestMain body: it starts the API server, hands it and a client to use, runs the
// tests and stops the server.
func Run(m *testing.M, root string, use func(*envtest.Environment, client.Client)) int {
	env, cfg, err := Start(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop envtest:", err)
		}
	}()
	c, err := client.New(cfg, client.Options{Scheme: Scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		return 1
	}
	use(env, c)
	return m.Run()
}
