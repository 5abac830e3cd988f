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
	"github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
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
	// BundleQPSChart is where a bundle (kubectl mysqlbench export --bundle) keeps the same chart as
	// PNG, relative to report.md at the bundle's root: report.md links to it.
	BundleQPSChart = "charts/qps-by-threads.png"
	// KeyServerCSV is the steps' server counters and waits in long format (see serverCSVHeader);
	// left out when no step has them.
	KeyServerCSV = "server.csv"
)

type stepKey struct {
	target  string
	threads int32
	rep     int32
}

// Render builds the final ConfigMap data: results.json, results.csv, report.md, server.csv (when a
// step has server counters) and the chart, and nothing else: the series.* and server.*.json keys
// of stored are consumed (results.json carries them), so the caller replaces the ConfigMap's data
// with the result.
//
// Render reads only the series.* and server.*.json keys of stored; it never reads its own earlier
// output. So the caller must render while stored still holds those keys, and only once: the
// controller records the run's outcome in status first and writes the results afterwards, and a
// repeated write that finds results.json already present does not render again. A results.json,
// results.csv, report.md or server.csv in stored is ignored and replaced, other keys are ignored.
// A series or server key that does not decode or matches no step in status is left out, and a
// note in results.json and report.md names the key and why.
//
// The data stays under MaxConfigMapBytes. If the series and server counters do not fit, the
// largest are dropped first, whatever their kind, and results.json ("dropped", with the kind)
// and the end of report.md say exactly which; the status numbers are never dropped. It is an
// error only when those numbers alone do not fit.
func Render(run *v1alpha1.BenchmarkRun, stored map[string]string) (map[string]string, error) {
	if run == nil {
		return nil, fmt.Errorf("render results: no BenchmarkRun")
	}
	doc := buildDoc(run)
	servers := attachStored(&doc, stored)

	chart := true
	data, err := encodeDoc(&doc, servers, chart)
	if err != nil {
		return nil, err
	}
	if dataSize(data) <= MaxConfigMapBytes {
		return data, nil
	}

	// Too big: drop series and server counters, largest first, until it fits. Each round drops
	// enough to cover the excess, then re-renders, since the list of what was dropped adds bytes
	// too.
	cands, err := dropCandidates(&doc, servers)
	if err != nil {
		return nil, err
	}
	next := 0
	var dropRecs []dropRec
	for dataSize(data) > MaxConfigMapBytes {
		if next == len(cands) && chart {
			// The chart is drawn from the numbers, which stay in results.json: it goes before
			// any number would.
			chart = false
			doc.Notes = append(doc.Notes, chartNote+"is left out: the numbers alone fill the ConfigMap.")
			if data, err = encodeDoc(&doc, servers, chart); err != nil {
				return nil, err
			}
			continue
		}
		if next == len(cands) {
			return nil, fmt.Errorf("render results of %s/%s: %d bytes even without per-second series and server counters, "+
				"more than the %d a ConfigMap can hold", run.Namespace, run.Name, dataSize(data), MaxConfigMapBytes)
		}
		excess := dataSize(data) - MaxConfigMapBytes
		for saved := 0; next < len(cands) && saved < excess; next++ {
			c := cands[next]
			st := &doc.Targets[c.target].Steps[c.step]
			if c.kind == results.DroppedServer {
				st.Server, servers[c.target][c.step] = nil, nil
			} else {
				st.Series = nil
			}
			saved += c.bytes
			dropRecs = append(dropRecs, dropRec{kind: c.kind, key: c.key, bytes: c.bytes})
		}
		doc.Dropped = droppedList(&doc, dropRecs)
		if data, err = encodeDoc(&doc, servers, chart); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// buildDoc turns the run into results.json without series: spec summary and status numbers.
// recordWorkload is workload w of spec as results.json records it.
func recordWorkload(spec v1alpha1.BenchmarkRunSpec, w v1alpha1.Workload) results.Workload {
	out := results.Workload{
		Script:        string(w.Script),
		Tables:        w.Tables,
		TableSize:     w.TableSize,
		SkipPrepare:   w.SkipPrepare,
		ExtraArgs:     w.ExtraArgs,
		SysbenchImage: spec.SysbenchImage,
	}
	if cs := w.CustomScript; cs != nil {
		out.CustomScript = &results.CustomScript{ConfigMap: cs.Name, Key: cs.Key}
	}
	client.For(w).Record(w, &out)
	return out
}

// DocOf is the results document of run's status, without what only the stored results hold
// (per-second series, server counters): what the plugin's tables read of a run.
func DocOf(run *v1alpha1.BenchmarkRun) *results.Doc {
	doc := buildDoc(run)
	return &doc
}

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
		Workload: recordWorkload(spec, spec.Workload),
		Ladder: results.Ladder{
			Threads:             spec.Ladder.Threads,
			StepDurationSeconds: spec.Ladder.StepDurationOrDefault().Seconds(),
			WarmupSeconds:       spec.Ladder.WarmupDuration().Seconds(),
			Repetitions:         spec.RepetitionsOrDefault(),
		},
	}
	if spec.InstancePerRepetition() {
		doc.Ladder.ServerInstance = string(v1alpha1.ServerInstancePerRepetition)
	}
	if spec.Interleaved() {
		doc.Ladder.Order = string(v1alpha1.OrderInterleaved)
	}
	if spec.Suite() {
		// The suite's workloads in measuring order, and where data was prepared again.
		fresh := map[string]string{}
		for i := range spec.StepCount() {
			if ok, why := spec.FreshDataBefore(i); ok {
				if w := spec.WorkloadAt(i).Name; fresh[w] == "" {
					fresh[w] = why
				}
			}
		}
		for _, w := range spec.OrderedWorkloads() {
			doc.Workloads = append(doc.Workloads, results.NamedWorkload{Name: w.Name, Writes: w.Writes(),
				FreshData: fresh[w.Name], Workload: recordWorkload(spec, w.Workload)})
		}
		doc.Workload = doc.Workloads[0].Workload
	}
	doc.BaseTarget = spec.BaseTarget
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
			tr.Node, tr.InstanceNodes = ts.Node, ts.InstanceNodes
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
	kind  string // results.DroppedSeries or results.DroppedServer
	key   stepKey
	bytes int
}

