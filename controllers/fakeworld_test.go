package controllers_test

// fakeWorld runs the BenchmarkRun reconciler against controller-runtime's fake client, one
// Reconcile at a time, with the test playing the kubelet and the Job and StatefulSet controllers
// and injecting what a real API server will not produce on demand: refused creates, status write
// conflicts, stale cache reads, failing reads (issue #16). Nothing here runs in the background
// and nothing sleeps: the fake clock is the only time there is.

import (
	"context"
	"fmt"
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
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/controllers"
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
	r      *controllers.BenchmarkRunReconciler

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
	r, err := controllers.NewBenchmarkRunReconciler(controllers.RunDependencies{
		Client: cache, APIReader: reader, Scheme: testenv.Scheme, Recorder: w.events,
		Engines: engine.All(cache, reader, testenv.Scheme), Logs: worldLogs{w}, Clock: w.clock,
		AdmissionPolicy: &admission.Check{Reader: reader},
	}, controllers.RunOptions{SysbenchImage: "sysbench:test", ServerReadyTimeout: 10 * time.Minute, SchedulingGrace: time.Minute})
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

// stamp is what the API server adds to every object it creates.
func (w *fakeWorld) stamp(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
	w.mu.Lock()
	w.uids++
	uid := types.UID(fmt.Sprintf("uid-%04d", w.uids))
	w.mu.Unlock()
	if obj.GetUID() == "" {
		obj.SetUID(uid)
	}
	if ts := obj.GetCreationTimestamp(); ts.IsZero() {
		obj.SetCreationTimestamp(metav1.NewTime(w.clock.Now().Truncate(time.Second)))
	}
	if obj.GetGeneration() == 0 {
		obj.SetGeneration(1)
	}
	return c.Create(ctx, obj, opts...)
}

// strike returns the armed fault at where that matches obj, counting the hit, or nil.
func (w *fakeWorld) strike(where string, obj client.Object) *fault {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range w.faults {
		if f.where != where || f.times == 0 || (f.match != nil && !f.match(obj)) {
			continue
		}
		if f.times > 0 {
			f.times--
		}
		f.hits++
		return f
	}
	return nil
}

// inject arms a fault; the returned fault counts its hits.
func (w *fakeWorld) inject(f *fault) *fault {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.faults = append(w.faults, f)
	return f
}

func (w *fakeWorld) setStale(run *v1.BenchmarkRun) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stale = run
}

// cacheFiltered are the kinds cachetrim.Options filters by the operator's label.
func cacheFiltered(obj runtime.Object) bool {
	switch obj.(type) {
	case *corev1.Pod, *corev1.Secret, *corev1.ConfigMap, *corev1.Service, *batchv1.Job, *appsv1.StatefulSet, *networkingv1.NetworkPolicy,
		*corev1.PodList, *corev1.SecretList, *corev1.ConfigMapList, *corev1.ServiceList, *batchv1.JobList, *appsv1.StatefulSetList,
		*networkingv1.NetworkPolicyList:
		return true
	}
	return false
}

func ours(obj client.Object) bool { return obj.GetLabels()[specs.LabelManagedBy] == specs.ManagedBy }

func (w *fakeWorld) cacheGet(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if run, ok := obj.(*v1.BenchmarkRun); ok {
		if f := w.strike(onCacheGet, obj); f != nil {
			return f.err
		}
		w.mu.Lock()
		stale := w.stale
		w.mu.Unlock()
		if stale != nil && client.ObjectKeyFromObject(stale) == key {
			stale.DeepCopyInto(run)
			return nil
		}
	}
	if err := c.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if cacheFiltered(obj) && !ours(obj) {
		// The informer never saw it: only a create's AlreadyExists reveals it.
		return apierrors.NewNotFound(w.resource(obj), key.Name)
	}
	if w.isHidden(obj) {
		return apierrors.NewNotFound(w.resource(obj), key.Name)
	}
	return nil
}

// hide keeps the object of kind ("Job") named name out of the cache until show: the API server
// has it, the informer has not seen it yet.
func (w *fakeWorld) hide(kind, name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.hidden == nil {
		w.hidden = map[string]bool{}
	}
	w.hidden[kind+"/"+name] = true
}

// show lets the cache show an object hide kept out of it.
func (w *fakeWorld) show(kind, name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.hidden, kind+"/"+name)
}

