package steplog

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/logtest"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// worstBytes is a worst log's size: just under MaxBytes, so that all of it is read.
const worstBytes = MaxBytes - 1<<20

// intervalLine is the reporter's interval line (as captured from sysbench 1.0.20) of second i+1.
func intervalLine(i int) string {
	return `{"type":"interval","time":` + strconv.Itoa(i+1) + `.003,"threads":4,"threadsRunning":4,"tps":17303.14,` +
		`"qps":17303.14,"readQps":17303.14,"writeQps":0.00,"otherQps":0.00,"latencyPctMs":0.464,"errorsPerSec":0.00,` +
		`"reconnectsPerSec":0.00}`
}

const finalLine = `{"type":"final","version":1,"command":"run","sysbench":"1.0.20","threads":4,"percentile":95,` +
	`"durationSeconds":3.004,"events":53872,"tps":17934.04,"qps":{"total":17934.04,"read":17934.04,"write":0.00,"other":0.00},` +
	`"queries":{"total":53872,"read":53872,"write":0,"other":0},"latencyMs":{"min":0.069,"avg":0.222,"pct":0.499,` +
	`"max":10.351,"sum":11957.584},"errors":0,"reconnects":0}` + "\n"

// serverLines are the start and end server lines of a real step (MySQL 9.7, 139 waits each).
func serverLines(tb testing.TB) [2]string {
	b, err := os.ReadFile(filepath.Join("..", "sysbench", "testdata", "server", "mysql97_read_write.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, `{"type":"server"`) {
			out = append(out, l)
		}
	}
	if len(out) != 2 {
		tb.Fatalf("%d server lines in the capture, want 2", len(out))
	}
	return [2]string{out[0], out[1]}
}

// worstLog is a log of about worstBytes that a step's container could print, and what reading
// it must give.
type worstLog struct {
	name      string
	mysqlslap bool
	log       func(tb testing.TB) io.Reader
	check     func(t *testing.T, st Step, err error)
}

