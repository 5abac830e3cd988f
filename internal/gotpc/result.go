package gotpc

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Transaction types of TPC-C as go-tpc names them in its output; a failed transaction is counted
// under the name with ErrSuffix.
const (
	NewOrder    = "NEW_ORDER"
	Payment     = "PAYMENT"
	OrderStatus = "ORDER_STATUS"
	Delivery    = "DELIVERY"
	StockLevel  = "STOCK_LEVEL"
	ErrSuffix   = "_ERR"
)

// Stats are one line of go-tpc's latency histogram output for one transaction type:
//
//	[Summary] NEW_ORDER - Takes(s): 6.0, Count: 2227, TPM: 22316.9, Sum(ms): 6684.9, Avg(ms): 3.0, 50th(ms): 2.6, ...
//
// Takes is the seconds since the phase (or interval) started.
type Stats struct {
	Takes  float64 `json:"takes"`
	Count  int64   `json:"count"`
	TPM    float64 `json:"tpm"`
	SumMs  float64 `json:"sumMs"`
	AvgMs  float64 `json:"avgMs"`
	P50Ms  float64 `json:"p50Ms"`
	P90Ms  float64 `json:"p90Ms"`
	P95Ms  float64 `json:"p95Ms"`
	P99Ms  float64 `json:"p99Ms"`
	P999Ms float64 `json:"p999Ms"`
	MaxMs  float64 `json:"maxMs"`
}

// Interval is one [Current] report: the stats of the transaction types that ran in it.
type Interval struct {
	Types map[string]Stats `json:"types"`
}

// Result is what a go-tpc tpcc run printed.
type Result struct {
	// TpmC is new-order transactions per minute over the whole run.
	TpmC float64 `json:"tpmC"`
	// TpmTotal is all successful transactions per minute, the sum of the summary TPMs without
	// the *_ERR lines (go-tpc v1.0.7 does not print it).
	TpmTotal float64 `json:"tpmTotal"`
	// Efficiency is go-tpc's tpmC / (12.86 × warehouses) in percent; far above 100 when the
	// run has no keying and thinking time (no --wait), as the operator runs it.
	Efficiency float64 `json:"efficiency"`
	// Summary are the whole-run stats per transaction type, *_ERR included.
	Summary map[string]Stats `json:"summary"`
	// Intervals are the [Current] reports in order.
	Intervals []Interval `json:"intervals,omitempty"`
}

// Errors counts the failed transactions of all types.
func (r Result) Errors() int64 {
	var n int64
	for name, s := range r.Summary {
		if strings.HasSuffix(name, ErrSuffix) {
			n += s.Count
		}
	}
	return n
}

var (
	statsLine = regexp.MustCompile(`^\[(Summary|Current)\] ([A-Z_]+)\s* - Takes\(s\): ([0-9.]+), Count: (\d+), TPM: ([0-9.]+), ` +
		`Sum\(ms\): ([0-9.]+), Avg\(ms\): ([0-9.]+), 50th\(ms\): ([0-9.]+), 90th\(ms\): ([0-9.]+), 95th\(ms\): ([0-9.]+), ` +
		`99th\(ms\): ([0-9.]+), 99\.9th\(ms\): ([0-9.]+), Max\(ms\): ([0-9.]+)$`)
	tpmCLine = regexp.MustCompile(`^tpmC: ([0-9.]+), (?:tpmTotal: ([0-9.]+), )?efficiency: ([0-9.]+)%$`)
)

