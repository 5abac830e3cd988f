package run

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/owned"
	"github.com/mysqlbench/mysqlbench-operator/internal/sink"
	"github.com/mysqlbench/mysqlbench-operator/internal/stepjob"
)

func (r *Reconciler) objects() owned.Objects {
	return owned.Objects{Client: r.kubeClient, Reader: r.apiReader(), Scheme: r.scheme}
}

// jobs reads and deletes the run's step Jobs.
func (r *Reconciler) jobs() stepjob.Jobs {
	return stepjob.Jobs{Objects: r.objects(), Clock: r.clock, Logs: r.logs, CPU: r.CPU}
}

// releaseJobs stores the series of the target's finished steps and deletes their Jobs
// (stepjob.Jobs.Release): at once when all is set, else once a batch of them waits.
func (r *Reconciler) releaseJobs(ctx context.Context, tx *transition, t v1.Target, ts *v1.TargetStatus, all bool) error {
	events, err := r.jobs().Release(ctx, tx.run, t, ts, all)
	tx.record(events...)
	return err
}

// resultsConfigMap writes and reads the run's results ConfigMap.
func (r *Reconciler) resultsConfigMap() sink.ConfigMap {
	return sink.ConfigMap{Objects: r.objects()}
}

// ensureRunObjects creates the ConfigMaps every target uses, or confirms that the run controls
// them: the Lua reporter every sysbench Job executes (with the database's credentials at hand),
// and the results ConfigMap the steps are stored in.
func (r *Reconciler) ensureRunObjects(ctx context.Context, run *v1.BenchmarkRun) error {
	return r.ensure(ctx, run, stepjob.Reporter(run), sink.Empty(run))
}

// ensure creates the run's objects objs, or confirms that the run controls them. An object of
// someone else under the name of one is an *owned.ForeignError, one the API server refuses for
// good an *engine.ConfigError.
func (r *Reconciler) ensure(ctx context.Context, run *v1.BenchmarkRun, objs ...client.Object) error {
	for _, obj := range objs {
		if _, _, err := owned.Ensure(ctx, r.objects(), run, obj); err != nil {
			if engine.IsPermanentAPIError(err) {
				return engine.Rejected(obj, err)
			}
			return err
		}
	}
	return nil
}
