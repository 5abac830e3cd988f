// Package logtest is for tests of what reads a step's log: it synthesizes logs of any size without
// holding them, and measures how much heap a reader keeps while it reads one, so a test can feed
// a parser 64 MiB of hostile lines and assert that its memory stays bounded.
package logtest

import (
	"io"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// Lines is an io.Reader of exactly size bytes: the lines line(0), line(1), ..., each followed by
// a newline, the last one cut at size. It holds one line at a time.
func Lines(size int64, line func(i int) string) io.Reader {
	return &lines{left: size, line: line}
}

type lines struct {
	left int64
	line func(int) string
	i    int
	buf  []byte
}

func (l *lines) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && l.left > 0 {
		if len(l.buf) == 0 {
			l.buf = append(l.buf[:0], l.line(l.i)...)
			l.buf = append(l.buf, '\n')
			l.i++
		}
		c := copy(p[n:], l.buf[:min(int64(len(l.buf)), l.left)])
		l.buf = l.buf[c:]
		n += c
		l.left -= int64(c)
	}
	return n, nil
}

// PeakLive runs read on r and returns the most heap that was live while read consumed r, above
// what was live before: after every step bytes read from r, it collects the garbage and reads
// the live heap. What the reader keeps shows; the garbage it makes and how often the collector
// runs do not, so the figure does not depend on timing.
func PeakLive(r io.Reader, step int64, read func(io.Reader)) uint64 {
	base := live()
	s := &sampled{r: r, step: step, next: step}
	read(s)
	peak := max(s.peak, live())
	if peak < base {
		return 0
	}
	return peak - base
}

type sampled struct {
	r          io.Reader
	read, step int64
	next       int64
	peak       uint64
}

func (s *sampled) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.read += int64(n)
	if s.read >= s.next {
		s.next = s.read + s.step
		s.peak = max(s.peak, live())
	}
	return n, err
}

// live is the heap that survives a collection.
func live() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// PeakInUse runs f and returns the most heap in use (objects, live or not yet collected, and
// the spans' free slots: what the process holds for its heap) sampled every millisecond while
// f ran, above what was in use before, with the collector as configured (GOGC, GOMEMLIMIT). It is
// what a manager needs for the heap while it does f; sampling may miss a short peak.
func PeakInUse(f func()) uint64 {
	runtime.GC()
	base := inUse()
	var peak uint64
	var mu sync.Mutex
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				v := inUse()
				mu.Lock()
				peak = max(peak, v)
				mu.Unlock()
			}
		}
	}()
	f()
	v := inUse()
	close(done)
	<-stopped
	peak = max(peak, v)
	if peak < base {
		return 0
	}
	return peak - base
}

var inUseSamples = []metrics.Sample{
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/heap/unused:bytes"},
}

// inUse is the runtime's HeapInuse, read without stopping the world.
func inUse() uint64 {
	s := make([]metrics.Sample, len(inUseSamples))
	copy(s, inUseSamples)
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64()
}
