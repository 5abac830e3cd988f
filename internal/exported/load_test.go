package exported

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/report"
)

// runOf is one expected run of a Set: its name, whether it has its object and results, and
// from how many files it was read.
type runOf struct {
	ns, name        string
	object, results bool
	files           int
}

func TestLoad(t *testing.T) {
	pk := finishedRun("bench", "pk", "uid-pk", 1)
	cand := finishedRun("bench", "cand", "uid-cand", 0.9)
	pkData := resultsData(t, pk)
	pkJSON := []byte(pkData[report.KeyResultsJSON])
	// pk deleted and created again under its name: another UID, a later start.
	again := finishedRun("bench", "pk", "uid-pk-2", 1.1)
	again.Status.StartTime = ptr.To(metav1.NewTime(t0.Add(24 * time.Hour)))
	againJSON := []byte(resultsData(t, again)[report.KeyResultsJSON])
	manifest := pk.DeepCopy()
	manifest.Status = v1.BenchmarkRunStatus{}
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{pk, cand}}
	cm := corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "pk-results", Namespace: "bench"}, Data: pkData}
	deployment := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n")
	sched := &v1.BenchmarkSchedule{TypeMeta: metav1.TypeMeta{APIVersion: v1.GroupVersion.String(), Kind: "BenchmarkSchedule"},
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "bench", UID: "uid-nightly"}}
	event := corev1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:     metav1.ObjectMeta{Name: "pk.1", Namespace: "bench"},
		InvolvedObject: corev1.ObjectReference{UID: "uid-pk"}, Reason: "ServerStatsUnavailable"}
	bundleDir := func(t *testing.T, dir string) string {
		p := filepath.Join(dir, "pk-bundle")
		if err := WriteDir(p, bundleFiles(t, pk)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bundleTar := func(t *testing.T, dir string) string {
		p := filepath.Join(dir, "pk.tar.gz")
		if err := WriteTarGz(p, "pk", bundleFiles(t, pk), t0); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// files writes files and gives their paths, in order.
	files := func(fs map[string][]byte, paths ...string) func(*testing.T, string) []string {
		return func(t *testing.T, dir string) []string {
			write(t, dir, fs)
			var out []string
			for _, p := range paths {
				out = append(out, filepath.Join(dir, p))
			}
			return out
		}
	}

	for _, c := range []struct {
		name  string
		paths func(t *testing.T, dir string) []string
		// want are the runs of the Set, in order; wantErr the words of the error instead.
		want    []runOf
		wantErr []string
		check   func(t *testing.T, s *Set)
	}{
		{name: "results.json", paths: files(map[string][]byte{"pk.json": pkJSON}, "pk.json"),
			want: []runOf{{"bench", "pk", false, true, 1}},
			check: func(t *testing.T, s *Set) {
				if got := s.Runs[0].Results[report.KeyResultsJSON]; got != string(pkJSON) {
					t.Errorf("results.json is not kept byte for byte")
				}
			}},
		{name: "run YAML", paths: files(map[string][]byte{"pk.yaml": yamlOf(t, pk)}, "pk.yaml"),
			want: []runOf{{"bench", "pk", true, false, 1}}},
		{name: "run JSON", paths: files(map[string][]byte{"pk.json": must(json.Marshal(pk))}, "pk.json"),
			want: []runOf{{"bench", "pk", true, false, 1}}},
		{name: "run and its results from two paths",
			paths: files(map[string][]byte{"pk.yaml": yamlOf(t, pk), "pk.json": pkJSON}, "pk.yaml", "pk.json"),
			want:  []runOf{{"bench", "pk", true, true, 2}},
			check: func(t *testing.T, s *Set) {
				if a, b := s.FromPath(0), s.FromPath(1); len(a) != 1 || len(b) != 1 || a[0] != b[0] || len(s.FromPath(2)) != 0 {
					t.Errorf("FromPath: %v, %v", a, b)
				}
			}},
		{name: "a directory: a List, results.json files, other files",
			paths: files(map[string][]byte{
				"runs.yaml": yamlOf(t, list), "pk.json": pkJSON, "cand.json": []byte(resultsData(t, cand)[report.KeyResultsJSON]),
				"qps.png": {0x89, 'P', 'N', 'G'}, "notes/deploy.yaml": deployment,
			}, "."),
			// In the order read: a directory's files by name, cand.json first.
			want: []runOf{{"bench", "cand", true, true, 2}, {"bench", "pk", true, true, 2}},
			check: func(t *testing.T, s *Set) {
				if len(s.Skipped) != 1 || !strings.Contains(s.Skipped[0], "deploy.yaml: a Deployment (apps/v1)") {
					t.Errorf("skipped %q, want the Deployment only (the PNG is not read)", s.Skipped)
				}
			}},
		{name: "a stream of YAML documents",
			paths: files(map[string][]byte{"runs.yaml": append(append(yamlOf(t, pk), "---\n"...), yamlOf(t, cand)...)}, "runs.yaml"),
			want:  []runOf{{"bench", "pk", true, false, 1}, {"bench", "cand", true, false, 1}}},
		{name: "the results ConfigMap", paths: files(map[string][]byte{"cm.yaml": yamlOf(t, cm)}, "cm.yaml"),
			want: []runOf{{"bench", "pk", false, true, 1}},
			check: func(t *testing.T, s *Set) {
				if got := s.Runs[0].Results[report.KeyReportMD]; got != pkData[report.KeyReportMD] {
					t.Errorf("the ConfigMap's report.md is not kept")
				}
			}},
		{name: "the same run read twice is one",
			paths: files(map[string][]byte{"a/pk.yaml": yamlOf(t, pk), "b/pk.yaml": yamlOf(t, pk), "b/pk.json": pkJSON}, "a", "b"),
			want:  []runOf{{"bench", "pk", true, true, 3}}},
		{name: "a run created again under its name: two runs, each with its own results",
			paths: files(map[string][]byte{"old/pk.yaml": yamlOf(t, pk), "old/pk.json": pkJSON,
				"new/pk.yaml": yamlOf(t, again), "new/pk.json": againJSON}, "."),
			want: []runOf{{"bench", "pk", true, true, 2}, {"bench", "pk", true, true, 2}},
			check: func(t *testing.T, s *Set) {
				for _, r := range s.Runs {
					if !timesEqual(r.Object.Status.StartTime, r.Doc.Run.StartTime) {
						t.Errorf("%s: results of another start", r)
					}
				}
				_, err := s.Find("", "pk")
				checkErr(t, err, `hold 2 different runs named "pk"`, "started 2026-11-02T10:00:00Z", "started 2026-11-03T10:00:00Z",
					"--from FILE")
			}},
		{name: "results.json of a run of another start is not given to the object",
			paths: files(map[string][]byte{"pk.yaml": yamlOf(t, pk), "pk.json": againJSON}, "."),
			want:  []runOf{{"bench", "pk", false, true, 1}, {"bench", "pk", true, false, 1}}},
		{name: "one name in two namespaces",
			paths: files(map[string][]byte{"a.yaml": yamlOf(t, pk), "b.yaml": yamlOf(t, finishedRun("perf", "pk", "uid-perf", 1))}, "."),
			want:  []runOf{{"bench", "pk", true, false, 1}, {"perf", "pk", true, false, 1}},
			check: func(t *testing.T, s *Set) {
				_, err := s.Find("", "pk")
				checkErr(t, err, "hold 2 different runs", "-n")
				if r, err := s.Find("perf", "pk"); err != nil || r.Namespace != "perf" {
					t.Errorf("Find(perf, pk) = %v, %v", r, err)
				}
				_, err = s.Find("dev", "pk")
				checkErr(t, err, `no run "pk" in namespace dev`, "bench/pk", "perf/pk")
				_, err = s.Find("", "nope")
				checkErr(t, err, `no run named "nope"`, "they hold bench/pk", "perf/pk")
				_, err = s.Only()
				checkErr(t, err, "hold 2 runs: name the one you mean")
			}},
		{name: "schedules and Events (one Event in two files is one)", paths: files(map[string][]byte{"pk.yaml": yamlOf(t, pk),
			"sched.yaml": yamlOf(t, sched), "event.yaml": yamlOf(t, event),
			"events.yaml": yamlOf(t, map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{event}})}, "."),
			want: []runOf{{"bench", "pk", true, false, 1}},
			check: func(t *testing.T, s *Set) {
				if s.Schedule("bench", "nightly", "") == nil || s.Schedule("bench", "nightly", "other") != nil {
					t.Errorf("schedules %v", s.Schedules)
				}
				if got := s.EventsOf("uid-pk"); len(got) != 1 || len(s.EventsOf("uid-cand")) != 0 {
					t.Errorf("Events of pk: %v", got)
				}
			}},
		{name: "a bundle directory", paths: func(t *testing.T, dir string) []string { return []string{bundleDir(t, dir)} },
			want: []runOf{{"bench", "pk", true, true, 1}},
			check: func(t *testing.T, s *Set) {
				r := s.Runs[0]
				if r.Bundle == nil || !r.Bundle.Events || len(s.EventsOf("uid-pk")) != 1 || len(s.Skipped) != 0 {
					t.Errorf("manifest %+v, events %v, skipped %q", r.Bundle, s.Events, s.Skipped)
				}
				for k, v := range pkData {
					if r.Results[k] != v {
						t.Errorf("the bundle's %s differs from the ConfigMap's", k)
					}
				}
			}},
		{name: "a bundle archive", paths: func(t *testing.T, dir string) []string { return []string{bundleTar(t, dir)} },
			want: []runOf{{"bench", "pk", true, true, 1}}},
		{name: "a directory of a bundle, its archive and its results.json: one run",
			paths: func(t *testing.T, dir string) []string {
				bundleDir(t, dir)
				bundleTar(t, dir)
				write(t, dir, map[string][]byte{"pk.json": pkJSON})
				return []string{dir}
			},
			want: []runOf{{"bench", "pk", true, true, 3}}},

		{name: "symbolic links: to a file read, to a directory not followed",
			paths: func(t *testing.T, dir string) []string {
				write(t, dir, map[string][]byte{"exports/pk.json": pkJSON, "view/.keep": nil})
				for link, target := range map[string]string{"view/pk.json": "../exports/pk.json", "view/loop": ".."} {
					if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
						t.Skip("no symbolic links here:", err)
					}
				}
				return []string{filepath.Join(dir, "view")}
			},
			want: []runOf{{"bench", "pk", false, true, 1}},
			check: func(t *testing.T, s *Set) {
				if len(s.Skipped) != 1 || !strings.Contains(s.Skipped[0], "loop: a symbolic link to a directory") {
					t.Errorf("skipped %q", s.Skipped)
				}
			}},

		// Bad input: what is wrong and what to give instead.
		{name: "no such file", paths: files(nil, "nope.json"), wantErr: []string{"nope.json: no such file or directory", "check the path"}},
		{name: "not a run", paths: files(map[string][]byte{"d.yaml": deployment}, "d.yaml"),
			wantErr: []string{"d.yaml holds a Deployment (apps/v1), not a BenchmarkRun, results.json or bundle", "kubectl get benchmarkrun RUN -o yaml"}},
		{name: "a run without status", paths: files(map[string][]byte{"run.yaml": yamlOf(t, manifest)}, "run.yaml"),
			wantErr: []string{"BenchmarkRun pk has no status", "kubectl get benchmarkrun pk -o yaml", "export pk --bundle DIR"}},
		{name: "a run without status in a directory is passed over, and said",
			paths:   files(map[string][]byte{"run.yaml": yamlOf(t, manifest)}, "."),
			wantErr: []string{"BenchmarkRun pk has no status"}},
		{name: "a List with a run just created, without status: the others are read",
			paths: files(map[string][]byte{"runs.yaml": yamlOf(t, map[string]any{"apiVersion": "v1", "kind": "List",
				"items": []any{manifest, cand}})}, "runs.yaml"),
			want: []runOf{{"bench", "cand", true, false, 1}},
			check: func(t *testing.T, s *Set) {
				if len(s.Skipped) != 1 || !strings.Contains(s.Skipped[0], "(item 0): BenchmarkRun pk has no status") {
					t.Errorf("skipped %q", s.Skipped)
				}
			}},
		{name: "broken JSON", paths: files(map[string][]byte{"pk.json": pkJSON[:100]}, "pk.json"), wantErr: []string{"pk.json: not valid JSON"}},
		{name: "an empty file", paths: files(map[string][]byte{"pk.json": nil}, "pk.json"), wantErr: []string{"pk.json: the file is empty"}},
		{name: "another formatVersion",
			paths:   files(map[string][]byte{"pk.json": bytes.Replace(pkJSON, []byte(`"formatVersion":1`), []byte(`"formatVersion":99`), 1)}, "pk.json"),
			wantErr: []string{"formatVersion 99", "use the plugin of the operator's version"}},
		{name: "another apiVersion",
			paths: files(map[string][]byte{"pk.yaml": bytes.Replace(yamlOf(t, pk), []byte("mysqlbench.io/v1alpha1"),
				[]byte("mysqlbench.io/v1beta1"), 1)}, "pk.yaml"),
			wantErr: []string{`apiVersion "mysqlbench.io/v1beta1"`, "this plugin reads mysqlbench.io/v1alpha1"}},
		{name: "an empty directory", paths: files(nil, "."), wantErr: []string{"hold no run", "export RUN --bundle DIR"}},
		{name: "a directory of other things",
			paths:   files(map[string][]byte{"d.yaml": deployment, "x.json": []byte(`{"a": 1}`)}, "."),
			wantErr: []string{"hold no run", "d.yaml: a Deployment (apps/v1)", "x.json: a JSON object without kind or formatVersion"}},
		{name: "a bundle without a file its manifest lists",
			paths: func(t *testing.T, dir string) []string {
				p := bundleDir(t, dir)
				if err := os.Remove(filepath.Join(p, report.KeyReportMD)); err != nil {
					t.Fatal(err)
				}
				return []string{p}
			},
			wantErr: []string{"bundle", "is incomplete: report.md", "bundle.yaml lists it"}},
		{name: "a bundle of a newer layout",
			paths: func(t *testing.T, dir string) []string {
				p := bundleDir(t, dir)
				m := filepath.Join(p, FileManifest)
				data, _ := os.ReadFile(m)
				write(t, p, map[string][]byte{FileManifest: bytes.Replace(data, []byte("formatVersion: 1"), []byte("formatVersion: 2"), 1)})
				return []string{p}
			},
			wantErr: []string{"formatVersion 2; this plugin reads 1"}},
		{name: "a bundle whose results are another run's",
			paths: func(t *testing.T, dir string) []string {
				p := bundleDir(t, dir)
				write(t, p, map[string][]byte{report.KeyResultsJSON: []byte(resultsData(t, cand)[report.KeyResultsJSON])})
				return []string{p}
			},
			wantErr: []string{"is inconsistent", "run.yaml is bench/pk and its results.json bench/cand"}},
		{name: "a damaged archive",
			paths:   files(map[string][]byte{"pk.tar.gz": []byte("not gzip")}, "pk.tar.gz"),
			wantErr: []string{"pk.tar.gz is not a gzipped tar"}},
		{name: "an archive with an entry outside it",
			paths:   files(map[string][]byte{"evil.tgz": tarGz(t, map[string]string{"../x.json": "{}"})}, "evil.tgz"),
			wantErr: []string{`entry "../x.json" outside the archive`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Load(c.paths(t, dir))
			if c.wantErr != nil {
				checkErr(t, err, c.wantErr...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []runOf
			for _, r := range s.Runs {
				got = append(got, runOf{r.Namespace, r.Name, r.Object != nil, r.Results != nil, len(r.From)})
				if (r.Results == nil) != (r.Doc == nil) {
					t.Errorf("%s: results %v but doc %v", r, r.Results != nil, r.Doc != nil)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("runs %+v, want %+v", got, c.want)
			}
			if c.check != nil {
				c.check(t, s)
			}
		})
	}
}

func checkErr(t *testing.T, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("no error, want one saying %q", wants)
		return
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

func must(data []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return data
}

// tarGz is a gzipped tar of files, as given (names unchecked).
func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
