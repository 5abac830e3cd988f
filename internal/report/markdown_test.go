package report

import (
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// People read report.md: three significant digits, thousands separators, no digits the noise
// between repetitions makes meaningless.
func TestReadable(t *testing.T) {
	for v, want := range map[float64]string{
		0:         "0",
		0.0123:    "0.0123",
		0.103:     "0.103",
		0.3:       "0.300",
		1.234:     "1.23",
		12.345:    "12.3",
		99.96:     "100",
		123.456:   "123",
		12345.678: "12,346",
		320005.33: "320,005",
		1234567.8: "1,234,568",
		-1234.5:   "-1,235",
	} {
		if got := readable(v); got != want {
			t.Errorf("readable(%v) = %q, want %q", v, got, want)
		}
	}
}

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
