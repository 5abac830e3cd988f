package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
	"github.com/mysqlbench/mysqlbench-operator/internal/charts"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// MaxConfigMapBytes is the budget Render keeps the data under, counted like the API server counts
// a ConfigMap against its 1 MiB (1,048,576 bytes) limit: the bytes of every key and value. The
// headroom leaves room for the object's metadata and for a key or two the controller might add.
const MaxConfigMapBytes = 900_000

// Data keys of the results ConfigMap that Render returns.
const (
	KeyResultsJSON = "results.json"
	KeyResultsCSV  = "results.csv"
	KeyReportMD    = "report.md"
	// KeyQPSChart is the QPS-by-threads chart (SVG), for users without the kubectl plugin. It is
	// left out when no target measured a step, and when the run is so large that its numbers
	// alone fill the ConfigMap (a note says so).
	KeyQPSChart = "qps-by-threads.svg"
)

type stepKey struct {
	target  string
	threads int32
	rep     int32
}

// Render builds the final ConfigMap data: results.json, results.csv and report.md, and nothing
// else: the series.* keys of stored are consumed (results.json carries the series), so the caller
// replaces the ConfigMap's data with the result.
//
// Render reads only the series.* keys of stored; it never reads its own earlier output. So the
// caller must render while stored still holds the series keys, and only once: the controller
// records the run's outcome in status first and writes the results afterwards, and a repeated
// write that finds results.json already present does not render again. A results.json, results.csv or report.md in stored is
// ignored and replaced, other keys are ignored. A series key that does not decode or matches no
// step in status is left out, and a note in results.json and report.md names the key and why.
//
// The data stays under MaxConfigMapBytes. If the series do not fit, the largest are dropped first
// and results.json ("dropped") and the end of report.md say exactly which; the status numbers
// are never dropped. It is an error only when those numbers alone do not fit.
func Render(run *v1alpha1.BenchmarkRun, stored map[string]string) (map[string]string, error) {
	if run == nil {
		return nil, fmt.Errorf("render results: no BenchmarkRun")
	}
	doc := buildDoc(run)
	attachSeries(&doc, stored)

	chart := true
	data, err := encodeData(&doc, chart)
	if err != nil {
		return nil, err
	}
	if dataSize(data) <= MaxConfigMapBytes {
		return data, nil
	}

	// Too big: drop series, largest first, until it fits. Each round drops enough series to
	// cover the excess, then re-renders, since the list of what was dropped adds bytes too.
	cands := seriesBySize(&doc)
	next := 0
	var dropRecs []dropRec
	for dataSize(data) > MaxConfigMapBytes {
		if next == len(cands) && chart {
			// The chart is drawn from the numbers, which stay in results.json: it goes before
			// any number would.
			chart = false
			doc.Notes = append(doc.Notes, fmt.Sprintf("The chart %s is left out: the numbers alone fill the ConfigMap.", KeyQPSChart))
			if data, err = encodeData(&doc, chart); err != nil {
				return nil, err
			}
			continue
		}
		if next == len(cands) {
			return nil, fmt.Errorf("render results of %s/%s: %d bytes even without per-second series, "+
				"more than the %d a ConfigMap can hold", run.Namespace, run.Name, dataSize(data), MaxConfigMapBytes)
		}
		excess := dataSize(data) - MaxConfigMapBytes
		for saved := 0; next < len(cands) && saved < excess; next++ {
			c := cands[next]
			doc.Targets[c.target].Steps[c.step].Series = nil
			saved += c.bytes
			dropRecs = append(dropRecs, dropRec{key: c.key, bytes: c.bytes})
		}
		doc.Dropped = droppedList(&doc, dropRecs)
		if data, err = encodeData(&doc, chart); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// buildDoc turns the run into results.json without series: spec summary and status numbers.
func buildDoc(run *v1alpha1.BenchmarkRun) results.Doc {
	spec := run.Spec
	doc := results.Doc{
		FormatVersion: results.FormatVersion,
		Run: results.Run{
			Name:           run.Name,
			Namespace:      run.Namespace,
			Phase:          string(run.Status.Phase),
			StartTime:      run.Status.StartTime,
			CompletionTime: run.Status.CompletionTime,
		},
		Workload: results.Workload{
			Script:        string(spec.Workload.Script),
			Tables:        spec.Workload.Tables,
			TableSize:     spec.Workload.TableSize,
			SkipPrepare:   spec.Workload.SkipPrepare,
			ExtraArgs:     spec.Workload.ExtraArgs,
			SysbenchImage: spec.SysbenchImage,
		},
		Ladder: results.Ladder{
			Threads:             spec.Ladder.Threads,
			StepDurationSeconds: spec.Ladder.StepDurationOrDefault().Seconds(),
			WarmupSeconds:       spec.Ladder.WarmupDuration().Seconds(),
			Repetitions:         spec.RepetitionsOrDefault(),
		},
	}
	if cs := spec.Workload.CustomScript; cs != nil {
		doc.Workload.CustomScript = &results.CustomScript{ConfigMap: cs.Name, Key: cs.Key}
	}
	if spec.Ladder.WarmupDuration() > 0 {
		doc.Ladder.WarmupThreads = spec.Ladder.WarmupThreadsOrDefault()
	}

	statusByName := make(map[string]v1alpha1.TargetStatus, len(run.Status.Targets))
	for _, ts := range run.Status.Targets {
		if _, dup := statusByName[ts.Name]; !dup {
			statusByName[ts.Name] = ts
		}
	}
	inSpec := make(map[string]bool, len(spec.Targets))
	add := func(t v1alpha1.Target) {
		tr := results.Target{Name: t.Name, Engine: string(t.EngineOrDefault()), Image: t.Image, MyCnf: t.MyCnf, Steps: []results.Step{}}
		if ts, ok := statusByName[t.Name]; ok {
			tr.Phase = string(ts.Phase)
			tr.ServerVersion = ts.ServerVersion
			tr.Message = ts.Message
			tr.StartTime = ts.StartTime
			tr.CompletionTime = ts.CompletionTime
			for _, st := range ts.Steps {
				tr.Steps = append(tr.Steps, results.Step{StepResult: st})
			}
			if spec.RepetitionsOrDefault() > 1 {
				// Computed from the steps, not copied from status: the report of any run
				// says the same for the same steps.
				sums := cells.Summarize(ts.Steps)
				for i, c := range cells.Status(ts.Steps) {
					tr.Cells = append(tr.Cells, results.Cell{CellStats: c, Noisy: sums[i].Noisy()})
				}
			}
		}
		doc.Targets = append(doc.Targets, tr)
	}
	for _, t := range spec.Targets {
		inSpec[t.Name] = true
		add(t)
	}
	// The spec cannot change once a run starts, so status targets outside it should not exist;
	// if one does, its numbers are still reported rather than silently lost.
	for _, ts := range run.Status.Targets {
		if !inSpec[ts.Name] {
			inSpec[ts.Name] = true
			add(v1alpha1.Target{Name: ts.Name})
			doc.Targets[len(doc.Targets)-1].Engine = "" // unknown, not the default
		}
	}
	return doc
}

type dropRec struct {
	key   stepKey
	bytes int
}

// attachSeries puts each step's series, from its series key in stored, into doc, and adds a note
// for each series key it cannot use.
func attachSeries(doc *results.Doc, stored map[string]string) {
	used := map[string]bool{}
	for ti := range doc.Targets {
		tr := &doc.Targets[ti]
		for si := range tr.Steps {
			st := &tr.Steps[si]
			key := SeriesKey(tr.Name, st.Threads, st.RepetitionOrDefault())
			raw, ok := stored[key]
			if !ok {
				continue
			}
			used[key] = true
			s, err := embedSeries(raw)
			if err != nil {
				doc.Notes = append(doc.Notes, fmt.Sprintf("The per-second series of %s at %d threads (key %s) "+
					"could not be read and is left out: %v.", tr.Name, st.Threads, key, err))
				continue
			}
			st.Series = s
		}
	}

	var orphans []string
	for key := range stored {
		if strings.HasPrefix(key, seriesKeyPrefix) && !used[key] {
			orphans = append(orphans, key)
		}
	}
	sort.Strings(orphans)
	for _, key := range orphans {
		doc.Notes = append(doc.Notes, fmt.Sprintf("The series key %s matches no step result in status and is left out.", key))
	}
}

// embedSeries returns a stored series ready to embed in results.json: DecodeSeries must accept it,
// and its bytes are kept, compacted, rather than re-encoded from the decoded values. For a series
// EncodeSeries wrote that is the same bytes (it is compact already), so the embedded series is
// exactly as large as its budget allowed and Render knows each one's size without encoding it.
func embedSeries(raw string) (json.RawMessage, error) {
	if _, err := results.DecodeSeries(raw); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(raw)); err != nil {
		return nil, err // not reached: DecodeSeries accepted it as JSON
	}
	return b.Bytes(), nil
}

type seriesCand struct {
	key          stepKey
	target, step int
	bytes        int
}

// seriesBySize lists the steps that carry a series, largest first (ties in report order), with
// the bytes the series takes in results.json.
func seriesBySize(doc *results.Doc) []seriesCand {
	var cands []seriesCand
	for ti, tr := range doc.Targets {
		for si, st := range tr.Steps {
			if st.Series == nil {
				continue
			}
			n := seriesOverhead + len(st.Series)
			cands = append(cands, seriesCand{key: stepKey{tr.Name, st.Threads, st.RepetitionOrDefault()}, target: ti, step: si, bytes: n})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].bytes > cands[j].bytes })
	return cands
}

