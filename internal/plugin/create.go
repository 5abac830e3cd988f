package plugin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/enginefacts"
	"github.com/mysqlbench/mysqlbench-operator/internal/exported"
	client "github.com/mysqlbench/mysqlbench-operator/internal/kubeclient"
	"github.com/mysqlbench/mysqlbench-operator/internal/object"
	"github.com/mysqlbench/mysqlbench-operator/internal/plan"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

type createOptions struct {
	file          string
	dryRun        string
	local         bool
	output        string
	sysbenchImage string
}

func newCreateCommand(e *env) *cobra.Command {
	o := &createOptions{}
	cmd := &cobra.Command{
		Use:   "create -f RUN.yaml [--dry-run=server|client]",
		Short: "Create a run, or print what the operator would create for it",
		Long: "With --dry-run=server or client, prints the objects the operator would create for the run, computed by its own builders " +
			"(internal/plan): the reporter ConfigMap, each target's server (Secret with placeholder passwords, my.cnf " +
			"ConfigMap, Service, NetworkPolicy, StatefulSet, or the Percona resource) and the sysbench Job of every step " +
			"with its command line and placement; a summary goes to stderr. With --dry-run=server the run is first sent to " +
			"the API server as a dry-run create (nothing is stored), so the CRD's validation rules and defaults apply, a " +
			"refusal reads as the server words it, and the run planned is the one the server returned; with " +
			"--dry-run=client the file alone is planned (strictly decoded: unknown fields are errors), without any " +
			"cluster. A BenchmarkSchedule plans the run its template makes.\n\n" +
			"Without --dry-run (or with --dry-run=none) the run (or schedule) is created, as kubectl create would: the same " +
			"validation, and the operator starts it. Use kubectl apply instead when the file is managed declaratively (GitOps).",
		Example: "  kubectl mysqlbench create -f run.yaml --dry-run=server\n" +
			"  kubectl mysqlbench create -f run.yaml --dry-run=client -o json\n" +
			"  kubectl mysqlbench create -f run.yaml",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.create(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.file, "filename", "f", "", "The BenchmarkRun (or BenchmarkSchedule) manifest; - reads stdin.")
	cmd.Flags().StringVar(&o.dryRun, "dry-run", dryRunNone, `Must be "none", "server", or "client". server: the API server `+
		`validates and defaults the run without storing it, and the objects the operator would create for it are printed; `+
		`client: the same from the file alone, without contacting a cluster.`)
	// As kubectl: a bare --dry-run is refused, naming the values.
	cmd.Flags().Lookup("dry-run").NoOptDefVal = dryRunBare
	_ = cmd.RegisterFlagCompletionFunc("dry-run", cobra.FixedCompletions([]string{dryRunNone, dryRunServer, dryRunClient}, cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().BoolVar(&o.local, "local", false, "The same as --dry-run=client.")
	_ = cmd.Flags().MarkDeprecated("local", "use --dry-run=client")
	cmd.Flags().StringVarP(&o.output, "output", "o", "yaml", "With --dry-run: yaml (a stream of documents) or json (a List).")
	cmd.Flags().StringVar(&o.sysbenchImage, "sysbench-image", "",
		"The operator's --sysbench-image, for runs whose spec names none (default: the operator's default, "+specs.DefaultSysbenchImage+").")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

// manifest is one document of the file: a BenchmarkRun or a BenchmarkSchedule.
type manifest struct {
	data []byte
	kind string
	name string
}

// The values of --dry-run, spelled as kubectl spells them.
const (
	dryRunNone   = "none"
	dryRunServer = "server"
	dryRunClient = "client"
	dryRunBare   = "unchanged" // --dry-run without a value
)

// dryRunStrategy checks --dry-run (and the deprecated --local, which means client).
func (o *createOptions) dryRunStrategy() (string, error) {
	switch o.dryRun {
	case dryRunNone, dryRunServer, dryRunClient:
	case dryRunBare:
		return "", errors.New(`--dry-run needs a value, as kubectl's does: --dry-run=server (the API server checks the run), ` +
			`--dry-run=client (the file alone, no cluster) or --dry-run=none`)
	default:
		return "", fmt.Errorf(`invalid --dry-run value %q: must be "none", "server", or "client"`, o.dryRun)
	}
	if o.local {
		if o.dryRun == dryRunServer {
			return "", errors.New("--local plans without a cluster: it contradicts --dry-run=server")
		}
		return dryRunClient, nil
	}
	return o.dryRun, nil
}

func (e *env) create(ctx context.Context, o *createOptions) error {
	strategy, err := o.dryRunStrategy()
	if err != nil {
		return err
	}
	dryRun := strategy != dryRunNone
	if o.output != "yaml" && o.output != "json" {
		return fmt.Errorf("unknown output format %q: use -o yaml or -o json", o.output)
	}
	docs, err := readManifests(e.In, o.file)
	if err != nil {
		return err
	}
	var all []object.Object
	for _, m := range docs {
		var run *v1.BenchmarkRun
		var how string
		if strategy == dryRunClient {
			run, how, err = e.decodeLocal(m)
		} else {
			run, how, err = e.sendToServer(ctx, m, dryRun)
		}
		if err != nil {
			return err
		}
		if run == nil {
			continue // created
		}
		objs, err := plan.Objects(run, plan.Options{SysbenchImage: o.sysbenchImage})
		if err != nil {
			return err
		}
		summarize(e.ErrOut, run, objs, how)
		all = append(all, objs...)
	}
	if !dryRun {
		return nil
	}
	return printObjects(e.Out, all, o.output)
}

// readManifests splits the file into its documents; each must be a BenchmarkRun or a
// BenchmarkSchedule of this API.
func readManifests(stdin io.Reader, path string) ([]manifest, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []manifest
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i, err)
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, fmt.Errorf("%s: document %d is not YAML: %w", path, i, err)
		}
		if head.APIVersion == "" && head.Kind == "" {
			continue // empty document or comments only
		}
		if head.APIVersion != v1.GroupVersion.String() || (head.Kind != "BenchmarkRun" && head.Kind != "BenchmarkSchedule") {
			return nil, fmt.Errorf("%s: document %d is %s %s: create takes BenchmarkRuns and BenchmarkSchedules of %s",
				path, i, head.APIVersion, head.Kind, v1.GroupVersion)
		}
		out = append(out, manifest{data: doc, kind: head.Kind, name: head.Metadata.Name})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no BenchmarkRun or BenchmarkSchedule", path)
	}
	return out, nil
}

// strictDecoder refuses unknown and duplicate fields, naming them with their path
// ("spec.ladder.treads"), as the API server's strict field validation does.
var strictDecoder = serializer.NewCodecFactory(Scheme, serializer.EnableStrict).UniversalDeserializer()

// decodeLocal decodes the manifest strictly and makes the run to plan, without a cluster.
func (e *env) decodeLocal(m manifest) (*v1.BenchmarkRun, string, error) {
	obj, _, err := strictDecoder.Decode(m.data, nil, nil)
	if err != nil {
		return nil, "", fmt.Errorf("%s %s: %w", m.kind, m.name, err)
	}
	ns, err := e.manifestNamespace(obj.(object.Object))
	if err != nil {
		return nil, "", err
	}
	how := "--dry-run=client: planned from the file alone; the API server's validation rules and defaults were not applied " +
		"(--dry-run=server has the API server check the run first)"
	run, how2 := runToPlan(obj, time.Now())
	run.Namespace = ns
	return run, strings.TrimSpace(how + "\n" + how2), nil
}

// sendToServer creates the manifest on the API server, as a server-side dry run or for real. A
// dry run returns the run as the server would store it (validated, defaulted) to plan; a real
// create returns nil and says what was created.
func (e *env) sendToServer(ctx context.Context, m manifest, dryRun bool) (*v1.BenchmarkRun, string, error) {
	c, err := e.clients()
	if err != nil {
		return nil, "", err
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(m.data, &u.Object); err != nil {
		return nil, "", fmt.Errorf("%s %s: %w", m.kind, m.name, err)
	}
	ns, err := e.manifestNamespace(u)
	if err != nil {
		return nil, "", err
	}
	u.SetNamespace(ns)
	opts := []client.CreateOption{client.FieldValidation("Strict")}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	if err := c.Create(ctx, u, opts...); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, "", fmt.Errorf("%s %s already exists in namespace %s (%w): a run measures one fixed spec; "+
				"delete it first or choose another name", strings.ToLower(m.kind), m.name, ns, err)
		}
		return nil, "", fmt.Errorf("the API server refused %s %s: %w", m.kind, m.name, err)
	}
	if !dryRun {
		_, _ = fmt.Fprintf(e.Out, "%s.%s/%s created\n", strings.ToLower(m.kind), v1.GroupVersion.Group, u.GetName())
		if m.kind == "BenchmarkRun" {
			_, _ = fmt.Fprintf(e.ErrOut, "Follow it with `kubectl mysqlbench get %s -n %s -w`.\n", u.GetName(), ns)
		}
		return nil, "", nil
	}
	obj, err := Scheme.New(u.GroupVersionKind())
	if err != nil {
		return nil, "", err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return nil, "", fmt.Errorf("read back %s %s: %w", m.kind, m.name, err)
	}
	how := "checked by the API server (--dry-run=server: the CRD's validation rules and defaults applied)"
	run, how2 := runToPlan(obj, time.Now())
	return run, strings.TrimSpace(how + "\n" + how2), nil
}

