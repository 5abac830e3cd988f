package kubeletstats

import (
	"fmt"
	"time"
)

// Sample is one distinct kubelet reading of a container's CPU usage. 32 bytes: the ring of a
// container holds Config.Retention / Config.Interval of them.
type Sample struct {
	// At is the reading's time in Unix nanoseconds, as precise as the sampler could make it
	// (SampleTime).
	At int64
	// Kubelet is the time the kubelet gave, Unix seconds (the Summary has whole seconds).
	Kubelet int64
	// Usage is the container's cumulative CPU time in core-nanoseconds.
	Usage uint64
	// Start is the container's start, Unix seconds: another value is another container.
	Start int64
}

// SampleTime is the best estimate of when the kubelet read a container's usage. The Summary
// gives the time cut to the second (kubelet, the reading was in [kubelet, kubelet+1s)); when
// the reading was taken for this request (a CRI stats provider such as containerd's reads the
// cgroup per request, measured on the local cluster), it was also taken between sent and
// received: the middle of both intervals' overlap is then within half a round trip. A reading
// older than the request (cAdvisor's cache, refreshed every 10-15 s) has no overlap and gets
// the middle of its second.
func SampleTime(kubelet, sent, received time.Time) time.Time {
	lo, hi := kubelet, kubelet.Add(time.Second)
	if sent.After(lo) {
		lo = sent
	}
	if received.Before(hi) {
		hi = received
	}
	if hi.Before(lo) {
		return kubelet.Add(time.Second / 2)
	}
	return lo.Add(hi.Sub(lo) / 2)
}

// Usage is a container's CPU time between two samples.
type Usage struct {
	// Seconds is the CPU time between From and To.
	Seconds float64
	// From and To are the window's edges where samples beyond them allowed interpolating to
	// them, else the first and last sample's times inside.
	From, To time.Time
	// Samples is how many distinct samples fell inside the window.
	Samples int
	// PerSecond is Seconds / (To - From): cores busy on average.
	PerSecond float64
}

// Window is the CPU time over [from, to] from samples (oldest first): between the first and the
// last sample inside, each end extended to from or to by linear interpolation when a sample of
// the same container lies beyond it (the sampler polls every few seconds, so one usually does). missing says why there is none, as a sentence fragment about the container:
// fewer than two samples at distinct times inside, or a restart (another container start, or
// usage going backwards: the counter started over) between them.
func Window(samples []Sample, from, to time.Time) (u Usage, missing string) {
	lo, hi := from.UnixNano(), to.UnixNano()
	var in []Sample
	for _, s := range samples {
		if s.At < lo || s.At > hi {
			continue
		}
		if n := len(in); n > 0 && in[n-1].At == s.At {
			continue // the same instant twice: one sample
		}
		in = append(in, s)
	}
	span := to.Sub(from).Seconds()
	if len(in) < 2 {
		return Usage{Samples: len(in)}, fmt.Sprintf("%d kubelet %s fell inside the step's %.1f s, and CPU needs two",
			len(in), plural(len(in), "sample", "samples"), span)
	}
	for i := 1; i < len(in); i++ {
		if in[i].Start != in[0].Start || in[i].Usage < in[i-1].Usage {
			return Usage{Samples: len(in)}, "the container restarted during the step (its CPU counter started over)"
		}
	}
	first, last := in[0], in[len(in)-1]
	// Each end moves out to the window's own edge when a sample of the same container lies
	// beyond it: the usage there is interpolated between that sample and the nearest inside.
	// The CPU is then over exactly the snapshots' interval, the same interval the step's queries
	// were counted over, so CPU per query does not divide a busy stretch's CPU rate by a query
	// rate diluted with the threads' connecting and the client's set-up (review finding).
	fromNs, toNs := float64(first.At), float64(last.At)
	fromUsage, toUsage := float64(first.Usage), float64(last.Usage)
	for i := len(samples) - 1; i >= 0; i-- {
		if p := samples[i]; p.At < lo {
			if p.Start == first.Start && p.Usage <= first.Usage {
				fromUsage = float64(p.Usage) + float64(first.Usage-p.Usage)*float64(lo-p.At)/float64(first.At-p.At)
				fromNs = float64(lo)
			}
			break
		}
	}
	for _, n := range samples {
		if n.At > hi {
			if n.Start == last.Start && n.Usage >= last.Usage {
				toUsage = float64(last.Usage) + float64(n.Usage-last.Usage)*float64(hi-last.At)/float64(n.At-last.At)
				toNs = float64(hi)
			}
			break
		}
	}
	u = Usage{
		Seconds: (toUsage - fromUsage) / 1e9,
		From:    time.Unix(0, int64(fromNs)),
		To:      time.Unix(0, int64(toNs)),
		Samples: len(in),
	}
	u.PerSecond = u.Seconds / u.To.Sub(u.From).Seconds()
	return u, ""
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ring keeps a container's last samples, oldest overwritten first; its capacity is fixed when
// it is made, so a container's memory is bounded whatever the sampler runs into.
type ring struct {
	buf  []Sample
	head int // index of the oldest sample
	n    int
}

func newRing(capacity int) *ring { return &ring{buf: make([]Sample, capacity)} }

func (r *ring) add(s Sample) {
	if r.n < len(r.buf) {
		r.buf[(r.head+r.n)%len(r.buf)] = s
		r.n++
		return
	}
	r.buf[r.head] = s
	r.head = (r.head + 1) % len(r.buf)
}

func (r *ring) last() (Sample, bool) {
	if r.n == 0 {
		return Sample{}, false
	}
	return r.buf[(r.head+r.n-1)%len(r.buf)], true
}

// samples are the samples oldest first, a copy.
func (r *ring) samples() []Sample {
	out := make([]Sample, r.n)
	for i := range out {
		out[i] = r.buf[(r.head+i)%len(r.buf)]
	}
	return out
}
