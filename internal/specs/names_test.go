package specs

import (
	"fmt"
	"maps"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

var hashSuffix = regexp.MustCompile(`-[0-9a-f]{8}$`)

func TestShorten(t *testing.T) {
	long := strings.Repeat("a", 60)
	tests := []struct {
		name   string
		limit  int
		parts  []string
		want   string // exact result, when known
		hashed bool   // cut with a hash suffix
	}{
		{name: "short kept", limit: 52, parts: []string{"pk-lookup", "mysql57"}, want: "pk-lookup-mysql57"},
		{name: "exactly the limit kept", limit: 10, parts: []string{"abcd", "efghi"}, want: "abcd-efghi"},
		{name: "one over the limit cut", limit: 10, parts: []string{"abcd", "efghij"}, hashed: true},
		{name: "long cut with hash", limit: 52, parts: []string{long, "target"}, hashed: true},
		{name: "digit first gets a letter", limit: 52, parts: []string{"57-run", "t"}, want: "mb-57-run-t"},
		{name: "digit first and long", limit: 63, parts: []string{"9" + long, "t"}, hashed: true},
		{name: "dots become dashes with a hash", limit: 52, parts: []string{"nightly.2026", "t"}, hashed: true},
		{name: "cut before a dash does not leave a dash", limit: 20, parts: []string{"abcdefghij-", "klmnopqrstu"}, hashed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Shorten(tc.limit, tc.parts...)
			if len(got) > tc.limit {
				t.Errorf("Shorten = %q, %d characters, over the limit %d", got, len(got), tc.limit)
			}
			if tc.want != "" && got != tc.want {
				t.Errorf("Shorten = %q, want %q", got, tc.want)
			}
			if tc.hashed != hashSuffix.MatchString(got) {
				t.Errorf("Shorten = %q: hash suffix %v, want %v", got, !tc.hashed, tc.hashed)
			}
			if tc.hashed {
				// The head is the start of the (prefixed, dash-for-dot) joined name.
				joined := strings.ReplaceAll(strings.Join(tc.parts, "-"), ".", "-")
				if joined[0] < 'a' || joined[0] > 'z' {
					joined = "mb-" + joined
				}
				if head := hashSuffix.ReplaceAllString(got, ""); !strings.HasPrefix(joined, head) || strings.HasSuffix(head, "-") {
					t.Errorf("Shorten = %q: head %q is not a clean start of %q", got, head, joined)
				}
			}
			if errs := validation.IsDNS1035Label(got); len(errs) > 0 {
				t.Errorf("Shorten = %q is not a DNS-1035 label: %v", got, errs)
			}
			if again := Shorten(tc.limit, tc.parts...); again != got {
				t.Errorf("Shorten is not stable: %q then %q", got, again)
			}
		})
	}
}

func TestShortenKeepsDistinctInputsDistinct(t *testing.T) {
	base := strings.Repeat("x", 70)
	inputs := [][]string{
		{base + "a", "t"}, {base + "b", "t"}, {base, "ta"}, {base, "tb"},
		// Differ only after the cut.
		{base, strings.Repeat("y", 30) + "1"}, {base, strings.Repeat("y", 30) + "2"},
		// "." and "-" must not meet in the same name.
		{"a.b", "t"}, {"a-b", "t"},
	}
	seen := map[string][]string{}
	for _, in := range inputs {
		got := Shorten(52, in...)
		if prev, ok := seen[got]; ok {
			t.Errorf("Shorten(%q) and Shorten(%q) are both %q", prev, in, got)
		}
		seen[got] = in
	}
}

func TestLabelValue(t *testing.T) {
	for _, s := range []string{"pk-lookup", strings.Repeat("r", 63), strings.Repeat("r", 64), strings.Repeat("r", 200)} {
		got := LabelValue(s)
		if len(s) <= 63 && got != s {
			t.Errorf("LabelValue(%d chars) = %q, want it unchanged", len(s), got)
		}
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
			t.Errorf("LabelValue(%d chars) = %q: %v", len(s), got, errs)
		}
	}
}

