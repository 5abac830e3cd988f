package scheduled

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	loadclient "github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
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

// PinnedBaselineRefusal is baselineRefusal for the baseline of a comparison: only a pinned
// baseline (spec.regression.baselineRun) is checked, as the schedule's own runs carried its
// template's references.
func PinnedBaselineRefusal(sched *v1.BenchmarkSchedule, baseline *v1.BenchmarkRun) string {
	if baseline == nil || sched.Spec.Regression.BaselineRun == "" || baseline.Name != sched.Spec.Regression.BaselineRun {
		return ""
	}
	return baselineRefusal(sched, baseline)
}

// Schedule is the BenchmarkSchedule that controls run, or nil.
func Schedule(ctx context.Context, c client.Reader, run *v1.BenchmarkRun) (*v1.BenchmarkSchedule, error) {
	owner := metav1.GetControllerOf(run)
	if owner == nil || owner.Kind != "BenchmarkSchedule" || owner.APIVersion != v1.GroupVersion.String() {
		return nil, nil
	}
	sched := &v1.BenchmarkSchedule{}
	err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: owner.Name}, sched)
	if apierrors.IsNotFound(err) || (err == nil && sched.UID != owner.UID) {
		return nil, nil // deleted: the run goes with it
	}
	if err != nil {
		return nil, fmt.Errorf("get schedule %s: %w", owner.Name, err)
	}
	return sched, nil
}

// Baseline is the run to compare with: the pinned one (which must exist and have succeeded), or
// the newest successful run of the schedule scheduled before run with the same client (sysbench or
// mysqlslap: their QPS differ by definition); nil for the first. A missing
// pinned baseline is a NoBaseline verdict whose note says why.
func Baseline(ctx context.Context, c client.Reader, sched *v1.BenchmarkSchedule, run *v1.BenchmarkRun) (*v1.BenchmarkRun, string, error) {
	if name := sched.Spec.Regression.BaselineRun; name != "" {
		pinned := &v1.BenchmarkRun{}
		err := c.Get(ctx, client.ObjectKey{Namespace: sched.Namespace, Name: name}, pinned)
		switch {
		case apierrors.IsNotFound(err):
			return nil, fmt.Sprintf("no baseline: spec.regression.baselineRun %s does not exist in namespace %s: fix the name or remove it to compare with the previous run",
				name, sched.Namespace), nil
		case err != nil:
			return nil, "", fmt.Errorf("get baseline run %s: %w", name, err)
		case pinned.Status.Phase != v1.RunSucceeded:
			return nil, fmt.Sprintf("no baseline: spec.regression.baselineRun %s has not succeeded (phase %q): pin a successful run",
				name, pinned.Status.Phase), nil
		}
		return pinned, "", nil
	}
	list := &v1.BenchmarkRunList{}
	if err := c.List(ctx, list, client.InNamespace(sched.Namespace), client.MatchingLabels{v1.LabelSchedule: sched.Name}); err != nil {
		return nil, "", fmt.Errorf("list runs of schedule %s: %w", sched.Name, err)
	}
	at := Time(run)
	var newest *v1.BenchmarkRun
	var newestAt time.Time
	for i := range list.Items {
		other := &list.Items[i]
		if other.Name == run.Name || other.Status.Phase != v1.RunSucceeded || !metav1.IsControlledBy(other, sched) {
			continue
		}
		if loadclient.For(other.Spec.Workload).Name() != loadclient.For(run.Spec.Workload).Name() {
			// sysbench's QPS and mysqlslap's are defined differently: a schedule switched from
			// one to the other starts a new baseline, not a false regression (review finding).
			continue
		}
		t := Time(other)
		if t.After(at) || (t.Equal(at) && other.Name > run.Name) {
			continue // scheduled after this run
		}
		if newest == nil || t.After(newestAt) || (t.Equal(newestAt) && other.Name > newest.Name) {
			newest, newestAt = other, t
		}
	}
	return newest, "", nil
}

// History are the schedule's successful runs before run (its between-run noise, see
// compare.Options).
func History(ctx context.Context, c client.Reader, sched *v1.BenchmarkSchedule, run *v1.BenchmarkRun) ([]*v1.BenchmarkRun, error) {
	list := &v1.BenchmarkRunList{}
	if err := c.List(ctx, list, client.InNamespace(sched.Namespace), client.MatchingLabels{v1.LabelSchedule: sched.Name}); err != nil {
		return nil, fmt.Errorf("list runs of schedule %s: %w", sched.Name, err)
	}
	runs := make([]*v1.BenchmarkRun, 0, len(list.Items))
	for i := range list.Items {
		runs = append(runs, &list.Items[i])
	}
	return compare.HistoryOf(run, runs), nil
}

// Markdown is comparison.md for the comparison in run's status: the full table when
// its baseline can still be read, else the summary alone (the baseline was deleted since).
func Markdown(ctx context.Context, c client.Reader, run *v1.BenchmarkRun) string {
	summary := *run.Status.Comparison
	if summary.Baseline != "" {
		baseline := &v1.BenchmarkRun{}
		if sched, err := Schedule(ctx, c, run); err == nil && sched != nil &&
			c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: summary.Baseline}, baseline) == nil {
			hist, _ := History(ctx, c, sched, run) // without it the verdict may differ: then the summary alone
			res := compare.CompareWith(run, baseline, sched.Spec.Regression, compare.Options{History: hist})
			if res.Summary.Verdict == summary.Verdict && res.Summary.RegressedCells == summary.RegressedCells {
				res.Summary = summary
				md := compare.Markdown(res)
				if left := LeftOut(run, baseline); left != "" {
					md += "\nNot compared: " + left + ".\n"
				}
				return md
			}
		}
	}
	return compare.Markdown(compare.Result{Summary: summary})
}

// maxLeftOut is how many left-out steps a comparison's message names.
const maxLeftOut = 5

// LeftOut names the steps of run and baseline that the comparison left out because they ran
// past their duration (StepResult.OverDuration: not samples of their cells, see cells.Comparable),
// "" when there are none. Their cells compare fewer repetitions, or are missing from the
// comparison, and its message says why.
func LeftOut(run, baseline *v1.BenchmarkRun) string {
	var names []string
	for _, r := range []*v1.BenchmarkRun{run, baseline} {
		if r == nil {
			continue
		}
		of := "this run"
		if r != run {
			of = "baseline " + r.Name
		}
		for _, ts := range r.Status.Targets {
			for _, s := range ts.Steps {
				if !s.OverDuration {
					continue
				}
				name := fmt.Sprintf("%s@%d", compare.Label(ts.Name, s.Workload), s.Threads)
				if s.Repetition > 0 {
					name += fmt.Sprintf(" repetition %d", s.Repetition)
				}
				names = append(names, fmt.Sprintf("%s of %s (%.3f s)", name, of, s.DurationSeconds))
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	total, more := len(names), ""
	if total > maxLeftOut {
		more = fmt.Sprintf(" and %d more", total-maxLeftOut)
		names = names[:maxLeftOut]
	}
	return fmt.Sprintf("%d step(s) left out, as they ran past their duration: %s%s", total, strings.Join(names, ", "), more)
}
