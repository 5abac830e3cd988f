package v1alpha1_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

func named(name string, script v1.OLTPScript, args ...string) v1.NamedWorkload {
	return v1.NamedWorkload{Name: name, Script: script, Tables: 2, TableSize: 100, ExtraArgs: args}
}

func workloadNames(ws []v1.RunWorkload) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Name)
	}
	return out
}

func TestOrderedWorkloadsPutReadsFirst(t *testing.T) {
	spec := v1.BenchmarkRunSpec{Workloads: []v1.NamedWorkload{
		named("ins", "oltp_insert"), named("pts", "oltp_point_select"), named("rw", "oltp_read_write"),
		{Name: "lua", CustomScript: &v1.ConfigMapKeySelector{Name: "c", Key: "k"}},
		named("ro", "oltp_read_only"),
	}}
	if got, want := workloadNames(spec.OrderedWorkloads()), []string{"pts", "ro", "ins", "rw", "lua"}; !slices.Equal(got, want) {
		t.Errorf("order = %v, want %v (reads in their order, then writes and custom scripts in theirs)", got, want)
	}
	preset := v1.BenchmarkRunSpec{Preset: &v1.Preset{Name: v1.PresetSysbenchOLTPMicro, Tables: 8, TableSize: 1000,
		ExtraArgs: []string{"--rand-type=uniform"}}}
	ws := preset.OrderedWorkloads()
	want := []string{"point-select", "random-points", "random-ranges", "read-only", "read-write", "write-only",
		"update-index", "update-non-index", "insert", "delete"}
	if got := workloadNames(ws); !slices.Equal(got, want) {
		t.Fatalf("preset = %v, want %v", got, want)
	}
	for i, w := range ws {
		if w.Tables != 8 || w.TableSize != 1000 || !slices.Equal(w.ExtraArgs, []string{"--rand-type=uniform"}) {
			t.Errorf("preset workload %s = %+v, want the preset's data and args", w.Name, w.Workload)
		}
		if w.Writes() != (i >= 4) {
			t.Errorf("preset workload %s: Writes() = %v", w.Name, w.Writes())
		}
	}
	single := v1.BenchmarkRunSpec{Workload: v1.Workload{Script: "oltp_insert"}}
	if ws := single.OrderedWorkloads(); len(ws) != 1 || ws[0].Name != "" || ws[0].Script != "oltp_insert" {
		t.Errorf("a single workload is %+v, want itself without a name", ws)
	}
}

// positions lists (workload name, threads, repetition) of every step in measuring order.
func positions(spec v1.BenchmarkRunSpec) []string {
	ws := spec.OrderedWorkloads()
	var out []string
	for i := range spec.StepCount() {
		w, rung, rep := spec.StepPosition(i)
		out = append(out, fmt.Sprintf("%s%d/%d", ws[w].Name, spec.Ladder.Threads[rung], rep))
	}
	return out
}

func TestStepPositionInterleavesWorkloadsByRound(t *testing.T) {
	spec := v1.BenchmarkRunSpec{
		Workloads:   []v1.NamedWorkload{named("w", "oltp_write_only"), named("r", "oltp_point_select")},
		Ladder:      v1.Ladder{Threads: []int32{1, 2, 4}},
		Repetitions: ptr.To[int32](2),
	}
	want := "r1/1 r2/1 r4/1 w1/1 w2/1 w4/1 r4/2 r2/2 r1/2 w4/2 w2/2 w1/2"
	if got := strings.Join(positions(spec), " "); got != want {
		t.Errorf("order\n got %s\nwant %s", got, want)
	}
	// One workload: the order runs had before workloads existed.
	one := v1.BenchmarkRunSpec{Workload: v1.Workload{Script: "oltp_point_select"}, Ladder: spec.Ladder, Repetitions: ptr.To[int32](3)}
	if got, want := strings.Join(positions(one), " "), "1/1 2/1 4/1 4/2 2/2 1/2 1/3 2/3 4/3"; got != want {
		t.Errorf("single-workload order\n got %s\nwant %s", got, want)
	}
	for i := range one.StepCount() {
		rung, rep := one.LadderPosition(i)
		if _, r2, rep2 := one.StepPosition(i); r2 != rung || rep2 != rep {
			t.Errorf("step %d: LadderPosition and StepPosition disagree", i)
		}
	}
}