var worstLogs = []worstLog{
	{
		name: "sysbench interval lines",
		log: func(testing.TB) io.Reader {
			return io.MultiReader(logtest.Lines(worstBytes, intervalLine), strings.NewReader("\n"+finalLine))
		},
		check: func(t *testing.T, st Step, err error) {
			s := decodeSeries(t, st, err)
			// 63 MiB of 212-byte lines: about 311000 reports, downsampled to points of 4 while
			// read, and by EncodeOutput to buckets of a multiple of 4 reports.
			if s.Intervals < 300000 || s.BucketSeconds%4 != 0 || s.TPS[0] != 17303 {
				t.Errorf("series of %d reports in buckets of %d, first TPS %v", s.Intervals, s.BucketSeconds, s.TPS[0])
			}
		},
	},
	{
		name: "sysbench short interval lines",
		log: func(testing.TB) io.Reader {
			return io.MultiReader(logtest.Lines(worstBytes, func(i int) string {
				return `{"type":"interval","time":` + strconv.Itoa(i+1) + `}`
			}), strings.NewReader("\n"+finalLine))
		},
		check: func(t *testing.T, st Step, err error) {
			// Every whole line is a report (the one cut at worstBytes is not JSON).
			want, size := 0, 0
			for size+len(`{"type":"interval","time":}`)+len(strconv.Itoa(want+1))+1 <= worstBytes {
				size += len(`{"type":"interval","time":}`) + len(strconv.Itoa(want+1)) + 1
				want++
			}
			if s := decodeSeries(t, st, err); s.Intervals != want {
				t.Errorf("series of %d reports, want all %d", s.Intervals, want)
			}
		},
	},
	{
		name: "sysbench server lines",
		log: func(tb testing.TB) io.Reader {
			s := serverLines(tb)
			return logtest.Lines(worstBytes, func(i int) string { return s[i%2] })
		},
		check: noServer("more than 8 server snapshots"),
	},
	{
		name: "sysbench server lines of 1 MiB of waits",
		log: func(testing.TB) io.Reader {
			var b strings.Builder
			b.WriteString(`{"type":"server","version":1,"at":"start","unixTime":1,"performanceSchema":true,"waits":[`)
			for i := 0; b.Len() < 1<<20-100; i++ {
				if i > 0 {
					b.WriteString(",")
				}
				b.WriteString(`["wait/synch/mutex/innodb/m` + strconv.Itoa(i) + `",1,2]`)
			}
			b.WriteString("]}")
			line := b.String()
			return logtest.Lines(worstBytes, func(int) string { return line })
		},
		check: noServer("more than 8 server snapshots"),
	},
	{
		name: "sysbench small server lines",
		log: func(testing.TB) io.Reader {
			return logtest.Lines(worstBytes, func(i int) string {
				return `{"type":"server","version":1,"at":"start","unixTime":1,"status":{"Questions":` + strconv.Itoa(i) + `}}`
			})
		},
		check: noServer("more than 8 server snapshots"),
	},
	{
		name: "sysbench error lines",
		log: func(testing.TB) io.Reader {
			return io.MultiReader(logtest.Lines(worstBytes, func(i int) string {
				return "FATAL: mysql_drv_query() returned error 2013 (Lost connection to server during query) for query 'SELECT " +
					strconv.Itoa(i) + "'"
			}), strings.NewReader("\n"+finalLine))
		},
		check: func(t *testing.T, st Step, err error) {
			if err != nil || st.NoSeries != "the log has no interval reports" {
				t.Errorf("error %v, no series %q", err, st.NoSeries)
			}
		},
	},
	{
		name: "mysqlslap status rows", mysqlslap: true,
		log: func(testing.TB) io.Reader {
			return logtest.Lines(worstBytes, func(i int) string {
				switch i {
				case 0:
					return "mysqlbench-server-begin start\nmysqlbench-server-clock begin 1795469270.254154471\n" +
						"mysqlbench-server-section status"
				}
				return "Status_" + strconv.Itoa(i) + "\t" + strconv.Itoa(i)
			})
		},
		check: noServer("server snapshot \"start\" has no end line"),
	},
	{
		name: "mysqlslap wait rows", mysqlslap: true,
		log: func(testing.TB) io.Reader {
			return logtest.Lines(worstBytes, func(i int) string {
				switch i {
				case 0:
					return "mysqlbench-server-begin start\nmysqlbench-server-clock begin 1795469270.254154471\n" +
						"mysqlbench-server-section variables\nperformance_schema\tON\nmysqlbench-server-section waits"
				}
				return "wait/synch/mutex/innodb/m" + strconv.Itoa(i) + "\t12\t3456"
			})
		},
		check: noServer("server snapshot \"start\" has no end line"),
	},
	{
		name: "mysqlslap snapshot error rows", mysqlslap: true,
		log: func(testing.TB) io.Reader {
			return logtest.Lines(worstBytes, func(i int) string {
				if i == 0 {
					return "mysqlbench-server-begin start"
				}
				return "mysqlbench-server-error status: ERROR 1227 (42000): Access denied " + strconv.Itoa(i)
			})
		},
		check: noServer("server snapshot \"start\" has no end line"),
	},
	{
		name: "mysqlslap snapshot begin lines", mysqlslap: true,
		log: func(testing.TB) io.Reader {
			return logtest.Lines(worstBytes, func(int) string { return "mysqlbench-server-begin start" })
		},
		check: noServer("further server snapshot errors left out"),
	},
	{
		name: "mysqlslap Benchmark lines", mysqlslap: true,
		log: func(testing.TB) io.Reader {
			return logtest.Lines(worstBytes, func(int) string { return "Benchmark" })
		},
		check: func(t *testing.T, _ Step, err error) {
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("printed %d Benchmark reports", worstBytes/len("Benchmark\n"))) {
				t.Errorf("error %v, want the count of reports", err)
			}
		},
	},
	{
		name: "mysqlslap error lines", mysqlslap: true,
		log: func(testing.TB) io.Reader {
			return logtest.Lines(worstBytes, func(i int) string {
				return "mysqlslap: Cannot run query SELECT " + strconv.Itoa(i) + " ERROR : Lost connection to server during query"
			})
		},
		check: noServer("0 start and 0 end server snapshots"),
	},
}

func decodeSeries(t *testing.T, st Step, err error) results.Series {
	t.Helper()
	if err != nil || st.Series == "" {
		t.Fatalf("error %v, no series %q", err, st.NoSeries)
	}
	s, err := results.DecodeSeries(st.Series)
	if err != nil {
		t.Fatal(err)
	}
	if s.PointsDropped || len(s.TPS) == 0 {
		t.Fatalf("series without points: %+v", s)
	}
	return s
}

func noServer(why string) func(*testing.T, Step, error) {
	return func(t *testing.T, st Step, err error) {
		t.Helper()
		if err != nil || st.Server != nil || !strings.Contains(st.NoServer, why) {
			t.Errorf("error %v, server %v, no server %q; want it to say %q", err, st.Server != nil, st.NoServer, why)
		}
	}
}

// worstRun is the run whose steps get the largest series budget: one target, one step of 24 h.
func worstRun(mysqlslap bool) *v1.BenchmarkRun {
	run := &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "worst", Namespace: "bench"},
		Spec: v1.BenchmarkRunSpec{
			Targets:  []v1.Target{{Name: "mariadb", Image: "mariadb:10.11"}},
			Workload: v1.Workload{Script: "oltp_point_select", Tables: 4, TableSize: 1000},
			Ladder:   v1.Ladder{Threads: []int32{4}, StepDuration: &metav1.Duration{Duration: 24 * time.Hour}},
		},
	}
	if mysqlslap {
		run.Spec.Workload = v1.Workload{Client: v1.ClientMysqlslap,
			Mysqlslap: &v1.MysqlslapWorkload{LoadType: "key", Queries: 2000, Iterations: 2}}
	}
	return run
}

