// Package report renders a BenchmarkRun's results into the data of its "<run>-results"
// ConfigMap: results.json, results.csv and report.md. It also encodes the per-second series of
// each finished step compactly, so the controller can keep them in that ConfigMap while the run
// goes on. Everything here is a pure function of its arguments: no client, no clock.
package report

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// SeriesKey is the ConfigMap data key a step's series is stored under while the run goes on, e.g.
// "series.mysql80.t0008.json", or "series.mysql80.t0008.r02.json" for repetition 2. Target names
// are DNS labels, so the key only holds valid ConfigMap key characters; the zero-padded thread
// count makes keys sort in ladder order.
func SeriesKey(target string, threads, rep int32) string {
	if rep <= 1 {
		return fmt.Sprintf("%s%s.t%04d.json", seriesKeyPrefix, target, threads)
	}
	return fmt.Sprintf("%s%s.t%04d.r%02d.json", seriesKeyPrefix, target, threads, rep)
}

const seriesKeyPrefix = "series."

// Precision of the encoded series. Sysbench reports rates with 2 decimals and latency with 3;
// five significant digits keep every realistic rate to within 0.005%, far below the run-to-run
// noise of a benchmark, while an averaged value does not print 17 digits.
const (
	sigDigits        = 5
	maxValueDecimals = 3
	maxTimeDecimals  = 1
)

// EncodeSeries turns a step's intervals, one per report, into JSON of at most budget bytes. When
// the full per-second series is too large it averages consecutive intervals into buckets of k
// reports (2, 3, ...), using the smallest k a bisection finds to fit. When even a single bucket
// holding the whole step does not fit, it returns a series with PointsDropped set and no points:
// the step's summary numbers in status are then all that is kept. It fails only when the budget
// cannot hold even that. The output depends only on the arguments.
func EncodeSeries(intervals []load.Interval, budget int) (string, error) {
	return encodePoints(points{iv: intervals, per: 1, reports: len(intervals)}, budget)
}

// EncodeOutput is EncodeSeries for the series ParseOutput read, which it downsampled while
// reading when the output held more than load.MaxIntervals reports: a bucket of k of its
// points then averages k x IntervalsPerPoint reports, each report weighing the same.
func EncodeOutput(out load.Output, budget int) (string, error) {
	p := points{iv: out.Intervals, per: max(out.IntervalsPerPoint, 1), reports: out.IntervalReports}
	if p.reports == 0 {
		p.reports = len(p.iv)
	}
	return encodePoints(p, budget)
}

// points are a series' points, each the mean of per reports but the last, which holds the
// reports that are left of reports (per at most).
type points struct {
	iv      []load.Interval
	per     int
	reports int
}

// weight is how many reports point i averages.
func (p points) weight(i int) float64 {
	if i == len(p.iv)-1 {
		return float64(p.reports - (len(p.iv)-1)*p.per)
	}
	return float64(p.per)
}

func encodePoints(p points, budget int) (string, error) {
	n := len(p.iv)
	if n == 0 {
		return fitOrFail(results.Series{BucketSeconds: 1}, budget)
	}
	encode := func(k int) ([]byte, error) { return json.Marshal(bucketize(p, k)) }

	full, err := encode(1)
	if err != nil {
		return "", fmt.Errorf("encode series: %w", err)
	}
	if len(full) <= budget {
		return string(full), nil
	}
	// The size shrinks about in proportion to the number of buckets, so the ratio is a good first
	// guess; doubling from there finds a bucket size that fits without encoding every candidate.
	lo, hi := 1, 0 // lo never fits, hi fits (0: none found yet)
	var best []byte
	for k := min(n, max(2, ceilDiv(len(full), budget))); ; k = min(n, 2*k) {
		b, err := encode(k)
		if err != nil {
			return "", fmt.Errorf("encode series: %w", err)
		}
		if len(b) <= budget {
			hi, best = k, b
			break
		}
		lo = k
		if k == n {
			break
		}
	}
	if hi == 0 {
		s := results.Series{Intervals: p.reports, Threads: p.iv[0].Threads, PointsDropped: true}
		return fitOrFail(s, budget)
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		b, err := encode(mid)
		if err != nil {
			return "", fmt.Errorf("encode series: %w", err)
		}
		if len(b) <= budget {
			hi, best = mid, b
		} else {
			lo = mid
		}
	}
	return string(best), nil
}

