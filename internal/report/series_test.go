package report

import (
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

func TestSeriesKey(t *testing.T) {
	valid := regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)
	for _, tc := range []struct {
		target  string
		threads int32
		rep     int32
		want    string
	}{
		{"mysql80", 8, 1, "series.mysql80.t0008.json"},
		{"ps-80-psoff", 1000, 0, "series.ps-80-psoff.t1000.json"},
		{"a", 10000, 1, "series.a.t10000.json"},
		{"mysql80", 8, 2, "series.mysql80.t0008.r02.json"},
		{"mysql80", 8, 10, "series.mysql80.t0008.r10.json"},
	} {
		got := SeriesKey(tc.target, tc.threads, tc.rep)
		if got != tc.want {
			t.Errorf("SeriesKey(%q, %d) = %q, want %q", tc.target, tc.threads, got, tc.want)
		}
		if !valid.MatchString(got) || len(got) > 253 {
			t.Errorf("SeriesKey(%q, %d) = %q is not a valid ConfigMap key", tc.target, tc.threads, got)
		}
	}
}

// relClose accepts the rounding of the encoding: 5 significant digits, at most 3 decimals.
func relClose(got, want float64) bool {
	return math.Abs(got-want) <= math.Max(math.Abs(want)*1e-4, 0.0005)
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	iv := intervalsFixture(300, 16)
	enc, err := EncodeSeries(iv, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	s, err := results.DecodeSeries(enc)
	if err != nil {
		t.Fatal(err)
	}
	if s.BucketSeconds != 1 || s.Intervals != 300 || s.Threads != 16 || s.PointsDropped {
		t.Fatalf("header = %d s buckets, %d intervals, %d threads, dropped %v; want 1, 300, 16, false",
			s.BucketSeconds, s.Intervals, s.Threads, s.PointsDropped)
	}
	if len(s.Time) != 300 {
		t.Fatalf("%d points, want 300", len(s.Time))
	}
	for i, x := range iv {
		// The fixture's values have at most 5 significant digits, so they survive exactly.
		got := []float64{s.Time[i], s.TPS[i], s.QPS[i], s.Read[i], s.Write[i], s.Other[i], s.LatencyMs[i], s.Errors[i], s.Reconnects[i]}
		want := []float64{x.Time, x.TPS, x.QPS, x.ReadQPS, x.WriteQPS, x.OtherQPS, x.LatencyPctMs, x.ErrorsPerSec, x.ReconnectsPerSec}
		for c := range got {
			if !relClose(got[c], want[c]) {
				t.Fatalf("point %d column %d = %v, want %v", i, c, got[c], want[c])
			}
		}
	}
	// Decoding and re-encoding must not drift: a tool that reads a series from results.json and
	// writes it again gets the same bytes, whose size the budget was computed for.
	again, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != enc {
		t.Errorf("re-encoded series differs from the stored one:\n%.200s\n%.200s", again, enc)
	}
	enc2, _ := EncodeSeries(iv, 1<<20)
	if enc2 != enc {
		t.Error("EncodeSeries is not deterministic")
	}
}

// The rounded values print, through encoding/json, as the rounded decimal: 5 significant digits,
// at most 3 decimals (1 for time), nothing JSON cannot carry.
func TestRoundValuePrecision(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		dec  int
		want string
	}{
		{16965.7, 3, "16966"},
		{123456.78, 3, "123460"},
		{0.0712345, 3, "0.071"},
		{1.23456, 3, "1.235"},
		{1000, 3, "1000"},
		{999.99999, 3, "1000"},
		{-2.5, 3, "-2.5"},
		{0.0001, 3, "0"},
		{-0.0001, 3, "0"},
		{math.Copysign(0, -1), 3, "0"},
		{math.NaN(), 3, "0"},
		{math.Inf(1), 3, "0"},
		{math.Inf(-1), 3, "0"},
		{300.04, 1, "300"},
		{12.35, 1, "12.4"},
		{86399.96, 1, "86400"},
	} {
		r := roundValue(tc.v, tc.dec)
		got, err := json.Marshal(r)
		if err != nil {
			t.Errorf("roundValue(%v, %d) = %v does not encode: %v", tc.v, tc.dec, r, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("roundValue(%v, %d) encodes as %s, want %s", tc.v, tc.dec, got, tc.want)
		}
		if again := roundValue(r, tc.dec); again != r || math.Signbit(r) != math.Signbit(again) {
			t.Errorf("rounding %v twice gives %v", r, again)
		}
	}
}

// The layout is formatVersion 1's: field names, their order, and columns omitted when empty.
func TestEncodeSeriesLayout(t *testing.T) {
	iv := []load.Interval{
		{Time: 1.0004, Threads: 4, TPS: 100.123456, QPS: 2000.5, ReadQPS: 1400.25, WriteQPS: 400.125, OtherQPS: 200.125,
			LatencyPctMs: 0.0712345, ErrorsPerSec: math.NaN(), ReconnectsPerSec: math.Copysign(0, -1)},
		{Time: 2, Threads: 4, TPS: 98765.4321, QPS: 1e6 + 0.5, LatencyPctMs: 1.23456, ErrorsPerSec: math.Inf(1)},
	}
	enc, err := EncodeSeries(iv, 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"bucketSeconds":1,"intervals":2,"threads":4,"t":[1,2],"tps":[100.12,98765],"qps":[2000.5,1000000],` +
		`"read":[1400.3,0],"write":[400.13,0],"other":[200.13,0],"latencyMs":[0.071,1.235],"errors":[0,0],"reconnects":[0,0]}`
	if enc != want {
		t.Errorf("encoded\n%s\nwant\n%s", enc, want)
	}

	empty, err := EncodeSeries(nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"bucketSeconds":1,"intervals":0,"threads":0}`; empty != want {
		t.Errorf("empty series = %s, want %s", empty, want)
	}
	dropped, err := EncodeSeries(intervalsFixture(1000, 2), 70)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"bucketSeconds":0,"intervals":1000,"threads":2,"pointsDropped":true}`; dropped != want {
		t.Errorf("series without points = %s, want %s", dropped, want)
	}
}

func TestEncodeSeriesDownsamples(t *testing.T) {
	iv := intervalsFixture(1000, 32)
	full, err := EncodeSeries(iv, 1<<22)
	if err != nil {
		t.Fatal(err)
	}
	for _, budget := range []int{len(full) - 1, len(full) / 2, len(full) / 7, 2000, 600, 300} {
		enc, err := EncodeSeries(iv, budget)
		if err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		if len(enc) > budget {
			t.Errorf("budget %d: encoded %d bytes", budget, len(enc))
		}
		s, err := results.DecodeSeries(enc)
		if err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		k := s.BucketSeconds
		if k < 2 || s.PointsDropped {
			t.Fatalf("budget %d: bucketSeconds %d, pointsDropped %v; want a downsampled series", budget, k, s.PointsDropped)
		}
		// Nothing coarser than needed: one reports smaller buckets would not have fit.
		if smaller, _ := json.Marshal(bucketize(points{iv: iv, per: 1, reports: len(iv)}, k-1)); len(smaller) <= budget {
			t.Errorf("budget %d: chose %d s buckets though %d s fit in %d bytes", budget, k, k-1, len(smaller))
		}
		if want := (len(iv) + k - 1) / k; len(s.Time) != want {
			t.Fatalf("budget %d: %d points, want %d", budget, len(s.Time), want)
		}
		for j := range s.Time {
			lo, hi := j*k, min((j+1)*k, len(iv))
			var tps, lat, rc float64
			for _, x := range iv[lo:hi] {
				tps += x.TPS
				lat += x.LatencyPctMs
				rc += x.ReconnectsPerSec
			}
			n := float64(hi - lo)
			if s.Time[j] != iv[hi-1].Time {
				t.Errorf("budget %d bucket %d: t = %v, want the end of the bucket %v", budget, j, s.Time[j], iv[hi-1].Time)
			}
			if !relClose(s.TPS[j], tps/n) || !relClose(s.LatencyMs[j], lat/n) || !relClose(s.Reconnects[j], rc/n) {
				t.Errorf("budget %d bucket %d: tps %v latency %v reconnects %v, want means %v %v %v",
					budget, j, s.TPS[j], s.LatencyMs[j], s.Reconnects[j], tps/n, lat/n, rc/n)
			}
		}
	}
}

func TestEncodeSeriesSummaryOnlyAndErrors(t *testing.T) {
	iv := intervalsFixture(86400, 1000)
	whole, err := json.Marshal(bucketize(points{iv: iv, per: 1, reports: len(iv)}, len(iv)))
	if err != nil {
		t.Fatal(err)
	}
	oneBucket := len(whole)

	enc, err := EncodeSeries(iv, oneBucket)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := results.DecodeSeries(enc)
	if s.BucketSeconds != 86400 || len(s.Time) != 1 {
		t.Errorf("at the one-bucket size: %d s buckets, %d points; want the whole step as one point", s.BucketSeconds, len(s.Time))
	}

	enc, err = EncodeSeries(iv, oneBucket-1)
	if err != nil {
		t.Fatal(err)
	}
	s, err = results.DecodeSeries(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !s.PointsDropped || len(s.Time) != 0 || s.Intervals != 86400 || s.Threads != 1000 {
		t.Errorf("below one bucket: got %+v, want no points, pointsDropped, 86400 intervals, 1000 threads", s)
	}
	if len(enc) > oneBucket-1 {
		t.Errorf("encoded %d bytes over budget %d", len(enc), oneBucket-1)
	}
	if _, err := EncodeSeries(iv, len(enc)-1); err == nil {
		t.Error("a budget below the smallest form encoded without error")
	}

	empty, err := EncodeSeries(nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := results.DecodeSeries(empty); err != nil || s.BucketSeconds != 1 || s.Intervals != 0 || len(s.Time) != 0 {
		t.Errorf("empty series decoded to %+v, %v", s, err)
	}
}

func TestDecodeSeriesRejects(t *testing.T) {
	for name, in := range map[string]string{
		"not json":        `{"bucketSeconds":1,`,
		"trailing bytes":  `{"bucketSeconds":1,"intervals":0,"threads":1}x`,
		"string in array": `{"bucketSeconds":1,"intervals":1,"threads":1,"t":["1"]}`,
		"short column":    `{"bucketSeconds":1,"intervals":2,"threads":1,"t":[1,2],"tps":[5]}`,
		"long column": `{"bucketSeconds":1,"intervals":1,"threads":1,"t":[1],"tps":[1],"qps":[1,2],"read":[1],` +
			`"write":[1],"other":[1],"latencyMs":[1],"errors":[1],"reconnects":[1]}`,
		"missing column":  `{"bucketSeconds":1,"intervals":1,"threads":1,"t":[1]}`,
		"negative bucket": `{"bucketSeconds":-1,"intervals":0,"threads":1}`,
		"dropped points":  `{"bucketSeconds":0,"intervals":1,"threads":1,"pointsDropped":true,"t":[1],"tps":[1],"qps":[1],"read":[1],"write":[1],"other":[1],"latencyMs":[1],"errors":[1],"reconnects":[1]}`,
	} {
		if _, err := results.DecodeSeries(in); err == nil {
			t.Errorf("%s: decoded without error", name)
		} else if !strings.HasPrefix(err.Error(), "decode series: ") {
			t.Errorf("%s: error %q lacks context", name, err)
		}
	}
}

// A long step at the scale the budget is designed for: encoding must stay quick for the
// controller, which calls it once per finished step.
func BenchmarkEncodeSeries86400(b *testing.B) {
	iv := intervalsFixture(86400, 64)
	for b.Loop() {
		if _, err := EncodeSeries(iv, 4000); err != nil {
			b.Fatal(err)
		}
	}
}

// A series ParseOutput downsampled while reading (points of 4 reports, the last of fewer) is
// encoded as the reports would be: a bucket's value is the mean of its reports, each weighing
// the same, its size counted in reports.
func TestEncodeOutputWeighsPointsByTheirReports(t *testing.T) {
	const per = 4
	raw := intervalsFixture(per*500+3, 16)
	for i := len(raw) - 3; i < len(raw); i++ {
		raw[i].TPS, raw[i].LatencyPctMs = 0, 100 // a last point unlike the others shows its weight
	}
	var out load.Output
	for lo := 0; lo < len(raw); lo += per {
		hi := min(lo+per, len(raw))
		p := raw[hi-1]
		p.TPS, p.LatencyPctMs = 0, 0
		for _, r := range raw[lo:hi] {
			p.TPS += r.TPS / float64(hi-lo)
			p.LatencyPctMs += r.LatencyPctMs / float64(hi-lo)
		}
		out.Intervals = append(out.Intervals, p)
	}
	out.IntervalsPerPoint, out.IntervalReports = per, len(raw)

	for _, budget := range []int{1 << 20, 8000, 3000, 600} {
		enc, err := EncodeOutput(out, budget)
		if err != nil {
			t.Fatal(err)
		}
		s, err := results.DecodeSeries(enc)
		if err != nil {
			t.Fatal(err)
		}
		if s.Intervals != len(raw) || s.BucketSeconds%per != 0 || (budget == 1<<20 && s.BucketSeconds != per) {
			t.Fatalf("budget %d: %d reports in buckets of %d", budget, s.Intervals, s.BucketSeconds)
		}
		for j := range s.Time {
			lo, hi := j*s.BucketSeconds, min((j+1)*s.BucketSeconds, len(raw))
			var tps, lat float64
			for _, r := range raw[lo:hi] {
				tps += r.TPS
				lat += r.LatencyPctMs
			}
			n := float64(hi - lo)
			// Within the encoding's rounding (a half at the 3rd decimal may round either way).
			close := func(got, want float64) bool { return math.Abs(got-want) <= math.Max(math.Abs(want)*1e-4, 0.001) }
			if s.Time[j] != raw[hi-1].Time || !close(s.TPS[j], tps/n) || !close(s.LatencyMs[j], lat/n) {
				t.Errorf("budget %d bucket %d at %v: tps %v latency %v, want at %v the means %v %v",
					budget, j, s.Time[j], s.TPS[j], s.LatencyMs[j], raw[hi-1].Time, tps/n, lat/n)
			}
		}
	}
}
