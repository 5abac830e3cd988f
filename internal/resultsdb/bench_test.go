package resultsdb_test

import (
	"context"
	"testing"
	"time"

	"github.com/mysqlbench/mysqlbench-operator/internal/resultsdb"
)

// BenchmarkWrite512Steps stores a 512-step run (4 targets x 16 thread counts x 8 repetitions,
// every step with the server's whole counter set, gauges and top waits) into a real MariaDB on
// loopback, replacing the previous version of the run each time, as a rewrite after a settled
// confirmation does: the cost the operator pays once per finished run. The store has no
// Kubernetes client, so the write makes no API call; the controller's single status write
// carries the ResultsStored condition. Unchanged is the retried write of the same record.
func BenchmarkWrite512Steps(b *testing.B) {
	_, cfg := database(b)
	s := open(b, cfg, resultsdb.OpenOptions{})
	sh := shape{targets: 4, threads: 16, reps: 8, server: true}
	if sh.steps() != 512 {
		b.Fatalf("%d steps", sh.steps())
	}
	recs := [2]*resultsdb.Record{build(b, 1, sh, 1), build(b, 1, sh, 1.01)}
	ctx := context.Background()
	if _, err := s.Write(ctx, recs[1]); err != nil {
		b.Fatal(err)
	}
	b.Run("Replace", func(b *testing.B) {
		var worst time.Duration
		for i := 0; b.Loop(); i++ {
			start := time.Now()
			w, err := s.Write(ctx, recs[i%2])
			if err != nil || !w.Changed {
				b.Fatalf("%+v %v", w, err)
			}
			worst = max(worst, time.Since(start))
		}
		b.ReportMetric(float64(recs[0].Rows()), "rows/op")
		b.ReportMetric(worst.Seconds(), "worst-s")
	})
	b.Run("Unchanged", func(b *testing.B) {
		for b.Loop() {
			if w, err := s.Write(ctx, recs[0]); err != nil || w.Changed {
				b.Fatalf("%+v %v", w, err)
			}
		}
	})
}
