package compare

import (
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
)

// Options are what a comparison may know besides the two runs and the policy.
type Options struct {
	// History are other successful runs of the same schedule (any order; the compared run is
	// skipped if present). With MinHistoryRuns or more measuring a target, the spread of the
	// target's level across them is the between-run noise its verdict allows for, in place of
	// spec.regression.runToRunCVPercent.
	History []*v1.BenchmarkRun
}

// MinHistoryRuns is how many retained runs must measure a target before their spread replaces
// the policy's run-to-run CV: fewer give a variance with too few degrees of freedom to trust
// (4 runs: 3 df, a 95 % t quantile of 3.18).
const MinHistoryRuns = 5

// Sources of the run-to-run allowance (TargetChange.RunToRunSource).
const (
	SourceHistory = "history"
	SourcePolicy  = "policy"
	SourceDefault = "default"
	SourceSameRun = "same run"
)

// levels are a run's log median for each cell of one rule's metric, by cell.
func levels(run *v1.BenchmarkRun, r Rule) map[cellKey]float64 {
	_, cs := samples(run)
	out := map[cellKey]float64{}
	for k, c := range cs {
		if xs := positiveValues(r.Samples(c)); len(xs) > 0 {
			out[k] = math.Log(stats.Summarize(xs).Median)
		}
	}
	return out
}

// historyLevels is, for each history run measuring every listed cell of a target, the target's
// level: the mean log median over those cells. Runs lacking a cell are skipped.
func historyLevels(hist []map[cellKey]float64, keys []cellKey) []float64 {
	var out []float64
	for _, h := range hist {
		var sum float64
		all := len(keys) > 0
		for _, k := range keys {
			x, ok := h[k]
			if !ok {
				all = false
				break
			}
			sum += x
		}
		if all {
			out = append(out, sum/float64(len(keys)))
		}
	}
	return out
}

func sampleVar(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return ss / float64(len(xs)-1)
}

// instancesMeasured says whether every repetition of target in run measured its own server
// instance: then the repetitions' spread holds the spread between instances.
func instancesMeasured(run *v1.BenchmarkRun, target string) bool {
	for _, t := range run.Status.Targets {
		if t.Name != target {
			continue
		}
		reps := map[int32]int32{}
		for _, s := range t.Steps {
			if s.Throughput() <= 0 {
				continue
			}
			if s.Instance == 0 {
				return run.Spec.InstancePerRepetition()
			}
			if prev, seen := reps[s.Repetition]; seen && prev != s.Instance {
				return false
			}
			reps[s.Repetition] = s.Instance
		}
		instances := map[int32]bool{}
		for _, i := range reps {
			instances[i] = true
		}
		return len(reps) > 1 && len(instances) == len(reps)
	}
	return false
}

// sameRun says whether both sides were measured in one run (a confirmation run compares its
// targets pairwise through two views of itself): nothing common to the run differs between
// them.
func sameRun(run, baseline *v1.BenchmarkRun) bool {
	return run.UID != "" && run.UID == baseline.UID
}

// relHistoryVar is the variance, over the history runs measuring every cell of f and of the
// other targets, of f's level minus the others' mean level; -1 when fewer than MinHistoryRuns.
func relHistoryVar(hist []map[cellKey]float64, f *family, others []*family, res *Result) float64 {
	keysOf := func(g *family) []cellKey {
		var ks []cellKey
		for _, ci := range g.cells {
			ks = append(ks, keyOf(res.Cells[ci].CellChange))
		}
		return ks
	}
	var contrasts []float64
	for _, h := range hist {
		one := []map[cellKey]float64{h}
		own := historyLevels(one, keysOf(f))
		if len(own) == 0 {
			continue
		}
		var sum float64
		all := true
		for _, o := range others {
			l := historyLevels(one, keysOf(o))
			if len(l) == 0 {
				all = false
				break
			}
			sum += l[0]
		}
		if all {
			contrasts = append(contrasts, own[0]-sum/float64(len(others)))
		}
	}
	if len(contrasts) < MinHistoryRuns {
		return -1
	}
	return sampleVar(contrasts)
}

// pooledCV is the coefficient of variation of the repetitions of both sides of every pair,
// pooled (the log standard deviation, weighted by degrees of freedom).
func pooledCV(pairs []stats.Pair) float64 {
	var ss, df float64
	for _, p := range pairs {
		for _, xs := range [][]float64{positiveValues(p.Base), positiveValues(p.Cur)} {
			if len(xs) < 2 {
				continue
			}
			_, v := logMeanVar(xs)
			ss += v * float64(len(xs)-1)
			df += float64(len(xs) - 1)
		}
	}
	if df == 0 {
		return 0
	}
	return math.Sqrt(math.Expm1(ss / df))
}

// runToRunNote says what between-run noise a target's QPS interval allows for.
func runToRunNote(t v1.TargetChange) string {
	var s string
	switch t.RunToRunSource {
	case SourceHistory:
		s = fmt.Sprintf("run-to-run CV %s %% from the schedule's retained runs", pct(t.RunToRunCVPercent))
	case SourcePolicy:
		s = fmt.Sprintf("run-to-run CV %s %% allowed (spec.regression.runToRunCVPercent)", pct(t.RunToRunCVPercent))
	case SourceDefault:
		s = fmt.Sprintf("run-to-run CV %s %% allowed (the default; the schedule's history replaces it after %d runs)", pct(t.RunToRunCVPercent), MinHistoryRuns)
	case SourceSameRun:
		s = fmt.Sprintf("both sides in one run: per-target CV %s %% allowed", pct(t.RunToRunCVPercent))
	default:
		return ""
	}
	if t.InstancesMeasured {
		s += fmt.Sprintf("; every repetition on its own server instance (their CV %s %%, the spread between instances "+
			"included), so the comparison with the other targets allows nothing more", pct(t.InstanceCVPercent))
	}
	if t.RepetitionsCannotDecide {
		s += "; more repetitions cannot decide: the run-to-run allowance alone is wider than the minimum effect"
	}
	return s
}

// HistoryOf are the runs of runs that the schedule controlling run also controls and that
// succeeded, with run's client, scheduled no later than run (its scheduled-time annotation, else
// its creation): the nights whose spread CompareWith may take as run's between-run noise.
// Confirmation runs are not nights of the schedule. None when no schedule controls run.
func HistoryOf(run *v1.BenchmarkRun, runs []*v1.BenchmarkRun) []*v1.BenchmarkRun {
	owner := metav1.GetControllerOf(run)
	if owner == nil || owner.Kind != "BenchmarkSchedule" {
		return nil
	}
	at := scheduledAt(run)
	client := loadclient.For(run.Spec.Workload).Name()
	var out []*v1.BenchmarkRun
	for _, other := range runs {
		o := metav1.GetControllerOf(other)
		if other.Name == run.Name || o == nil || o.UID != owner.UID || other.Status.Phase != v1.RunSucceeded ||
			other.Labels[v1.LabelConfirms] != "" || loadclient.For(other.Spec.Workload).Name() != client ||
			scheduledAt(other).After(at) {
			continue
		}
		out = append(out, other)
	}
	return out
}

// scheduledAt is when a schedule's run was due: its annotation, else its creation.
func scheduledAt(run *v1.BenchmarkRun) time.Time {
	if t, err := time.Parse(time.RFC3339, run.Annotations[v1.AnnotationScheduledTime]); err == nil {
		return t
	}
	return run.CreationTimestamp.Time
}
