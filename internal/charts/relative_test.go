package charts

import (
	"testing"

	v1alpha1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// A relative chart's points carry the interval of each ratio, paired by round when both lines
// are targets of one interleaved run: a round that was slow for both cancels.
func TestRelativeIntervals(t *testing.T) {
	line := func(doc *results.Doc, label string, values ...float64) series {
		pt := point{threads: 8, value: values[2]}
		for i, v := range values {
			pt.samples = append(pt.samples, v)
			pt.reps = append(pt.reps, int32(i+1))
		}
		return series{label: label, doc: doc, points: []point{pt}}
	}
	// Rounds that move both targets together by ±20 %, the second 10 % below the first.
	base := []float64{1000, 1200, 800, 1100, 900}
	other := []float64{900, 1080, 720, 990, 810}
	for _, tc := range []struct {
		order        string
		paired, near bool
	}{{string(v1alpha1.OrderInterleaved), true, true}, {string(v1alpha1.OrderSequential), false, false}} {
		doc := &results.Doc{Ladder: results.Ladder{Order: tc.order}}
		a, b := line(doc, "a", base...), line(doc, "b", other...)
		out, _ := relative([]series{a, b}, a)
		if len(out) != 2 || out[0].points[0].hasCI {
			t.Fatalf("%s: %+v: want both lines, no interval on the reference", tc.order, out)
		}
		p := out[1].points[0]
		if !p.hasCI || p.value != 0.9 || p.low > 0.9 || p.high < 0.9 {
			t.Fatalf("%s: %+v: want 0.9 inside its interval", tc.order, p)
		}
		if near := p.high-p.low < 0.01; near != tc.near {
			t.Errorf("%s: interval [%.3f, %.3f]: paired by round %v, want %v", tc.order, p.low, p.high, near, tc.paired)
		}
		if within := p.low <= 1 && p.high >= 1; within == tc.paired {
			t.Errorf("%s: interval [%.3f, %.3f] within noise %v", tc.order, p.low, p.high, within)
		}
	}
	// One repetition: a ratio without an interval.
	one := &results.Doc{}
	single := func(label string, v float64) series {
		return series{label: label, doc: one, points: []point{{threads: 8, value: v, samples: []float64{v}, reps: []int32{1}}}}
	}
	out, _ := relative([]series{single("a", 1000), single("b", 900)}, single("a", 1000))
	if p := out[1].points[0]; p.hasCI || p.value != 0.9 {
		t.Errorf("one repetition: %+v", p)
	}
}
