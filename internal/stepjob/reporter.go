package stepjob

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/owned"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// Reporter is the run's reporter ConfigMap, the Lua script every client Job executes, as the
// operator creates it. Nobody changes the script once it is created, the operator included: what a
// Job mounts is what the operator wrote (CheckReporter verifies it all the same).
func Reporter(run *v1.BenchmarkRun) *corev1.ConfigMap {
	reporter := specs.ReporterConfigMap(run)
	reporter.Immutable = ptr.To(true)
	return reporter
}

// CheckReporter reads the reporter ConfigMap from the API server right before a Job that executes
// it is created, and says whether the Job may: the run controls it and it holds exactly what the
// operator writes. An owner reference can be forged by anyone who may create ConfigMaps, so the
// content is checked too (every key, since the volume mounts them all); a changed one is an
// *engine.ConfigError naming the ConfigMap.
func (j Jobs) CheckReporter(ctx context.Context, run *v1.BenchmarkRun) error {
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: run.Namespace, Name: specs.ReporterConfigMapName(run)}
	err := owned.Read(ctx, j.Objects, run, key, cm)
	if apierrors.IsNotFound(err) {
		// Deleted since it was created: the next reconcile creates it again.
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
