package load

import (
	"strings"
	"testing"
)

func TestStepResultPercentile(t *testing.T) {
	f := Final{Command: "run", Threads: 4, Percentile: 99, LatencyMs: LatencyMs{Min: 1, Avg: 2, Pct: 9, Max: 10}}
	if r := f.StepResult(); r.Latency.P95Ms != 0 || r.Latency.MaxMs != 10 {
		t.Errorf("a p99 run filled P95Ms: %+v", r.Latency)
	}
}

// An output keeps its error lines within their budget, each cut to MaxFatalLine.
func TestAddFatalIsCapped(t *testing.T) {
	var o Output
	long := strings.Repeat("x", 2*MaxFatalLine)
	for range 2 * MaxFatalBytes / MaxFatalLine {
		o.AddFatal(long)
	}
	if o.fatalBytes > MaxFatalBytes || len(o.Fatal) == 0 || len(o.Fatal[0]) != MaxFatalLine {
		t.Errorf("%d lines, %d bytes kept (budget %d), the first of %d bytes", len(o.Fatal), o.fatalBytes, MaxFatalBytes, len(o.Fatal[0]))
	}
	o.ClearFatal()
	if o.Fatal != nil || o.fatalBytes != 0 {
		t.Errorf("ClearFatal left %d lines, %d bytes", len(o.Fatal), o.fatalBytes)
	}
}
