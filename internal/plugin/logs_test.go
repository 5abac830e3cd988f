package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// The operator deletes a successful step's Job and pod once it has stored the result: the
// plugin says so and where the numbers are, and prints no log text of its own.
func TestLogsOfADeletedStepSaySo(t *testing.T) {
	needCluster(t)
	run := getRun(t, nsBench, "pk")
	for _, step := range []string{"1", "s01", "8"} {
		out, _, err := kubectlMysqlbench(t, "logs", "pk", "mariadb-psoff", step)
		checkError(t, "logs of step "+step, err, "is gone", "deleted its Job and pod once it had stored the result",
			"kubectl mysqlbench describe pk", "kubectl mysqlbench export pk -o json")
		if out != "" {
			t.Errorf("logs of a deleted step printed %q", out)
		}
	}
	// The status' numbers are quoted as they are.
	_, _, err := kubectlMysqlbench(t, "logs", "pk", "mariadb-psoff", "4")
	s := run.Status.Targets[1].Steps[2]
	checkError(t, "logs at 4 threads", err, "step s03 (4 threads, repetition 1)",
		fmt.Sprintf("QPS %.2f, TPS %.2f, p95 %.3f ms", s.QPS.Total, s.TPS, s.Latency.P95Ms))
	_, _, err = kubectlMysqlbench(t, "logs", "pk", "mariadb", "prepare")
	checkError(t, "logs of prepare", err, "is gone", "steps that succeeded")
	// A builtin server is deleted with its tables: the operator runs no cleanup step for it.
	_, _, err = kubectlMysqlbench(t, "logs", "pk", "mariadb", "cleanup")
	checkError(t, "logs of cleanup on a builtin target", err, "has no cleanup step for target mariadb", "probe, prepare")
	_, _, err = kubectlMysqlbench(t, "-n", nsStuck, "logs", "stuck", "mariadb", "2")
	checkError(t, "logs of a step not run yet", err, "has not run yet", "target phase")
}

// A failed attempt is kept: --all-attempts prints its log as the kubelet serves it, and says that
// the attempt whose result counts is gone.
func TestLogsAllAttemptsPrintsTheKeptFailedAttempt(t *testing.T) {
	needCluster(t)
	_, _, err := kubectlMysqlbench(t, "logs", "pk", "mariadb", "2")
	checkError(t, "logs of the retried step", err, "is gone", "2 attempt(s)", "1 earlier attempt(s)", "--all-attempts")

	out, errOut, err := kubectlMysqlbench(t, "logs", "pk", "mariadb", "2", "--all-attempts")
	if err != nil {
		t.Fatal(err)
	}
	job := &batchv1.Job{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: nsBench, Name: "pk-mariadb-s02-a0"}, job); err != nil {
		t.Fatalf("the failed attempt's Job is not kept: %v", err)
	}
	want := captured("run_not_prepared_1146.txt")
	if !strings.Contains(out, "==> step s02 (2 threads, repetition 1), Job pk-mariadb-s02-a0 (failed") || !strings.HasSuffix(out, want) {
		t.Errorf("--all-attempts does not print the failed attempt's log as served:\n%s", out)
	}
	if !strings.Contains(errOut, "The attempt whose result the status holds is gone") {
		t.Errorf("--all-attempts does not say the counted attempt is gone: %q", errOut)
	}
}

// STEP is a thread count, a step name or a phase; anything else is refused with the forms.
func TestLogsStepForms(t *testing.T) {
	needCluster(t)
	for _, step := range []string{"3", "s05", "r2s01", "run"} {
		_, _, err := kubectlMysqlbench(t, "logs", "pk", "mariadb", step)
		checkError(t, "STEP "+step, err, "no step", "a thread count of the ladder (1, 2, 4, 8)", "s01", "probe, prepare, warmup or cleanup")
	}
	_, _, err := kubectlMysqlbench(t, "logs", "base", "mariadb", "2", "--repetition", "3")
	checkError(t, "--repetition 3", err, "step r3s02 (2 threads, repetition 3)", "is gone")
	_, _, err = kubectlMysqlbench(t, "logs", "base", "mariadb", "2", "--repetition", "5")
	checkError(t, "--repetition 5", err, "measures 4 repetition(s)")
}

// failingLogs is a kubelet that cannot serve logs (node gone, log rotated).
type failingLogs struct{}

