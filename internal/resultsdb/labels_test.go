package resultsdb_test

import (
	"fmt"
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/resultsdb"
)

// The runs row labels a run's workload by its client: the script and tables for sysbench (from
// results.json when there is one), the load type for mysqlslap, the warehouses for go-tpc; and
// the metric its cells' throughput is.
func TestBuildRunLabelsByClient(t *testing.T) {
	for _, tc := range []struct {
		name     string
		workload v1.Workload
		noDoc    bool
		want     string
	}{
		{"sysbench", v1.Workload{Script: "oltp_read_write", Tables: 4, TableSize: 10000}, false,
			"client=sysbench workload=oltp_read_write metric=qps tables_count=4 table_size=10000"},
		{"sysbench without results.json", v1.Workload{Script: "oltp_point_select", Tables: 8, TableSize: 500}, true,
			"client=sysbench workload=oltp_point_select metric=qps tables_count=8 table_size=500"},
		{"sysbench custom script", v1.Workload{CustomScript: &v1.ConfigMapKeySelector{Name: "lua", Key: "bench.lua"}, Tables: 2, TableSize: 10}, true,
			"client=sysbench workload=custom:lua/bench.lua metric=qps tables_count=2 table_size=10"},
		{"mysqlslap", v1.Workload{Client: v1.ClientMysqlslap, Mysqlslap: &v1.MysqlslapWorkload{LoadType: "read"}}, false,
			"client=mysqlslap workload=mysqlslap:read metric=qps tables_count=<nil> table_size=<nil>"},
		{"go-tpc", v1.Workload{Client: v1.ClientGoTPC, TPCC: &v1.TPCCWorkload{Warehouses: 12}}, false,
			"client=go-tpc workload=tpcc:12-warehouses metric=tpmC tables_count=<nil> table_size=<nil>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, doc := fixture(t, uid(1), shape{targets: 1, threads: 1, reps: 1}, 1)
			run.Spec.Workload = tc.workload
			if tc.noDoc {
				doc = nil
			}
			rec, err := resultsdb.Build(run, doc)
			if err != nil {
				t.Fatal(err)
			}
			col := map[string]any{}
			for _, tb := range rec.Tables {
				if tb.Name == "runs" {
					for i, c := range tb.Columns {
						col[c] = tb.Rows[0][i]
					}
				}
			}
			got := fmt.Sprintf("client=%v workload=%v metric=%v tables_count=%v table_size=%v", col["client"], col["workload"],
				col["metric"], col["tables_count"], col["table_size"])
			if got != tc.want {
				t.Errorf("runs row: %s\nwant: %s", got, tc.want)
			}
		})
	}
}
