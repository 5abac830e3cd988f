// Package results is the read model of a BenchmarkRun's results.json: the types the report
// package encodes and that the plugin, the charts and other tools decode. Field names and JSON
// tags are part of the product's interface: add, never rename (see FormatVersion).
package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// FormatVersion is the "formatVersion" of results.json; it changes only when a field changes
// meaning or disappears, so tools can refuse a layout they do not know.
const FormatVersion = 1

// Doc is results.json. Field names are part of the product's interface: add, never rename.
type Doc struct {
	FormatVersion int      `json:"formatVersion"`
	Run           Run      `json:"run"`
	Workload      Workload `json:"workload"`
	// Workloads are a suite's workloads (spec.workloads, spec.preset) in the order each round
	// measured them; Workload is then the first. Omitted for a run of one spec.workload.
	Workloads []NamedWorkload `json:"workloads,omitempty"`
	// BaseTarget is spec.baseTarget: the target the others are set against in the relative
	// table and the heat map (the first target when empty).
	BaseTarget string   `json:"baseTarget,omitempty"`
	Ladder     Ladder   `json:"ladder"`
	Targets    []Target `json:"targets"`
	// Dropped lists the per-second series and server counters left out to keep the ConfigMap
	// under its limit.
	Dropped []Dropped `json:"dropped,omitempty"`
	// Notes are anything else a reader must know about what results.json does not contain.
	Notes []string `json:"notes,omitempty"`
}

