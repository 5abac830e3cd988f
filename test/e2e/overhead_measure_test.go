//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// stepTimes is one ladder step: its status entry, its Job and pod as watched, and its log.
type stepTimes struct {
	label      string
	threads    int32
	result     v1.StepResult
	job        *jobSeen
	pod        *podSeen
	series     time.Time // its per-second series first seen in the results ConfigMap
	statusSeen time.Time // it first seen in status.targets[].steps
}

type measurement struct {
	steps []stepTimes
	// every sysbench Job of the target in creation order (probe, prepare, failed attempts too),
	// with its newest pod
	jobs       []*jobSeen
	podOf      map[types.UID]*podSeen
	runHistory []change
	// per step (the last step has no next one: NaN there)
	ladderAPI, runtimeAPI, gapAPI       []float64
	ladderWatch, runtimeWatch, gapWatch []float64
	cycleWatch                          []float64 // Job created -> next Job created, minus d
	// idle is the server's idle time between two steps: the next step's measuring start minus
	// this one's measuring end (its measuring start plus sysbench's own total time), from the
	// client node's container log timestamps.
	idle []float64
}

// measure matches every step of the status with its Job, pod and log, and computes the figures.
func (w *runWatch) measure(run *v1.BenchmarkRun, ts *v1.TargetStatus, d time.Duration) *measurement {
	w.mu.Lock()
	defer w.mu.Unlock()
	// The run's Jobs by step label: the last created attempt of each.
	byStep := map[string]*jobSeen{}
	jobUIDs := map[types.UID]bool{}
	for uid, j := range w.jobs {
		if j.last == nil || !metav1.IsControlledBy(j.last, run) || j.last.Labels[specs.LabelTarget] != ts.Name {
			continue
		}
		jobUIDs[uid] = true
		label := j.last.Labels[specs.LabelStep]
		if old := byStep[label]; old == nil || j.created.After(old.created) {
			byStep[label] = j
		}
	}
	podOf := map[types.UID]*podSeen{} // Job UID -> its newest pod
	for _, p := range w.pods {
		owner := metav1.GetControllerOf(p.last)
		if owner == nil || !jobUIDs[owner.UID] {
			continue
		}
		if old := podOf[owner.UID]; old == nil || p.created.After(old.created) {
			podOf[owner.UID] = p
		}
	}
	seriesSeen := map[string]time.Time{}
	for uid, keys := range w.series {
		if w.cmOwner[uid] != run.UID {
			continue
		}
		for k, at := range keys {
			seriesSeen[k] = at
		}
	}

	m := &measurement{podOf: podOf, runHistory: slices.Clone(w.runHistory)}
	for uid := range jobUIDs {
		m.jobs = append(m.jobs, w.jobs[uid])
	}
	sort.Slice(m.jobs, func(i, j int) bool { return m.jobs[i].created.Before(m.jobs[j].created) })
	for i, r := range ts.Steps {
		rung, rep := run.Spec.LadderPosition(i)
		st := stepTimes{label: specs.LadderStep(rung, rep), threads: r.Threads, result: r}
		st.job = byStep[st.label]
		if st.job != nil {
			st.pod = podOf[st.job.last.UID]
		}
		st.series = seriesSeen[report.SeriesKey(ts.Name, r.Threads, r.RepetitionOrDefault())]
		if i < len(w.stepsSeen) {
			st.statusSeen = w.stepsSeen[i]
		}
		m.steps = append(m.steps, st)
	}
	for i, st := range m.steps {
		nan := math.NaN()
		ladderAPI, gapAPI, ladderW, gapW, cycleW := nan, nan, nan, nan, nan
		runtimeAPI := overSec(apiTime(st.result.StartTime), apiTime(st.result.FinishTime), d)
		runtimeW := nan
		if st.job != nil {
			runtimeW = overSec(st.job.created, st.job.condition[batchv1.JobComplete], d)
		}
		if i+1 < len(m.steps) {
			next := m.steps[i+1]
			ladderAPI = overSec(apiTime(st.result.FinishTime), apiTime(next.result.FinishTime), d)
			gapAPI = overSec(apiTime(st.result.FinishTime), apiTime(next.result.StartTime), 0)
			if st.job != nil && next.job != nil {
				ladderW = overSec(st.job.condition[batchv1.JobComplete], next.job.condition[batchv1.JobComplete], d)
				gapW = overSec(st.job.condition[batchv1.JobComplete], next.job.created, 0)
				cycleW = overSec(st.job.created, next.job.created, d)
			}
		}
		m.ladderAPI = append(m.ladderAPI, ladderAPI)
		m.runtimeAPI = append(m.runtimeAPI, runtimeAPI)
		m.gapAPI = append(m.gapAPI, gapAPI)
		m.ladderWatch = append(m.ladderWatch, ladderW)
		m.runtimeWatch = append(m.runtimeWatch, runtimeW)
		m.gapWatch = append(m.gapWatch, gapW)
		m.cycleWatch = append(m.cycleWatch, cycleW)
		idle := nan
		if i+1 < len(m.steps) {
			if a, b := m.steps[i].pod, m.steps[i+1].pod; a != nil && b != nil && a.log != nil && b.log != nil &&
				!a.log.measureStart.IsZero() && !b.log.measureStart.IsZero() && a.log.finalTime > 0 {
				end := a.log.measureStart.Add(time.Duration(a.log.finalTime * float64(time.Second)))
				idle = b.log.measureStart.Sub(end).Seconds()
			}
		}
		m.idle = append(m.idle, idle)
	}
	return m
}