// droppedList groups drop records by target, in report order, threads ascending.
func droppedList(doc *results.Doc, recs []dropRec) []results.Dropped {
	if len(recs) == 0 {
		return nil
	}
	byTarget := map[string][]stepKey{}
	bytes := map[string]int{}
	repeated := false
	for _, r := range recs {
		byTarget[r.key.target] = append(byTarget[r.key.target], r.key)
		bytes[r.key.target] += r.bytes
		repeated = repeated || r.key.rep > 1
	}
	var out []results.Dropped
	for _, tr := range doc.Targets {
		keys := byTarget[tr.Name]
		if len(keys) == 0 {
			continue
		}
		slices.SortFunc(keys, func(a, b stepKey) int {
			if a.threads != b.threads {
				return int(a.threads) - int(b.threads)
			}
			return int(a.rep) - int(b.rep)
		})
		d := results.Dropped{Target: tr.Name, Bytes: bytes[tr.Name]}
		for _, k := range keys {
			d.Threads = append(d.Threads, k.threads)
			if repeated {
				d.Repetitions = append(d.Repetitions, k.rep)
			}
		}
		out = append(out, d)
	}
	return out
}

// encodeData renders results.json, results.csv and report.md from doc and, with chart, the
// QPS-by-threads SVG. A chart that cannot be drawn is not a reason to lose the results: it is
// left out and results.json and report.md say why.
func encodeData(doc *results.Doc, chart bool) (map[string]string, error) {
	var svg []byte
	if chart && measured(doc) {
		var err error
		if svg, err = charts.QPSByThreadsSVG(doc); err != nil {
			withNote := *doc
			withNote.Notes = append(slices.Clip(doc.Notes), fmt.Sprintf("The chart %s could not be drawn: %v.", KeyQPSChart, err))
			doc = &withNote
		}
	}
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	// Messages and my.cnf text are not embedded in HTML; escaping < > & would only cost bytes.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encode %s: %w", KeyResultsJSON, err)
	}
	csvText, err := renderCSV(doc)
	if err != nil {
		return nil, err
	}
	data := map[string]string{
		KeyResultsJSON: js.String(),
		KeyResultsCSV:  csvText,
		KeyReportMD:    renderMarkdown(doc, len(svg) > 0),
	}
	if len(svg) > 0 {
		data[KeyQPSChart] = string(svg)
	}
	return data, nil
}

// measured says whether any target has a step result.
func measured(doc *results.Doc) bool {
	for _, t := range doc.Targets {
		if len(t.Steps) > 0 {
			return true
		}
	}
	return false
}

// dataSize counts data as the API server does against the ConfigMap size limit.
func dataSize(data map[string]string) int {
	n := 0
	for k, v := range data {
		n += len(k) + len(v)
	}
	return n
}