type Run struct {
	Name           string       `json:"name"`
	Namespace      string       `json:"namespace"`
	Phase          string       `json:"phase,omitempty"`
	StartTime      *metav1.Time `json:"startTime,omitempty"`
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

type Workload struct {
	// Client is the load generator: "sysbench" (also when empty: results written before the
	// field existed), "mysqlslap" or "go-tpc".
	Client        string             `json:"client,omitempty"`
	Mysqlslap     *MysqlslapWorkload `json:"mysqlslap,omitempty"`
	TPCC          *TPCCWorkload      `json:"tpcc,omitempty"`
	Script        string             `json:"script,omitempty"`
	CustomScript  *CustomScript      `json:"customScript,omitempty"`
	Tables        int32              `json:"tables"`
	TableSize     int64              `json:"tableSize"`
	SkipPrepare   bool               `json:"skipPrepare,omitempty"`
	ExtraArgs     []string           `json:"extraArgs,omitempty"`
	SysbenchImage string             `json:"sysbenchImage,omitempty"`
}

// NamedWorkload is one workload of a suite, in measuring order.
type NamedWorkload struct {
	Name string `json:"name"`
	// Writes says that the workload may change the data later workloads read.
	Writes bool `json:"writes,omitempty"`
	// FreshData says why the data was prepared again before the workload's first step, when it
	// was (see BenchmarkRunSpec.FreshDataBefore); empty when it measured the data as the
	// workloads before it left it.
	FreshData string `json:"freshData,omitempty"`
	Workload
}

// ForWorkload is doc with only the steps and cells of the suite workload name (servers, the
// server counters of each target's steps, filtered alike): the one-workload document the
// report's tables are drawn from.
func (d *Doc) ForWorkload(name string, servers [][]*serverstats.Step) (*Doc, [][]*serverstats.Step) {
	out := *d
	out.Targets = make([]Target, len(d.Targets))
	outServers := make([][]*serverstats.Step, len(d.Targets))
	for _, w := range d.Workloads {
		if w.Name == name {
			out.Workload = w.Workload
		}
	}
	for ti, tr := range d.Targets {
		t := tr
		t.Steps, t.Cells = []Step{}, nil
		for si, st := range tr.Steps {
			if st.Workload == name {
				t.Steps = append(t.Steps, st)
				if ti < len(servers) && si < len(servers[ti]) {
					outServers[ti] = append(outServers[ti], servers[ti][si])
				}
			}
		}
		for _, c := range tr.Cells {
			if c.Workload == name {
				t.Cells = append(t.Cells, c)
			}
		}
		out.Targets[ti] = t
	}
	return &out, outServers
}

// MysqlslapWorkload is what mysqlslap ran at each step (workload.mysqlslap, defaults resolved;
// LoadType is empty when args give --query).
type MysqlslapWorkload struct {
	LoadType   string   `json:"loadType,omitempty"`
	Queries    int64    `json:"queries"`
	Iterations int32    `json:"iterations"`
	Image      string   `json:"image,omitempty"`
	Args       []string `json:"args,omitempty"`
}

// TPCCWorkload is what go-tpc ran (workload.tpcc, defaults resolved).
type TPCCWorkload struct {
	Warehouses   int32  `json:"warehouses"`
	LoadThreads  int32  `json:"loadThreads"`
	Check        bool   `json:"check"`
	IgnoreErrors bool   `json:"ignoreErrors"`
	Image        string `json:"image"`
	// GoTPC is the go-tpc release the image runs.
	GoTPC string `json:"goTPC"`
}

type CustomScript struct {
	ConfigMap string `json:"configMap"`
	Key       string `json:"key"`
}

type Ladder struct {
	Threads             []int32 `json:"threads"`
	StepDurationSeconds float64 `json:"stepDurationSeconds"`
	WarmupSeconds       float64 `json:"warmupSeconds"`
	// WarmupThreads is the effective warm-up thread count (the default resolved); unset without
	// a warm-up.
	WarmupThreads int32 `json:"warmupThreads,omitempty"`
	// Repetitions is how many times each target measured the ladder (spec.repetitions).
	Repetitions int `json:"repetitions"`
	// ServerInstance is "PerRepetition" when each repetition measured a new server instance
	// (spec.serverInstance), absent when the repetitions shared one.
	ServerInstance string `json:"serverInstance,omitempty"`
	// Order is "Interleaved" when the targets' cells were measured in interleaved rounds (the
	// same repetition of every target in one round, so their ratios pair by round), absent
	// otherwise.
	Order string `json:"order,omitempty"`
}

type Target struct {
	Name           string       `json:"name"`
	Engine         string       `json:"engine,omitempty"`
	Image          string       `json:"image,omitempty"`
	MyCnf          string       `json:"myCnf,omitempty"`
	Phase          string       `json:"phase,omitempty"`
	ServerVersion  string       `json:"serverVersion,omitempty"`
	Message        string       `json:"message,omitempty"`
	StartTime      *metav1.Time `json:"startTime,omitempty"`
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Node is the node the server's latest instance ran on, InstanceNodes every node its
	// instances ran on when more than one (status targets[].node and instanceNodes); absent
	// where the operator does not run the server.
	Node          *v1alpha1.ServerNode `json:"node,omitempty"`
	InstanceNodes []string             `json:"instanceNodes,omitempty"`
	// Steps are in the order measured (see spec.repetitions).
	Steps []Step `json:"steps"`
	// Cells summarize the repetitions of each thread count; only when the run has more than one.
	Cells []Cell `json:"cells,omitempty"`
}

// Cell is a cell's statistics, as status holds them, and whether it is noisy.
type Cell struct {
	v1alpha1.CellStats
	// Noisy: the coefficient of variation of QPS or p95 latency is above MaxCV.
	Noisy bool `json:"noisy,omitempty"`
}

// Step is the status numbers of a step, field for field, plus its series and what the server did
// during it: the stored bytes, compacted after DecodeSeries or DecodeServer accepted them.
type Step struct {
	v1alpha1.StepResult
	Series json.RawMessage `json:"series,omitempty"`
	// Server is the step's serverstats.Step (spec.serverStats): counter deltas per second and per
	// query, gauges at the end, the top wait events. Absent when the run did not record them, the
	// step's snapshots did not add up, or it was dropped to fit (Doc.Dropped says so).
	Server json.RawMessage `json:"server,omitempty"`
}

// What a Dropped entry left out (Dropped.Kind).
const (
	// DroppedSeries is the steps' per-second series.
	DroppedSeries = "series"
	// DroppedServer is the steps' server counters and waits (Step.Server), with their rows of
	// server.csv and their part of report.md's server tables.
	DroppedServer = "server"
)

type Dropped struct {
	// Kind is DroppedSeries or DroppedServer; empty in a results.json written before server
	// counters existed, where it means DroppedSeries.
	Kind    string  `json:"kind,omitempty"`
	Target  string  `json:"target"`
	Threads []int32 `json:"threads"`
	// Repetitions, when the run has more than one, is the repetition of each entry of Threads.
	Repetitions []int32 `json:"repetitions,omitempty"`
	// Bytes is what the dropped entries took.
	Bytes int `json:"bytes"`
}

// Series is the per-second time series of one finished step, as stored while the run goes on and
// as embedded in results.json. It is columnar (one array per measure) because a long step has tens
// of thousands of points and repeating field names per point would multiply its size.
//
// Values are rounded to limited precision when the series is built (see roundValue): the series
// is for plots, and the exact step numbers are in the step's status.
type Series struct {
	// BucketSeconds is how many consecutive sysbench reports each point averages. The operator runs
	// sysbench with --report-interval=1, so it is seconds: 1 unless the series was downsampled to
	// fit its byte budget. 0 when PointsDropped.
	BucketSeconds int `json:"bucketSeconds"`
	// Intervals is how many sysbench reports the series was built from.
	Intervals int `json:"intervals"`
	// Threads is the step's sysbench thread count.
	Threads int32 `json:"threads"`
	// PointsDropped is true when not even a single whole-step point fit the byte budget: the
	// series then has no points and only the step's summary numbers (in status) describe it.
	PointsDropped bool `json:"pointsDropped,omitempty"`

	// Time is the seconds since the step started at the end of each bucket. The last bucket may
	// average fewer reports than BucketSeconds when they do not divide evenly.
	Time []float64 `json:"t,omitempty"`
	// TPS is transactions (sysbench events) per second.
	TPS []float64 `json:"tps,omitempty"`
	// QPS is queries per second; Read, Write and Other split it.
	QPS   []float64 `json:"qps,omitempty"`
	Read  []float64 `json:"read,omitempty"`
	Write []float64 `json:"write,omitempty"`
	Other []float64 `json:"other,omitempty"`
	// LatencyMs is the latency percentile sysbench reports per interval (the 95th), in
	// milliseconds. A downsampled point is the mean of its reports' percentiles, not the
	// percentile of the bucket, which sysbench does not report.
	LatencyMs []float64 `json:"latencyMs,omitempty"`
	// Errors and Reconnects are per second.
	Errors     []float64 `json:"errors,omitempty"`
	Reconnects []float64 `json:"reconnects,omitempty"`
}

// DecodeSeries reads a series written by EncodeSeries. It rejects columns of different lengths,
// which would misalign every plot drawn from them.
func DecodeSeries(s string) (Series, error) {
	var out Series
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return Series{}, fmt.Errorf("decode series: %w", err)
	}
	if err := out.validate(); err != nil {
		return Series{}, fmt.Errorf("decode series: %w", err)
	}
	return out, nil
}

