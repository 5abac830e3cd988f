package format

import "testing"

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
		if got := Readable(v); got != want {
			t.Errorf("Readable(%v) = %q, want %q", v, got, want)
		}
	}
}
