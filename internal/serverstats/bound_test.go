package serverstats

import (
	"fmt"
	"strings"
	"testing"
)

// Bound keeps the bounded set's counters, and caps waits, errors and strings.
func TestBound(t *testing.T) {
	s := Snapshot{
		Server:        strings.Repeat("9", 5000),
		Status:        map[string]uint64{"Questions": 1, "Com_select": 2, "Uptime": 3},
		InnoDBMetrics: map[string]uint64{"lock_timeouts": 4, "buffer_pool_size": 5},
		Waits:         []WaitTotal{{Event: strings.Repeat("w", 1000), Count: 1}},
	}
	for i := range 40 {
		s.Errors = append(s.Errors, fmt.Sprintf("error %d %s", i, strings.Repeat("e", 400)))
	}
	s.Bound()
	if len(s.Status) != 2 || len(s.InnoDBMetrics) != 1 || s.InnoDBMetrics["lock_timeouts"] != 4 {
		t.Errorf("status %v, metrics %v; want only the tracked ones", s.Status, s.InnoDBMetrics)
	}
	if len(s.Server) > maxError || len(s.Waits) != 1 || len(s.Waits[0].Event) > maxError {
		t.Errorf("server %d bytes, wait event %d bytes", len(s.Server), len(s.Waits[0].Event))
	}
	if len(s.Errors) != MaxErrors || !strings.HasPrefix(s.Errors[0], "error 0 ") || len(s.Errors[0]) > maxError ||
		s.Errors[MaxErrors-1] != "25 more errors left out" {
		t.Errorf("%d errors: first %.20q, last %q", len(s.Errors), s.Errors[0], s.Errors[len(s.Errors)-1])
	}

	s = Snapshot{Waits: make([]WaitTotal, MaxWaits+1), Errors: []string{"status: denied"}}
	s.Bound()
	if s.Waits != nil || len(s.Errors) != 2 || !strings.Contains(s.Errors[0], "more than 4096 wait events") || s.Errors[1] != "status: denied" {
		t.Errorf("%d waits, errors %q", len(s.Waits), s.Errors)
	}
	s = Snapshot{Waits: make([]WaitTotal, MaxWaits)}
	if s.Bound(); len(s.Waits) != MaxWaits || s.Errors != nil {
		t.Errorf("%d waits, errors %q; want all %d kept", len(s.Waits), s.Errors, MaxWaits)
	}
}
