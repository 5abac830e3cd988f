package plugin

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
)

const twoContexts = `apiVersion: v1
kind: Config
current-context: a
clusters:
- name: a
  cluster: {server: https://a.example:6443}
- name: b
  cluster: {server: https://b.example:6443}
users:
- name: u
  user: {token: t}
contexts:
- name: a
  context: {cluster: a, user: u, namespace: team-a}
- name: b
  context: {cluster: b, user: u, namespace: team-b}
`

// The plugin's connection flags are kubectl's and mean what they mean there.
func TestKubeFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(twoContexts), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args         []string
		host, ns     string
		nsFromConfig bool
	}{
		{[]string{"--kubeconfig", path}, "https://a.example:6443", "team-a", true},
		{[]string{"--kubeconfig", path, "--context", "b"}, "https://b.example:6443", "team-b", true},
		{[]string{"--kubeconfig", path, "-n", "other", "-s", "https://c.example"}, "https://c.example", "other", true},
	} {
		f := newKubeFlags()
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		f.AddFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		cfg, err := f.ToRESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		ns, _, err := f.ToRawKubeConfigLoader().Namespace()
		if err != nil || cfg.Host != c.host || ns != c.ns || cfg.BearerToken != "t" {
			t.Errorf("%v: host %s, namespace %s, token %q (%v); want %s, %s", c.args, cfg.Host, ns, cfg.BearerToken, err, c.host, c.ns)
		}
	}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	newKubeFlags().AddFlags(fs)
	for _, name := range []string{"kubeconfig", "context", "namespace", "server", "token", "as", "as-group", "as-uid",
		"cluster", "user", "certificate-authority", "client-certificate", "client-key", "insecure-skip-tls-verify",
		"tls-server-name", "request-timeout", "disable-compression"} {
		if fs.Lookup(name) == nil {
			t.Errorf("no --%s, which kubectl has", name)
		}
	}
	for _, name := range []string{"username", "password"} {
		if fs.Lookup(name) != nil {
			t.Errorf("--%s, which kubectl no longer has", name)
		}
	}
}