func (w *fakeWorld) isHidden(obj client.Object) bool {
	kind := w.kind(obj)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hidden[kind+"/"+obj.GetName()]
}

// onCacheList sets (or with nil clears) what runs before every List through the cache.
func (w *fakeWorld) onCacheList(f func(client.ObjectList)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.beforeList = f
}

func (w *fakeWorld) cacheList(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
	w.mu.Lock()
	before := w.beforeList
	w.mu.Unlock()
	if before != nil {
		before(list)
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return err
	}
	if !cacheFiltered(list) {
		return nil
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	kept := items[:0]
	for _, item := range items {
		if o, ok := item.(client.Object); ok && ours(o) && !w.isHidden(o) {
			kept = append(kept, item)
		}
	}
	return meta.SetList(list, kept)
}

func (w *fakeWorld) operatorCreate(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
	if f := w.strike(onCreate, obj); f != nil {
		return f.err
	}
	if err := c.Create(ctx, obj, opts...); err != nil {
		return err
	}
	w.mu.Lock()
	w.creates[w.kind(obj)+"/"+obj.GetName()]++
	w.mu.Unlock()
	w.wrote("create", obj)
	return nil
}

// wrote logs a write of the reconciler's that succeeded.
func (w *fakeWorld) wrote(verb string, obj client.Object) {
	what := w.kind(obj)
	if obj.GetName() != "" {
		what += "/" + obj.GetName()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, verb+" "+what)
}

// writeLog returns the reconciler's writes so far (a copy).
func (w *fakeWorld) writeLog() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.writes...)
}

func (w *fakeWorld) operatorUpdate(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
	if err := c.Update(ctx, obj, opts...); err != nil {
		return err
	}
	w.wrote("update", obj)
	return nil
}

func (w *fakeWorld) operatorPatch(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if err := c.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	w.wrote("patch", obj)
	return nil
}

func (w *fakeWorld) operatorDelete(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
	if err := c.Delete(ctx, obj, opts...); err != nil {
		return err
	}
	w.wrote("delete", obj)
	return nil
}

// operatorDeleteAllOf is a deletecollection as the API server serves it. The fake client's
// DeleteAllOf ignores the field selector (it would delete the Jobs a "metadata.name!=x" term
// keeps): the objects are selected here by namespace, labels and fields, and deleted one by one.
// Like the API server's, it deletes the selected objects only, not their pods (envtest and the
// fake world run no garbage collector: collectGarbage plays it).
func (w *fakeWorld) operatorDeleteAllOf(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
	o := client.DeleteAllOfOptions{}
	o.ApplyOptions(opts)
	gvk, err := apiutil.GVKForObject(obj, testenv.Scheme)
	if err != nil {
		return err
	}
	gvk.Kind += "List"
	ro, err := testenv.Scheme.New(gvk)
	if err != nil {
		return err
	}
	list := ro.(client.ObjectList)
	listOpts := []client.ListOption{client.InNamespace(o.Namespace)}
	if o.LabelSelector != nil {
		listOpts = append(listOpts, client.MatchingLabelsSelector{Selector: o.LabelSelector})
	}
	if err := c.List(ctx, list, listOpts...); err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	var deleted []string
	for _, item := range items {
		it := item.(client.Object)
		if o.FieldSelector != nil && !o.FieldSelector.Matches(fields.Set{"metadata.name": it.GetName(), "metadata.namespace": it.GetNamespace()}) {
			continue
		}
		if err := c.Delete(ctx, it, &o.DeleteOptions); client.IgnoreNotFound(err) != nil {
			return err
		}
		deleted = append(deleted, it.GetName())
	}
	w.wrote("deletecollection", obj)
	w.mu.Lock()
	w.collections = append(w.collections, deleted)
	w.mu.Unlock()
	return nil
}

func (w *fakeWorld) subResourceUpdate(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if err := c.SubResource(sub).Update(ctx, obj, opts...); err != nil {
		return err
	}
	w.wrote("update "+sub, obj)
	return nil
}

