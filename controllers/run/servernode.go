package run

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/nodeinfo"
)

// recordNode records the node a newly probed server instance runs on (status targets[].node),
// read from the manager's Node cache (the queue watches nodes). Engines that do not know the
// server's pod give no name, and the status then says nothing. A Node that cannot be read (gone
// already, or not in the cache yet) is recorded by name alone: the run measures on regardless,
// and a benchmark is not failed for what it only reports.
func (r *Reconciler) recordNode(ctx context.Context, ts *v1.TargetStatus, name string) {
	if name == "" {
		return
	}
	node := &corev1.Node{}
	if err := r.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		logf.FromContext(ctx).Info("cannot read the node of the server: recording its name only",
			"target", ts.Name, "node", name, "err", err.Error())
		node = &corev1.Node{}
		node.Name = name
	}
	nodeinfo.Record(ts, nodeinfo.Of(node))
}
