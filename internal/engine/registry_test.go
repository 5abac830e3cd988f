package engine

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine/builtin"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// The registry has exactly the engines the API admits (the Enum marker of v1alpha1.Engine), each
// with a description (package describe) and a driver that agree on its facts.
func TestRegistryMatchesTheAPI(t *testing.T) {
	src, err := os.ReadFile("../../api/v1alpha1/benchmarkrun_types.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\+kubebuilder:validation:Enum=([a-z;-]+)\ntype Engine string`).FindSubmatch(src)
	if m == nil {
		t.Fatal("no Enum marker above type Engine")
	}
	api := strings.Split(string(m[1]), ";")
	var registered, describedNames []string
	for e := range drivers {
		registered = append(registered, string(e))
	}
	for e := range Describers() {
		describedNames = append(describedNames, string(e))
	}
	slices.Sort(api)
	slices.Sort(registered)
	slices.Sort(describedNames)
	if !slices.Equal(api, registered) || !slices.Equal(api, describedNames) {
		t.Errorf("engines with a driver %q, with a description %q; the API admits %q", registered, describedNames, api)
	}
	all, described := All(nil, nil, nil), Describers()
	for e := range drivers {
		if all[e] == nil || described[e] == nil {
			t.Fatalf("%s: driver %v, describer %v", e, all[e], described[e])
		}
		if all[e].Facts() != described[e].Facts() || described[e].Facts() != FactsOf(e) {
			t.Errorf("%s: driver's facts %+v, describer's %+v, FactsOf %+v", e, all[e].Facts(), described[e].Facts(), FactsOf(e))
		}
	}
}

// Every engine states its facts, and each engine's Facts are its own (the Percona flavours
// differ in their server container).
func TestFacts(t *testing.T) {
	described := Describers()
	cases := map[v1.Engine]struct {
		creates, foreign, own bool
		container             string
	}{
		v1.EngineBuiltin:              {creates: true, own: true, container: builtin.ServerContainer},
		v1.EngineExternal:             {},
		v1.EnginePerconaServer:        {creates: true, foreign: true, container: "mysql"},
		v1.EnginePerconaXtraDBCluster: {creates: true, foreign: true, container: "pxc"},
	}
	if len(described) != len(cases) {
		t.Fatalf("%d engines, %d with expected facts", len(described), len(cases))
	}
	for e, want := range cases {
		f := described[e].Facts()
		if f.CreatesServer != want.creates || f.HoldsNode != want.creates || f.ForeignPods != want.foreign ||
			f.OwnPod != want.own || f.ImageIsServer != want.own || f.ServerContainer != want.container {
			t.Errorf("%s: facts %+v", e, f)
		}
	}
	if FactsOf("") != FactsOf(v1.EngineBuiltin) {
		t.Error("an unset engine is not builtin's")
	}
}

// PlannedObjects: what Provision would create, none for a server the operator does not create;
// ServerConfig: a my.cnf for every server the operator configures.
func TestPlannedObjects(t *testing.T) {
	run := &v1.BenchmarkRun{}
	run.Name, run.Namespace = "r", "ns"
	run.Spec.Workload = v1.Workload{Script: "oltp_point_select"}
	run.Spec.Ladder.Threads = []int32{1}
	for e, d := range Describers() {
		target := v1.Target{Name: "t", Engine: e, Image: "mariadb:11"}
		objs, err := d.PlannedObjects(run, target, "pw")
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		if (len(objs) > 0) != d.Facts().CreatesServer {
			t.Errorf("%s: %d planned objects, creates its server: %v", e, len(objs), d.Facts().CreatesServer)
		}
		cnf, what, err := d.ServerConfig(run, target)
		if err != nil || what == "" || (cnf != "") != d.Facts().CreatesServer {
			t.Errorf("%s: ServerConfig %q, %q, %v", e, cnf, what, err)
		}
	}
}

// ListHoldings lists the builtin servers once, with the operator's labels, and passes on what
// the engine says of them: a server of a run that exists, not one of a run that is gone.
func TestListHoldings(t *testing.T) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := v1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	run := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "bench", UID: "run-uid"}}
	run.Spec.Targets = []v1.Target{{Name: "mariadb", Image: "mariadb:10.11"}}
	run.Spec.Workload = v1.Workload{Script: "oltp_point_select"}
	run.Spec.Ladder.Threads = []int32{1}
	sts := builtin.StatefulSet(run, run.Spec.Targets[0])
	sts.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(run, v1.GroupVersion.WithKind("BenchmarkRun"))}
	gone := builtin.StatefulSet(&v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: "bench"}}, run.Spec.Targets[0])
	gone.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1.GroupVersion.String(), Kind: "BenchmarkRun", Name: "gone",
		UID: "gone-uid", Controller: new(bool)}}
	*gone.OwnerReferences[0].Controller = true
	unlabelled := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "bench"}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(sts, gone, unlabelled).Build()
	runs := map[client.ObjectKey]*v1.BenchmarkRun{client.ObjectKeyFromObject(run): run}
	got, err := ListHoldings(context.Background(), c, All(c, c, s), runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Run != run || got[0].Target != "mariadb" || got[0].Object != "StatefulSet "+sts.Name ||
		got[0].NodeSelector[specs.PoolLabel] != specs.PoolDatabase {
		t.Errorf("holdings %+v, want the run's one StatefulSet on the database pool", got)
	}
}
