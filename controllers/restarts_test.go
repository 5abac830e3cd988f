package controllers_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// A server that restarts in the middle of a step: the step's Job is discarded, the operator waits
// for the server, prepares again only when the data is gone, warms up and measures the step
// again. Nothing measured across the restart is kept, and no step is lost or measured twice.
func TestServerRestartMidStepIsMeasuredAgain(t *testing.T) {
	probeWith4Tables := strings.Replace(probeMessage, `"threads":1,`, `"threads":1,"tables":4,`, 1)
	cases := []struct {
		name string
		// restart plays the restart on the server pod.
		restart func(t *testing.T, pod *corev1.Pod)
		// probe is what the probe after the restart reports.
		probe string
		// reprepared: the data was gone, prepare ran again.
		reprepared bool
	}{
		{
			name: "pod replaced on an emptyDir: data gone, prepared again",
			restart: func(t *testing.T, pod *corev1.Pod) {
				// Deleted; the fake StatefulSet controller creates a new pod (new UID).
				if err := k8s.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); err != nil {
					t.Fatal(err)
				}
			},
			probe:      probeMessage,
			reprepared: true,
		},
		{
			name: "container restarted: data kept, warmed up again",
			restart: func(t *testing.T, pod *corev1.Pod) {
				cs := &pod.Status.ContainerStatuses[0]
				cs.RestartCount = 1
				cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}
				if err := k8s.Status().Update(context.Background(), pod); err != nil {
					t.Fatal(err)
				}
			},
			probe: probeWith4Tables,
		},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			startOperator(t, ns, operatorOptions{})
			ok := succeedAll(t)
			var mu sync.Mutex
			var held types.UID
			var created []string
			startKubelet(t, ns, func(job *batchv1.Job) outcome {
				mu.Lock()
				defer mu.Unlock()
				if len(created) == 0 || created[len(created)-1] != job.Name {
					created = append(created, job.Name)
				}
				if strings.Contains(job.Name, "-s02-") && (held == "" || held == job.UID) {
					held = job.UID // step 2 is under way when the server restarts
					return outcome{pending: true}
				}
				if job.Labels[specs.LabelStep] == "probe" && strings.Contains(job.Name, "-probe-r1") {
					return outcome{message: tc.probe}
				}
				return ok(job)
			})
			name := "restart" + string(rune('a'+i))
			run := baseRun(ns, name, 1, 2, 4)
			run.Spec.Targets = run.Spec.Targets[:1]
			run.Spec.Ladder.Warmup = &metav1.Duration{Duration: 2 * time.Second}
			if err := k8s.Create(context.Background(), run); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			var step2 types.UID
			for deadline := time.Now().Add(20 * time.Second); step2 == ""; time.Sleep(50 * time.Millisecond) {
				mu.Lock()
				step2 = held
				mu.Unlock()
				if time.Now().After(deadline) {
					t.Fatal("step 2 never started")
				}
			}
			restartAt := time.Now()
			pod := &corev1.Pod{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: specs.ServerName(run, "mariadb") + "-0"}, pod); err != nil {
				t.Fatal(err)
			}
			tc.restart(t, pod)

			got := waitFor(t, ns, name, 30*time.Second, "the run to finish", finished)
			ts := got.Status.Targets[0]
			if got.Status.Phase != v1.RunSucceeded || len(ts.Steps) != 3 {
				t.Fatalf("run %s with %d steps (%s), want Succeeded with 3", got.Status.Phase, len(ts.Steps), ts.Message)
			}
			for i, s := range ts.Steps {
				if s.Threads != run.Spec.Ladder.Threads[i] || s.Attempts != 1 {
					t.Errorf("step %d: %d threads, %d attempts; want %d threads, 1 attempt", i+1, s.Threads, s.Attempts, run.Spec.Ladder.Threads[i])
				}
			}
			// Step 2 was measured after the restart, by a new Job; the held one is gone.
			if s := ts.Steps[1]; s.StartTime == nil || s.StartTime.Time.Before(restartAt.Add(-time.Second).Truncate(time.Second)) {
				t.Errorf("step 2 started %v, before the restart at %v: measured across it", s.StartTime, restartAt)
			}
			old := &batchv1.Job{}
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: specs.JobName(run, "mariadb", "s02", specs.Attempt{})}, old)
			if err == nil && old.UID == step2 && old.DeletionTimestamp.IsZero() {
				t.Errorf("the Job of step 2 that ran across the restart was not deleted")
			} else if err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
			if ts.ServerRestarts != 1 || ts.LastServerRestart == nil || !strings.Contains(ts.LastServerRestart.During, "2/3") {
				t.Errorf("serverRestarts %d, lastServerRestart %+v: want 1, during step 2/3", ts.ServerRestarts, ts.LastServerRestart)
			}
			mu.Lock()
			after := strings.Join(created[indexOf(created, "probe-r1a0"):], " ")
			mu.Unlock()
			if strings.Contains(after, "prepare-r1") != tc.reprepared || !strings.Contains(after, "warmup-r1a0") {
				t.Errorf("Jobs after the restart: %s; want prepare again %v, then a warm-up", after, tc.reprepared)
			}
			assertEvents(t, ns, name, "ServerRestarted")
		})
	}
}

// indexOf is the index of the first name containing sub, or len(names).
func indexOf(names []string, sub string) int {
	for i, n := range names {
		if strings.Contains(n, sub) {
			return i
		}
	}
	return len(names)
}