// runToPlan is the run of a BenchmarkRun, or the run a BenchmarkSchedule's template makes next.
// The run has no UID: it does not exist, so its objects get no owner reference to it.
func runToPlan(obj runtime.Object, now time.Time) (*v1.BenchmarkRun, string) {
	switch o := obj.(type) {
	case *v1.BenchmarkRun:
		run := o.DeepCopy()
		run.UID, run.ResourceVersion, run.CreationTimestamp = "", "", metav1.Time{}
		return run, ""
	case *v1.BenchmarkSchedule:
		at := now
		note := fmt.Sprintf("BenchmarkSchedule %s: planned the run its template makes, named as a run due now", o.Name)
		if sched, _, err := v1.ParseSchedule(o.Spec); err == nil {
			if next := sched.Next(now); !next.IsZero() {
				at = next
				note = fmt.Sprintf("BenchmarkSchedule %s: planned its next run, due %s", o.Name, at.UTC().Format(time.RFC3339))
			}
		}
		run := &v1.BenchmarkRun{Spec: *o.Spec.Template.Spec.DeepCopy()}
		run.Name, run.Namespace = v1.RunName(o.Name, at), o.Namespace
		run.Labels = o.Spec.Template.Metadata.Labels
		return run, note
	}
	return nil, ""
}