// segment is one stretch of a step's life, computed per step.
type segment struct {
	name string
	of   func(i int) float64
}

func (m *measurement) print(t *testing.T, d time.Duration) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "per step (API: status.targets[].steps[] startTime/finishTime, whole seconds; watch: when this test saw the Job created and Complete, ms), stepDuration %s:\n", d)
	b.WriteString("| # | step | threads | Job start | Job finish | runtime overhead (API) | gap to next (API) | ladder overhead (API) | runtime overhead (watch) | gap to next (watch) | ladder overhead (watch) | Job created to next Job created - d (watch) |\n")
	b.WriteString("|---:|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, st := range m.steps {
		fmt.Fprintf(&b, "| %d | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", i+1, st.label, st.threads,
			clock(apiTime(st.result.StartTime)), clock(apiTime(st.result.FinishTime)),
			num(m.runtimeAPI[i]), num(m.gapAPI[i]), num(m.ladderAPI[i]),
			num(m.runtimeWatch[i]), num(m.gapWatch[i]), num(m.ladderWatch[i]), num(m.cycleWatch[i]))
	}
	t.Log(b.String())

	// The chain from one Job's creation to the next one's: the segments add up to the cycle.
	at := func(i int, f func(stepTimes) time.Time) time.Time {
		if i < 0 || i >= len(m.steps) {
			return time.Time{}
		}
		return f(m.steps[i])
	}
	jobCreated := func(s stepTimes) time.Time {
		if s.job == nil {
			return time.Time{}
		}
		return s.job.created
	}
	jobCond := func(c batchv1.JobConditionType) func(stepTimes) time.Time {
		return func(s stepTimes) time.Time {
			if s.job == nil {
				return time.Time{}
			}
			return s.job.condition[c]
		}
	}
	pod := func(f func(*podSeen) time.Time) func(stepTimes) time.Time {
		return func(s stepTimes) time.Time {
			if s.pod == nil {
				return time.Time{}
			}
			return f(s.pod)
		}
	}
	logT := func(f func(*logTimes) time.Time) func(stepTimes) time.Time {
		return pod(func(p *podSeen) time.Time {
			if p.log == nil {
				return time.Time{}
			}
			return f(p.log)
		})
	}
	podCond := func(c corev1.PodConditionType) func(stepTimes) time.Time {
		return pod(func(p *podSeen) time.Time { return p.condition[c] })
	}
	between := func(from, to func(stepTimes) time.Time, minus time.Duration) func(int) float64 {
		return func(i int) float64 { return overSec(at(i, from), at(i, to), minus) }
	}
	podCreated := pod(func(p *podSeen) time.Time { return p.created })
	scheduled := pod(func(p *podSeen) time.Time { return p.scheduled })
	firstOut := logT(func(l *logTimes) time.Time { return l.first })
	measureStart := logT(func(l *logTimes) time.Time { return l.measureStart })
	finalLine := logT(func(l *logTimes) time.Time { return l.final })
	terminated := pod(func(p *podSeen) time.Time { return p.terminated })
	succeeded := pod(func(p *podSeen) time.Time { return p.finished })
	complete := jobCond(batchv1.JobComplete)
	series := func(s stepTimes) time.Time { return s.series }
	statusSeen := func(s stepTimes) time.Time { return s.statusSeen }
	chain := []segment{
		{"Job created -> pod created (Job controller)", between(jobCreated, podCreated, 0)},
		{"pod created -> scheduled (scheduler)", between(podCreated, scheduled, 0)},
		{"scheduled -> first output (kubelet: sandbox, volumes, container start)", between(scheduled, firstOut, 0)},
		{"first output -> measuring starts (sysbench init, connect)", between(firstOut, measureStart, 0)},
		{"measuring starts -> final line, minus d (sysbench end, report)", between(measureStart, finalLine, d)},
		{"final line -> pod terminated seen (exit, PLEG, status)", between(finalLine, terminated, 0)},
		// The operator starts the next step once sysbench has exited with a result; the step
		// itself is recorded when its Job is reported Complete (the segments after the chain).
		{"pod terminated seen -> next Job created (operator: the next step starts)", func(i int) float64 {
			return overSec(at(i, terminated), at(i+1, jobCreated), 0)
		}},
	}
	apiPod := func(f func(*corev1.Pod) *metav1.Time) func(stepTimes) time.Time {
		return pod(func(p *podSeen) time.Time { return apiTime(f(p.last)) })
	}
	apiCond := func(c corev1.PodConditionType) func(stepTimes) time.Time {
		return pod(func(p *podSeen) time.Time { return p.conditionAPI[c] })
	}
	terminatedState := func(p *corev1.Pod) *corev1.ContainerStateTerminated {
		for _, c := range p.Status.ContainerStatuses {
			if c.Name == specs.SysbenchContainer {
				return c.State.Terminated
			}
		}
		return nil
	}
	apiStarted := apiPod(func(p *corev1.Pod) *metav1.Time {
		if s := terminatedState(p); s != nil {
			return &s.StartedAt
		}
		return nil
	})
	apiFinished := apiPod(func(p *corev1.Pod) *metav1.Time {
		if s := terminatedState(p); s != nil {
			return &s.FinishedAt
		}
		return nil
	})
	apiJobCreated := func(s stepTimes) time.Time {
		if s.job == nil {
			return time.Time{}
		}
		return s.job.last.CreationTimestamp.Time
	}
	apiJobCond := func(c batchv1.JobConditionType) func(stepTimes) time.Time {
		return func(s stepTimes) time.Time {
			if s.job == nil {
				return time.Time{}
			}
			for _, jc := range s.job.last.Status.Conditions {
				if jc.Type == c && jc.Status == corev1.ConditionTrue {
					return jc.LastTransitionTime.Time
				}
			}
			return time.Time{}
		}
	}
	apiChain := []segment{
		{"Job created -> pod created", between(apiJobCreated, apiPod(func(p *corev1.Pod) *metav1.Time { return &p.CreationTimestamp }), 0)},
		{"pod created -> PodScheduled", between(apiPod(func(p *corev1.Pod) *metav1.Time { return &p.CreationTimestamp }), apiCond(corev1.PodScheduled), 0)},
		{"PodScheduled -> PodReadyToStartContainers (sandbox)", between(apiCond(corev1.PodScheduled), apiCond(corev1.PodReadyToStartContainers), 0)},
		{"PodScheduled -> Initialized", between(apiCond(corev1.PodScheduled), apiCond(corev1.PodInitialized), 0)},
		{"PodReadyToStartContainers -> container startedAt", between(apiCond(corev1.PodReadyToStartContainers), apiStarted, 0)},
		{"container startedAt -> ContainersReady", between(apiStarted, apiCond(corev1.ContainersReady), 0)},
		{"container startedAt -> finishedAt, minus d (container runtime overhead)", between(apiStarted, apiFinished, d)},
		{"container finishedAt -> Job SuccessCriteriaMet", between(apiFinished, apiJobCond(batchv1.JobSuccessCriteriaMet), 0)},
		{"container finishedAt -> Job Complete", between(apiFinished, apiJobCond(batchv1.JobComplete), 0)},
		{"Job Complete -> next Job created", func(i int) float64 {
			return overSec(at(i, apiJobCond(batchv1.JobComplete)), at(i+1, apiJobCreated), 0)
		}},
	}
	extra := []segment{
		{"scheduled -> PodReadyToStartContainers seen", between(scheduled, podCond(corev1.PodReadyToStartContainers), 0)},
		{"first output -> container running seen (start seen by PLEG)", between(firstOut, pod(func(p *podSeen) time.Time { return p.running }), 0)},
		{"first output -> final line (container's output span)", between(firstOut, finalLine, 0)},
		{"first output -> final line, minus d", between(firstOut, finalLine, d)},
		{"idle between steps: measuring end -> next step's measuring starts (log)", func(i int) float64 { return m.idle[i] }},
		{"sysbench's own total time in the final line, minus d", func(i int) float64 {
			if p := m.steps[i].pod; p != nil && p.log != nil && p.log.finalTime > 0 {
				return p.log.finalTime - d.Seconds()
			}
			return math.NaN()
		}},
		{"container finishedAt (API, s) -> pod terminated seen", between(apiFinished, terminated, 0)},
		{"pod terminated seen -> Job Complete seen", between(terminated, complete, 0)},
		{"pod Succeeded seen -> Job SuccessCriteriaMet seen", between(succeeded, jobCond(batchv1.JobSuccessCriteriaMet), 0)},
		{"Job SuccessCriteriaMet seen -> Job Complete seen", between(jobCond(batchv1.JobSuccessCriteriaMet), complete, 0)},
		{"pod terminated seen -> tracking finalizer removed seen", between(terminated, pod(func(p *podSeen) time.Time { return p.finalizerGone }), 0)},
		{"Job Complete -> next Job created (watch; negative: the next step started before)", func(i int) float64 {
			return overSec(at(i, complete), at(i+1, jobCreated), 0)
		}},
		{"container terminated seen -> pod Succeeded seen (kubelet: next PLEG relist, sandbox stop)", between(terminated, succeeded, 0)},
		{"pod Succeeded seen -> Job Complete seen (Job controller: 1 s batch)", between(succeeded, complete, 0)},
		{"Job Complete -> step in status (operator: status write)", between(complete, statusSeen, 0)},
		{"Job Complete -> series stored (operator: batched, every 8 steps and at the target's end)", between(complete, series, 0)},
	}

	b.Reset()
	b.WriteString("breakdown per step, watched (ms; the segments add up to Job created -> next Job created):\n")
	writeSegments(&b, m, chain, true)
	b.WriteString("\nthe API's own timestamps (whole seconds):\n")
	writeSegments(&b, m, apiChain, false)
	b.WriteString("\nmore, watched and from the log (s):\n")
	writeSegments(&b, m, extra, false)
	t.Log(b.String())
	m.printJobs(t)
	m.printTimeline(t)
	var h strings.Builder
	for _, c := range m.runHistory {
		fmt.Fprintf(&h, "%s  %s\n", clockMs(c.at), c.what)
	}
	t.Logf("the run's Progressing condition as it changed (watched):\n%s", h.String())

	// The stable summary lines, each at the start of a line.
	fmt.Printf("idle between steps median (a step's measuring end to the next one's measuring start, container logs): %.3f s (min %.3f, max %.3f, %d pairs)\n",
		median(m.idle), minKnown(m.idle), maxKnown(m.idle), known(m.idle))
	fmt.Printf("step overhead median: %.2f s\n", median(m.ladderAPI))
	fmt.Printf("step overhead median (watched Job Complete to Job Complete, ms precision): %.2f s\n", median(m.ladderWatch))
	fmt.Printf("Job created to next Job created minus stepDuration median (watched): %.2f s\n", median(m.cycleWatch))
	fmt.Printf("Job runtime overhead median: %.2f s\n", median(m.runtimeAPI))
	fmt.Printf("Job runtime overhead median (watched Job created to Complete): %.2f s\n", median(m.runtimeWatch))
	fmt.Printf("gap median: %.2f s\n", median(m.gapAPI))
	fmt.Printf("gap median (watched Job Complete to next Job created): %.2f s\n", median(m.gapWatch))
	for _, s := range chain {
		fmt.Printf("segment median: %s: %.3f s\n", s.name, median(values(m, s)))
	}
}

