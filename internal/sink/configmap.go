package sink

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/owned"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// ComparisonKey is the results ConfigMap key of a run's comparison with its baseline.
const ComparisonKey = "comparison.md"

// ConfigMap writes a run's results ConfigMap, always as the API server has it (the manager's
// cache keeps no ConfigMap data), and only when the run controls it: a ConfigMap of someone else
// under its name is never written, and the error says so (owned's).
type ConfigMap struct {
	// Objects creates and reads the run's objects (its Reader reads from the API server).
	Objects owned.Objects
}

// Empty is an empty results ConfigMap of the run.
func Empty(run *v1.BenchmarkRun) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: specs.ResultsConfigMapName(run), Namespace: run.Namespace, Labels: specs.RunLabels(run)},
		Data:       map[string]string{},
	}
}

// StoreBatch puts a batch of finished steps' keys (their series and server counters) into the
// results ConfigMap with one write, and returns the server-counter keys it left out to keep the
// ConfigMap within its budget (mergeBatch).
func (c ConfigMap) StoreBatch(ctx context.Context, run *v1.BenchmarkRun, batch map[string]string) (left []string, err error) {
	err = c.update(ctx, run, func(data map[string]string) bool {
		var changed bool
		changed, left = mergeBatch(data, batch, report.MaxConfigMapBytes)
		return changed
	})
	return left, err
}

// Write renders results.json, results.csv, report.md (and comparison.md when comparison is not
// empty) from the status and the stored series, and replaces the results ConfigMap's data with
// them in one write. The run's outcome is already in the status, so a repeated call after a
// write that succeeded finds results.json and leaves the ConfigMap alone.
//
// It returns the results.json the ConfigMap holds (for the results database).
func (c ConfigMap) Write(ctx context.Context, run *v1.BenchmarkRun, comparison string) (string, error) {
	var renderErr error
	resultsJSON := ""
	err := c.update(ctx, run, func(data map[string]string) bool {
		if done, ok := data[report.KeyResultsJSON]; ok {
			resultsJSON = done
			return false
		}
		rendered, err := report.Render(run, data)
		if err != nil {
			renderErr = err
			return false
		}
		clear(data)
		for k, v := range rendered {
			data[k] = v
		}
		if comparison != "" {
			data[ComparisonKey] = comparison
		}
		resultsJSON = data[report.KeyResultsJSON]
		return true
	})
	if renderErr != nil {
		return "", fmt.Errorf("render results: %w", renderErr)
	}
	return resultsJSON, err
}

// update applies edit to the results ConfigMap as the API server has it, creating the ConfigMap
// (controlled by the run) when missing; edit says whether it changed anything.
func (c ConfigMap) update(ctx context.Context, run *v1.BenchmarkRun, edit func(map[string]string) bool) error {
	cm := &corev1.ConfigMap{}
	err := owned.Read(ctx, c.Objects, run, client.ObjectKey{Namespace: run.Namespace, Name: specs.ResultsConfigMapName(run)}, cm)
	if apierrors.IsNotFound(err) {
		fresh := Empty(run)
		edit(fresh.Data)
		existing, created, err := owned.Ensure(ctx, c.Objects, run, fresh)
		if err != nil || created {
			return err
		}
		cm = existing // created meanwhile: read by Ensure from the API server
	} else if err != nil {
		return err
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	if !edit(cm.Data) {
		return nil
	}
	if err := c.Objects.Client.Update(ctx, cm); err != nil {
		return fmt.Errorf("update results configmap: %w", err)
	}
	return nil
}

// mergeBatch puts a batch's stored keys into the results ConfigMap's data and says whether that
// changed it, and which server-counter keys it left out. The series go in whatever their size:
// their budget (report.SeriesBudget) makes them fit. The server counters are not budgeted for the
// worst case (a long ladder's do not fit beside the series at all): a key that would take the
// data past limit (the budget Render keeps to) is left out, so that the API server never refuses
// the update (1 MiB) and stalls the run.
func mergeBatch(data, batch map[string]string, limit int) (changed bool, left []string) {
	size := 0
	for k, v := range data {
		size += len(k) + len(v)
	}
	for _, k := range slices.Sorted(maps.Keys(batch)) {
		v := batch[k]
		old, had := data[k]
		if had && old == v {
			continue
		}
		grow := len(v) - len(old)
		if !had {
			grow += len(k)
		}
		if report.IsServerKey(k) && size+grow > limit {
			left = append(left, k)
			continue
		}
		data[k], changed, size = v, true, size+grow
	}
	return changed, left
}

// Doc reads the run's results.json from its results ConfigMap, from the API server; nil when the
// run has none (its results could not be written, or the ConfigMap is gone with a deleted
// namespace): the rows then come from the status alone.
func (c ConfigMap) Doc(ctx context.Context, run *v1.BenchmarkRun) (*results.Doc, error) {
	if run.Status.ResultsConfigMap == "" {
		return nil, nil
	}
	cm := &corev1.ConfigMap{}
	err := c.Objects.Reader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: specs.ResultsConfigMapName(run)}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the results ConfigMap: %w", err)
	}
	if !metav1.IsControlledBy(cm, run) {
		return nil, nil
	}
	raw, ok := cm.Data[report.KeyResultsJSON]
	if !ok {
		return nil, nil
	}
	doc, err := results.Decode([]byte(raw))
	if err != nil {
		// The run's own results, unreadable: its status still holds every step.
		logf.FromContext(ctx).Info("results.json unreadable, storing the run from its status", "error", err.Error())
		return nil, nil
	}
	return doc, nil
}
