package kubeletstats

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseSummary(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "summary-local-cluster.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseSummary(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []ContainerCPU{{
		Namespace: "bench", Pod: "demo-mariadb-0", Container: "mysql",
		Start: time.Date(2026, 11, 23, 21, 30, 2, 0, time.UTC), Time: time.Date(2026, 11, 23, 21, 31, 40, 0, time.UTC),
		UsageCoreNanoSeconds: 12345678901,
	}, {
		Namespace: "bench", Pod: "demo-mariadb-s01-a0-xyz", Container: "sysbench",
		Start: time.Date(2026, 11, 23, 21, 31, 30, 0, time.UTC), Time: time.Date(2026, 11, 23, 21, 31, 41, 0, time.UTC),
		UsageCoreNanoSeconds: 0,
	}}
	if len(got) != len(want) {
		t.Fatalf("got %d containers %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("container %d: got %+v, want %+v", i, got[i], want[i])
		}
	}

	for name, tc := range map[string]struct {
		data    string
		want    int
		wantErr bool
	}{
		"not JSON":                         {data: "<html>", wantErr: true},
		"no pods":                          {data: `{"node":{"nodeName":"n1"}}`},
		"container without cpu":            {data: `{"pods":[{"podRef":{"name":"p","namespace":"n"},"containers":[{"name":"c"}]}]}`},
		"cpu without usage (just started)": {data: `{"pods":[{"podRef":{"name":"p","namespace":"n"},"containers":[{"name":"c","cpu":{"time":"2026-11-23T21:31:40Z"}}]}]}`},
		"usage zero is a usage":            {data: `{"pods":[{"podRef":{"name":"p","namespace":"n"},"containers":[{"name":"c","cpu":{"time":"2026-11-23T21:31:40Z","usageCoreNanoSeconds":0}}]}]}`, want: 1},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseSummary([]byte(tc.data))
			if (err != nil) != tc.wantErr || len(got) != tc.want {
				t.Errorf("got %+v, %v; want %d containers, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestSampleTime(t *testing.T) {
	base := time.Date(2026, 11, 23, 21, 0, 10, 0, time.UTC)
	ms := func(n int) time.Time { return base.Add(time.Duration(n) * time.Millisecond) }
	for name, tc := range map[string]struct {
		sent, received time.Time
		want           time.Time
	}{
		// A fresh reading (CRI stats): within both the kubelet's second and the round trip.
		"fresh, round trip inside the second":    {ms(400), ms(430), ms(415)},
		"fresh, request began the second before": {ms(-200), ms(30), ms(15)},
		"fresh, answer came the second after":    {ms(900), ms(1100), ms(950)},
		// A cached reading (cAdvisor): older than the request; the middle of its second.
		"cached": {ms(5000), ms(5020), ms(500)},
	} {
		t.Run(name, func(t *testing.T) {
			if got := SampleTime(base, tc.sent, tc.received); !got.Equal(tc.want) {
				t.Errorf("got %s, want %s", got.Format(time.RFC3339Nano), tc.want.Format(time.RFC3339Nano))
			}
		})
	}
}

func TestWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 21, 0, 0, 0, time.UTC)
	at := func(s float64) int64 { return t0.Add(time.Duration(s * float64(time.Second))).UnixNano() }
	sample := func(s float64, usageSeconds float64) Sample {
		return Sample{At: at(s), Kubelet: at(s) / 1e9, Usage: uint64(usageSeconds * 1e9), Start: t0.Unix() - 100}
	}
	restarted := sample(6, 0.5)
	restarted.Start = t0.Unix() + 5
	from, to := t0.Add(time.Second), t0.Add(9*time.Second)
	for name, tc := range map[string]struct {
		samples     []Sample
		wantSeconds float64
		wantPerSec  float64
		wantSamples int
		wantMissing string
	}{
		// Usage at 1 s: 10.5 (between 10 at 0 s and 11 at 2 s); at 9 s: 23.5 (between 17 at
		// 8 s and 30 at 10 s): 13 s of CPU over the 8 s window.
		"samples before, inside and after: interpolated to the window's edges": {
			samples:     []Sample{sample(0, 10), sample(2, 11), sample(4, 13), sample(8, 17), sample(10, 30)},
			wantSeconds: 13, wantPerSec: 13.0 / 8, wantSamples: 3,
		},
		"a sample after only: the end interpolated, the start at the first inside": {
			samples:     []Sample{sample(2, 11), sample(4, 13), sample(8, 17), sample(10, 19)},
			wantSeconds: 7, wantPerSec: 1, wantSamples: 3,
		},
		"on the window's edges": {
			samples:     []Sample{sample(1, 1), sample(9, 5)},
			wantSeconds: 4, wantPerSec: 0.5, wantSamples: 2,
		},
		"one sample inside": {
			samples:     []Sample{sample(0, 1), sample(5, 2), sample(10, 3)},
			wantSamples: 1, wantMissing: "1 kubelet sample fell inside the step's 8.0 s, and CPU needs two",
		},
		"none": {
			wantMissing: "0 kubelet samples fell inside the step's 8.0 s, and CPU needs two",
		},
		"all before the step": {
			samples:     []Sample{sample(-5, 1), sample(0, 2)},
			wantMissing: "0 kubelet samples fell inside",
		},
		"duplicate timestamps count once": {
			samples:     []Sample{sample(3, 2), sample(3, 2)},
			wantSamples: 1, wantMissing: "1 kubelet sample fell inside",
		},
		"duplicate timestamps among others": {
			samples:     []Sample{sample(2, 2), sample(2, 2), sample(6, 4)},
			wantSeconds: 2, wantPerSec: 0.5, wantSamples: 2,
		},
		"counter reset (usage went backwards)": {
			samples:     []Sample{sample(2, 20), sample(4, 21), sample(6, 0.5), sample(8, 1.5)},
			wantSamples: 4, wantMissing: "the container restarted during the step",
		},
		"restart seen by its start time, usage higher than before": {
			samples:     []Sample{sample(2, 0.1), func() Sample { s := restarted; s.Usage = 2e9; return s }()},
			wantSamples: 2, wantMissing: "the container restarted during the step",
		},
		"restart before the step does not matter": {
			samples:     []Sample{sample(-3, 50), restarted, func() Sample { s := restarted; s.At, s.Usage = at(8), 2.5e9; return s }()},
			wantSeconds: 2, wantPerSec: 1, wantSamples: 2,
		},
		"idle server": {
			samples:     []Sample{sample(2, 7), sample(4, 7), sample(6, 7)},
			wantSeconds: 0, wantPerSec: 0, wantSamples: 3,
		},
	} {
		t.Run(name, func(t *testing.T) {
			u, missing := Window(tc.samples, from, to)
			if tc.wantMissing != "" {
				if !strings.Contains(missing, tc.wantMissing) {
					t.Errorf("missing %q, want it to say %q", missing, tc.wantMissing)
				}
			} else if missing != "" {
				t.Fatalf("missing %q, want CPU", missing)
			}
			if u.Samples != tc.wantSamples {
				t.Errorf("samples %d, want %d", u.Samples, tc.wantSamples)
			}
			if missing != "" {
				return
			}
			if math.Abs(u.Seconds-tc.wantSeconds) > 1e-9 || math.Abs(u.PerSecond-tc.wantPerSec) > 1e-9 {
				t.Errorf("got %.9f s, %.9f per second; want %v, %v", u.Seconds, u.PerSecond, tc.wantSeconds, tc.wantPerSec)
			}
			if u.From.Before(from) || u.To.After(to) || !u.To.After(u.From) {
				t.Errorf("samples' times %s..%s outside the window or out of order", u.From, u.To)
			}
		})
	}
}

func TestRingKeepsTheNewest(t *testing.T) {
	r := newRing(3)
	if _, ok := r.last(); ok {
		t.Fatal("an empty ring has a last sample")
	}
	for i := int64(1); i <= 5; i++ {
		r.add(Sample{At: i})
	}
	got := r.samples()
	if len(got) != 3 || got[0].At != 3 || got[1].At != 4 || got[2].At != 5 {
		t.Errorf("got %+v, want the samples at 3, 4, 5 in order", got)
	}
	if last, _ := r.last(); last.At != 5 {
		t.Errorf("last %+v, want 5", last)
	}
}
