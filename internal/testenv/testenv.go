// Package testenv starts a real API server (envtest) with the project's CRDs for tests.
package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

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
	return env, cfg, nil
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