// attachStored puts each step's series and server counters, from their keys in stored, into doc,
// and adds a note for each such key it cannot use. It returns the server counters decoded,
// indexed like doc.Targets[i].Steps[j] (see decodeServers).
func attachStored(doc *results.Doc, stored map[string]string) [][]*serverstats.Step {
	used := map[string]bool{}
	servers := make([][]*serverstats.Step, len(doc.Targets))
	for ti := range doc.Targets {
		tr := &doc.Targets[ti]
		servers[ti] = make([]*serverstats.Step, len(tr.Steps))
		for si := range tr.Steps {
			st := &tr.Steps[si]
			key := SeriesKey(tr.Name, st.Threads, st.RepetitionOrDefault())
			if raw, ok := stored[key]; ok {
				used[key] = true
				if s, err := embedSeries(raw); err != nil {
					doc.Notes = append(doc.Notes, fmt.Sprintf("The per-second series of %s at %d threads (key %s) "+
						"could not be read and is left out: %v.", tr.Name, st.Threads, key, err))
				} else {
					st.Series = s
				}
			}
			key = ServerKey(tr.Name, st.Threads, st.RepetitionOrDefault())
			if raw, ok := stored[key]; ok {
				used[key] = true
				if b, s, err := embedServer(raw); err != nil {
					doc.Notes = append(doc.Notes, fmt.Sprintf("The server counters of %s at %d threads (key %s) "+
						"could not be read and are left out: %v.", tr.Name, st.Threads, key, err))
				} else {
					st.Server, servers[ti][si] = b, &s
				}
			}
		}
	}

	var orphans []string
	for key := range stored {
		if (strings.HasPrefix(key, seriesKeyPrefix) || IsServerKey(key)) && !used[key] {
			orphans = append(orphans, key)
		}
	}
	sort.Strings(orphans)
	for _, key := range orphans {
		what := "series"
		if IsServerKey(key) {
			what = "server counters"
		}
		doc.Notes = append(doc.Notes, fmt.Sprintf("The %s key %s matches no step result in status and is left out.", what, key))
	}
	return servers
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

type dropCand struct {
	kind         string
	key          stepKey
	target, step int
	bytes        int
}

// dropCandidates lists the series and server counters of the steps, largest first (ties in report
// order, a step's series before its server counters), with the bytes each takes: in results.json,
// and for server counters also their rows of server.csv and an equal share of report.md's server
// tables. That share is an estimate (a cell's median may not shrink when one repetition goes), and
// a high one: Render then drops too little in a round and renders once more, rather than dropping
// series it need not.
func dropCandidates(doc *results.Doc, servers [][]*serverstats.Step) ([]dropCand, error) {
	var section strings.Builder
	writeServerSection(&section, doc, servers)
	blocks := 0
	for _, ss := range servers {
		for _, s := range ss {
			if s != nil {
				blocks++
			}
		}
	}
	mdShare := 0
	if blocks > 0 {
		mdShare = ceilDiv(section.Len(), blocks)
	}

	var cands []dropCand
	for ti, tr := range doc.Targets {
		for si, st := range tr.Steps {
			key := stepKey{tr.Name, st.Threads, st.RepetitionOrDefault()}
			if st.Series != nil {
				cands = append(cands, dropCand{kind: results.DroppedSeries, key: key, target: ti, step: si,
					bytes: seriesOverhead + len(st.Series)})
			}
			if s := servers[ti][si]; s != nil {
				rows, err := serverCSVBytes(doc.Run.Name, tr.Name, st, s)
				if err != nil {
					return nil, err
				}
				cands = append(cands, dropCand{kind: results.DroppedServer, key: key, target: ti, step: si,
					bytes: serverOverhead + len(st.Server) + rows + mdShare})
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].bytes > cands[j].bytes })
	return cands, nil
}

// droppedList groups drop records by kind (series first) and target, in report order, threads
// ascending.
func droppedList(doc *results.Doc, recs []dropRec) []results.Dropped {
	if len(recs) == 0 {
		return nil
	}
	type group struct{ kind, target string }
	byGroup := map[group][]stepKey{}
	bytes := map[group]int{}
	repeated := false
	for _, r := range recs {
		g := group{r.kind, r.key.target}
		byGroup[g] = append(byGroup[g], r.key)
		bytes[g] += r.bytes
		repeated = repeated || r.key.rep > 1
	}
	var out []results.Dropped
	for _, kind := range []string{results.DroppedSeries, results.DroppedServer} {
		for _, tr := range doc.Targets {
			g := group{kind, tr.Name}
			keys := byGroup[g]
			if len(keys) == 0 {
				continue
			}
			slices.SortFunc(keys, func(a, b stepKey) int {
				if a.threads != b.threads {
					return int(a.threads) - int(b.threads)
				}
				return int(a.rep) - int(b.rep)
			})
			d := results.Dropped{Kind: kind, Target: tr.Name, Bytes: bytes[g]}
			for _, k := range keys {
				d.Threads = append(d.Threads, k.threads)
				if repeated {
					d.Repetitions = append(d.Repetitions, k.rep)
				}
			}
			out = append(out, d)
		}
	}
	return out
}

// chartNote begins the note of results.json that says why the chart is not in the data.
const chartNote = "The chart " + KeyQPSChart + " "

// Rerender renders again, from a results.json Render wrote (decoded), the data Render returned
// with it: results.json, results.csv, report.md, server.csv and the chart are all drawn from
// results.json, so they come out byte for byte as the operator stored them. It is how exported
// results are read without the ConfigMap (the kubectl plugin's --from). The chart is drawn unless
// a note of results.json says it was left out or could not be drawn.
func Rerender(doc *results.Doc) (map[string]string, error) {
	if doc == nil {
		return nil, fmt.Errorf("render results: no results.json")
	}
	chart := !slices.ContainsFunc(doc.Notes, func(n string) bool { return strings.HasPrefix(n, chartNote) })
	return encodeData(doc, chart)
}

// encodeData renders results.json, results.csv, report.md and server.csv (unless no step has
// server counters) from doc and, with chart, the QPS-by-threads SVG. A chart that cannot be drawn
// is not a reason to lose the results: it is left out and results.json and report.md say why.
func encodeData(doc *results.Doc, chart bool) (map[string]string, error) {
	servers, err := decodeServers(doc)
	if err != nil {
		return nil, err
	}
	return encodeDoc(doc, servers, chart)
}

// encodeDoc is encodeData with doc's server counters decoded (decodeServers), so that Render's
// rounds do not decode them again.
func encodeDoc(doc *results.Doc, servers [][]*serverstats.Step, chart bool) (map[string]string, error) {
	var svg []byte
	if chart && measured(doc) {
		var err error
		if svg, err = charts.QPSByThreadsSVG(doc); err != nil {
			withNote := *doc
			withNote.Notes = append(slices.Clip(doc.Notes), fmt.Sprintf("%scould not be drawn: %v.", chartNote, err))
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
	serverCSV, err := renderServerCSV(doc, servers)
	if err != nil {
		return nil, err
	}
	data := map[string]string{
		KeyResultsJSON: js.String(),
		KeyResultsCSV:  csvText,
		KeyReportMD:    renderMarkdown(doc, servers, len(svg) > 0),
	}
	if len(svg) > 0 {
		data[KeyQPSChart] = string(svg)
	}
	if serverCSV != "" {
		data[KeyServerCSV] = serverCSV
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
