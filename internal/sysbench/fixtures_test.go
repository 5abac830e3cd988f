package sysbench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fixturesDir is the shared directory of real sysbench 1.0.20 outputs.
func fixturesDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MYSQLBENCH_FIXTURES")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "fixtures", "sysbench")
	}
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("sysbench fixtures missing in CI (set MYSQLBENCH_FIXTURES): %v", err)
		}
		t.Skipf("sysbench fixtures not found (set MYSQLBENCH_FIXTURES): %v", err)
	}
	return dir
}

// golden is what a captured output means to the operator.
type golden struct {
	ExitCode      int32          `json:"exitCode"`
	Intervals     int            `json:"intervals"`
	LastInterval  *load.Interval `json:"lastInterval,omitempty"`
	Final         *load.Final    `json:"final,omitempty"`
	FatalLines    int            `json:"fatalLines"`
	Failure       *load.Failure  `json:"failure"`
	IgnoredRecord int            `json:"ignoredJsonLines,omitempty"`
	// Step is what a ladder step of that output measured, for outputs of a known step duration
	// that Classify passed.
	Step *stepVerdict `json:"step,omitempty"`
}

// stepVerdict is what the operator makes of a ladder step that exited with a result.
type stepVerdict struct {
	Seconds          float64       `json:"stepSeconds"`
	ToleranceSeconds float64       `json:"toleranceSeconds"`
	MeasuredNothing  *load.Failure `json:"measuredNothing"`
	OverDuration     bool          `json:"overDuration"`
}

func readRC(t *testing.T, path string) int32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return int32(rc)
}

// checkGolden parses output, classifies it with rc and compares with testdata/<name>.golden.json.
func checkGolden(t *testing.T, name string, output []byte, rc int32) golden {
	t.Helper()
	return checkGoldenStep(t, name, output, rc, 0)
}

// checkGoldenStep is checkGolden for the output of a ladder step of duration step (0: not one),
// whose golden also holds what the step measured.
func checkGoldenStep(t *testing.T, name string, output []byte, rc int32, step time.Duration) golden {
	t.Helper()
	out, err := ParseOutput(bytes.NewReader(output))
	if err != nil {
		t.Fatalf("ParseOutput: %v", err)
	}
	got := golden{ExitCode: rc, Intervals: len(out.Intervals), Final: out.Final, FatalLines: len(out.Fatal),
		Failure: Classify(rc, out), IgnoredRecord: foreignJSONLines(output)}
	if n := len(out.Intervals); n > 0 {
		got.LastInterval = &out.Intervals[n-1]
	}
	if step > 0 && got.Failure == nil {
		got.Step = &stepVerdict{Seconds: step.Seconds(), ToleranceSeconds: OverrunTolerance(step).Seconds(),
			MeasuredNothing: MeasuredNothing(*out.Final, step), OverDuration: OverDuration(*out.Final, step)}
	}
	data, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, '\n')
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it, then review it)", err)
	}
	if !bytes.Equal(want, data) {
		t.Errorf("%s differs from the parse:\n%s\nwant:\n%s", path, data, want)
	}
	return got
}

// foreignJSONLines counts JSON lines of a type this package does not read.
func foreignJSONLines(output []byte) int {
	n := 0
	for _, line := range strings.Split(string(output), "\n") {
		var head struct{ Type string }
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &head) == nil &&
			head.Type != recordInterval && head.Type != recordFinal {
			n++
		}
	}
	return n
}

// The root cause each failure fixture must be classified as, stated independently of the golden
// files so that regenerating them cannot quietly change it.
var wantFailureCodes = map[string]int{
	"fail_wrong_password":       1045,
	"fail_not_listening":        2002,
	"fail_table_missing":        1146,
	"fail_600_threads":          1040,
	"fail_server_killed_midrun": 2013,
	"streams_wrong_password":    1045,
	"streams_bad_option":        0,
}

var wantReasonPhrase = map[string]string{
	"fail_wrong_password":       "access denied for the benchmark user",
	"fail_not_listening":        "cannot connect to the server",
	"fail_table_missing":        "not prepared",
	"fail_600_threads":          "max_connections is below the step's thread count",
	"fail_server_killed_midrun": "lost connection to the server",
	"streams_wrong_password":    "access denied",
	"streams_bad_option":        "invalid option: --no-such-option=1",
}

