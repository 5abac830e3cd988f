package plugin

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/exported"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
)

// pluginAt runs the plugin with args and the clock fixed at now (describe's ages), against the
// envtest API server when args give --kubeconfig, else with no cluster at all.
func pluginAt(t *testing.T, now time.Time, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := NewCommand(Options{
		Streams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Now:     func() time.Time { return now },
	})
	// No kubeconfig of the user's: what reads files must not need one.
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	cmd.SetArgs(args)
	err = cmd.ExecuteContext(context.Background())
	t.Logf("kubectl mysqlbench %s\n%s%s", strings.Join(args, " "), out.String(), errOut.String())
	if err != nil {
		t.Logf("error: %v", err)
	}
	return out.String(), errOut.String(), err
}

// exports writes what a user keeps of runs pk, base and cand under dir, and returns dir:
//
//	bundles/pk (a directory), bundles/base.tar.gz, bundles/cand.tgz: export --bundle
//	plain/runs.yaml (kubectl get benchmarkrun -o yaml: a List), plain/events.yaml (kubectl get
//	  events -o yaml), plain/NAME.json (export -o json)
//	json/NAME.json: export -o json alone
func exports(t *testing.T, now time.Time) string {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	for name, path := range map[string]string{"pk": "bundles/pk", "base": "bundles/base.tar.gz", "cand": "bundles/cand.tgz"} {
		if err := os.MkdirAll(filepath.Join(dir, "bundles"), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, _, err := pluginAt(t, now, "--kubeconfig", kubeconfig, "-n", nsBench, "export", name, "--bundle",
			filepath.Join(dir, path)); err != nil {
			t.Fatal(err)
		}
	}
	list := map[string]any{"apiVersion": "v1", "kind": "List"}
	var items []any
	for _, name := range []string{"pk", "base", "cand"} {
		run := getRun(t, nsBench, name)
		run.APIVersion, run.Kind = v1.GroupVersion.String(), "BenchmarkRun"
		items = append(items, run)
		for _, sub := range []string{"plain", "json"} {
			if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
				t.Fatal(err)
			}
			if _, _, err := pluginAt(t, now, "--kubeconfig", kubeconfig, "-n", nsBench, "export", name, "-o", "json",
				"--file", filepath.Join(dir, sub, name+".json")); err != nil {
				t.Fatal(err)
			}
		}
	}
	list["items"] = items
	events := &corev1.EventList{}
	if err := k8s.List(ctx, events, client.InNamespace(nsBench)); err != nil {
		t.Fatal(err)
	}
	for i := range events.Items {
		events.Items[i].APIVersion, events.Items[i].Kind = "v1", "Event"
	}
	eventList := map[string]any{"apiVersion": "v1", "kind": "List", "items": events.Items}
	for name, obj := range map[string]any{"runs.yaml": list, "events.yaml": eventList} {
		data, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "plain", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Every read-only command prints from the exported files what it prints from the cluster, byte
// for byte, whichever files hold the run: its bundle (directory or archive), kubectl's YAML with
// results.json, or results.json alone where the command needs no more.
func TestFromFilesPrintsWhatTheClusterPrints(t *testing.T) {
	needCluster(t)
	now := time.Now().Add(time.Hour)
	dir := exports(t, now)
	at := func(p string) string { return filepath.Join(dir, p) }
	for _, c := range []struct {
		name string
		// cluster reads the cluster; each of files reads the same run(s) from files. "{out}" is a
		// file the command writes, compared too.
		cluster []string
		files   [][]string
	}{
		{"describe", []string{"describe", "pk"}, [][]string{
			{"describe", "--from", at("bundles/pk")},
			{"describe", "pk", "--from", at("bundles")},
			{"describe", "pk", "--from", at("plain")},
			{"describe", "pk", "--from", at("plain/runs.yaml")},
		}},
		{"describe with repetitions", []string{"describe", "base"}, [][]string{
			{"describe", "--from", at("bundles/base.tar.gz")},
			{"describe", "base", "--from", at("plain/runs.yaml"), "--from", at("json")},
		}},
		{"server", []string{"server", "pk"}, [][]string{
			{"server", "--from", at("bundles/pk")},
			{"server", "pk", "--from", at("plain")},
		}},
		{"server json", []string{"server", "base", "-o", "json", "--per", "second"}, [][]string{
			{"server", "-o", "json", "--per", "second", "--from", at("json/base.json")},
			{"server", "base", "-o", "json", "--per", "second", "--from", at("bundles")},
		}},
		{"server csv of a target", []string{"server", "pk", "-o", "csv", "--target", "mariadb"}, [][]string{
			{"server", "-o", "csv", "--target", "mariadb", "--from", at("bundles/pk")},
		}},
		{"export json", []string{"export", "pk", "-o", "json"}, [][]string{
			{"export", "-o", "json", "--from", at("json/pk.json")},
			{"export", "pk", "-o", "json", "--from", at("bundles")},
		}},
		{"export csv", []string{"export", "pk", "-o", "csv"}, [][]string{
			{"export", "-o", "csv", "--from", at("json/pk.json")},
			{"export", "-o", "csv", "--from", at("bundles/pk")},
		}},
		{"export markdown to a file", []string{"export", "base", "-o", "markdown", "--file", "{out}"}, [][]string{
			{"export", "-o", "markdown", "--file", "{out}", "--from", at("json/base.json")},
			{"export", "-o", "markdown", "--file", "{out}", "--from", at("bundles/base.tar.gz")},
		}},
		{"plot", []string{"plot", "pk", "--output-file", "{out}.png"}, [][]string{
			{"plot", "--output-file", "{out}.png", "--from", at("json/pk.json")},
			{"plot", "pk", "--output-file", "{out}.png", "--from", at("bundles")},
		}},
		{"plot two runs", []string{"plot", "base", "cand", "--metric", "p95", "--output-file", "{out}.png"}, [][]string{
			{"plot", "--metric", "p95", "--output-file", "{out}.png", "--from", at("json/base.json"), "--from", at("json/cand.json")},
			{"plot", "base", "cand", "--metric", "p95", "--output-file", "{out}.png", "--from", at("bundles")},
		}},
		{"plot timeline", []string{"plot", "pk", "--timeline", "--metric", "tps", "--output-file", "{out}.svg"}, [][]string{
			{"plot", "--timeline", "--metric", "tps", "--output-file", "{out}.svg", "--from", at("bundles/pk")},
		}},
		{"plot CPU", []string{"plot", "pk", "--metric", "cpu-per-query", "--output-file", "{out}.png"}, [][]string{
			{"plot", "--metric", "cpu-per-query", "--output-file", "{out}.png", "--from", at("json/pk.json")},
		}},
		{"compare", []string{"compare", "base", "cand"}, [][]string{
			{"compare", "--from", at("json/base.json"), "--from", at("json/cand.json")},
			{"compare", "--from", at("bundles/base.tar.gz"), "--from", at("bundles/cand.tgz")},
			{"compare", "base", "cand", "--from", at("plain")},
			{"compare", "base", "cand", "--from", at("bundles")},
		}},
		{"compare markdown, one target", []string{"compare", "base", "cand", "-o", "markdown", "--target", "mariadb"}, [][]string{
			{"compare", "-o", "markdown", "--target", "mariadb", "--from", at("json/base.json"), "--from", at("json/cand.json")},
		}},
		{"compare the other way, with flags", []string{"compare", "cand", "base", "--qps-drop", "20"}, [][]string{
			{"compare", "--qps-drop", "20", "--from", at("json/cand.json"), "--from", at("bundles/base.tar.gz")},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func(args []string, out string) (string, []byte) {
				t.Helper()
				args = replaceOut(args, out)
				stdout, _, err := pluginAt(t, now, args...)
				if err != nil {
					t.Fatalf("%s: %v", strings.Join(args, " "), err)
				}
				var written []byte
				for _, a := range args {
					if strings.HasPrefix(a, out) {
						if written, err = os.ReadFile(a); err != nil {
							t.Fatal(err)
						}
					}
				}
				return stdout, written
			}
			tmp := t.TempDir()
			want, wantFile := run(append([]string{"--kubeconfig", kubeconfig, "-n", nsBench}, c.cluster...), filepath.Join(tmp, "cluster"))
			if strings.TrimSpace(want)+string(wantFile) == "" {
				t.Fatalf("%s printed and wrote nothing", strings.Join(c.cluster, " "))
			}
			for i, args := range c.files {
				got, gotFile := run(args, filepath.Join(tmp, "files"+string(rune('a'+i))))
				if got != want {
					t.Errorf("%s printed otherwise than from the cluster:\n%s\nfrom the cluster:\n%s", strings.Join(args, " "), got, want)
				}
				if !bytes.Equal(gotFile, wantFile) {
					t.Errorf("%s wrote %d bytes otherwise than from the cluster (%d)", strings.Join(args, " "), len(gotFile), len(wantFile))
				}
			}
		})
	}
}

// replaceOut puts out in place of {out} in args.
func replaceOut(args []string, out string) []string {
	res := make([]string, len(args))
	for i, a := range args {
		res[i] = strings.ReplaceAll(a, "{out}", out)
	}
	return res
}

// What files cannot hold is said, not guessed: results.json has no conditions (describe refuses
// it) and no Events (server says why it does not know what the Events said), and does not say
// which schedule made the run (compare says so on stderr).
func TestFromFilesSaysWhatTheyLack(t *testing.T) {
	needCluster(t)
	now := time.Now().Add(time.Hour)
	dir := exports(t, now)
	_, _, err := pluginAt(t, now, "describe", "--from", filepath.Join(dir, "json/pk.json"))
	checkError(t, "describe from results.json", err, "the files hold only the results of run pk",
		"describe shows its conditions", "kubectl get benchmarkrun pk -o yaml", "export pk --bundle DIR")

	fromCluster, _, err := pluginAt(t, now, "--kubeconfig", kubeconfig, "-n", nsBench, "server", "pk")
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, _, err := pluginAt(t, now, "server", "--from", filepath.Join(dir, "json/pk.json"))
	if err != nil {
		t.Fatal(err)
	}
	const stored = "1 start and 0 end server snapshots" // the operator's Event's reason
	if !strings.Contains(fromCluster, stored) || strings.Contains(fromJSON, stored) ||
		!strings.Contains(fromJSON, "server counters not stored at 8 threads: why is not known: the operator's Warning Event ServerStatsUnavailable said it, and is gone") {
		t.Errorf("server from results.json alone does not say that the reason is unknown:\n%s", fromJSON)
	}
	if strings.Replace(fromJSON, "why is not known: the operator's Warning Event ServerStatsUnavailable said it, and is gone",
		"1 start and 0 end server snapshots, want one of each", 1) != fromCluster {
		t.Errorf("server from results.json differs from the cluster's beyond the reason it cannot know")
	}

	out, errOut, err := pluginAt(t, now, "compare", "--from", filepath.Join(dir, "json/base.json"), "--from", filepath.Join(dir, "json/cand.json"))
	if err != nil || !strings.Contains(out, "Policy: the operator's defaults:") ||
		!strings.Contains(errOut, "Note: cand is read from its results.json, which does not say whether a BenchmarkSchedule made it") {
		t.Errorf("compare from results.json does not say that a schedule's policy may be missing: %v\n%s", err, errOut)
	}
}

// A run made by a schedule is compared under the schedule's policy from its bundle, as from the
// cluster; from its YAML alone the policy line says the schedule is not in the files.
func TestFromFilesScheduledRunPolicy(t *testing.T) {
	needCluster(t)
	ctx := context.Background()
	sched := &v1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: "offline-nightly", Namespace: nsBench},
		Spec: v1.BenchmarkScheduleSpec{Schedule: "0 2 * * *", Suspend: ptrTo(true),
			Template:   v1.BenchmarkRunTemplate{Spec: newRun(nsBench, "x", 1, 1).Spec},
			Regression: v1.RegressionPolicy{QPSDropPercent: ptrTo(33.0)}},
	}
	if err := k8s.Create(ctx, sched); err != nil {
		t.Fatal(err)
	}
	// A finished run the schedule owns, compared with base.
	run := newRun(nsBench, "offline-nightly-1", 4, 1, 2)
	run.Labels = map[string]string{v1.LabelSchedule: sched.Name}
	run.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(sched, v1.GroupVersion.WithKind("BenchmarkSchedule"))}
	if err := k8s.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := waitFinished(ctx, run.Namespace, run.Name, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	// A confirmation of its regression in the schedule's status (no schedule controller runs here).
	sched.Status.Confirmation = &v1.Confirmation{Run: run.Name, Baseline: "base", State: v1.ConfirmationRunning,
		ConfirmationRun: run.Name + "-confirm", Cells: []string{"mariadb@2"}, Message: "re-measuring mariadb@2"}
	if err := k8s.Status().Update(ctx, sched); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Add(time.Hour)
	dir := t.TempDir()
	bundle := filepath.Join(dir, "nightly")
	if _, _, err := pluginAt(t, now, "--kubeconfig", kubeconfig, "-n", nsBench, "export", run.Name, "--bundle", bundle); err != nil {
		t.Fatal(err)
	}
	if _, _, err := pluginAt(t, now, "--kubeconfig", kubeconfig, "-n", nsBench, "export", "base", "--bundle", filepath.Join(dir, "base")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(bundle, exported.FileSchedule)); err != nil {
		t.Fatalf("the bundle of a scheduled run lacks its schedule: %v", err)
	}
	described, _, err := pluginAt(t, now, "--kubeconfig", kubeconfig, "-n", nsBench, "describe", run.Name)
	if err != nil || !strings.Contains(described, "Confirmation: Running") || !strings.Contains(described, "Schedule:") {
		t.Fatalf("describe from the cluster shows no schedule or confirmation: %v\n%s", err, described)
	}
	if got, _, err := pluginAt(t, now, "describe", "--from", bundle); err != nil || got != described {
		t.Errorf("describe from the bundle printed otherwise than from the cluster (%v):\n%s", err, got)
	}
	want, _, err := pluginAt(t, now, "--kubeconfig", kubeconfig, "-n", nsBench, "compare", "base", run.Name)
	if err != nil || !strings.Contains(want, "Policy: schedule offline-nightly's spec.regression") {
		t.Fatalf("compare from the cluster: %v\n%s", err, want)
	}
	got, _, err := pluginAt(t, now, "compare", "base", run.Name, "--from", dir)
	if err != nil || got != want {
		t.Errorf("compare from the bundles printed otherwise than from the cluster (%v):\n%s", err, got)
	}
	runYAML := filepath.Join(dir, "alone.yaml")
	data, err := os.ReadFile(filepath.Join(bundle, exported.FileRun))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(runYAML, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, _, err = pluginAt(t, now, "compare", "--from", filepath.Join(dir, "base"), "--from", runYAML)
	if err != nil || !strings.Contains(got, "Policy: the operator's defaults (schedule offline-nightly is not in the files: add its YAML") {
		t.Errorf("compare of a scheduled run without its schedule does not say so (%v):\n%s", err, got)
	}
	// The schedule deleted: the cluster and a bundle exported now both say it is gone.
	if err := k8s.Delete(ctx, sched); err != nil {
		t.Fatal(err)
	}
	want, _, err = pluginAt(t, now, "--kubeconfig", kubeconfig, "-n", nsBench, "compare", "base", run.Name)
	if err != nil || !strings.Contains(want, "Policy: the operator's defaults (schedule offline-nightly is gone)") {
		t.Fatalf("compare from the cluster without the schedule: %v\n%s", err, want)
	}
	gone := filepath.Join(dir, "gone.tar.gz")
	if _, _, err := pluginAt(t, now, "--kubeconfig", kubeconfig, "-n", nsBench, "export", run.Name, "--bundle", gone); err != nil {
		t.Fatal(err)
	}
	got, _, err = pluginAt(t, now, "compare", "--from", filepath.Join(dir, "base"), "--from", gone)
	if err != nil || got != want {
		t.Errorf("compare from a bundle exported after the schedule was deleted printed otherwise than from the cluster (%v):\n%s", err, got)
	}
}

func ptrTo[T any](v T) *T { return &v }

// A bundle holds the run as the cluster had it: every key of its results ConfigMap byte for
// byte, its object, Events, charts, each target's my.cnf and command lines; the archive the same
// files; and it never replaces anything.
func TestExportBundle(t *testing.T) {
	needCluster(t)
	now := time.Now()
	dir := t.TempDir()
	bundle, archive := filepath.Join(dir, "pk"), filepath.Join(dir, "pk.tar.gz")
	for _, p := range []string{bundle, archive} {
		_, errOut, err := pluginAt(t, now, "--kubeconfig", kubeconfig, "-n", nsBench, "export", "pk", "--bundle", p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(errOut, "Wrote "+p+": the bundle of benchmarkrun bench/pk") {
			t.Errorf("export --bundle does not say what it wrote: %s", errOut)
		}
	}
	cm := resultsConfigMap(t, "pk")
	for k, v := range cm.Data {
		if data, err := os.ReadFile(filepath.Join(bundle, k)); err != nil || string(data) != v {
			t.Errorf("%s is not the ConfigMap's (%v)", k, err)
		}
	}
	read := func(name string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(bundle, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	run := getRun(t, nsBench, "pk")
	for file, wants := range map[string][]string{
		exported.FileManifest:          {"kind: MysqlbenchBundle", "uid: " + string(run.UID), "- results.json"},
		exported.FileRun:               {"kind: BenchmarkRun", "name: pk", "phase: Succeeded", "resultsConfigMap: pk-results"},
		exported.FileEvents:            {"reason: ServerStatsUnavailable"},
		exported.FileNodes:             {"target: mariadb-psoff"},
		"targets/mariadb-psoff/my.cnf": {"performance_schema = OFF", "max_connections = 151"},
		"targets/mariadb/commands.txt": {"\ns01: sysbench ", "--threads=1 --time=3 ", "\ns04: sysbench ", "--threads=8 "},
	} {
		for _, w := range wants {
			if got := read(file); !strings.Contains(got, w) {
				t.Errorf("%s lacks %q", file, w)
			}
		}
	}
	if strings.Contains(read(exported.FileRun), "managedFields") {
		t.Errorf("run.yaml keeps the managed fields")
	}
	if n := run.Status.Targets[0].Node; n != nil && !strings.Contains(read(exported.FileNodes), "name: "+n.Name) {
		t.Errorf("nodes.yaml lacks node %s", n.Name)
	}
	decodePNG(t, filepath.Join(bundle, "charts", "qps-by-threads.png"))
	decodePNG(t, filepath.Join(bundle, "charts", "p95-by-threads.png"))

	// The archive reads as the directory.
	a, _, err := pluginAt(t, now, "describe", "--from", bundle)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := pluginAt(t, now, "describe", "--from", archive)
	if err != nil || a != b {
		t.Errorf("the archive describes otherwise than the directory (%v)", err)
	}

	// Nothing is replaced: a second export to the same paths fails and leaves them.
	before := read(exported.FileManifest)
	for _, p := range []string{bundle, archive} {
		_, _, err := pluginAt(t, now.Add(time.Minute), "--kubeconfig", kubeconfig, "-n", nsBench, "export", "pk", "--bundle", p)
		checkError(t, "export --bundle to an existing "+p, err, p+" exists already", "choose a new path")
	}
	if read(exported.FileManifest) != before {
		t.Errorf("the existing bundle was changed")
	}
	// A bundle from exported files: the same run, from a results.json and the run's YAML.
	again := filepath.Join(dir, "again")
	if _, _, err := pluginAt(t, now, "export", "--from", archive, "--bundle", again); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{exported.FileRun, report.KeyResultsJSON, report.KeyReportMD, "targets/mariadb/commands.txt", exported.FileEvents} {
		x, _ := os.ReadFile(filepath.Join(bundle, filepath.FromSlash(f)))
		y, _ := os.ReadFile(filepath.Join(again, filepath.FromSlash(f)))
		if !bytes.Equal(x, y) {
			t.Errorf("%s of a bundle made from the bundle differs", f)
		}
	}
}

// Bad input says what to fix.
func TestFromFilesErrorsSayWhatToFix(t *testing.T) {
	needCluster(t)
	now := time.Now()
	dir := exports(t, now)
	at := func(p string) string { return filepath.Join(dir, p) }
	// Two different runs named pk: the exported one, and one "created again" later.
	twice := filepath.Join(t.TempDir(), "twice")
	again := getRun(t, nsBench, "pk")
	again.APIVersion, again.Kind = v1.GroupVersion.String(), "BenchmarkRun"
	again.UID, again.Status.StartTime = "another-uid", &metav1.Time{Time: again.Status.StartTime.Add(time.Hour)}
	data, err := yaml.Marshal(again)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(twice, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"pk-again.yaml": data, "pk.yaml": []byte(mustRead(t, at("bundles/pk/run.yaml")))} {
		if err := os.WriteFile(filepath.Join(twice, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stuck := filepath.Join(t.TempDir(), "stuck.yaml")
	st := getRun(t, nsStuck, "stuck")
	st.APIVersion, st.Kind = v1.GroupVersion.String(), "BenchmarkRun"
	if data, err = yaml.Marshal(st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stuck, data, 0o644); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(t.TempDir(), "x.png")
	for _, c := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"describe", "--from", at("nope.yaml")}, []string{"nope.yaml: no such file or directory"}},
		{[]string{"describe", "--from", at("plain/runs.yaml")}, []string{"hold 3 runs: name the one you mean", "bench/pk", "bench/cand"}},
		{[]string{"describe", "nope", "--from", at("plain")}, []string{`no run named "nope"`, "they hold bench/base", "bench/pk"}},
		{[]string{"-n", "other", "describe", "pk", "--from", at("plain")}, []string{`no run "pk" in namespace other`, "drop -n"}},
		{[]string{"describe", "pk", "--from", twice}, []string{`hold 2 different runs named "pk"`, "pass only the files of the one you mean"}},
		{[]string{"plot", "pk", "--output-file", png, "--from", at("plain/runs.yaml")},
			[]string{"the files hold benchmarkrun pk", "without its results", "give its results.json too"}},
		{[]string{"plot", "--output-file", png, "--from", stuck}, []string{"stuck had not finished when it was exported", "phase Provisioning"}},
		{[]string{"compare", "--from", at("json/base.json")}, []string{"takes two --from, OLD's and NEW's (got 1)"}},
		{[]string{"compare", "--from", at("json"), "--from", at("json/pk.json")}, []string{"json holds 3 runs: without run names each --from must hold one run"}},
		{[]string{"export", "--from", at("json/pk.json")}, []string{"-o csv, -o json or -o markdown", "--bundle PATH"}},
		{[]string{"export", "-o", "csv", "--bundle", at("x"), "--from", at("json/pk.json")}, []string{"drop -o and --file"}},
		{[]string{"export", "--bundle", at("x"), "--from", at("json/pk.json")}, []string{"only the results of run pk", "a bundle holds the run's spec and status"}},
		{[]string{"export", "--bundle", at("bundles/pk"), "--from", at("bundles/pk")}, []string{"exists already"}},
		{[]string{"describe", "--from", at("bundles/pk/nodes.yaml")}, []string{"nodes.yaml holds a JSON object without kind or formatVersion, not a BenchmarkRun"}},
	} {
		_, _, err := pluginAt(t, now, c.args...)
		checkError(t, strings.Join(c.args, " "), err, c.wants...)
	}
	// An unfinished run's YAML still describes.
	if out, _, err := pluginAt(t, now, "describe", "--from", stuck); err != nil || !strings.Contains(out, "Provisioning") {
		t.Errorf("describe of an unfinished run's YAML: %v", err)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
