// Package specs holds the engine-neutral pure builders: a BenchmarkRun (and a target) in, a
// Kubernetes object or a decision out. Names and labels, placement, the step Jobs and their
// order, the server's NetworkPolicy, and the rules every server the operator configures shares
// (the target's myCnf, the data that must fit its volume, the benchmark account). What a server
// is made of belongs to its engine (internal/engine/builtin, percona). Nothing here talks to the
// API server, so every builder is table-tested without a client.
package specs

import (
	"fmt"
	"hash/fnv"
	"strings"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// Labels every object the operator creates carries.
const (
	LabelRun       = "mysqlbench.io/run"
	LabelTarget    = "mysqlbench.io/target"
	LabelStep      = "mysqlbench.io/step"
	LabelComponent = "app.kubernetes.io/component"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelName      = "app.kubernetes.io/name"
	ManagedBy      = "mysqlbench-operator"

	// ComponentServer marks benchmark server pods, ComponentClient sysbench pods.
	ComponentServer = "server"
	ComponentClient = "sysbench"
)

// maxStatefulSetName leaves room for the controller-revision-hash label, which is the
// StatefulSet's name plus a hash and must fit 63 characters.
const maxStatefulSetName = 52

// Shorten joins parts with "-" and, when the result is longer than limit, cuts it and appends a
// hash of the whole, so distinct inputs keep distinct names. It also makes the name a DNS-1035
// label, as Service names must: it starts with a letter, and the dots a run name may have
// (object names are DNS subdomains) become "-", with the hash appended so that "a.b" and "a-b"
// stay distinct.
func Shorten(limit int, parts ...string) string {
	s := strings.Join(parts, "-")
	if s != "" && (s[0] < 'a' || s[0] > 'z') {
		s = "mb-" + s
	}
	whole := s
	dotted := strings.Contains(s, ".")
	s = strings.ReplaceAll(s, ".", "-")
	if len(s) <= limit && !dotted {
		return s
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(whole))
	sum := fmt.Sprintf("%08x", h.Sum32())
	head := strings.TrimRight(s[:min(len(s), limit-len(sum)-1)], "-")
	return head + "-" + sum
}

// LabelValue fits a name into a label value (at most 63 characters).
func LabelValue(s string) string {
	if len(s) <= 63 {
		return s
	}
	return Shorten(63, s)
}

// ServerName names a builtin target's StatefulSet, headless Service and ConfigMap.
func ServerName(run *v1.BenchmarkRun, target string) string {
	return Shorten(maxStatefulSetName, run.Name, target)
}

// ConnectionSecretName names the Secret with a target's generated credentials.
func ConnectionSecretName(run *v1.BenchmarkRun, target string) string {
	return Shorten(253, run.Name, target, "credentials")
}

// ReporterConfigMapName names the ConfigMap holding the sysbench reporter of a run.
func ReporterConfigMapName(run *v1.BenchmarkRun) string {
	return Shorten(253, run.Name, "sysbench-reporter")
}

// ResultsConfigMapName names the ConfigMap holding a run's results.
func ResultsConfigMapName(run *v1.BenchmarkRun) string {
	return Shorten(253, run.Name, "results")
}

// Attempt tells the Jobs of one step apart: each failed attempt gets a new Job, and so does every
// attempt after a server restart (the Jobs of the earlier server instance keep their names).
type Attempt struct {
	// Restarts is the target's count of server restarts when the Job was created.
	Restarts int32
	// Replaced is the repetition the server instance was made for when the operator replaced
	// it (spec.serverInstance PerRepetition), 0 before any replacement: each instance probes,
	// prepares and warms up with Jobs of its own.
	Replaced int32
	// Failed is the count of failed attempts of the step before this one.
	Failed int32
}

// AttemptOf is the attempt of a target's step after failed failed attempts, as the target's
// status stands.
func AttemptOf(ts *v1.TargetStatus, failed int32) Attempt {
	a := Attempt{Restarts: ts.ServerRestarts, Failed: failed}
	if ts.LastReplacement != nil {
		a.Replaced = ts.LastReplacement.Repetition
	}
	return a
}

func (a Attempt) String() string {
	s := ""
	if a.Restarts > 0 {
		s = fmt.Sprintf("r%d", a.Restarts)
	}
	if a.Replaced > 0 {
		s += fmt.Sprintf("i%d", a.Replaced)
	}
	return s + fmt.Sprintf("a%d", a.Failed)
}

// JobName names the Job of one attempt of a target's step. step is "probe", "prepare",
// "warmup", "cleanup" or LadderStep's "sNN" / "rKsNN" for a rung of the ladder.
func JobName(run *v1.BenchmarkRun, target, step string, attempt Attempt) string {
	// The Job name becomes the job-name label of its pods: at most 63 characters.
	return Shorten(63, run.Name, target, step, attempt.String())
}

// LadderStep names rung i (0-based) of the ladder in repetition rep (1-based) for JobName and
// the step label: "s03" in the first repetition (the names runs had before repetitions existed),
// "r2s03" in the second.
func LadderStep(i int, rep int32) string {
	if rep <= 1 {
		return fmt.Sprintf("s%02d", i+1)
	}
	return fmt.Sprintf("r%ds%02d", rep, i+1)
}

// RunLabels are the labels of everything created for a run.
func RunLabels(run *v1.BenchmarkRun) map[string]string {
	return map[string]string{
		LabelManagedBy: ManagedBy,
		LabelName:      "mysqlbench",
		LabelRun:       LabelValue(run.Name),
	}
}

// TargetLabels are the labels of everything created for one target of a run.
func TargetLabels(run *v1.BenchmarkRun, target string) map[string]string {
	l := RunLabels(run)
	l[LabelTarget] = target
	return l
}

// ServerPodLabels select the pods of a target's server.
func ServerPodLabels(run *v1.BenchmarkRun, target string) map[string]string {
	l := TargetLabels(run, target)
	l[LabelComponent] = ComponentServer
	return l
}

// ClientPodLabels are the labels of a sysbench pod.
func ClientPodLabels(run *v1.BenchmarkRun, target, step string) map[string]string {
	l := TargetLabels(run, target)
	l[LabelComponent] = ComponentClient
	l[LabelStep] = step
	return l
}