// TestFixtures walks every file of the shared fixture directory and gives each one an assertion;
// a file nothing checks fails the test, so new fixtures cannot go unnoticed.
func TestFixtures(t *testing.T) {
	dir := fixturesDir(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	have := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	read := func(t *testing.T, name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	version := pinnedUpstreamVersion(t)

	for _, e := range entries {
		name := e.Name()
		base := strings.TrimSuffix(name, filepath.Ext(name))
		switch {
		case name == "README.md":
			t.Run(name, func(t *testing.T) {
				if !bytes.Contains(read(t, name), []byte("sysbench "+version)) {
					t.Errorf("README does not describe sysbench %s, the version the image pins", version)
				}
			})
			covered[name] = true

		case name == "overhead_summary.txt":
			t.Run(name, func(t *testing.T) { checkOverheadSummary(t, read(t, name)) })
			covered[name] = true

		case name == "help_general.txt":
			t.Run(name, func(t *testing.T) {
				// sysbench --help prints no version banner.
				checkBuildOptionsExist(t, read(t, name))
			})
			covered[name] = true

		case name == "help_oltp_point_select.txt":
			t.Run(name, func(t *testing.T) {
				help := read(t, name)
				checkBanner(t, help, version)
				// 1.0.20 lists no options for the stock scripts' help, so the script options Build
				// passes (--tables, --table-size) are checked against oltp_common.lua instead.
				if !bytes.Contains(help, []byte("oltp_point_select options:")) {
					t.Errorf("not the help of oltp_point_select:\n%s", help)
				}
			})
			covered[name] = true

		case strings.HasSuffix(name, ".txt") && have(base+".rc"):
			t.Run(base, func(t *testing.T) {
				output := read(t, name)
				checkBanner(t, output, version)
				rc := readRC(t, filepath.Join(dir, base+".rc"))
				g := checkGolden(t, filepath.Join("fixtures", base), output, rc)
				checkRunFixture(t, base, g)
				if base == "hook_dump_stat_fields" {
					checkReporterStatKeys(t, output)
				}
				if have(base + ".cmd") {
					checkCmd(t, read(t, base+".cmd"), output)
				}
			})
			covered[name], covered[base+".rc"] = true, true
			if have(base + ".cmd") {
				covered[base+".cmd"] = true
			}

		case strings.HasSuffix(name, ".stdout") && have(base+".stderr") && have(base+".rc"):
			t.Run(base, func(t *testing.T) {
				stdout, stderr := read(t, name), read(t, base+".stderr")
				checkBanner(t, stdout, version)
				checkStreams(t, stderr)
				rc := readRC(t, filepath.Join(dir, base+".rc"))
				g := checkGolden(t, filepath.Join("fixtures", base), append(slices.Clone(stdout), stderr...), rc)
				checkRunFixture(t, base, g)
			})
			covered[name], covered[base+".stderr"], covered[base+".rc"] = true, true, true
		}
	}
	for _, e := range entries {
		if !covered[e.Name()] {
			t.Errorf("fixture %s is not covered by any assertion: teach TestFixtures about it", e.Name())
		}
	}
	for name := range wantFailureCodes {
		if !covered[name+".txt"] && !covered[name+".stdout"] {
			t.Errorf("expected failure fixture %s is missing", name)
		}
	}
}

// checkRunFixture asserts what every captured output must mean. None of the shared fixtures ran
// through this package's reporter, so none of them is a success: plain sysbench text is not the
// contract, and the hook_json ones come from another wrapper with other field names.
func checkRunFixture(t *testing.T, base string, g golden) {
	t.Helper()
	if g.Failure == nil {
		t.Fatalf("classified as success, but no fixture ran through this reporter")
	}
	if g.Final != nil || g.Intervals != 0 {
		t.Errorf("found reporter records in output the reporter did not produce: %+v", g)
	}
	if strings.HasPrefix(base, "hook_json_") && g.IgnoredRecord == 0 {
		t.Errorf("the foreign JSON lines were not recognised as such")
	}
	code, isFailure := wantFailureCodes[base]
	switch {
	case isFailure:
		if g.ExitCode == 0 {
			t.Errorf("failure fixture exited 0")
		}
		if g.Failure.Code != code {
			t.Errorf("classified as code %d (%s), want %d", g.Failure.Code, g.Failure.Reason, code)
		}
		if phrase := wantReasonPhrase[base]; !strings.Contains(g.Failure.Reason, phrase) {
			t.Errorf("reason %q does not say %q", g.Failure.Reason, phrase)
		}
		if !strings.HasPrefix(g.Failure.Reason, fmt.Sprintf("error %d: ", code)) && code != 0 {
			t.Errorf("reason %q does not start with the MySQL error code", g.Failure.Reason)
		}
		if strings.Contains(g.Failure.Reason, "sbtest'@") && strings.Contains(g.Failure.Reason, "password: YES") &&
			strings.Contains(g.Failure.Reason, "wrong") {
			t.Errorf("reason quotes a password")
		}
	case g.ExitCode == 0:
		if g.FatalLines != 0 {
			t.Errorf("successful plain run has %d FATAL lines", g.FatalLines)
		}
		if !strings.Contains(g.Failure.Reason, "without a final report") {
			t.Errorf("a plain sysbench run must fail for lack of a final report, got %q", g.Failure.Reason)
		}
	default:
		t.Errorf("unexpected failing fixture %s: add it to wantFailureCodes", base)
	}
	if len(g.Failure.Reason) > MaxReason {
		t.Errorf("reason is %d bytes long", len(g.Failure.Reason))
	}
}

// checkBanner asserts that the output comes from the sysbench version the image pins.
func checkBanner(t *testing.T, output []byte, version string) {
	t.Helper()
	if !bytes.HasPrefix(output, []byte("sysbench "+version+" ")) {
		first, _, _ := bytes.Cut(output, []byte("\n"))
		t.Errorf("output starts with %q, not the banner of the pinned sysbench %s", first, version)
	}
}

// checkStreams asserts sysbench's stream split the parser relies on: errors (FATAL lines) on
// stdout, only option errors on stderr, so a log holding only stdout still explains a failure.
func checkStreams(t *testing.T, stderr []byte) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(string(stderr)), "\n") {
		if line != "" && !strings.HasPrefix(line, "invalid option") {
			t.Errorf("unexpected stderr line %q", line)
		}
	}
	if bytes.Contains(stderr, []byte("FATAL")) {
		t.Errorf("FATAL on stderr")
	}
}

