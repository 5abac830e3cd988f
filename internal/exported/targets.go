package exported

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/describe"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// engines answer which Secret a target's step Jobs connect with and what its server's my.cnf
// is; nothing here reaches a cluster.
var engines = describe.All()

// targetFiles are each target's my.cnf and client command lines, built from the run's spec by
// the operator's own builders (internal/specs, internal/client), as the operator built them when
// it ran the steps. by names the builder's version for the files' headers.
func targetFiles(run *v1.BenchmarkRun, sysbenchImage, by string) ([]described, []string) {
	image := specs.SysbenchImage(run, cmp.Or(sysbenchImage, specs.DefaultSysbenchImage))
	var out []described
	var notes []string
	for _, t := range run.Spec.Targets {
		dir := path.Join(DirTargets, t.Name)
		cnf, why, err := myCnf(run, t, by)
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("%s is not in the bundle: %v.", path.Join(dir, FileMyCnf), err))
		case cnf == "":
			notes = append(notes, fmt.Sprintf("Target %s has no %s: %s.", t.Name, FileMyCnf, why))
		default:
			out = append(out, described{File{Name: path.Join(dir, FileMyCnf), Data: []byte(cnf)},
				"the server configuration of target " + t.Name + ": " + why})
		}
		cmds, err := commands(run, t, image, sysbenchImage == "", by)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s is not in the bundle: %v.", path.Join(dir, FileCommands), err))
			continue
		}
		out = append(out, described{File{Name: path.Join(dir, FileCommands), Data: []byte(cmds)},
			"the client command line of every step of target " + t.Name + ", in the order they ran"})
	}
	return out, notes
}

// myCnf is target t's server configuration and what it is, "" and why when the operator wrote
// none (a server it does not run).
func myCnf(run *v1.BenchmarkRun, t v1.Target, by string) (string, string, error) {
	eng, ok := engines[t.EngineOrDefault()]
	if !ok || !eng.Facts().CreatesServer {
		return "", "its server is not the operator's (engine " + string(t.EngineOrDefault()) + "): its configuration is its owner's", nil
	}
	cnf, what, err := eng.ServerConfig(run, t)
	if err != nil {
		return "", "", err
	}
	head := fmt.Sprintf("# my.cnf of target %s of BenchmarkRun %s/%s, built from the run's spec by %s with the "+
		"operator's builders (internal/specs).\n", t.Name, run.Namespace, run.Name, by)
	return head + cnf, what, nil
}

// commands lists the client command line of each step of target t in the order the operator
// runs them (each step's first attempt: a retry runs the same command in a new Job).
// defaultImage: the sysbench image is the operator's default, which the operator's flag may have
// changed.
func commands(run *v1.BenchmarkRun, t v1.Target, image string, defaultImage bool, by string) (string, error) {
	eng, ok := engines[t.EngineOrDefault()]
	if !ok {
		return "", fmt.Errorf("engine %q is not one this plugin knows", t.EngineOrDefault())
	}
	secret := eng.ConnectionSecret(run, t)
	c := loadclient.For(run.Spec.Workload)
	var b strings.Builder
	fmt.Fprintf(&b, "# The client command line of each step of target %s of BenchmarkRun %s/%s, in the order the operator\n"+
		"# ran them (each step's first attempt: a retry runs the same command in a new Job), built from the run's\n"+
		"# spec by %s with the operator's builders (internal/specs, internal/client).\n", t.Name, run.Namespace, run.Name, by)
	fmt.Fprintf(&b, "# %s\n", c.Capabilities().CommandNote)
	var lastImage string
	var lastEnv []string
	for _, s := range specs.TargetSteps(run, t) {
		job, err := specs.StepJob(run, t, s, specs.Attempt{}, secret, image)
		if err != nil {
			return "", err
		}
		ct := job.Spec.Template.Spec.Containers[0]
		if ct.Image != lastImage {
			note := ""
			if ct.Image == image && defaultImage && run.Spec.SysbenchImage == "" {
				note = " (the operator's default sysbench image: spec.sysbenchImage is unset; an operator started with " +
					"--sysbench-image ran that image instead)"
			}
			fmt.Fprintf(&b, "\n# Image: %s%s\n", ct.Image, note)
			lastImage = ct.Image
		}
		if env := envLines(ct.Env); !slices.Equal(env, lastEnv) {
			b.WriteString("# Environment:\n")
			for _, e := range env {
				fmt.Fprintf(&b, "#   %s\n", e)
			}
			lastEnv = env
		}
		fmt.Fprintf(&b, "%s: %s %s\n", s.Name, c.Program(s.Load), strings.Join(ShellQuote(ct.Args), " "))
	}
	return b.String(), nil
}

// envLines are a container's environment variables, with where each value comes from.
func envLines(env []corev1.EnvVar) []string {
	out := make([]string, 0, len(env))
	for _, e := range env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			out = append(out, fmt.Sprintf("%s from Secret %s, key %s", e.Name, e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key))
		case e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil:
			out = append(out, fmt.Sprintf("%s from ConfigMap %s, key %s", e.Name, e.ValueFrom.ConfigMapKeyRef.Name, e.ValueFrom.ConfigMapKeyRef.Key))
		case e.ValueFrom != nil:
			out = append(out, e.Name+" from the pod")
		default:
			out = append(out, e.Name+"="+strings.Join(ShellQuote([]string{e.Value}), ""))
		}
	}
	return out
}

// ShellQuote quotes the arguments that need it for a shell, for reading (the Job passes them
// unparsed): the bundle's command lines and the plugin's dry-run print them so.
func ShellQuote(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\|&;<>*?`") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}
