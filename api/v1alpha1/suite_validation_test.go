package v1alpha1_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// suiteRun is validRun with two named workloads instead of spec.workload.
func suiteRun(name string) *v1.BenchmarkRun {
	r := validRun(name)
	r.Spec.Workload = v1.Workload{}
	r.Spec.Workloads = []v1.NamedWorkload{
		{Name: "points", Script: "oltp_point_select", Tables: 4, TableSize: 10000},
		{Name: "rw", Script: "oltp_read_write", Tables: 4, TableSize: 10000,
			ExtraArgs: []string{"--range-size=10"}},
	}
	return r
}

func TestValidationAcceptsSuites(t *testing.T) {
	ctx := context.Background()
	r := suiteRun("suite-workloads")
	if err := k8s.Create(ctx, r); err != nil {
		t.Fatalf("a run of two workloads was refused: %v", err)
	}
	// The workloads get the workload's defaults.
	if got := r.Spec.Workloads[0].Client; got != v1.ClientSysbench {
		t.Errorf("workloads[0].client = %q, want the default sysbench", got)
	}
	p := validRun("suite-preset")
	p.Spec.Workload = v1.Workload{}
	p.Spec.Preset = &v1.Preset{Name: v1.PresetSysbenchOLTPMicro, ExtraArgs: []string{"--rand-type=uniform"}}
	if err := k8s.Create(ctx, p); err != nil {
		t.Fatalf("a run of the sysbench-oltp-micro preset was refused: %v", err)
	}
	if p.Spec.Preset.Tables != 1 || p.Spec.Preset.TableSize != 10000 {
		t.Errorf("preset data = %d x %d, want the defaults 1 x 10000", p.Spec.Preset.Tables, p.Spec.Preset.TableSize)
	}
	// 2 targets x 10 workloads x 4 threads x 6 repetitions = 480 steps: within the budget.
	p = validRun("suite-preset-reps")
	p.Spec.Workload = v1.Workload{}
	p.Spec.Preset = &v1.Preset{Name: v1.PresetSysbenchOLTPMicro}
	p.Spec.Repetitions = ptr.To[int32](6)
	if err := k8s.Create(ctx, p); err != nil {
		t.Fatalf("a preset run of 480 steps was refused: %v", err)
	}
}

func TestValidationRejectsBadSuites(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(r *v1.BenchmarkRun)
		want   string
	}{
		{"neither workload nor workloads nor preset", func(r *v1.BenchmarkRun) { r.Spec.Workloads = nil },
			"set exactly one of spec.workload (one workload), spec.workloads"},
		{"workload and workloads", func(r *v1.BenchmarkRun) { r.Spec.Workload = v1.Workload{Script: "oltp_point_select"} },
			"set exactly one of spec.workload (one workload), spec.workloads"},
		{"workloads and preset", func(r *v1.BenchmarkRun) { r.Spec.Preset = &v1.Preset{Name: v1.PresetSysbenchOLTPMicro} },
			"set exactly one of spec.workload (one workload), spec.workloads"},
		{"duplicate workload names", func(r *v1.BenchmarkRun) { r.Spec.Workloads[1].Name = "points" },
			"workload names must be unique"},
		{"a workload name that is not a DNS label", func(r *v1.BenchmarkRun) { r.Spec.Workloads[1].Name = "Read_Write" },
			"spec.workloads[1].name"},
		{"a workload without a script", func(r *v1.BenchmarkRun) { r.Spec.Workloads[1].Script = "" },
			"set exactly one of workload.script"},
		{"a workload setting an owned option", func(r *v1.BenchmarkRun) { r.Spec.Workloads[1].ExtraArgs = []string{"--threads=4"} },
			"extraArgs must not set options the operator owns"},
		{"two clients", func(r *v1.BenchmarkRun) {
			r.Spec.Workloads[1] = v1.NamedWorkload{Name: "slap", Client: v1.ClientMysqlslap}
		}, "every workload of a run uses the same client"},
		{"an unknown preset", func(r *v1.BenchmarkRun) {
			r.Spec.Workloads = nil
			r.Spec.Preset = &v1.Preset{Name: "tpcc-ish"}
		}, `spec.preset.name: Unsupported value: "tpcc-ish"`},
		{"a preset setting an owned option", func(r *v1.BenchmarkRun) {
			r.Spec.Workloads = nil
			r.Spec.Preset = &v1.Preset{Name: v1.PresetSysbenchOLTPMicro, ExtraArgs: []string{"--table-size=5"}}
		}, "preset.extraArgs must not set options the operator owns"},
		// 2 targets x 2 workloads x 4 threads x 10 repetitions = 160: raise the ladder to 64 rungs.
		{"workloads over the step budget", func(r *v1.BenchmarkRun) {
			r.Spec.Ladder.Threads = nil
			for i := range 40 {
				r.Spec.Ladder.Threads = append(r.Spec.Ladder.Threads, int32(i+1))
			}
			r.Spec.Repetitions = ptr.To[int32](4)
		}, "targets × workloads × ladder.threads × repetitions is 2 × 2 × 40 × 4 = 640 steps, more than the 512"},
		{"a preset over the step budget", func(r *v1.BenchmarkRun) {
			r.Spec.Workloads = nil
			r.Spec.Preset = &v1.Preset{Name: v1.PresetSysbenchOLTPMicro}
			r.Spec.Ladder.Threads = []int32{1, 2, 4, 8, 16, 32, 64}
			r.Spec.Repetitions = ptr.To[int32](4)
		}, "targets × preset workloads × ladder.threads × repetitions is 2 × 10 × 7 × 4 = 560 steps"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := suiteRun(fmt.Sprintf("bad-suite-%d", i))
			tc.mutate(r)
			err := k8s.Create(context.Background(), r)
			if err == nil {
				t.Fatalf("accepted; want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}
