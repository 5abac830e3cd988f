package plugin

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"k8s.io/cli-runtime/pkg/printers"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/compare"
	"github.com/mysqlbench/mysqlbench-operator/internal/resultsdb"
)

// historyView is what history prints: the series with their change points.
type historyView struct {
	Metric resultsdb.Metric `json:"metric"`
	// Autocorrelation is the lag-1 autocorrelation removed before testing (pooled over the series).
	Autocorrelation float64 `json:"autocorrelation"`
	// Tested is how many series the p-values were adjusted over.
	Tested int          `json:"tested"`
	Series []seriesView `json:"series"`
}

type seriesView struct {
	resultsdb.Series
	// ChangePoint is the series' sustained shift, nil when none was found.
	ChangePoint *changePoint `json:"changePoint,omitempty"`
}

type changePoint struct {
	compare.Shift
	// Run and Start are the first run of the new level.
	Run   string    `json:"run"`
	Start time.Time `json:"start"`
}

// analyse marks each series' change point as the operator would with its default policy.
func analyse(series []resultsdb.Series, metric resultsdb.Metric) historyView {
	values := make([][]float64, len(series))
	for i, s := range series {
		values[i] = make([]float64, len(s.Points))
		for j, p := range s.Points {
			values[i][j] = p.Median
		}
	}
	shifts, phi := compare.Shifts(values, metric.HigherIsBetter(), v1.RegressionPolicy{})
	view := historyView{Metric: metric, Autocorrelation: phi, Tested: len(series)}
	for i, s := range series {
		sv := seriesView{Series: s}
		if sh := shifts[i]; sh != nil {
			p := s.Points[sh.Index]
			sv.ChangePoint = &changePoint{Shift: *sh, Run: p.Run, Start: p.Start}
		}
		view.Series = append(view.Series, sv)
	}
	return view
}

// night is a point of a series with the series it belongs to: a line of -o custom-columns.
type night struct {
	Namespace string `json:"namespace"`
	Schedule  string `json:"schedule,omitempty"`
	Workload  string `json:"workload"`
	Target    string `json:"target"`
	Threads   int    `json:"threads"`
	resultsdb.Point
	// ChangePoint says that the series' sustained shift starts at this night.
	ChangePoint bool `json:"changePoint,omitempty"`
}

func nightRows(v historyView) []any {
	var out []any
	for _, s := range v.Series {
		for i, p := range s.Points {
			out = append(out, night{Namespace: s.Namespace, Schedule: s.Schedule, Workload: s.Workload, Target: s.Target,
				Threads: s.Threads, Point: p, ChangePoint: s.ChangePoint != nil && s.ChangePoint.Index == i})
		}
	}
	return out
}

// changeMark is how the table marks the first night of a new level.
const changeMark = "◆"

