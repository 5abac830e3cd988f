package main

import "testing"

func TestMemoryLimit(t *testing.T) {
	cases := []struct {
		container, gomemlimit string
		want                  int64
		ok                    bool
	}{
		{"268435456", "", 241591905, true}, // 256Mi -> 90 % (in tenths, rounded down)
		{"268435456", "200MiB", 0, false},  // GOMEMLIMIT set by the user wins
		{"", "", 0, false},                 // no limit
		{"0", "", 0, false},
		{"not-a-number", "", 0, false},
	}
	for _, c := range cases {
		got, ok := memoryLimit(c.container, c.gomemlimit)
		if got != c.want || ok != c.ok {
			t.Errorf("memoryLimit(%q, %q) = %d, %v; want %d, %v", c.container, c.gomemlimit, got, ok, c.want, c.ok)
		}
	}
}
