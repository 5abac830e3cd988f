package report

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/enginefacts"
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
// A long ladder cannot hold the worst-case server counters of every step (192 steps of 10 waits
// take 4 MB), and reserving them would leave the per-second series, from which the timeline is
// drawn, no points at all. So the series always keep half of what they would get without server
// counters, up to seriesFloor (about a hundred points per step): then what does not fit is
// dropped by Render, largest first, and results.json and report.md say which. A run whose worst
// case fits keeps everything. Never below minSeriesBudget.
func SeriesBudget(spec v1alpha1.BenchmarkRunSpec) int {
	without := seriesShare(spec, false)
	if !spec.ServerStatsEnabled() {
		return without
	}
	return max(seriesShare(spec, true), min(without/2, seriesFloor), minSeriesBudget)
}

// seriesFloor bounds the share of a step's series that server counters cannot take: about a
// hundred points of the eight measures, enough to draw a step's shape on the timeline.
const seriesFloor = 4096

// seriesShare is what is left per step for its series once the worst-case run is rendered
// without series, with or without every step's worst-case server counters.
func seriesShare(spec v1alpha1.BenchmarkRunSpec, withServer bool) int {
	steps := len(spec.Targets) * spec.StepCount()
	doc := buildDoc(worstCaseRun(spec))
	servers := make([][]*serverstats.Step, len(doc.Targets))
	for ti := range doc.Targets {
		servers[ti] = make([]*serverstats.Step, len(doc.Targets[ti].Steps))
	}
	if withServer {
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
			for si := range doc.Targets[ti].Steps {
				doc.Targets[ti].Steps[si].Server = json.RawMessage(block)
				servers[ti][si] = &worst
			}
		}
	}
	data, err := encodeDoc(&doc, servers, true)
	if err != nil || steps == 0 {
		// encodeDoc only fails on a broken writer; with no steps there is nothing to share.
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
	c := client.For(spec.Workload)
	for ti, t := range spec.Targets {
		ts := v1alpha1.TargetStatus{
			Name:           t.Name,
			Phase:          v1alpha1.TargetSucceeded,
			ServerVersion:  strings.Repeat("v", worstVersionLen),
			Message:        strings.Repeat("m", worstMessageLen),
			StartTime:      at,
			CompletionTime: at,
		}
		if enginefacts.Of(t.Engine).OwnPod {
			// Only the servers the operator runs have their node recorded.
			ts.Node = worstNode(ti)
			for i := range worstInstanceNodes {
				ts.InstanceNodes = append(ts.InstanceNodes, worstNodeName(ti*worstInstanceNodes+i))
			}
		}
		for i := range spec.StepCount() {
			rung, rep := spec.LadderPosition(i)
			if spec.RepetitionsOrDefault() == 1 {
				rep = 0
			}
			st := v1alpha1.StepResult{
				Workload:   spec.WorkloadAt(i).Name,
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
				Instance:        worstInstance,
				ClientCPU:       &v1alpha1.ClientCPU{Cores: worstCores, Available: worstCores, Saturated: true},
			}
			c.WidestStep(load.Widest{Rate: worstRate, Latency: worstLatency, Count: worstCount}, &st)
			ts.Steps = append(ts.Steps, st)
		}
		run.Status.Targets = append(run.Status.Targets, ts)
	}
	return run
}

// worstNode is the node of target ti's server at its widest realistic: its own node (so report.md
// names every target's), of its own shape, every fact as long as a realistic node reports it.
func worstNode(ti int) *v1alpha1.ServerNode {
	cpu, memory := resource.MustParse(fmt.Sprintf("%dm", 999500+ti)), resource.MustParse(fmt.Sprintf("%dKi", 1<<40+ti))
	fact := strings.Repeat("f", worstNodeFactLen)
	return &v1alpha1.ServerNode{Name: worstNodeName(ti), CPUCapacity: &cpu, CPUAllocatable: &cpu, MemoryCapacity: &memory,
		KernelVersion: fact, OSImage: fact, Architecture: fact, ContainerRuntime: fact, KubeletVersion: fact,
		InstanceType: fmt.Sprintf("%s%04d", fact[4:], ti), Zone: fact}
}

// worstNodeName is the i-th distinct node name of worstNodeNameLen characters.
func worstNodeName(i int) string {
	return fmt.Sprintf("%s%04d", strings.Repeat("n", worstNodeNameLen-4), i)
}

// A realistic node: a cloud provider's node name (ip-10-0-1-23.eu-west-1.compute.internal, a GKE
// pool's gke-<cluster>-<pool>-<hash>-<id>) is under 64 characters, and so are the kernel, OS
// image and runtime strings kubelets report; a server replaced between each of 10 repetitions
// (the most spec.repetitions allows) may run on 10 nodes. The status bounds them harder
// (v1alpha1.MaxNodeFactLen, MaxInstanceNodes); a run beyond these has series dropped by Render,
// which says so.
const (
	worstNodeNameLen   = 63
	worstNodeFactLen   = 64
	worstInstanceNodes = 10
)

// worstInstance and worstCores are the widest instance number (a restart and a replacement per
// step of a 512-step ladder) and client CPU figure (cores to three decimals) a step records.
const (
	worstInstance = 1023
	worstCores    = 999.999
)
