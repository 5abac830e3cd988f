package exported

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// FromResults is the BenchmarkRun that results.json describes, as far as it does: name and
// namespace; the targets (name, engine, image, myCnf), the client, the sysbench workload and the
// ladder of the spec; the phase and times of the run and of each target, each target's server
// version, message, node, steps and cells. It lacks what results.json does not record: metadata
// beyond the name (labels, owner, UID), conditions, the comparison with a baseline, the client's
// own settings (mysqlslap, go-tpc), spec.serverStats and placement. What reads only the numbers
// (a comparison, the target names) reads it as it reads the run.
func FromResults(doc *results.Doc) *v1.BenchmarkRun {
	if doc == nil {
		return nil
	}
	run := &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: doc.Run.Name, Namespace: doc.Run.Namespace},
		Spec: v1.BenchmarkRunSpec{
			Workload:      workload(doc.Workload),
			Ladder:        v1.Ladder{Threads: doc.Ladder.Threads},
			SysbenchImage: doc.Workload.SysbenchImage,
		},
		Status: v1.BenchmarkRunStatus{
			Phase:          v1.RunPhase(doc.Run.Phase),
			StartTime:      doc.Run.StartTime,
			CompletionTime: doc.Run.CompletionTime,
		},
	}
	if len(doc.Workloads) > 0 {
		// A suite: every workload under its name, in measuring order (which the spec's order
		// rule keeps: reads were measured first), so its steps and cells read back whole.
		run.Spec.Workload = v1.Workload{}
		for _, w := range doc.Workloads {
			x := workload(w.Workload)
			run.Spec.Workloads = append(run.Spec.Workloads, v1.NamedWorkload{Name: w.Name, Client: x.Client, Script: x.Script,
				Tables: x.Tables, TableSize: x.TableSize, SkipPrepare: x.SkipPrepare, ExtraArgs: x.ExtraArgs})
		}
	}
	l := &run.Spec.Ladder
	if s := doc.Ladder.StepDurationSeconds; s > 0 {
		l.StepDuration = &metav1.Duration{Duration: seconds(s)}
	}
	if s := doc.Ladder.WarmupSeconds; s > 0 {
		l.Warmup = &metav1.Duration{Duration: seconds(s)}
		if doc.Ladder.WarmupThreads > 0 {
			l.WarmupThreads = &doc.Ladder.WarmupThreads
		}
	}
	if r := int32(doc.Ladder.Repetitions); r > 1 {
		run.Spec.Repetitions = &r
	}
	run.Spec.BaseTarget = doc.BaseTarget
	run.Spec.ServerInstance = v1.ServerInstanceMode(doc.Ladder.ServerInstance)
	run.Spec.Order = v1.RunOrder(doc.Ladder.Order)
	for _, t := range doc.Targets {
		run.Spec.Targets = append(run.Spec.Targets, v1.Target{Name: t.Name, Engine: v1.Engine(t.Engine), Image: t.Image, MyCnf: t.MyCnf})
		ts := v1.TargetStatus{
			Name: t.Name, Phase: v1.TargetPhase(t.Phase), ServerVersion: t.ServerVersion, Message: t.Message,
			StartTime: t.StartTime, CompletionTime: t.CompletionTime, Node: t.Node, InstanceNodes: t.InstanceNodes,
		}
		for _, s := range t.Steps {
			ts.Steps = append(ts.Steps, s.StepResult)
		}
		for _, c := range t.Cells {
			ts.Cells = append(ts.Cells, c.CellStats)
		}
		run.Status.Targets = append(run.Status.Targets, ts)
	}
	return run
}

// workload is the spec of a workload as results.json records it: its client, script, data and
// options (what the report and the comparison read).
func workload(w results.Workload) v1.Workload {
	return v1.Workload{
		Client:      v1.WorkloadClient(w.Client),
		Script:      v1.OLTPScript(w.Script),
		Tables:      w.Tables,
		TableSize:   w.TableSize,
		SkipPrepare: w.SkipPrepare,
		ExtraArgs:   w.ExtraArgs,
	}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
