package mysqlslap

import (
	"strings"
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

func TestWorkloadLine(t *testing.T) {
	doc := &results.Doc{Ladder: results.Ladder{StepDurationSeconds: 60}}
	doc.Workload.Mysqlslap = &results.MysqlslapWorkload{Queries: 10000, Iterations: 1}
	if got, want := (Client{}).WorkloadLine(doc), "mysqlslap, 10,000 queries per iteration over all clients, 1 iteration(s) per step, "+
		"client from each target's server image, at most 60 s per step"; got != want {
		t.Errorf("WorkloadLine = %q\nwant %q", got, want)
	}
	// A document that names mysqlslap without its settings reads as sysbench's would.
	doc.Workload = results.Workload{Client: "mysqlslap", Script: "oltp_point_select"}
	if got := (Client{}).WorkloadLine(doc); !strings.HasPrefix(got, "sysbench `oltp_point_select`") {
		t.Errorf("WorkloadLine without settings = %q", got)
	}
}

func TestRunLabels(t *testing.T) {
	l := Client{}.RunLabels(v1.Workload{Client: v1.ClientMysqlslap, Mysqlslap: &v1.MysqlslapWorkload{LoadType: "key"}}, nil)
	if l.Workload != "mysqlslap:key" || l.Tables != nil || l.TableSize != nil {
		t.Errorf("labels %+v", l)
	}
}
