// Package admission finds out whether the admission policy that checks who may name a Secret or
// ConfigMap in a run (config/admission) is in force. It is no reconciler: the manager runs the
// check (a Runnable) and the BenchmarkRun reconciler asks it, through State, when a run starts.
package admission

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// PolicyName names the ValidatingAdmissionPolicy that lets only users who may read a
// Secret or ConfigMap name it in a run (config/admission/policy.yaml). Installed by kustomize or
// the chart, its name carries a prefix (mysqlbench-referenced-objects,
// <namespace>-<release>-referenced-objects): a policy whose name is this or ends in
// "-"+PolicyName counts.
const PolicyName = "referenced-objects"

// DefaultRecheck is how often the manager looks again whether the policy is
// installed: someone may install or remove it while the manager runs.
const DefaultRecheck = 10 * time.Minute

// State says whether the admission policy is in force, for the Event a run gets at its start
// when it is not.
type State interface {
	// Absent says what is missing of the policy and its binding, "" when both are installed or
	// when the manager cannot tell (it then logged why).
	Absent(ctx context.Context) string
}

// Check finds out whether the admission policy and a binding that enforces it are
// installed, at the manager's start and every Interval after (it is a manager Runnable), and logs
// once each time that changes. Without the policy the API server lets anyone who may create or
// update runs name any Secret or ConfigMap of the namespace: the operator's own check (an
// external Secret is used only with the label v1.LabelAllowBenchmark) still holds, but a custom
// script's ConfigMap is mounted whoever named it. Policies and bindings are cluster-scoped and
// their names depend on how the operator was installed, so they are listed, never watched: two
// small lists every Interval, and no cache of them.
type Check struct {
	// Reader lists the policies and bindings (the manager's API reader).
	Reader client.Reader
	// Interval between checks; DefaultRecheck when 0.
	Interval time.Duration
	Log      logr.Logger

	mu      sync.Mutex
	checked bool
	// absent is what the last check found missing, "" when nothing or the check failed.
	absent string
	// failed is the error of the last check, "" when it succeeded.
	failed string
}

var _ State = (*Check)(nil)

// Start checks at once, then every Interval until ctx ends.
func (c *Check) Start(ctx context.Context) error {
	interval := c.Interval
	if interval <= 0 {
		interval = DefaultRecheck
	}
	c.refresh(ctx)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			c.refresh(ctx)
		}
	}
}

// Absent is the last check's finding; before the first check it checks now, so a
// run that starts with the manager is told too.
func (c *Check) Absent(ctx context.Context) string {
	c.mu.Lock()
	checked, absent := c.checked, c.absent
	c.mu.Unlock()
	if !checked {
		return c.refresh(ctx)
	}
	return absent
}

// refresh checks, records the finding, logs it when it changed and returns it.
func (c *Check) refresh(ctx context.Context) string {
	absent, err := c.check(ctx)
	failed := ""
	if err != nil {
		if ctx.Err() != nil {
			// The manager is stopping: nothing was learnt.
			return ""
		}
		failed = err.Error()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := !c.checked || absent != c.absent || failed != c.failed
	c.checked, c.absent, c.failed = true, absent, failed
	if !changed {
		return absent
	}
	switch {
	case failed != "":
		c.Log.Info("cannot tell whether the admission policy is installed: grant the manager list on "+
			"validatingadmissionpolicies and validatingadmissionpolicybindings (config/rbac/manager_cluster_role.yaml)",
			"policy", PolicyName, "err", failed)
	case absent != "":
		c.Log.Info("WARNING: "+absent+": "+Consequence, "policy", PolicyName)
	default:
		c.Log.Info("the admission policy is installed and enforced: who creates or changes a run must be able to read "+
			"the Secrets and ConfigMaps it names", "policy", PolicyName)
	}
	return absent
}

// Consequence is what the absence of the policy means, for the log and Events.
const Consequence = "the API server does not check that who creates or changes a BenchmarkRun or " +
	"BenchmarkSchedule may read the Secrets and ConfigMaps it names. The operator still uses an external target's " +
	"Secret only when it carries the label " + v1.LabelAllowBenchmark + "=" + v1.AllowBenchmark + ", but mounts a " +
	"custom script's ConfigMap whoever named it. Install config/admission (kustomize) or set " +
	"admissionPolicy.enabled=true (Helm), on Kubernetes 1.30 or later; see docs/security.md"

// check lists the policies and bindings and says what is missing, "" when a policy of that name is
// bound with the Deny action.
func (c *Check) check(ctx context.Context) (string, error) {
	// Both lists every time, so that a missing permission on either shows at the first check.
	policies := &admissionregistrationv1.ValidatingAdmissionPolicyList{}
	if err := c.Reader.List(ctx, policies); err != nil {
		return "", fmt.Errorf("list validatingadmissionpolicies: %w", err)
	}
	bindings := &admissionregistrationv1.ValidatingAdmissionPolicyBindingList{}
	if err := c.Reader.List(ctx, bindings); err != nil {
		return "", fmt.Errorf("list validatingadmissionpolicybindings: %w", err)
	}
	var names []string
	for _, p := range policies.Items {
		if p.Name == PolicyName || strings.HasSuffix(p.Name, "-"+PolicyName) {
			names = append(names, p.Name)
		}
	}
	if len(names) == 0 {
		return fmt.Sprintf("no ValidatingAdmissionPolicy %s (or *-%s) is installed", PolicyName, PolicyName), nil
	}
	for _, b := range bindings.Items {
		if slices.Contains(names, b.Spec.PolicyName) && slices.Contains(b.Spec.ValidationActions, admissionregistrationv1.Deny) {
			return "", nil
		}
	}
	return fmt.Sprintf("the ValidatingAdmissionPolicy %s is installed, but no ValidatingAdmissionPolicyBinding "+
		"enforces it (policyName %s, validationActions [Deny])", strings.Join(names, ", "), names[0]), nil
}
