package plugin

import (
	"context"
	"encoding/json"
	"flag"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

func TestGetOutputFormats(t *testing.T) {
	needCluster(t)
	out, _, err := kubectlMysqlbench(t, "get", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var list v1.BenchmarkRunList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("-o json: %v", err)
	}
	var names []string
	for _, r := range list.Items {
		names = append(names, r.Name)
		if r.Kind != "BenchmarkRun" || r.APIVersion != v1.GroupVersion.String() || r.Status.Phase == "" {
			t.Errorf("-o json: item %s is %s %s with phase %q", r.Name, r.APIVersion, r.Kind, r.Status.Phase)
		}
	}
	// Other tests add runs to the namespace: look for those every test reads.
	if list.Kind != "BenchmarkRunList" || !containsAll(names, "base", "cand", "pk") || slices.Contains(names, "stuck") {
		t.Errorf("-o json: %s of %v, want BenchmarkRunList of base cand pk and no stuck", list.Kind, names)
	}

	out, _, err = kubectlMysqlbench(t, "get", "pk", "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	var run v1.BenchmarkRun
	if err := yaml.Unmarshal([]byte(out), &run); err != nil || run.Name != "pk" || run.Kind != "BenchmarkRun" || len(run.Status.Targets) != 2 {
		t.Errorf("get pk -o yaml: %v, %s %s with %d targets", err, run.Kind, run.Name, len(run.Status.Targets))
	}
	if strings.Contains(out, "managedFields") {
		t.Errorf("get pk -o yaml prints managedFields without --show-managed-fields")
	}

	out, _, err = kubectlMysqlbench(t, "get", "-o", "name")
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(out, "\n"); !containsAll(lines, "benchmarkrun.mysqlbench.io/base", "benchmarkrun.mysqlbench.io/pk") {
		t.Errorf("-o name: %q, want a line benchmarkrun.mysqlbench.io/NAME per run", out)
	}

	out, _, err = kubectlMysqlbench(t, "get", "-o", "jsonpath={.items[*].metadata.name}")
	if err != nil || !containsAll(strings.Fields(out), "base", "cand", "pk") {
		t.Errorf("-o jsonpath: %q, %v", out, err)
	}

	out, _, err = kubectlMysqlbench(t, "get", "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(fields(strings.Split(out, "\n")[0]), " "); got != "NAME PHASE TARGETS CURRENT VERDICT SCHEDULE AGE" {
		t.Errorf("-o wide header %q", got)
	}
	if lineStarting(out, "pk", "Succeeded", "2/2", "-", "-", "-") == "" {
		t.Errorf("-o wide: no line pk Succeeded 2/2 - - -")
	}
	out, _, err = kubectlMysqlbench(t, "get", "pk", "-o", "wide")
	if err != nil || lineStarting(out, "NAME", "PHASE", "TARGETS", "CURRENT", "VERDICT") == "" || !strings.Contains(out, "by threads:") {
		t.Errorf("get pk -o wide: %v, no wide progress line or no QPS table", err)
	}

	_, _, err = kubectlMysqlbench(t, "get", "-o", "csv")
	checkError(t, "-o csv", err, `"csv"`, "json", "yaml", "name", "wide")
	_, _, err = kubectlMysqlbench(t, "get", "-w", "-o", "json")
	checkError(t, "-w -o json", err, "-w prints a table line per change")
}

func TestDescribeOutputPrintsTheRun(t *testing.T) {
	needCluster(t)
	out, _, err := kubectlMysqlbench(t, "describe", "pk", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var run v1.BenchmarkRun
	if err := json.Unmarshal([]byte(out), &run); err != nil || run.Name != "pk" || run.Kind != "BenchmarkRun" || len(run.Status.Conditions) == 0 {
		t.Errorf("describe pk -o json: %v, %s %s with %d conditions", err, run.Kind, run.Name, len(run.Status.Conditions))
	}
	out, _, err = kubectlMysqlbench(t, "describe", "pk", "-o", "name")
	if err != nil || out != "benchmarkrun.mysqlbench.io/pk\n" {
		t.Errorf("describe pk -o name: %q, %v", out, err)
	}
	// From files, the run the files hold.
	bundle := filepath.Join(t.TempDir(), "pk")
	if _, _, err := kubectlMysqlbench(t, "export", "pk", "--bundle", bundle); err != nil {
		t.Fatal(err)
	}
	out, _, err = kubectlMysqlbench(t, "describe", "--from", bundle, "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	run = v1.BenchmarkRun{}
	if err := yaml.Unmarshal([]byte(out), &run); err != nil || run.Name != "pk" || run.Kind != "BenchmarkRun" || len(run.Status.Conditions) == 0 {
		t.Errorf("describe --from BUNDLE -o yaml: %v, %s %s with %d conditions", err, run.Kind, run.Name, len(run.Status.Conditions))
	}
	_, _, err = kubectlMysqlbench(t, "describe", "pk", "-o", "wide")
	checkError(t, "describe -o wide", err, `"wide"`, "json", "yaml")
}

func TestGetSelector(t *testing.T) {
	needCluster(t)
	ctx := context.Background()
	const label = "test.mysqlbench.io/pick"
	for _, name := range []string{"base", "cand"} {
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"`+label+`":"yes"}}}`))
		run := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: nsBench, Name: name}}
		if err := k8s.Patch(ctx, run, patch); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = k8s.Patch(ctx, run, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"`+label+`":null}}}`)))
		})
	}
	out, _, err := kubectlMysqlbench(t, "get", "-l", label+"=yes")
	if err != nil {
		t.Fatal(err)
	}
	if lineStarting(out, "base") == "" || lineStarting(out, "cand") == "" || lineStarting(out, "pk") != "" {
		t.Errorf("-l %s=yes lists other runs than base and cand:\n%s", label, out)
	}
	out, _, err = kubectlMysqlbench(t, "get", "--selector", label+"!=yes", "-o", "name")
	if lines := strings.Split(out, "\n"); err != nil || !slices.Contains(lines, "benchmarkrun.mysqlbench.io/pk") ||
		slices.Contains(lines, "benchmarkrun.mysqlbench.io/base") {
		t.Errorf("--selector %s!=yes -o name: %q, %v", label, out, err)
	}
	_, errOut, err := kubectlMysqlbench(t, "get", "-l", label+"=no")
	if err != nil || !strings.Contains(errOut, "No BenchmarkRuns matching -l "+label+"=no found in namespace bench") {
		t.Errorf("an empty selection: %v, %q", err, errOut)
	}
	_, _, err = kubectlMysqlbench(t, "get", "-l", "a in (", "-o", "name")
	checkError(t, "a malformed selector", err, `-l "a in ("`)
	_, _, err = kubectlMysqlbench(t, "get", "pk", "-l", label+"=yes")
	checkError(t, "RUN and -l", err, "either RUN or -l")
}