// collectGarbage plays the garbage collector: every pod whose controlling Job is gone is deleted.
func (w *fakeWorld) collectGarbage() {
	w.t.Helper()
	pods := &corev1.PodList{}
	if err := w.api.List(w.ctx, pods, client.InNamespace(fakeNS)); err != nil {
		w.t.Fatal(err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.Kind != "Job" || w.exists(&batchv1.Job{}, ref.Name) {
			continue
		}
		if err := w.api.Delete(w.ctx, p); client.IgnoreNotFound(err) != nil {
			w.t.Fatal(err)
		}
	}
}

func (w *fakeWorld) statusPatch(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if _, ok := obj.(*v1.BenchmarkRun); ok && sub == "status" {
		if f := w.strike(onStatusPatch, obj); f != nil {
			if f.before == nil {
				return f.err
			}
			f.before()
		}
	}
	if err := c.SubResource(sub).Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	w.mu.Lock()
	w.statusWrites++
	w.mu.Unlock()
	w.wrote("patch "+sub, obj)
	return nil
}

func (w *fakeWorld) readerGet(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*v1.BenchmarkRun); ok {
		w.mu.Lock()
		w.runReads++
		w.mu.Unlock()
		if f := w.strike(onReaderGet, obj); f != nil {
			return f.err
		}
	} else {
		obj.SetName(key.Name) // for the fault's match
		if f := w.strike(onObjectRead, obj); f != nil {
			return f.err
		}
	}
	return c.Get(ctx, key, obj, opts...)
}

func (w *fakeWorld) kind(obj runtime.Object) string {
	gvk, err := apiutil.GVKForObject(obj, testenv.Scheme)
	if err != nil {
		w.t.Fatalf("kind of %T: %v", obj, err)
	}
	return gvk.Kind
}

func (w *fakeWorld) resource(obj runtime.Object) schema.GroupResource {
	gvk, err := apiutil.GVKForObject(obj, testenv.Scheme)
	if err != nil {
		w.t.Fatalf("kind of %T: %v", obj, err)
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural.GroupResource()
}

// counters returns the reconciler's successful creates (a copy), status writes and APIReader
// reads of the run so far.
func (w *fakeWorld) counters() (creates map[string]int, statusWrites, runReads int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	creates = make(map[string]int, len(w.creates))
	for k, v := range w.creates {
		creates[k] = v
	}
	return creates, w.statusWrites, w.runReads
}

// createdTwice lists the objects the reconciler created more than once.
func (w *fakeWorld) createdTwice() []string {
	creates, _, _ := w.counters()
	var twice []string
	for k, n := range creates {
		if n > 1 {
			twice = append(twice, fmt.Sprintf("%s (%d times)", k, n))
		}
	}
	return twice
}

// create creates a run (or anything else) as a user would.
func (w *fakeWorld) create(obj client.Object) client.Object {
	w.t.Helper()
	if err := w.api.Create(w.ctx, obj); err != nil {
		w.t.Fatalf("create %s %s: %v", w.kind(obj), obj.GetName(), err)
	}
	return obj
}

// run reads the run as it is on the API server.
func (w *fakeWorld) run(name string) *v1.BenchmarkRun {
	w.t.Helper()
	run := &v1.BenchmarkRun{}
	if err := w.api.Get(w.ctx, client.ObjectKey{Namespace: fakeNS, Name: name}, run); err != nil {
		w.t.Fatalf("get run %s: %v", name, err)
	}
	return run
}

// reconcile runs one Reconcile of the run.
func (w *fakeWorld) reconcile(name string) (ctrl.Result, error) {
	return w.r.Reconcile(w.ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: fakeNS, Name: name}})
}

// mustReconcile runs one Reconcile and fails the test on an error.
func (w *fakeWorld) mustReconcile(name string) ctrl.Result {
	w.t.Helper()
	res, err := w.reconcile(name)
	if err != nil {
		w.t.Fatalf("reconcile: %v", err)
	}
	return res
}

// takeEvents returns the Events recorded since the last call.
func (w *fakeWorld) takeEvents() []string {
	var out []string
	for {
		select {
		case e := <-w.events.Events:
			out = append(out, e)
		default:
			w.mu.Lock()
			w.recorded = append(w.recorded, out...)
			w.mu.Unlock()
			return out
		}
	}
}

// allEvents returns every Event recorded so far.
func (w *fakeWorld) allEvents() []string {
	w.takeEvents()
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.recorded...)
}

