package run_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// TestPipelineCacheLagDeletesNothing (f): step 2's Job exists on the API server but the cache
// has not shown it yet, while it shows its pod (the Job and pod informers are independent). No
// reconcile takes the pod for the leftover of a deleted Job (a pending pod that has not started
// is what would be deleted) and none creates the Job again; once the cache shows the Job, the run
// goes on. With neither the Job nor its pod in the cache, the create finds the Job the API server
// has and creates nothing either.
func TestPipelineCacheLagDeletesNothing(t *testing.T) {
	cases := []struct {
		name string
		pod  func(w *fakeWorld) func(*corev1.Pod) corev1.PodStatus // nil: no pod yet
		// recorded: step 1's Job is Complete (and recorded) while the cache lags.
		recorded bool
	}{
		{name: "pending pod, step 1 not reported", pod: func(*fakeWorld) func(*corev1.Pod) corev1.PodStatus { return loadPending }},
		{name: "running pod, step 1 not reported", pod: func(w *fakeWorld) func(*corev1.Pod) corev1.PodStatus { return w.loadRunning }},
		{name: "pending pod, step 1 recorded", recorded: true, pod: func(*fakeWorld) func(*corev1.Pod) corev1.PodStatus { return loadPending }},
		{name: "no pod, step 1 recorded", recorded: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, run := startLadder(t, "cl", nil, 1, 2)
			ok := runCaptured(t)
			s1, s2 := ladderJob(run, 0, 0), ladderJob(run, 1, 0)
			w.step(run.Name)
			w.setPod(s1, w.loadExited(0, ok))
			w.step(run.Name)
			if !w.exists(&batchv1.Job{}, s2) {
				t.Fatalf("Job %s not created early", s2)
			}
			w.hide("Job", s2)
			if tc.pod != nil {
				w.setPod(s2, tc.pod(w))
			}
			if tc.recorded {
				w.reportJob(s1, true)
				w.step(run.Name)
				if n := len(w.steps(run)); n != 1 {
					t.Fatalf("%d steps recorded after Job 1 completed, want 1", n)
				}
			}
			for i := 0; i < 3; i++ {
				writes := w.step(run.Name)
				for _, wr := range writes {
					if strings.HasPrefix(wr, "delete") || strings.HasPrefix(wr, "create") {
						t.Errorf("reconcile %d with Job %s not in the cache: %s", i, s2, wr)
					}
				}
			}
			if tc.pod != nil && !w.podExists(s2) {
				t.Fatalf("the pod of Job %s, which the cache had not shown yet, was deleted", s2)
			}
			if !w.exists(&batchv1.Job{}, s2) {
				t.Fatalf("Job %s was deleted", s2)
			}

			w.show("Job", s2)
			if !tc.recorded {
				w.reportJob(s1, true)
			}
			w.setPod(s2, w.loadExited(0, ok))
			w.reportJob(s2, true)
			final := w.drive(run.Name, succeedAll(t), "the run to finish", finished)
			if steps := targetStatus(final, ladderTarget).Steps; final.Status.Phase != v1.RunSucceeded || ladderOf(steps) != "1/1 2/1" {
				t.Errorf("run %s with steps %s, want Succeeded with 1/1 2/1", final.Status.Phase, ladderOf(steps))
			}
			if twice := w.createdTwice(); len(twice) > 0 {
				t.Errorf("created more than once: %v", twice)
			}
		})
	}
}

// apiWrites counts the requests that pass through a rest.Config it wraps, by "METHOD path".
type apiWrites struct {
	mu sync.Mutex
	n  map[string]int
}

func (a *apiWrites) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method != http.MethodGet {
				a.mu.Lock()
				a.n[req.Method+" "+req.URL.Path]++
				a.mu.Unlock()
			}
			return rt.RoundTrip(req)
		})
	})
	return cfg
}