// complete runs cobra's hidden __complete command, as the shell scripts do at a tab, and
// returns the candidates without their descriptions, and the directive.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	out, _, err := kubectlMysqlbench(t, append([]string{cobra.ShellCompRequestCmd}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var names []string
	for _, l := range lines[:len(lines)-1] {
		if strings.HasPrefix(l, "_activeHelp_") {
			continue
		}
		names = append(names, strings.SplitN(l, "\t", 2)[0])
	}
	return names, lines[len(lines)-1]
}

func TestCompletionFromTheCluster(t *testing.T) {
	needCluster(t)
	sched := &v1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: nsBench, Name: "nightly"},
		Spec: v1.BenchmarkScheduleSpec{Schedule: "0 2 * * *", Suspend: ptr.To(true), Template: v1.BenchmarkRunTemplate{
			Spec: newRun(nsBench, "", 1, 1, 2).Spec,
		}},
	}
	sched.Spec.Template.Spec.Targets = append(sched.Spec.Template.Spec.Targets, v1.Target{Name: "mysql84", Image: "mysql:8.4"})
	if err := k8s.Create(context.Background(), sched); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), sched) })

	noFiles := ":" + "4" // cobra.ShellCompDirectiveNoFileComp
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"get", "b"}, []string{"base"}},
		{[]string{"describe", "c"}, []string{"cand"}},
		{[]string{"export", "pk", ""}, nil},
		{[]string{"compare", "base", "b"}, nil}, // each run once
		{[]string{"compare", "base", "c"}, []string{"cand"}},
		{[]string{"plot", "base", "cand", "p"}, []string{"pk"}},
		{[]string{"server", "p"}, []string{"pk"}},
		{[]string{"logs", "pk", ""}, []string{"mariadb", "mariadb-psoff"}},
		{[]string{"logs", "pk", "mariadb", ""}, []string{"1", "2", "4", "8", "probe", "prepare", "warmup", "cleanup"}},
		{[]string{"server", "pk", "--target", ""}, []string{"mariadb", "mariadb-psoff"}},
		{[]string{"compare", "base", "cand", "--target", "mariadb-"}, []string{"mariadb-psoff"}},
		{[]string{"history", ""}, []string{"nightly"}},
		{[]string{"history", "--target", ""}, []string{"mariadb", "mariadb-psoff", "mysql84"}},
		{[]string{"get", "-o", ""}, []string{"wide", "json", "yaml", "name", "jsonpath", "jsonpath-as-json", "jsonpath-file",
			"go-template", "go-template-file", "template", "templatefile", "custom-columns", "custom-columns-file"}},
		{[]string{"plot", "-o", ""}, []string{"png", "svg"}},
		{[]string{"create", "-f", "run.yaml", "--dry-run="}, []string{"none", "server", "client"}},
		{[]string{"-n", nsStuck, "get", "st"}, []string{"stuck"}},
	} {
		got, directive := complete(t, c.args...)
		if !slices.Equal(got, c.want) || directive != noFiles {
			t.Errorf("%s: %q %s, want %q %s", strings.Join(c.args, " "), got, directive, c.want, noFiles)
		}
	}
	// The completion command writes the scripts.
	out, _, err := kubectlMysqlbench(t, "completion", "bash")
	if err != nil || !strings.Contains(out, "__complete") {
		t.Errorf("completion bash: %v", err)
	}
}

func TestVersionIsACommandAndVIsVerbosity(t *testing.T) {
	out, _, err := runPlugin(context.Background(), t, "version")
	if err != nil || out != "kubectl-mysqlbench "+Version+"\n" {
		t.Errorf("version: %q, %v", out, err)
	}
	_, _, err = runPlugin(context.Background(), t, "--version")
	checkError(t, "--version", err, "unknown flag: --version")

	var klogFlags flag.FlagSet
	klog.InitFlags(&klogFlags)
	t.Cleanup(func() { _ = klogFlags.Set("v", "0") })
	for _, c := range []struct {
		args []string
		want klog.Level
	}{
		{[]string{"-v", "6", "version"}, 6},
		{[]string{"--v=7", "version"}, 7},
		{[]string{"version", "-v=8"}, 8},
	} {
		if _, _, err := runPlugin(context.Background(), t, c.args...); err != nil {
			t.Fatal(err)
		}
		if !klog.V(c.want).Enabled() || klog.V(c.want+1).Enabled() {
			t.Errorf("%s: klog verbosity is not %d", strings.Join(c.args, " "), c.want)
		}
	}
}

func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}
