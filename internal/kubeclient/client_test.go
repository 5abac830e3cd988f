package kubeclient

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// request is what the API server was asked.
type request struct {
	method, path string
	query        url.Values
	body         map[string]any
}

// apiServer answers every request with reply (by path) and records it.
func apiServer(t *testing.T, reply map[string]string) (*REST, func() []request) {
	t.Helper()
	var mu sync.Mutex
	var seen []request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := request{method: r.Method, path: r.URL.Path, query: r.URL.Query()}
		if r.Body != nil {
			data, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(data, &req.body)
		}
		mu.Lock()
		seen = append(seen, req)
		mu.Unlock()
		body, ok := reply[r.URL.Path]
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			// As the API server answers: a create it refuses, an object that is not there
			// (named in the details), a resource it does not serve (a CRD not installed: no name).
			if r.Method == http.MethodPost {
				w.WriteHeader(http.StatusUnprocessableEntity)
				_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Invalid","code":422,`+
					`"message":"BenchmarkRun.mysqlbench.io \"refused\" is invalid: spec.ladder.threads: Invalid value: must be strictly ascending",`+
					`"details":{"name":"refused","group":"mysqlbench.io","kind":"BenchmarkRun"}}`)
				return
			}
			w.WriteHeader(http.StatusNotFound)
			if strings.HasSuffix(r.URL.Path, "/missing") {
				_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,`+
					`"message":"secrets \"missing\" not found","details":{"name":"missing","kind":"secrets"}}`)
				return
			}
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,`+
				`"message":"the server could not find the requested resource","details":{}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, batchv1.AddToScheme, v1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	c, err := New(&rest.Config{Host: srv.URL}, s)
	if err != nil {
		t.Fatal(err)
	}
	return c, func() []request {
		mu.Lock()
		defer mu.Unlock()
		return append([]request(nil), seen...)
	}
}

// Each kind is read at its resource's path (core group under /api, others under /apis), in its
// namespace, with the selectors and options as the API server's query parameters.
func TestPathsAndOptions(t *testing.T) {
	c, seen := apiServer(t, map[string]string{
		"/api/v1/namespaces/bench/configmaps/results":                      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"results","namespace":"bench"},"data":{"a":"b"}}`,
		"/apis/batch/v1/namespaces/bench/jobs":                             `{"apiVersion":"batch/v1","kind":"JobList","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"j1"}}]}`,
		"/apis/mysqlbench.io/v1alpha1/benchmarkruns":                       `{"apiVersion":"mysqlbench.io/v1alpha1","kind":"BenchmarkRunList","items":[{"metadata":{"name":"r1","namespace":"a"}},{"metadata":{"name":"r2","namespace":"b"}}]}`,
		"/apis/mysqlbench.io/v1alpha1/namespaces/bench/benchmarkschedules": `{"apiVersion":"mysqlbench.io/v1alpha1","kind":"BenchmarkSchedule","metadata":{"name":"nightly","namespace":"bench","uid":"u1"}}`,
	})
	ctx := context.Background()

	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, ObjectKey{Namespace: "bench", Name: "results"}, cm); err != nil || cm.Data["a"] != "b" {
		t.Fatalf("Get ConfigMap: %v, %+v", err, cm)
	}
	// The API server's own Status comes back as the error, its reason and message intact.
	if err := c.Get(ctx, ObjectKey{Namespace: "bench", Name: "missing"}, &corev1.Secret{}); !apierrors.IsNotFound(err) ||
		err.Error() != "secrets \"missing\" not found" {
		t.Errorf("Get of a missing Secret: %v, want the API server's NotFound", err)
	}

	jobs := &batchv1.JobList{}
	err := c.List(ctx, jobs, InNamespace("bench"), MatchingLabels{"app.kubernetes.io/managed-by": "mysqlbench-operator"},
		MatchingFields{"metadata.name": "j1"})
	if err != nil || len(jobs.Items) != 1 || jobs.Items[0].Name != "j1" || jobs.ResourceVersion != "7" {
		t.Fatalf("List Jobs: %v, %+v", err, jobs)
	}
	runs := &v1.BenchmarkRunList{}
	if err := c.List(ctx, runs); err != nil || len(runs.Items) != 2 {
		t.Fatalf("List BenchmarkRuns in every namespace: %v, %+v", err, runs)
	}

	sched := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "mysqlbench.io/v1alpha1", "kind": "BenchmarkSchedule",
		"metadata": map[string]any{"name": "nightly", "namespace": "bench"},
	}}
	if err := c.Create(ctx, sched, DryRunAll, FieldValidation("Strict")); err != nil {
		t.Fatal(err)
	}
	if sched.GetUID() != "u1" || sched.GetKind() != "BenchmarkSchedule" {
		t.Errorf("Create did not read back the object as stored, with its kind: %v", sched.Object)
	}
	// A refusal is the API server's Status, its message intact (what create --dry-run=server shows).
	refused := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "mysqlbench.io/v1alpha1", "kind": "BenchmarkRun",
		"metadata": map[string]any{"name": "refused", "namespace": "bench"},
	}}
	if err := c.Create(ctx, refused); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "must be strictly ascending") {
		t.Errorf("Create refused: %v, want the API server's Status", err)
	}
	// A kind the API server does not serve (the CRD not installed) is that, not a missing object.
	err = c.Get(ctx, ObjectKey{Namespace: "bench", Name: "nightly"}, &v1.BenchmarkRun{})
	if !meta.IsNoMatchError(err) || apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `no matches for kind "BenchmarkRun" in version "mysqlbench.io/v1alpha1"`) {
		t.Errorf("Get of a kind not served: %v, want no matches for kind", err)
	}
	if err := c.List(ctx, &v1.BenchmarkRunList{}, InNamespace("bench")); !meta.IsNoMatchError(err) {
		t.Errorf("List of a kind not served: %v, want no matches for kind", err)
	}

	got := seen()
	want := []struct {
		method, path string
		query        url.Values
	}{
		{"GET", "/api/v1/namespaces/bench/configmaps/results", url.Values{}},
		{"GET", "/api/v1/namespaces/bench/secrets/missing", url.Values{}},
		{"GET", "/apis/batch/v1/namespaces/bench/jobs", url.Values{
			"labelSelector": {"app.kubernetes.io/managed-by=mysqlbench-operator"}, "fieldSelector": {"metadata.name=j1"}}},
		{"GET", "/apis/mysqlbench.io/v1alpha1/benchmarkruns", url.Values{}},
		{"POST", "/apis/mysqlbench.io/v1alpha1/namespaces/bench/benchmarkschedules", url.Values{
			"dryRun": {"All"}, "fieldValidation": {"Strict"}}},
		{"POST", "/apis/mysqlbench.io/v1alpha1/namespaces/bench/benchmarkruns", url.Values{}},
		{"GET", "/apis/mysqlbench.io/v1alpha1/namespaces/bench/benchmarkruns/nightly", url.Values{}},
		{"GET", "/apis/mysqlbench.io/v1alpha1/namespaces/bench/benchmarkruns", url.Values{}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d requests, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.method != w.method || g.path != w.path || g.query.Encode() != w.query.Encode() {
			t.Errorf("request %d: %s %s?%s, want %s %s?%s", i, g.method, g.path, g.query.Encode(), w.method, w.path, w.query.Encode())
		}
	}
	if body := got[4].body; body["kind"] != "BenchmarkSchedule" || body["apiVersion"] != "mysqlbench.io/v1alpha1" {
		t.Errorf("create body %v lacks the apiVersion and kind", body)
	}
}

