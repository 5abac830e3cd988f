package controllers

import (
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// maxLogBytes bounds what is read of one step's log: a 24 h step at one line per second is
// about 20 MB; the series is downsampled to its budget anyway.
const maxLogBytes = 64 << 20

// PodLogReader reads a container's log (the kubelet serves it through the API server's pods/log).
type PodLogReader interface {
	Logs(ctx context.Context, namespace, pod, container string) (io.ReadCloser, error)
}

// ClientsetLogs reads logs through a client-go clientset.
type ClientsetLogs struct{ Clientset kubernetes.Interface }

// Logs streams the container's log.
func (c ClientsetLogs) Logs(ctx context.Context, namespace, pod, container string) (io.ReadCloser, error) {
	return c.Clientset.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container}).Stream(ctx)
}

// ensureReporter creates the ConfigMap with the Lua reporter every sysbench Job of the run mounts.
func (r *BenchmarkRunReconciler) ensureReporter(ctx context.Context, run *v1.BenchmarkRun) error {
	cm := specs.ReporterConfigMap(run)
	if err := r.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); err == nil {
		return nil
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("get reporter configmap: %w", err)
	}
	if err := controllerutil.SetControllerReference(run, cm, r.Scheme); err != nil {
		return err
	}
	if err := r.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create reporter configmap: %w", err)
	}
	return nil
}

// storeSeries reads a finished step's per-second series from its pod's log and stores it,
// compacted to its share of the ConfigMap budget, in the results ConfigMap under the step's key.
// Storing the same step twice writes the same bytes. A log that cannot be read (the pod is gone,
// the node is unreachable) costs the series, never the step: the step's numbers come from the
// termination message, and an Event says what is missing.
func (r *BenchmarkRunReconciler) storeSeries(ctx context.Context, run *v1.BenchmarkRun, target string, threads int32, pod *corev1.Pod) error {
	log := logf.FromContext(ctx)
	if pod == nil || r.Logs == nil {
		return nil
	}
	rc, err := r.Logs.Logs(ctx, pod.Namespace, pod.Name, specs.SysbenchContainer)
	if err != nil {
		log.Info("per-second series unavailable: cannot read the step's log", "pod", pod.Name, "err", err.Error())
		r.Recorder.Eventf(run, warning, "SeriesUnavailable", "target %s, %d threads: cannot read pod %s's log: %v", target, threads, pod.Name, err)
		return nil
	}
	defer func() { _ = rc.Close() }()
	out, err := sysbench.ParseOutput(io.LimitReader(rc, maxLogBytes))
	if err != nil || len(out.Intervals) == 0 {
		log.Info("per-second series unavailable: no intervals in the step's log", "pod", pod.Name)
		return nil
	}
	encoded, err := report.EncodeSeries(out.Intervals, report.SeriesBudget(run.Spec))
	if err != nil {
		return fmt.Errorf("encode series of %s at %d threads: %w", target, threads, err)
	}
	return r.updateResults(ctx, run, func(data map[string]string) { data[report.SeriesKey(target, threads)] = encoded })
}

// writeResults renders results.json, results.csv and report.md into the results ConfigMap,
// consuming the stored series.
func (r *BenchmarkRunReconciler) writeResults(ctx context.Context, run *v1.BenchmarkRun) error {
	var renderErr error
	err := r.updateResults(ctx, run, func(data map[string]string) {
		rendered, err := report.Render(run, data)
		if err != nil {
			renderErr = err
			return
		}
		clear(data)
		for k, v := range rendered {
			data[k] = v
		}
	})
	if renderErr != nil {
		return fmt.Errorf("render results: %w", renderErr)
	}
	return err
}

// updateResults applies edit to the results ConfigMap, creating it (owned by the run) when missing.
func (r *BenchmarkRunReconciler) updateResults(ctx context.Context, run *v1.BenchmarkRun, edit func(map[string]string)) error {
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: run.Namespace, Name: specs.ResultsConfigMapName(run)}
	err := r.Get(ctx, key, cm)
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{}
		cm.Name, cm.Namespace = key.Name, key.Namespace
		cm.Labels = specs.RunLabels(run)
		cm.Data = map[string]string{}
		edit(cm.Data)
		if err := controllerutil.SetControllerReference(run, cm, r.Scheme); err != nil {
			return err
		}
		if err := r.Create(ctx, cm); err != nil {
			return fmt.Errorf("create results configmap: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get results configmap: %w", err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	edit(cm.Data)
	if err := r.Update(ctx, cm); err != nil {
		return fmt.Errorf("update results configmap: %w", err)
	}
	return nil
}
