package mysqlslap

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// snapshotLog is a complete snapshot at start whose sections hold rows.
func snapshotLog(variables, status, waits []string, extra ...string) string {
	lines := []string{markBegin + "start", markClock + "begin 1795469270.254154471", markSection + "variables"}
	lines = append(lines, variables...)
	lines = append(append(lines, markSection+"status"), status...)
	lines = append(append(lines, markSection+"waits"), waits...)
	lines = append(append(lines, extra...), markEnd+"start")
	return strings.Join(lines, "\n") + "\n"
}

// A snapshot keeps what a step can use, within the caps, whatever rows the log holds: the bounded
// set's counters, waits up to serverstats.MaxWaits, serverstats.MaxErrors errors; clocks and
// sections that are not the launcher's are ignored.
func TestSnapshotRowsAreCapped(t *testing.T) {
	ps := []string{"performance_schema\tON", "version\t9.7.4"}
	var status []string
	for i := range 5000 {
		status = append(status, fmt.Sprintf("Not_tracked_%d\t%d", i, i))
	}
	status = append(status, "Questions\t12", "Com_select\t7")
	waits := func(n int) []string {
		var w []string
		for i := range n {
			w = append(w, fmt.Sprintf("wait/io/file/sql/f%d\t1\t2", i))
		}
		return w
	}
	extra := []string{markClock + "elsewhere 1", markSection + "nope", "row\tof\tnothing"}

	out, err := ParseOutput(strings.NewReader(snapshotLog(ps, status, waits(serverstats.MaxWaits), extra...)))
	if err != nil || len(out.Server) != 1 {
		t.Fatalf("error %v, %d snapshots, server errors %q", err, len(out.Server), out.ServerErrors)
	}
	s := out.Server[0]
	if len(s.Status) != 2 || s.Status["Questions"] != 12 || len(s.Waits) != serverstats.MaxWaits || len(s.Errors) != 0 {
		t.Errorf("status %v, %d waits, errors %q", s.Status, len(s.Waits), s.Errors)
	}

	out, err = ParseOutput(strings.NewReader(snapshotLog(ps, status, waits(100*serverstats.MaxWaits))))
	if err != nil || len(out.Server) != 1 {
		t.Fatalf("error %v, %d snapshots", err, len(out.Server))
	}
	if s := out.Server[0]; s.Waits != nil || len(s.Errors) != 1 || !strings.Contains(s.Errors[0], "more than 4096 wait events") {
		t.Errorf("%d waits, errors %q; want none, and why", len(s.Waits), s.Errors)
	}

	var errs []string
	for i := range 1000 {
		errs = append(errs, fmt.Sprintf("%sinnodbMetrics: ERROR 1227 (42000) at line %d: Access denied", markError, i))
	}
	out, err = ParseOutput(strings.NewReader(snapshotLog(ps, status, nil, errs...)))
	if err != nil || len(out.Server) != 1 {
		t.Fatalf("error %v, %d snapshots", err, len(out.Server))
	}
	if e := out.Server[0].Errors; len(e) != serverstats.MaxErrors || e[len(e)-1] != "985 more errors left out" {
		t.Errorf("%d errors, the last %q", len(e), e[len(e)-1])
	}
}

// Only the first Benchmark report is read; the others are counted for the error.
func TestExtraReportsAreCounted(t *testing.T) {
	report := "Benchmark\n\tAverage number of seconds to run all queries: 1.000 seconds\n" +
		"\tNumber of clients running queries: 4\n\tAverage number of queries per client: 10\n"
	out, err := ParseOutput(strings.NewReader(report + strings.Repeat("Benchmark\n", 99999)))
	if err == nil || !strings.Contains(err.Error(), "printed 100000 Benchmark reports, want one") || out.Final != nil {
		t.Errorf("error %v, final %+v", err, out.Final)
	}
}
