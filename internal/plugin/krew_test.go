package plugin

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// krewManifest is the template hack/plugin-release.sh renders into the released manifest.
const krewManifest = "../../plugins/krew/mysqlbench.yaml"

// krewTextWidth is a terminal's width: krew prints these texts as written (kubectl krew info,
// install's caveats), so a longer line wraps mid-word.
const krewTextWidth = 80

// The manifest is what krew users read before installing: it has to pass krew's validation
// and name every command the plugin has, so a new command cannot ship undocumented there.
func TestKrewManifest(t *testing.T) {
	raw, err := os.ReadFile(krewManifest)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
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
	if err := yaml.UnmarshalStrict(raw, &m); err != nil {
		t.Fatalf("%s: %v", krewManifest, err)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" {
		t.Errorf("apiVersion/kind = %s/%s, want krew.googlecontainertools.github.com/v1alpha2/Plugin", m.APIVersion, m.Kind)
	}
	if m.Metadata.Name != "mysqlbench" {
		t.Errorf("metadata.name = %q, want mysqlbench (the binary is kubectl-mysqlbench)", m.Metadata.Name)
	}
	if m.Spec.Version == "" || m.Spec.Homepage == "" || m.Spec.ShortDescription == "" || m.Spec.Description == "" {
		t.Errorf("version, homepage, shortDescription and description are all required")
	}

	for field, text := range map[string]string{
		"shortDescription": m.Spec.ShortDescription,
		"description":      m.Spec.Description,
		"caveats":          m.Spec.Caveats,
	} {
		for i, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			if n := len([]rune(line)); n > krewTextWidth {
				t.Errorf("%s line %d has %d characters, at most %d: %q", field, i+1, n, krewTextWidth, line)
			}
		}
	}

	// The description names a command in parentheses after what it shows: "(get, describe: ...)",
	// "(compare)", "(create --dry-run)": the first word of each comma-separated item there.
	named := map[string]bool{}
	description := strings.Join(strings.Fields(m.Spec.Description), " ")
	for _, group := range regexp.MustCompile(`\(([^()]*)\)`).FindAllStringSubmatch(description, -1) {
		for _, item := range strings.Split(group[1], ",") {
			if w := strings.Fields(item); len(w) > 0 {
				named[strings.TrimRight(w[0], ":")] = true
			}
		}
	}
	root := NewCommand(Options{})
	for _, cmd := range root.Commands() {
		if !cmd.Hidden && !named[cmd.Name()] {
			t.Errorf("description does not name the command %s in parentheses, as it does the others", cmd.Name())
		}
	}
	if len(root.Commands()) == 0 {
		t.Fatal("NewCommand registered no commands")
	}

	want := map[string]bool{"linux/amd64": true, "linux/arm64": true, "darwin/amd64": true, "darwin/arm64": true, "windows/amd64": true}
	for _, p := range m.Spec.Platforms {
		platform := p.Selector.MatchLabels["os"] + "/" + p.Selector.MatchLabels["arch"]
		if !want[platform] {
			t.Errorf("platform %s: unknown or listed twice", platform)
		}
		delete(want, platform)
		if p.URI == "" || p.Sha256 == "" || p.Bin == "" {
			t.Errorf("platform %s: uri, sha256 and bin are required", platform)
		}
		wantBin := "kubectl-mysqlbench"
		if p.Selector.MatchLabels["os"] == "windows" {
			wantBin += ".exe"
		}
		if p.Bin != wantBin {
			t.Errorf("platform %s: bin = %q, want %q", platform, p.Bin, wantBin)
		}
	}
	for platform := range want {
		t.Errorf("platform %s missing (hack/plugin-release.sh builds it)", platform)
	}
}
