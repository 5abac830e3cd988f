package plugin

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// krewManifest is the template hack/plugin-release.sh renders into the released manifest.
const krewManifest = "../../plugins/krew/mysqlbench.yaml"

// releaseScript renders the template; the test fills the placeholders as it does.
const releaseScript = "../../hack/plugin-release.sh"

// krewTextWidth is a terminal's width: krew prints these texts as written (kubectl krew info,
// install's caveats), so a longer line wraps mid-word.
const krewTextWidth = 80

// The manifest is what krew users read before installing: it has to pass krew's validation
// and name every command the plugin has, so a new command cannot ship undocumented there.
func TestKrewManifest(t *testing.T) {
	template, err := os.ReadFile(krewManifest)
	if err != nil {
		t.Fatal(err)
	}
	raw := renderKrewTemplate(t, string(template), "v0.1.0")
	var m releasedManifest
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
	// krew's validation: a semantic version with a leading v, the name in lower case.
	if !krewSemver.MatchString(m.Spec.Version) {
		t.Errorf("spec.version %q is not v-prefixed semver", m.Spec.Version)
	}
	if !regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`).MatchString(m.Metadata.Name) {
		t.Errorf("metadata.name %q: krew wants lower-case letters, digits and dashes", m.Metadata.Name)
	}
	if !strings.HasPrefix(m.Spec.Homepage, "https://") {
		t.Errorf("spec.homepage %q is not an https URL", m.Spec.Homepage)
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
		if len(p.Selector.MatchLabels) != 2 {
			t.Errorf("platform %s: selector.matchLabels %v, want os and arch only", platform, p.Selector.MatchLabels)
		}
		if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(p.Sha256) {
			t.Errorf("platform %s: sha256 %q is not 64 lower-case hex digits", platform, p.Sha256)
		}
		archive := "kubectl-mysqlbench_v0.1.0_" + p.Selector.MatchLabels["os"] + "_" + p.Selector.MatchLabels["arch"]
		if !strings.HasPrefix(p.URI, "https://") || !strings.Contains(p.URI, "/"+archive+".") ||
			!strings.HasSuffix(p.URI, ".tar.gz") && !strings.HasSuffix(p.URI, ".zip") {
			t.Errorf("platform %s: uri %q, want an https URL of %s.tar.gz (or .zip)", platform, p.URI, archive)
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

// krewSemver is the version krew accepts, as hack/plugin-release.sh checks it.
var krewSemver = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

// renderKrewTemplate fills the template's placeholders the way hack/plugin-release.sh does
// (its sed expressions), after checking that the script fills exactly those: a placeholder the
// script does not know would ship as @...@ text, one the template lacks would be a dead
// substitution.
func renderKrewTemplate(t *testing.T, template, version string) []byte {
	t.Helper()
	script, err := os.ReadFile(releaseScript)
	if err != nil {
		t.Fatal(err)
	}
	for _, fill := range []string{`"s|@VERSION@|$VERSION|g"`, `"s|@URL@|$RELEASE_URL|g"`,
		`"s|@ARCHIVE_${os}_$arch@|$archive|g"`, `"s|@SHA256_${os}_$arch@|$sum|g"`} {
		if !strings.Contains(string(script), fill) {
			t.Errorf("%s no longer substitutes %s: update the template and this test together", releaseScript, fill)
		}
	}
	url := "https://github.com/mysqlbench/mysqlbench-operator/releases/download/" + version
	out := strings.NewReplacer("@VERSION@", version, "@URL@", url).Replace(template)
	for _, os := range []string{"linux", "darwin", "windows"} {
		for _, arch := range []string{"amd64", "arm64"} {
			ext := ".tar.gz"
			if os == "windows" {
				ext = ".zip"
			}
			out = strings.NewReplacer(
				"@ARCHIVE_"+os+"_"+arch+"@", "kubectl-mysqlbench_"+version+"_"+os+"_"+arch+ext,
				"@SHA256_"+os+"_"+arch+"@", strings.Repeat("0123456789abcdef", 4),
			).Replace(out)
		}
	}
	if left := regexp.MustCompile(`@[A-Za-z0-9_]+@`).FindAllString(out, -1); len(left) > 0 {
		t.Errorf("%s: placeholders the release script does not fill: %v", krewManifest, left)
	}
	return []byte(out)
}

// The version is one make variable, VERSION, from the Makefile to the script to the binary: a
// release given a version must not build v0.0.0-dev, and one given none must stop.
func TestReleaseVersionIsOneVariable(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	makeN := func(args ...string) (string, error) {
		cmd := exec.Command("make", append([]string{"-n", "--no-print-directory", "-C", "../.."}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := makeN("plugin-release", "VERSION=v1.2.3")
	if err != nil || !strings.Contains(out, "VERSION=v1.2.3 hack/plugin-release.sh") {
		t.Errorf("make plugin-release VERSION=v1.2.3 does not hand the version to the script: %v\n%s", err, out)
	}
	out, err = makeN("plugin", "VERSION=v1.2.3")
	if err != nil || !strings.Contains(out, "internal/plugin.Version=v1.2.3") || !strings.Contains(out, "-s -w") ||
		!strings.Contains(out, "-trimpath") {
		t.Errorf("make plugin VERSION=v1.2.3 builds without that version, stripped and trimmed: %v\n%s", err, out)
	}
	// make -n prints the recipe's guard instead of running it: run that line as make would.
	out, _ = makeN("plugin-release")
	guard := strings.SplitN(out, "\n", 2)[0]
	msg, err := exec.Command("sh", "-c", guard).CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "VERSION=") {
		t.Errorf("make plugin-release without VERSION does not stop: %q (%v)", msg, err)
	}
	if out, err := makeN("plugin-release", "PLUGIN_VERSION=v1.2.3"); err == nil || !strings.Contains(out, "VERSION=v1.2.3") {
		t.Errorf("make plugin-release PLUGIN_VERSION=v1.2.3, the old name, is not refused with the new one: %v\n%s", err, out)
	}
	cmd := exec.Command("bash", releaseScript)
	cmd.Env = append(os.Environ(), "VERSION=")
	if msg, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(msg), "VERSION is required") {
		t.Errorf("hack/plugin-release.sh without VERSION: %q (%v), want a refusal", msg, err)
	}
	script, err := os.ReadFile(releaseScript)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), "-trimpath") || !strings.Contains(string(script), `-ldflags "-s -w -X $PKG.Version=$VERSION"`) {
		t.Errorf("%s no longer builds stripped and trimmed with the version", releaseScript)
	}
}
