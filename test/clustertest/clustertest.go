// Package clustertest holds what the suites that run against a real cluster (test/e2e,
// test/chaos) share: their settings from the environment and a client for the kubeconfig's
// cluster.
package clustertest

import (
	"fmt"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// Env is the environment variable name, or def when it is unset or empty.
func Env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// NewClient is a client for the cluster of the kubeconfig (KUBECONFIG), with the project's types.
func NewClient(t testing.TB) client.Client { return NewClientAs(t, "") }

// NewClientAs is NewClient impersonating user (the kubeconfig's identity must be allowed to
// impersonate, as cluster-admin is); "" impersonates no one.
func NewClientAs(t testing.TB, user string) client.Client {
	t.Helper()
	c, err := Client(user)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Client is NewClientAs for code that runs outside a test (TestMain).
func Client(user string) (client.Client, error) {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1.AddToScheme(scheme))
	cfg, err := config.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("no cluster: %w (set KUBECONFIG)", err)
	}
	cfg.Impersonate.UserName = user
	return client.New(cfg, client.Options{Scheme: scheme})
}