// TestNamesAtTheLimits builds every name for the longest run and target names the API allows
// and checks each against the rules of the object it names.
func TestNamesAtTheLimits(t *testing.T) {
	runNames := map[string]string{
		"63 chars":         strings.Repeat("r", 63),
		"63 chars, digit":  "1" + strings.Repeat("r", 62),
		"63 chars, dotted": strings.Repeat("r", 30) + "." + strings.Repeat("s", 32),
		"short":            "pk",
	}
	targets := map[string]string{
		"40 chars":        strings.Repeat("t", 40),
		"40 chars, digit": "5" + strings.Repeat("7", 39),
		"short":           "m",
	}
	steps := []string{"probe", "prepare", "warmup", "cleanup", LadderStep(0, 1), LadderStep(63, 1)}
	for rn, runName := range runNames {
		for tn, target := range targets {
			t.Run(rn+"/"+tn, func(t *testing.T) {
				run := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: runName, Namespace: "ns"}}
				check := func(kind, name string, rule func(string) []string) {
					t.Helper()
					if errs := rule(name); len(errs) > 0 {
						t.Errorf("%s %q: %v", kind, name, errs)
					}
				}
				server := ServerName(run, target)
				if len(server) > maxStatefulSetName {
					t.Errorf("ServerName %q has %d characters, more than %d", server, len(server), maxStatefulSetName)
				}
				check("Service/StatefulSet", server, validation.IsDNS1035Label)
				check("server pod", server+"-0", validation.IsDNS1123Label)
				check("controller-revision-hash label", server+"-7d9f8b6c5d", validation.IsValidLabelValue)
				check("Secret", ConnectionSecretName(run, target), validation.IsDNS1123Subdomain)
				check("ConfigMap", ReporterConfigMapName(run), validation.IsDNS1123Subdomain)
				check("ConfigMap", ResultsConfigMapName(run), validation.IsDNS1123Subdomain)
				for _, step := range steps {
					for _, attempt := range []Attempt{{Failed: 0}, {Failed: 1}, {Failed: 10}, {Restarts: 3, Failed: 2}, {Restarts: 3, Replaced: 10, Failed: 10}} {
						check("Job", JobName(run, target, step, attempt), validation.IsDNS1123Label)
					}
					for k, v := range ClientPodLabels(run, target, step) {
						check("label "+k, v, validation.IsValidLabelValue)
					}
				}
				for k, v := range ServerPodLabels(run, target) {
					check("label "+k, v, validation.IsValidLabelValue)
				}
			})
		}
	}
}

func TestJobNamesDistinct(t *testing.T) {
	run := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("r", 63)}}
	target := strings.Repeat("t", 40)
	seen := map[string]string{}
	for _, step := range []string{"probe", "prepare", "warmup", "cleanup", LadderStep(0, 1), LadderStep(1, 1), LadderStep(63, 1)} {
		for _, attempt := range []Attempt{{Failed: 0}, {Failed: 1}, {Failed: 2}, {Restarts: 1}, {Restarts: 1, Failed: 1}, {Restarts: 11},
			{Replaced: 2}, {Replaced: 2, Failed: 1}, {Restarts: 1, Replaced: 2}, {Replaced: 11}, {Restarts: 1, Replaced: 1}} {
			name := JobName(run, target, step, attempt)
			key := fmt.Sprintf("%s/%s", step, attempt)
			if prev, ok := seen[name]; ok {
				t.Errorf("JobName %q for both %s and %s", name, prev, key)
			}
			seen[name] = key
		}
	}
}

func TestLadderStep(t *testing.T) {
	for _, c := range []struct {
		i    int
		rep  int32
		want string
	}{{0, 1, "s01"}, {8, 1, "s09"}, {9, 1, "s10"}, {63, 1, "s64"}, {0, 0, "s01"}, {2, 2, "r2s03"}, {63, 10, "r10s64"}} {
		if got := LadderStep(c.i, c.rep); got != c.want {
			t.Errorf("LadderStep(%d, %d) = %q, want %q", c.i, c.rep, got, c.want)
		}
	}
}

func TestLabels(t *testing.T) {
	run := newRun()
	common := map[string]string{
		LabelManagedBy: "mysqlbench-operator",
		LabelName:      "mysqlbench",
		LabelRun:       "pk-lookup",
	}
	tests := []struct {
		name  string
		got   map[string]string
		extra map[string]string
	}{
		{"run", RunLabels(run), nil},
		{"target", TargetLabels(run, "mysql57"), map[string]string{LabelTarget: "mysql57"}},
		{"server pod", ServerPodLabels(run, "mysql57"), map[string]string{LabelTarget: "mysql57", LabelComponent: "server"}},
		{"client pod", ClientPodLabels(run, "mysql57", "s03"),
			map[string]string{LabelTarget: "mysql57", LabelComponent: "sysbench", LabelStep: "s03"}},
	}
	for _, tc := range tests {
		want := maps.Clone(common)
		maps.Copy(want, tc.extra)
		if !maps.Equal(tc.got, want) {
			t.Errorf("%s labels = %v, want %v", tc.name, tc.got, want)
		}
	}
	// Each call returns a fresh map: a caller adding a label must not change another's.
	a := TargetLabels(run, "mysql57")
	a["extra"] = "x"
	if _, ok := TargetLabels(run, "mysql57")["extra"]; ok {
		t.Error("TargetLabels returns a shared map")
	}
}

func TestAttemptString(t *testing.T) {
	for _, c := range []struct {
		a    Attempt
		want string
	}{
		{Attempt{}, "a0"},
		{Attempt{Failed: 2}, "a2"},
		{Attempt{Restarts: 1}, "r1a0"},
		{Attempt{Replaced: 3}, "i3a0"},
		{Attempt{Restarts: 2, Replaced: 3, Failed: 1}, "r2i3a1"},
	} {
		if got := c.a.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.a, got, c.want)
		}
	}
	ts := &v1.TargetStatus{ServerRestarts: 1, LastReplacement: &v1.ServerReplacement{Repetition: 4}}
	if got := AttemptOf(ts, 2); got != (Attempt{Restarts: 1, Replaced: 4, Failed: 2}) {
		t.Errorf("AttemptOf: %+v", got)
	}
}
