package run_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// bulkKubelet plays the node and the Job/StatefulSet controllers for many runs at once, like
// the suite's kubelet but driven by watches instead of a List per tick: every StatefulSet gets
// its server pod, Running and Ready; every Job gets a pod whose sysbench container terminated
// with a captured termination message, then SuccessCriteriaMet and Complete, a start and a
// completion time and succeeded=1. It keeps nothing but the names of the Jobs it finished.
type bulkKubelet struct {
	b  *testing.B
	ns string
	c  client.WithWatch
	// messages are the termination messages of real sysbench runs, by step label; the ladder
	// rungs get "run".
	messages map[string]string
	cancel   context.CancelFunc
	watchers sync.WaitGroup
	workers  sync.WaitGroup
	errors   atomic.Int64
	mu       sync.Mutex
	done     map[string]bool // Jobs and StatefulSets handled
	// servers are the server StatefulSets that exist, as the watch reports their creations
	// and deletions (in the order the API server recorded them); peak the most at once.
	servers map[string]bool
	peak    int
	resets  int // watches that had to start afresh, losing the order
}

func startBulkKubelet(b *testing.B, ns string) *bulkKubelet {
	b.Helper()
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: testenv.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	messages := map[string]string{
		"probe":   probeMessage,
		"prepare": captured(b, "prepare_point_select.termination-log"),
		"run":     captured(b, "run_point_select_t4.termination-log"),
	}
	ctx, cancel := context.WithCancel(context.Background())
	k := &bulkKubelet{messages: messages, b: b, ns: ns, c: c, cancel: cancel, done: map[string]bool{}, servers: map[string]bool{}}
	work := make(chan client.Object, 1024)
	k.watchers.Add(2)
	go k.watch(ctx, &batchv1.JobList{}, work)
	go k.watch(ctx, &appsv1.StatefulSetList{}, work)
	const workers = 4
	k.workers.Add(workers)
	for range workers {
		go func() {
			defer k.workers.Done()
			for obj := range work {
				k.handle(ctx, obj)
			}
		}()
	}
	go func() {
		k.watchers.Wait()
		close(work)
	}()
	return k
}

func (k *bulkKubelet) stop() {
	k.cancel()
	k.watchers.Wait()
	k.workers.Wait()
}

// peakServers returns the most server StatefulSets that existed at once, and how many times the
// count had to start afresh.
func (k *bulkKubelet) peakServers() (peak, resets int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.peak, k.resets
}

// watch feeds every added or modified object to the workers, re-watching when the server ends
// the watch. A watch without a resourceVersion starts with the current objects, which retries
// what the workers gave up on; the StatefulSets' watch resumes from the last version it saw
// instead, so that no creation or deletion is missed in the count of servers, and starts afresh
// (resetting the count, which can then only be lower than the truth) when the API server no
// longer has that version.
func (k *bulkKubelet) watch(ctx context.Context, list client.ObjectList, work chan<- client.Object) {
	defer k.watchers.Done()
	_, servers := list.(*appsv1.StatefulSetList)
	resume := ""
	for ctx.Err() == nil {
		opts := []client.ListOption{client.InNamespace(k.ns)}
		if resume != "" {
			opts = append(opts, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: resume}})
		} else if servers {
			k.mu.Lock()
			k.servers = map[string]bool{}
			k.mu.Unlock()
		}
		w, err := k.c.Watch(ctx, list, opts...)
		if err != nil {
			k.errors.Add(1)
			if resume != "" {
				k.mu.Lock()
				k.resets++
				k.mu.Unlock()
			}
			resume = ""
			time.Sleep(100 * time.Millisecond)
			continue
		}
		last, expired := k.drain(ctx, w, work)
		w.Stop()
		if servers {
			switch {
			case expired:
				k.mu.Lock()
				k.resets++
				k.mu.Unlock()
				resume = ""
			case last != "":
				resume = last
			}
		}
	}
}