// fresh lists the steps (as positions) that measure freshly prepared data, with the reason.
func fresh(spec v1.BenchmarkRunSpec) []string {
	pos := positions(spec)
	var out []string
	for i := range spec.StepCount() {
		if ok, why := spec.FreshDataBefore(i); ok {
			out = append(out, pos[i]+": "+why)
		}
	}
	return out
}

func TestFreshDataBefore(t *testing.T) {
	ladder := v1.Ladder{Threads: []int32{1, 2}}
	cases := []struct {
		name string
		spec v1.BenchmarkRunSpec
		want []string
	}{
		{"one workload, even one that writes, is prepared once",
			v1.BenchmarkRunSpec{Workload: v1.Workload{Script: "oltp_delete"}, Ladder: ladder, Repetitions: ptr.To[int32](3)}, nil},
		{"reads on one shape share one prepare",
			v1.BenchmarkRunSpec{Workloads: []v1.NamedWorkload{named("a", "oltp_point_select"), named("b", "oltp_read_only",
				"--range-size=5")}, Ladder: ladder, Repetitions: ptr.To[int32](2)}, nil},
		{"a write, then another write, then the next round's read",
			v1.BenchmarkRunSpec{Workloads: []v1.NamedWorkload{named("ins", "oltp_insert"), named("del", "oltp_delete"),
				named("pts", "oltp_point_select")}, Ladder: ladder, Repetitions: ptr.To[int32](2)},
			[]string{"del1/1: written by ins", "pts2/2: written by del", "del2/2: written by ins"}},
		{"another shape is prepared, then its writes dirty it",
			v1.BenchmarkRunSpec{Workloads: []v1.NamedWorkload{named("pts", "oltp_point_select"),
				named("nosec", "oltp_point_select", "--create-secondary=off"), named("upd", "oltp_update_index")}, Ladder: ladder},
			[]string{"nosec1/1: its data has another shape", "upd1/1: its data has another shape"}},
		{"skipPrepare data is the user's: never prepared",
			v1.BenchmarkRunSpec{Workloads: []v1.NamedWorkload{
				{Name: "w", Script: "oltp_write_only", SkipPrepare: true},
				{Name: "r", Script: "oltp_point_select", SkipPrepare: true}},
				Ladder: ladder, Repetitions: ptr.To[int32](2)}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := fresh(tc.spec); !slices.Equal(got, tc.want) {
				t.Errorf("fresh data before\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestDataShape(t *testing.T) {
	base := v1.Workload{Script: "oltp_point_select", Tables: 4, TableSize: 100}
	same := base
	same.Script, same.ExtraArgs = "oltp_read_write", []string{"--range-size=3", "--skip-trx=on"}
	if base.DataShape() != same.DataShape() {
		t.Errorf("options of the run alone changed the shape: %q vs %q", base.DataShape(), same.DataShape())
	}
	other := base
	other.ExtraArgs = []string{"--auto_inc=off"}
	if base.DataShape() == other.DataShape() {
		t.Errorf("--auto_inc=off changes the tables but not the shape %q", base.DataShape())
	}
	if (v1.Workload{Client: v1.ClientMysqlslap}).DataShape() != "" {
		t.Errorf("mysqlslap prepares nothing but has a shape")
	}
}

// A run of only spec.workloads leaves spec.workload out of its JSON, so the API server's
// defaults do not make an empty workload that its own rules refuse.
func TestUnsetWorkloadIsOmitted(t *testing.T) {
	data, err := json.Marshal(v1.BenchmarkRunSpec{Workloads: []v1.NamedWorkload{named("a", "oltp_point_select")}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), `"workload":`) {
		t.Errorf("spec JSON has a workload: %s", data)
	}
}
