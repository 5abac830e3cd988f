package report

import (
	"encoding/json"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// minSeriesBudget is the least SeriesBudget returns: enough for a series without points
// (EncodeSeries' last resort), so encoding never fails. A run so large that even this does not
// fit has series dropped by Render, which says so.
const minSeriesBudget = 128

// seriesOverhead is what embedding a series in a step of results.json adds besides the series.
var seriesOverhead = len(`,"series":`)

// SeriesBudget is the byte budget of one step's encoded series, such that the series of every step
// of the run (targets x ladder steps), the server counters of every step (spec.serverStats) and
// the results.json, results.csv, report.md and server.csv built from them and the status fit in
// MaxConfigMapBytes together.
//
// The room the rest needs is measured, not guessed: it renders the run as it could finish at
// worst (every step done with the widest realistic numbers, long server versions and failure
// messages, the longest run name, and with server stats on, every step's server counters as
// large as a realistic server gives them: worstServerStep with spec.serverStats.topWaits waits)
// without series, and shares what is left among the steps. So it follows the spec (target
// names, my.cnf text, ladder length, server stats) and any change to the formats.
//
// When that leaves less than minSeriesBudget per step, the series get minSeriesBudget, and Render
// drops what does not fit, largest first: the worst-case server counters of a long ladder do not
// fit in a ConfigMap even without series.
func SeriesBudget(spec v1alpha1.BenchmarkRunSpec) int {
	steps := len(spec.Targets) * spec.StepCount()
	doc := buildDoc(worstCaseRun(spec))
	servers := make([][]*serverstats.Step, len(doc.Targets))
	if spec.ServerStatsEnabled() {
		block, err := EncodeServer(worstServerStep(spec.TopWaitsOrDefault()))
		if err != nil {
			return minSeriesBudget // not reached: the worst case is a valid step
		}
		worst, err := results.DecodeServer(block) // as Render reads it: rates rounded
		if err != nil {
			return minSeriesBudget // not reached: EncodeServer checked it
		}
		if steps*(serverOverhead+len(block)) > MaxConfigMapBytes {
			return minSeriesBudget // results.json alone would not hold them: no need to render
		}
		for ti := range doc.Targets {
			servers[ti] = make([]*serverstats.Step, len(doc.Targets[ti].Steps))
			for si := range doc.Targets[ti].Steps {
				doc.Targets[ti].Steps[si].Server = json.RawMessage(block)
				servers[ti][si] = &worst
			}
		}
	} else {
		for ti := range doc.Targets {
			servers[ti] = make([]*serverstats.Step, len(doc.Targets[ti].Steps))
		}
	}
	data, err := encodeDoc(&doc, servers, true)
	if err != nil || steps == 0 {
		// encodeData only fails on a broken writer; with no steps there is nothing to share.
		return minSeriesBudget
	}
	per := (MaxConfigMapBytes-dataSize(data))/steps - seriesOverhead
	return max(per, minSeriesBudget)
}

func ptr[T any](v T) *T { return &v }

// Widths assumed by worstCaseRun. Sysbench's reporter prints rates with 2 decimals and latencies
// with 3, so these are the widest numbers a real server produces (ten million QPS, 100 s latency).
const (
	worstRate     = 9999999.99
	worstLatency  = 99999.999
	worstCount    = 9999999999
	worstDuration = 86400.999
	// The CRD refuses a BenchmarkRun name longer than 63 characters (a CEL rule on metadata.name:
	// the name is the mysqlbench.io/run label value of everything the run creates).
	worstRunNameLen = 63
	// A namespace name is a DNS label.
	worstNamespaceLen = 63
	worstVersionLen   = 64
	worstMessageLen   = 1024
)

func worstCaseRun(spec v1alpha1.BenchmarkRunSpec) *v1alpha1.BenchmarkRun {
	at := &metav1.Time{Time: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)}
	run := &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{
			Name:      strings.Repeat("r", worstRunNameLen),
			Namespace: strings.Repeat("n", worstNamespaceLen),
		},
		Spec: spec,
		Status: v1alpha1.BenchmarkRunStatus{
			Phase:          v1alpha1.RunSucceeded,
			StartTime:      at,
			CompletionTime: at,
		},
	}
	for _, t := range spec.Targets {
		ts := v1alpha1.TargetStatus{
			Name:           t.Name,
			Phase:          v1alpha1.TargetSucceeded,
			ServerVersion:  strings.Repeat("v", worstVersionLen),
			Message:        strings.Repeat("m", worstMessageLen),
			StartTime:      at,
			CompletionTime: at,
		}
		for i := range spec.StepCount() {
			rung, rep := spec.LadderPosition(i)
			if spec.RepetitionsOrDefault() == 1 {
				rep = 0
			}
			ts.Steps = append(ts.Steps, v1alpha1.StepResult{
				Threads:    spec.Ladder.Threads[rung],
				Repetition: rep,
				TPS:        worstRate,
				QPS:        v1alpha1.QPS{Total: worstRate, Read: worstRate, Write: worstRate, Other: worstRate},
				Latency: v1alpha1.Latency{
					MinMs: worstLatency, AvgMs: worstLatency, P95Ms: worstLatency, MaxMs: worstLatency,
				},
				Errors:          worstCount,
				Reconnects:      worstCount,
				DurationSeconds: worstDuration,
				Attempts:        11,
				StartTime:       at,
				FinishTime:      at,
			})
		}
		run.Status.Targets = append(run.Status.Targets, ts)
	}
	return run
}