func (s Series) validate() error {
	if s.BucketSeconds < 0 || s.Intervals < 0 {
		return fmt.Errorf("negative bucketSeconds %d or intervals %d", s.BucketSeconds, s.Intervals)
	}
	n := len(s.Time)
	for _, c := range s.columns() {
		if len(c.values) != n {
			return fmt.Errorf("column %q has %d points, %q has %d", c.name, len(c.values), "t", n)
		}
	}
	if s.PointsDropped && n > 0 {
		return errors.New("pointsDropped is set but the series has points")
	}
	return nil
}

type column struct {
	name   string
	values []float64
}

// columns lists the arrays besides Time, under their JSON names.
func (s Series) columns() []column {
	return []column{
		{"tps", s.TPS},
		{"qps", s.QPS},
		{"read", s.Read},
		{"write", s.Write},
		{"other", s.Other},
		{"latencyMs", s.LatencyMs},
		{"errors", s.Errors},
		{"reconnects", s.Reconnects},
	}
}

// Decode reads results.json. It refuses a formatVersion it does not know (a newer operator's
// layout may mean something else), series whose columns do not align and server counters
// DecodeServer refuses.
func Decode(data []byte) (*Doc, error) {
	var doc Doc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("decode results.json: %w", err)
	}
	if doc.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("results.json has formatVersion %d; this build reads %d: use the plugin of the operator's version",
			doc.FormatVersion, FormatVersion)
	}
	for _, t := range doc.Targets {
		for _, st := range t.Steps {
			if st.Series != nil {
				if _, err := DecodeSeries(string(st.Series)); err != nil {
					return nil, fmt.Errorf("results.json: target %s, %d threads: %w", t.Name, st.Threads, err)
				}
			}
			if st.Server != nil {
				if _, err := DecodeServer(string(st.Server)); err != nil {
					return nil, fmt.Errorf("results.json: target %s, %d threads: %w", t.Name, st.Threads, err)
				}
			}
		}
	}
	return &doc, nil
}

