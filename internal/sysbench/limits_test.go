package sysbench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/logtest"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// reports is a log of n interval reports: report i at second i+1 with TPS i, QPS 2i and
// ThreadsRunning i%7.
func reports(n int) io.Reader {
	var size int64
	line := func(i int) string {
		return fmt.Sprintf(`{"type":"interval","time":%d,"threads":8,"threadsRunning":%d,"tps":%d,"qps":%d}`, i+1, i%7, i, 2*i)
	}
	for i := range n {
		size += int64(len(line(i)) + 1)
	}
	return logtest.Lines(size, line)
}

// A log of up to MaxIntervals reports keeps them as they are; one with more is downsampled
// while read into points that each average the same number of reports (the last fewer), with
// their last report's time, so the whole step stays covered.
func TestSeriesDownsampledWhileReading(t *testing.T) {
	out, err := ParseOutput(reports(load.MaxIntervals))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Intervals) != load.MaxIntervals || out.IntervalsPerPoint != 1 || out.IntervalReports != load.MaxIntervals {
		t.Fatalf("%d points of %d reports from %d", len(out.Intervals), out.IntervalsPerPoint, out.IntervalReports)
	}
	if iv := out.Intervals[load.MaxIntervals-1]; iv.TPS != load.MaxIntervals-1 || iv.Time != load.MaxIntervals || iv.ThreadsRunning != (load.MaxIntervals-1)%7 {
		t.Errorf("last report %+v, want it as printed", iv)
	}

	// Two halvings: points of 4 reports, the last of 3.
	n := 2*load.MaxIntervals + 3
	out, err = ParseOutput(reports(n))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Intervals) != load.MaxIntervals/2+1 || out.IntervalsPerPoint != 4 || out.IntervalReports != n {
		t.Fatalf("%d points of %d reports from %d, want %d of 4 from %d", len(out.Intervals), out.IntervalsPerPoint,
			out.IntervalReports, load.MaxIntervals/2+1, n)
	}
	for j, p := range out.Intervals {
		lo, hi := 4*j, min(4*j+4, n) // the reports of point j
		mean := float64(lo+hi-1) / 2
		if p.TPS != mean || p.QPS != 2*mean || p.Time != float64(hi) || p.Threads != 8 || p.ThreadsRunning != int32((hi-1)%7) {
			t.Fatalf("point %d = %+v, want TPS %v, QPS %v at %d s", j, p, mean, 2*mean, hi)
		}
	}
}

// The error lines kept are the first ones, within their byte budget; a long one is cut. The
// classification still finds the first MySQL error.
func TestFatalLinesAreCapped(t *testing.T) {
	line := func(i int) string {
		if i == 0 {
			return "FATAL: error 2013: Lost connection to MySQL server during query " + strings.Repeat("q", 2<<20)
		}
		return "FATAL: mysql_drv_query() returned error 1213 (Deadlock found) for query 'UPDATE sbtest1 SET k=k+1 WHERE id=" +
			strconv.Itoa(i) + "'"
	}
	out, err := ParseOutput(logtest.Lines(64<<20, line))
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	for _, l := range out.Fatal {
		size += len(l) + load.LineCost
	}
	if size > load.MaxFatalBytes || len(out.Fatal) < 1000 {
		t.Errorf("%d error lines of %d bytes kept, want at most %d bytes and the first thousands", len(out.Fatal), size, load.MaxFatalBytes)
	}
	if len(out.Fatal[0]) != load.MaxFatalLine || !strings.HasPrefix(out.Fatal[0], "FATAL: error 2013: Lost connection") {
		t.Errorf("first line kept as %d bytes: %.80q", len(out.Fatal[0]), out.Fatal[0])
	}
	if f := Classify(1, out); f == nil || f.Code != 2013 {
		t.Errorf("classified as %+v, want error 2013", f)
	}

	// The error lines of a snapshot that never printed its server line are the step's, capped
	// alike.
	out, err = ParseOutput(io.MultiReader(strings.NewReader(`{"type":"serverBegin","version":1,"at":"end"}`+"\n"),
		logtest.Lines(16<<20, line)))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Fatal) < 1000 || len(out.Fatal) > load.MaxFatalBytes/(len(line(1))+load.LineCost) {
		t.Errorf("%d error lines kept of a snapshot that never ended", len(out.Fatal))
	}
}

// An output keeps MaxServerSnapshots snapshots, each bounded, and says why it left any out.
func TestServerSnapshotsAreCapped(t *testing.T) {
	var b strings.Builder
	waits := make([]string, serverstats.MaxWaits+1)
	for i := range waits {
		waits[i] = fmt.Sprintf(`["wait/io/file/sql/f%d",1,2]`, i)
	}
	for i := range 3 * load.MaxServerSnapshots {
		at := []string{"start", "end"}[i%2]
		fmt.Fprintf(&b, `{"type":"serverBegin","version":1,"at":%q}`+"\n", at)
		fmt.Fprintf(&b, `{"type":"server","version":1,"at":%q,"unixTime":%d,"status":{"Questions":%d,"Not_a_tracked_one":1},`+
			`"innodbMetrics":{"lock_timeouts":0,"nope":1},"performanceSchema":true,"waits":[%s]}`+"\n", at, i+1, i,
			strings.Join(waits, ","))
	}
	for range 2 * load.MaxServerErrors {
		b.WriteString(`{"type":"server","version":9,"at":"start"}` + "\n")
	}
	out, err := ParseOutput(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Server) != load.MaxServerSnapshots {
		t.Fatalf("%d snapshots kept, want %d", len(out.Server), load.MaxServerSnapshots)
	}
	s := out.Server[0]
	if len(s.Status) != 1 || len(s.InnoDBMetrics) != 1 || s.Waits != nil || len(s.Errors) != 1 ||
		!strings.Contains(s.Errors[0], "more than 4096 wait events") {
		t.Errorf("snapshot kept as status %v, metrics %v, %d waits, errors %q", s.Status, s.InnoDBMetrics, len(s.Waits), s.Errors)
	}
	if len(out.ServerErrors) != load.MaxServerErrors || !strings.Contains(out.ServerErrors[0], "more than 8 server snapshots") ||
		out.ServerErrors[load.MaxServerErrors-1] != "further server snapshot errors left out" {
		t.Errorf("server errors %q", out.ServerErrors)
	}
}
