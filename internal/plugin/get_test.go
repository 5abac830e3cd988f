package plugin

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// fields splits a table line on runs of spaces.
func fields(line string) []string { return strings.Fields(line) }

// lineStarting is the first line of out whose fields start with want, or "".
func lineStarting(out string, want ...string) string {
	for _, l := range strings.Split(out, "\n") {
		f := fields(l)
		if len(f) >= len(want) && strings.Join(f[:len(want)], " ") == strings.Join(want, " ") {
			return l
		}
	}
	return ""
}

func TestGetListsTheRunsOfTheNamespace(t *testing.T) {
	needCluster(t)
	out, _, err := kubectlMysqlbench(t, "get")
	if err != nil {
		t.Fatal(err)
	}
	if got := fields(strings.Split(out, "\n")[0]); strings.Join(got, " ") != "NAME PHASE TARGETS CURRENT AGE" {
		t.Errorf("header %q, want NAME PHASE TARGETS CURRENT AGE", got)
	}
	for _, name := range []string{"pk", "base", "cand"} {
		if lineStarting(out, name, "Succeeded", "2/2", "-") == "" {
			t.Errorf("no line %q Succeeded 2/2 -", name)
		}
	}
	if strings.Contains(out, "stuck") {
		t.Errorf("get lists a run of another namespace:\n%s", out)
	}
}

func TestGetAllNamespacesAddsTheNamespaceColumn(t *testing.T) {
	needCluster(t)
	out, _, err := kubectlMysqlbench(t, "get", "-A")
	if err != nil {
		t.Fatal(err)
	}
	if got := fields(strings.Split(out, "\n")[0]); strings.Join(got, " ") != "NAMESPACE NAME PHASE TARGETS CURRENT AGE" {
		t.Errorf("header %q", got)
	}
	if lineStarting(out, nsBench, "pk", "Succeeded", "2/2") == "" {
		t.Errorf("no line for bench/pk")
	}
	// A run in progress names its current target and step, as its status says.
	stuck := getRun(t, nsStuck, "stuck")
	if lineStarting(out, nsStuck, "stuck", string(stuck.Status.Phase), "0/2", stuck.Status.CurrentTarget) == "" {
		t.Errorf("no line for stuck/stuck in %s at %s %s", stuck.Status.Phase, stuck.Status.CurrentTarget, stuck.Status.CurrentStep)
	}
	if _, _, err := kubectlMysqlbench(t, "get", "pk", "-A"); err == nil {
		t.Error("get RUN -A: no error")
	}
}

func TestGetRunShowsProgressAndTheQPSTable(t *testing.T) {
	needCluster(t)
	out, _, err := kubectlMysqlbench(t, "get", "pk")
	if err != nil {
		t.Fatal(err)
	}
	run := getRun(t, nsBench, "pk")
	if lineStarting(out, "pk", "Succeeded", "2/2") == "" {
		t.Errorf("no progress line")
	}
	for _, ts := range run.Status.Targets {
		if lineStarting(out, ts.Name, "Succeeded", ts.ServerVersion, "4/4") == "" {
			t.Errorf("no line for target %s", ts.Name)
		}
	}
	checkQPSTable(t, out, run)
}

// checkQPSTable finds "QPS by threads" in out and checks it against run's status: one column per
// target, one row per thread count, each cell the step's QPS.
func checkQPSTable(t *testing.T, out string, run *v1.BenchmarkRun) {
	t.Helper()
	i := strings.Index(out, "QPS by threads:")
	if i < 0 {
		t.Fatalf("no QPS table in\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out[i:]), "\n")[1:]
	header := fields(lines[0])
	want := []string{"THREADS"}
	for _, ts := range run.Status.Targets {
		want = append(want, ts.Name, "("+ts.ServerVersion+")")
	}
	if strings.Join(header, " ") != strings.Join(want, " ") {
		t.Errorf("header %q, want %q (one column per target)", header, want)
	}
	for r, th := range run.Spec.Ladder.Threads {
		row := fields(lines[1+r])
		cols := []string{fmt.Sprint(th)}
		for _, ts := range run.Status.Targets {
			for _, s := range ts.Steps {
				if s.Threads == th {
					cols = append(cols, fmt.Sprintf("%.0f", s.QPS.Total))
				}
			}
		}
		if strings.Join(row, " ") != strings.Join(cols, " ") {
			t.Errorf("row %q, want %q (the status' QPS)", row, cols)
		}
	}
}

// get RUN -w follows a run until it finishes, a line per change, then prints its results.
func TestGetWatchFollowsARunUntilItFinishes(t *testing.T) {
	needCluster(t)
	run := newRun(nsBench, "watched", 1, 1, 2)
	run.Spec.Targets = run.Spec.Targets[:1]
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, _, err := runPlugin(ctx, t, "--kubeconfig", kubeconfig, "-n", nsBench, "get", "watched", "-w")
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("get -w did not return when the run finished")
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 4 || lineStarting(out, "watched", "Succeeded", "1/1", "-") == "" {
		t.Errorf("get -w printed no line for the finished run")
	}
	progressLines := 0
	for _, l := range lines {
		if f := fields(l); len(f) > 0 && f[0] == "watched" {
			progressLines++
		}
	}
	if progressLines < 3 {
		t.Errorf("%d lines about the run, want its start, progress and end", progressLines)
	}
	if !strings.Contains(out, "QPS by threads:") {
		t.Errorf("no results after the run finished")
	}
}

// get -w without RUN prints the runs, then a line whenever one changes, until interrupted.
func TestGetWatchListsChanges(t *testing.T) {
	needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	go func() {
		time.Sleep(500 * time.Millisecond)
		if err := k8s.Create(context.Background(), newRun(nsStuck, "arrives", 1, 1)); err != nil {
			t.Error(err)
		}
	}()
	out, _, err := runPlugin(ctx, t, "--kubeconfig", kubeconfig, "-n", nsStuck, "get", "-w")
	if err != nil {
		t.Fatal(err)
	}
	if lineStarting(out, "NAME", "PHASE", "TARGETS", "CURRENT", "AGE") == "" || lineStarting(out, "stuck") == "" {
		t.Errorf("get -w did not start with the runs there")
	}
	if lineStarting(out, "arrives", "Provisioning") == "" {
		t.Errorf("get -w printed no line for the run created while it watched")
	}
}