// Parse reads the output of go-tpc tpcc run. It fails when the run printed no tpmC line, which
// go-tpc prints only when new-order transactions succeeded.
func Parse(output string) (Result, error) {
	r := Result{Summary: map[string]Stats{}}
	var cur *Interval
	seenTpmC, tpmTotalPrinted := false, false
	sc := bufio.NewScanner(strings.NewReader(output))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if m := statsLine.FindStringSubmatch(line); m != nil {
			s, err := stats(m[3:])
			if err != nil {
				return Result{}, fmt.Errorf("go-tpc line %q: %w", line, err)
			}
			if m[1] == "Summary" {
				r.Summary[m[2]] = s
				cur = nil
				continue
			}
			// One [Current] report is a run of lines sorted by type name; a name that does not
			// sort after the previous one starts the next report.
			if cur == nil || !after(cur.Types, m[2]) {
				r.Intervals = append(r.Intervals, Interval{Types: map[string]Stats{}})
				cur = &r.Intervals[len(r.Intervals)-1]
			}
			cur.Types[m[2]] = s
			continue
		}
		cur = nil
		if m := tpmCLine.FindStringSubmatch(line); m != nil {
			seenTpmC = true
			r.TpmC, _ = strconv.ParseFloat(m[1], 64)
			if m[2] != "" {
				tpmTotalPrinted = true
				r.TpmTotal, _ = strconv.ParseFloat(m[2], 64)
			}
			r.Efficiency, _ = strconv.ParseFloat(m[3], 64)
		}
	}
	if err := sc.Err(); err != nil {
		return Result{}, fmt.Errorf("reading go-tpc output: %w", err)
	}
	if !seenTpmC {
		return Result{}, fmt.Errorf("go-tpc printed no tpmC line: no new-order transaction succeeded (%d summary lines)", len(r.Summary))
	}
	if _, ok := r.Summary[NewOrder]; !ok {
		return Result{}, fmt.Errorf("go-tpc printed tpmC but no [Summary] %s line", NewOrder)
	}
	if !tpmTotalPrinted {
		for name, s := range r.Summary {
			if !strings.HasSuffix(name, ErrSuffix) {
				r.TpmTotal += s.TPM
			}
		}
	}
	return r, nil
}

func after(types map[string]Stats, name string) bool {
	for n := range types {
		if n >= name {
			return false
		}
	}
	return true
}

func stats(f []string) (Stats, error) {
	var v [11]float64
	for i, s := range f {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return Stats{}, err
		}
		v[i] = x
	}
	return Stats{Takes: v[0], Count: int64(v[1]), TPM: v[2], SumMs: v[3], AvgMs: v[4], P50Ms: v[5], P90Ms: v[6],
		P95Ms: v[7], P99Ms: v[8], P999Ms: v[9], MaxMs: v[10]}, nil
}

// CheckResult is what go-tpc tpcc check printed.
type CheckResult struct {
	// Conditions are the TPC-C consistency conditions (3.3.2.x) checked, per warehouse, in order.
	Conditions []string `json:"conditions"`
	// Failure is go-tpc's message for the first condition that failed; empty when all held.
	Failure string `json:"failure,omitempty"`
}

var (
	checkBegin = regexp.MustCompile(`^begin to check warehouse (\d+) at condition ([0-9.]+)$`)
	checkFail  = regexp.MustCompile(`^execute check failed, err (.*)$`)
)

// ParseCheck reads the output of go-tpc tpcc check. It fails when go-tpc did not finish or
// checked nothing; a failed condition is in CheckResult.Failure, not an error.
func ParseCheck(output string) (CheckResult, error) {
	var r CheckResult
	finished, inFailure := false, false
	for _, line := range strings.Split(output, "\n") {
		line = strings.TrimRight(line, "\r")
		if m := checkBegin.FindStringSubmatch(line); m != nil {
			r.Conditions = append(r.Conditions, "warehouse "+m[1]+" "+m[2])
			inFailure = false
		} else if m := checkFail.FindStringSubmatch(line); m != nil && r.Failure == "" {
			r.Failure, inFailure = m[1], true
		} else if line == "Finished" {
			finished, inFailure = true, false
		} else if inFailure && strings.TrimSpace(line) != "" {
			// The failed condition's query follows on its own lines, the driver's error last.
			r.Failure += " " + strings.Join(strings.Fields(line), " ")
		}
	}
	if len(r.Conditions) == 0 {
		return r, fmt.Errorf("go-tpc check printed no condition")
	}
	if !finished {
		return r, fmt.Errorf("go-tpc check did not finish after %d conditions", len(r.Conditions))
	}
	return r, nil
}