// count records a server StatefulSet's creation or deletion.
func (k *bulkKubelet) count(ev watch.Event) {
	sts, ok := ev.Object.(*appsv1.StatefulSet)
	if !ok || sts.Spec.Template.Labels[specs.LabelComponent] != specs.ComponentServer {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if ev.Type == watch.Deleted {
		delete(k.servers, sts.Name)
		return
	}
	k.servers[sts.Name] = true
	k.peak = max(k.peak, len(k.servers))
}

// drain handles the watch's events until it ends; it returns the resourceVersion of the last
// object seen, and whether the watch ended with an error (the version to resume from expired).
func (k *bulkKubelet) drain(ctx context.Context, w watch.Interface, work chan<- client.Object) (last string, expired bool) {
	for {
		select {
		case <-ctx.Done():
			return last, false
		case ev, ok := <-w.ResultChan():
			if !ok {
				return last, false
			}
			if ev.Type == watch.Error {
				return last, true
			}
			if obj, ok := ev.Object.(client.Object); ok {
				last = obj.GetResourceVersion()
			}
			k.count(ev)
			if ev.Type == watch.Deleted {
				// envtest runs no garbage collector: play it for the pods of a deleted Job or
				// StatefulSet, as kube-controller-manager would, so the operator's cache
				// sheds them as in a cluster.
				if obj, ok := ev.Object.(client.Object); ok {
					k.collect(ctx, obj)
				}
				continue
			}
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			obj, ok := ev.Object.(client.Object)
			if !ok || !k.pending(obj) {
				continue
			}
			select {
			case work <- obj:
			case <-ctx.Done():
				return last, false
			}
		}
	}
}

// collect deletes the pod the fake kubelet created for a deleted Job or StatefulSet.
func (k *bulkKubelet) collect(ctx context.Context, obj client.Object) {
	name := obj.GetName() + "-0"
	if _, ok := obj.(*batchv1.Job); ok {
		name = obj.GetName() + "-x"
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: name}}
	if err := k.c.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		k.errors.Add(1)
	}
}

// pending says whether obj still needs the kubelet.
func (k *bulkKubelet) pending(obj client.Object) bool {
	if !obj.GetDeletionTimestamp().IsZero() {
		return false
	}
	if job, ok := obj.(*batchv1.Job); ok {
		if jobDone(job) {
			return false
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return !k.done[kindName(obj)]
}

func kindName(obj client.Object) string {
	switch obj.(type) {
	case *batchv1.Job:
		return "job/" + obj.GetName()
	default:
		return "sts/" + obj.GetName()
	}
}

// jobDone says whether the Job has a Complete or Failed condition.
func jobDone(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) {
			return true
		}
	}
	return false
}

// handle plays the kubelet for one object, retrying a few times on conflicts and transient
// errors (a Job's status is re-read before each retry).
func (k *bulkKubelet) handle(ctx context.Context, obj client.Object) {
	for attempt := 0; attempt < 5 && ctx.Err() == nil; attempt++ {
		var err error
		switch o := obj.(type) {
		case *batchv1.Job:
			err = k.finishJob(ctx, o)
		case *appsv1.StatefulSet:
			err = k.startServer(ctx, o)
		}
		if err == nil {
			k.mu.Lock()
			k.done[kindName(obj)] = true
			k.mu.Unlock()
			return
		}
		if ctx.Err() != nil {
			return
		}
		k.errors.Add(1)
		if job, ok := obj.(*batchv1.Job); ok {
			fresh := &batchv1.Job{}
			if gerr := k.c.Get(ctx, client.ObjectKeyFromObject(job), fresh); gerr == nil {
				if jobDone(fresh) {
					return
				}
				obj = fresh
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	k.b.Errorf("fake kubelet gave up on %s", kindName(obj))
}

func (k *bulkKubelet) startServer(ctx context.Context, sts *appsv1.StatefulSet) error {
	pod := serverPodOf(sts)
	if err := k.c.Create(ctx, pod); apierrors.IsAlreadyExists(err) {
		if err := k.c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	pod.Status = readyServerStatus(pod)
	return k.c.Status().Update(ctx, pod)
}

func (k *bulkKubelet) finishJob(ctx context.Context, job *batchv1.Job) error {
	message, ok := k.messages[job.Labels[specs.LabelStep]]
	if !ok {
		message = k.messages["run"]
	}
	start := metav1.NewTime(time.Now().Add(-time.Second).Truncate(time.Second))
	end := metav1.NewTime(time.Now().Truncate(time.Second))
	pod := jobPodOf(job)
	if err := k.c.Create(ctx, pod); apierrors.IsAlreadyExists(err) {
		if err := k.c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	pod.Status = terminatedStatus(pod, 0, message, start, end)
	if err := k.c.Status().Update(ctx, pod); err != nil {
		return err
	}
	job = job.DeepCopy()
	job.Status = testenv.FinishedJobStatus(true, start, end)
	return k.c.Status().Update(ctx, job)
}
