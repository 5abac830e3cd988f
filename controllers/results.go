package controllers

import (
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/owned"
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

func (r *BenchmarkRunReconciler) objects() owned.Objects {
	return owned.Objects{Client: r.kubeClient, Reader: r.apiReader(), Scheme: r.scheme}
}

// ensureRunObjects creates the ConfigMaps every target uses, or confirms that the run controls
// them: the Lua reporter every sysbench Job executes (with the database's credentials at hand),
// and the results ConfigMap the steps are stored in. An object of someone else
// under either name is an *owned.ForeignError, one the API server refuses an
// *engine.ConfigError.
func (r *BenchmarkRunReconciler) ensureRunObjects(ctx context.Context, run *v1.BenchmarkRun) error {
	reporter := specs.ReporterConfigMap(run)
	// Nobody changes the script once it is created, the operator included: what a Job mounts is
	// what the operator wrote (reporterCheck verifies it all the same).
	reporter.Immutable = ptr.To(true)
	for _, obj := range []client.Object{reporter, resultsConfigMap(run)} {
		if _, _, err := owned.Ensure(ctx, r.objects(), run, obj); err != nil {
			if engine.IsPermanentAPIError(err) {
				return engine.Rejected(obj, err)
			}
			return err
		}
	}
	return nil
}

// reporterCheck reads the reporter ConfigMap from the API server right before a Job that executes
// it is created, and says whether the Job may: the run controls it and it holds exactly what the
// operator writes. An owner reference can be forged by anyone who may create ConfigMaps, so the
// content is checked too (every key, since the volume mounts them all); a changed one is an
// *engine.ConfigError naming the ConfigMap.
func (r *BenchmarkRunReconciler) reporterCheck(ctx context.Context, run *v1.BenchmarkRun) error {
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: run.Namespace, Name: specs.ReporterConfigMapName(run)}
	err := owned.Read(ctx, r.objects(), run, key, cm)
	if apierrors.IsNotFound(err) {
		// Deleted since ensureRunObjects saw it: the next reconcile creates it again.
		return fmt.Errorf("reporter ConfigMap %s/%s is gone", key.Namespace, key.Name)
	}
	if err != nil {
		return err
	}
	want := specs.ReporterConfigMap(run)
	if !equality.Semantic.DeepEqual(cm.Data, want.Data) || !equality.Semantic.DeepEqual(cm.BinaryData, want.BinaryData) {
		return &engine.ConfigError{Message: fmt.Sprintf("ConfigMap %s/%s, the reporter every sysbench Job of this run "+
			"executes, does not hold exactly the operator's script (it was changed, or replaced by one that claims to "+
			"belong to the run), so no Job runs it: delete it (the operator writes it again for the run's remaining "+
			"targets) and find out who changed it", key.Namespace, key.Name)}
	}
	return nil
}

// resultsConfigMap is an empty results ConfigMap of the run.
func resultsConfigMap(run *v1.BenchmarkRun) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: specs.ResultsConfigMapName(run), Namespace: run.Namespace, Labels: specs.RunLabels(run)},
		Data:       map[string]string{},
	}
}

// storeSeries reads a finished step's per-second series from its pod's log and stores it,
// compacted to its share of the ConfigMap budget, in the results ConfigMap under the step's key.
// Storing the same step twice writes the same bytes. A log that cannot be read (the pod is gone,
// the node is unreachable) costs the series, never the step: the step's numbers come from the
// termination message, and an Event says what is missing.
func (r *BenchmarkRunReconciler) storeSeries(ctx context.Context, run *v1.BenchmarkRun, target string, threads, rep int32, pod *corev1.Pod) error {
	log := logf.FromContext(ctx)
	if pod == nil {
		return nil
	}
	rc, err := r.logs.Logs(ctx, pod.Namespace, pod.Name, specs.SysbenchContainer)
	if err != nil {
		log.Info("per-second series unavailable: cannot read the step's log", "pod", pod.Name, "err", err.Error())
		r.recorder.Eventf(run, warning, "SeriesUnavailable", "target %s, %d threads: cannot read pod %s's log: %v", target, threads, pod.Name, err)
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
	return r.updateResults(ctx, run, func(data map[string]string) { data[report.SeriesKey(target, threads, rep)] = encoded })
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

// updateResults applies edit to the results ConfigMap, creating it (controlled by the run) when
// missing. A ConfigMap under its name that the run does not control is never written: the error
// is owned's.
func (r *BenchmarkRunReconciler) updateResults(ctx context.Context, run *v1.BenchmarkRun, edit func(map[string]string)) error {
	cm := &corev1.ConfigMap{}
	err := owned.Get(ctx, r.objects(), run, client.ObjectKey{Namespace: run.Namespace, Name: specs.ResultsConfigMapName(run)}, cm)
	if apierrors.IsNotFound(err) {
		fresh := resultsConfigMap(run)
		edit(fresh.Data)
		existing, created, err := owned.Ensure(ctx, r.objects(), run, fresh)
		if err != nil || created {
			return err
		}
		cm = existing // the run's own, which the cache had not seen yet
	} else if err != nil {
		return err
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
