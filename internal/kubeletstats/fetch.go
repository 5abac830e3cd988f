package kubeletstats

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"
)

// SummaryFetcher reads one node's kubelet Summary.
type SummaryFetcher interface {
	Summary(ctx context.Context, node string) ([]byte, error)
}

// APIServerProxy reads a node's Summary through the API server's node proxy
// (GET /api/v1/nodes/{node}/proxy/stats/summary), which needs get on nodes/proxy. Only CPU and
// memory are asked for (only_cpu_and_memory=true): the kubelet then skips the filesystem and
// network stats, and the answer is less than half the size.
type APIServerProxy struct {
	// Client is the core/v1 REST client (kubernetes.Clientset.CoreV1().RESTClient()).
	Client rest.Interface
}

// Summary implements SummaryFetcher. An API error keeps its type: apierrors.IsForbidden tells a
// missing permission apart.
func (p APIServerProxy) Summary(ctx context.Context, node string) ([]byte, error) {
	data, err := p.Client.Get().Resource("nodes").Name(node).SubResource("proxy").Suffix("stats", "summary").
		Param("only_cpu_and_memory", "true").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("kubelet stats of node %s: %w", node, err)
	}
	return data, nil
}
