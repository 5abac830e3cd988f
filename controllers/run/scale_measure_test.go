package run_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// cachedKind is the size of the objects of one kind the manager's cache holds.
type cachedKind struct {
	kind                 string
	objects              int
	bytes, managedFields uint64
}

// cacheContents lists, with the test's client, what the manager's cache holds (cachetrim.Options:
// the operator's objects by label; the runs) and measures it as JSON, and the share of that
// which is managedFields.
func cacheContents(b *testing.B, ns string) []cachedKind {
	b.Helper()
	ours := client.MatchingLabels{specs.LabelManagedBy: specs.ManagedBy}
	lists := []struct {
		kind string
		list client.ObjectList
		opts []client.ListOption
	}{
		{"BenchmarkRun", &v1.BenchmarkRunList{}, []client.ListOption{client.InNamespace(ns)}},
		{"Pod", &corev1.PodList{}, []client.ListOption{client.InNamespace(ns), ours}},
		{"Job", &batchv1.JobList{}, []client.ListOption{client.InNamespace(ns), ours}},
		{"ConfigMap", &corev1.ConfigMapList{}, []client.ListOption{client.InNamespace(ns), ours}},
		{"StatefulSet", &appsv1.StatefulSetList{}, []client.ListOption{client.InNamespace(ns), ours}},
		{"Service", &corev1.ServiceList{}, []client.ListOption{client.InNamespace(ns), ours}},
		{"Secret", &corev1.SecretList{}, []client.ListOption{client.InNamespace(ns), ours}},
	}
	out := make([]cachedKind, 0, len(lists))
	for _, l := range lists {
		if err := k8s.List(context.Background(), l.list, l.opts...); err != nil {
			b.Fatal(err)
		}
		objs, err := apimeta.ExtractList(l.list)
		if err != nil {
			b.Fatal(err)
		}
		c := cachedKind{kind: l.kind, objects: len(objs)}
		for _, o := range objs {
			all, err := json.Marshal(o)
			if err != nil {
				b.Fatal(err)
			}
			mf, err := json.Marshal(o.(client.Object).GetManagedFields())
			if err != nil {
				b.Fatal(err)
			}
			c.bytes += uint64(len(all))
			c.managedFields += uint64(len(mf))
		}
		out = append(out, c)
	}
	return out
}

func mib(v uint64) float64 { return float64(v) / (1 << 20) }

func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		b.Fatalf("%s=%q: %v", name, s, err)
	}
	return n
}

// procStatus reads a "kB" field of /proc/self/status in bytes (0 where there is no /proc).
func procStatus(b *testing.B, field string) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			b.Fatalf("/proc/self/status %s: %v", field, err)
		}
		return kb << 10
	}
	return 0
}

// heapSampler records the largest HeapAlloc and HeapInuse seen.
type heapSampler struct {
	quit            chan struct{}
	done            chan struct{}
	maxAlloc, inuse uint64
}

