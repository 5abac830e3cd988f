package run

import (
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// After a server restart a sysbench target prepares again when its tables are gone; a mysqlslap
// target has none to lose and goes back to measuring.
func TestAfterRestartProbe(t *testing.T) {
	sysbench := &v1.BenchmarkRun{Spec: v1.BenchmarkRunSpec{Workload: v1.Workload{Script: "oltp_point_select", Tables: 2}}}
	slap := &v1.BenchmarkRun{Spec: v1.BenchmarkRunSpec{Workload: v1.Workload{Client: v1.ClientMysqlslap}}}
	for _, tc := range []struct {
		name  string
		run   *v1.BenchmarkRun
		found int32
		want  v1.TargetPhase
	}{
		{"sysbench, tables kept", sysbench, 2, v1.TargetRunning},
		{"sysbench, tables gone", sysbench, 0, v1.TargetPreparing},
		{"mysqlslap", slap, 0, v1.TargetRunning},
	} {
		if got, why := afterRestartProbe(tc.run, &v1.ServerRestart{During: "s02"}, tc.found); got != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, got, why, tc.want)
		}
	}
}