func (a *apiWrites) count(key string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n[key]
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestBatchDeletionOnAnAPIServer (e, envtest): the same batches against a real API server, which
// applies the deletecollection's field selector (the fake client does not): a 10-step ladder
// whose step 3 fails once; when step 10's Job exists (held pending), the first batch has deleted
// the probe, prepare and the first 8 ladder Jobs with one deletecollection after one update of the
// results ConfigMap holding their 8 series, and kept the failed s03-a0, which shares its step
// label with the deleted s03-a1. At the run's end only the failed Job is left, after one more
// deletecollection.
func TestBatchDeletionOnAnAPIServer(t *testing.T) {
	ns := newNamespace(t)
	calls := &apiWrites{n: map[string]int{}}
	startOperator(t, ns, operatorOptions{restConfig: calls.wrap(cfg), log: captured(t, "run_point_select_t4.txt")})
	ok, notPrepared := succeedAll(t), captured(t, "run_not_prepared_1146.txt")
	threads := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	run := baseRun(ns, "bd", threads...)
	run.Spec.Targets = run.Spec.Targets[:1]
	s3a0, s10 := ladderJob(run, 2, 0), ladderJob(run, 9, 0)
	var mu sync.Mutex
	hold := true
	startKubelet(t, ns, func(job *batchv1.Job) outcome {
		mu.Lock()
		defer mu.Unlock()
		switch job.Name {
		case s3a0:
			return outcome{exitCode: 1, message: notPrepared, failed: true}
		case s10:
			if hold {
				return outcome{pending: true}
			}
		}
		return ok(job)
	})
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	collection := "DELETE /apis/batch/v1/namespaces/" + ns + "/jobs"
	resultsPut := "PUT /api/v1/namespaces/" + ns + "/configmaps/" + specs.ResultsConfigMapName(run)

	waitFor(t, ns, run.Name, 2*time.Minute, "9 steps recorded", func(r *v1.BenchmarkRun) bool {
		return len(targetStatus(r, ladderTarget).Steps) == 9
	})
	deadline := time.Now().Add(30 * time.Second)
	for k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: s10}, &batchv1.Job{}) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("no Job %s after step 9 was recorded", s10)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := calls.count(collection); n != 1 {
		t.Errorf("%d deletecollections of Jobs with 9 steps recorded, want 1", n)
	}
	if n := calls.count(resultsPut); n != 1 {
		t.Errorf("%d updates of the results ConfigMap with 9 steps recorded, want 1", n)
	}
	jobsLeft := func() []string {
		t.Helper()
		jobs := &batchv1.JobList{}
		if err := k8s.List(context.Background(), jobs, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, j := range jobs.Items {
			names = append(names, j.Name)
		}
		sort.Strings(names)
		return names
	}
	left := jobsLeft()
	for _, gone := range []string{specs.JobName(run, ladderTarget, "probe", specs.Attempt{}),
		specs.JobName(run, ladderTarget, "prepare", specs.Attempt{}), ladderJob(run, 0, 0), ladderJob(run, 2, 1), ladderJob(run, 7, 0)} {
		if slices.Contains(left, gone) {
			t.Errorf("Job %s still there after the first batch: %v", gone, left)
		}
	}
	for _, kept := range []string{s3a0, s10} {
		if !slices.Contains(left, kept) {
			t.Errorf("Job %s deleted by the first batch; Jobs left %v", kept, left)
		}
	}
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: specs.ResultsConfigMapName(run)}, cm); err != nil {
		t.Fatal(err)
	}
	var series []string
	for k := range cm.Data {
		if strings.HasPrefix(k, "series.") {
			series = append(series, k)
		}
	}
	sort.Strings(series)
	var want []string
	for _, th := range threads[:8] {
		want = append(want, report.SeriesKey(ladderTarget, th, 1))
	}
	if !slices.Equal(series, want) {
		t.Errorf("results ConfigMap series %v after the first batch, want %v", series, want)
	}

	mu.Lock()
	hold = false
	mu.Unlock()
	got := waitFor(t, ns, run.Name, 2*time.Minute, "the run to finish", finished)
	if steps := targetStatus(got, ladderTarget).Steps; got.Status.Phase != v1.RunSucceeded ||
		ladderOf(steps) != "1/1 2/1 3/2 4/1 5/1 6/1 7/1 8/1 9/1 10/1" {
		t.Fatalf("run %s with steps %s, want Succeeded with each step once", got.Status.Phase, ladderOf(steps))
	}
	if left := jobsLeft(); !slices.Equal(left, []string{s3a0}) {
		t.Errorf("Jobs left after the run %v, want the failed %s only", left, s3a0)
	}
	if n := calls.count(collection); n != 2 {
		t.Errorf("%d deletecollections of Jobs over the run, want 2", n)
	}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: specs.ResultsConfigMapName(run)}, cm); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Targets []struct {
			Steps []struct {
				Series json.RawMessage `json:"series"`
			} `json:"steps"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(cm.Data["results.json"]), &doc); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	n := 0
	for _, tr := range doc.Targets {
		for _, s := range tr.Steps {
			if len(s.Series) > 0 {
				n++
			}
		}
	}
	if n != len(threads) {
		t.Errorf("results.json carries %d per-second series, want %d", n, len(threads))
	}
}