func (failingLogs) Stream(context.Context, string, string, string, bool) (io.ReadCloser, error) {
	return nil, errors.New("the server rejected our request (get pods/log)")
}

// When the log cannot be read the plugin says so and prints the termination message the
// kubelet kept in the pod's status (for a failed container, the log's tail), nothing else.
func TestLogsFallsBackToTheTerminationMessage(t *testing.T) {
	needCluster(t)
	var out, errOut strings.Builder
	cmd := NewCommand(Options{Streams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Logs: failingLogs{}})
	cmd.SetArgs([]string{"--kubeconfig", kubeconfig, "-n", nsBench, "logs", "pk", "mariadb", "s02", "--all-attempts"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "cannot read the log of pod pk-mariadb-s02-a0-") ||
		!strings.Contains(errOut.String(), "termination message") {
		t.Errorf("stderr %q does not say why and what follows", errOut.String())
	}
	if !strings.Contains(out.String(), `FATAL: MySQL error: 1146 "Table 'sbtest.sbtest1' doesn't exist"`) {
		t.Errorf("stdout %q is not the termination message", out.String())
	}
}

// In a run of several workloads a thread count needs --workload, the steps' own names carry
// their workload, and the prepares of data prepared again are named by their step.
func TestResolveStepOfASuite(t *testing.T) {
	suite := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "micro"}, Spec: v1.BenchmarkRunSpec{
		Targets: []v1.Target{{Name: "mariadb", Image: "mariadb:11.8"}},
		Workloads: []v1.NamedWorkload{
			{Name: "rw", Script: "oltp_read_write", Tables: 1, TableSize: 1000},
			{Name: "points", Script: "oltp_point_select", Tables: 1, TableSize: 1000},
		},
		Ladder:      v1.Ladder{Threads: []int32{1, 8}, Warmup: &metav1.Duration{Duration: 10 * time.Second}},
		Repetitions: ptr.To[int32](2),
	}}
	one := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "one"}, Spec: v1.BenchmarkRunSpec{
		Targets:  []v1.Target{{Name: "mariadb", Image: "mariadb:11.8"}},
		Workload: v1.Workload{Script: "oltp_point_select", Tables: 1, TableSize: 1000},
		Ladder:   v1.Ladder{Threads: []int32{1, 8}},
	}}
	for _, tc := range []struct {
		run        *v1.BenchmarkRun
		step       string
		repetition int32
		workload   string
		want       stepRef
		wantErr    []string
	}{
		// points reads, so it is measured first; round 2 measures points again after rw wrote.
		{run: suite, step: "8", workload: "rw", want: stepRef{label: "rw-s02", threads: 8, repetition: 1, workload: "rw"}},
		{run: suite, step: "1", repetition: 2, workload: "points", want: stepRef{label: "points-r2s01", threads: 1, repetition: 2, workload: "points"}},
		{run: suite, step: "points-r2s02", want: stepRef{label: "points-r2s02", threads: 8, repetition: 2, workload: "points"}},
		{run: suite, step: "prepare-5", want: stepRef{label: "prepare-5"}},
		{run: suite, step: "warmup-5", want: stepRef{label: "warmup-5"}},
		{run: suite, step: "prepare", want: stepRef{label: "prepare"}},
		{run: suite, step: "8", wantErr: []string{"measures 2 workloads at 8 threads (points, rw): say which with --workload"}},
		{run: suite, step: "8", workload: "insert", wantErr: []string{"--workload insert", "no such workload", "points, rw"}},
		{run: suite, step: "s02", wantErr: []string{`no step "s02"`, "points-s01", "--workload names one of points, rw"}},
		{run: suite, step: "prepare-3", wantErr: []string{`no step "prepare-3"`}},
		{run: suite, step: "rw-r3s01", wantErr: []string{`no step "rw-r3s01"`}},
		{run: one, step: "8", workload: "points", wantErr: []string{"measures one workload", "leave --workload out"}},
		{run: one, step: "8", want: stepRef{label: "s02", threads: 8, repetition: 1}},
	} {
		name := fmt.Sprintf("%s %s --repetition %d --workload %q", tc.run.Name, tc.step, tc.repetition, tc.workload)
		rep := tc.repetition
		if rep == 0 {
			rep = 1
		}
		got, err := resolveStep(tc.run, "mariadb", tc.step, rep, tc.workload)
		if tc.wantErr != nil {
			checkError(t, name, err, tc.wantErr...)
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", name, got, err, tc.want)
		}
	}
}