var cmdThreads = regexp.MustCompile(`--threads=(\d+)`)
var headerThreads = regexp.MustCompile(`(?m)^Number of threads: (\d+)$`)

// checkCmd checks a fixture's command line against its output: the threads sysbench reports
// running are the threads the command asked for (1 when it did not ask).
func checkCmd(t *testing.T, cmd, output []byte) {
	t.Helper()
	if !bytes.HasPrefix(cmd, []byte("sysbench ")) {
		t.Fatalf("not a sysbench command line: %q", cmd)
	}
	m := headerThreads.FindSubmatch(output)
	if m == nil {
		return // prepare and cleanup print no header
	}
	want := "1"
	if c := cmdThreads.FindSubmatch(cmd); c != nil {
		want = string(c[1])
	}
	if string(m[1]) != want {
		t.Errorf("output says %s threads, command asked for %s", m[1], want)
	}
}

// checkBuildOptionsExist asserts that every option Build passes to sysbench exists in this build
// of sysbench (general options from --help, the rest from the stock scripts' option table).
func checkBuildOptionsExist(t *testing.T, help []byte) {
	t.Helper()
	known := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+--([a-z0-9-]+)`).FindAllSubmatch(help, -1) {
		known[string(m[1])] = true
	}
	common, err := os.ReadFile("/usr/share/sysbench/oltp_common.lua")
	scriptOptions := []string{"tables", "table-size"}
	if err == nil {
		for _, o := range scriptOptions {
			if !bytes.Contains(common, []byte("   "+strings.ReplaceAll(o, "-", "_")+" =")) {
				t.Errorf("oltp_common.lua defines no option %s", o)
			}
		}
	}
	for _, o := range scriptOptions {
		known[o] = true
	}
	w := pointSelect(4)
	for _, step := range []load.Step{{Phase: load.PhasePrepare}, {Phase: load.PhaseRun, Threads: 1, Duration: time.Second}, {Phase: load.PhaseCleanup}} {
		inv, err := Build(w, testSecret, step)
		if err != nil {
			t.Fatal(err)
		}
		// The launcher adds --config-file and --mysql-db; the option file sets mysql-password.
		for _, a := range append(slices.Clone(inv.Args), "--mysql-db=", "--config-file=", "--mysql-password=") {
			if !strings.HasPrefix(a, "--") {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if !known[name] {
				t.Errorf("%s: sysbench 1.0.20 has no option --%s", step.Phase, name)
			}
		}
	}
}

// checkReporterStatKeys asserts that the reporter reads only stat keys sysbench 1.0.20 passes
// to each hook (a misspelt key would be nil and report zeros).
func checkReporterStatKeys(t *testing.T, dump []byte) {
	t.Helper()
	keys := map[string]map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(dump))
	for sc.Scan() {
		kind, fields, ok := strings.Cut(sc.Text(), ": ")
		if !ok || (kind != "intermediate" && kind != "cumulative") {
			continue
		}
		if keys[kind] == nil {
			keys[kind] = map[string]bool{}
		}
		for _, f := range strings.Fields(fields) {
			k, _, _ := strings.Cut(f, "=")
			keys[kind][k] = true
		}
	}
	src := ReporterScript()
	for kind, hook := range map[string]string{"intermediate": "report_intermediate", "cumulative": "report_cumulative"} {
		body := luaFunction(t, src, "function sysbench.hooks."+hook)
		used := regexp.MustCompile(`stat\.([a-z_]+)`).FindAllStringSubmatch(body, -1)
		if len(used) == 0 {
			t.Errorf("%s reads no stat keys", hook)
		}
		for _, m := range used {
			if !keys[kind][m[1]] {
				t.Errorf("%s reads stat.%s, which sysbench 1.0.20 does not pass (keys: %v)", hook, m[1], keys[kind])
			}
		}
	}
}

// luaFunction returns the source of a top-level Lua function: from its header to the first
// "end" at column 0.
func luaFunction(t *testing.T, src, header string) string {
	t.Helper()
	start := strings.Index(src, header)
	if start < 0 {
		t.Fatalf("reporter has no %q", header)
	}
	end := strings.Index(src[start:], "\nend\n")
	if end < 0 {
		t.Fatalf("cannot find the end of %q", header)
	}
	return src[start : start+end]
}

// checkOverheadSummary checks the measurement behind "the JSON hooks cost nothing": the mean QPS
// of runs with JSON hooks is within the spread of plain runs, and every plain run produced a
// number (an NA is the one-in-a-hundred abort the design treats as a failed step).
func checkOverheadSummary(t *testing.T, data []byte) {
	t.Helper()
	byKind := map[string][]float64{}
	na := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		file, value, ok := strings.Cut(line, " ")
		m := regexp.MustCompile(`^overhead_(.+)_run\d+\.txt$`).FindStringSubmatch(file)
		if !ok || m == nil {
			t.Fatalf("unexpected line %q", line)
		}
		if value == "NA" {
			na[m[1]]++
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		byKind[m[1]] = append(byKind[m[1]], v)
	}
	plain, hooks := byKind["plain"], byKind["jsonhook_ri1"]
	if len(plain) < 5 || len(hooks) < 5 || na["plain"] != 0 {
		t.Fatalf("summary lacks runs: %v (NA: %v)", byKind, na)
	}
	mean := func(xs []float64) float64 {
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s / float64(len(xs))
	}
	ratio := mean(hooks) / mean(plain)
	if ratio < 0.95 || ratio > 1.05 {
		t.Errorf("JSON hooks / plain QPS = %.3f: the recorded runs show a cost", ratio)
	}
}

// pinnedUpstreamVersion reads the sysbench version the image pins (1.0.20 from 1.0.20+ds-5).
func pinnedUpstreamVersion(t *testing.T) string {
	t.Helper()
	pkgs := readPackages(t)
	v, ok := pkgs["sysbench"]
	if !ok {
		t.Fatalf("images/sysbench/packages.txt does not pin sysbench")
	}
	upstream, _, _ := strings.Cut(v, "+")
	upstream, _, _ = strings.Cut(upstream, "-")
	if i := strings.Index(upstream, ":"); i >= 0 {
		upstream = upstream[i+1:]
	}
	return upstream
}