// printJobs lists every sysbench Job of the target: failed attempts cost a whole step each.
func (m *measurement) printJobs(t *testing.T) {
	t.Helper()
	var b strings.Builder
	b.WriteString("every sysbench Job of the target (watched times):\n| Job | step | created | finished | outcome | sysbench exit | termination message |\n|---|---|---|---|---|---:|---|\n")
	for _, j := range m.jobs {
		outcome, finished := "-", time.Time{}
		for _, c := range []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed} {
			if at := j.condition[c]; !at.IsZero() {
				outcome, finished = string(c), at
			}
		}
		exit, message := "-", ""
		if p := m.podOf[j.last.UID]; p != nil {
			for _, c := range p.last.Status.ContainerStatuses {
				if c.Name == specs.SysbenchContainer && c.State.Terminated != nil {
					exit = strconv.Itoa(int(c.State.Terminated.ExitCode))
					message = c.State.Terminated.Message
				}
			}
		}
		if len(message) > 200 {
			message = message[:200] + "..."
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", j.last.Name, j.last.Labels[specs.LabelStep], clockMs(j.created),
			clockMs(finished), outcome, exit, strings.ReplaceAll(strings.TrimSpace(message), "\n", " / "))
	}
	t.Log(b.String())
}

// printTimeline prints, for the step whose cycle (Job created to next Job created) is the
// median one, everything watched from its Job's creation to the next Job's.
func (m *measurement) printTimeline(t *testing.T) {
	t.Helper()
	med := median(m.cycleWatch)
	pick := -1
	for i, x := range m.cycleWatch {
		if !math.IsNaN(x) && (pick < 0 || math.Abs(x-med) < math.Abs(m.cycleWatch[pick]-med)) {
			pick = i
		}
	}
	if pick < 0 || m.steps[pick].job == nil {
		return
	}
	st, next := m.steps[pick], m.steps[pick+1]
	var events []change
	events = append(events, st.job.history...)
	if st.pod != nil {
		events = append(events, change{st.pod.created, "pod created"})
		events = append(events, st.pod.history...)
		if l := st.pod.log; l != nil {
			events = append(events, change{l.first, "log: first line (sysbench banner)"},
				change{l.measureStart, "log: measuring starts (first interval line minus its time)"},
				change{l.final, "log: final line"})
		}
	}
	events = append(events, change{st.series, "results ConfigMap: the step's series stored"},
		change{st.statusSeen, "run status: the step recorded"})
	if next.job != nil {
		events = append(events, change{next.job.created, "next Job created: " + next.job.last.Name})
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].at.Before(events[j].at) })
	var b strings.Builder
	fmt.Fprintf(&b, "timeline of step %d (%s, %d threads; its cycle %.3f s is the median), seconds from its Job's creation:\n", pick+1, st.label, st.threads, m.cycleWatch[pick])
	for _, e := range events {
		if e.at.IsZero() {
			continue
		}
		fmt.Fprintf(&b, "%+8.3f  %s  %s\n", e.at.Sub(st.job.created).Seconds(), clockMs(e.at), e.what)
	}
	t.Log(b.String())
}

