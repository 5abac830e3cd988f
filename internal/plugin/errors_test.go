package plugin

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// checkError fails unless err says every one of wants.
func checkError(t *testing.T, what string, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %q does not say %q", what, err, w)
		}
	}
}

func TestErrorsSayWhatToDo(t *testing.T) {
	needCluster(t)
	png := filepath.Join(t.TempDir(), "x.png")
	for _, c := range []struct {
		args  []string
		wants []string
	}{
		// Run not found: where the plugin looked, and how to look everywhere.
		{[]string{"get", "nope"}, []string{`"nope" not found in namespace "bench"`, "kubectl mysqlbench get -A"}},
		{[]string{"describe", "nope"}, []string{`"nope" not found in namespace "bench"`, "kubectl mysqlbench get -A"}},
		{[]string{"-n", nsStuck, "export", "pk", "-o", "csv"}, []string{`"pk" not found in namespace "stuck"`, "get -A"}},
		{[]string{"compare", "pk", "nope"}, []string{`"nope" not found`}},
		// Run not finished: its phase and progress, and how to wait.
		{[]string{"-n", nsStuck, "export", "stuck", "-o", "json"},
			[]string{"not finished yet", "phase Provisioning", "0 of 2 targets done", "kubectl mysqlbench get stuck -w"}},
		{[]string{"-n", nsStuck, "plot", "stuck", "--output-file", png}, []string{"not finished yet", "get stuck -w"}},
		// No such target: the targets there are.
		{[]string{"logs", "pk", "mysql84", "1"}, []string{`no target "mysql84"`, "its targets: mariadb, mariadb-psoff"}},
		{[]string{"plot", "pk", "--relative-to", "mysql84", "--output-file", png}, []string{`"mysql84"`, "mariadb", "mariadb-psoff"}},
		// Wrong arguments name what is wanted.
		{[]string{"describe"}, []string{"needs RUN"}},
		{[]string{"logs", "pk", "mariadb"}, []string{"needs RUN TARGET STEP"}},
	} {
		_, _, err := kubectlMysqlbench(t, c.args...)
		checkError(t, strings.Join(c.args, " "), err, c.wants...)
	}
}

// A finished run whose results ConfigMap was deleted: the error says so and where the numbers
// still are.
func TestResultsConfigMapMissing(t *testing.T) {
	needCluster(t)
	ctx := context.Background()
	run := newRun(nsBench, "lost", 1, 1)
	run.Spec.Targets = run.Spec.Targets[:1]
	if err := k8s.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := waitFinished(ctx, nsBench, "lost", 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: nsBench, Name: "lost-results"}}
	if err := k8s.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	_, _, err := kubectlMysqlbench(t, "export", "lost", "-o", "csv")
	checkError(t, "export of a run without results", err,
		"has finished (Succeeded)", "results ConfigMap bench/lost-results is missing", "kubectl mysqlbench describe lost")
	// describe reads the status, which still holds the numbers.
	out, _, err := kubectlMysqlbench(t, "describe", "lost")
	if err != nil || lineStarting(out, "1", "25058") == "" {
		t.Errorf("describe of a run without results ConfigMap: %v", err)
	}
}

// A ConfigMap under the run's results name that the run does not control (someone else's, or
// planted after the run lost its own) is never shown as the run's results.
func TestResultsConfigMapNotTheRuns(t *testing.T) {
	needCluster(t)
	ctx := context.Background()
	run := newRun(nsBench, "foreign", 1, 1)
	run.Spec.Targets = run.Spec.Targets[:1]
	if err := k8s.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := waitFinished(ctx, nsBench, "foreign", 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: nsBench, Name: "foreign-results"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.OwnerReferences = nil
	if err := k8s.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	_, _, err := kubectlMysqlbench(t, "export", "foreign", "-o", "json")
	checkError(t, "export from a ConfigMap the run does not control", err,
		"bench/foreign-results is not benchmarkrun foreign's", "kubectl mysqlbench describe foreign")
}
