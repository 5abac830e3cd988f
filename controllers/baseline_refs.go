package controllers

import (
	"fmt"
	"strings"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// A schedule reads its baseline run (its results, for the comparison) and re-measures its servers
// (the confirmation run) on behalf of the schedule's author. The admission policy checked that
// author only for the Secrets and ConfigMaps the schedule's template names; a pinned
// spec.regression.baselineRun may be anyone's run in the namespace. So the operator accepts a
// pinned baseline only when every Secret and ConfigMap it names is named by the template too: a
// run the author could have created with the same references. A run the schedule created itself
// (the default baseline, the previous night) carried the template's references when it was made.

// reference is one Secret or ConfigMap a run spec names, and where.
type reference struct {
	kind, name, where string
}

// specReferences are the Secrets and ConfigMaps spec names: each external target's secretRef and
// the workload's custom script.
func specReferences(spec v1.BenchmarkRunSpec) []reference {
	var refs []reference
	for _, t := range spec.Targets {
		if t.SecretRef != nil && t.SecretRef.Name != "" {
			refs = append(refs, reference{kind: "Secret", name: t.SecretRef.Name, where: fmt.Sprintf("target %s's secretRef", t.Name)})
		}
	}
	if cs := spec.Workload.CustomScript; cs != nil && cs.Name != "" {
		refs = append(refs, reference{kind: "ConfigMap", name: cs.Name, where: "workload.customScript"})
	}
	return refs
}

// baselineRefusal says why baseline may not be the pinned baseline of sched, "" when it may:
// the references it names that the template does not, with what to fix.
func baselineRefusal(sched *v1.BenchmarkSchedule, baseline *v1.BenchmarkRun) string {
	named := map[[2]string]bool{}
	for _, r := range specReferences(sched.Spec.Template.Spec) {
		named[[2]string{r.kind, r.name}] = true
	}
	var foreign []string
	for _, r := range specReferences(baseline.Spec) {
		if !named[[2]string{r.kind, r.name}] {
			foreign = append(foreign, fmt.Sprintf("%s %s (%s)", r.kind, r.name, r.where))
		}
	}
	if len(foreign) == 0 {
		return ""
	}
	return fmt.Sprintf("spec.regression.baselineRun %s names %s, which spec.template does not name: the operator would read and "+
		"re-measure it for this schedule, whose author was checked only for the template's Secrets and ConfigMaps; pin a run "+
		"whose Secrets and ConfigMaps the template names too, or remove baselineRun to compare with the previous run",
		baseline.Name, strings.Join(foreign, ", "))
}

// pinnedBaselineRefusal is baselineRefusal for the baseline of a comparison: only a pinned
// baseline (spec.regression.baselineRun) is checked, as the schedule's own runs carried its
// template's references.
func pinnedBaselineRefusal(sched *v1.BenchmarkSchedule, baseline *v1.BenchmarkRun) string {
	if baseline == nil || sched.Spec.Regression.BaselineRun == "" || baseline.Name != sched.Spec.Regression.BaselineRun {
		return ""
	}
	return baselineRefusal(sched, baseline)
}
