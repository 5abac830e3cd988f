// Package warnings reads what a pod's or a controller's status does not say: why a StatefulSet
// or a Job cannot create its pod (a quota, an admission policy) and why a pod cannot start its
// containers (a volume that cannot be mounted), from the newest Warning Event about it. The
// BenchmarkRun reconciler quotes it when a server or a step's pod does not start.
package warnings

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
)

// Newest is the newest Warning Event about the object with uid ("FailedMount: ..."), ""
// when there is none. Events say what pod and controller status do not: why a StatefulSet or a
// Job cannot create its pod (a quota, an admission policy) and why a pod cannot start its
// containers (a volume that cannot be mounted).
func Newest(ctx context.Context, reader client.Reader, namespace string, uid types.UID) (string, error) {
	events := &corev1.EventList{}
	if err := reader.List(ctx, events, client.InNamespace(namespace),
		client.MatchingFields{"involvedObject.uid": string(uid), "type": corev1.EventTypeWarning}); err != nil {
		return "", fmt.Errorf("list events: %w", err)
	}
	var newest *corev1.Event
	var newestAt time.Time
	for i := range events.Items {
		e := &events.Items[i]
		at := eventTime(e)
		if newest == nil || at.After(newestAt) {
			newest, newestAt = e, at
		}
	}
	if newest == nil {
		return "", nil
	}
	return bounded.Head(newest.Reason+": "+newest.Message, bounded.Status), nil
}

// eventTime is when an Event last happened, whichever API wrote it.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}
