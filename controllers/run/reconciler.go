// Package run is the BenchmarkRun reconciler, split by concern: reconciler.go builds and wires
// the controller and runs one reconcile; status.go is the one path status is written through (a
// transition on the status transaction both reconcilers share, internal/statustx); order.go with
// interleave.go and parallel.go is the run's order (Sequential, Interleaved, Parallel), chosen
// once per transition; lifecycle.go moves a target through its phases and ends the run; steps.go
// creates and records the step Jobs (what it reads of them and decides is internal/stepjob);
// queue.go lists the node pool for the queue's decision (internal/pool); preflight.go,
// restarts.go, redact.go, warnings.go, compare.go, outbox.go, external_cleanup.go and
// percona_release.go handle missing references, server restarts and replacements, credentials in
// failures and Events, Events as reasons, the comparison with a scheduled run's baseline, the
// results database's outbox, external tables and other operators' servers.
//
// Each object has one writer: this controller writes runs (status), their results ConfigMaps and
// every object created for them; the schedule's controller (controllers/schedule) writes
// schedules and creates and prunes runs.
package run

import (
	"cmp"
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/admission"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/metrics"
	"github.com/mysqlbench/mysqlbench-operator/internal/sink"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/statustx"
	"github.com/mysqlbench/mysqlbench-operator/internal/stepjob"
)

// DefaultSysbenchImage is the project's Debian bookworm sysbench 1.0.20 image (images/sysbench).
const DefaultSysbenchImage = specs.DefaultSysbenchImage

// Timeouts of waits that have no Job deadline of their own.
const (
	DefaultServerReadyTimeout = 15 * time.Minute
	DefaultSchedulingGrace    = time.Minute
)

// Reconciler carries BenchmarkRuns through their lifecycle: for each target in turn,
// provision the server, probe it, prepare data, warm up, run the ladder one Job per step, tear
// down; then write the results ConfigMap. Build it with New.
type Reconciler struct {
	kubeClient
	// reader reads from the API server, past the cache: the user's objects (a custom script's
	// ConfigMap, which the label-filtered cache does not hold) and fresh copies of the
	// operator's own where a stale one would mislead.
	reader   client.Reader
	scheme   *runtime.Scheme
	recorder record.EventRecorder
	// engines by target engine; a target whose engine is missing fails with a clear message.
	engines map[v1.Engine]engine.Engine
	// logs reads a finished sysbench pod's log for the per-second series.
	logs stepjob.LogReader
	// clock is injected so tests control time.
	clock clock.PassiveClock
	// defaultImage is the sysbench image used when the spec names none.
	defaultImage string
	// readyTimeout bounds the wait for a server to accept connections.
	readyTimeout time.Duration
	// schedulingGrace is how long a pod may stay unschedulable before a condition says so.
	schedulingGrace time.Duration
	// results writes finished runs into the results database; nil when there is none.
	results sink.Writer
	// outboxTimeout bounds how long a deleted run waits for the results database.
	outboxTimeout time.Duration
	// admission says whether the admission policy is in force.
	admission admission.State
	// CPU gives each ladder step its server container's CPU time from the kubelet; nil means
	// off (the manager's --kubelet-cpu-interval=0), and steps then say stepjob.CPUOff.
	CPU stepjob.CPUSource

	// written holds, per run, the resourceVersion of the operator's last status write (or of
	// the last fresh read). A cached run with another resourceVersion may predate that write:
	// acting on it would redo a transition already made (re-provision a server that was just
	// torn down), so such a run is read again from the API server.
	written sync.Map // types.NamespacedName -> string
}

// kubeClient is the embedded client under an unexported name: a reconciler cannot be built
// around the constructor.
type kubeClient = client.Client

// Dependencies are what a Reconciler cannot work without; each is required.
type Dependencies struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server directly (the manager's GetAPIReader).
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  record.EventRecorder
	// Engines by target engine (engine.All).
	Engines map[v1.Engine]engine.Engine
	// Logs reads sysbench pods' logs (stepjob.ClientsetLogs in the manager).
	Logs  stepjob.LogReader
	Clock clock.PassiveClock
	// Results, optional, writes every finished run into the results database (sink.Database);
	// nil when the operator has none.
	Results sink.Writer
	// AdmissionPolicy says whether the admission policy is in force (admission.Check); a
	// run that starts without it gets a Warning Event saying so.
	AdmissionPolicy admission.State
}

// Options are the settings of a Reconciler; a zero field takes its default.
type Options struct {
	// SysbenchImage for runs whose spec names none (DefaultSysbenchImage).
	SysbenchImage string
	// ServerReadyTimeout bounds the wait for a server to accept connections
	// (DefaultServerReadyTimeout).
	ServerReadyTimeout time.Duration
	// SchedulingGrace is how long a pod may stay unschedulable before a condition says so
	// (DefaultSchedulingGrace).
	SchedulingGrace time.Duration
	// ResultsOutboxTimeout bounds how long a deleted run waits for the results database to take
	// its rows (sink.DefaultOutboxTimeout).
	ResultsOutboxTimeout time.Duration
}