func worstOptions(mysqlslap bool) Options {
	run := worstRun(mysqlslap)
	c := client.For(run.Spec.Workload)
	step := load.Step{Phase: load.PhaseRun, Threads: 4, Duration: 24 * time.Hour, ServerStats: true}
	return Options{
		Parse:        func(r io.Reader) (load.Output, error) { return c.Parse(step, r) },
		SeriesAbsent: !c.Capabilities().Series,
		Budget:       report.SeriesBudget(run.Spec),
		ServerStats:  true,
		Iterations:   c.SnapshotRepeats(run.Spec.Workload),
		TopWaits:     run.Spec.TopWaitsOrDefault(),
	}
}

// maxLive is the most heap reading any log may keep live: the series of load.MaxIntervals
// points (7.6 MB) is the largest thing kept.
const maxLive = 16 << 20

// Whatever a step's log holds, reading it keeps a bounded heap live and says what it made of it.
// Before the caps, these logs kept from 26 MiB (the interval lines) to 539 MiB (mysqlslap's
// Benchmark lines) live.
func TestWorstLogsAreReadInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 12 logs of 63 MiB")
	}
	for _, wl := range worstLogs {
		t.Run(wl.name, func(t *testing.T) {
			var st Step
			var err error
			live := logtest.PeakLive(wl.log(t), 4<<20, func(log io.Reader) { st, err = Read(log, worstOptions(wl.mysqlslap)) })
			if live > maxLive {
				t.Errorf("%.1f MiB live at the peak, want at most %d MiB", float64(live)/(1<<20), maxLive>>20)
			}
			wl.check(t, st, err)
		})
	}
}

// A log longer than MaxBytes is not read, and the error says so and what to look for.
func TestALogPastMaxBytesIsRefused(t *testing.T) {
	_, err := Read(io.MultiReader(strings.NewReader(finalLine), logtest.Lines(MaxBytes, intervalLine)), worstOptions(false))
	if err == nil || !strings.Contains(err.Error(), "longer than 64 MiB") || !strings.Contains(err.Error(), "custom script") {
		t.Fatalf("error %v, want one naming the 64 MiB cap", err)
	}
	// One of exactly MaxBytes is read.
	head := finalLine + strings.Repeat("\n", 1000)
	st, err := Read(io.MultiReader(strings.NewReader(head), logtest.Lines(MaxBytes-int64(len(head)), intervalLine)), worstOptions(false))
	if err != nil || st.Series == "" {
		t.Fatalf("a log of exactly %d bytes: error %v, series %d bytes", MaxBytes, err, len(st.Series))
	}
}

// The server's counters of a step, from its two snapshots, and why there are none when the log
// has more snapshots than a step takes.
func TestServerFromSnapshots(t *testing.T) {
	s := serverLines(t)
	log := func(snapshots ...string) io.Reader {
		return strings.NewReader(intervalLine(0) + "\n" + strings.Join(snapshots, "\n") + "\n" + finalLine)
	}
	st, err := Read(log(s[0], s[1]), worstOptions(false))
	if err != nil || st.Server == nil || st.Start.At != "start" || st.End.At != "end" || len(st.Server.Counters) == 0 {
		t.Fatalf("error %v, no server %q", err, st.NoServer)
	}
	if st.Server.Queries != 53872 {
		t.Errorf("queries %v, want the final report's", st.Server.Queries)
	}
	many := make([]string, 0, 12)
	for i := range 12 {
		many = append(many, s[i%2])
	}
	st, err = Read(log(many...), worstOptions(false))
	if err != nil || st.Server != nil || !strings.Contains(st.NoServer, "server snapshot 3 is a start after an end") ||
		!strings.Contains(st.NoServer, "more than 8 server snapshots (a step takes two") {
		t.Errorf("error %v, no server %q", err, st.NoServer)
	}
}

// BenchmarkWorstLogs prints the heap the manager needs to read each of the worst logs: the most
// kept live (collected every MiB read) and the most in use with the collector left alone
// (GOGC=100; the manager's GOMEMLIMIT, 90 % of its container's limit, makes it collect harder).
//
//	go test ./internal/steplog -run '^$' -bench WorstLogs -benchtime=1x
func BenchmarkWorstLogs(b *testing.B) {
	for _, wl := range worstLogs {
		b.Run(strings.ReplaceAll(wl.name, " ", "_"), func(b *testing.B) {
			opts := worstOptions(wl.mysqlslap)
			var live, inUse uint64
			for range b.N {
				live = logtest.PeakLive(wl.log(b), 1<<20, func(log io.Reader) { _, _ = Read(log, opts) })
				inUse = logtest.PeakInUse(func() { _, _ = Read(wl.log(b), opts) })
			}
			runtime.GC()
			b.ReportMetric(float64(live)/(1<<20), "live-MiB")
			b.ReportMetric(float64(inUse)/(1<<20), "inuse-MiB")
			fmt.Printf("%-40s peak live %6.1f MiB, peak in use %6.1f MiB\n", wl.name, float64(live)/(1<<20), float64(inUse)/(1<<20))
		})
	}
}
