package run_test

// fakeWorld runs the BenchmarkRun reconciler against controller-runtime's fake client, one
// Reconcile at a time, with the test playing the kubelet and the Job and StatefulSet controllers
// and injecting what a real API server will not produce on demand: refused creates, status write
// conflicts, stale cache reads, failing reads (issue #16). Nothing here runs in the background
// and nothing sleeps: the fake clock is the only time there is.

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	runctrl "github.com/mysqlbench/mysqlbench-operator/controllers/run"
	"github.com/mysqlbench/mysqlbench-operator/internal/admission"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

const fakeNS = "bench"

// fakeWorld is one fake API server, a reconciler wired to it, and the faults the test arms.
//
// The reconciler sees the server through two clients, as in the manager:
//   - its Client (and the engines' client) is "the cache": like the manager's label-filtered
//     cache (cachetrim.Options) it does not show the kinds it filters unless they carry
//     the operator's managed-by label, and it can be made to return a stale copy of the run;
//   - its APIReader reads the server directly.
//
// api is the server itself, as the test (and a kubelet) sees it: it stamps every created
// object with a UID, a creationTimestamp from the fake clock and generation 1, as the API
// server would (the fake client does none of that, and owner references and waits need them).
type fakeWorld struct {
	t      *testing.T
	ctx    context.Context
	api    client.WithWatch
	clock  *clocktesting.FakeClock
	events *record.FakeRecorder
	logs   *fakeLogs
	r      *runctrl.Reconciler

	mu     sync.Mutex
	uids   int
	faults []*fault
	// stale, when set, is what the cache returns for a Get of the run.
	stale *v1.BenchmarkRun
	// creates counts the objects the reconciler created, by "Kind/name".
	creates map[string]int
	// statusWrites counts the run status writes that succeeded; runReads the run reads through
	// the APIReader.
	statusWrites, runReads int
	// recorded is every Event taken from the recorder so far, "Type Reason message".
	recorded []string
	// writes is every write the reconciler made through its client that succeeded, in order:
	// "create Job/x", "update ConfigMap/x", "patch status BenchmarkRun/x", "delete Job/x",
	// "deletecollection Job".
	writes []string
	// collections are the names each deletecollection deleted, one entry per call.
	collections [][]string
	// hidden are the objects ("Kind/name") the cache does not show yet, as an informer that
	// lags behind the API server; the APIReader and the API server do show them.
	hidden map[string]bool
	// beforeList, when set, runs before every List through the cache (what changes on the API
	// server and reaches the informer between two reads of one reconcile).
	beforeList func(client.ObjectList)
	// podLogs are the logs of particular pods, by name (every other pod's is logs'); logReads
	// counts the reads of each pod's log.
	podLogs  map[string]string
	logReads map[string]int
}

// worldLogs is the kubelet's log endpoint of the fake world: a pod's own log when the test set
// one (setPodLog), else the shared captured one.
type worldLogs struct{ w *fakeWorld }

func (l worldLogs) Logs(ctx context.Context, namespace, pod, container string) (io.ReadCloser, error) {
	l.w.mu.Lock()
	if l.w.logReads == nil {
		l.w.logReads = map[string]int{}
	}
	l.w.logReads[pod]++
	log, own := l.w.podLogs[pod]
	l.w.mu.Unlock()
	if own {
		return io.NopCloser(strings.NewReader(log)), nil
	}
	return l.w.logs.Logs(ctx, namespace, pod, container)
}

// setPodLog makes pod's log log.
func (w *fakeWorld) setPodLog(pod, log string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.podLogs == nil {
		w.podLogs = map[string]string{}
	}
	w.podLogs[pod] = log
}

// podLogReads says how often pod's log was read.
func (w *fakeWorld) podLogReads(pod string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.logReads[pod]
}

// Where a fault strikes.
const (
	onCreate      = "create"       // a create by the reconciler or its engines
	onStatusPatch = "status patch" // the run's status write
	onCacheGet    = "cache get"    // a Get of the run through the Client (the cache)
	onReaderGet   = "reader get"   // a Get of the run through the APIReader
	onObjectRead  = "object read"  // a Get of anything but the run through the APIReader
)

// fault makes calls at one place fail. match picks the object (nil: any); times is how often it
// strikes (<0: every time). before, when set, runs instead of returning err, and the call then
// proceeds (a concurrent writer that changes the object just before the reconciler's write).
type fault struct {
	where  string
	match  func(client.Object) bool
	err    error
	before func()
	times  int
	hits   int
}

func newFakeWorld(t *testing.T) *fakeWorld {
	t.Helper()
	w := &fakeWorld{
		t:       t,
		ctx:     ctrl.LoggerInto(context.Background(), logUnlessPassed(t)),
		clock:   clocktesting.NewFakeClock(time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)),
		events:  record.NewFakeRecorder(1000),
		logs:    &fakeLogs{log: withServerSnapshots(t, captured(t, "run_point_select_t4.txt"))},
		creates: map[string]int{},
	}
	store := fake.NewClientBuilder().WithScheme(testenv.Scheme).
		WithStatusSubresource(&v1.BenchmarkRun{}, &batchv1.Job{}, &corev1.Pod{}, &appsv1.StatefulSet{}).
		Build()
	w.api = interceptor.NewClient(store, interceptor.Funcs{Create: w.stamp})
	cache := interceptor.NewClient(w.api, interceptor.Funcs{
		Get:               w.cacheGet,
		List:              w.cacheList,
		Create:            w.operatorCreate,
		Update:            w.operatorUpdate,
		Patch:             w.operatorPatch,
		Delete:            w.operatorDelete,
		DeleteAllOf:       w.operatorDeleteAllOf,
		SubResourcePatch:  w.statusPatch,
		SubResourceUpdate: w.subResourceUpdate,
	})
	reader := interceptor.NewClient(w.api, interceptor.Funcs{Get: w.readerGet})
	r, err := runctrl.New(runctrl.Dependencies{
		Client: cache, APIReader: reader, Scheme: testenv.Scheme, Recorder: w.events,
		Engines: engine.All(cache, reader, testenv.Scheme), Logs: worldLogs{w}, Clock: w.clock,
		AdmissionPolicy: &admission.Check{Reader: reader},
	}, runctrl.Options{SysbenchImage: "sysbench:test", ServerReadyTimeout: 10 * time.Minute, SchedulingGrace: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	w.r = r
	// The admission policy as kustomize installs it, in force: runs start without the Event that
	// says it is absent (TestRunStartSaysTheAdmissionPolicyIsAbsent removes it).
	installAdmissionPolicy(w, "mysqlbench-"+admission.PolicyName)
	// The default database pool's nodes, Ready: the operator provisions a server only where its
	// pool has a node. (Node status is not a subresource here: the create keeps it.)
	for i := range 2 {
		w.create(&corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: testenv.DatabasePoolNode(i), Labels: map[string]string{specs.PoolLabel: specs.PoolDatabase}},
			Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
		})
	}
	return w
}

// logUnlessPassed is the reconciler's logger: its lines are kept, and shown only when the test
// fails (the run of a test is a few hundred lines).
func logUnlessPassed(t *testing.T) logr.Logger {
	var mu sync.Mutex
	var lines []string
	t.Cleanup(func() {
		if t.Failed() {
			mu.Lock()
			defer mu.Unlock()
			t.Logf("reconciler log:\n%s", strings.Join(lines, "\n"))
		}
	})
	return funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 1})
}