// New is the one way to build the reconciler, for the manager and the
// tests alike. It refuses missing dependencies, naming each: a reconciler without a log reader,
// for example, would silently drop every per-second series.
func New(d Dependencies, o Options) (*Reconciler, error) {
	var missing []string
	for name, absent := range map[string]bool{
		"Client": d.Client == nil, "APIReader": d.APIReader == nil, "Scheme": d.Scheme == nil,
		"Recorder": d.Recorder == nil, "Engines": len(d.Engines) == 0, "Logs": d.Logs == nil, "Clock": d.Clock == nil,
		"AdmissionPolicy": d.AdmissionPolicy == nil,
	} {
		if absent {
			missing = append(missing, name)
		}
	}
	for e, eng := range d.Engines {
		if eng == nil {
			missing = append(missing, "Engines["+string(e)+"]")
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("BenchmarkRun reconciler: missing dependencies: %s", strings.Join(missing, ", "))
	}
	if o.ServerReadyTimeout < 0 || o.SchedulingGrace < 0 || o.ResultsOutboxTimeout < 0 {
		return nil, fmt.Errorf("BenchmarkRun reconciler: negative timeout (server ready timeout %s, scheduling grace %s, "+
			"results outbox timeout %s)", o.ServerReadyTimeout, o.SchedulingGrace, o.ResultsOutboxTimeout)
	}
	return &Reconciler{
		kubeClient:      d.Client,
		reader:          d.APIReader,
		scheme:          d.Scheme,
		recorder:        d.Recorder,
		engines:         d.Engines,
		logs:            d.Logs,
		clock:           d.Clock,
		results:         d.Results,
		admission:       d.AdmissionPolicy,
		defaultImage:    cmp.Or(o.SysbenchImage, DefaultSysbenchImage),
		readyTimeout:    cmp.Or(o.ServerReadyTimeout, DefaultServerReadyTimeout),
		schedulingGrace: cmp.Or(o.SchedulingGrace, DefaultSchedulingGrace),
		outboxTimeout:   cmp.Or(o.ResultsOutboxTimeout, sink.DefaultOutboxTimeout),
	}, nil
}

// The manager's RBAC is exactly what its code calls (controllers/run/rbac_test.go records every
// call of the suite's managers and fails on a call not granted or a grant not called). Reads of the
// operator's own objects go through the cache (list, watch); get is for the direct reads of
// APIReader (the run, a user's Secret or ConfigMap, an object to delete). finalizers: the
// OwnerReferencesPermissionEnforcement admission plugin requires update there to create an
// object owned by a run (blockOwnerDeletion). These markers, with the engines' own next to their
// code (internal/engine/builtin, percona, external), generate config/rbac/role.yaml, bound
// in every watched namespace; Nodes, which are cluster-scoped, are read (list, watch: the node
// pool queue) under config/rbac/manager_cluster_role.yaml, always bound cluster-wide. The kubelet
// stats of the CPU sampler (get nodes/proxy) are in config/rbac/kubelet_stats_role.yaml, bound
// only when asked for (Helm: serverStats.kubeletCPU): that permission also lets its holder run
// commands in any pod through the kubelet, so it is no marker here.
// +kubebuilder:rbac:groups=mysqlbench.io,resources=benchmarkruns,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=mysqlbench.io,resources=benchmarkruns/status,verbs=patch
// +kubebuilder:rbac:groups=mysqlbench.io,resources=benchmarkruns/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete;deletecollection
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;delete
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch;list

// Reconcile advances one BenchmarkRun by one transition. Every transition that changes the
// status is written before anything else happens, and the write's own watch event brings the
// next reconcile, so the operator can stop at any moment and resume where the status says.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	run := &v1.BenchmarkRun{}
	if err := r.Get(ctx, req.NamespacedName, run); err != nil {
		if apierrors.IsNotFound(err) {
			metrics.ForgetRun(req.Namespace, req.Name)
			r.written.Delete(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if last, ok := r.written.Load(req.NamespacedName); ok && last != run.ResourceVersion {
		// The cache has not caught up with the last write, or someone else wrote since.
		if err := r.apiReader().Get(ctx, req.NamespacedName, run); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		r.written.Store(req.NamespacedName, run.ResourceVersion)
	}
	if !run.DeletionTimestamp.IsZero() {
		// Everything the run created is owned by it; the garbage collector removes it. Only
		// rows not yet in the results database and tables on external servers need the operator.
		if controllerutil.ContainsFinalizer(run, sink.OutboxFinalizer) {
			if res, err := r.flushResults(ctx, run); err != nil || !res.IsZero() {
				return res, err
			}
		}
		if controllerutil.ContainsFinalizer(run, ServerReleaseFinalizer) {
			if res, err := r.releaseServers(ctx, run); err != nil || !res.IsZero() {
				return res, err
			}
		}
		if controllerutil.ContainsFinalizer(run, ExternalCleanupFinalizer) {
			return r.finalizeDeletion(ctx, run)
		}
		return ctrl.Result{}, nil
	}
	if run.Status.Phase.Finished() {
		if err := r.settleConfirmation(ctx, run); err != nil {
			return statustx.Reconciled(ctx, ctrl.Result{}, nil, err)
		}
		if res, err := r.flushResults(ctx, run); err != nil || !res.IsZero() {
			return res, err
		}
		return ctrl.Result{}, r.removeExternalFinalizer(ctx, run)
	}
	// Before any server that only another operator lets go is created.
	if wrote, err := r.ensureReleaseFinalizer(ctx, run); wrote || err != nil {
		return ctrl.Result{}, err
	}
	if hasExternalData(run) {
		// Before any table exists on a server the operator does not run.
		if wrote, err := r.ensureExternalFinalizer(ctx, run); wrote || err != nil {
			return ctrl.Result{}, err
		}
	}

	tx := newTransition(r, run)
	result, err := r.advance(ctx, tx)
	return statustx.Reconciled(ctx, result, err, tx.commit(ctx))
}

// SetupWithManager registers the controller: it owns every object it creates, and watches the
// pods of its Jobs and StatefulSets (owned by those, not by the run) by their run label.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		For(&v1.BenchmarkRun{}).
		Owns(&batchv1.Job{}).
		Owns(&appsv1.StatefulSet{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.ConfigMap{}).
		Owns(&corev1.Secret{}).
		Owns(&networkingv1.NetworkPolicy{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podToRun),
			builder.WithPredicates(predicate.NewPredicateFuncs(isOurs))).
		// A run that lets go of a pool's node wakes the runs queued for one, and so does the
		// last pod of a released server going away (lingeringServers).
		Watches(&v1.BenchmarkRun{}, handler.EnqueueRequestsFromMapFunc(r.queuedRuns),
			builder.WithPredicates(nodeReleased)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.queuedRunsOfServerPod),
			builder.WithPredicates(serverPodGone)).
		// A schedule that ended a regression's confirmation settles that run's Regressed.
		Watches(&v1.BenchmarkSchedule{}, handler.EnqueueRequestsFromMapFunc(confirmedRun))
	r.watchForeignKinds(mgr, b)
	return b.Named("benchmarkrun").Complete(r)
}

// watchForeignKinds owns the kinds of other operators' servers (the Percona resources) that the
// cluster knows now. A kind whose CRD is missing cannot be watched: its informer would never
// sync and the manager would not start. Such an engine polls its servers' readiness instead (a
// bounded RequeueAfter), and its targets fail at once while the CRD stays missing; installing the
// CRD later works without a restart, a restart only turns polling back into watching.
func (r *Reconciler) watchForeignKinds(mgr ctrl.Manager, b *builder.Builder) {
	log := mgr.GetLogger().WithName("setup")
	watched := map[schema.GroupVersionKind]bool{}
	for name, e := range r.engines {
		fk, ok := e.(engine.ForeignKind)
		if !ok {
			continue
		}
		gvk := fk.ServerKind()
		_, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			fk.SetWatched(false)
			log.Info("not watching a server kind the cluster does not know; its targets fail until its operator is installed",
				"engine", name, "kind", gvk.String(), "reason", err.Error())
			continue
		}
		if !watched[gvk] {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			b.Owns(u)
			watched[gvk] = true
		}
		fk.SetWatched(true)
		log.Info("watching server kind", "engine", name, "kind", gvk.String())
	}
}

// podToRun maps a server or sysbench pod to its run through the run label and the name of the
// run that the pod's labels carry.
func podToRun(_ context.Context, obj client.Object) []reconcile.Request {
	run, ok := obj.GetLabels()[specs.LabelRun]
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: run}}}
}

func isOurs(obj client.Object) bool {
	return obj.GetLabels()[specs.LabelManagedBy] == specs.ManagedBy
}

// apiReader reads the user's objects from the API server, past the operator's label-filtered cache.
func (r *Reconciler) apiReader() client.Reader { return r.reader }

// engineFor returns the engine of a target.
func (r *Reconciler) engineFor(t v1.Target) (engine.Engine, error) {
	e, ok := r.engines[t.EngineOrDefault()]
	if !ok {
		return nil, &engine.ConfigError{Message: fmt.Sprintf(
			"target %s: engine %s is not available in this operator", t.Name, t.EngineOrDefault())}
	}
	return e, nil
}

func (r *Reconciler) sysbenchImage(run *v1.BenchmarkRun) string {
	return specs.SysbenchImage(run, r.defaultImage)
}
