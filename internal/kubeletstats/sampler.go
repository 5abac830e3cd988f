// Package kubeletstats samples the CPU usage of the benchmark servers' containers from their
// kubelets, so that a step can report the server's CPU seconds per query.
//
// The Sampler is a manager Runnable: every Config.Interval it finds the server pods of the runs
// the operator manages (builtin targets' StatefulSet pods from the manager's cache; Percona
// targets' database pods, which carry the run and target labels but are not in the cache, by one
// labelled list per running Percona target), reads the kubelet Summary of each node that hosts
// one through the API server's node proxy, and keeps each container's distinct (time, usage)
// samples in a bounded ring. StepCPU then gives a step the usage between the first and the last
// sample inside the step's snapshots.
//
// Measured on the local cluster (kubelet v1.33.13, containerd 1.6, cgroup v1): the kubelet reads
// a container's usage at every request (the CRI stats provider), so a sample is as fresh as the
// poll; kubelets whose stats come from cAdvisor refresh them every 10-15 s instead, and polling
// faster only finds the same sample again (kept once). The Summary gives the time in whole
// seconds; SampleTime narrows a fresh reading down to the request's round trip.
//
// The samples live in memory only: a manager that restarts (or a new leader) has none from
// before, and the steps that began before it say so. Reading the Summary through the API server
// needs get on nodes/proxy, cluster-wide, which the operator has only when it was granted
// explicitly (Helm: serverStats.kubeletCPU); without it the Sampler notices the refusal, logs it
// once, asks again every ForbiddenRecheck, and StepCPU says which permission is missing.
package kubeletstats

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// Defaults of Config.
const (
	DefaultInterval      = 2 * time.Second
	DefaultRetention     = 3 * time.Hour
	DefaultMaxContainers = 64
	// ForbiddenRecheck is how often the Sampler asks again after the API server refused it the
	// kubelet stats: the permission may be granted while the operator runs.
	ForbiddenRecheck = 5 * time.Minute
	// maxRingSamples caps one container's ring whatever Retention / Interval is.
	maxRingSamples = 16384
)

// PermissionHint says what grants the kubelet stats; StepCPU and the log quote it.
const PermissionHint = "get on nodes/proxy, cluster-wide (Helm: --set serverStats.kubeletCPU=true; kustomize: " +
	"config/rbac/kubelet_stats_role.yaml and its binding)"

// Config sets how often and how long the Sampler samples. Its memory is bounded by
// MaxContainers rings of min(Retention/Interval, 16384) samples of 32 bytes: with the defaults
// 64 x 5400 x 32 B = 11 MB at most, 170 KB per server container actually sampled (one per
// database node while a target runs).
type Config struct {
	// Interval between two polls of the kubelets (DefaultInterval).
	Interval time.Duration
	// Retention is how long a container's samples are kept (DefaultRetention): a step's CPU can
	// be computed until then. The controller reads a step's snapshots within minutes.
	Retention time.Duration
	// MaxContainers is how many containers are sampled at once at most (DefaultMaxContainers);
	// past it the one sampled longest ago is forgotten.
	MaxContainers int
}

// Sampler samples the server containers' CPU usage from their kubelets. Build it with New and
// add it to the manager (mgr.Add); it runs only on the leader, whose controller calls StepCPU.
type Sampler struct {
	cache   client.Reader // the manager's cache: runs and the builtin server pods
	api     client.Reader // the API server: Percona targets' pods, which the cache does not hold
	fetcher SummaryFetcher
	clock   clock.WithTicker
	log     logr.Logger

	interval      time.Duration
	retention     time.Duration
	capacity      int
	maxContainers int

	mu      sync.Mutex
	started time.Time // zero until Start
	series  map[seriesKey]*series
	// forbidden is the API server's refusal of the last Summary read, "" once a read succeeded;
	// forbiddenAt is when it came.
	forbidden   string
	forbiddenAt time.Time
	// nodeErrs are the last error of each node whose last read failed.
	nodeErrs map[string]string
	// polls counts finished Polls: a test that steps a fake clock must wait for the poll in
	// flight, whose sample times read the clock after the kubelet answered.
	polls atomic.Int64
}

type seriesKey struct{ namespace, pod, container string }

type series struct {
	run, target, node string
	ring              *ring
}