// manifestNamespace is the object's namespace, else -n's (or the kubeconfig context's); an
// object naming another namespace than -n is refused, as kubectl does.
func (e *env) manifestNamespace(obj object.Object) (string, error) {
	ns, explicit, err := e.namespace()
	if err != nil {
		return "", err
	}
	if own := obj.GetNamespace(); own != "" {
		if explicit && own != ns {
			return "", fmt.Errorf("the namespace of %s %q in the file (%s) does not match -n %s: drop one of them",
				obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), own, ns)
		}
		return own, nil
	}
	return ns, nil
}

// printObjects writes the objects as a YAML stream or a JSON List.
func printObjects(w io.Writer, objs []object.Object, format string) error {
	if format == "json" {
		items := make([]json.RawMessage, 0, len(objs))
		for _, o := range objs {
			b, err := json.Marshal(o)
			if err != nil {
				return fmt.Errorf("encode %s: %w", o.GetName(), err)
			}
			items = append(items, b)
		}
		b, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", "    ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	for _, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return fmt.Errorf("encode %s: %w", o.GetName(), err)
		}
		if _, err := fmt.Fprintf(w, "---\n%s", b); err != nil {
			return err
		}
	}
	return nil
}

// summarize tells a person what the plan holds: the servers, the Jobs, each ladder step's
// sysbench command and where everything runs.
func summarize(w io.Writer, run *v1.BenchmarkRun, objs []object.Object, how string) {
	s := run.Spec
	threads := make([]string, 0, len(s.Ladder.Threads))
	for _, t := range s.Ladder.Threads {
		threads = append(threads, fmt.Sprint(t))
	}
	_, _ = fmt.Fprintf(w, "BenchmarkRun %s in namespace %s: %d target(s); threads %s, %s per step, %d repetition(s); %d objects.\n",
		run.Name, run.Namespace, len(s.Targets), strings.Join(threads, " "), s.Ladder.StepDurationOrDefault(), s.RepetitionsOrDefault(), len(objs))
	for _, line := range strings.Split(how, "\n") {
		_, _ = fmt.Fprintf(w, "  %s\n", line)
	}

	_, _ = fmt.Fprintln(w, "Servers:")
	for _, t := range s.Targets {
		var made []string
		for _, o := range objs {
			if o.GetLabels()[specs.LabelTarget] == t.Name && o.GetObjectKind().GroupVersionKind().Kind != "Job" {
				made = append(made, o.GetObjectKind().GroupVersionKind().Kind+" "+o.GetName())
			}
		}
		what := string(t.EngineOrDefault())
		if t.Image != "" {
			what += ", image " + t.Image
		}
		if !enginefacts.Of(t.Engine).CreatesServer && t.SecretRef != nil {
			what += ", connection from Secret " + t.SecretRef.Name
		}
		if len(made) == 0 {
			made = []string{"nothing (the server exists already)"}
		}
		_, _ = fmt.Fprintf(w, "  %s: %s: %s\n", t.Name, what, strings.Join(made, ", "))
	}

	jobs := map[string][]*batchv1.Job{}
	count := 0
	for _, o := range objs {
		if j, ok := o.(*batchv1.Job); ok {
			t := j.Labels[specs.LabelTarget]
			jobs[t] = append(jobs[t], j)
			count++
		}
	}
	_, _ = fmt.Fprintf(w, "Jobs: %d, one per step and target, run one at a time (the first attempt of each; a failed step is retried up to %d time(s) in a new Job).\n",
		count, s.RetryLimit())

	// The ladder's commands; targets differ only in the server they reach (from their Secret).
	program := loadclient.For(s.Workload).Program(load.Step{Phase: load.PhaseRun})
	var first []string
	same := true
	for i, t := range s.Targets {
		lines := ladderCommands(jobs[t.Name], program, s.OrderedWorkloads())
		if i == 0 {
			first = lines
		} else if !slices.Equal(lines, first) {
			same = false
		}
	}
	if same && len(s.Targets) > 0 {
		_, _ = fmt.Fprintln(w, "Ladder steps of every target, each against its own server, in measuring order:")
		for _, l := range first {
			_, _ = fmt.Fprintf(w, "  %s\n", l)
		}
	} else {
		for _, t := range s.Targets {
			_, _ = fmt.Fprintf(w, "Ladder steps of %s, in measuring order:\n", t.Name)
			for _, l := range ladderCommands(jobs[t.Name], program, s.OrderedWorkloads()) {
				_, _ = fmt.Fprintf(w, "  %s\n", l)
			}
		}
	}
	_, _ = fmt.Fprintln(w, "  "+loadclient.For(s.Workload).Capabilities().CommandNote)

	_, _ = fmt.Fprintln(w, "Placement:")
	servers, clients := map[string]bool{}, map[string]bool{}
	for _, o := range objs {
		var spec *corev1.PodSpec
		var into map[string]bool
		switch x := o.(type) {
		case *batchv1.Job:
			spec, into = &x.Spec.Template.Spec, clients
		case *appsv1.StatefulSet:
			spec, into = &x.Spec.Template.Spec, servers
		}
		if spec != nil {
			into[placement(spec)] = true
		}
	}
	for _, p := range []struct {
		who string
		set map[string]bool
	}{{"servers", servers}, {"sysbench", clients}} {
		keys := make([]string, 0, len(p.set))
		for k := range p.set {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			_, _ = fmt.Fprintf(w, "  %s: %s\n", p.who, k)
		}
	}
	if slices.ContainsFunc(s.Targets, func(t v1.Target) bool {
		return enginefacts.Of(t.Engine).ForeignPods
	}) {
		_, _ = fmt.Fprintln(w, "  Percona targets: their pods are placed by the Percona operator from the resource's spec.")
	}
}

