package plugin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/plan"
)

// yamlObjects reads a YAML stream of objects.
func yamlObjects(t *testing.T, out string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, doc := range strings.Split(out, "---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("not YAML: %v\n%s", err, doc)
		}
		if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
			t.Errorf("an object without apiVersion, kind or name:\n%s", doc)
		}
		objs = append(objs, u)
	}
	return objs
}

var objectCount = regexp.MustCompile(`; (\d+) objects\.`)

// Every sample plans without a cluster: the objects on stdout, the summary on stderr. --server
// points nowhere, so any contact with a cluster would fail the command.
func TestCreateDryRunLocalPlansEverySample(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	planned := 0
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		out, errOut, err := runPlugin(context.Background(), t, "--server", "https://127.0.0.1:1", "-n", "samples",
			"create", "-f", f, "--dry-run=client")
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		planned++
		objs := yamlObjects(t, out)
		m := objectCount.FindStringSubmatch(errOut)
		if m == nil || m[1] != strconv.Itoa(len(objs)) {
			t.Errorf("%s: %d objects printed, the summary says %v", f, len(objs), m)
		}
		jobs := 0
		for _, o := range objs {
			if o.GetNamespace() != "samples" {
				t.Errorf("%s: %s %s in namespace %q, want -n's", f, o.GetKind(), o.GetName(), o.GetNamespace())
			}
			if o.GetKind() == "Job" {
				jobs++
				args, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
				if len(args) != 1 {
					t.Errorf("%s: Job %s has %d containers", f, o.GetName(), len(args))
				}
			}
		}
		if jobs == 0 || objs[0].GetKind() != "ConfigMap" {
			t.Errorf("%s: %d Jobs, first object %s", f, jobs, objs[0].GetKind())
		}
		wants := []string{"--dry-run=client: planned from the file alone", "Servers:", "Jobs: " + strconv.Itoa(jobs),
			"sysbench /opt/mysqlbench/reporter.lua", "--threads=N", "Placement:"}
		switch {
		case strings.Contains(f, "mysqlslap"):
			wants[3], wants[4] = "mysqlslap --host=$(MYSQLBENCH_HOST)", "--concurrency=N"
		case strings.Contains(f, "tpcc"):
			wants[3] = "go-tpc --phase=run --warehouses=10"
		case strings.Contains(f, "suite"):
			// A suite's steps under their workload, in measuring order.
			wants = append(wants, "workload point-select (oltp_point_select):\n    sysbench /opt/mysqlbench/reporter.lua",
				"N per step: point-select-s01 1, point-select-s02 2")
		}
		for _, want := range wants {
			if !strings.Contains(errOut, want) {
				t.Errorf("%s: the summary lacks %q", f, want)
			}
		}
		// What a BenchmarkRun file plans is exactly internal/plan's answer.
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		run := &v1.BenchmarkRun{}
		if err := yaml.UnmarshalStrict(data, run); err == nil && run.Kind == "BenchmarkRun" {
			run.Namespace = "samples"
			want, err := plan.Objects(run, plan.Options{})
			if err != nil || len(want) != len(objs) {
				t.Errorf("%s: %d objects, plan.Objects gives %d (%v)", f, len(objs), len(want), err)
			}
		}
	}
	if planned < 5 {
		t.Errorf("planned %d samples, want every one (at least 5)", planned)
	}
}

