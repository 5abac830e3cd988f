package plugin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// storedResults is a run's results.json as the operator stored it.
func storedResults(t *testing.T, run string) *results.Doc {
	t.Helper()
	doc, err := results.Decode([]byte(resultsConfigMap(t, run).Data[report.KeyResultsJSON]))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// storedValues are the values of v in the target's steps at threads, as results.json holds them.
func storedValues(t *testing.T, doc *results.Doc, target string, threads int32, v results.ServerValue) []float64 {
	t.Helper()
	var out []float64
	for _, tr := range doc.Targets {
		for _, st := range tr.Steps {
			if tr.Name != target || st.Threads != threads {
				continue
			}
			s, ok, err := st.DecodedServer()
			if err != nil {
				t.Fatal(err)
			}
			if x, has, _ := v.Of(s); ok && has {
				out = append(out, x)
			}
		}
	}
	return out
}

// The fake kubelet served each ladder step's log with the captured MySQL 9.7 snapshots around it:
// the table has its counters per query by threads, the CPU the fake sampler gave, the top waits,
// and says what is missing: performance_schema OFF and no CPU on mariadb-psoff, the step whose
// end snapshot was missing (with the operator's Event's reason), the counters MySQL 9.7 lacks.
func TestServerShowsCountersCPUWaitsAndWhatIsMissing(t *testing.T) {
	needCluster(t)
	out, _, err := kubectlMysqlbench(t, "server", "pk")
	if err != nil {
		t.Fatal(err)
	}
	doc := storedResults(t, "pk")
	i := strings.Index(out, "Target mariadb-psoff")
	if !strings.HasPrefix(out, "Target mariadb (10.11.14-MariaDB") || i < 0 {
		t.Fatalf("no section per target:\n%s", out)
	}
	mariadb, psoff := out[:i], out[i:]

	header, rows := section(t, mariadb, "Server counters per query by threads:")
	if strings.Join(header, " ") != "COUNTER 1 2 4 8" {
		t.Errorf("header %q, want one column per thread count", header)
	}
	row := func(rows []string, name string) []string {
		for _, r := range rows {
			if f := fields(r); strings.HasPrefix(strings.TrimSpace(r), name+" ") {
				return f
			}
		}
		t.Errorf("no row %s in %q", name, rows)
		return nil
	}
	rowsRead := results.ServerValue{Counter: "Innodb_rows_read"}
	want := []string{"Innodb_rows_read"}
	for _, th := range []int32{1, 2, 4} {
		want = append(want, report.Sig3(storedValues(t, doc, "mariadb", th, rowsRead)[0]))
	}
	if got := row(rows, "Innodb_rows_read"); !slices.Equal(got, append(want, "-")) {
		t.Errorf("Innodb_rows_read row %q, want %q and - at 8 threads (not stored)", got, want)
	}
	cpu := row(rows, "CPU seconds (mysql container)")
	if len(cpu) != 8 || cpu[4] != report.Sig3(storedValues(t, doc, "mariadb", 1, results.ServerValue{})[0]) || cpu[7] != "-" {
		t.Errorf("CPU row %q", cpu)
	}
	if f := row(rows, "Threads_running (at end)"); len(f) != 7 || f[3] != "2" {
		t.Errorf("gauge row %q", f)
	}
	wh, waits := section(t, mariadb, "Top waits by threads")
	if strings.Join(wh, " ") != "EVENT 1 2 4 8" || len(waits) != 5 || !strings.HasPrefix(strings.TrimSpace(waits[0]), "io/table/sql/handler ") {
		t.Errorf("waits %q %q", wh, waits)
	}
	for _, w := range []string{
		"- server counters not stored at 8 threads: 1 start and 0 end server snapshots, want one of each",
		"- counters mariadb lacks or has disabled: status Rows_read (has Innodb_rows_read), Innodb_lsn_current (has Innodb_os_log_written); InnoDB metrics buffer_flush_batch_total_pages",
		"-: no value at that thread count",
	} {
		if !strings.Contains(mariadb+psoff, w) {
			t.Errorf("output lacks %q", w)
		}
	}
	if strings.Contains(mariadb, "performance_schema is OFF") || strings.Contains(mariadb, "CPU per query: not measured") {
		t.Errorf("mariadb's section says what only mariadb-psoff lacks")
	}
	for _, w := range []string{
		"- performance_schema is OFF on mariadb-psoff: no waits recorded (set performance_schema = ON in the target's myCnf, or targets[].synchWaits: true)",
		"- CPU per query: not measured (no CPU: the operator may not read the kubelet's stats; it needs get on nodes/proxy, cluster-wide)",
	} {
		if !strings.Contains(psoff, w) {
			t.Errorf("mariadb-psoff's section lacks %q", w)
		}
	}
	if f := row(section2(t, psoff), "Innodb_rows_read"); len(f) != 5 ||
		f[4] != report.Sig3(storedValues(t, doc, "mariadb-psoff", 8, rowsRead)[0]) {
		t.Errorf("mariadb-psoff's Innodb_rows_read row %q", f)
	}
	if strings.Contains(psoff, "Top waits") || strings.Contains(psoff, "CPU seconds (") || strings.Contains(psoff, "not stored") {
		t.Errorf("mariadb-psoff's section shows waits or CPU it does not have:\n%s", psoff)
	}
}

// section2 is the rows of a target's counters table.
func section2(t *testing.T, out string) []string {
	t.Helper()
	_, rows := section(t, out, "Server counters per query by threads:")
	return rows
}

// With repetitions a value is the median of the thread count's repetitions (-o json holds it
// exactly); --target, --counter and --per second narrow it.
func TestServerRepetitionsJSONAndFlags(t *testing.T) {
	needCluster(t)
	out, _, err := kubectlMysqlbench(t, "server", "base", "-o", "json", "--target", "mariadb", "--counter", "Innodb_rows_read",
		"--counter", "Rows_read", "--per", "second")
	if err != nil {
		t.Fatal(err)
	}
	var v serverView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Run != "base" || v.Per != "second" || v.Repetitions != 4 || len(v.Targets) != 1 || v.Targets[0].Name != "mariadb" {
		t.Fatalf("view %+v", v)
	}
	tv := v.Targets[0]
	var names []string
	for _, r := range tv.Rows {
		names = append(names, r.Kind+" "+r.Name)
	}
	if !slices.Equal(names, []string{"counter Innodb_rows_read", "counter Rows_read", "cpu CPU seconds (mysql container)"}) {
		t.Errorf("rows %q", names)
	}
	doc := storedResults(t, "base")
	for i, th := range tv.Threads {
		xs := storedValues(t, doc, "mariadb", th, results.ServerValue{Counter: "Innodb_rows_read", PerSecond: true})
		if len(xs) != 4 || tv.Rows[0].N[i] != 4 || *tv.Rows[0].Values[i] != report.Median(xs) {
			t.Errorf("%d threads: %v (of %d), want the median of %v", th, *tv.Rows[0].Values[i], tv.Rows[0].N[i], xs)
		}
		if tv.Rows[1].Values[i] != nil || *tv.Rows[2].Values[i] != 0.9 {
			t.Errorf("%d threads: Rows_read %v, CPU %v cores", th, tv.Rows[1].Values[i], *tv.Rows[2].Values[i])
		}
	}
	if len(tv.Waits) == 0 || !tv.PerformanceSchema ||
		!slices.Contains(tv.Missing, "counters mariadb lacks or has disabled: status Rows_read (has Innodb_rows_read)") {
		t.Errorf("waits %d, missing %q", len(tv.Waits), tv.Missing)
	}

	table, _, err := kubectlMysqlbench(t, "server", "base")
	if err != nil || !strings.Contains(table, "Server counters per query by threads (median of 4 repetitions):") {
		t.Errorf("the table does not say its values are medians (%v)", err)
	}
	csv, _, err := kubectlMysqlbench(t, "server", "cand", "-o", "csv", "--counter", "Questions")
	if err != nil || !strings.HasPrefix(csv, "run,target,threads,kind,source,name,unit,value,steps\n") ||
		!strings.Contains(csv, "cand,mariadb-psoff,2,counter,status,Questions,per query,") ||
		!strings.Contains(csv, `cand,mariadb-psoff,,missing,,"performance_schema is OFF on mariadb-psoff`) {
		t.Errorf("csv (%v):\n%s", err, csv)
	}
}

func TestServerErrors(t *testing.T) {
	needCluster(t)
	for _, c := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"server"}, []string{"needs RUN"}},
		{[]string{"server", "nope"}, []string{`"nope" not found in namespace "bench"`, "get -A"}},
		{[]string{"-n", nsStuck, "server", "stuck"}, []string{"not finished yet", "kubectl mysqlbench get stuck -w"}},
		{[]string{"server", "pk", "--target", "mysql84"}, []string{`no target "mysql84"`, "its targets: mariadb, mariadb-psoff"}},
		{[]string{"server", "pk", "--counter", "innodb_rows_read"}, []string{`--counter "innodb_rows_read"`, "did you mean Innodb_rows_read?"}},
		{[]string{"server", "pk", "--counter", "Innodb_rows_reed"}, []string{"no such server counter", "case-sensitive", "Questions, Queries"}},
		{[]string{"server", "pk", "--per", "minute"}, []string{`--per "minute"`, "--per query or --per second"}},
		{[]string{"server", "pk", "-o", "xml"}, []string{`"xml"`, "allowed formats are"}},
	} {
		_, _, err := kubectlMysqlbench(t, c.args...)
		checkError(t, strings.Join(c.args, " "), err, c.wants...)
	}
}

