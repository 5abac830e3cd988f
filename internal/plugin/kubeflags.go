package plugin

import (
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeFlags are kubectl's connection flags (--kubeconfig, --context, -n, --server, --token,
// --as, ...), bound straight to client-go's clientcmd. cli-runtime's ConfigFlags offers the same
// flags but links its resource builder, and with it kustomize and a disk discovery cache the
// plugin never uses: a quarter of the binary.
type kubeFlags struct {
	kubeconfig string
	overrides  clientcmd.ConfigOverrides
	// Namespace is -n's value ("" when not given).
	Namespace *string
	loader    clientcmd.ClientConfig
}

func newKubeFlags() *kubeFlags {
	f := &kubeFlags{overrides: clientcmd.ConfigOverrides{ClusterDefaults: clientcmd.ClusterDefaults}}
	f.Namespace = &f.overrides.Context.Namespace
	return f
}

// AddFlags adds kubectl's flags, with kubectl's names and help.
func (f *kubeFlags) AddFlags(flags *pflag.FlagSet) {
	flags.StringVar(&f.kubeconfig, clientcmd.RecommendedConfigPathFlag, "", "Path to the kubeconfig file to use for CLI requests.")
	names := clientcmd.RecommendedConfigOverrideFlags("")
	// As kubectl: -s for --server, and no basic-auth or proxy flags (a flag without a long name
	// is not added).
	names.ClusterOverrideFlags.APIServer.ShortName = "s"
	names.AuthOverrideFlags.Username.LongName, names.AuthOverrideFlags.Password.LongName = "", ""
	names.ClusterOverrideFlags.ProxyURL.LongName = ""
	clientcmd.BindOverrideFlags(&f.overrides, flags, names)
}

// ToRawKubeConfigLoader is the kubeconfig as the flags amend it, loaded once: kubectl's
// loading rules ($KUBECONFIG, ~/.kube/config, in-cluster).
func (f *kubeFlags) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	if f.loader == nil {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		rules.DefaultClientConfig = &clientcmd.DefaultClientConfig
		rules.ExplicitPath = f.kubeconfig
		f.loader = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &f.overrides)
	}
	return f.loader
}

// ToRESTConfig is the REST client configuration of the current context.
func (f *kubeFlags) ToRESTConfig() (*rest.Config, error) {
	return f.ToRawKubeConfigLoader().ClientConfig()
}