// ladderCommands are the ladder steps' command lines of program (the client's, for reading):
// when the steps differ only in their thread count (--threads=, or mysqlslap's --concurrency=),
// one line with N for it and then each step's N; else each distinct command with the steps that
// run it.
func ladderCommands(jobs []*batchv1.Job, program string, workloads []v1.RunWorkload) []string {
	if len(workloads) <= 1 || workloads[0].Name == "" {
		return stepCommands(jobs, program, "")
	}
	// A suite: each workload's steps under its name, in measuring order.
	var out []string
	for _, w := range workloads {
		lines := stepCommands(jobs, program, w.Name)
		if len(lines) == 0 {
			continue
		}
		what := string(w.Script)
		if w.CustomScript != nil {
			what = "custom script " + w.CustomScript.Name + "/" + w.CustomScript.Key
		}
		if what == "" {
			what = string(w.ClientOrDefault())
		}
		out = append(out, fmt.Sprintf("workload %s (%s):", w.Name, what))
		for _, l := range lines {
			out = append(out, "  "+l)
		}
	}
	return out
}

// stepCommands are the commands of the ladder steps among jobs (of workload, named
// "<workload>-s01", in a suite; "" for a run of one workload): one command with N per step when
// only the thread count differs, else a command per step.
func stepCommands(jobs []*batchv1.Job, program, workload string) []string {
	type step struct{ name, threads, flag, command string }
	var steps []step
	for _, j := range jobs {
		name := j.Labels[specs.LabelStep]
		rung := name
		if workload != "" {
			var ok bool
			if rung, ok = strings.CutPrefix(name, workload+"-"); !ok {
				continue
			}
		}
		if !ladderLabel.MatchString(rung) || len(j.Spec.Template.Spec.Containers) == 0 {
			continue
		}
		args := exported.ShellQuote(j.Spec.Template.Spec.Containers[0].Args)
		st := step{name: name}
		for i, a := range args {
			for _, flag := range []string{"--threads=", "--concurrency="} {
				if v, ok := strings.CutPrefix(a, flag); ok {
					st.threads, st.flag, args[i] = v, flag, flag+"N"
				}
			}
		}
		st.command = program + " " + strings.Join(args, " ")
		steps = append(steps, st)
	}
	if len(steps) == 0 {
		return nil
	}
	if !slices.ContainsFunc(steps, func(x step) bool { return x.command != steps[0].command }) {
		per := make([]string, 0, len(steps))
		for _, x := range steps {
			per = append(per, x.name+" "+x.threads)
		}
		return []string{steps[0].command, "N per step: " + strings.Join(per, ", ")}
	}
	var out []string
	for _, x := range steps {
		c := x.command
		if x.flag != "" {
			c = strings.Replace(c, x.flag+"N", x.flag+x.threads, 1)
		}
		out = append(out, fmt.Sprintf("%s: %s", x.name, c))
	}
	return out
}

