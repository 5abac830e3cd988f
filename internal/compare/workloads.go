package compare

import (
	"encoding/json"
	"fmt"
	"strings"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// primaryWorkload is the workload whose client names a run's primary metric: every workload of
// a run uses one client (the API refuses a mix), so the first one's.
func primaryWorkload(run *v1.BenchmarkRun) v1.Workload {
	if ws := run.Spec.OrderedWorkloads(); len(ws) > 0 {
		return ws[0].Workload
	}
	return run.Spec.Workload
}

// workloadsDiffer says why two runs' workloads do not compare, "" when they do. Cells are
// paired by target, workload name and thread count, so a name must mean the same workload on
// both sides: a run of one unnamed spec.workload and a run of named ones share no cell, and a
// name whose definition changed would pair one benchmark's cells with another's. Runs of one
// spec.workload each are compared as they always were.
func workloadsDiffer(run, baseline *v1.BenchmarkRun) string {
	rs, bs := run.Spec.Suite(), baseline.Spec.Suite()
	switch {
	case !rs && !bs:
		return ""
	case rs != bs:
		return fmt.Sprintf("baseline %s measured %s, this run %s: their cells do not compare; compare runs of the same workloads",
			baseline.Name, workloadsText(baseline), workloadsText(run))
	}
	base := map[string]v1.Workload{}
	for _, w := range baseline.Spec.OrderedWorkloads() {
		base[w.Name] = w.Workload
	}
	common := 0
	for _, w := range run.Spec.OrderedWorkloads() {
		b, ok := base[w.Name]
		if !ok {
			continue
		}
		common++
		if !sameWorkload(b, w.Workload) {
			return fmt.Sprintf("workload %s of baseline %s is not this run's workload %s (script, client, data or options differ): "+
				"their cells do not compare; compare runs whose workloads of one name are the same", w.Name, baseline.Name, w.Name)
		}
	}
	if common == 0 {
		return fmt.Sprintf("baseline %s measured %s, this run %s: no workload in common", baseline.Name,
			workloadsText(baseline), workloadsText(run))
	}
	return ""
}

// sameWorkload compares two workloads as the API serializes them, so that an empty list and an
// absent one are the same.
func sameWorkload(a, b v1.Workload) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// workloadsText names a run's workloads: "one spec.workload" or "workloads a, b".
func workloadsText(run *v1.BenchmarkRun) string {
	if !run.Spec.Suite() {
		return "one spec.workload"
	}
	var names []string
	for _, w := range run.Spec.OrderedWorkloads() {
		names = append(names, w.Name)
	}
	return "workloads " + strings.Join(names, ", ")
}
