// Package format is how report.md and results.csv write numbers and text, for the report and for
// the clients that add their own sections and columns to it (internal/client).
package format

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// Seconds writes a duration the way benchmark reports do ("300 s"), falling back to Go's form
// for fractions, which the API allows in its pattern.
func Seconds(s float64) string {
	if s == float64(int64(s)) {
		return strconv.FormatInt(int64(s), 10) + " s"
	}
	return time.Duration(s * float64(time.Second)).String()
}

// GroupDigits writes 1000000 as 1,000,000: row counts are read at a glance.
func GroupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Readable writes a measurement for people: three significant digits below 100 (0.103, 1.23,
// 12.3 ms), whole numbers with thousands separators from there (123, 12,345 QPS). The repetitions
// of a step differ by about a percent, so further digits are noise; results.json and results.csv
// keep every digit.
func Readable(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	// Round to three significant digits first, so 99.96 becomes 100, not "100.0".
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'e', 2, 64), 64)
	if math.Abs(r) >= 100 {
		return GroupDigits(int64(math.Round(v)))
	}
	decimals := 2 - int(math.Floor(math.Log10(math.Abs(r))))
	return strconv.FormatFloat(r, 'f', decimals, 64)
}

// MDText makes free text (messages, versions) safe for one Markdown line: newlines would end the
// list item, and characters such as * _ ` | < would start formatting or HTML.
func MDText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_[]<>|", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// CSVFloat writes a number of results.csv exactly as status holds it.
func CSVFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// MetricColumns are a cell statistic's median, interval, cv, min and max in results.csv.
func MetricColumns(m v1alpha1.MetricStats) []string {
	return []string{CSVFloat(m.Median), CSVFloat(m.CILow), CSVFloat(m.CIHigh), CSVFloat(m.CV), CSVFloat(m.Min), CSVFloat(m.Max)}
}