// withReason keeps the Events of a reason ("Normal TargetSucceeded ...").
func withReason(events []string, reason string) []string {
	var out []string
	for _, e := range events {
		if f := strings.Fields(e); len(f) > 1 && f[1] == reason {
			out = append(out, e)
		}
	}
	return out
}

// startServers plays the StatefulSet controller and the kubelet: every StatefulSet without its
// pod gets one, Ready.
func (w *fakeWorld) startServers() {
	w.t.Helper()
	stss := &appsv1.StatefulSetList{}
	if err := w.api.List(w.ctx, stss, client.InNamespace(fakeNS)); err != nil {
		w.t.Fatal(err)
	}
	for i := range stss.Items {
		sts := &stss.Items[i]
		err := w.api.Get(w.ctx, client.ObjectKey{Namespace: fakeNS, Name: sts.Name + "-0"}, &corev1.Pod{})
		if err == nil {
			continue
		}
		if !apierrors.IsNotFound(err) {
			w.t.Fatal(err)
		}
		pod := w.create(serverPodOf(sts)).(*corev1.Pod)
		pod.Status = readyServerStatus(pod)
		if err := w.api.Status().Update(w.ctx, pod); err != nil {
			w.t.Fatal(err)
		}
	}
	if err := collectServerPods(w.ctx, w.api, fakeNS, stss.Items); err != nil {
		w.t.Fatal(err)
	}
}

// finishJobs plays the Job controller and the kubelet: every unfinished Job ends as decide says
// (a pod whose sysbench container terminated with the outcome's exit code and termination
// message, then the Job's final conditions).
func (w *fakeWorld) finishJobs(decide func(*batchv1.Job) outcome) {
	w.t.Helper()
	jobs := &batchv1.JobList{}
	if err := w.api.List(w.ctx, jobs, client.InNamespace(fakeNS)); err != nil {
		w.t.Fatal(err)
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if jobDone(job) {
			continue
		}
		o := decide(job)
		if o.pending {
			continue
		}
		end := metav1.NewTime(w.clock.Now().Truncate(time.Second))
		start := metav1.NewTime(end.Add(-time.Second))
		if !o.noPod {
			pod := w.create(jobPodOf(job)).(*corev1.Pod)
			pod.Status = terminatedStatus(pod, o.exitCode, o.message, start, end)
			if err := w.api.Status().Update(w.ctx, pod); err != nil {
				w.t.Fatal(err)
			}
		}
		job.Status = testenv.FinishedJobStatus(!o.failed, start, end)
		if err := w.api.Status().Update(w.ctx, job); err != nil {
			w.t.Fatal(err)
		}
	}
}

// drive reconciles the run until cond holds, playing the kubelet between reconciles (servers
// Ready, Jobs finished as decide says) and moving the clock a second each time. Every reconcile
// must succeed. It returns the run as cond saw it.
func (w *fakeWorld) drive(name string, decide func(*batchv1.Job) outcome, what string, cond func(*v1.BenchmarkRun) bool) *v1.BenchmarkRun {
	w.t.Helper()
	for i := 0; i < 200; i++ {
		w.mustReconcile(name)
		if run := w.run(name); cond(run) {
			return run
		}
		w.startServers()
		w.finishJobs(decide)
		w.clock.Step(time.Second)
	}
	w.t.Fatalf("%s: not reached after 200 reconciles; status %+v", what, w.run(name).Status)
	return nil
}

// exists says whether the object of obj's type named name is on the API server.
func (w *fakeWorld) exists(obj client.Object, name string) bool {
	w.t.Helper()
	err := w.api.Get(w.ctx, client.ObjectKey{Namespace: fakeNS, Name: name}, obj)
	if err != nil && !apierrors.IsNotFound(err) {
		w.t.Fatal(err)
	}
	return err == nil
}

// targetStatus is the status of target name, or a zero one.
func targetStatus(run *v1.BenchmarkRun, name string) v1.TargetStatus {
	for _, ts := range run.Status.Targets {
		if ts.Name == name {
			return ts
		}
	}
	return v1.TargetStatus{}
}

// fakeRun is a run of the two targets of baseRun at the given thread counts in the fake world,
// with a UID of its own name.
func fakeRun(name string, threads ...int32) *v1.BenchmarkRun {
	run := baseRun(fakeNS, name, threads...)
	run.UID = types.UID("run-" + name)
	return run
}