func clockMs(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("15:04:05.000")
}

func values(m *measurement, s segment) []float64 {
	var v []float64
	for i := range m.steps {
		v = append(v, s.of(i))
	}
	return v
}

// writeSegments writes one row per segment: its value per step, then median, min and max.
func writeSegments(b *strings.Builder, m *measurement, segs []segment, sum bool) {
	b.WriteString("| segment |")
	for i := range m.steps {
		fmt.Fprintf(b, " %d |", i+1)
	}
	b.WriteString(" median | min | max |\n|---|")
	for range m.steps {
		b.WriteString("---:|")
	}
	b.WriteString("---:|---:|---:|\n")
	total := make([]float64, len(m.steps))
	for _, s := range segs {
		v := values(m, s)
		fmt.Fprintf(b, "| %s |", s.name)
		for i, x := range v {
			fmt.Fprintf(b, " %s |", num(x))
			total[i] += x
		}
		fmt.Fprintf(b, " %s | %s | %s |\n", num(median(v)), num(minKnown(v)), num(maxKnown(v)))
	}
	if sum {
		b.WriteString("| sum: Job created -> next Job created, minus d |")
		for _, x := range total {
			fmt.Fprintf(b, " %s |", num(x))
		}
		fmt.Fprintf(b, " %s | %s | %s |\n", num(median(total)), num(minKnown(total)), num(maxKnown(total)))
	}
}

