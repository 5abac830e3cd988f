package percona

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

func perconaRun() *v1.BenchmarkRun {
	return &v1.BenchmarkRun{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1.GroupVersion.String(), Kind: "BenchmarkRun"},
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "bench", UID: "run-uid"},
		Spec: v1.BenchmarkRunSpec{
			Workload: v1.Workload{Script: "oltp_read_only", Tables: 4},
			Ladder:   v1.Ladder{Threads: []int32{1, 4, 16}},
		},
	}
}

func TestObjects(t *testing.T) {
	run := perconaRun()
	for _, e := range []v1.Engine{v1.EnginePerconaServer, v1.EnginePerconaXtraDBCluster} {
		tg := v1.Target{Name: "p", Engine: e}
		pw := map[string]string{}
		for _, u := range SystemUsers[e] {
			pw[u] = u + "-pw"
		}
		objs, err := Objects(e, run, tg, pw, "bench-pw")
		if err != nil {
			t.Fatal(err)
		}
		list := objs.List()
		if len(list) != 3 || list[0] != objs.Users || list[1] != objs.Password || list[2] != objs.Server {
			t.Errorf("%s: list %v", e, list)
		}
		if objs.Users.StringData["root"] != "root-pw" || objs.Password.StringData[PasswordKey] != "bench-pw" {
			t.Errorf("%s: passwords %v %v", e, objs.Users.StringData, objs.Password.StringData)
		}
		if want := map[v1.Engine]string{v1.EnginePerconaServer: "PerconaServerMySQL", v1.EnginePerconaXtraDBCluster: "PerconaXtraDBCluster"}[e]; objs.Server.GetKind() != want {
			t.Errorf("%s: server %s", e, objs.Server.GetKind())
		}
	}
	if _, err := Objects(v1.EngineBuiltin, run, v1.Target{Name: "b"}, nil, ""); err == nil {
		t.Error("builtin: no error")
	}
}

// synchWaits adds the wait/synch instruments to the Percona resource's configuration too.
func TestMyCnfSynchWaits(t *testing.T) {
	run := perconaRun()
	target := v1.Target{Name: "ps", Engine: v1.EnginePerconaServer, SynchWaits: true}
	if p, err := MyCnf(run, target); err != nil || !strings.Contains(p, "wait/synch/%=ON") {
		t.Errorf("MyCnf with synchWaits = %q, %v", p, err)
	}
	target.SynchWaits = false
	if p, err := MyCnf(run, target); err != nil || strings.Contains(p, "wait/synch") {
		t.Errorf("MyCnf without synchWaits = %q, %v", p, err)
	}
}