func TestCreateLocalDecodesStrictly(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	path := writeRunFile(t, "treads: [1, 2]")
	_, _, err := runPlugin(context.Background(), t, "--server", "https://127.0.0.1:1", "create", "-f", path, "--dry-run=client")
	checkError(t, "an unknown field", err, `unknown field "spec.ladder.treads"`)
	// The deprecated --local is --dry-run=client.
	_, _, err = runPlugin(context.Background(), t, "--server", "https://127.0.0.1:1", "create", "-f", path, "--local")
	checkError(t, "--local", err, `unknown field "spec.ladder.treads"`)
	other := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(other, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = runPlugin(context.Background(), t, "--server", "https://127.0.0.1:1", "create", "-f", other, "--dry-run=client")
	checkError(t, "a ConfigMap", err, "v1 ConfigMap", "BenchmarkRuns and BenchmarkSchedules")
}

// writeRunFile writes a small BenchmarkRun with extra as one more line of its ladder.
func writeRunFile(t *testing.T, ladderLine string) string {
	t.Helper()
	doc := `apiVersion: mysqlbench.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: planned
spec:
  targets:
  - name: mariadb
    image: mariadb:10.11
  workload:
    script: oltp_point_select
  ladder:
    threads: [1, 2, 4]
    stepDuration: 10s
`
	if ladderLine != "" {
		doc += "    " + ladderLine + "\n"
	}
	path := filepath.Join(t.TempDir(), "run.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// With --dry-run=server the run goes to the API server as a dry run first: its validation and
// defaults apply, its refusals are shown as it words them, and nothing is stored.
func TestCreateDryRunOnTheServer(t *testing.T) {
	needCluster(t)
	out, errOut, err := kubectlMysqlbench(t, "create", "-f", writeRunFile(t, ""), "--dry-run=server")
	if err != nil {
		t.Fatal(err)
	}
	objs := yamlObjects(t, out)
	if !strings.Contains(errOut, "checked by the API server") {
		t.Errorf("the summary does not say the API server checked the run")
	}
	// The server's defaults: workload.tables 1 and tableSize 10000 reach the command lines.
	var ladder []string
	for _, o := range objs {
		if o.GetKind() == "Job" && o.GetLabels()["mysqlbench.io/step"] == "s03" {
			cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			args, _, _ := unstructured.NestedStringSlice(cs[0].(map[string]any), "args")
			ladder = args
		}
		if len(o.GetOwnerReferences()) > 0 {
			t.Errorf("%s %s is owned by a run that does not exist", o.GetKind(), o.GetName())
		}
	}
	for _, want := range []string{"--tables=1", "--table-size=10000", "--threads=4", "--time=10", "run"} {
		if !strings.Contains(strings.Join(ladder, " "), want) {
			t.Errorf("step s03 runs %q, lacks %s", ladder, want)
		}
	}
	err = k8s.Get(context.Background(), client.ObjectKey{Namespace: nsBench, Name: "planned"}, &v1.BenchmarkRun{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("a dry run stored the run: %v", err)
	}

	jsonOut, _, err := kubectlMysqlbench(t, "create", "-f", writeRunFile(t, ""), "--dry-run=server", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal([]byte(jsonOut), &list); err != nil || list.Kind != "List" || len(list.Items) != len(objs) {
		t.Errorf("-o json: %v, kind %q with %d items, want %d", err, list.Kind, len(list.Items), len(objs))
	}

	// Refusals as the API server words them: a CRD validation rule, strict field validation.
	path := writeRunFile(t, "")
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), "[1, 2, 4]", "[4, 2]", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = kubectlMysqlbench(t, "create", "-f", path, "--dry-run=server")
	checkError(t, "descending threads", err, "the API server refused BenchmarkRun planned", "ladder.threads must be strictly ascending")
	_, _, err = kubectlMysqlbench(t, "create", "-f", writeRunFile(t, "treads: [1]"), "--dry-run=server")
	checkError(t, "an unknown field", err, "the API server refused", `unknown field "spec.ladder.treads"`)
}

// Without --dry-run the run is created, as kubectl create does.
func TestCreateCreatesTheRun(t *testing.T) {
	needCluster(t)
	path := writeRunFile(t, "")
	out, errOut, err := kubectlMysqlbench(t, "-n", nsStuck, "create", "-f", path)
	if err != nil {
		t.Fatal(err)
	}
	if out != "benchmarkrun.mysqlbench.io/planned created\n" || !strings.Contains(errOut, "kubectl mysqlbench get planned -n stuck -w") {
		t.Errorf("create printed %q, %q", out, errOut)
	}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: nsStuck, Name: "planned"}, &v1.BenchmarkRun{}); err != nil {
		t.Errorf("the run was not created: %v", err)
	}
	_, _, err = kubectlMysqlbench(t, "-n", nsStuck, "create", "-f", path)
	checkError(t, "creating it again", err, "already exists in namespace stuck", "delete it first or choose another name")
}

func TestCreateDryRunTakesKubectlsValues(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	path := writeRunFile(t, "")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--dry-run"}, []string{"--dry-run needs a value", "--dry-run=server", "--dry-run=client", "--dry-run=none"}},
		{[]string{"--dry-run=true"}, []string{`invalid --dry-run value "true"`, `"none", "server", or "client"`}},
		{[]string{"--dry-run=server", "--local"}, []string{"contradicts --dry-run=server"}},
	} {
		args := append([]string{"--server", "https://127.0.0.1:1", "create", "-f", path}, c.args...)
		_, _, err := runPlugin(context.Background(), t, args...)
		checkError(t, strings.Join(c.args, " "), err, c.want...)
	}
	out, _, err := runPlugin(context.Background(), t, "--server", "https://127.0.0.1:1", "create", "-f", path, "--dry-run=client")
	if err != nil || !strings.Contains(out, "kind: Job") {
		t.Errorf("--dry-run=client: %v, no Job printed:\n%s", err, out)
	}
}