// writeHistory prints one block per series: a header naming it, then a row per night.
func writeHistory(w io.Writer, view historyView) error {
	shifts := 0
	for i, s := range view.Series {
		if i > 0 {
			_, _ = fmt.Fprintln(w)
		}
		where := s.Namespace + "/" + s.Schedule
		if s.Schedule == "" {
			where = s.Namespace + " (runs of no schedule)"
		}
		_, _ = fmt.Fprintf(w, "%s  %s  target %s  threads %d\n", where, s.Workload, s.Target, s.Threads)
		tw := printers.GetNewTabWriter(w)
		_, _ = fmt.Fprintf(tw, "NIGHT\tRUN\tSERVER VERSION\t%s\tVS PREV\tVERDICT\tMARKS\n", metricTitle(s.Series))
		for j, p := range s.Points {
			var marks []string
			if cp := s.ChangePoint; cp != nil && cp.Index == j {
				shifts++
				marks = append(marks, shiftMark(cp.Shift))
			}
			change := ""
			if j > 0 {
				prev := s.Points[j-1]
				if prev.Median != 0 {
					change = signedPercent(p.Median/prev.Median - 1)
				}
				switch {
				case prev.ServerVersion != p.ServerVersion:
					marks = append(marks, "new version")
				case prev.ImageDigest != p.ImageDigest:
					marks = append(marks, "new image")
				}
			}
			run := p.Run
			if p.ConfirmationOf != "" {
				run += " (confirms " + p.ConfirmationOf + ")"
			}
			if p.Phase != string(v1.RunSucceeded) {
				run += " (" + p.Phase + ")"
			}
			_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Start.UTC().Format(time.DateOnly), run,
				dash(p.ServerVersion), medianCI(s.Metric, p), change, verdictOf(p), strings.Join(marks, "; "))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, _ = fmt.Fprintf(w, "\nMedians of the repetitions with their interval; VS PREV against the night before. %s: the first "+
		"night of a sustained shift in level (%d of %d series; p-values adjusted over all %d, ",
		changeMark, shifts, len(view.Series), view.Tested)
	if view.Autocorrelation > 0 {
		_, _ = fmt.Fprintf(w, "after removing the nights' autocorrelation %.2f, ", view.Autocorrelation)
	}
	_, _ = fmt.Fprintf(w, "with the operator's default policy). VERDICT: the run against its baseline (and the target's).\n")
	return nil
}

// metricTitle heads the median column.
func metricTitle(s resultsdb.Series) string {
	switch s.Metric {
	case resultsdb.MetricP95:
		return "P95 MS [CI]"
	case resultsdb.MetricTpmC:
		return "TPMC [CI]"
	}
	if s.Unit == "tpmC" {
		return "TPMC [CI]"
	}
	return "QPS [CI]"
}

// medianCI is a point's median with its interval, when it has one.
func medianCI(m resultsdb.Metric, p resultsdb.Point) string {
	decimals := throughputDecimals
	if m == resultsdb.MetricP95 {
		decimals = func(float64) int { return 3 }
	}
	out := num(p.Median, decimals)
	if p.CILow != nil && p.CIHigh != nil {
		out += " [" + num(*p.CILow, decimals) + ", " + num(*p.CIHigh, decimals) + "]"
	}
	return out
}

// shiftMark describes a change point: its size, p and q, and which way it matters.
func shiftMark(s compare.Shift) string {
	way := "improvement"
	if s.Regressed {
		way = "regression"
	}
	return fmt.Sprintf("%s shift %s (p=%s q=%s, %s)", changeMark, signedPercent(s.ChangePercent/100),
		strconv.FormatFloat(s.P, 'g', 2, 64), strconv.FormatFloat(s.Q, 'g', 2, 64), way)
}

// verdictOf is the run's verdict, with the target's when the comparison has one for it, and
// what became of a Regressed one: a night is acted on only once its confirmation confirmed it.
func verdictOf(p resultsdb.Point) string {
	out := p.Verdict
	switch {
	case p.Verdict == "":
		return ""
	case p.TargetVerdict != "":
		out += " (target " + p.TargetVerdict + ")"
	}
	switch p.Verdict {
	case string(v1.VerdictRegressed):
		if state := confirmationWord(p.RegressedReason, p.Confirmed); state != "" {
			out += ", " + state
		}
	case string(v1.VerdictInconclusive):
		// Its suspects re-measured by a confirmation: only what that found is news.
		switch {
		case p.Confirmed:
			out += ", regression confirmed"
		case p.RegressedReason == v1.ReasonRegressionNotConfirmed:
			out += ", no regression found again"
		case p.RegressedReason == v1.ReasonAwaitingConfirmation:
			out += ", awaiting confirmation"
		}
	}
	return out
}

// confirmationWord says in a word what the reason of a run's Regressed condition says of its
// confirmation.
func confirmationWord(reason string, confirmed bool) string {
	switch {
	case confirmed:
		return "confirmed"
	case reason == "", reason == v1.ReasonRegressed: // no confirmation run: confirmation was off
		return ""
	}
	switch reason {
	case v1.ReasonRegressionNotConfirmed:
		return "not confirmed"
	case v1.ReasonAwaitingConfirmation:
		return "awaiting confirmation"
	default: // unconfirmed: confirmation off, skipped, failed or inconclusive; it alarms anyway
		return "unconfirmed"
	}
}

// signedPercent writes a ratio change as "+1.2 %" or "-7.2 %".
func signedPercent(x float64) string {
	// Rounded first, so that a change too small to show prints as +0.0, not -0.0.
	x = math.Round(x*1000) / 1000
	out := strconv.FormatFloat(x*100, 'f', 1, 64) + " %"
	if x >= 0 {
		out = "+" + out
	}
	return out
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func intList(xs []int) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.Itoa(x)
	}
	return strings.Join(out, ",")
}