// New builds a Sampler. cache is the manager's client (cached reads), api its API reader,
// fetcher reads a node's Summary (APIServerProxy), logger is the manager's.
func New(cache, api client.Reader, fetcher SummaryFetcher, clk clock.WithTicker, logger logr.Logger, c Config) (*Sampler, error) {
	if cache == nil || api == nil || fetcher == nil || clk == nil {
		return nil, errors.New("kubelet CPU sampler: cache, API reader, fetcher and clock are required")
	}
	if c.Interval < 0 || c.Retention < 0 || c.MaxContainers < 0 {
		return nil, fmt.Errorf("kubelet CPU sampler: negative setting %+v", c)
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if c.MaxContainers == 0 {
		c.MaxContainers = DefaultMaxContainers
	}
	capacity := min(int(c.Retention/c.Interval)+1, maxRingSamples)
	return &Sampler{
		cache: cache, api: api, fetcher: fetcher, clock: clk, log: logger.WithName("kubelet-cpu"),
		interval: c.Interval, retention: c.Retention, capacity: capacity, maxContainers: c.MaxContainers,
		series: map[seriesKey]*series{}, nodeErrs: map[string]string{},
	}, nil
}

// NeedLeaderElection: only the leader's controller asks for steps' CPU, so only the leader
// polls the kubelets. A new leader has no samples from before it led.
func (s *Sampler) NeedLeaderElection() bool { return true }

// Start polls until ctx ends (manager.Runnable).
func (s *Sampler) Start(ctx context.Context) error {
	s.mu.Lock()
	s.started = s.clock.Now()
	s.mu.Unlock()
	s.log.Info("sampling the server containers' CPU from their kubelets", "interval", s.interval,
		"retention", s.retention, "samplesPerContainer", s.capacity, "maxContainers", s.maxContainers)
	t := s.clock.NewTicker(s.interval)
	defer t.Stop()
	for {
		s.Poll(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// sampledPod is a pod whose containers the Sampler keeps: a server's, or a running step's
// client.
type sampledPod struct {
	namespace, name, node, run, target string
}

// Poll takes one round of samples: the kubelet of every node that hosts a server pod.
func (s *Sampler) Poll(ctx context.Context) {
	defer s.polls.Add(1)
	pods, err := s.sampledPods(ctx)
	if err != nil {
		s.log.Error(err, "cannot list the server pods to sample")
		return
	}
	s.prune()
	if len(pods) == 0 {
		return
	}
	s.mu.Lock()
	skip := s.forbidden != "" && s.clock.Since(s.forbiddenAt) < ForbiddenRecheck
	s.mu.Unlock()
	if skip {
		return
	}
	byNode := map[string]map[client.ObjectKey]sampledPod{}
	for _, p := range pods {
		if byNode[p.node] == nil {
			byNode[p.node] = map[client.ObjectKey]sampledPod{}
		}
		byNode[p.node][client.ObjectKey{Namespace: p.namespace, Name: p.name}] = p
	}
	nodes := make([]string, 0, len(byNode))
	for n := range byNode {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, node := range nodes {
		if !s.pollNode(ctx, node, byNode[node]) {
			return // forbidden: the other nodes would say the same
		}
	}
}

// pollNode reads one node's Summary and keeps its server pods' containers' samples. It returns
// false when the API server refused the read.
func (s *Sampler) pollNode(ctx context.Context, node string, pods map[client.ObjectKey]sampledPod) bool {
	rctx, cancel := context.WithTimeout(ctx, max(s.interval, 10*time.Second))
	defer cancel()
	sent := s.clock.Now()
	data, err := s.fetcher.Summary(rctx, node)
	received := s.clock.Now()
	if err == nil {
		var stats []ContainerCPU
		if stats, err = ParseSummary(data); err == nil {
			s.record(node, pods, stats, sent, received)
			return true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if apierrors.IsForbidden(err) {
		if s.forbidden == "" {
			s.log.Error(err, "the operator may not read the kubelets' stats: steps get no CPU per query until it may",
				"node", node, "needs", PermissionHint, "recheckEvery", ForbiddenRecheck)
		}
		s.forbidden = err.Error()
		s.forbiddenAt = s.clock.Now()
		return false
	}
	if ctx.Err() != nil {
		return true // the manager stops
	}
	if s.nodeErrs[node] != err.Error() {
		s.log.Error(err, "cannot read a kubelet's stats; its server pods' steps lack CPU while this lasts", "node", node)
	}
	s.nodeErrs[node] = err.Error()
	return true
}

func (s *Sampler) record(node string, pods map[client.ObjectKey]sampledPod, stats []ContainerCPU, sent, received time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.forbidden != "" {
		s.log.Info("the operator may read the kubelets' stats now", "node", node)
		s.forbidden = ""
	}
	if _, failed := s.nodeErrs[node]; failed {
		s.log.Info("kubelet stats readable again", "node", node)
		delete(s.nodeErrs, node)
	}
	for _, c := range stats {
		p, ok := pods[client.ObjectKey{Namespace: c.Namespace, Name: c.Pod}]
		if !ok {
			continue
		}
		key := seriesKey{c.Namespace, c.Pod, c.Container}
		sr := s.series[key]
		if sr == nil {
			if len(s.series) >= s.maxContainers {
				s.evictOldest()
			}
			sr = &series{ring: newRing(s.capacity)}
			s.series[key] = sr
		}
		sr.run, sr.target, sr.node = p.run, p.target, node
		sample := Sample{
			At:      SampleTime(c.Time, sent, received).UnixNano(),
			Kubelet: c.Time.Unix(),
			Usage:   c.UsageCoreNanoSeconds,
			Start:   c.Start.Unix(),
		}
		if last, ok := sr.ring.last(); ok && last.Kubelet == sample.Kubelet && last.Usage == sample.Usage && last.Start == sample.Start {
			continue // the kubelet's cached reading again; the first sighting's time is the tighter
		}
		sr.ring.add(sample)
	}
}

// evictOldest forgets the series sampled longest ago; s.mu is held.
func (s *Sampler) evictOldest() {
	var oldest seriesKey
	var at int64
	found := false
	for k, sr := range s.series {
		last, _ := sr.ring.last()
		if !found || last.At < at {
			oldest, at, found = k, last.At, true
		}
	}
	if found {
		s.log.V(1).Info("forgetting the samples of the container sampled longest ago: too many containers",
			"namespace", oldest.namespace, "pod", oldest.pod, "container", oldest.container, "maxContainers", s.maxContainers)
		delete(s.series, oldest)
	}
}

// prune forgets containers whose last sample is older than the retention.
func (s *Sampler) prune() {
	cutoff := s.clock.Now().Add(-s.retention).UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, sr := range s.series {
		if last, ok := sr.ring.last(); !ok || last.At < cutoff {
			delete(s.series, k)
		}
	}
}

// sampledPods are the running server pods of the runs the operator manages, with their nodes.
func (s *Sampler) sampledPods(ctx context.Context) ([]sampledPod, error) {
	var out []sampledPod
	add := func(p *corev1.Pod) {
		if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning {
			return
		}
		out = append(out, sampledPod{namespace: p.Namespace, name: p.Name, node: p.Spec.NodeName,
			run: p.Labels[specs.LabelRun], target: p.Labels[specs.LabelTarget]})
	}
	for _, component := range []string{specs.ComponentServer, specs.ComponentClient} {
		pods := &corev1.PodList{}
		if err := s.cache.List(ctx, pods, client.MatchingLabels{
			specs.LabelManagedBy: specs.ManagedBy, specs.LabelComponent: component,
		}); err != nil {
			return nil, fmt.Errorf("list the %s pods: %w", component, err)
		}
		for i := range pods.Items {
			add(&pods.Items[i])
		}
	}
	runs := &v1.BenchmarkRunList{}
	if err := s.cache.List(ctx, runs); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	for i := range runs.Items {
		run := &runs.Items[i]
		if run.Status.Phase.Finished() || !run.DeletionTimestamp.IsZero() {
			continue
		}
		for _, t := range run.Spec.Targets {
			if !engine.FactsOf(t.Engine).ForeignPods {
				continue
			}
			if !targetActive(run, t.Name) {
				continue
			}
			// The Percona operators' pods carry the run and target labels (specs.sampledPod) but
			// not the operator's managed-by label, so the cache does not hold them.
			pods := &corev1.PodList{}
			if err := s.api.List(ctx, pods, client.InNamespace(run.Namespace), client.MatchingLabels{
				specs.LabelRun: specs.LabelValue(run.Name), specs.LabelTarget: t.Name,
			}); err != nil {
				return nil, fmt.Errorf("list the Percona pods of %s/%s target %s: %w", run.Namespace, run.Name, t.Name, err)
			}
			for j := range pods.Items {
				add(&pods.Items[j])
			}
		}
	}
	return out, nil
}

// ClientCPU is a step's client container CPU between from and to (its container's start and
// end): cores busy on average between the first and the last kubelet sample inside. missing
// says why there is none, in a sentence for the user.
func (s *Sampler) ClientCPU(_ context.Context, namespace, pod, container string, from, to time.Time) (Usage, string) {
	if !to.After(from) {
		return Usage{}, fmt.Sprintf("no client CPU: the step's times are not in order (%s, %s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sr := s.series[seriesKey{namespace, pod, container}]
	if sr == nil {
		if s.forbidden != "" {
			return Usage{}, "no client CPU: the operator may not read the kubelets' stats; it needs " + PermissionHint
		}
		return Usage{}, "no client CPU: the client container was never sampled (the step was shorter than the sampling interval)"
	}
	u, missing := Window(sr.ring.samples(), from, to)
	if missing != "" {
		return Usage{}, "no client CPU: " + missing
	}
	return u, ""
}

// targetActive: the target's server may be up (it is past Pending and not finished).
func targetActive(run *v1.BenchmarkRun, target string) bool {
	for _, ts := range run.Status.Targets {
		if ts.Name == target {
			return ts.Phase != "" && ts.Phase != v1.TargetPending && !ts.Phase.Finished()
		}
	}
	return false
}

// ServerContainer is the name of the server container of a target's engine (engine.Facts): the
// builtin StatefulSet's (specs), Percona Server for MySQL's "mysql" and Percona XtraDB Cluster's
// "pxc" (their operators' database containers); "" for an external server, which has no pod here.
func ServerContainer(e v1.Engine) string {
	return engine.FactsOf(e).ServerContainer
}

// StepCPU is the target's server container CPU between from and to (the step's snapshot
// times): the usage between the first and the last kubelet sample inside [from, to]. missing
// says why there is none, in a sentence for the user. It fills Container, Seconds, From, To,
// Samples and PerSecond; the caller fills PerQuery.
func (s *Sampler) StepCPU(_ context.Context, run *v1.BenchmarkRun, target string, from, to time.Time) (*serverstats.CPU, string) {
	e := v1.EngineBuiltin
	for _, t := range run.Spec.Targets {
		if t.Name == target {
			e = t.EngineOrDefault()
		}
	}
	container := ServerContainer(e)
	if container == "" {
		return nil, "no CPU per query for an external server: the operator has no kubelet that runs it"
	}
	if !to.After(from) {
		return nil, fmt.Sprintf("no CPU: the step's snapshots are not in order (%s, %s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	runLabel := specs.LabelValue(run.Name)
	type candidate struct {
		key     seriesKey
		node    string
		usage   Usage
		missing string
	}
	var best *candidate
	for k, sr := range s.series {
		if k.namespace != run.Namespace || k.container != container || sr.run != runLabel || sr.target != target {
			continue
		}
		u, missing := Window(sr.ring.samples(), from, to)
		c := &candidate{key: k, node: sr.node, usage: u, missing: missing}
		// The one that has CPU, then the one with the most samples inside, then the first pod
		// by name (a multi-pod target's member 0, e.g. PXC's: the same member every step, not
		// the map's random order).
		if best == nil || better(c.missing == "", c.usage.Samples, best.missing == "", best.usage.Samples) ||
			(!better(best.missing == "", best.usage.Samples, c.missing == "", c.usage.Samples) && c.key.pod < best.key.pod) {
			best = c
		}
	}
	if best != nil && best.missing == "" {
		u := best.usage
		return &serverstats.CPU{
			Container: container, Seconds: u.Seconds,
			From: unixSeconds(u.From), To: unixSeconds(u.To),
			Samples: u.Samples, PerSecond: u.PerSecond,
		}, ""
	}
	// Why not, most telling first.
	switch {
	case s.forbidden != "":
		return nil, "no CPU: the operator may not read the kubelet's stats; it needs " + PermissionHint
	case s.started.IsZero():
		return nil, "no CPU: the operator's kubelet sampler has not started (the operator is not the leader?)"
	case s.started.After(from):
		return nil, fmt.Sprintf("no CPU: the operator (re)started at %s, after the step began, and its kubelet samples "+
			"from before were lost", s.started.UTC().Format(time.RFC3339))
	}
	if best == nil {
		for node, e := range s.nodeErrs {
			return nil, fmt.Sprintf("no CPU: no kubelet sample of container %s was taken; the kubelet of node %s could not be read: %s",
				container, node, e)
		}
		return nil, fmt.Sprintf("no CPU: no kubelet sample of container %s of target %s was taken while the step ran "+
			"(its pod was not seen running)", container, target)
	}
	msg := fmt.Sprintf("no CPU for container %s of pod %s: %s", container, best.key.pod, best.missing)
	if e, ok := s.nodeErrs[best.node]; ok {
		msg += fmt.Sprintf("; the kubelet of node %s could not be read: %s", best.node, e)
	} else if best.usage.Samples < 2 {
		msg += fmt.Sprintf(" (the operator samples every %s: longer steps get CPU)", s.interval)
	}
	return nil, msg
}

func better(ok bool, samples int, bestOK bool, bestSamples int) bool {
	if ok != bestOK {
		return ok
	}
	return samples > bestSamples
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
