package sink

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/internal/report"
)

// mergeBatch keeps the results ConfigMap under its budget by leaving out server counters, never
// series, and counts a key it replaces once.
func TestMergeBatch(t *testing.T) {
	series := func(th int32) string { return report.SeriesKey("t", th, 1) }
	server := func(th int32) string { return report.ServerKey("t", th, 1) }
	size := func(m map[string]string) int {
		n := 0
		for k, v := range m {
			n += len(k) + len(v)
		}
		return n
	}
	val := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name        string
		data, batch map[string]string
		limit       int
		wantLeft    []string
		wantChanged bool
	}{
		{"everything fits", map[string]string{}, map[string]string{series(1): val(10), server(1): val(10)}, 1000, nil, true},
		{"nothing new", map[string]string{series(1): val(10)}, map[string]string{series(1): val(10)}, 1000, nil, false},
		{"server left out, series kept past the limit", map[string]string{series(1): val(100)},
			map[string]string{series(2): val(100), server(2): val(100)}, 150, []string{server(2)}, true},
		{"the server keys that fit go in, in key order", map[string]string{},
			map[string]string{server(1): val(100), server(2): val(100), server(4): val(100)},
			2 * (len(server(1)) + 100), []string{server(4)}, true},
		{"a replaced key counts once", map[string]string{server(1): val(100)},
			map[string]string{server(1): val(110)}, len(server(1)) + 110, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := maps.Clone(tc.data)
			changed, left := mergeBatch(data, tc.batch, tc.limit)
			if changed != tc.wantChanged || !slices.Equal(left, tc.wantLeft) {
				t.Errorf("changed %v, left %v; want %v, %v", changed, left, tc.wantChanged, tc.wantLeft)
			}
			for k, v := range tc.batch {
				if slices.Contains(left, k) {
					if _, in := data[k]; in && tc.data[k] != data[k] {
						t.Errorf("%s was left out but changed", k)
					}
					continue
				}
				if data[k] != v {
					t.Errorf("%s not stored", k)
				}
			}
			hasSeries := false
			for k := range tc.batch {
				hasSeries = hasSeries || strings.HasPrefix(k, "series.")
			}
			if !hasSeries && size(data) > tc.limit {
				t.Errorf("%d bytes stored, over the %d limit", size(data), tc.limit)
			}
		})
	}
}