// DecodedSeries returns the step's per-second series; ok is false when results.json has none
// for the step (dropped to fit, or never stored).
func (s Step) DecodedSeries() (Series, bool, error) {
	if s.Series == nil {
		return Series{}, false, nil
	}
	out, err := DecodeSeries(string(s.Series))
	return out, err == nil, err
}

// DecodedServer returns what the server did during the step; ok is false when results.json has
// nothing for the step (server stats off, the snapshots did not add up, or dropped to fit).
func (s Step) DecodedServer() (serverstats.Step, bool, error) {
	if s.Server == nil {
		return serverstats.Step{}, false, nil
	}
	out, err := DecodeServer(string(s.Server))
	return out, err == nil, err
}

// DecodeServer reads a step's server counters as report.EncodeServer wrote them. Counts stay
// exact (uint64). It refuses what no snapshot pair can give: a step of no time, negative or
// non-finite rates, nameless counters or events. Sources it does not know are accepted, since a
// newer operator may add one (see FormatVersion).
func DecodeServer(s string) (serverstats.Step, error) {
	var out serverstats.Step
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return serverstats.Step{}, fmt.Errorf("decode server counters: %w", err)
	}
	if err := ValidateServer(out); err != nil {
		return serverstats.Step{}, fmt.Errorf("decode server counters: %w", err)
	}
	return out, nil
}

// ValidateServer checks a step's server counters as DecodeServer does, so that what the report
// package encodes is what readers accept.
func ValidateServer(s serverstats.Step) error {
	if !(s.Seconds > 0) || math.IsInf(s.Seconds, 0) {
		return fmt.Errorf("seconds %v, want a positive duration", s.Seconds)
	}
	if !nonNegative(s.Queries) {
		return fmt.Errorf("queries %v, want a count", s.Queries)
	}
	for _, c := range s.Counters {
		if c.Name == "" {
			return errors.New("a counter without a name")
		}
		if !nonNegative(c.PerSecond) || !nonNegative(c.PerQuery) {
			return fmt.Errorf("counter %s: perSecond %v, perQuery %v, want rates of a count", c.Name, c.PerSecond, c.PerQuery)
		}
	}
	for _, g := range s.Gauges {
		if g.Name == "" {
			return errors.New("a gauge without a name")
		}
	}
	for _, w := range s.Waits {
		if w.Event == "" {
			return errors.New("a wait without an event name")
		}
		if !nonNegative(w.SecondsPerSecond) {
			return fmt.Errorf("wait %s: secondsPerSecond %v", w.Event, w.SecondsPerSecond)
		}
	}
	return nil
}

// nonNegative: JSON never holds NaN or infinities, but a step built in Go can.
func nonNegative(v float64) bool { return v >= 0 && !math.IsInf(v, 0) }
