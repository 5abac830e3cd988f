// Package conditions is the one way the operator sets a condition: stamped with the generation it
// was computed from and with the reconciler's injected clock (to the second, like every API
// timestamp), its message bounded to what the API accepts. The types and reasons, and what they
// mean, are declared in api/v1alpha1 (conditions.go).
package conditions

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
)

// Set sets condition typ in conds. lastTransitionTime is now (truncated to the second) when the
// status changes, and kept otherwise; reason, message and observedGeneration are always updated.
// It reports whether anything changed.
func Set(conds *[]metav1.Condition, generation int64, now time.Time, typ string,
	status metav1.ConditionStatus, reason, message string) bool {
	return meta.SetStatusCondition(conds, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             reason,
		Message:            bounded.Head(message, bounded.Condition),
		ObservedGeneration: generation,
		LastTransitionTime: metav1.NewTime(now.Truncate(time.Second)),
	})
}
