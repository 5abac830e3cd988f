package report

import (
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// The level is what the interval achieves: the range of n samples covers the median with
// 1 - 2·(1/2)^n, and results stored without a level get it from n.
func TestCILevel(t *testing.T) {
	for _, tc := range []struct {
		stored float64
		n      int32
		want   string
	}{
		{0.75, 3, "75 %"},
		{0.875, 4, "87.5 %"},
		{0.9375, 5, "93.75 %"},
		{0.96875, 6, "96.88 %"},
		{0, 2, "50 %"},
		{0, 3, "75 %"},
		{0, 5, "93.75 %"},
		{0, 8, "≥ 95 %"},
		{0, 1, missingCell},
	} {
		if got := ciLevel(v1alpha1.MetricStats{CIConfidence: tc.stored}, tc.n); got != tc.want {
			t.Errorf("ciLevel(%v, n=%d) = %q, want %q", tc.stored, tc.n, got, tc.want)
		}
	}
}
