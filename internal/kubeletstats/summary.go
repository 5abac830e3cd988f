package kubeletstats

import (
	"encoding/json"
	"fmt"
	"time"
)

// summary is the part of the kubelet's Summary API (GET /stats/summary, k8s.io/kubelet's
// stats/v1alpha1 Summary) the sampler reads: each pod's containers' cumulative CPU usage with
// the time the kubelet took it.
type summary struct {
	Node struct {
		NodeName string `json:"nodeName"`
	} `json:"node"`
	Pods []struct {
		PodRef struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"podRef"`
		Containers []struct {
			Name      string    `json:"name"`
			StartTime time.Time `json:"startTime"`
			CPU       *struct {
				Time                 time.Time `json:"time"`
				UsageCoreNanoSeconds *uint64   `json:"usageCoreNanoSeconds"`
			} `json:"cpu"`
		} `json:"containers"`
	} `json:"pods"`
}

// ContainerCPU is one container's cumulative CPU usage as one Summary reported it.
type ContainerCPU struct {
	Namespace, Pod, Container string
	// Start is when the container started; another start is another container (a restart), whose
	// usage counts from zero.
	Start time.Time
	// Time is when the kubelet read the usage. The Summary gives it in whole seconds (RFC 3339),
	// cut, not rounded: the reading was taken in [Time, Time+1s).
	Time time.Time
	// UsageCoreNanoSeconds is the container cgroup's CPU time since the container started.
	UsageCoreNanoSeconds uint64
}

// ParseSummary reads the containers' CPU usage out of a Summary. Containers without CPU stats
// (the kubelet has none yet for a container that just started) are left out.
func ParseSummary(data []byte) ([]ContainerCPU, error) {
	var s summary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("decode kubelet stats summary: %w", err)
	}
	var out []ContainerCPU
	for _, p := range s.Pods {
		for _, c := range p.Containers {
			if c.CPU == nil || c.CPU.UsageCoreNanoSeconds == nil || c.CPU.Time.IsZero() {
				continue
			}
			out = append(out, ContainerCPU{
				Namespace: p.PodRef.Namespace, Pod: p.PodRef.Name, Container: c.Name,
				Start: c.StartTime, Time: c.CPU.Time, UsageCoreNanoSeconds: *c.CPU.UsageCoreNanoSeconds,
			})
		}
	}
	return out, nil
}