func apiTime(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}

// overSec is to - from - minus in seconds, NaN when either time is unknown.
func overSec(from, to time.Time, minus time.Duration) float64 {
	if from.IsZero() || to.IsZero() {
		return math.NaN()
	}
	return (to.Sub(from) - minus).Seconds()
}

func clock(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("15:04:05")
}

func num(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

// median of the known (non-NaN) values, NaN when there are none.
func median(v []float64) float64 {
	var k []float64
	for _, x := range v {
		if !math.IsNaN(x) {
			k = append(k, x)
		}
	}
	if len(k) == 0 {
		return math.NaN()
	}
	sort.Float64s(k)
	if len(k)%2 == 1 {
		return k[len(k)/2]
	}
	return (k[len(k)/2-1] + k[len(k)/2]) / 2
}

// known counts the known (non-NaN) values.
func known(v []float64) int {
	n := 0
	for _, x := range v {
		if !math.IsNaN(x) {
			n++
		}
	}
	return n
}

func minKnown(v []float64) float64 {
	r := math.NaN()
	for _, x := range v {
		if !math.IsNaN(x) && (math.IsNaN(r) || x < r) {
			r = x
		}
	}
	return r
}

func maxKnown(v []float64) float64 {
	r := math.NaN()
	for _, x := range v {
		if !math.IsNaN(x) && (math.IsNaN(r) || x > r) {
			r = x
		}
	}
	return r
}

// The kubelet histograms whose means over the run are printed.
var kubeletHistograms = []string{
	"kubelet_pleg_relist_interval_seconds",
	"kubelet_pleg_relist_duration_seconds",
	"kubelet_pod_start_sli_duration_seconds",
	"kubelet_pod_start_duration_seconds",
	"kubelet_pod_worker_start_duration_seconds",
	"kubelet_pod_worker_duration_seconds",
	"kubelet_run_podsandbox_duration_seconds",
	"kubelet_runtime_operations_duration_seconds",
}

// kubeletMetrics reads the _sum and _count series of kubeletHistograms from a node's kubelet,
// through the API server's node proxy.
func kubeletMetrics(ctx context.Context, t *testing.T, cs kubernetes.Interface, node string) map[string]float64 {
	t.Helper()
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node, "proxy", "metrics").DoRaw(ctx)
	if err != nil {
		t.Logf("kubelet metrics of %s: %v", node, err)
		return nil
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, h := range kubeletHistograms {
			if !strings.HasPrefix(line, h+"_sum") && !strings.HasPrefix(line, h+"_count") {
				continue
			}
			i := strings.LastIndex(line, " ")
			if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
				out[line[:i]] = v
			}
		}
	}
	return out
}

// metricsDelta prints count and mean of every histogram series that grew between two reads.
func metricsDelta(before, after map[string]float64) string {
	var lines []string
	for k, sum := range after {
		name, labels, ok := strings.Cut(k, "{")
		if !ok {
			name, labels = k, ""
		} else {
			labels = "{" + labels
		}
		base, isSum := strings.CutSuffix(name, "_sum")
		if !isSum {
			continue
		}
		n := after[base+"_count"+labels] - before[base+"_count"+labels]
		if n <= 0 {
			continue
		}
		s := sum - before[k]
		lines = append(lines, fmt.Sprintf("%s%s: n=%.0f mean=%.3f s", base, labels, n, s/n))
	}
	sort.Strings(lines)
	if len(lines) == 0 {
		return "(no kubelet metrics)"
	}
	return strings.Join(lines, "\n")
}