// fitOrFail encodes a series without points, or says the budget cannot hold even that.
func fitOrFail(s results.Series, budget int) (string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode series: %w", err)
	}
	if len(b) > budget {
		return "", fmt.Errorf("series budget of %d bytes is too small: even a series without points takes %d", budget, len(b))
	}
	return string(b), nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// bucketize averages runs of k consecutive points and rounds the results (see roundValue).
// Sysbench reports at a fixed interval, so the plain mean of the rates over a bucket's reports is
// the rate over the bucket: each point weighs the reports it averages.
func bucketize(p points, k int) results.Series {
	iv := p.iv
	n := len(iv)
	m := ceilDiv(n, k)
	s := results.Series{
		BucketSeconds: k * p.per,
		Intervals:     p.reports,
		Threads:       iv[0].Threads,
		Time:          make([]float64, m),
		TPS:           make([]float64, m),
		QPS:           make([]float64, m),
		Read:          make([]float64, m),
		Write:         make([]float64, m),
		Other:         make([]float64, m),
		LatencyMs:     make([]float64, m),
		Errors:        make([]float64, m),
		Reconnects:    make([]float64, m),
	}
	for j := range m {
		lo, hi := j*k, min((j+1)*k, n)
		var tps, qps, rd, wr, ot, lat, er, rc, c float64
		for i := lo; i < hi; i++ {
			x, w := iv[i], p.weight(i)
			tps += w * x.TPS
			qps += w * x.QPS
			rd += w * x.ReadQPS
			wr += w * x.WriteQPS
			ot += w * x.OtherQPS
			lat += w * x.LatencyPctMs
			er += w * x.ErrorsPerSec
			rc += w * x.ReconnectsPerSec
			c += w
		}
		s.Time[j] = roundValue(iv[hi-1].Time, maxTimeDecimals)
		s.TPS[j] = roundValue(tps/c, maxValueDecimals)
		s.QPS[j] = roundValue(qps/c, maxValueDecimals)
		s.Read[j] = roundValue(rd/c, maxValueDecimals)
		s.Write[j] = roundValue(wr/c, maxValueDecimals)
		s.Other[j] = roundValue(ot/c, maxValueDecimals)
		s.LatencyMs[j] = roundValue(lat/c, maxValueDecimals)
		s.Errors[j] = roundValue(er/c, maxValueDecimals)
		s.Reconnects[j] = roundValue(rc/c, maxValueDecimals)
	}
	return s
}

// roundValue rounds v to sigDigits significant digits and at most maxDecimals decimals, so that
// encoding/json prints the rounded decimal and not 17 digits. Rounding goes through an exact power
// of ten so that the shortest representation strconv prints (which encoding/json uses) is the
// rounded decimal itself (0.071, not 0.07100000000000001), and rounding an already rounded value
// changes nothing, so decoding and re-encoding is stable. NaN and infinities, which JSON cannot
// carry, become 0, and so does -0, which encoding/json would print as "-0".
func roundValue(v float64, maxDecimals int) float64 {
	return roundSig(v, sigDigits, maxDecimals)
}

// roundSig is roundValue with sig significant digits.
func roundSig(v float64, sig, maxDecimals int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	d := min(sig-1-decimalExponent(math.Abs(v)), maxDecimals)
	if d >= 0 {
		p := math.Pow10(d)
		v = math.Round(v*p) / p
	} else {
		p := math.Pow10(-d)
		v = math.Round(v/p) * p
	}
	if v == 0 { // also turns -0 into 0
		return 0
	}
	return v
}

// decimalExponent returns e with 10^e <= a < 10^(e+1) for a > 0. math.Log10 alone can be off by
// one at exact powers of ten (Log10(1000) is 2.9999999999999996), hence the correction.
func decimalExponent(a float64) int {
	e := int(math.Floor(math.Log10(a)))
	if math.Pow10(e+1) <= a {
		e++
	} else if math.Pow10(e) > a {
		e--
	}
	return e
}
