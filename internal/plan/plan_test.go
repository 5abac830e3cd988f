package plan

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/percona"
	"github.com/mysqlbench/mysqlbench-operator/internal/object"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// newRun is a small run of one target: 2 tables, a ladder of 1, 2 and 8 threads of 30 s.
func newRun(t v1.Target) *v1.BenchmarkRun {
	return &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "quick", Namespace: "bench"},
		Spec: v1.BenchmarkRunSpec{
			Targets:  []v1.Target{t},
			Workload: v1.Workload{Script: "oltp_point_select", Tables: 2, TableSize: 10000},
			Ladder: v1.Ladder{
				Threads:      []int32{1, 2, 8},
				StepDuration: &metav1.Duration{Duration: 30 * time.Second},
			},
		},
	}
}

var (
	builtin  = v1.Target{Name: "mysql84", Engine: v1.EngineBuiltin, Image: "mysql:8.4.3"}
	ps       = v1.Target{Name: "ps84", Engine: v1.EnginePerconaServer, Image: "percona/percona-server:8.4.10-10.1"}
	pxc      = v1.Target{Name: "pxc80", Engine: v1.EnginePerconaXtraDBCluster}
	external = v1.Target{Name: "prod", Engine: v1.EngineExternal,
		SecretRef: &v1.LocalObjectReference{Name: "prod-mysql"}}
)

// kinds lists the objects as "Kind name", and each Job by its step label.
func kinds(objs []object.Object) []string {
	var out []string
	for _, o := range objs {
		k := o.GetObjectKind().GroupVersionKind().Kind
		if job, ok := o.(*batchv1.Job); ok {
			out = append(out, "Job "+job.Labels[specs.LabelStep])
			continue
		}
		out = append(out, k+" "+o.GetName())
	}
	return out
}

func jobs(objs []object.Object) []*batchv1.Job {
	var out []*batchv1.Job
	for _, o := range objs {
		if j, ok := o.(*batchv1.Job); ok {
			out = append(out, j)
		}
	}
	return out
}

