package controllers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// What can never work ends the target fast with what to fix, instead of holding a database node
// until the 15-minute server timeout or a Job's deadline.
func TestWhatCannotWorkFailsFast(t *testing.T) {
	const grace = 3 * time.Second
	cases := []struct {
		name string
		// setup runs in the namespace before the run is created.
		setup func(t *testing.T, ns string)
		// mutate edits the one-target run.
		mutate func(r *v1.BenchmarkRun)
		// serverPod plays the kubelet's view of the server pod.
		serverPod func(*corev1.Pod)
		// waiting is what the Progressing condition says before the end, "" to skip.
		waiting string
		want    []string // substrings of the target's failure message
		within  time.Duration
		// noServer: nothing may have been provisioned.
		noServer bool
		// serverRemoved: the server's StatefulSet is deleted whatever the cleanup policy.
		serverRemoved bool
	}{
		{
			name: "custom script ConfigMap missing",
			mutate: func(r *v1.BenchmarkRun) {
				r.Spec.Workload.Script = ""
				r.Spec.Workload.CustomScript = &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "nosuchcm"}, Key: "bench.lua"}
			},
			waiting:  "waits up to",
			want:     []string{"ConfigMap nosuchcm not found in namespace ", "create it with the key bench.lua"},
			within:   grace + 10*time.Second,
			noServer: true,
		},
		{
			name: "custom script key missing",
			setup: func(t *testing.T, ns string) {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "scripts", Namespace: ns},
					Data: map[string]string{"other.lua": "-- nothing"}}
				if err := k8s.Create(context.Background(), cm); err != nil {
					t.Fatal(err)
				}
			},
			mutate: func(r *v1.BenchmarkRun) {
				r.Spec.Workload.Script = ""
				r.Spec.Workload.CustomScript = &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "scripts"}, Key: "bench.lua"}
			},
			want:     []string{"ConfigMap scripts in namespace ", "has no key bench.lua"},
			within:   grace + 10*time.Second,
			noServer: true,
		},
		{
			name: "external Secret missing",
			mutate: func(r *v1.BenchmarkRun) {
				r.Spec.Targets[0] = v1.Target{Name: "mariadb", Engine: v1.EngineExternal,
					SecretRef: &corev1.LocalObjectReference{Name: "nosuchsecret"}}
			},
			want:   []string{"Secret ", "/nosuchsecret named by target mariadb does not exist"},
			within: grace + 10*time.Second,
		},
		{
			name:  "image tag that does not exist",
			setup: nil,
			serverPod: func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodPending
				p.Status.Conditions[1].Status = corev1.ConditionFalse
				cs := &p.Status.ContainerStatuses[0]
				cs.Ready = false
				cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull",
					Message: `failed to pull and unpack image "docker.io/library/mariadb:10.11": failed to resolve reference ` +
						`"docker.io/library/mariadb:10.11": docker.io/library/mariadb:10.11: not found`}}
			},
			want:          []string{"server did not start: cannot pull image mariadb:10.11", ": not found"},
			within:        10 * time.Second,
			serverRemoved: true,
		},
		{
			name: "StatefulSet forbidden by a quota",
			setup: func(t *testing.T, ns string) {
				q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "no-statefulsets", Namespace: ns},
					Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/statefulsets.apps": resource.MustParse("0")}}}
				if err := k8s.Create(context.Background(), q); err != nil {
					t.Fatal(err)
				}
			},
			want:     []string{"the API server rejected StatefulSet ", "forbidden", "quota"},
			within:   10 * time.Second,
			noServer: true,
		},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			if tc.setup != nil {
				tc.setup(t, ns)
			}
			startOperator(t, ns, operatorOptions{readyTimeout: 10 * time.Minute, schedulingGrace: grace})
			startKubeletWith(t, ns, succeedAll(t), tc.serverPod)
			name := "fast" + string(rune('a'+i))
			run := baseRun(ns, name, 1)
			run.Spec.Targets = run.Spec.Targets[:1]
			if tc.mutate != nil {
				tc.mutate(run)
			}
			start := time.Now()
			if err := k8s.Create(context.Background(), run); err != nil {
				t.Fatal(err)
			}
			if tc.waiting != "" {
				waitFor(t, ns, name, 10*time.Second, "the condition to say what the run waits for", func(r *v1.BenchmarkRun) bool {
					c := meta.FindStatusCondition(r.Status.Conditions, v1.ConditionProgressing)
					return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, tc.waiting) &&
						strings.Contains(c.Message, tc.want[0])
				})
			}
			got := waitFor(t, ns, name, tc.within, "the run to fail", finished)
			took := time.Since(start)
			ts := got.Status.Targets[0]
			if got.Status.Phase != v1.RunFailed || ts.Phase != v1.TargetFailed {
				t.Fatalf("run %s, target %s %q: want both Failed", got.Status.Phase, ts.Phase, ts.Message)
			}
			for _, w := range tc.want {
				if !strings.Contains(ts.Message, w) {
					t.Errorf("message %q lacks %q", ts.Message, w)
				}
			}
			t.Logf("failed after %s: %s", took.Round(100*time.Millisecond), ts.Message)
			sts := &appsv1.StatefulSet{}
			err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: specs.ServerName(run, run.Spec.Targets[0].Name)}, sts)
			switch {
			case tc.noServer && !apierrors.IsNotFound(err):
				t.Errorf("a StatefulSet exists (err %v): nothing may be provisioned for this run", err)
			case tc.serverRemoved && err == nil && sts.DeletionTimestamp.IsZero():
				t.Errorf("StatefulSet %s still there: a server that cannot pull its image must not hold the node", sts.Name)
			}
		})
	}
}
