package plugin

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// releasedManifest is a krew manifest as hack/plugin-release.sh writes it, every field krew's
// Plugin v1alpha2 has that the release fills.
type releasedManifest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Caveats          string `json:"caveats"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			Sha256 string `json:"sha256"`
			Bin    string `json:"bin"`
		} `json:"platforms"`
	} `json:"spec"`
}

// maxPluginBytes is hack/plugin-size.sh's limit (PLUGIN_MAX_BYTES): 40 MB.
const maxPluginBytes = 40_000_000

// The release as it ships: the real hack/plugin-release.sh builds this machine's platform (a
// cached build, seconds) into a temporary directory, and the manifest it wrote must be what krew
// installs from: the plugin of VERSION, the platform's selector, and an archive at the URI whose
// sha256 is the one in the manifest, holding the binary krew runs (of that version, under the
// size limit) and the LICENSE.
func TestReleaseWritesTheKrewManifest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin (-short)")
	}
	for _, cmd := range []string{"bash", "go", "tar", "gzip", "sha256sum", "git"} {
		if _, err := exec.LookPath(cmd); err != nil {
			t.Skipf("no %s", cmd)
		}
	}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	switch platform {
	case "linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64":
	default:
		// Built there, but not run: the test checks the archive only.
		platform = "linux/amd64"
	}
	goos, goarch, _ := strings.Cut(platform, "/")
	const version = "v0.3.1-rc.1"
	const url = "https://example.com/mysqlbench/releases/" + version
	dist := filepath.Join(t.TempDir(), "dist")
	cmd := exec.Command("bash", releaseScript)
	cmd.Env = append(os.Environ(), "VERSION="+version, "PLATFORMS="+platform, "DIST="+dist, "RELEASE_URL="+url)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hack/plugin-release.sh: %v\n%s", err, out)
	}
	// The script prints the binary's size (hack/plugin-size.sh) before it archives it.
	if !regexp.MustCompile(`kubectl-mysqlbench: [0-9]+ bytes \([0-9.]+ MB\)`).Match(out) {
		t.Errorf("the release did not print the binary's size:\n%s", out)
	}

	raw, err := os.ReadFile(filepath.Join(dist, "mysqlbench.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if left := regexp.MustCompile(`@[A-Za-z0-9_]+@`).FindAll(raw, -1); len(left) > 0 {
		t.Errorf("placeholders left in the manifest: %q", left)
	}
	var m releasedManifest
	if err := yaml.UnmarshalStrict(raw, &m); err != nil {
		t.Fatalf("mysqlbench.yaml: %v\n%s", err, raw)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" || m.Metadata.Name != "mysqlbench" {
		t.Errorf("%s/%s %s, want krew.googlecontainertools.github.com/v1alpha2 Plugin mysqlbench", m.APIVersion, m.Kind, m.Metadata.Name)
	}
	if m.Spec.Version != version || !krewSemver.MatchString(m.Spec.Version) {
		t.Errorf("spec.version %q, want VERSION %q (v-prefixed semver)", m.Spec.Version, version)
	}
	if m.Spec.ShortDescription == "" || m.Spec.Description == "" || !strings.HasPrefix(m.Spec.Homepage, "https://") {
		t.Errorf("shortDescription, description or homepage missing: %+v", m.Spec)
	}
	if len(m.Spec.Platforms) != 1 {
		t.Fatalf("%d platforms, want the one built (%s): %+v", len(m.Spec.Platforms), platform, m.Spec.Platforms)
	}
	p := m.Spec.Platforms[0]
	if labels := p.Selector.MatchLabels; len(labels) != 2 || labels["os"] != goos || labels["arch"] != goarch {
		t.Errorf("selector %v, want os %s and arch %s only", labels, goos, goarch)
	}
	if p.Bin != "kubectl-mysqlbench" {
		t.Errorf("bin %q, want kubectl-mysqlbench", p.Bin)
	}
	archive := "kubectl-mysqlbench_" + version + "_" + goos + "_" + goarch + ".tar.gz"
	if p.URI != url+"/"+archive {
		t.Errorf("uri %q, want %s/%s", p.URI, url, archive)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(p.Sha256) {
		t.Errorf("sha256 %q is not 64 lower-case hex digits", p.Sha256)
	}
	data, err := os.ReadFile(filepath.Join(dist, archive))
	if err != nil {
		t.Fatalf("the archive the manifest names: %v", err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != p.Sha256 {
		t.Errorf("the manifest says sha256 %s, the archive is %s", p.Sha256, got)
	}
	sums, err := os.ReadFile(filepath.Join(dist, "sha256sums.txt"))
	if err != nil || strings.TrimSpace(string(sums)) != p.Sha256+"  "+archive {
		t.Errorf("sha256sums.txt %q (%v), want %q", sums, err, p.Sha256+"  "+archive)
	}

	// The archive holds the binary krew links as bin, and the LICENSE.
	files := untar(t, data)
	if _, ok := files["LICENSE"]; !ok || len(files) != 2 {
		t.Errorf("archive holds %d files, want %s and LICENSE", len(files), p.Bin)
	}
	bin, ok := files[p.Bin]
	if !ok {
		t.Fatalf("archive has no %s", p.Bin)
	}
	if len(bin) > maxPluginBytes {
		t.Errorf("%s is %d bytes, over the limit of %d (hack/plugin-size.sh)", p.Bin, len(bin), maxPluginBytes)
	}
	if platform != runtime.GOOS+"/"+runtime.GOARCH {
		return
	}
	exe := filepath.Join(t.TempDir(), p.Bin)
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := exec.Command(exe, "version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(got)) != "kubectl-mysqlbench "+version {
		t.Errorf("%s version: %q (%v), want the release's version %s", p.Bin, got, err, version)
	}
}

// untar is a tar.gz's regular files by name.
func untar(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = body
	}
}

// The plugin's version is make's VERSION everywhere a release is described: every mention of make
// plugin-release says VERSION= on its line, and the name it once had (PLUGIN_VERSION) survives only in the
// Makefile's refusal of it. The files are the release's: the Makefile, the scripts, the krew
// template, the docs and the code that says how Version is set.
func TestReleaseDocsSayVERSION(t *testing.T) {
	files := []string{"../../Makefile", "../../README.md", "../../CONTRIBUTING.md", releaseScript,
		"../../hack/plugin-size.sh", krewManifest, "plugin.go"}
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	files = append(files, docs...)
	mentions := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			refusal := filepath.Base(f) == "Makefile" &&
				(strings.HasPrefix(line, "ifdef PLUGIN_VERSION") || strings.Contains(line, "PLUGIN_VERSION is no longer read"))
			if refusal {
				continue
			}
			if strings.Contains(line, "PLUGIN_VERSION") {
				t.Errorf("%s:%d names PLUGIN_VERSION, which make refuses: %s", f, n, line)
			}
			if strings.Contains(line, "make plugin-release") {
				mentions++
				if !strings.Contains(line, "plugin-release VERSION=v") {
					t.Errorf("%s:%d says make plugin-release without VERSION=v...: %s", f, n, line)
				}
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		_ = fh.Close()
	}
	// The Makefile, the script, the template, the docs and plugin.go each say it at least once.
	if mentions < 5 {
		t.Errorf("%d mentions of make plugin-release in %d files: the files were not read", mentions, len(files))
	}
}

// The packages that made the plugin 51 MB stay out of it: each registers every built-in API
// group of client-go (its types, codecs and, with text/template's reflection, all their
// methods) or brings the discovery client and its OpenAPI models. The size limit would catch
// their return in bulk; this names the culprit. go list sees what the linker would.
func TestPluginLinksNoSchemeOfEveryGroup(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "github.com/mysqlbench/mysqlbench-operator/cmd/kubectl-mysqlbench").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list -deps: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "k8s.io/client-go/rest") {
		t.Fatalf("go list -deps does not list client-go's REST client: the list was not read (%d lines)", len(deps))
	}
	heavy := []string{
		"k8s.io/client-go/kubernetes",        // the clientset, and under it every typed client
		"k8s.io/client-go/kubernetes/scheme", // every API group, registered at init
		"k8s.io/client-go/discovery",         // OpenAPI v2/v3 models (gnostic), protobuf
		"sigs.k8s.io/controller-runtime/pkg/client",
		"k8s.io/cli-runtime/pkg/genericclioptions", // the resource builder: kustomize, discovery cache
	}
	for _, d := range deps {
		for _, h := range heavy {
			if d == h || strings.HasPrefix(d, "k8s.io/client-go/kubernetes/typed/") {
				t.Errorf("the plugin links %s: use internal/kubeclient and a scheme of the kinds it reads (see package object)", d)
				break
			}
		}
	}
}