// A watch asks for watch=true from the resourceVersion given and decodes its events into typed
// objects; pods/log is read from the pod's log subresource.
func TestWatchAndLogs(t *testing.T) {
	c, seen := apiServer(t, map[string]string{
		"/apis/mysqlbench.io/v1alpha1/namespaces/bench/benchmarkruns": `{"type":"MODIFIED","object":{"apiVersion":"mysqlbench.io/v1alpha1","kind":"BenchmarkRun","metadata":{"name":"r1","namespace":"bench"},"status":{"phase":"Running"}}}
`,
		"/api/v1/namespaces/bench/pods/p1/log": "line 1\nline 2\n",
	})
	ctx := context.Background()
	w, err := c.Watch(ctx, &v1.BenchmarkRunList{}, InNamespace("bench"), &ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "42"}})
	if err != nil {
		t.Fatal(err)
	}
	ev := <-w.ResultChan()
	w.Stop()
	run, ok := ev.Object.(*v1.BenchmarkRun)
	if ev.Type != watch.Modified || !ok || run.Name != "r1" || run.Status.Phase != v1.RunRunning {
		t.Fatalf("event %s %T %+v, want MODIFIED of BenchmarkRun r1 Running", ev.Type, ev.Object, ev.Object)
	}
	logs, err := c.PodLogs(ctx, "bench", "p1", "sysbench", true)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(logs)
	_ = logs.Close()
	if string(data) != "line 1\nline 2\n" {
		t.Errorf("logs %q", data)
	}
	got := seen()
	if len(got) != 2 {
		t.Fatalf("requests %+v", got)
	}
	if q := got[0].query; q.Get("watch") != "true" || q.Get("resourceVersion") != "42" {
		t.Errorf("watch query %s, want watch=true and resourceVersion=42", q.Encode())
	}
	if q := got[1].query; q.Get("container") != "sysbench" || q.Get("follow") != "true" {
		t.Errorf("logs query %s, want container=sysbench and follow=true", q.Encode())
	}
}
