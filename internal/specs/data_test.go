package specs

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

func TestCheckDataFits(t *testing.T) {
	cases := []struct {
		name          string
		tables        int32
		tableSize     int64
		size          string
		wantErr       []string
		noStorageSpec bool
	}{
		{name: "emptyDir: nothing to check", tables: 10000, tableSize: 1000000000, noStorageSpec: true},
		{name: "fits", tables: 4, tableSize: 10000, size: "1Gi"},
		{name: "exactly 200 bytes per row", tables: 1, tableSize: 1024 * 1024 / 200 * 1, size: "1Mi"},
		{name: "far beyond", tables: 10000, tableSize: 1000000000, size: "20Gi",
			wantErr: []string{"storage.size 20Gi", "10000000000000 rows", "at least 1.8Pi", "raise storage.size to at least 2.3Pi"}},
		{name: "just beyond", tables: 10, tableSize: 1000000, size: "1Gi",
			wantErr: []string{"10000000 rows", "at least 1.9Gi", "lower tables or tableSize"}},
		{name: "defaults: 1 table of 10000 rows", size: "1Mi", wantErr: []string{"10000 rows"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := v1.BenchmarkRunSpec{Workload: v1.Workload{Tables: tc.tables, TableSize: tc.tableSize}}
			if !tc.noStorageSpec {
				spec.Storage = &v1.Storage{Size: resource.MustParse(tc.size)}
			}
			err := CheckDataFits(spec)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("CheckDataFits = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatal("CheckDataFits = nil, want an error")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