func startHeapSampler() *heapSampler {
	s := &heapSampler{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		profile := os.Getenv("MYSQLBENCH_SCALE_HEAPPROFILE")
		var written time.Time
		for {
			runtime.ReadMemStats(&ms)
			s.maxAlloc = max(s.maxAlloc, ms.HeapAlloc)
			if ms.HeapInuse > s.inuse && profile != "" && time.Since(written) > 10*time.Second {
				// What is in the heap near its peak (MYSQLBENCH_SCALE_HEAPPROFILE=file, for
				// go tool pprof -sample_index=inuse_space).
				if f, err := os.Create(profile); err == nil {
					_ = pprof.Lookup("heap").WriteTo(f, 0)
					_ = f.Close()
					written = time.Now()
				}
			}
			s.inuse = max(s.inuse, ms.HeapInuse)
			select {
			case <-s.quit:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *heapSampler) stop() (alloc, inuse uint64) {
	close(s.quit)
	<-s.done
	return s.maxAlloc, s.inuse
}

// reconcileTotals reads controller_runtime_reconcile_total of the benchmarkrun controller by
// result (success, error, requeue, requeue_after).
func reconcileTotals(b *testing.B) map[string]float64 {
	b.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["controller"] == "benchmarkrun" {
				out[labels["result"]] += m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// histogram is a snapshot of one Prometheus histogram: its count, sum and cumulative buckets.
type histogram struct {
	count  uint64
	sum    float64
	bounds []float64 // upper bounds, ascending, without +Inf
	cum    []uint64
}

// histograms are the series of one histogram family by the value of one label.
type histograms map[string]histogram

// gatherHistograms reads the series of the histogram family name from controller-runtime's
// registry (what the manager's /metrics serves), keyed by their "outcome" label; with only set,
// only the series whose label only has the value onlyValue.
func gatherHistograms(b *testing.B, name, only, onlyValue string) histograms {
	b.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	out := histograms{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if only != "" && labels[only] != onlyValue {
				continue
			}
			h := m.GetHistogram()
			snap := histogram{count: h.GetSampleCount(), sum: h.GetSampleSum()}
			for _, bk := range h.GetBucket() {
				snap.bounds = append(snap.bounds, bk.GetUpperBound())
				snap.cum = append(snap.cum, bk.GetCumulativeCount())
			}
			out[labels["outcome"]] = out[labels["outcome"]].plus(snap)
		}
	}
	return out
}

// minus is what was observed since before.
func (hs histograms) minus(before histograms) histograms {
	out := histograms{}
	for k, h := range hs {
		b := before[k]
		d := histogram{count: h.count - b.count, sum: h.sum - b.sum, bounds: h.bounds, cum: make([]uint64, len(h.cum))}
		for i := range h.cum {
			d.cum[i] = h.cum[i]
			if i < len(b.cum) {
				d.cum[i] -= b.cum[i]
			}
		}
		out[k] = d
	}
	return out
}

// all merges the series (same buckets).
func (hs histograms) all() histogram {
	var out histogram
	for _, h := range hs {
		out = out.plus(h)
	}
	return out
}

func (h histogram) plus(o histogram) histogram {
	if h.bounds == nil {
		h.bounds, h.cum = o.bounds, make([]uint64, len(o.cum))
	}
	h.count += o.count
	h.sum += o.sum
	for i := range min(len(h.cum), len(o.cum)) {
		h.cum[i] += o.cum[i]
	}
	return h
}

func (h histogram) mean() float64 {
	if h.count == 0 {
		return 0
	}
	return h.sum / float64(h.count)
}

// quantile estimates the q-quantile as Prometheus' histogram_quantile does: linear within the
// bucket that holds it; past the last bound, the last bound.
func (h histogram) quantile(q float64) float64 {
	if h.count == 0 {
		return 0
	}
	rank := q * float64(h.count)
	lower, below := 0.0, uint64(0)
	for i, upper := range h.bounds {
		if float64(h.cum[i]) >= rank {
			return lower + (upper-lower)*(rank-float64(below))/float64(max(h.cum[i]-below, 1))
		}
		lower, below = upper, h.cum[i]
	}
	return lower
}

// requestKey classifies one API request: verb (create, update, patch, delete, get, list, watch),
// resource with subresource (e.g. "benchmarkruns/status"), and whether the server refused it.
type requestKey struct {
	verb, resource string
	failed         bool
}

func (k requestKey) write() bool { return isWriteVerb(k.verb) }

func isWriteVerb(v string) bool {
	return v == "create" || v == "update" || v == "patch" || v == "delete"
}

type requestCounter struct {
	mu     sync.Mutex
	counts map[requestKey]int
	last   time.Time // of the last write
}

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		verb, resource := classify(req)
		resp, err := rt.RoundTrip(req)
		failed := err != nil || resp.StatusCode >= 400
		c.mu.Lock()
		c.counts[requestKey{verb: verb, resource: resource, failed: failed}]++
		if isWriteVerb(verb) {
			c.last = time.Now()
		}
		c.mu.Unlock()
		return resp, err
	})
}

func (c *requestCounter) snapshot() map[requestKey]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[requestKey]int, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// settle waits until the manager has written nothing for quiet (at most limit).
func (c *requestCounter) settle(quiet, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		last := c.last
		c.mu.Unlock()
		if time.Since(last) >= quiet {
			return
		}
		time.Sleep(quiet / 4)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// classify maps a request to its verb and resource from the method and the URL path:
// /api/v1/namespaces/NS/RESOURCE[/NAME[/SUB]] or /apis/GROUP/VERSION/namespaces/NS/...
func classify(req *http.Request) (verb, resource string) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return strings.ToLower(req.Method), req.URL.Path
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) > 2 {
		parts = parts[2:]
	}
	if len(parts) == 0 {
		return strings.ToLower(req.Method), req.URL.Path
	}
	resource = parts[0]
	named := len(parts) >= 2
	if len(parts) >= 3 {
		resource += "/" + parts[2]
	}
	switch req.Method {
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
	case http.MethodGet:
		switch {
		case req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1":
			verb = "watch"
		case named:
			verb = "get"
		default:
			verb = "list"
		}
	default:
		verb = strings.ToLower(req.Method)
	}
	return verb, resource
}
