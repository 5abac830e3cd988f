package plugin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	client "github.com/mysqlbench/mysqlbench-operator/internal/kubeclient"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// getRun reads a run from the namespace of -n; a missing run is an error that says where it
// looked and how to look everywhere.
func (e *env) getRun(ctx context.Context, name string) (*v1.BenchmarkRun, error) {
	c, err := e.clients()
	if err != nil {
		return nil, err
	}
	ns, _, err := e.namespace()
	if err != nil {
		return nil, err
	}
	run := &v1.BenchmarkRun{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, run); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, runNotFound(ns, name)
		}
		return nil, fmt.Errorf("get benchmarkrun %s/%s: %w", ns, name, err)
	}
	return run, nil
}

func runNotFound(ns, name string) error {
	return fmt.Errorf("benchmarkrun %q not found in namespace %q: check the name and the namespace (-n NAMESPACE), "+
		"or list the runs of every namespace with `kubectl mysqlbench get -A`", name, ns)
}

// notFinished says that what the command needs exists only once the run has ended, where the
// run is, and how to wait for it.
func notFinished(run *v1.BenchmarkRun, what string) error {
	return fmt.Errorf("benchmarkrun %s is not finished yet (%s): %s is written when every target is done; "+
		"wait, or follow it with `kubectl mysqlbench get %s -w`", run.Name, progress(run), what, run.Name)
}

// progress is where a run is, in one line: "phase Running, target 2/3 mariadb-psoff, step 3/4
// (4 threads), 2 of 3 targets done".
func progress(run *v1.BenchmarkRun) string {
	phase := string(run.Status.Phase)
	if phase == "" {
		phase = "not started: no status yet (is the operator running and watching this namespace?)"
	}
	parts := []string{"phase " + phase}
	if !run.Status.Phase.Finished() && run.Status.CurrentTarget != "" {
		i := slices.IndexFunc(run.Spec.Targets, func(t v1.Target) bool { return t.Name == run.Status.CurrentTarget })
		parts = append(parts, fmt.Sprintf("target %d/%d %s", i+1, len(run.Spec.Targets), run.Status.CurrentTarget))
		if run.Status.CurrentStep != "" {
			parts = append(parts, "step "+run.Status.CurrentStep)
		}
	}
	done, total := targetsDone(run)
	parts = append(parts, fmt.Sprintf("%d of %d targets done", done, total))
	return strings.Join(parts, ", ")
}

// targetsDone counts the targets that have ended, of all the spec names.
func targetsDone(run *v1.BenchmarkRun) (int, int) {
	done := 0
	for _, ts := range run.Status.Targets {
		if ts.Phase.Finished() {
			done++
		}
	}
	return done, len(run.Spec.Targets)
}

// targetNames are the run's targets in spec order.
func targetNames(run *v1.BenchmarkRun) []string {
	names := make([]string, 0, len(run.Spec.Targets))
	for _, t := range run.Spec.Targets {
		names = append(names, t.Name)
	}
	return names
}

// checkTarget fails for a target the run does not have, naming those it has.
func checkTarget(run *v1.BenchmarkRun, target string) error {
	if slices.Contains(targetNames(run), target) {
		return nil
	}
	return noSuchTarget(run.Name, target, targetNames(run))
}

func noSuchTarget(run, target string, have []string) error {
	return fmt.Errorf("benchmarkrun %s has no target %q; its targets: %s", run, target, strings.Join(have, ", "))
}

// targetStatus is the status of the named target, or nil.
func targetStatus(run *v1.BenchmarkRun, name string) *v1.TargetStatus {
	for i := range run.Status.Targets {
		if run.Status.Targets[i].Name == name {
			return &run.Status.Targets[i]
		}
	}
	return nil
}

// resultsData is the run's results ConfigMap's data, once the run has finished and the operator
// has written results.json.
func (e *env) resultsData(ctx context.Context, run *v1.BenchmarkRun) (map[string]string, error) {
	if !run.Status.Phase.Finished() {
		return nil, notFinished(run, "its results ConfigMap")
	}
	c, err := e.clients()
	if err != nil {
		return nil, err
	}
	name := run.Status.ResultsConfigMap
	if name == "" {
		name = specs.ResultsConfigMapName(run)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("benchmarkrun %s has finished (%s) but its results ConfigMap %s/%s is missing (deleted?): "+
				"the run's status still holds every step's numbers (`kubectl mysqlbench describe %s`); the per-second "+
				"series were only in that ConfigMap", run.Name, run.Status.Phase, run.Namespace, name, run.Name)
		}
		return nil, fmt.Errorf("get results ConfigMap %s/%s: %w", run.Namespace, name, err)
	}
	// The operator fails a run without writing results when the ConfigMap under its name is
	// someone else's (and then clears status.resultsConfigMap): never show that one as the run's.
	if !metav1.IsControlledBy(cm, run) {
		return nil, fmt.Errorf("the ConfigMap %s/%s is not benchmarkrun %s's (it is not controlled by the run), so the "+
			"run's results were not written there: see its conditions (`kubectl mysqlbench describe %s`); the status "+
			"still holds every step's numbers", run.Namespace, name, run.Name, run.Name)
	}
	if _, ok := cm.Data[report.KeyResultsJSON]; !ok {
		return nil, fmt.Errorf("results ConfigMap %s/%s of benchmarkrun %s (%s) holds no %s: the operator writes it "+
			"before it sets the final phase, so the ConfigMap was changed by someone else; the run's status still "+
			"holds every step's numbers (`kubectl mysqlbench describe %s`)",
			run.Namespace, name, run.Name, run.Status.Phase, report.KeyResultsJSON, run.Name)
	}
	return cm.Data, nil
}