// placement describes where a pod may run: node selector, tolerations and (anti-)affinity.
func placement(spec *corev1.PodSpec) string {
	var parts []string
	if len(spec.NodeSelector) == 0 {
		parts = append(parts, "any node (no nodeSelector)")
	} else {
		keys := make([]string, 0, len(spec.NodeSelector))
		for k, v := range spec.NodeSelector {
			keys = append(keys, k+"="+v)
		}
		slices.Sort(keys)
		parts = append(parts, "nodeSelector "+strings.Join(keys, ","))
	}
	if len(spec.Tolerations) > 0 {
		var ts []string
		for _, t := range spec.Tolerations {
			s := t.Key
			if t.Operator == corev1.TolerationOpExists {
				s += " (exists)"
			} else if t.Value != "" {
				s += "=" + t.Value
			}
			if t.Effect != "" {
				s += ":" + string(t.Effect)
			}
			ts = append(ts, s)
		}
		parts = append(parts, "tolerates "+strings.Join(ts, ", "))
	}
	if a := spec.Affinity; a != nil {
		if a.PodAntiAffinity != nil {
			for _, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
				where := "of its namespace"
				if t.NamespaceSelector != nil && len(t.NamespaceSelector.MatchLabels) == 0 && len(t.NamespaceSelector.MatchExpressions) == 0 {
					where = "of any namespace"
				}
				parts = append(parts, fmt.Sprintf("never beside pods %s %s (per %s)", metav1.FormatLabelSelector(t.LabelSelector), where, t.TopologyKey))
			}
		}
		if a.NodeAffinity != nil || (a.PodAffinity != nil) ||
			(a.PodAntiAffinity != nil && len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0) {
			parts = append(parts, "and the spec's own affinity")
		}
	}
	return strings.Join(parts, "; ")
}