func TestObjects(t *testing.T) {
	withRun := func(tg v1.Target, mutate func(*v1.BenchmarkRun)) *v1.BenchmarkRun {
		run := newRun(tg)
		if mutate != nil {
			mutate(run)
		}
		return run
	}
	cases := []struct {
		name string
		run  *v1.BenchmarkRun
		want []string
	}{{
		name: "builtin",
		run:  withRun(builtin, nil),
		want: []string{
			"ConfigMap quick-sysbench-reporter",
			"Secret quick-mysql84-credentials", "ConfigMap quick-mysql84", "Service quick-mysql84",
			"NetworkPolicy quick-mysql84", "StatefulSet quick-mysql84",
			"Job probe", "Job prepare", "Job s01", "Job s02", "Job s03",
		},
	}, {
		name: "builtin without NetworkPolicy, engine defaulted",
		run: withRun(v1.Target{Name: "mysql84", Image: "mysql:8.4.3"}, func(r *v1.BenchmarkRun) {
			r.Spec.NetworkPolicy = v1.NetworkPolicyDisabled
		}),
		want: []string{
			"ConfigMap quick-sysbench-reporter",
			"Secret quick-mysql84-credentials", "ConfigMap quick-mysql84", "Service quick-mysql84", "StatefulSet quick-mysql84",
			"Job probe", "Job prepare", "Job s01", "Job s02", "Job s03",
		},
	}, {
		name: "percona-server",
		run:  withRun(ps, nil),
		want: []string{
			"ConfigMap quick-sysbench-reporter",
			"Secret quick-ps84-percona-users", "Secret quick-ps84-sbtest-password", "PerconaServerMySQL quick-ps84",
			"Job probe", "Job prepare", "Job s01", "Job s02", "Job s03",
		},
	}, {
		name: "percona-xtradb-cluster",
		run:  withRun(pxc, nil),
		want: []string{
			"ConfigMap quick-sysbench-reporter",
			"Secret quick-pxc80-percona-users", "Secret quick-pxc80-sbtest-password", "PerconaXtraDBCluster quick-pxc80",
			"Job probe", "Job prepare", "Job s01", "Job s02", "Job s03",
		},
	}, {
		name: "external: the operator drops the tables it created",
		run:  withRun(external, nil),
		want: []string{"ConfigMap quick-sysbench-reporter", "Job probe", "Job prepare", "Job s01", "Job s02", "Job s03", "Job cleanup"},
	}, {
		name: "external with skipPrepare: no prepare, no cleanup",
		run:  withRun(external, func(r *v1.BenchmarkRun) { r.Spec.Workload.SkipPrepare = true }),
		want: []string{"ConfigMap quick-sysbench-reporter", "Job probe", "Job s01", "Job s02", "Job s03"},
	}, {
		name: "builtin with skipPrepare and a warm-up",
		run: withRun(builtin, func(r *v1.BenchmarkRun) {
			r.Spec.Workload.SkipPrepare = true
			r.Spec.Ladder.Warmup = &metav1.Duration{Duration: 20 * time.Second}
		}),
		want: []string{
			"ConfigMap quick-sysbench-reporter",
			"Secret quick-mysql84-credentials", "ConfigMap quick-mysql84", "Service quick-mysql84",
			"NetworkPolicy quick-mysql84", "StatefulSet quick-mysql84",
			"Job probe", "Job warmup", "Job s01", "Job s02", "Job s03",
		},
	}, {
		name: "two repetitions: the second round descends",
		run:  withRun(external, func(r *v1.BenchmarkRun) { r.Spec.Repetitions = ptr.To[int32](2) }),
		want: []string{"ConfigMap quick-sysbench-reporter", "Job probe", "Job prepare",
			"Job s01", "Job s02", "Job s03", "Job r2s03", "Job r2s02", "Job r2s01", "Job cleanup"},
	}, {
		name: "targets in spec order",
		run: withRun(external, func(r *v1.BenchmarkRun) {
			r.Spec.Targets = append(r.Spec.Targets, ps)
			r.Spec.Workload.SkipPrepare = true
		}),
		want: []string{"ConfigMap quick-sysbench-reporter", "Job probe", "Job s01", "Job s02", "Job s03",
			"Secret quick-ps84-percona-users", "Secret quick-ps84-sbtest-password", "PerconaServerMySQL quick-ps84",
			"Job probe", "Job s01", "Job s02", "Job s03"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Objects(tc.run, Options{SysbenchImage: "example.com/sysbench:1"})
			if err != nil {
				t.Fatal(err)
			}
			if got := kinds(objs); !slices.Equal(got, tc.want) {
				t.Errorf("objects:\n got %q\nwant %q", got, tc.want)
			}
			for _, o := range objs {
				if gvk := o.GetObjectKind().GroupVersionKind(); gvk.Kind == "" || gvk.Version == "" {
					t.Errorf("%T %s has no apiVersion/kind", o, o.GetName())
				}
				if o.GetNamespace() != "bench" {
					t.Errorf("%s in namespace %q", o.GetName(), o.GetNamespace())
				}
				if len(o.GetOwnerReferences()) != 0 {
					t.Errorf("%s is owned without a run UID: %v", o.GetName(), o.GetOwnerReferences())
				}
			}
			for _, j := range jobs(objs) {
				if img := j.Spec.Template.Spec.Containers[0].Image; img != "example.com/sysbench:1" {
					t.Errorf("Job %s runs %s", j.Name, img)
				}
			}
		})
	}
}

// The Jobs are the operator's: the first attempt's names, the target's connection Secret, and
// sysbench's command line with each step's threads and duration.
func TestJobsCommandLines(t *testing.T) {
	run := newRun(external)
	run.Spec.Repetitions = ptr.To[int32](2)
	run.Spec.Ladder.Warmup = &metav1.Duration{Duration: 45 * time.Second}
	run.Spec.Ladder.WarmupThreads = ptr.To[int32](4)
	objs, err := Objects(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		name    string
		command string
		args    []string
	}
	wants := []want{
		{"quick-prod-probe-a0", "probe", nil},
		{"quick-prod-prepare-a0", "prepare", []string{"--threads=2"}},
		{"quick-prod-warmup-a0", "run", []string{"--threads=4", "--time=45"}},
		{"quick-prod-s01-a0", "run", []string{"--threads=1", "--time=30"}},
		{"quick-prod-s02-a0", "run", []string{"--threads=2", "--time=30"}},
		{"quick-prod-s03-a0", "run", []string{"--threads=8", "--time=30"}},
		{"quick-prod-r2s03-a0", "run", []string{"--threads=8", "--time=30"}},
		{"quick-prod-r2s02-a0", "run", []string{"--threads=2", "--time=30"}},
		{"quick-prod-r2s01-a0", "run", []string{"--threads=1", "--time=30"}},
		{"quick-prod-cleanup-a0", "cleanup", nil},
	}
	js := jobs(objs)
	if len(js) != len(wants) {
		t.Fatalf("%d Jobs, want %d: %q", len(js), len(wants), kinds(objs))
	}
	for i, w := range wants {
		j := js[i]
		c := j.Spec.Template.Spec.Containers[0]
		if j.Name != w.name {
			t.Errorf("Job %d is %s, want %s", i, j.Name, w.name)
		}
		if c.Image != specs.DefaultSysbenchImage {
			t.Errorf("Job %s runs %s, want the default image", j.Name, c.Image)
		}
		if last := c.Args[len(c.Args)-1]; last != w.command {
			t.Errorf("Job %s runs sysbench %s, want %s", j.Name, last, w.command)
		}
		for _, a := range w.args {
			if !slices.Contains(c.Args, a) {
				t.Errorf("Job %s: args %q lack %s", j.Name, c.Args, a)
			}
		}
		if !strings.Contains(fmt.Sprint(c.Env), "prod-mysql") {
			t.Errorf("Job %s does not connect through the target's Secret prod-mysql: %v", j.Name, c.Env)
		}
	}
}

