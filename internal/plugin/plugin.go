// Package plugin is the kubectl plugin kubectl-mysqlbench: get, describe, compare, export, logs,
// plot, server and create for BenchmarkRuns, and history from the results database.
// cmd/kubectl-mysqlbench only calls NewCommand; everything else lives here so the commands run in
// tests against a real API server.
//
// The plugin reads what the operator wrote (a run's status and its results ConfigMap, or the files
// they were exported to: internal/exported) and computes nothing the operator computes
// differently: comparisons go through internal/compare, results.json through internal/results,
// object names and labels through internal/specs.
package plugin

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	client "github.com/mysqlbench/mysqlbench-operator/internal/kubeclient"
)

// Version is the plugin's release, set at build time from make's VERSION (make plugin
// VERSION=v0.1.0, make plugin-release VERSION=v0.1.0:
// -ldflags -X github.com/mysqlbench/mysqlbench-operator/internal/plugin.Version=v0.1.0).
var Version = "v0.0.0-dev"

// Scheme knows the kinds the plugin reads and plans (core, apps, batch and networking v1) and
// the operator's. Only those: client-go's scheme of every built-in group would link them all into
// the binary, most of its size (see package object); a kind missing here fails the command that
// reads it, and its tests with it.
var Scheme = runtime.NewScheme()

func init() {
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme,
		networkingv1.AddToScheme, v1.AddToScheme} {
		utilruntime.Must(add(Scheme))
	}
}

// PodLogs streams a container's log. The default reads it through the API server (pods/log);
// tests replace it, since envtest has no kubelet to serve logs.
type PodLogs interface {
	Stream(ctx context.Context, namespace, pod, container string, follow bool) (io.ReadCloser, error)
}

// Options configure the plugin's commands.
type Options struct {
	Streams genericiooptions.IOStreams
	// Logs replaces the API server's pods/log (tests); nil reads logs through client-go.
	Logs PodLogs
	// Now is the clock of the ages describe shows (tests); nil is time.Now.
	Now func() time.Time
}

// env is what a command needs at run time: the streams, the kubeconfig flags and, built on
// first use, the clients.
type env struct {
	genericiooptions.IOStreams
	flags     *kubeFlags
	logReader PodLogs
	clock     func() time.Time

	client client.WithWatch
}

// NewCommand is the root command, kubectl's own flags (-n, --context, --kubeconfig, ...)
// included.
func NewCommand(o Options) *cobra.Command {
	e := &env{IOStreams: o.Streams, flags: newKubeFlags(), logReader: o.Logs, clock: o.Now}
	root := &cobra.Command{
		Use:   "kubectl-mysqlbench",
		Short: "Read, compare, plot and plan mysqlbench BenchmarkRuns",
		Long: "kubectl mysqlbench shows what the mysqlbench operator measured: the progress and results of " +
			"BenchmarkRuns (get, describe), the comparison of two runs (compare), their results as CSV or JSON " +
			"(export), charts (plot), what the servers did at each step: counters, CPU and waits per thread count (server), " +
			"a step's sysbench output (logs), a cell over nights from the operator's results database (history), and the objects a run would create (create --dry-run=server). export --bundle " +
			"keeps everything a run left in files, and get, describe, compare, export, logs, plot, server and history read such " +
			"files with --from once the run is gone. Every command that prints objects or tables takes kubectl's -o " +
			"formats (json, yaml, jsonpath, go-template, custom-columns; name and wide where they apply) beside its own.",
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl mysqlbench"},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(o.Streams.In)
	root.SetOut(o.Streams.Out)
	root.SetErr(o.Streams.ErrOut)
	e.flags.AddFlags(root.PersistentFlags())
	addKlogFlags(root.PersistentFlags())
	root.AddCommand(
		newGetCommand(e),
		newDescribeCommand(e),
		newCompareCommand(e),
		newExportCommand(e),
		newLogsCommand(e),
		newPlotCommand(e),
		newServerCommand(e),
		newCreateCommand(e),
		newHistoryCommand(e),
		newVersionCommand(e),
	)
	registerCompletions(root, e)
	finishHelp(root)
	return root
}

// addKlogFlags adds klog's -v (--v) and --vmodule, as kubectl has them: -v=6 shows the API
// requests client-go makes, -v=8 their bodies. -v is never the version (that is a command).
func addKlogFlags(flags *pflag.FlagSet) {
	var klogFlags flag.FlagSet
	klog.InitFlags(&klogFlags)
	for _, name := range []string{"v", "vmodule"} {
		flags.AddGoFlag(klogFlags.Lookup(name)) // a one-letter Go flag gets its shorthand: -v and --v
	}
}

func newVersionCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the plugin's version",
		Example: "  kubectl mysqlbench version",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(e.Out, "kubectl-mysqlbench %s\n", Version)
			return err
		},
	}
}

// Execute runs the root command with args and prints an error the way kubectl does; it returns
// the process's exit code.
func Execute(ctx context.Context, o Options, args []string) int {
	cmd := NewCommand(o)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var code exitCode
	if errors.As(err, &code) {
		return int(code)
	}
	_, _ = fmt.Fprintln(o.Streams.ErrOut, "error:", err)
	return 1
}

// exitCode ends a command with that status and no message (compare --exit-code).
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// now is the time, from the test's clock when it has one.
func (e *env) now() time.Time {
	if e.clock != nil {
		return e.clock()
	}
	return time.Now()
}

// clients builds the API clients from the kubeconfig flags, once.
func (e *env) clients() (client.WithWatch, error) {
	if e.client != nil {
		return e.client, nil
	}
	cfg, err := e.flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("read the kubeconfig: %w", err)
	}
	c, err := client.New(cfg, Scheme)
	if err != nil {
		return nil, fmt.Errorf("connect to the API server %s: %w", cfg.Host, err)
	}
	e.client = c
	return c, nil
}

// namespace is the namespace of -n, else the kubeconfig context's, else "default"; explicit
// says whether -n or the context named it.
func (e *env) namespace() (string, bool, error) {
	ns, explicit, err := e.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", false, fmt.Errorf("read the namespace from the kubeconfig: %w", err)
	}
	return ns, explicit, nil
}

// podLogs is the log reader: the test's, else the API server's pods/log.
func (e *env) podLogs() (PodLogs, error) {
	if e.logReader != nil {
		return e.logReader, nil
	}
	c, err := e.clients()
	if err != nil {
		return nil, err
	}
	rc, ok := c.(*client.REST)
	if !ok {
		return nil, fmt.Errorf("pods/log: the client %T does not read logs", c)
	}
	return restLogs{rc}, nil
}

// restLogs reads logs through pods/log, as kubectl logs does, over the commands' REST client
// (client-go's typed core client would import its scheme of every API group).
type restLogs struct{ c *client.REST }

func (r restLogs) Stream(ctx context.Context, namespace, pod, container string, follow bool) (io.ReadCloser, error) {
	return r.c.PodLogs(ctx, namespace, pod, container, follow)
}
