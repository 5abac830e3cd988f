package sysbench

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
)

func TestOverDuration(t *testing.T) {
	for _, tc := range []struct {
		step     time.Duration
		measured float64
		over     bool
	}{
		{10 * time.Second, 10.004, false},
		{10 * time.Second, 11, false}, // the 1 s floor
		{10 * time.Second, 11.01, true},
		{10 * time.Second, 18.541, true}, // one event of 18.5 s in a 10 s step
		{time.Second, 1.9, false},
		{time.Second, 2.1, true},
		{300 * time.Second, 302.9, false}, // 1 % of the step: 3 s
		{300 * time.Second, 303.1, true},
		{24 * time.Hour, 86400 + 864, false},
		{24 * time.Hour, 86400 + 865, true},
		{0, 5, false}, // no duration: nothing to outlast
	} {
		if got := OverDuration(load.Final{DurationSeconds: tc.measured}, tc.step); got != tc.over {
			t.Errorf("%.3f s of a %s step (tolerance %s): over %v, want %v", tc.measured, tc.step, OverrunTolerance(tc.step), got, tc.over)
		}
	}
}

func TestMeasuredNothing(t *testing.T) {
	for name, tc := range map[string]struct {
		f      load.Final
		phrase string // "": measured
	}{
		"queries": {f: load.Final{Events: 10, Queries: load.Counts{Total: 20}, DurationSeconds: 10.001}},
		"no query": {f: load.Final{Events: 1, DurationSeconds: 18.541},
			phrase: "sysbench counted 1 event and 0 queries in 18.541 s (a 10s step): the script's event() ran no SQL"},
		"no event": {f: load.Final{Queries: load.Counts{Total: 3}, DurationSeconds: 10.2},
			phrase: "sysbench counted 0 events and 3 queries in 10.200 s (a 10s step): no event of the script completed"},
	} {
		t.Run(name, func(t *testing.T) {
			f := MeasuredNothing(tc.f, 10*time.Second)
			switch {
			case tc.phrase == "" && f != nil:
				t.Errorf("failure %+v for a step that ran queries", f)
			case tc.phrase != "" && (f == nil || !f.Deterministic || f.Code != 0 || !strings.Contains(f.Reason, tc.phrase)):
				t.Errorf("failure %+v, want a deterministic one saying %q", f, tc.phrase)
			}
		})
	}
}

// sysbench's own end-of-step overrun on normal steps (testdata/overrun, written by its
// measure.sh) stays under the tolerance: a normal step is flagged only when one of its events
// itself took longer than the tolerance (round 2 has one: an oltp_update_index event of 5 s at
// 128 threads, which made its 10 s step measure 13.6 s).
func TestToleranceCoversSysbenchsOwnOverrun(t *testing.T) {
	file, err := os.Open(filepath.Join("testdata", "overrun", "results.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = file.Close() }()
	steps, flagged, largest := 0, 0, 0.0
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		f := strings.Fields(sc.Text())
		if len(f) != 5 {
			t.Fatalf("line %q: want script threads time total max", sc.Text())
		}
		secs, err1 := strconv.Atoi(f[2])
		total, err2 := strconv.ParseFloat(f[3], 64)
		longestMs, err3 := strconv.ParseFloat(f[4], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("line %q: %v %v %v", sc.Text(), err1, err2, err3)
		}
		step := time.Duration(secs) * time.Second
		steps++
		eventWithin := longestMs/1000 <= OverrunTolerance(step).Seconds()
		if eventWithin {
			largest = max(largest, total-step.Seconds())
		}
		if OverDuration(load.Final{DurationSeconds: total}, step) {
			flagged++
			if eventWithin {
				t.Errorf("a normal step whose events all ended within the tolerance is flagged: %s", sc.Text())
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if steps < 180 || largest <= 0 || flagged != 1 {
		t.Errorf("%d steps, %d flagged, the others overran by at most %.3f s: want the 180 measured, the one with a 5 s event flagged",
			steps, flagged, largest)
	}
	t.Logf("%d normal steps: %d flagged; overrun at most %.3f s where no event outlasted the tolerance", steps, flagged, largest)
}