func TestSpecSysbenchImageWins(t *testing.T) {
	run := newRun(builtin)
	run.Spec.SysbenchImage = "example.com/mine:2"
	objs, err := Objects(run, Options{SysbenchImage: "example.com/operator:1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs(objs) {
		if img := j.Spec.Template.Spec.Containers[0].Image; img != "example.com/mine:2" {
			t.Errorf("Job %s runs %s", j.Name, img)
		}
	}
}

func TestPlacementFromSpec(t *testing.T) {
	run := newRun(builtin)
	run.Spec.Placement = v1.Placement{
		Database: v1.DatabasePlacement{PoolPlacement: v1.PoolPlacement{
			NodeSelector: map[string]string{"disk": "nvme"},
			Tolerations:  []corev1.Toleration{{Key: "db", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		}},
		Client: v1.PoolPlacement{
			NodeSelector: map[string]string{"role": "load"},
			Tolerations:  []corev1.Toleration{{Key: "load", Operator: corev1.TolerationOpExists}},
		},
	}
	objs, err := Objects(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sts *appsv1.StatefulSet
	for _, o := range objs {
		if s, ok := o.(*appsv1.StatefulSet); ok {
			sts = s
		}
	}
	if sts == nil {
		t.Fatal("no StatefulSet")
	}
	pod := sts.Spec.Template.Spec
	if pod.NodeSelector["disk"] != "nvme" || len(pod.Tolerations) != 1 || pod.Tolerations[0].Key != "db" {
		t.Errorf("server placement: nodeSelector %v, tolerations %v", pod.NodeSelector, pod.Tolerations)
	}
	if pod.Affinity == nil || pod.Affinity.PodAntiAffinity == nil {
		t.Error("server of an exclusive pool without its anti-affinity")
	}
	for _, j := range jobs(objs) {
		pod := j.Spec.Template.Spec
		if pod.NodeSelector["role"] != "load" || len(pod.Tolerations) != 1 || pod.Tolerations[0].Key != "load" {
			t.Errorf("Job %s placement: nodeSelector %v, tolerations %v", j.Name, pod.NodeSelector, pod.Tolerations)
		}
	}
}

// Generated passwords never appear: every password key holds the placeholder.
func TestPasswordsArePlaceholders(t *testing.T) {
	run := newRun(builtin)
	run.Spec.Targets = append(run.Spec.Targets, ps, pxc)
	objs, err := Objects(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	secrets := 0
	for _, o := range objs {
		s, ok := o.(*corev1.Secret)
		if !ok {
			continue
		}
		secrets++
		var keys []string
		switch {
		case strings.HasSuffix(s.Name, "-credentials"):
			keys = []string{"password", specs.SecretKeyRootPassword}
		case strings.HasSuffix(s.Name, "-sbtest-password"):
			keys = []string{percona.PasswordKey}
		case strings.HasSuffix(s.Name, "-percona-users"):
			if len(s.StringData) < 6 {
				t.Errorf("Secret %s has %d system users", s.Name, len(s.StringData))
			}
			for k := range s.StringData {
				keys = append(keys, k)
			}
		default:
			t.Errorf("unexpected Secret %s", s.Name)
		}
		for _, k := range keys {
			if v := s.StringData[k]; v != PasswordPlaceholder {
				t.Errorf("Secret %s key %s is %q, want the placeholder", s.Name, k, v)
			}
		}
	}
	if secrets != 5 {
		t.Errorf("%d Secrets, want 5 (builtin credentials, two per Percona target)", secrets)
	}
	// Nothing anywhere looks like a generated password (24 alphanumerics).
	all, err := yaml.Marshal(objs)
	if err != nil {
		t.Fatal(err)
	}
	generated := regexp.MustCompile(`(?m):\s+"?[A-Za-z0-9]{24}"?$`)
	if m := generated.FindAllString(string(all), -1); len(m) > 0 {
		t.Errorf("values that look generated: %q", m)
	}
	// Two plans are the same: nothing random.
	again, err := Objects(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	allAgain, _ := yaml.Marshal(again)
	if string(all) != string(allAgain) {
		t.Error("two plans of the same run differ")
	}
}

// A run read from the cluster has a UID: each object is controlled by it, as the operator makes it.
func TestOwnerReferenceWithUID(t *testing.T) {
	run := newRun(builtin)
	run.Spec.Targets = append(run.Spec.Targets, ps)
	run.UID = types.UID("5a7c3d9e-0000-4000-8000-000000000001")
	objs, err := Objects(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		refs := o.GetOwnerReferences()
		if len(refs) != 1 || refs[0].UID != run.UID || refs[0].Kind != "BenchmarkRun" ||
			refs[0].APIVersion != v1.GroupVersion.String() || !ptr.Deref(refs[0].Controller, false) {
			t.Errorf("%s %s: owner references %+v", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), refs)
		}
	}
}

// Each object prints as YAML that kubectl reads back: the typed ones decode into their kind.
func TestObjectsPrintAsManifests(t *testing.T) {
	run := newRun(builtin)
	run.Spec.Targets = append(run.Spec.Targets, pxc, external)
	objs, err := Objects(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	for _, o := range objs {
		data, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := o.(*unstructured.Unstructured); ok {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(data, &u.Object); err != nil || u.GetAPIVersion() == "" || u.GetKind() == "" {
				t.Errorf("%s does not read back: %v\n%s", o.GetName(), err, data)
			}
			continue
		}
		back, gvk, err := decoder.Decode(data, nil, nil)
		if err != nil {
			t.Errorf("%s does not decode: %v\n%s", o.GetName(), err, data)
			continue
		}
		if gvk.Kind != o.GetObjectKind().GroupVersionKind().Kind || back.(object.Object).GetName() != o.GetName() {
			t.Errorf("%s decodes as %s %s", o.GetName(), gvk.Kind, back.(object.Object).GetName())
		}
	}
}

// A spec the operator refuses fails the plan with the target's failure message, which names the
// field to change.
func TestRefusals(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*v1.BenchmarkRun)
		want   []string
	}{{
		name:   "myCnf sets an option the operator owns",
		mutate: func(r *v1.BenchmarkRun) { r.Spec.Targets[0].MyCnf = "port = 3307\n" },
		want:   []string{"spec.targets[0]: target mysql84: myCnf line 1 sets port, which the operator owns"},
	}, {
		name:   "max_connections below the ladder's peak",
		mutate: func(r *v1.BenchmarkRun) { r.Spec.Targets[0].MyCnf = "max_connections = 5\n" },
		want:   []string{"target mysql84: myCnf sets max_connections = 5", "raise it to at least 10"},
	}, {
		name: "a Percona target's myCnf",
		mutate: func(r *v1.BenchmarkRun) {
			r.Spec.Targets = append(r.Spec.Targets, ps)
			r.Spec.Targets[1].MyCnf = "[client]\nuser = x\n"
		},
		want: []string{"spec.targets[1]: target ps84: myCnf line 1: [client] is not a server option group"},
	}, {
		name: "data that does not fit storage.size",
		mutate: func(r *v1.BenchmarkRun) {
			r.Spec.Workload.TableSize = 10_000_000
			r.Spec.Storage = &v1.Storage{Size: resource.MustParse("1Gi")}
		},
		want: []string{"target mysql84: the sbtest data does not fit storage.size 1Gi", "raise storage.size"},
	}, {
		name:   "extraArgs the operator sets itself",
		mutate: func(r *v1.BenchmarkRun) { r.Spec.Workload.ExtraArgs = []string{"--threads=4"} },
		want:   []string{"target mysql84: cannot build the sysbench command for probe: workload.extraArgs[0] \"--threads=4\""},
	}, {
		name:   "both script and customScript",
		mutate: func(r *v1.BenchmarkRun) { r.Spec.Workload.CustomScript = &v1.ConfigMapKeySelector{Key: "x.lua"} },
		want:   []string{"workload sets both script", "customScript"},
	}, {
		name: "a step duration sysbench cannot take",
		mutate: func(r *v1.BenchmarkRun) {
			r.Spec.Ladder.StepDuration = &metav1.Duration{Duration: 1500 * time.Millisecond}
		},
		want: []string{"cannot build the sysbench command for s01: run step: duration 1.5s is not a whole number of seconds"},
	}, {
		name:   "an engine the operator does not have",
		mutate: func(r *v1.BenchmarkRun) { r.Spec.Targets[0].Engine = "mysql-operator" },
		want:   []string{"spec.targets[0]: target mysql84: engine \"mysql-operator\" is not one the operator has"},
	}, {
		name:   "no name",
		mutate: func(r *v1.BenchmarkRun) { r.Name = "" },
		want:   []string{"metadata.name is empty"},
	}, {
		name: "every refused target is named",
		mutate: func(r *v1.BenchmarkRun) {
			r.Spec.Targets = append(r.Spec.Targets, v1.Target{Name: "b", Image: "mysql:8.0", MyCnf: "datadir = /x\n"})
			r.Spec.Targets[0].MyCnf = "socket = /tmp/s\n"
		},
		want: []string{"would fail 2 targets", "target mysql84: myCnf line 1 sets socket", "spec.targets[1]: target b: myCnf line 1 sets datadir"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := newRun(builtin)
			tc.mutate(run)
			objs, err := Objects(run, Options{})
			if err == nil {
				t.Fatalf("no error; objects %q", kinds(objs))
			}
			if objs != nil {
				t.Errorf("objects with the error: %q", kinds(objs))
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// The runs in config/samples plan without an error: the reporter, each target's server objects
// and its Jobs. testdata/samples.txt lists them (go test ./internal/plan -update rewrites it).
func TestSamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var listing strings.Builder
	runs := 0
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range strings.Split(string(data), "\n---\n") {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			run := &v1.BenchmarkRun{}
			switch u.GetKind() {
			case "BenchmarkRun":
				if err := yaml.Unmarshal([]byte(doc), run); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
			case "BenchmarkSchedule":
				// The schedule's runs are its template.
				s := &v1.BenchmarkSchedule{}
				if err := yaml.Unmarshal([]byte(doc), s); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				run.Name, run.Spec = s.Name+"-20260101-0200", s.Spec.Template.Spec
			default:
				continue
			}
			run.Namespace = "default"
			runs++
			objs, err := Objects(run, Options{})
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			// The reporter, then per target its server objects and probe, prepare (none with
			// mysqlslap), warm-up and ladder Jobs, and the Job after the ladder where the client
			// runs one (go-tpc's check; no sample drops tables: none is external), and a suite's
			// prepares and warm-ups between its workloads.
			want := 1
			for _, tg := range run.Spec.Targets {
				switch tg.EngineOrDefault() {
				case v1.EngineBuiltin:
					want += 5
				case v1.EnginePerconaServer, v1.EnginePerconaXtraDBCluster:
					want += 3
				}
				want += 1 + run.Spec.StepCount()
				if run.Spec.Workload.Prepares() {
					want++
				}
				if run.Spec.Ladder.WarmupDuration() > 0 {
					want++
				}
				if _, ok := specs.AfterLadderStep(run, tg); ok {
					want++
				}
				// A suite's data prepared again (and warmed up again) between its workloads.
				for i := range run.Spec.StepCount() {
					if fresh, _ := run.Spec.FreshDataBefore(i); fresh {
						want++
						if run.Spec.Ladder.WarmupDuration() > 0 {
							want++
						}
					}
				}
			}
			if len(objs) != want {
				t.Errorf("%s: %d objects, want %d", f, len(objs), want)
			}
			fmt.Fprintf(&listing, "# %s (%s)\n", run.Name, filepath.Base(f))
			for _, o := range objs {
				fmt.Fprintln(&listing, o.GetObjectKind().GroupVersionKind().Kind, o.GetName())
			}
		}
	}
	if runs < 5 {
		t.Fatalf("planned %d sample runs, want at least 5", runs)
	}
	path := filepath.Join("testdata", "samples.txt")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(listing.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	golden, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/plan -update creates it)", err)
	}
	if string(golden) != listing.String() {
		t.Errorf("%s differs from the plans (go test ./internal/plan -update, then review the diff):\n%s", path, listing.String())
	}
}