// plot draws the server metrics by threads and says on stderr, as under the chart, which targets
// and steps have none.
func TestPlotServerMetrics(t *testing.T) {
	needCluster(t)
	dir := t.TempDir()
	for _, c := range []struct {
		file  string
		args  []string
		notes []string
	}{
		{"cpu.png", []string{"pk", "--metric", "cpu-per-query"}, []string{
			"Note: mariadb-psoff not drawn: CPU not measured: no CPU: the operator may not read the kubelet's stats",
			"Note: mariadb: no server CPU per query at 8 threads (no server counters stored)",
		}},
		{"cores.png", []string{"base", "cand", "--metric", "cpu-per-second"}, []string{
			"Note: base/mariadb-psoff, cand/mariadb-psoff not drawn: CPU not measured",
		}},
		{"rows-read.png", []string{"base", "--metric", "counter:Innodb_rows_read"}, nil},
		{"bytes-sent.png", []string{"pk", "--metric", "counter:Bytes_sent", "--per", "second", "--relative-to", "mariadb-psoff"}, []string{
			"Note: mariadb: no Bytes_sent per second at 8 threads (no server counters stored)",
		}},
	} {
		path := filepath.Join(dir, c.file)
		_, errOut, err := kubectlMysqlbench(t, append([]string{"plot", "--output-file", path}, c.args...)...)
		if err != nil {
			t.Errorf("plot %s: %v", c.file, err)
			continue
		}
		decodePNG(t, path)
		for _, n := range c.notes {
			if !strings.Contains(errOut, n) {
				t.Errorf("plot %s: stderr lacks %q:\n%s", c.file, n, errOut)
			}
		}
		if c.notes == nil && strings.Contains(errOut, "Note:") {
			t.Errorf("plot %s: notes for a chart that leaves nothing out:\n%s", c.file, errOut)
		}
	}
	png := filepath.Join(dir, "x.png")
	for _, c := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"--metric", "counter:Rows_read"}, []string{"no target of run bench/pk has Rows_read per query",
			"mariadb, mariadb-psoff not drawn: the server lacks Rows_read or has it disabled (other servers count it as Innodb_rows_read)"}},
		{[]string{"--metric", "counter:innodb_rows_read"}, []string{"did you mean counter:Innodb_rows_read?"}},
		{[]string{"--metric", "cpu-per-query", "--timeline"}, []string{"not a per-second series", "by threads"}},
		{[]string{"--metric", "cpu-per-query", "--per", "second"}, []string{"draw cpu-per-second"}},
		{[]string{"--metric", "counter:Questions", "--per", "hour"}, []string{"--per query or --per second"}},
		{[]string{"--metric", "cpu-per-query", "--relative-to", "mariadb-psoff"}, []string{"relative to mariadb-psoff: it has no server CPU per query"}},
	} {
		_, _, err := kubectlMysqlbench(t, append([]string{"plot", "pk", "--output-file", png}, c.args...)...)
		checkError(t, strings.Join(c.args, " "), err, c.wants...)
	}
	if _, err := os.Stat(png); err == nil {
		t.Errorf("a refused chart was written")
	}
}

// The step the operator could not store server counters for has none in results.json and
// server.csv either: the plugin shows what the report has.
func TestServerAgreesWithServerCSV(t *testing.T) {
	needCluster(t)
	csv := resultsConfigMap(t, "pk").Data[report.KeyServerCSV]
	doc := storedResults(t, "pk")
	for _, th := range []int32{1, 2, 4, 8} {
		inCSV := strings.Contains(csv, fmt.Sprintf("\npk,mariadb,%d,", th))
		inJSON := len(storedValues(t, doc, "mariadb", th, results.ServerValue{Counter: "Questions"})) > 0
		if inCSV != (th != 8) || inJSON != inCSV {
			t.Errorf("mariadb at %d threads: rows in server.csv %v, counters in results.json %v", th, inCSV, inJSON)
		}
	}
}
